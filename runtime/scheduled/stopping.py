"""`sdg.stop_when` in the scheduled runtime: its launchers and the stopped bounds.

The stop's launcher reads its condition at t and, where it holds and t + 1
is below the bound, lowers the bound to t + 1: the plain launcher through
`_stop(bound, t, value)` (the host program's global, `ScheduledProgram.stop`),
the traced one in the loop's carried `_DYN<bound>` (traced.py `_tstop`), which
the host takes back when the loop's XLA program ends (`_run_loop`). The loops
that call a stop test their upper bound at every step (hostgen.py), so the run
ends there; what comes after sees the stopped bound (lowering/stopping.py).
"""
from __future__ import annotations

__all__ = ["stop_launcher", "traced_stop_launcher"]


def _condition(gen, node, lines: list, pad: str) -> str:
    pre: list[str] = []
    value = gen.host_read(node, node.edges[0], pre)
    lines += [pad + p for p in pre]
    return value


def stop_launcher(gen, node, bound: str) -> str:
    """`def _L<k>(t):` for the stop `node` of `bound`."""
    k, steps = node.index, ", ".join(node.domain)
    step = node.domain[-1]
    lines = [f"def _L{k}({steps}):", f"    # {node.label} at {node.location}", "    try:"]
    value = _condition(gen, node, lines, "        ")
    point = "(" + "".join(s + ", " for s in node.domain) + ")"
    lines += [f"        _stop({bound!r}, {step}, {value})",
              "    except Exception as _e:",
              "        from tidal.runtime.scheduled.launchers import launch_error",
              f"        launch_error(_e, {node.location!r}, {node.name!r}, {tuple(node.domain)!r}, {point})",
              "        raise"]
    return "\n".join(lines) + "\n"


def traced_stop_launcher(gen, node):
    """(source of `def _T<k>(_B, t):`, keys of B it uses, bounds it reads, keys
    it writes): the carried bound `_DYN<bound>` lowered where the condition holds."""
    from .traced import NotTraceable
    graph = gen.graph
    step = node.domain[-1]
    bound = next(d.bound.name for d in graph.dims if d.step.name == step)
    k = node.index
    lines = [f"def _T{k}(_B, {', '.join(node.domain)}):", f"    # {node.label} at {node.location}"]
    gen.traced, gen.used = True, set()
    try:
        value = _condition(gen, node, lines, "    ")
    except NotTraceable as why:
        gen.untraced[k] = str(why)
        return None
    finally:
        gen.traced = False
    key = f"_DYN{bound}"
    lines += [f"    _B[{key!r}] = _tstop(_B[{key!r}], {step}, {value})", "    return _B"]
    return "\n".join(lines) + "\n", set(gen.used) | {key}, set(), {key}
