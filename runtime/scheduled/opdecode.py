"""What each operator computes, for the scheduled runtime.

`decode(node, graph)` returns an `OpDef`: `fn(xp, args, sv)` computes the
op's results (a tuple) from its operand arrays with the array module `xp`
(NumPy, or jax.numpy under `jax.jit`), using the kernels of
`tidal.runtime.kernels`. `sv` holds the op's symbolic scalars (slice starts,
shapes, ...) evaluated at the point: `scalars` lists them as expressions over
the op's steps and the bounds. A scalar without steps is *static* (the same
at every point of a run); under `jax.jit` static scalars are compile-time
constants and the others traced integers, so `jit_ok` says whether the op
can be compiled once for all points (shapes that vary with the point cannot).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from mlir import ir

from tidal.dialects import enums
from tidal.dialects.attrs import expr_text
from tidal.dialects.element_types import NUMPY_DTYPES, dense_array, is_float
from tidal.lowering.graph import Graph, Node, read_island
from tidal.symbolic import Expr, parse

from .. import cpu_kernels, kernels as K

__all__ = ["OpDef", "decode", "DTYPES", "REDUCE_IDENTITY", "INDEXING"]

DTYPES = NUMPY_DTYPES   # MLIR element type -> NumPy dtype, bf16 included
HOST_ONLY = {"udf", "constant", "param", "input"}
# Ops that read an index tensor (operand 1). On NumPy they check its range;
# a jitted kernel cannot raise, so it folds the indices' range into an
# accumulator the runtime checks once a run ends (`index_check`).
INDEXING = {"index_select", "gather", "scatter_add"}


def REDUCE_IDENTITY(kind: str, dtype) -> Any:
    """The padding value that leaves a reduction (or a matmul contraction) unchanged;
    None for argmax/argmin, whose result (a position) padding would shift."""
    if kind in ("argmax", "argmin"):
        return None
    dtype = np.dtype(dtype)
    if kind in ("sum", "any", "matmul"):
        return dtype.type(0)
    if kind in ("prod", "all"):
        return dtype.type(1)
    big = np.inf if is_float(dtype) else np.iinfo(dtype).max if dtype.kind in "iu" else True
    return dtype.type(-big if kind == "max" else big) if dtype.kind != "b" else dtype.type(kind == "min")


@dataclass
class OpDef:
    node: Node
    kind: str                                    # mnemonic: "binary", "merge", ...
    fn: Callable | None                          # (xp, args, sv) -> tuple of results
    scalars: list[tuple[str, Expr]] = field(default_factory=list)
    dtypes: list[Any] = field(default_factory=list)
    jit_ok: bool = True
    attrs: dict[str, Any] = field(default_factory=dict)
    value: Any = None                            # a constant's values (a param's, if in the IR)

    @property
    def static_scalars(self) -> list[str]:
        return [n for n, e in self.scalars if not any(s.role == "step" for s in e.free_symbols)]

    @property
    def dynamic_scalars(self) -> list[str]:
        return [n for n, e in self.scalars if any(s.role == "step" for s in e.free_symbols)]


def _int(op, name):
    return ir.IntegerAttr(op.attributes[name]).value


def _dense(op) -> np.ndarray:
    # numbers: a read-only view of the attribute's storage (which the view keeps alive), so
    # weights are not copied once more; bf16 is a copy of its raw bytes, bools unpacked
    return dense_array(op.attributes["value"])


def _shape_scalars(graph: Graph, node: Node, result: int = 0) -> list[tuple[str, Expr]]:
    return [(f"shape{i}", parse(t, dims=graph.dims)) for i, t in enumerate(node.result_shapes[result])]


def _shape(sv: dict, n: int) -> tuple:
    return tuple(int(sv[f"shape{i}"]) for i in range(n))  # shapes are never traced


def _jax_take(xp, dim, index, x, dtype):
    if xp is np:
        return K.take(xp, dim, int(index), x, dtype)
    from jax import lax
    return lax.dynamic_index_in_dim(x, index, dim, keepdims=False).astype(dtype)


def _jax_slice(xp, dim, start, size, x, dtype):
    if xp is np:
        return K.slice_(xp, dim, int(start), int(size), x, dtype)
    from jax import lax
    return lax.dynamic_slice_in_dim(x, start, int(size), dim).astype(dtype)


def _jax_pad(xp, dim, before, after, value, x, dtype, shape):
    if xp is np:
        return K.pad(xp, dim, int(before), int(after), value, x, dtype)
    from jax import lax
    base = xp.full(tuple(int(s) for s in shape), value, dtype=dtype)
    return lax.dynamic_update_slice_in_dim(base, x.astype(dtype), before, dim)


def _island(node: Node, graph: Graph) -> OpDef:
    """An `sdg.island`: its body's ops run in order in one function, so a
    backend compiles the island into one kernel. Each body op's scalars are
    the island's, named `<j>.<name>` (j: the op's place in the body)."""
    body = read_island(node)
    defs = [decode(inner, graph) for inner in body.ops]
    d = OpDef(node, "island", None, dtypes=[np.dtype(DTYPES[t]) for t in node.result_dtypes],
              jit_ok=all(x.jit_ok for x in defs))
    d.scalars = [(f"{j}.{name}", e) for j, x in enumerate(defs) for name, e in x.scalars]
    names = [[(f"{j}.{name}", name) for name, _ in x.scalars] for j, x in enumerate(defs)]
    steps = list(zip(defs, body.sources, names))
    d.attrs["body"] = (body, defs)
    zeros = {e.number for e in node.edges if graph.nodes[e.source].name == "sdg.full"
             and ir.FloatAttr(graph.nodes[e.source].op.attributes["value"]).value == 0.0}
    d.attrs["island_fn"] = lambda masks=None: _island_fn(steps, body.yields, masks, zeros)
    d.fn = _island_fn(steps, body.yields, zeros=zeros)
    return d


def _island_fn(steps: list, yields: list, masks: dict | None = None, zeros: frozenset | set = frozenset()):
    """The island's function. `masks` (padded islands, padded.py): body op j
    -> [(operand, axis, identity)]: that operand's elements at positions >=
    sv["_n"] along `axis` are replaced by `identity` before op j reduces or
    contracts the axis. `zeros`: the island's operands that are the constant 0."""
    # matmuls whose right operand is a permute body op (_transposed_matmul)
    candidates = {j for j, (x, sources, _) in enumerate(steps) if x.kind == "matmul" and sources[1][0] == "op"
                  and steps[sources[1][1]][0].kind == "permute" and j not in (masks or {})}
    # matmuls whose left operand is a 2-D transpose body op: a weight gradient over rows (_rows_matmul)
    lefts = {j for j, (x, sources, _) in enumerate(steps) if x.kind == "matmul" and sources[0][0] == "op"
             and steps[sources[0][1]][0].kind == "permute" and j not in (masks or {})}
    # matmuls of two reshapes: maybe a column of a few-column weight gradient (_masked_vector_matmul)
    vectors = {j for j, (x, sources, _) in enumerate(steps) if x.kind == "matmul" and j not in (masks or {})
               and all(k == "op" and steps[i][0].kind == "reshape" for k, i in sources)}

    def fn(xp, args, sv):
        values = []
        for j, (x, sources, scalar_names) in enumerate(steps):
            ins = [args[i] if kind == "arg" else values[i] for kind, i in sources]
            for number, axis, identity in (masks or {}).get(j, ()):
                v = ins[number]
                shape = [1] * v.ndim
                shape[axis] = v.shape[axis]
                keep = xp.arange(v.shape[axis]).reshape(shape) < sv["_n"]
                ins[number] = xp.where(keep, v, xp.asarray(identity, dtype=v.dtype))
            if j in candidates and xp is not np:
                fast = _transposed_matmul(xp, x, steps[sources[1][1]], args, values, ins[0])
                if fast is not None:
                    values.append(fast)
                    continue
            if j in lefts and xp is not np:
                fast = _rows_matmul(x, steps, sources, args, values, ins[1], sv, zeros)
                if fast is not None:
                    values.append(fast)
                    continue
            if j in vectors and xp is not np:
                fast = _masked_vector_matmul(xp, x, steps, sources, args, values, ins, sv, zeros)
                if fast is not None:
                    values.append(fast)
                    continue
            try:
                values.append(x.fn(xp, ins, {name: sv[key] for key, name in scalar_names})[0])
            except K.KernelError as e:   # reported at the body op's line, as the reference does
                e.location, e.op_name = x.node.location, x.node.name
                raise
        return tuple(args[i] if kind == "arg" else values[i] for kind, i in yields)
    return fn


def _transposed_matmul(xp, x, permute_step, args, values, a):
    """`a @ permute(y)` where the permute makes y's last axis the contracted
    one (`q @ k.T` over a cache): with JAX, the same product as a contraction
    along y's last axis (an einsum of y transposed so), which XLA on CPU runs
    ~8x faster than the matmul of the materialized transpose. None: the
    permute does not do that, run the op as it is."""
    producer, (src_kind, i) = permute_step[0], permute_step[1][0]
    y = args[i] if src_kind == "arg" else values[i]
    perm = [p % y.ndim for p in producer.attrs["perm"]]
    if y.ndim < 2 or a.ndim < 2 or perm[-2] != y.ndim - 1:
        return None
    swapped = perm[:-2] + [perm[-1], perm[-2]]      # y's last axis last: the contraction runs along rows
    out = xp.einsum("...mk,...nk->...mn", a, xp.transpose(y, swapped))
    return out.astype(x.dtypes[0])


def _rows_matmul(x, steps, sources, args, values, b, sv, zeros):
    """`permute(y) @ b` with y of shape (K, M) transposed, both float32: the
    product contracts y and b over their rows (a weight gradient, h^T @ g), which
    XLA:CPU runs on Eigen at 2/3 of its usual speed; Tidal's CPU kernel
    (tidal.runtime.cpu_kernels) runs it at full speed. When both operands are
    reshapes of values whose rows past the same bound are zeroed (sdg-tile's
    masks of a last tile, `where(iota 0 < T - 16 n, h, 0)`), the kernel reads
    only the rows before it, and the masks are not computed. None: a product
    the kernel does not take (another platform, dtype or shape, a small one,
    no kernel)."""
    import jax

    permute = steps[sources[0][1]]
    y = _source_value(permute[1][0], args, values)
    if y.ndim != 2 or b.ndim != 2 or [p % 2 for p in permute[0].attrs["perm"]] != [1, 0] \
            or x.dtypes[0] != np.float32 or min(y.shape[1], b.shape[1]) < cpu_kernels.MIN_SIZE \
            or jax.default_backend() != "cpu":
        return None
    masked = [_masked_rows(steps, src, zeros) for src in (permute[1][0], sources[1])]
    if all(m is not None and m[3] is None for m in masked) and masked[0][1] == masked[1][1]:
        h, g, step = _source_value(masked[0][0], args, values), _source_value(masked[1][0], args, values), \
            masked[1][2]
        if h.ndim >= 2 and g.ndim >= 2 and h.shape[0] == g.shape[0] and h.shape[1:-1] == g.shape[1:-1] \
                and h.shape[-1] == y.shape[1] and g.shape[-1] == b.shape[1] and y.shape[0] == b.shape[0] \
                and h.size // h.shape[-1] == y.shape[0]:
            inner = y.shape[0] // max(h.shape[0], 1)
            bound = jax.numpy.clip(sv[f"{step}.value"], 0, h.shape[0]) * inner
            return cpu_kernels.tn_matmul(h.reshape(y.shape), g.reshape(b.shape), bound)
    return cpu_kernels.tn_matmul(y, b)


def _source_value(src, args, values):
    """A body operand's value: the island's argument or an earlier body op's."""
    return args[src[1]] if src[0] == "arg" else values[src[1]]


def _masked_vector_matmul(xp, x, steps, sources, args, values, ins, sv, zeros):
    """`a @ b` of shapes (1, K) and (K, N), a and b reshapes of sdg-tile's masks
    of a last tile with the same bound (a maybe through a `take` along another
    axis): a column of a few-column weight gradient, which sdg-contract writes
    g[..., c]^T @ h (a policy head's). The CPU kernel contracts the rows before
    the bound (tn_matmul of the column as a (K, 1) matrix), so neither mask is
    computed: XLA ran each such column as a (1, K) by (K, 64) product on Eigen
    after selecting the whole (K, 64) mask. None: anything else (as
    _rows_matmul)."""
    import jax

    a, b = ins
    if a.ndim != 2 or b.ndim != 2 or a.shape[0] != 1 or x.dtypes[0] != np.float32 or a.dtype != np.float32 \
            or b.dtype != np.float32 or jax.default_backend() != "cpu":
        return None
    masked = [_masked_rows(steps, src, zeros) for src in sources]
    if any(m is None for m in masked) or masked[0][1] != masked[1][1] or masked[1][3] is not None:
        return None
    h, g = (_source_value(m[0], args, values) for m in masked)
    if masked[0][3] is not None:        # the column: taken from the unmasked value
        take, _, names = steps[masked[0][3]]
        h = take.fn(xp, [h], {name: sv[key] for key, name in names})[0]
    k = a.shape[1]
    if h.ndim < 1 or g.ndim < 1 or h.size != k or g.size != b.size or h.shape[0] != g.shape[0] \
            or h.shape[0] == 0 or k % h.shape[0]:
        return None
    bound = jax.numpy.clip(sv[f"{masked[1][2]}.value"], 0, h.shape[0]) * (k // h.shape[0])
    return cpu_kernels.tn_matmul(h.reshape(k, 1), g.reshape(b.shape), bound)


def _masked_rows(steps, src, zeros):
    """For a body value that is the reshape of `where(iota(dim 0) < v, x, 0)`
    (v a symbol_value body op, 0 a zero constant), or of a `take` along another
    axis of such a where: (x's source, v's expression text, v's body index, the
    take's body index or None); else None."""
    if src[0] != "op" or steps[src[1]][0].kind != "reshape":
        return None
    where, take = steps[src[1]][1][0], None
    if where[0] == "op" and steps[where[1]][0].kind == "take" and steps[where[1]][0].attrs["dim"] != 0:
        take, where = where[1], steps[where[1]][1][0]
    if where[0] != "op" or steps[where[1]][0].kind != "where":
        return None
    (ck, c), x, (fk, f) = steps[where[1]][1]
    zero = (fk == "arg" and f in zeros) or (fk == "op" and steps[f][0].kind == "full"
                                             and ir.FloatAttr(steps[f][0].node.op.attributes["value"]).value == 0.0)
    if ck != "op" or not zero or steps[c][0].kind != "binary" or steps[c][0].node.attrs.get("kind_name") != "lt":
        return None
    (ik, i), (vk, v) = steps[c][1]
    if ik != "op" or vk != "op" or steps[i][0].kind != "iota" or steps[i][0].attrs.get("dim") != 0 \
            or steps[v][0].kind != "symbol_value":
        return None
    return x, str(steps[v][0].scalars[0][1]), v, take


def decode(node: Node, graph: Graph) -> OpDef:
    if node.name == "sdg.island":
        return _island(node, graph)
    op = node.op
    kind = node.name.split(".", 1)[1]
    dtypes = [np.dtype(DTYPES[d]) for d in node.result_dtypes]
    dtype = dtypes[0] if dtypes else None
    d = OpDef(node, kind, None, dtypes=dtypes, jit_ok=kind not in HOST_ONLY)
    nshape = len(node.result_shapes[0]) if node.result_shapes else 0

    def one(f):
        d.fn = lambda xp, args, sv: (f(xp, args, sv),)

    k = node.attrs.get("kind_name")
    if kind == "unary":
        one(lambda xp, a, sv: K.unary(xp, k, a[0], dtype))
    elif kind == "binary":
        one(lambda xp, a, sv: K.binary(xp, k, a[0], a[1], dtype))
    elif kind == "where":
        one(lambda xp, a, sv: K.where(xp, a[0], a[1], a[2], dtype))
    elif kind == "reduce":
        dims, keep = list(ir.DenseI64ArrayAttr(op.attributes["dims"])), "keepdim" in op.attributes
        d.attrs.update(reduce_kind=k, dims=dims, keepdim=keep)
        one(lambda xp, a, sv: K.reduce(xp, k, dims, keep, a[0], dtype))
    elif kind == "scan":
        dim, rev = _int(op, "dim"), "reverse" in op.attributes
        d.attrs.update(dim=dim, reverse=rev)
        one(lambda xp, a, sv: K.scan(xp, k, dim, rev, a[0], dtype))
    elif kind == "linear_scan":
        dim, rev = _int(op, "dim"), "reverse" in op.attributes
        d.attrs.update(dim=dim, reverse=rev)
        one(lambda xp, a, sv: K.linear_scan(xp, dim, rev, a[0], a[1], dtype))
    elif kind == "argsort":
        dim, desc = _int(op, "dim"), "descending" in op.attributes
        one(lambda xp, a, sv: K.argsort(xp, dim, desc, a[0], dtype))
    elif kind == "matmul":
        one(lambda xp, a, sv: K.matmul(xp, a[0], a[1], dtype))
    elif kind in ("reshape", "expand", "full", "iota", "random"):
        d.scalars = _shape_scalars(graph, node)
        fn = {"reshape": K.reshape, "expand": K.expand}.get(kind)
        if fn is not None:
            one(lambda xp, a, sv: fn(xp, _shape(sv, nshape), a[0], dtype))
        elif kind == "full":
            value = ir.FloatAttr(op.attributes["value"]).value
            one(lambda xp, a, sv: K.full(xp, _shape(sv, nshape), value, dtype))
        elif kind == "iota":
            dim = _int(op, "dim")
            d.attrs["dim"] = dim
            one(lambda xp, a, sv: K.iota(xp, _shape(sv, nshape), dim, dtype))
        else:
            dist, seed = str(enums.RandomDist(_int(op, "dist"))), _int(op, "seed")
            d.attrs.update(dist=dist, seed=seed)
            # the point's coordinates are scalars (traced under jit: one kernel for every point)
            d.scalars += [(f"point{i}", parse(s, dims=graph.dims)) for i, s in enumerate(node.domain)]
            ndom = len(node.domain)
            one(lambda xp, a, sv: K.random(xp, dist, seed, [sv[f"point{i}"] for i in range(ndom)],
                                           _shape(sv, nshape), dtype))
    elif kind == "permute":
        perm = list(ir.DenseI64ArrayAttr(op.attributes["perm"]))
        d.attrs["perm"] = perm
        one(lambda xp, a, sv: K.permute(xp, perm, a[0], dtype))
    elif kind in ("squeeze", "unsqueeze", "flip", "concat", "index_select", "gather", "scatter_add"):
        dim = _int(op, "dim")
        d.attrs["dim"] = dim
        if kind == "concat":
            one(lambda xp, a, sv: K.concat(xp, dim, a, dtype))
        else:
            fn2 = {"squeeze": K.squeeze, "unsqueeze": K.unsqueeze, "flip": K.flip,
                   "index_select": K.index_select, "gather": K.gather, "scatter_add": K.scatter_add}[kind]
            one(lambda xp, a, sv: fn2(xp, dim, *a, dtype))
            if kind in INDEXING:
                d.attrs["index_check"] = (1, 0, dim)   # index operand, indexed operand, its dimension
    elif kind == "slice":
        dim = _int(op, "dim")
        d.scalars = [("start", parse(expr_text(op.attributes["start"]), dims=graph.dims)),
                     ("size", parse(node.result_shapes[0][dim], dims=graph.dims))]
        one(lambda xp, a, sv: _jax_slice(xp, dim, sv["start"], sv["size"], a[0], dtype))
    elif kind == "take":
        dim = _int(op, "dim")
        d.attrs["dim"] = dim
        d.scalars = [("index", parse(expr_text(op.attributes["index"]), dims=graph.dims))]
        one(lambda xp, a, sv: _jax_take(xp, dim, sv["index"], a[0], dtype))
    elif kind == "pad":
        dim, value = _int(op, "dim"), ir.FloatAttr(op.attributes["value"]).value
        d.scalars = [("before", parse(expr_text(op.attributes["before"]), dims=graph.dims)),
                     ("after", parse(expr_text(op.attributes["after"]), dims=graph.dims))]
        d.scalars += _shape_scalars(graph, node)
        one(lambda xp, a, sv: _jax_pad(xp, dim, sv["before"], sv["after"], value, a[0], dtype,
                                       _shape(sv, nshape)))
    elif kind == "cast":
        one(lambda xp, a, sv: K.cast(xp, a[0], dtype))
    elif kind in ("constant", "param"):
        if kind == "param":   # a run-time buffer, bound by name (ScheduledProgram.bind)
            d.attrs["name"] = ir.StringAttr(op.attributes["name"]).value
        if "value" in op.attributes:   # values inside the IR: a constant, or a fixture's param
            d.value = K.constant(np, _dense(op), dtype)
        one(lambda xp, a, sv: d.value)
    elif kind == "symbol_value":
        d.scalars = [("value", parse(expr_text(op.attributes["expr"]), dims=graph.dims))]
        one(lambda xp, a, sv: K.symbol_value(xp, sv["value"], dtype))
    elif kind in ("merge", "output"):
        d.fn = lambda xp, a, sv: (a[0],)
    elif kind == "stop_when":     # no kernel: its launcher reads the condition (stopping.py)
        d.fn = lambda xp, a, sv: ()
    elif kind == "udf":
        d.attrs["callee"] = ir.StringAttr(op.attributes["callee"]).value
    elif kind == "input":
        d.attrs["name"] = ir.StringAttr(op.attributes["name"]).value
    else:
        raise NotImplementedError(f"{node.describe()}: the scheduled runtime does not support '{node.name}'")
    # An op whose result shape varies with the point, or whose shape-giving
    # scalars vary, is not compiled once: it runs on the host.
    if kind in ("reshape", "expand", "full", "iota", "slice", "pad"):
        shape_names = [n for n, _ in d.scalars if n.startswith("shape") or n == "size"]
        if any(n in d.dynamic_scalars for n in shape_names):
            d.jit_ok = False
    if node.result_shapes and any(any(s.role == "step" for s in parse(t, dims=graph.dims).free_symbols)
                                  for shape in node.result_shapes for t in shape):
        d.jit_ok = False
    return d
