"""Peeling equality-guarded iterations out of loop trees (lowering/loop_peel.py):
the peeled tree runs exactly the statement instances of the original, in the
same order, for every bound (a plain interpreter of both trees, at many
bounds, on hand-written and random trees); guards without an `else`, guards
on another variable and non-unit steps are left alone."""
import hypothesis.strategies as st
from hypothesis import given, settings

from tidal.lowering.loop_ast import Exec, For, If, walk
from tidal.lowering.loop_peel import peel_equality_guards

OPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "min": min, "max": max,
       "eq": lambda a, b: a == b, "ge": lambda a, b: a >= b, "lt": lambda a, b: a < b,
       "and": lambda a, b: a and b}


def _value(e, env):
    if e[0] == "int":
        return e[1]
    if e[0] == "var":
        return env[e[1]]
    return OPS[e[0]](*(_value(a, env) for a in e[1:]))


def run(tree, env, out=None):
    """The (node, point) instances `tree` executes, in order."""
    out = [] if out is None else out
    for s in tree:
        if isinstance(s, For):
            for c in range(_value(s.lower, env), _value(s.upper, env), s.step):
                run(s.body, {**env, s.var: c}, out)
        elif isinstance(s, If):
            run(s.then if _value(s.cond, env) else s.orelse, env, out)
        else:
            out.append((s.node, tuple(_value(a, env) for a in s.args)))
    return out


def fors(tree):
    return sum(isinstance(s, For) for s in walk(tree))


V, T = ("var", "c1"), ("var", "T")


def _acting_and_returns():
    """The shape isl gave REINFORCE n-step: returns 7 steps behind the acting,
    and a whole-episode read at c1 == T, inside one loop."""
    return [For("c1", ("int", 7), ("add", T, ("int", 7)), 1, [
        If(("and", ("ge", ("var", "I"), ("int", 2)), ("eq", V, T)), [Exec(91, [])],
           [If(("lt", V, T), [Exec(14, [V]), Exec(15, [V])]), Exec(59, [("sub", V, ("int", 7))])]),
        Exec(55, [("sub", V, ("int", 7))]),
    ])]


def test_peels_the_guarded_iteration():
    tree = _acting_and_returns()
    peeled = peel_equality_guards(tree)
    assert fors(peeled) == 3
    before, at, after = peeled
    assert all(not (isinstance(s, If) and s.cond[0] == "and") for s in before.body + after.body)
    execs = [s for s in walk(peeled) if isinstance(s, Exec)]
    assert len({id(s) for s in execs}) == len(execs)   # no statement shared between the copies
    for t in range(0, 12):
        for i in (1, 2, 3):
            env = {"T": t, "I": i}
            assert run(peeled, env) == run(tree, env), env


def test_leaves_other_guards_alone():
    no_else = [For("c1", ("int", 0), T, 1, [If(("eq", V, ("int", 0)), [Exec(1, [])]), Exec(2, [V])])]
    other_var = [For("c1", ("int", 0), T, 1, [If(("eq", ("var", "c0"), ("int", 0)), [Exec(1, [])], [Exec(2, [V])])])]
    strided = [For("c1", ("int", 0), T, 2, [If(("eq", V, ("int", 4)), [Exec(1, [])], [Exec(2, [V])])])]
    uses_var = [For("c1", ("int", 0), T, 1, [If(("eq", V, ("add", V, ("int", 0))), [Exec(1, [])], [Exec(2, [V])])])]
    for tree in (no_else, other_var, strided, uses_var):
        assert peel_equality_guards(tree) == tree


def test_peels_inner_loops_and_once_per_loop():
    inner = [For("c0", ("int", 0), ("var", "I"), 1, [
        For("c1", ("int", 0), T, 1, [
            If(("eq", V, ("int", 0)), [Exec(1, [("var", "c0")])], [
                If(("eq", V, ("int", 3)), [Exec(2, [V])], [Exec(3, [V])])]),
        ])])]
    peeled = peel_equality_guards(inner)
    assert fors(peeled) == 1 + 3      # the outer loop, the inner one split in three (one peel only)
    for t in range(0, 7):
        env = {"T": t, "I": 2}
        assert run(peeled, env) == run(inner, env)


@st.composite
def guarded_loops(draw):
    e = draw(st.sampled_from([("int", 0), ("int", 3), T, ("sub", T, ("int", 1)), ("add", T, ("int", 2))]))
    lower = draw(st.sampled_from([("int", 0), ("int", 2), ("sub", T, ("int", 3))]))
    upper = draw(st.sampled_from([T, ("add", T, ("int", 4)), ("int", 5)]))
    cond = ("eq", V, e) if draw(st.booleans()) else ("and", ("ge", T, ("int", 2)), ("eq", e, V))
    rest = [Exec(9, [V])] if draw(st.booleans()) else []
    return [For("c1", lower, upper, 1, [Exec(7, [V]), If(cond, [Exec(1, [V])], [Exec(2, [V])])] + rest)]


@settings(max_examples=60, deadline=None)
@given(guarded_loops())
def test_random_guarded_loops_run_the_same_instances(tree):
    peeled = peel_equality_guards(tree)
    assert fors(peeled) == 3
    for t in range(0, 9):
        assert run(peeled, {"T": t}) == run(tree, {"T": t}), t
