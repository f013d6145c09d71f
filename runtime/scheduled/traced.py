"""Steady-state loops inside XLA: an `scf.for` run as one `lax.fori_loop`.

A loop of the lowered program whose body calls only launches that JAX can
trace (jitted kernels reading point stores of static shape or array stores
through points and slices, merges, outputs, constants, padded kernels: no
UDF, no host op) is emitted by the host generator (hostgen.py) as
one call `_loop<n>(lb, ub, ...)`. The call packs the stores the body uses
into a dict `B` of buffers (an array store's buffer as is; a point store of
static shape as one dense array `[slots..., *shape]`), runs the jitted loop
function, whose body is `lax.fori_loop` over *traced launchers*
`_T<k>(B, point...) -> B`, and unpacks the buffers into the stores. Nested
loops become nested `fori_loop`s, `scf.if` a `lax.cond` (or a Python `if`
when its condition depends on the bounds only), a merge a select or a
`lax.switch` over the branches that can hold where it is called (its call's
`tidal.branches`, lowering/merge_branches.py: none in an RNN's loop). The bounds are the loop function's static argument (its jit
key), loop counters and other host values are traced: a loop compiles once
per set of bounds and store capacities, never per point. A padded kernel
whose size has no static bound (attention over a causal prefix `k[0:t+1]`)
runs under `_capswitch`: one branch per capacity up to the cache's rows.

A loop whose trace fails (an op JAX cannot trace at these shapes) runs as
the plain Python loop from then on; an error of the program itself (an index
out of range) is reported when the run ends, as for single kernels.

Example (an RNN, `h[t] = tanh(h[t-1] @ W + x[t] @ U)`), the host program:

    def _program(T):
        _L3(0); _L4(); _L8(0); _L9(0)
        _loop1(1, T)                   # was: for c2 in range(1, T): _L5(c2) ...

and the loop function (source kept in the `host` stage):

    def _loop1_fn(_bv, lb, ub, B):
        def _step2(c2, B):
            B = dict(B)
            B = _T5(B, c2)
            ...
            return B
        return _fori(lb, ub, 1, _step2, B)
"""
from __future__ import annotations

import re

import numpy as np

__all__ = ["NotTraceable", "traced_launcher", "loop_namespace", "capacities"]


class NotTraceable(Exception):
    """A launch that cannot run inside a traced loop (why: the message)."""


# -- traced launchers ----------------------------------------------------------------------------
def _written_keys(source: str) -> set[str]:
    """The keys of B that assignments in `source` write (`_B['_S3'] = ...`,
    `_B['_S8'], _B['_IX8'] = ...`)."""
    import ast

    out: set[str] = set()

    def targets(t):
        if isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                yield from targets(e)
        else:
            yield t
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                for t in targets(target):
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == "_B" \
                            and isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str):
                        out.add(t.slice.value)
    return out


def traced_launcher(gen, node, opdef) -> tuple[str, set[str], set[str], set[str]] | None:
    """(source of `def _T<k>(B, steps...)`, keys of B it uses, bounds its code
    reads, keys of B it writes), or None when
    node `k` cannot be traced. `gen` is the executable's LauncherGen; the
    kernels it registers are the plain launcher's (same names, same specs)."""
    k = node.index
    steps = "".join(", " + s for s in node.domain)
    # a merge: `_br`, the branches that can hold where it is called (None: all)
    only = ", _br=None" if opdef.kind == "merge" else ""
    if opdef.kind == "param":   # a bound buffer, rebound without retracing: read by the plain launcher
        return None             # (not in gen.untraced: a param with no domain is in no loop)
    if opdef.kind == "stop_when":
        from .stopping import traced_stop_launcher
        return traced_stop_launcher(gen, node)
    lines = [f"def _T{k}(_B{steps}{only}):", f"    # {node.label} at {node.location}"]
    pad = "    "
    kernels = dict(gen.kernels)
    gen.traced, gen.used, gen.dyn = True, set(), None
    try:
        if opdef.kind == "constant":
            gen.host_write(node, 0, f"_V{k}", lines, pad, owned=True)
        elif opdef.kind == "merge" and _moves_only(gen, node):
            # every branch copies a point: select the value (no XLA conditional)
            conds, values, numbers = [], [], []
            for b, edge in enumerate(node.edges):
                if (edge.source, edge.result) in gen.plans:
                    conds.append(gen.code(edge.cond, node))
                    pre: list[str] = []
                    values.append(gen.host_read(node, edge, pre))
                    numbers.append(b)
                    lines += [pad + p for p in pre]
            gen.host_write(node, 0, f"_pick([{', '.join(conds)}], [{', '.join(values)}], {numbers!r}, _br)",
                           lines, pad)
        elif opdef.kind == "merge" and _select_then_write(gen, node, opdef, lines):
            pass
        elif opdef.kind == "merge":
            conds, fns = [], []
            for b, edge in enumerate(node.edges):
                conds.append(gen.code(edge.cond, node))
                fns.append(f"_b{b}")
                lines.append(f"    def _b{b}(_B):")
                lines.append("        _B = dict(_B)")
                if (edge.source, edge.result) in gen.plans:   # else: a branch never taken
                    gen.move(node, opdef, edge, f"_K{k}_{b}", "        ", lines)
                lines.append("        return _B")
            lines.append(f"    _B = _branch(_B, [{', '.join(conds)}], [{', '.join(fns)}], _br)")
        else:
            gen.launch(node, opdef, pad, lines)   # a host op raises NotTraceable
        lines.append("    return _B")
        for name, entry in gen.kernels.items():
            if name in kernels and kernels[name] is not entry and repr(kernels[name][1:]) != repr(entry[1:]):
                raise AssertionError(f"traced launcher of %{k} changed kernel {name}")
        source = "\n".join(lines) + "\n"
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source))
        written = _written_keys(source)
        return source, set(gen.used), words & set(gen.graph.bounds), written
    except NotTraceable as why:
        gen.kernels.clear()
        gen.kernels.update(kernels)
        gen.guards.pop(k, None)      # a check registered before the refusal: no loop sets it
        gen.untraced[k] = str(why)
        return None
    finally:
        gen.traced = False


def _select_then_write(gen, node, opdef, lines: list) -> bool:
    """A merge into an array store: every taken branch's value read by a jitted
    kernel, the first whose condition holds selected, then one in-place write.
    A `lax.switch` whose branches each write the buffer makes XLA copy the
    whole buffer at every point (15 us per step for a (256, 64, 4) store);
    reading every branch's operand costs a few small reads instead (a read at
    a point where its branch does not hold is clamped, and not selected)."""
    if gen.plan(node.index, 0).kind == "point":
        return False
    k, mark = node.index, len(lines)
    conds, values, numbers = [], [], []
    for b, edge in enumerate(node.edges):
        if (edge.source, edge.result) not in gen.plans:   # a branch never taken
            continue
        value = gen.value_call(node, opdef, edge, f"_K{k}_{b}v", "    ", lines)
        if value is None:
            del lines[mark:]
            return False
        conds.append(gen.code(edge.cond, node))
        values.append(value)
        numbers.append(b)
    if not values:
        del lines[mark:]
        return False
    lines.append(f"    _r = _pick([{', '.join(conds)}], [{', '.join(values)}], {numbers!r}, _br)")
    from .jax_backend import LazyOperand
    gen.kernel_launch(node, opdef, [LazyOperand("value")], f"_K{k}_w", [], ["_r"], "    ", lines)
    return True


def _moves_only(gen, node) -> bool:
    """Whether every branch of merge `node` that is ever taken copies a point
    of a point store into the merge's point store."""
    if gen.plan(node.index, 0).kind != "point":
        return False
    return all((e.source, e.result) not in gen.plans or (
        gen.plan(e.source, e.result).kind == "point" and all(c.kind != "slice" for c in e.dep))
        for e in node.edges)


# -- point stores packed as dense arrays ---------------------------------------------------------
# -- helpers of traced code (each also takes plain Python ints and bools) ------------------------
def _concrete(x) -> bool:
    return isinstance(x, (bool, int, np.bool_, np.integer))


def _logic(xs: tuple, python, traced, start):
    if all(_concrete(x) for x in xs):
        return python(bool(x) for x in xs)
    out = start
    for x in xs:
        out = traced(out, x)
    return out


def _and(*xs):
    import jax.numpy as jnp
    return _logic(xs, all, jnp.logical_and, True)


def _or(*xs):
    import jax.numpy as jnp
    return _logic(xs, any, jnp.logical_or, False)


def _not(x):
    import jax.numpy as jnp
    return (not x) if _concrete(x) else jnp.logical_not(x)


def _sel(c, a, b):
    import jax.numpy as jnp
    if _concrete(c):
        return a if c else b
    return jnp.where(c, a, b)


def _extreme(xs: tuple, python, traced):
    if all(_concrete(x) for x in xs):
        return python(xs)
    out = xs[0]
    for x in xs[1:]:
        out = traced(out, x)
    return out


def _tmin(*xs):
    import jax.numpy as jnp
    return _extreme(xs, min, jnp.minimum)


def _tmax(*xs):
    import jax.numpy as jnp
    return _extreme(xs, max, jnp.maximum)


def _tremsi(a, b):
    from jax import lax
    from .hostgen import remsi
    return remsi(a, b) if _concrete(a) and _concrete(b) else lax.rem(a, b)


def _tdivsi(a, b):
    from jax import lax
    from .hostgen import divsi
    return divsi(a, b) if _concrete(a) and _concrete(b) else lax.div(a, b)


def slice_at(buf, starts, sizes):
    """`buf[starts[0]:starts[0] + sizes[0], ...]` (`lax.dynamic_slice`), the
    axes after `starts` whole. A store's positions are never negative: no
    wrap-around select (jax's default maps -1 to the end; inside a loop body
    that select and what it stops XLA from doing cost an RNN of T = 2,000
    2.1 ms instead of 1.1 ms); XLA clamps as always."""
    from jax import lax
    starts = _positions(starts, buf.ndim)
    return lax.dynamic_slice(buf, starts, list(sizes) + list(buf.shape[len(sizes):]),
                             allow_negative_indices=False)


def update_at(buf, update, starts):
    """`buf` with `update` written at `starts` (`lax.dynamic_update_slice`),
    positions as in `slice_at`."""
    from jax import lax
    return lax.dynamic_update_slice(buf, update, _positions(starts, buf.ndim), allow_negative_indices=False)


def _positions(starts, ndim: int) -> list:
    """Start positions in a buffer, missing trailing ones 0, all int32 (an axis
    holds fewer than 2**31 elements): lax wants one integer type, and the
    positions come as Python ints, int64 loop counters and int32 values."""
    import jax.numpy as jnp
    out = [jnp.int32(s) if isinstance(s, (int, np.integer)) else jnp.asarray(s).astype(jnp.int32) for s in starts]
    return out + [jnp.int32(0)] * (ndim - len(out))


def getp(buf, slot: tuple):
    """The element of `buf` at `slot` (its leading indices), traceable."""
    if not slot:
        return buf
    return slice_at(buf, slot, [1] * len(slot)).reshape(buf.shape[len(slot):])


def setp(buf, slot: tuple, value):
    """`buf` with `value` (broadcast, cast) written at `slot`, traceable."""
    import jax.numpy as jnp
    value = jnp.asarray(value, dtype=buf.dtype)
    value = jnp.broadcast_to(value, buf.shape[len(slot):])
    if not slot:
        return value
    return update_at(buf, value.reshape((1,) * len(slot) + value.shape), slot)


class _PaddedRead:
    __slots__ = ("arr", "n")

    def __init__(self, arr, n):
        self.arr, self.n = arr, n


def _padded_get(values, lengths, slot: tuple, axis: int):
    """A padded point (`.arr`, `.n`) of a packed padded store."""
    return _PaddedRead(getp(values, slot), getp(lengths, slot))


def _empty_seen(flag, empty, point: tuple):
    """`flag` ([seen, *point], int64) keeps the first point where `empty` held."""
    import jax.numpy as jnp
    new = jnp.asarray([1, *point], dtype=flag.dtype)
    return jnp.where((flag[0] == 0) & empty, new, flag)


def _only(items: list, numbers: list, only: tuple | None) -> list:
    """The items of branches `only` (every item when None): a merge's branches
    that can hold where it is called (lowering/merge_branches.py)."""
    kept = items if only is None else [x for x, b in zip(items, numbers) if b in only]
    return kept or items     # none can hold: the call runs no instance (any value will do)


def _branch(B: dict, conds: list, fns: list, only: tuple | None = None) -> dict:
    """The first branch whose condition holds, applied to B (lax.switch when
    the conditions are traced); `only`: the branches that can hold here."""
    import jax.numpy as jnp
    from jax import lax
    numbers = list(range(len(conds)))
    conds, fns = _only(conds, numbers, only), _only(fns, numbers, only)
    live_conds, live_fns = [], []
    for c, f in zip(conds, fns):
        if _concrete(c):
            if not c:
                continue
            if not live_conds:
                return f(B)
            live_conds.append(True)
            live_fns.append(f)
            break
        live_conds.append(c)
        live_fns.append(f)
    if not live_conds:   # as in _pick: a lax.cond branch that is traced, never run
        return B
    if len(live_fns) == 1:
        return live_fns[0](B)
    index = jnp.argmax(jnp.stack([jnp.asarray(c, dtype=bool) for c in live_conds]))
    return lax.switch(index, live_fns, B)


def _pick(conds: list, values: list, numbers: list | None = None, only: tuple | None = None):
    """The value of the first condition that holds (a select when traced);
    `numbers`: the branch of each, `only`: the branches that can hold here."""
    import jax.numpy as jnp
    if numbers is not None:
        conds, values = _only(conds, numbers, only), _only(values, numbers, only)
    live = []
    for c, v in zip(conds, values):
        if _concrete(c):
            if not c:
                continue
            if not live:
                return v
            live.append((True, v))
            break
        live.append((c, v))
    if not live:   # traced in a branch of lax.cond that never runs here (the schedule
        return values[-1]   # runs only points where a branch holds): any value of the type
    out = live[-1][1]
    for c, v in reversed(live[:-1]):
        out = jnp.where(c, v, out)
    return out


def _cond(pred, then_fn, else_fn, B: dict) -> dict:
    from jax import lax
    if _concrete(pred):
        return then_fn(B) if pred else else_fn(B)
    return lax.cond(pred, then_fn, else_fn, B)


def _fori(lb, ub, step, fn, B: dict) -> dict:
    """`for c in range(lb, ub, step): B = fn(c, B)` as a `lax.fori_loop`. Not
    unrolled: unrolling by 4 paid off while every step copied its carried
    point values (`[1, d]` slots, index wrap-around selects); without those
    copies it ran an RNN of T = 2,000 at 1.4 ms against 1.1 ms not unrolled
    (lax.scan: 1.1 ms), and it multiplied the body's compile time."""
    from jax import lax
    if _concrete(lb) and _concrete(ub):
        n = len(range(lb, ub, step))
        if n == 0:
            return B
        return lax.fori_loop(0, n, lambda i, B: fn(lb + i * step, B), B)
    import jax.numpy as jnp
    n = jnp.maximum(0, (ub - lb + step - 1) // step)
    return lax.fori_loop(0, n, lambda i, B: fn(lb + i * step, B), B)


def _wfori(lb, ub_fn, step, fn, B: dict) -> dict:
    """`c = lb; while c < ub_fn(B): B = fn(c, B); c += step` as a
    `lax.while_loop`: a loop that calls an `sdg.stop_when`, whose upper
    bound uses the stopped bound that B carries (hostgen.py)."""
    import jax.numpy as jnp
    from jax import lax

    def cond(carry):
        return carry[0] < ub_fn(carry[1])

    def body(carry):
        c, B = carry
        return c + step, fn(c, B)
    return lax.while_loop(cond, body, (jnp.asarray(lb, dtype=jnp.int64), B))[1]


def _tstop(bound, t, value):
    """The stopped bound after the stop's condition `value` at step `t`: t + 1
    where it holds and lowers it."""
    import jax.numpy as jnp
    new = jnp.asarray(t, dtype=bound.dtype) + 1
    return jnp.where(jnp.asarray(value, dtype=bool).reshape(()) & (new < bound), new, bound)


# the least capacity of `_capswitch`: below it a step costs little whatever
# its size, and every capacity is one more copy of the kernel to compile
LEAST_SWITCH_CAPACITY = 128


# What a row of a strided slice costs, in rows read in place: a slice along an axis
# with whole axes before it (a (B, H, T, hd) cache cut to its first c rows of T) is
# copied before a contraction reads it (XLA CPU), a read of the whole buffer is not.
# Measured on the tiny Llama decode at T = 2048 (bench/decode.py's model): every power
# of two 7.3 ms a token; capacities up to limit / 2, then the whole buffer, 5.2-5.7;
# up to limit / 3, 5.9.
STRIDED_SLICE_COST = 2


def capacities(limit: int, strided: bool = False) -> list[int]:
    """The capacities a point-varying size read from a buffer axis of `limit`
    elements runs at inside a traced loop (`_capswitch`): powers of two from
    LEAST_SWITCH_CAPACITY below `limit`, then `limit`. `strided`: the reads
    slice a non-leading axis of their buffers, so a capacity c < limit costs
    STRIDED_SLICE_COST * c and is kept only where that is below `limit`, the
    cost of reading the whole buffer in place."""
    caps = [min(LEAST_SWITCH_CAPACITY, limit)]
    while caps[-1] < limit:
        caps.append(min(2 * caps[-1], limit))
    if strided:
        caps = [c for c in caps if c == limit or STRIDED_SLICE_COST * c <= limit]
    return caps


def _capswitch(n, limits: tuple, fn, strided: bool = False):
    """`fn(cap)` at the least capacity of `capacities(max(limits), strided)` that
    holds `n` elements: a `lax.switch` over one branch per capacity when `n` is
    traced, so a loop whose padded size grows with its counter (a causal
    prefix) compiles once and costs O(n) per step, not O(buffer)."""
    import functools

    import jax.numpy as jnp
    from jax import lax
    caps = capacities(max(limits), strided)
    if _concrete(n):
        return fn(next((c for c in caps if c >= n), caps[-1]))
    if len(caps) == 1:
        return fn(caps[0])
    index = jnp.minimum(jnp.sum(jnp.asarray(caps) < n), len(caps) - 1)
    return lax.switch(index, [functools.partial(fn, c) for c in caps])


def _zeros(spec: tuple) -> dict:
    """The point stores a loop writes that hold nothing yet (packing.py's Z),
    as zeros made inside its XLA program."""
    import jax.numpy as jnp
    return {key: jnp.zeros(shape, dtype) for key, shape, dtype in spec}


def _jit_loop(fn):
    """`fn((bound_values, Z), *free, R, B)` jitted: the values of the bounds
    its trace reads and Z (the point stores it makes as zeros, `_zeros`)
    static (its key, with the buffers' shapes), the buffers B donated
    (written in place)."""
    import jax
    return jax.jit(fn, static_argnums=0, donate_argnames="_B")


def loop_namespace() -> dict:
    """The names traced code uses, for the executable's namespace."""
    return {"_and": _and, "_or": _or, "_not": _not, "_sel": _sel, "_tmin": _tmin, "_tmax": _tmax,
            "_tremsi": _tremsi, "_tdivsi": _tdivsi, "_getp": getp, "_setp": setp, "_branch": _branch,
            "_cond": _cond, "_pick": _pick, "_padded_get": _padded_get, "_empty_seen": _empty_seen, "_fori": _fori,
            "_capswitch": _capswitch, "_jit_loop": _jit_loop, "_zeros": _zeros, "_wfori": _wfori,
            "_tstop": _tstop}
