"""Padded values: point-varying sizes on the device without a compile per point.

In attention over a growing cache the scores `K[0:t + 1] @ q` have t + 1
elements at step t, and so do the softmax ops after them. Kept at their exact
size, each op compiled once per t (3,500 XLA compilations for a T=256 decode)
or ran on the host. Here such a value is a `stores.Padded`: an array whose
varying axis has the capacity `bucket(n)` (a power of two) and a valid length
`n`, valid elements first. Kernels compute on the whole capacity (what lies
past `n` is never read as a result) and mask only where the varying axis is
reduced or contracted, with the reduction's identity (0 for sum and matmul,
-inf for max), so each op compiles once per capacity: O(log T) compilations.

`plan_padded` decides, before any launcher is written, which nodes run as
padded kernels (`PaddedNode`): a jitted unary, binary, where, cast, reduce or
matmul on the jax backend whose operands are static, padded, or a slice of
an array store with one point-varying axis (read "shifted": gathered from
its start, so its valid part comes first like a padded value's), with at
most one varying axis, and where every varying operand axis either becomes
the result's varying axis (elementwise and broadcast axes, kept axes of a
reduction, the free axes of a matmul) or is reduced/contracted by an op with
an identity. Everything else keeps the unpadded path (launchers.py); a host
reader of a padded value sees it cropped (`stores.unpad`). At run time a
padded result checks that its operands' valid lengths equal its own.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from tidal.lowering.graph import Graph, Node
from tidal.symbolic import parse, slice_size

from .launchers import static_bucket
from .opdecode import OpDef

__all__ = ["PaddedNode", "plan_padded", "padded_call"]

KINDS = ("unary", "binary", "where", "cast", "reduce", "matmul", "permute", "unsqueeze", "squeeze", "scan", "linear_scan",
         "iota", "full")
# Ops that make a value from its shape alone: padded, they fill the whole
# capacity (iota counts from 0 along any axis, so the valid part comes first).
SOURCES = ("iota", "full")


@dataclass
class Operand:
    kind: str                 # "static", "padded" (a padded producer) or "shifted" (a varying slice)
    rank: int                 # rank of the value the op receives
    axis: int | None = None   # its varying axis
    to: int | None = None     # the result axis it becomes; None: reduced or contracted


@dataclass
class PaddedNode:
    out_axis: int | None      # the result's varying axis (None: the result is not padded)
    operands: list[Operand] = field(default_factory=list)
    # islands: body op -> [(operand, axis, identity)] masked before it, and the
    # one varying extent of the island's values (its valid length at a point)
    masks: dict | None = None
    extent: object = None


def _has_steps(e) -> bool:
    return any(s.role == "step" for s in e.free_symbols)


def _varying_axes(graph: Graph, shape: list[str]) -> list[int]:
    return [i for i, t in enumerate(shape) if _has_steps(parse(t, dims=graph.dims))]


def _operand(graph: Graph, plans, padded: dict, edge) -> Operand | None:
    src = graph.nodes[edge.source]
    comps = list(edge.dep)
    shape = src.result_shapes[edge.result]
    if edge.source in padded and padded[edge.source].out_axis is not None:
        if edge.result != 0 or any(c.kind == "slice" for c in comps):
            return None
        return Operand("padded", len(shape), padded[edge.source].out_axis)
    plan = plans.get((edge.source, edge.result))
    if plan is None or _varying_axes(graph, shape):
        return None
    if plan.kind == "point":
        return None if any(c.kind == "slice" for c in comps) else Operand("static", len(shape))
    if not plan.static_shape or any(c.kind == "slice" and c.step != 1 for c in comps):
        return None
    kept = [c for c in comps if c.kind == "slice"]
    varying = [j for j, c in enumerate(kept) if _has_steps(slice_size(c))]
    if len(varying) > 1:
        return None
    rank = len(kept) + len(shape)
    return Operand("shifted", rank, varying[0]) if varying else Operand("static", rank)


def _route(opdef: OpDef, operands: list[Operand], rank: int) -> bool:
    """Sets `to` of each varying operand; False if a varying axis cannot be padded."""
    for number, o in enumerate(operands):
        if o.axis is None:
            continue
        if opdef.kind in ("unary", "cast", "binary", "where"):
            o.to = o.axis + rank - o.rank
        elif opdef.kind == "permute":
            o.to = [p % o.rank for p in opdef.attrs["perm"]].index(o.axis)
        elif opdef.kind == "unsqueeze":
            dim = opdef.attrs["dim"] % rank
            o.to = o.axis if o.axis < dim else o.axis + 1
        elif opdef.kind in ("scan", "linear_scan"):
            # a forward scan along the varying axis reads only earlier (valid)
            # elements for valid positions; a reverse one would read the padding
            if opdef.attrs["reverse"] and opdef.attrs["dim"] % o.rank == o.axis:
                return False
            o.to = o.axis
        elif opdef.kind == "squeeze":
            dim = opdef.attrs["dim"] % o.rank
            if dim == o.axis:
                return False
            o.to = o.axis if o.axis < dim else o.axis - 1
        elif opdef.kind == "reduce":
            dims = [d % o.rank for d in opdef.attrs["dims"]]
            if o.axis in dims:
                o.to = None
            else:
                o.to = o.axis if opdef.attrs["keepdim"] else o.axis - sum(d < o.axis for d in dims)
        else:   # matmul
            other = operands[1 - number].rank
            if number == 0:
                contracted = o.axis == o.rank - 1
                free = o.rank >= 2 and o.axis == o.rank - 2
                to = rank - 2 if other >= 2 else rank - 1
            else:
                contracted = o.axis == (0 if o.rank == 1 else o.rank - 2)
                free = o.rank >= 2 and o.axis == o.rank - 1
                to = rank - 1
            if not (contracted or free):
                return False
            o.to = None if contracted else to
    return True


def plan_padded(graph: Graph, plans, opdefs: dict[int, OpDef],
                identity_of) -> dict[int, PaddedNode]:
    """The nodes that run as padded kernels (see the module docstring), in
    index order so that producers are decided before their readers (a
    reader of a later node, in a cycle, sees it unpadded)."""
    padded: dict[int, PaddedNode] = {}
    for k in sorted(opdefs):
        node, opdef = graph.nodes[k], opdefs[k]
        if opdef.kind == "island":
            if all(e.source < k for e in node.edges):
                info = _plan_island(graph, plans, padded, node, opdef, identity_of)
                if info is not None:
                    padded[k] = info
            continue
        if opdef.kind not in KINDS or len(node.result_shapes) != 1:   # (jit_ok is False for varying shapes)
            continue
        if any(e.source >= k for e in node.edges):
            continue
        out = _varying_axes(graph, node.result_shapes[0])
        if len(out) > 1:
            continue
        operands = [_operand(graph, plans, padded, e) for e in node.edges]
        if any(o is None for o in operands) or not any(o.kind == "padded" for o in operands) and not out:
            continue
        if not _route(opdef, operands, len(node.result_shapes[0])):
            continue
        routed = {o.to for o in operands if o.axis is not None and o.to is not None}
        if routed != set(out) and not (opdef.kind in SOURCES and out):
            continue
        if any(o.axis is not None and o.to is None for o in operands) and identity_of(opdef) is None:
            continue
        padded[k] = PaddedNode(out[0] if out else None, operands)
    return padded


def _strided(layout: tuple | None, dep, axis: int) -> bool:
    """Whether a slice along domain axis `axis` of a buffer (physical order
    `layout`) is strided: a physical axis before it is read whole (a value
    axis, or another sliced domain axis), so the slice is not one block."""
    order = layout if layout is not None else tuple(range(len(dep) + 1))
    before = order[:order.index(axis)]
    return any(a >= len(dep) or dep[a].kind == "slice" for a in before)


def _extent_of(graph: Graph, edge, o: Operand):
    """The size expression of a varying operand's varying axis."""
    if o.kind == "padded":
        return parse(graph.nodes[edge.source].result_shapes[edge.result][o.axis], dims=graph.dims)
    kept = [c for c in edge.dep if c.kind == "slice"]
    return slice_size(kept[o.axis])


def _plan_island(graph: Graph, plans, padded: dict, node: Node, opdef: OpDef, identity_of) -> PaddedNode | None:
    """A padded island: its body ops routed one by one like padded nodes,
    with the varying operands of a reduction or contraction masked inside
    the kernel; None unless every varying axis has the same extent."""
    body, defs = opdef.attrs["body"]
    outer = [_operand(graph, plans, padded, e) for e in node.edges]
    if any(o is None for o in outer):
        return None
    extents = {str(_extent_of(graph, e, o)): _extent_of(graph, e, o)
               for e, o in zip(node.edges, outer) if o.axis is not None}
    values: list[Operand] = []          # each body op's result: rank and varying axis
    masks: dict[int, list] = {}
    for j, (inner, sources, d) in enumerate(zip(body.ops, body.sources, defs)):
        ops = [Operand(outer[i].kind, outer[i].rank, outer[i].axis) if kind == "arg" else
               Operand("padded" if values[i].axis is not None else "static", values[i].rank, values[i].axis)
               for kind, i in sources]
        if len(inner.result_shapes) != 1:
            return None
        rank = len(inner.result_shapes[0])
        out = _varying_axes(graph, inner.result_shapes[0])
        if len(out) > 1:
            return None
        for a in out:
            e = parse(inner.result_shapes[0][a], dims=graph.dims)
            extents.setdefault(str(e), e)
        if any(o.axis is not None for o in ops) or out:
            if d.kind not in KINDS or d.kind in SOURCES or not _route(d, ops, rank):
                return None
            if {o.to for o in ops if o.axis is not None and o.to is not None} != set(out):
                return None
            reduced = [(number, o.axis) for number, o in enumerate(ops) if o.axis is not None and o.to is None]
            if reduced:
                identity = identity_of(d)
                if identity is None:
                    return None
                masks[j] = [(number, axis, identity) for number, axis in reduced]
        values.append(Operand("static", rank, out[0] if out else None))
    if len(extents) != 1 or len(body.yields) != 1:
        return None
    kind, i = body.yields[0]
    out_axis = values[i].axis if kind == "op" else outer[i].axis
    for o in outer:
        o.to = o.axis   # an operand is masked inside, where a body op reduces it
    return PaddedNode(out_axis, outer, masks, next(iter(extents.values())))


def _island_guards(gen, opdef: OpDef, info: PaddedNode, n: str) -> list[str]:
    """A body op of a padded island that reduces the varying axis with no
    value on an empty input (max, ...) raises, as unpadded, when it is empty."""
    from .launchers import EMPTY_OK
    _, defs = opdef.attrs["body"]
    out = []
    for j in sorted(info.masks):
        d = defs[j]
        if d.kind == "reduce" and d.attrs["reduce_kind"] not in EMPTY_OK:
            out += [f"if {n} == 0:",
                    f"    from {__name__} import empty_island_reduction",
                    f"    empty_island_reduction({d.node.location!r}, {d.node.name!r}, {d.attrs['reduce_kind']!r})"]
    if out and gen.traced:
        d = next(defs[j] for j in sorted(info.masks)
                 if defs[j].kind == "reduce" and defs[j].attrs["reduce_kind"] not in EMPTY_OK)
        return gen.guard(opdef.node.index, ("island", d.node.location, d.node.name, d.attrs["reduce_kind"]),
                         f"{n} == 0")
    return out


def empty_island_reduction(location: str, op_name: str, kind: str) -> None:
    from ..kernels import KernelError
    error = KernelError(f"reduce {kind} over an empty dimension")
    error.location, error.op_name = location, op_name   # the body op's line (launch_error)
    raise error


def _guard(gen, node: Node, opdef: OpDef, n: str, empty_shape: str) -> list[str]:
    """A reduction without a value on an empty input (max, argmax, ...) over a
    varying axis of length 0 raises the host kernel's error, as unpadded."""
    from .launchers import EMPTY_OK
    if opdef.kind != "reduce" or opdef.attrs["reduce_kind"] in EMPTY_OK:
        return []
    if gen.traced:
        return gen.guard(node.index, ("node", opdef.attrs["reduce_kind"]), f"{n} == 0")
    return [f"if {n} == 0:",
            "    from tidal.runtime.scheduled.launchers import empty_reduction",
            f"    empty_reduction(_F{node.index}, {empty_shape}, {opdef.attrs['reduce_kind']!r})"]


def padded_call(gen, node: Node, opdef: OpDef, info: PaddedNode, kname: str, pad: str,
                lines: list) -> None:
    """Emits the launch of a padded kernel (`gen`: the LauncherGen)."""
    from .jax_backend import LazyOperand, OutSpec, mask_identity
    from .launchers import store_name
    identity = mask_identity(opdef)
    leaves, statics, pre, specs, lengths = [], [], [], [], []
    for edge, o in zip(node.edges, info.operands):
        name = store_name(edge.source, edge.result)
        plan = gen.plan(edge.source, edge.result)
        mask = o.axis is not None and o.to is None
        if o.kind == "padded":
            p = gen.tmp("p")
            slot = gen.point_slot(plan, [gen.code(c, node) for c in edge.dep])
            if gen.traced:   # the values and the valid lengths of a padded store (traced.py)
                src = gen.graph.nodes[edge.source]
                if static_bucket(parse(src.result_shapes[edge.result][gen.padded[edge.source].out_axis],
                                       dims=gen.graph.dims)) is None:
                    gen.not_traced("a padded value with no static capacity")
                pre.append(f"{p} = _padded_get({gen.key(name)}, {gen.key(name + '#n')}, {slot}, {o.axis})")
            else:
                pre.append(f"{p} = {name}.data[{slot}]")
            leaves += [f"{p}.arr", f"{p}.n"]
            specs.append(LazyOperand("padded", pad_axis=o.axis, mask=mask, identity=identity))
            if o.to is not None:
                lengths.append(f"{p}.n")
            elif mask:
                pre += _guard(gen, node, opdef, f"{p}.n", f"{p}.arr.shape[:{o.axis}] + (0,) + {p}.arr.shape[{o.axis + 1}:]")
            continue
        if plan.kind == "point":
            value = gen.host_read(node, edge, pre)
            leaves.append(value if gen.traced else f"_h2d({value})")
            specs.append(LazyOperand("value"))
            continue
        src = gen.graph.nodes[edge.source]
        spec = LazyOperand("lazy", [], tuple(int(s) for s in src.result_shapes[edge.result]),
                           identity=identity, mask=mask, layout=gen.layout(plan))
        leaves.append(gen.buf(name))
        tail, sizes = [], []
        for axis, c in enumerate(edge.dep):
            if c.kind != "slice":
                spec.axes.append("point")
                leaves.append(gen.slot(plan, axis, gen.code(c, node)))
                continue
            a = gen.tmp("a")
            pre.append(f"{a} = {gen.code(c.start, node)}")
            start = a if plan.axes[axis].mode == "block" else f"{a} % {plan.axes[axis].size}"
            size = slice_size(c)
            if not _has_steps(size):
                spec.axes.append("fixed")
                leaves.append(start)
                statics.append(gen.code(size, node))
                sizes.append(statics[-1])
                continue
            n = gen.tmp("n")
            pre.append(f"{n} = {'_tmax' if gen.traced else '_max'}(0, {gen.code(c.stop, node)} - {a})")
            # a prefix (`k[0:t + 1]`) is a plain slice of the buffer; other starts gather
            prefix = plan.axes[axis].mode == "block" and not c.start.free_symbols and int(c.start) == 0
            spec.axes.append("prefix" if prefix else "shifted")
            leaves.append(start)
            if gen.traced and static_bucket(size) is None:   # a causal prefix: a branch per capacity
                if plan.axes[axis].mode != "block":
                    gen.not_traced("a point-varying size with no static bound in a ring store")
                statics.append(gen.dynamic_cap(n, gen.caps(name, axis, plan),
                                               _strided(gen.layout(plan), edge.dep, axis)))
            else:
                statics.append(gen.bucket(n, size))
            tail.append(n)
            sizes.append("0")
            if o.to is not None:
                lengths.append(n)
            elif mask:
                shape = "(" + "".join(f"{x}, " for x in sizes + [str(d) for d in spec.shape]) + ")"
                pre += _guard(gen, node, opdef, n, shape)
        leaves += tail
        specs.append(spec)
    island_n = None
    if opdef.kind == "island":   # masks inside; the valid length is the scalar `_n`
        island_n = gen.tmp("n")
        pre.append(f"{island_n} = {gen.code(info.extent, node)}")
        for n in lengths if not gen.traced else ():
            pre.append(f"if {n} != {island_n}: raise RuntimeError('padded lengths disagree: ' + "
                       f"str(({n}, {island_n})))")
        lengths = []
        pre += _island_guards(gen, opdef, info, island_n)
        opdef = replace(opdef, fn=opdef.attrs["island_fn"](info.masks),
                        scalars=opdef.scalars + [("_n", info.extent)], attrs={**opdef.attrs, "masks": info.masks})
    code = {n_: gen.code(e, node) for n_, e in opdef.scalars}
    if island_n is not None:
        code["_n"] = island_n
    if opdef.kind in SOURCES:   # the varying extent becomes the capacity, a static argument
        varying = f"shape{info.out_axis}"
        code[varying] = gen.bucket(code[varying], dict(opdef.scalars)[varying])
        opdef = replace(opdef, scalars=[(n_, parse("0") if n_ == varying else e) for n_, e in opdef.scalars])
    leaves += [code[n_] for n_ in opdef.dynamic_scalars]
    statics += [code[n_] for n_ in opdef.static_scalars]
    lines += [pad + p for p in pre]
    if info.out_axis is not None and gen.dyn is not None:
        gen.not_traced("a padded value with no static capacity")
    if info.out_axis is not None:   # a Padded value into the node's point store
        plan, out_name = gen.plan(node.index, 0), store_name(node.index)
        static = "(" + "".join(s + ", " for s in statics) + ")"
        n_out = gen.tmp("n")
        size = parse(node.result_shapes[0][info.out_axis], dims=gen.graph.dims)
        lines.append(f"{pad}{n_out} = {gen.code(size, node)}")
        for n in lengths if not gen.traced else ():
            lines.append(f"{pad}if {n} != {n_out}: raise RuntimeError("
                         f"'padded lengths disagree: ' + str(({n}, {n_out})))")
        gen.kernels[kname] = (opdef, specs, OutSpec(False))
        if gen.traced:
            slot = gen.point_slot(plan, list(node.domain))
            lines.append(f"{pad}_r = {kname}({', '.join([static] + leaves)}); "
                         + gen.point_set(out_name, slot, "_r") + "; "
                         + gen.point_set(out_name + "#n", slot, n_out))
            return
        lines.append(f"{pad}_C[0] += 1; {out_name}.data[{gen.point_slot(plan, list(node.domain))}] = "
                     f"_Padded({kname}({', '.join([static] + leaves)}), {n_out}, {info.out_axis})")
        return
    gen.kernel_launch(node, opdef, specs, kname, statics, leaves, pad, lines)
