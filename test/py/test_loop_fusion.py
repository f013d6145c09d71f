"""The schedule's loop-fusion post-pass (tidal.lowering.loop_fusion): on
schedule trees written by hand (isl's clustering is a heuristic; these fix the
order the post-pass starts from), and through `schedule_graph`."""
import dataclasses

import islpy as isl
import pytest
from tidal.lowering.loop_ast import format_loop_nest
from tidal.lowering.loop_fusion import fuse_shifted_loops
from tidal.lowering.schedule import ScheduleOptions, schedule_graph
from test_schedule_isl import graph_of

V = "!tidal.tensor<[4], f32>"

# S0..S8 are the ops in order (S<k> is node k)
BETWEEN = f"""
sdg.graph @g dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %r = sdg.unary sigmoid %x[t] domain [t] : ({V}) -> {V}
  %y = sdg.input "y" domain [] : {V}
  %s = sdg.unary exp %y[] domain [] : ({V}) -> {V}
  %m = sdg.reduce sum [0] %r[0:T] domain [] : ({V}) -> {V}
  %g = sdg.reduce sum [0] %r[t:{{stop}}] domain [t] : ({V}) -> {V}
  %h = sdg.binary add %g[t], %s[] domain [t] : ({V}, {V}) -> {V}
  sdg.output "h" %h[t] domain [t] : {V}
  sdg.output "m" %m[] domain [] : {V}
}}"""


def by_hand(sched, children: list) -> isl.Schedule:
    """The schedule of `sched`'s statements as the sequence `children`: a
    list of (statements, loop?) run in that order, a loop being a band over t
    with every statement at time t."""
    dom = sched.schedule.get_domain()
    parts = []
    for stmts, loop in children:
        filt = "; ".join(f"S{k}[t]" if loop else f"S{k}[]" for k in stmts)
        part = f'{{ filter: "[T] -> {{ {filt} }}"'
        if loop:
            band = "; ".join(f"S{k}[t] -> [(t)]" for k in stmts)
            inner = ", ".join(f'{{ filter: "[T] -> {{ S{k}[t] }}" }}' for k in stmts)
            part += f', child: {{ schedule: "[T] -> [{{ {band} }}]", child: {{ sequence: [ {inner} ] }} }}'
        parts.append(part + " }")
    text = f'{{ domain: "{dom}", child: {{ sequence: [ {", ".join(parts)} ] }} }}'
    return isl.Schedule.read_from_str(sched.poly.ctx, text)


def fused(sched, tree: isl.Schedule):
    """(the post-pass's schedule, its GraphSchedule, checked)."""
    out = fuse_shifted_loops(tree, sched.graph, sched.domains, sched.validity)
    result = dataclasses.replace(sched, schedule=out)
    result.check()
    return out, result


def executed(result) -> list[str]:
    return [line.strip() for line in format_loop_nest(result.loop_tree(), result.graph, "  ").splitlines()]


def test_the_statements_between_two_loops_go_before_the_fused_loop_unless_they_need_the_first():
    sched = schedule_graph(graph_of(BETWEEN.replace("{stop}", "min(t + 3, T)")),
                           ScheduleOptions(fuse_shifted=False))
    # isl's order could be this: the acting loop, the full-episode sum m (needs
    # r), s (does not), then the loop of returns g, h reading r and s
    tree = by_hand(sched, [([2], False), ([0, 1], True), ([4], False), ([3], False), ([5, 6, 7], True),
                           ([8], False)])
    out, result = fused(sched, tree)
    assert out is not tree
    lines = executed(result)
    loop = next(j for j, line in enumerate(lines) if line.startswith("for ") and any(
        "%5 = sdg.reduce sum" in x and "t = c0 - 2" in x for x in lines[j:]))
    s = next(j for j, line in enumerate(lines) if line.startswith("%3 = sdg.unary exp"))
    m = next(j for j, line in enumerate(lines) if line.startswith("%4 = sdg.reduce sum"))
    assert s < loop < m, "\n".join(lines)
    # one loop runs r and, 2 steps behind, the returns: no loop holds only g
    assert not any(line.startswith("for ") and "%1 = " not in "".join(lines[j + 1:j + 3])
                   and "%5 = " in lines[j + 1] for j, line in enumerate(lines)), "\n".join(lines)


def test_a_distance_that_grows_with_the_bounds_is_not_fused():
    sched = schedule_graph(graph_of(BETWEEN.replace("{stop}", "T")), ScheduleOptions(fuse_shifted=False))
    tree = by_hand(sched, [([2], False), ([3], False), ([0, 1], True), ([4], False), ([5, 6, 7], True),
                           ([8], False)])
    out, _ = fused(sched, tree)
    assert out is tree      # nothing fused: the very same schedule


def test_fusions_chain():
    sched = schedule_graph(graph_of(BETWEEN.replace("{stop}", "min(t + 3, T)")),
                           ScheduleOptions(fuse_shifted=False))
    tree = by_hand(sched, [([2], False), ([3], False), ([0], True), ([1], True), ([4], False),
                           ([5, 6, 7], True), ([8], False)])
    out, result = fused(sched, tree)
    # x's loop and r's loop fuse (r reads x, shift 0); g's loop joins them, 2 behind
    lines = executed(result)
    last = max(j for j, line in enumerate(lines) if line.startswith("for "))
    body = "\n".join(lines[last:])
    assert out is not tree and all(f"%{k} = " in body for k in (0, 1, 5)), "\n".join(lines)
    assert "[t = c0 - 2]" in body and "[t = c0]" in body, body


def test_a_tree_with_other_nodes_is_left_alone():
    sched = schedule_graph(graph_of(BETWEEN.replace("{stop}", "min(t + 3, T)")),
                           ScheduleOptions(fuse_shifted=False))
    tree = by_hand(sched, [([2], False), ([3], False), ([0, 1], True), ([4], False), ([5, 6, 7], True),
                           ([8], False)])
    marked = tree.get_root().child(0).insert_mark(isl.Id("m", context=sched.poly.ctx)).get_schedule()
    assert fuse_shifted_loops(marked, sched.graph, sched.domains, sched.validity) is marked


@pytest.mark.parametrize("stop, loops", [("min(t + 3, T)", 1), ("T", 2)])
def test_schedule_graph_fuses_what_isl_leaves_apart(stop, loops):
    """Without proximity isl gives every operator a loop (a band of the
    schedule tree); the post-pass makes them one (n-step) or two (Monte-Carlo)."""
    graph = graph_of(BETWEEN.replace("{stop}", stop))
    isl_only = schedule_graph(graph, ScheduleOptions(whole_component=False, proximity=False, fuse_shifted=False,
                                                     separate=False))
    post = schedule_graph(graph, ScheduleOptions(whole_component=False, proximity=False, separate=False))
    assert bands(isl_only.schedule) >= 4 and bands(post.schedule) == loops, executed(post)


def bands(schedule: isl.Schedule) -> int:
    found = []

    def visit(node):
        found.append(node.get_type() == isl.schedule_node_type.band)
        return True
    schedule.foreach_schedule_node_top_down(visit)
    return sum(found)


# sdg-tile's loops: n runs over N = (T + 3) floordiv 4, a bound derived from T
TILES = f"""
sdg.graph @g dims [t < T, n < N = (T + 3) floordiv 4] {{
  %x = sdg.input "x" domain [n] : {V}
  %a = sdg.unary exp %x[n] domain [n] : ({V}) -> {V}
  %b = sdg.unary tanh %a[n] domain [n] : ({V}) -> {V}
  %s = sdg.reduce sum [0] %b[0:N] domain [] : ({V}) -> {V}
  sdg.output "s" %s[] domain [] : {V}
}}"""


def test_loops_over_tiles_fuse():
    """The shift is measured with the bounds fixed at two values; a derived
    bound (a tile count) takes the value its expression gives then. Fixed at
    the same value as T, the domains' T <= 4 N <= T + 3 made every dependence
    empty and no loop over tiles ever fused (3 bands stayed 3)."""
    graph = graph_of(TILES)
    isl_only = schedule_graph(graph, ScheduleOptions(whole_component=False, proximity=False, fuse_shifted=False,
                                                     separate=False))
    post = schedule_graph(graph, ScheduleOptions(whole_component=False, proximity=False, separate=False))
    assert bands(isl_only.schedule) == 3 and bands(post.schedule) == 1, executed(post)
    lines = executed(post)
    assert lines[0] == "for c0 in range(N):" and all("[n = c0]" in line for line in lines[1:4]), lines
