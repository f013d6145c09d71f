"""Each call of a merge in the loop tree is marked with the branches that can
hold where it runs (tidal.lowering.merge_branches): running the loops by hand
at several bounds, the first branch whose condition holds at every instance
a call runs is one of those marked; a mark is a strict subset where the
schedule splits a merge's instances by branch (an RNN's t = 0 before its
loop), and a loop inside XLA then selects between the marked ones only."""
import numpy as np
import pytest

from tidal.lowering.merge_branches import mark_reachable_branches
from tidal.lowering.schedule import schedule_graph
from tidal.symbolic import evaluate
from test_executed_order import GRAPHS, run_by_hand
from test_schedule_isl import graph_of

V = "!tidal.tensor<[4], f32>"
RNN = f"""
sdg.graph @rnn dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %n = sdg.binary add %h[t - 1], %x[t] domain [t] : ({V}, {V}) -> {V}
  %h = sdg.merge %x[0] if <t eq 0>, %n[t] if <true> domain [t] : ({V}, {V}) -> {V}
  sdg.output "h" %h[t] domain [t] : {V}
}}"""
ALL = {**GRAPHS, "rnn": RNN}


def _calls(tree, env):
    """[(Exec, point)] in the order the loops run them."""
    return run_by_hand(tree, env, calls=True)


def _taken(node, point, bounds):
    env = {**dict(zip(node.domain, point)), **bounds}
    return next(b for b, e in enumerate(node.edges) if evaluate(e.cond, env))


@pytest.mark.parametrize("name", sorted(ALL))
def test_the_branch_taken_at_every_instance_is_marked(name):
    graph = graph_of(ALL[name])
    sched = schedule_graph(graph)
    tree = sched.loop_tree()
    mark_reachable_branches(tree, sched)
    seen = {}
    for value in (1, 2, 3, 4, 5, 8):
        bounds = {b: value for b in graph.bounds}
        for s, point in _calls(tree, bounds):
            node = graph.nodes[s.node]
            if node.name != "sdg.merge":
                assert s.branches is None
                continue
            b = _taken(node, point, bounds)
            assert s.branches is None or b in s.branches, (name, s, point, value)
            seen.setdefault(id(s), (s, set()))[1].add(b)
    # the marks are exact here: a call marked with branches takes each of them at some bounds
    for s, taken in seen.values():
        if s.branches is not None:
            assert set(s.branches) == taken, (name, s.branches, taken)


def test_the_rnn_loop_selects_no_branch():
    graph = graph_of(RNN)
    sched = schedule_graph(graph)
    tree = sched.loop_tree()
    mark_reachable_branches(tree, sched)
    marks = [s.branches for s, _ in _calls(tree, {"T": 3}) if graph.nodes[s.node].name == "sdg.merge"]
    assert marks == [(0,), (1,), (1,)]


def test_the_traced_rnn_step_has_no_select():
    """The traced loop calls the merge with its one branch: `_pick` is given
    `_br=(1,)` and returns that branch's value, no `jnp.where`."""
    from tidal.runtime.scheduled import compile_sdg
    exe = compile_sdg(RNN)
    assert "_br=(1,)" in exe.source
    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    got = exe.run({"T": 6}, {"x": x})["h"]
    np.testing.assert_allclose(got, np.cumsum(x, axis=0), rtol=1e-6)
