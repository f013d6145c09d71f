"""The loop tree is checked in the order it really executes
(tidal.lowering.executed_order): the isl map it derives agrees with running
the loops by hand, and a tree that runs a point twice, misses one, or runs
a read before its write is refused."""
import copy
import itertools

import pytest

from tidal.lowering.loop_ast import Exec, For, If, walk
from tidal.lowering.schedule import schedule_graph
from tidal.symbolic.isl_bridge import points
from sdg_fixtures import FAR_BASE, reinforce
from test_schedule_isl import graph_of, returns

V = "!tidal.tensor<[4], f32>"

# A backward recurrence with bases at T - 1 and T - 2 and a parity branch,
# read at even t (the shape of fuzz finding F10, whose first loop tree isl
# generated wrong).
PARITY = f"""
sdg.graph @parity dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %h = sdg.merge %b1[] if <t eq T - 1>, %b2[] if <t eq T - 2>, %e[t + 2] if <t mod 2 eq 0 and t lt T - 2>, %n[t + 2] if <t lt T - 2> domain [t] : ({V}, {V}, {V}, {V}) -> {V}
  %b1 = sdg.unary tanh %x[T - 1] domain [] : ({V}) -> {V}
  %b2 = sdg.unary exp %x[T - 2] domain [] : ({V}) -> {V}
  %e = sdg.unary sin %x[t - 2] domain [t] : ({V}) -> {V}
  %n = sdg.unary tanh %h[t - 1] domain [t] : ({V}) -> {V}
  sdg.output "h" %h[t] domain [t] {{cond = #tidal.expr<t mod 2 eq 0>}} : {V}
}}"""

GRAPHS = {
    "returns": returns("T"), "n-step": returns("min(t + 3, T)"), "reinforce": reinforce("t:min(t + 3, T)"),
    "far-base": FAR_BASE, "parity": PARITY,
}


def _value(e, env):
    op = e[0]
    if op == "int":
        return e[1]
    if op == "var":
        return env[e[1]]
    if op == "neg":
        return -_value(e[1], env)
    if op == "select":
        return _value(e[2], env) if _value(e[1], env) else _value(e[3], env)
    a, b = _value(e[1], env), _value(e[2], env)
    return {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "floordiv": lambda: a // b,
            "mod": lambda: a % b, "min": lambda: min(a, b), "max": lambda: max(a, b), "eq": lambda: a == b,
            "ne": lambda: a != b, "lt": lambda: a < b, "le": lambda: a <= b, "gt": lambda: a > b,
            "ge": lambda: a >= b, "and": lambda: a and b, "or": lambda: a or b}[op]()


def run_by_hand(tree, env, calls: bool = False):
    """[(node, point)] in the order the loops execute them ([(Exec, point)]
    with `calls`)."""
    out = []
    for s in tree:
        if isinstance(s, For):
            for v in range(_value(s.lower, env), _value(s.upper, env), s.step):
                out += run_by_hand(s.body, {**env, s.var: v}, calls)
        elif isinstance(s, If):
            out += run_by_hand(s.then if _value(s.cond, env) else s.orelse, env, calls)
        else:
            out.append((s if calls else s.node, tuple(_value(a, env) for a in s.args)))
    return out


def in_executed_order(sched, bounds):
    """[(node, point)] sorted by the executed-order map, bounds fixed."""
    timed = []
    for k, m in sched.executed().items():
        for p in points(sched.poly.fix(m, bounds)):
            n = len(sched.graph.nodes[k].domain)
            timed.append((p[n:], k, p[:n]))
    return [(k, p) for _, k, p in sorted(timed)]


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_the_executed_order_is_the_order_the_loops_run(name):
    sched = schedule_graph(graph_of(GRAPHS[name]))
    tree = sched.loop_tree()
    names = sched.graph.bounds
    for values in itertools.product(range(1, 6), repeat=len(names)):
        bounds = dict(zip(names, values))
        if any(sched.poly.fix(r.params, bounds).is_empty() for r in sched.requirements):
            continue
        env = {b: v for b, v in bounds.items()}
        by_hand = run_by_hand(tree, env)
        assert by_hand == in_executed_order(sched, bounds), (name, bounds)
        assert len(set(by_hand)) == len(by_hand)


def _parity_tree():
    sched = schedule_graph(graph_of(PARITY))
    return sched, sched.loop_tree()


def test_a_loop_tree_that_reads_before_it_writes_is_refused():
    sched, tree = _parity_tree()
    assert sched.verify_tree(tree)[1] is None
    body = next(s for s in walk(tree) if isinstance(s, For)).body
    # every Exec of the loop body moved in reverse: readers now run before their sources
    bad = copy.deepcopy(tree)
    loop = next(s for s in walk(bad) if isinstance(s, For))
    loop.body = list(reversed(loop.body))
    assert len(body) >= 2
    order, problem = sched.verify_tree(bad)
    assert order is None and "runs after its reader" in problem[1]


def test_a_loop_tree_that_misses_or_repeats_a_point_is_refused():
    sched, tree = _parity_tree()
    missing = copy.deepcopy(tree)
    loop = next(s for s in walk(missing) if isinstance(s, For))
    dropped = next(s for s in loop.body if isinstance(s, Exec))
    loop.body.remove(dropped)
    problem = sched.verify_tree(missing)[1]
    assert problem[0] == dropped.node and "exactly its points" in problem[1]

    twice = copy.deepcopy(tree)
    twice.append(copy.deepcopy(next(s for s in twice if isinstance(s, For))))
    problem = sched.verify_tree(twice)[1]
    assert problem is not None and "runs some point twice" in problem[1]


def _moved(m, by: int):
    """m (instance -> time) with its times' first member moved by `by`."""
    import islpy as isl
    n = m.get_space().dim(isl.dim_type.out)
    names = [f"a{i}" for i in range(n)]
    shift = isl.Map(f"{{ [{', '.join(names)}] -> [{', '.join([f'a0 + {by}'] + names[1:])}] }}")
    return m.apply_range(shift)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_the_dependence_check_agrees_with_comparing_all_pairs(name):
    """`_violated` (the times of each dependence's pairs, tested for any not
    increasing) finds what comparing the dependence with all pairs of its two
    nodes' instances in order finds: nothing on the loop tree isl made, and the
    same first dependence when one node's times move after or before all others."""
    from tidal.lowering.schedule_diagnostics import union_maps
    sched = schedule_graph(graph_of(GRAPHS[name]))
    order = sched.executed()
    theta = union_maps(order[k] for k in sorted(order))
    assert sched._violated(theta, order) is None and sched._violated_pairwise(theta) is None
    assert sched._violated(sched.schedule_map()) is None
    found = 0
    for k in sorted(order):
        for by in (10 ** 6, -10 ** 6):
            bad = {**order, k: _moved(order[k], by)}
            theta = union_maps(bad[j] for j in sorted(bad))
            expected = sched._violated_pairwise(theta)
            assert sched._violated(theta, bad) == expected == sched._violated(theta), (k, by)
            found += expected is not None
    assert found >= len(order)     # moving a node that has readers or operands breaks something
