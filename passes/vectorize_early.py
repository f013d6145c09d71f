"""sdg-vectorize's early form (option `early`): a value computed by a matmul over
a step d from values ready before d's loop, read row by row by a recurrence
over d, runs once over all of d before the loop (sdg_vectorize.py's module
doc). The plan (`sdg_vectorize._Plan`) asks `early_point` for each reader.

Before (an RNN's input projection inside the recurrence):

    %xu = sdg.matmul %x[t], %u[] domain [t] -> [4]
    %h0 = sdg.unary tanh %xu[0] domain [] -> [4]
    %a = sdg.binary add %hw[t], %xu[t] domain [t] -> [4]

After:

    %xu = sdg.matmul %x[0:T], %u[] domain [] -> [T, 4]
    %s = sdg.take 0 at <0> %xu[] domain [] -> [4]
    %h0 = sdg.unary tanh %s[] domain [] -> [4]
    %r = sdg.take 0 at <t> %xu[] domain [t] -> [4]
    %a = sdg.binary add %hw[t], %r[t] domain [t] -> [4]
"""
from __future__ import annotations

from .sdg_build import mentions as _mentions
from .sdg_graph_view import step_offset

__all__ = ["early_point", "early_ready"]


def early_point(plan, src: int, reader: int, operand: int) -> bool:
    """Whether `reader` reads one point of `src` (`v[t]` from a recurrence over
    the step, `v[0]` from outside the step: the recurrence's start), where a
    recurrence reads `src`, a matmul over the step is upstream of it (or is
    it: `x[t] @ U`, `x[t] @ U + b`), and it is a function of values ready
    before the step's loop (`early_ready`). Batched, it runs once before the
    loop, which it delays by nothing (its operands are all there), and the
    loop reads row t: an RNN's input projection `x[t] @ U` becomes one matrix
    product over all t (the weight read once, not T times) instead of T
    vector-matrix products inside the recurrence. Without a matmul the ops
    stay in the loop: batching elementwise work (a decode's RoPE tables of t,
    an optimizer's bias corrections of i) saved nothing measurable and added
    kernels outside the loop, compiled again for every bucket of T."""
    g, step = plan.g, plan.step
    if not plan.early or g.ops[reader].name == "sdg.output" or plan.varying(src)[-1] \
            or not any(r in plan.recurrent for r, _ in g.readers[src]):
        return False
    dep = g.reads[reader][operand][1]
    own = plan._component(src, dep)
    if own is None or ":" in own or (_mentions(own, step) and step_offset(own, step) != 0):
        return False   # a point t + c could fall outside 0..T-1 where its reader does not hold
    if (reader not in plan.recurrent) if _mentions(own, step) else (step in g.domain[reader]):
        return False   # row t for a recurrence over the step, a fixed row for its start
    pos = g.domain[src].index(step)
    others = [c for j, c in enumerate(dep) if j != pos]
    return not any(":" in c or _mentions(c, step) for c in others) and early_ready(plan, src) == "matmul"


def early_ready(plan, k: int) -> str | None:
    """Whether op k and everything upstream of it are ready before the step's
    loop: the ops over the step among them are inputs or candidates of the
    plan, and nothing among them (over the step or not: a weight updated from
    an episode's sum) is on or downstream of a cycle over the step. Random
    draws and other refused ops are not ready: batching their readers would
    pull them out of the loop they run in. "matmul" when a matmul over the
    step is among them, "ready" when none is, None when not ready."""
    if k in plan._early:
        return plan._early[k]
    g, step = plan.g, plan.step
    if plan._after_cycles is None:
        seen, todo = set(plan.cyclic), list(plan.cyclic)
        while todo:
            for r, _ in g.readers[todo.pop()]:
                if r not in seen:
                    seen.add(r)
                    todo.append(r)
        plan._after_cycles = seen
    ok, matmul, seen, todo = True, False, {k}, [k]
    while todo and ok:
        u = todo.pop()
        over = step in g.domain[u]
        if u in plan._after_cycles or (over and g.ops[u].name != "sdg.input" and not plan._candidate(u)):
            ok = False
        matmul |= over and g.ops[u].name == "sdg.matmul"
        for src, _ in g.reads[u]:
            if src is not None and src not in seen:
                seen.add(src)
                todo.append(src)
    plan._early[k] = ("matmul" if matmul else "ready") if ok else None
    return plan._early[k]
