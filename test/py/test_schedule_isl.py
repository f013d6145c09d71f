"""Scheduling SDGs with isl (tidal.lowering.schedule): the shapes of the
schedules for the paper's cases, the options, and unschedulable programs."""
import time

import pytest
from mlir import ir

from tidal.dialects import make_context
from tidal.lowering.graph import graphs_in, op_weight, read_graph
from tidal.lowering.loop_ast import Exec, For, If, format_loop_nest, from_isl, walk
from tidal.lowering.schedule import ScheduleError, ScheduleOptions, load_schedule, schedule_graph
from sdg_fixtures import FAR_BASE, UNSCHEDULABLE_FUTURE, reinforce

V = "!tidal.tensor<[4], f32>"
_KEEP = []  # keep contexts/modules alive for the graph models


def graph_of(text: str):
    ctx = make_context()
    with ctx:
        module = ir.Module.parse(text)
    _KEEP.append((ctx, module))
    return read_graph(graphs_in(module)[0])


def returns(stop: str) -> str:
    return f"""
sdg.graph @g dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %r = sdg.unary sigmoid %x[t] domain [t] : ({V}) -> {V}
  %g = sdg.reduce sum [0] %r[t:{stop}] domain [t] : ({V}) -> {V}
  sdg.output "g" %g[t] domain [t] : {V}
}}"""


def loops(tree):
    """[(loop, [(node, args text) executed directly in it])] for every For."""
    from tidal.lowering.loop_ast import format_expr
    out = []
    for s in walk(tree):
        if isinstance(s, For):
            out.append((s, [(e.node, [format_expr(a) for a in e.args]) for e in s.body if isinstance(e, Exec)]))
    return out


def test_monte_carlo_returns_wait_for_the_whole_episode():
    sched = schedule_graph(graph_of(returns("T")))
    tree = from_isl(sched.ast())
    found = loops(tree)
    assert len(found) == 2, format_loop_nest(tree)
    (first, body1), (second, body2) = found
    assert [n for n, _ in body1] == [0, 1]             # x, r for every t ...
    assert [n for n, _ in body2] == [2, 3]             # ... then g, output
    assert tree.index(first) < tree.index(second)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_n_step_returns_run_n_minus_1_steps_behind_in_the_same_loop(n):
    sched = schedule_graph(graph_of(returns(f"min(t + {n}, T)")))
    tree = from_isl(sched.ast())
    steady = [(loop, body) for loop, body in loops(tree) if {1, 2} <= {k for k, _ in body}]
    assert len(steady) == 1, format_loop_nest(tree)
    loop, body = steady[0]
    args = dict(body)
    assert args[1] == [loop.var] and args[2] == [f"{loop.var} - {n - 1}"], format_loop_nest(tree)
    assert not any(isinstance(s, If) for s in loop.body)  # `separate`: no guard in the steady state


def test_without_separate_the_loop_keeps_its_guards():
    sched = schedule_graph(graph_of(returns("min(t + 3, T)")), ScheduleOptions(separate=False))
    tree = from_isl(sched.ast())
    assert any(isinstance(s, If) for s in walk(tree))


def island_returns(body_ops: int) -> str:
    """`returns("min(t + 3, T)")` whose per-t work is one island of `body_ops` ops."""
    body = ["  ^bb0(%a: !v):", "    %b0 = sdg.unary sigmoid %a[t] domain [t] : (!v) -> !v"]
    body += [f"    %b{j} = sdg.unary tanh %b{j - 1}[t] domain [t] : (!v) -> !v" for j in range(1, body_ops)]
    return f"""
!v = {V}
sdg.graph @g dims [t < T] {{
  %x = sdg.input "x" domain [t] : !v
  %r = sdg.island %x[t] domain [t] : (!v) -> !v {{
{chr(10).join(body)}
    sdg.yield %b{body_ops - 1} : !v
  }}
  %g = sdg.reduce sum [0] %r[t:min(t + 3, T)] domain [t] : (!v) -> !v
  sdg.output "g" %g[t] domain [t] : !v
}}"""


def steady_guards(sched) -> list:
    """The guards inside the loop that runs both the island and the window sum."""
    tree = from_isl(sched.ast())
    steady = [loop for loop, _ in loops(tree)
              if {1, 2} <= {s.node for s in walk(loop.body) if isinstance(s, Exec)}]
    assert len(steady) == 1, format_loop_nest(tree)
    return [s for s in walk(steady[0].body) if isinstance(s, If)]


def test_only_loops_with_small_bodies_are_separated():
    """A body (islands counted by their ops) over `separate_max_ops` keeps its
    guards: separating would copy it into prologue/epilogue code that XLA
    compiles again. The island's ops are what count, not the statements."""
    small, large = graph_of(island_returns(8)), graph_of(island_returns(70))
    assert op_weight(small.nodes[1]) == 8 and op_weight(large.nodes[1]) == 70
    assert not steady_guards(schedule_graph(small))
    assert steady_guards(schedule_graph(large))
    assert steady_guards(schedule_graph(small, ScheduleOptions(separate_max_ops=9)))      # 8 + 3 others
    assert not steady_guards(schedule_graph(small, ScheduleOptions(separate_max_ops=11)))
    # the same instances either way, in an order the checks accept
    assert schedule_graph(large).schedule.get_map().is_equal(
        schedule_graph(large, ScheduleOptions(separate_max_ops=100)).schedule.get_map())


def chain(n_ops: int, window: int = 0) -> str:
    lines = [f"sdg.graph @chain dims [t < T] {{", f'  %x = sdg.input "x" domain [t] : {V}']
    prev = "%x"
    for k in range(n_ops):
        if window and k % 2:
            lines.append(f"  %u{k} = sdg.reduce sum [0] {prev}[max(0, t - {window - 1}):t + 1] domain [t] "
                         f": ({V}) -> {V}")
        else:
            lines.append(f"  %u{k} = sdg.unary tanh {prev}[t] domain [t] : ({V}) -> {V}")
        prev = f"%u{k}"
    lines.append(f'  sdg.output "y" {prev}[t] domain [t] : {V}')
    return "\n".join(lines + ["}"])


def test_proximity_is_needed_for_fusion():
    """isl's default clustering puts every operator in its own loop without
    proximity; with it, the chain is one loop (isl's results alone: the
    loop-fusion post-pass off; with it on, the chain is one loop either way)."""
    graph = graph_of(chain(3))
    isl_only = dict(whole_component=False, fuse_shifted=False)
    fused = loops(from_isl(schedule_graph(graph, ScheduleOptions(**isl_only)).ast()))
    apart = loops(from_isl(schedule_graph(graph, ScheduleOptions(**isl_only, proximity=False)).ast()))
    assert len(fused) == 1 and len(fused[0][1]) == 5
    assert len(apart) == 5
    post = loops(from_isl(schedule_graph(graph, ScheduleOptions(whole_component=False, proximity=False)).ast()))
    assert len(post) == 1 and len(post[0][1]) == 5


@pytest.mark.parametrize("window", [4, 9])
def test_whole_component_fuses_windows_the_default_clustering_splits(window):
    """A window of size 4 or more is a dependence distance of 3 or more."""
    graph = graph_of(chain(4, window=window))
    default = loops(from_isl(schedule_graph(graph, ScheduleOptions(whole_component=False,
                                                                   fuse_shifted=False)).ast()))
    whole = loops(from_isl(schedule_graph(graph, ScheduleOptions(fuse_shifted=False)).ast()))
    assert len(default) > 1 and len(whole) == 1


def test_large_graph_with_windows_schedules_fast_and_fused():
    graph = graph_of(chain(159, window=4))         # 161 statements
    start = time.perf_counter()
    sched = schedule_graph(graph)
    elapsed = time.perf_counter() - start
    assert len(sched.statements()) == 161
    assert elapsed < 20, elapsed
    tree = from_isl(sched.ast())
    steady = max(loops(tree), key=lambda lb: len(lb[1]))
    assert len(steady[1]) == 161                    # every op in the steady-state loop


def test_unbounded_dependence_does_not_delay_the_recurrence():
    """A once-per-episode reduction over 0:T stays out of proximity: the
    recurrence and the per-step ops stay fused in one loop, the reduction after it."""
    text = f"""
sdg.graph @g dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %s = sdg.merge %x[0] if <t eq 0>, %n[t] if <true> domain [t] : ({V}, {V}) -> {V}
  %h = sdg.unary tanh %s[t - 1] domain [t] : ({V}) -> {V}
  %n = sdg.binary add %h[t], %x[t] domain [t] : ({V}, {V}) -> {V}
  %tot = sdg.reduce sum [0] %s[0:T] domain [] : ({V}) -> {V}
  sdg.output "s" %s[t] domain [t] : {V}
  sdg.output "tot" %tot[] domain [] : {V}
}}"""
    graph = graph_of(text)
    sched = schedule_graph(graph)
    tree = from_isl(sched.ast())
    steady = [body for _, body in loops(tree)]
    assert len(steady) == 1 and {k for k, _ in steady[0]} == {0, 1, 2, 3, 5}, format_loop_nest(tree, graph)
    assert isinstance(tree[-1], Exec) or isinstance(tree[-2], Exec)
    assert [s.node for s in tree if isinstance(s, Exec)][-2:] == [4, 6]
    edges = {(k, n) for k, n, _ in sched.proximity}
    assert (4, 0) not in edges and (2, 0) in edges


def test_per_iteration_update_nests_the_episode_loop():
    text = f"""
sdg.graph @g dims [i < I, t < T] {{
  %w0 = sdg.param "W" dense<1.0> : tensor<4xf32> domain [] : {V}
  %x = sdg.input "x" domain [i, t] : {V}
  %w = sdg.merge %w0[] if <i eq 0>, %u[i - 1] if <true> domain [i] : ({V}, {V}) -> {V}
  %p = sdg.binary mul %w[i], %x[i, t] domain [i, t] : ({V}, {V}) -> {V}
  %g = sdg.reduce sum [0] %p[i, 0:T] domain [i] : ({V}) -> {V}
  %u = sdg.binary sub %w[i], %g[i] domain [i] : ({V}, {V}) -> {V}
  sdg.output "w" %w[i] domain [i] : {V}
}}"""
    graph = graph_of(text)
    tree = from_isl(schedule_graph(graph).ast())
    outer = [s for s in tree if isinstance(s, For)]
    assert len(outer) == 1, format_loop_nest(tree, graph)
    direct = [s.node for s in outer[0].body if isinstance(s, Exec)]
    assert direct[0] == 2 and {4, 5, 6} <= set(direct)      # w first, the update after the episode
    inner = [s for s in outer[0].body if isinstance(s, For)]
    assert inner and all(any(isinstance(e, Exec) and e.node == 3 for e in walk(inner)) for _ in [0])
    assert direct.index(2) < direct.index(4) < direct.index(5)


def test_valid_domains_skip_points_no_one_can_compute():
    """d = s[t - 1] * 0.5 is never needed at t = 0 (s[0] takes its first branch)."""
    import pathlib
    text = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "recurrence.sdg.mlir").read_text()
    sched = schedule_graph(graph_of(text))
    assert "0 < t < T" in str(sched.domains[3]) and "0 <= t < T" in str(sched.domains[2])
    assert str(sched.domains[1]).endswith("{ S1[] : T >= 2 }")         # 0-dimensional, needed by d at t >= 1


def test_valid_domains_of_a_modular_backward_recurrence_computable_only_for_some_bounds():
    """F12's core: s[T - 1] reads x at i = 1 (so nothing is computable when I < 2),
    s[t] = s[t + 1] where t % 3 == 0, else s[t + 1] + 1. The closure of the whole
    read relation exhausts isl's budget; eliminating statements one at a time
    gives every point, exactly when I >= 2."""
    S, L = "!tidal.tensor<[], f32>", "!tidal.tensor<[], i64>"
    text = f"""
sdg.graph @g dims [i < I, t < T] {{
  %x = sdg.input "x" domain [i, t] : {S}
  %both = sdg.binary add %x[0, t], %x[1, t] domain [t] : ({S}, {S}) -> {S}
  %s = sdg.merge %b[] if <t eq T - 1>, %s[t + 1] if <t mod 3 eq 0>, %n[t] if <true> domain [t] : ({L}, {L}, {L}) -> {L}
  %b = sdg.cast %both[T - 1] domain [] : ({S}) -> {L}
  %one = sdg.constant dense<1> : tensor<i64> domain [] : {L}
  %n = sdg.binary add %s[t + 1], %one[] domain [t] : ({L}, {L}) -> {L}
  sdg.output "s" %s[t] domain [t] : {L}
}}"""
    sched = schedule_graph(graph_of(text))
    for k in (1, 2, 3, 5):
        assert "I >= 2" in str(sched.domains[k]), sched.domains[k]
    assert "0 <= t < T" in str(sched.domains[2]) and "0 <= t <= -2 + T" in str(sched.domains[5])


def test_elimination_equals_the_worklist_fixpoint_on_a_chain():
    """invalid_by_elimination on a 3-statement cycle A[t] -> B[t] -> C[t] -> A[t + 1]
    where C fails at t = 5: every point at or before 5 is invalid (they reach it)."""
    import islpy as isl
    from tidal.lowering.valid_elimination import invalid_by_elimination

    ctx = isl.Context()
    full = {k: isl.Set.read_from_str(ctx, f"[T] -> {{ S{k}[t] : 0 <= t < T }}") for k in range(3)}
    local = {k: full[k].subtract(full[k]) for k in range(3)}
    local[2] = isl.Set.read_from_str(ctx, "[T] -> { S2[t] : t = 5 and T > 5 }")
    reads = {(0, 1): "S0[t] -> S1[t]", (1, 2): "S1[t] -> S2[t]", (2, 0): "S2[t] -> S0[t + 1]"}
    reads = {k: isl.Map.read_from_str(ctx, f"[T] -> {{ {m} : 0 <= t < T{' - 1' if k == (2, 0) else ''} }}")
             for k, m in reads.items()}
    for order in ([0, 1, 2], [2, 1, 0]):
        invalid = invalid_by_elimination(order, full, local, reads)
        for k in range(3):
            want = isl.Set.read_from_str(ctx, f"[T] -> {{ S{k}[t] : 0 <= t <= 5 and T > 5 }}")
            assert invalid[k].is_equal(want), (k, invalid[k])


def test_merge_conditions_restrict_dependences():
    text = f"""
sdg.graph @g dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %s = sdg.merge %x[t] if <t mod 5 eq 0>, %n[t] if <true> domain [t] : ({V}, {V}) -> {V}
  %n = sdg.binary add %s[t - 1], %x[t] domain [t] : ({V}, {V}) -> {V}
  sdg.output "s" %s[t] domain [t] : {V}
}}"""
    sched = schedule_graph(graph_of(text))
    maps = {(k, n): str(m) for k, n, m in sched.validity}
    assert "mod 5 = 0" in maps[(1, 0)]                 # branch 0 only where t mod 5 = 0
    assert "5*floor" in maps[(1, 1)] or "mod 5" in maps[(1, 1)]   # branch 1 only elsewhere


def test_schedule_text_round_trips():
    graph = graph_of(returns("min(t + 3, T)"))
    sched = schedule_graph(graph)
    again = load_schedule(graph, sched.text())
    assert format_loop_nest(from_isl(again.ast())) == format_loop_nest(from_isl(sched.ast()))


# -- unschedulable programs ---------------------------------------------------------------
def test_future_dependence_with_a_forward_base_case_is_an_error():
    text = UNSCHEDULABLE_FUTURE
    with pytest.raises(ScheduleError) as info:
        schedule_graph(graph_of(text))
    message = str(info.value)
    for part in ["@future", "'%1 = sdg.merge' at -:4:", "'%2 = sdg.unary tanh' at -:5:",
                 "reads %1[t + 1]", "outside the domain", "never reaches a base case", 'sdg.output "s"']:
        assert part in message, message
    assert {k for k, _ in info.value.diagnostics if k is not None} >= {1, 2}


def test_dependence_cycle_is_an_error_naming_the_cycle():
    text = f"""
sdg.graph @cycle dims [t < T] {{
  %s = sdg.merge %g[] if <t eq T - 1>, %f[t] if <true> domain [t] : ({V}, {V}) -> {V}
  %f = sdg.unary tanh %s[t + 1] domain [t] : ({V}) -> {V}
  %g = sdg.unary exp %s[0] domain [] : ({V}) -> {V}
  sdg.output "s" %s[t] domain [t] : {V}
}}"""
    with pytest.raises(ScheduleError) as info:
        schedule_graph(graph_of(text))
    message = str(info.value)
    assert "form a cycle" in message
    for part in ["reads %0[t + 1]", "reads %0[0]", "'%0 = sdg.merge' at -:3:", "'%2 = sdg.unary exp' at -:5:"]:
        assert part in message, message


def test_read_outside_the_domain_and_merge_without_branch():
    outside = f"""
sdg.graph @g dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %y = sdg.unary neg %x[t - 1] domain [t] : ({V}) -> {V}
  sdg.output "y" %y[t] domain [t] : {V}
}}"""
    with pytest.raises(ScheduleError, match=r"reads %0\[t - 1\], which includes t = -1 outside the domain"):
        schedule_graph(graph_of(outside))
    no_branch = f"""
sdg.graph @g dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %s = sdg.merge %x[t] if <t gt 0> domain [t] : ({V}) -> {V}
  sdg.output "s" %s[t] domain [t] : {V}
}}"""
    with pytest.raises(ScheduleError, match=r"no branch condition holds \(<t gt 0>\)"):
        schedule_graph(graph_of(no_branch))


def test_unread_invalid_points_are_not_an_error():
    """Points nothing needs may be invalid: they are simply not executed."""
    text = f"""
sdg.graph @g dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %y = sdg.unary neg %x[t + 1] domain [t] : ({V}) -> {V}
  %z = sdg.merge %x[t] if <t eq T - 1>, %y[t] if <true> domain [t] : ({V}, {V}) -> {V}
  sdg.output "z" %z[t] domain [t] : {V}
}}"""
    sched = schedule_graph(graph_of(text))
    assert "t <= -2 + T" in str(sched.domains[1])




@pytest.mark.parametrize("returns_kind", ["monte_carlo", "n_step"])
def test_reinforce_schedules_follow_the_returns_access_pattern(returns_kind):
    """Paper §7.4: with r[i, t:T] learning waits for the episode; with
    r[i, t:min(t + 3, T)] it runs 2 steps behind acting, in the same loop."""
    stop = "t:T" if returns_kind == "monte_carlo" else "t:min(t + 3, T)"
    graph = graph_of(reinforce(stop, with_returns_output=False))
    tree = from_isl(schedule_graph(graph).ast())
    outer = next(s for s in tree if isinstance(s, For))
    inner = loops(outer.body)
    acting, learning = {3, 4, 5}, {6, 7}           # merge o, a, env.step | g, l
    # after the loop, the last episode acts (env.step is a UDF) but does not
    # learn: its update u[I - 1] is never read
    last = {e.node for s in tree[tree.index(outer) + 1:] for e in walk([s]) if isinstance(e, Exec)}
    assert acting <= last and not last & (learning | {8, 9}), format_loop_nest(tree, graph)
    if returns_kind == "monte_carlo":
        acting_loops = [b for _, b in inner if acting <= {k for k, _ in b}]
        learning_loops = [i for i, (_, b) in enumerate(inner) if {k for k, _ in b} & learning]
        assert acting_loops and all(not ({k for k, _ in b} & learning) for b in acting_loops)
        assert min(learning_loops) > max(i for i, (_, b) in enumerate(inner) if acting <= {k for k, _ in b})
    else:
        steady = [(loop, dict(b)) for loop, b in inner if acting | learning <= {k for k, _ in b}]
        assert len(steady) == 1, format_loop_nest(tree, graph)
        loop, args = steady[0]
        assert args[5] == [outer.var, loop.var] and args[6] == [outer.var, f"{loop.var} - 2"]


# -- domain reduction with parameters (issue 8.3) -------------------------------------------
PAIR = f"""
sdg.graph @pair dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %y = sdg.binary add %x[0], %x[1] domain [] : ({V}, {V}) -> {V}
  sdg.output "y" %y[] domain [] : {V}
}}"""



def test_an_op_computable_for_some_bounds_is_scheduled_under_that_condition():
    from tidal.lowering.schedule import UncomputableError
    sched = schedule_graph(graph_of(PAIR))
    assert str(sched.domains[1]).endswith("{ S1[] : T >= 2 }")
    assert [(r.node, r.condition) for r in sched.requirements] == [(2, "T >= 2")]
    tree = from_isl(sched.ast())
    guards = [s for s in walk(tree) if isinstance(s, If)]
    assert any({e.node for e in walk(g.then) if isinstance(e, Exec)} >= {1, 2} for g in guards), \
        format_loop_nest(tree)
    for T in (2, 3, 100):
        sched.check_bounds({"T": T})
    with pytest.raises(UncomputableError) as info:
        sched.check_bounds({"T": 1})
    error = info.value
    assert str(error).startswith("-:4:") and error.location.startswith("-:4:")     # the add, not the output
    assert 'needs input "x" at t = 1 but T = 1 (it reads %0[1]' in str(error)
    assert (error.node, error.required, error.bounds, error.condition) == (1, 2, {"T": 1}, "T >= 2")
    again = load_schedule(sched.graph, sched.text())                    # sdg-lower-to-scf's view
    assert [r.condition for r in again.requirements] == ["T >= 2"]


def test_the_valid_domain_fixpoint_converges_with_the_transitive_closure():
    sched = schedule_graph(graph_of(FAR_BASE))
    assert str(sched.domains[2]).endswith("{ S2[t = 0] : T > 0 }")     # only the base case
    assert sched.domains[3].is_empty()
    assert sched.requirements == []


def test_a_recurrence_that_only_runs_with_a_bound_of_1_is_still_an_error():
    """s[t] = tanh(s[t + 1]) with s[0] = a works only at T = 1: refused."""
    with pytest.raises(ScheduleError, match=r"\(e\.g\. with T = 2\)"):
        schedule_graph(graph_of(UNSCHEDULABLE_FUTURE))


@pytest.mark.parametrize("dep, error", [
    ("t * t", "cannot be scheduled: dependence `[t * t]` is not affine"),
    ("t * T", "cannot be scheduled: dependence `[t * T]` is not affine"),
    ("t floordiv T", "is not a valid symbolic expression: `t // T`"),
    ("i", "uses i, which the op's domain does not provide"),
    ("t, 0", "the dependence has 2 components but the producer's domain [t] has 1 dimension"),
])
def test_unsupported_dependences_are_graph_errors_at_the_op(dep, error):
    from tidal.lowering.graph import GraphError
    from tidal.passes.base import OpError
    text = f"""
sdg.graph @g dims [t < T, i < I] {{
  %x = sdg.input "x" domain [t] : {V}
  %y = sdg.unary neg %x[{dep}] domain [t] : ({V}) -> {V}
  sdg.output "y" %y[t] domain [t] : {V}
}}"""
    with pytest.raises(GraphError) as info:
        schedule_graph(graph_of(text))
    assert isinstance(info.value, OpError) and info.value.op is not None
    assert str(info.value.op.location) == 'loc("-":4:8)'
    assert error in info.value.message, info.value.message


def test_params_and_constants_run_first_outside_every_loop():
    """Sources that run once (no domain, no operands) are a prologue before
    the isl-scheduled rest, never scattered through the loop nest."""
    g = graph_of(f"""
sdg.graph @g dims [t < T] {{
  %x = sdg.input "x" domain [t] : {V}
  %w = sdg.param "W" dense<0.5> : tensor<4x4xf32> domain [] : !tidal.tensor<[4, 4], f32>
  %h = sdg.merge %x[0] if <t eq 0>, %n[t - 1] if <true> domain [t] : ({V}, {V}) -> {V}
  %m = sdg.matmul %h[t], %w[] domain [t] : ({V}, !tidal.tensor<[4, 4], f32>) -> {V}
  %c = sdg.constant dense<2.0> : tensor<f32> domain [] : !tidal.tensor<[], f32>
  %n = sdg.binary mul %m[t], %c[] domain [t] : ({V}, !tidal.tensor<[], f32>) -> {V}
  sdg.output "h" %h[t] domain [t] : {V}
}}""")
    tree = from_isl(schedule_graph(g).ast())
    sources = {1, 4}   # %w, %c
    order = [e.node for e in walk(tree) if isinstance(e, Exec)]   # program order (guards may wrap them)
    assert set(order[:len(sources)]) == sources, format_loop_nest(tree, g)
    assert all(e.node not in sources for loop, _ in loops(tree) for e in walk(loop.body) if isinstance(e, Exec))
