"""Kernel launchers (paper §6), generated once per executable as Python source.

For every scheduled node `k` the generator writes `def _L<k>(<steps>):`, which
evaluates the node's dependence expressions at the point (inlined from
`tidal.symbolic.compile_source`), reads its operands from their stores,
runs the kernel and writes the results into the node's store. The code is
specialised to each store's layout (a dict lookup for a point store, a view
for a NumPy block store, `start mod W` for a window store) so a launch does no
interpretation. With JAX, a node whose shapes are static runs as one jitted
kernel (jax_backend.jit_kernel) that reads array stores lazily and writes its
array store in place, a node with a point-varying axis as a padded kernel
(padded.py) where it can; anything else (UDFs, the remaining point-varying
shapes, strided slices) runs on the host with NumPy. 64-bit values are on the device like the others:
the executable builds and runs its kernels inside `jax.enable_x64(True)`.
An indexing op's kernel also folds the range of its indices into `_IX[k]`,
which the executable checks when the run ends (a jitted kernel cannot
raise).

A launcher runs only at the points the schedule gives it, which are the
points an output or a UDF needs (lowering/needed.py), so a kernel's error
there is the program's: a `KernelError` becomes an `EvaluationError` naming
the op's location and the point, as the reference reports it
(`launch_error`), and a padded reduction that has no value on an empty input
(`max`, ...) checks its padded axes before launching (`empty_guard`) instead
of returning the identity it pads with.

Names in the generated module: `_S<k>` / `_S<k>_<r>` stores, `_K<k>` jitted
kernels, `_F<k>` op functions, `_V<k>` constants, bounds by their own names;
`_C` counts the run's jitted launches, host ops and device<->host copies
(`_d2h`, `_h2d`) for `ScheduledProgram.stats()`.
"""
from __future__ import annotations

from tidal.lowering.graph import Graph, Node
from tidal.lowering.storage import StorePlan
from tidal.symbolic import compile_source, parse, provably_at_most, simplify, slice_size

from ..backends import Backend
from .opdecode import OpDef
from .stores import dense_axes

__all__ = ["LauncherGen", "store_name"]


def store_name(node: int, result: int = 0) -> str:
    return f"_S{node}" if result == 0 else f"_S{node}_{result}"


def _index(parts: list[str]) -> str:
    return "()" if not parts else ", ".join(parts) + ","


def _has_steps(e) -> bool:
    return any(s.role == "step" for s in e.free_symbols)


class LauncherGen:
    def __init__(self, graph: Graph, plans: dict[tuple[int, int], StorePlan], opdefs: dict[int, OpDef],
                 backend: Backend):
        self.graph, self.plans, self.opdefs, self.backend = graph, plans, opdefs, backend
        self.kernels: dict[str, tuple] = {}      # name -> (opdef, operand specs, out spec, fn)
        self.host_nodes: set[int] = set()         # nodes launched on the host
        self.index_checked: set[int] = set()      # jitted indexing ops (accumulators _IX[k])
        self._tmp = 0
        # Traced mode (traced.py): the same launches written as a function of a
        # dict B of store buffers, for a loop run inside one XLA program.
        self.traced = False
        self.used: set[str] = set()               # traced mode: the keys of B a launcher uses
        self.untraced: dict[int, str] = {}         # node -> why it cannot run inside an XLA loop
        self.guards: dict[int, tuple] = {}         # traced empty-reduction checks (flags _EG<k>)
        # traced mode: the launch being written reads a point-varying size with no
        # static bound (a causal prefix k[0:t + 1]): (its valid length, the
        # capacities of the buffer axes it is gathered from); see dynamic_cap
        # and whether one of them slices a non-leading axis of its buffer (traced.capacities)
        self.dyn: list | None = None
        from .jax_backend import mask_identity
        from .padded import plan_padded
        self.padded = plan_padded(graph, plans, opdefs, mask_identity) \
            if backend.jit_kernels else {}           # node -> PaddedNode (padded.py)

    # -- expressions ---------------------------------------------------------------------
    def code(self, e, node: Node) -> str:
        params = list(node.domain) + self.graph.bounds
        src = compile_source(simplify(e), params, functional=self.traced)
        body = "(" + src.split(":", 1)[1].strip() + ")"
        return body.replace("_min(", "_tmin(").replace("_max(", "_tmax(") if self.traced else body

    def tmp(self, hint: str) -> str:
        self._tmp += 1
        return f"_{hint}{self._tmp}"

    def plan(self, node: int, result: int = 0) -> StorePlan:
        return self.plans[(node, result)]

    def slot(self, plan: StorePlan, axis: int, c: str) -> str:
        a = plan.axes[axis]
        if a.mode == "block":
            return c
        return "0" if a.size == 1 else f"{c} % {a.size}"

    def point_slot(self, plan: StorePlan, coords: list[str]) -> str:
        """A point store's slot of `coords`; traced, the slot in its dense
        array, which has no ring axes of size 1 (stores.dense_axes)."""
        axes = dense_axes(plan) if self.traced else range(len(coords))
        return "(" + "".join(f"{self.slot(plan, i, coords[i])}, " for i in axes) + ")"

    # -- store references (plain: the store objects; traced: the buffers in B) -------------
    def not_traced(self, what: str) -> None:
        if self.traced:
            from .traced import NotTraceable
            raise NotTraceable(what)

    def key(self, name: str) -> str:
        self.used.add(name)
        return f"_B[{name!r}]"

    def buf(self, name: str) -> str:
        return self.key(name) if self.traced else f"{name}.buf"

    def ix(self, k: int) -> str:
        return self.key(f"_IX{k}") if self.traced else f"_IX[{k}]"

    def point_get(self, name: str, slot: str) -> str:
        return f"_getp({self.key(name)}, {slot})" if self.traced else f"{name}.data[{slot}]"

    def bucket(self, n: str, size) -> str:
        """The capacity a point-varying size `n` (symbolic: `size`) is read at:
        `_kbucket(n)`, at most `static_bucket(size)`. Traced (an XLA loop needs it
        static), the least power of two that `size` provably never exceeds
        (`static_bucket`; a window of 256 keys: 256); a size with no such bound
        cannot be traced here (a padded kernel's causal prefix: `dynamic_cap`)."""
        cap = static_bucket(size)
        if not self.traced:   # never above the static capacity: a traced loop packs it at that
            return f"_kbucket({n})" if cap is None else f"min(_kbucket({n}), {cap})"
        if cap is None:
            self.not_traced("a point-varying size with no static bound")
        return str(cap)

    def dynamic_cap(self, n: str, limit: str, strided: bool = False) -> str:
        """Traced: the capacity `_cap` of a point-varying size `n` with no
        static bound, read from a buffer axis of `limit` elements. The launch
        then runs under `_capswitch` (traced.py): one branch per capacity up to
        the buffer's, the least that holds `n` taken at each point, so the
        loop compiles once and a step costs O(n), not O(buffer). Every varying
        size of one launch has the same valid length (padded.py), so they
        share the capacity."""
        if self.dyn is None:
            self.dyn = [n, [], False]
        self.dyn[1].append(limit)
        self.dyn[2] = self.dyn[2] or strided
        return "_cap"

    def guard(self, k: int, what: tuple, empty: str) -> list[str]:
        """Traced: an empty-reduction check (`empty`: its condition) folded into
        the flag `_EG<k>` of B, raised when the run ends (`what` says how)."""
        self.guards[k] = what
        flag = self.key(f"_EG{k}")
        point = "(" + "".join(s + ", " for s in self.graph.nodes[k].domain) + ")"
        return [f"{flag} = _empty_seen({flag}, {empty}, {point})"]

    def layout(self, plan: StorePlan) -> tuple | None:
        """The physical axis order of an array store's buffer on this backend
        (StorePlan.layout; NumPy buffers keep the logical order)."""
        return plan.layout if self.backend.device_arrays and plan.kind != "point" else None

    def caps(self, name: str, axis: int, plan: StorePlan) -> str:
        """The capacity of logical axis `axis` of an array store's buffer."""
        if not self.traced:
            return f"{name}.caps[{axis}]"
        layout = self.layout(plan)
        return f"{self.key(name)}.shape[{axis if layout is None else layout.index(axis)}]"

    def point_set(self, name: str, slot: str, value: str) -> str:
        if self.traced:
            return f"{self.key(name)} = _setp({self.key(name)}, {slot}, {value})"
        return f"{name}.data[{slot}] = {value}"

    def packable(self, k: int, r: int) -> bool:
        """Whether a point store of (k, r) packs into a dense array inside a traced
        loop: its per-point shape is the same at every point (literal, or made
        of bounds only, e.g. a vectorized value's (T, 64): fixed in a run)."""
        shapes = self.graph.nodes[k].result_shapes
        if self.plans[(k, r)].static_shape or r >= len(shapes):   # (an output: its plan says)
            return self.plans[(k, r)].static_shape
        return not any(_has_steps(parse(t, dims=self.graph.dims)) for t in shapes[r])

    # -- reads ---------------------------------------------------------------------------
    def host_read(self, node: Node, edge, lines: list[str]) -> str:
        """A host expression for the operand's value (NumPy, or jax for point stores)."""
        plan = self.plan(edge.source, edge.result)
        name = store_name(edge.source, edge.result)
        comps = list(edge.dep)
        points = all(c.kind != "slice" for c in comps)
        if plan.kind == "point" and points:
            if not self.packable(edge.source, edge.result):
                self.not_traced("a point store of varying shape")
            value = self.point_get(name, self.point_slot(plan, [self.code(c, node) for c in comps]))
            if edge.source in self.padded and self.padded[edge.source].out_axis is not None:
                self.not_traced("a padded value read on the host")
            padded = edge.source in self.padded and self.padded[edge.source].out_axis is not None
            return f"_unpad({value})" if padded else value
        self.not_traced("a host read of a slice or an array store")
        if plan.kind != "point" and not self.backend.device_arrays and all(
                c.kind != "slice" or c.step == 1 for c in comps):
            idx = []
            for axis, c in enumerate(comps):
                if c.kind != "slice":
                    idx.append(self.slot(plan, axis, self.code(c, node)))
                elif plan.axes[axis].mode == "block":
                    idx.append(f"{self.code(c.start, node)}:{self.code(c.stop, node)}")
                else:
                    a, w = self.tmp("a"), self.tmp("w")
                    lines.append(f"{a} = {self.code(c.start, node)}; {w} = {a} % {plan.axes[axis].size}")
                    idx.append(f"{w}:{w} + _max(0, {self.code(c.stop, node)} - {a})")
            return f"{name}.buf[{_index(idx)}]"
        parts = []
        for c in comps:
            if c.kind == "slice":
                step = f", {c.step}" if c.step != 1 else ""
                parts.append(f"_slice({self.code(c.start, node)}, {self.code(c.stop, node)}{step})")
            else:
                parts.append(self.code(c, node))
        src = self.graph.nodes[edge.source]
        dtype = f"_DT[{src.result_dtypes[edge.result]!r}]"
        return f"{name}.read(({''.join(p + ', ' for p in parts)}), _shape{edge.source}_{edge.result}, {dtype})"

    def lazy_operand(self, node: Node, edge, opdef: OpDef, out_store: str | None, identity,
                     leaves: list, statics: list, lines: list, sizes: list | None = None):
        """Appends the leaves/static sizes of a jitted read; returns its spec
        or None when the read cannot be jitted. `sizes` receives, per axis
        the kernel keeps, its size at the point (a host expression) and
        whether it is padded ("varying")."""
        sizes = [] if sizes is None else sizes
        from .jax_backend import LazyOperand
        plan = self.plan(edge.source, edge.result)
        name = store_name(edge.source, edge.result)
        comps = list(edge.dep)
        src = self.graph.nodes[edge.source]
        if plan.kind == "point":
            if any(c.kind == "slice" for c in comps):
                return None
            value = self.host_read(node, edge, lines)
            leaves.append(value if self.traced else f"_h2d({value})")  # counts NumPy values
            return LazyOperand("value")
        if not plan.static_shape or any(c.kind == "slice" and c.step != 1 for c in comps) \
                or not all(s.isdigit() for s in src.result_shapes[edge.result]):
            return None   # (an input's shape of bounds, (T, 8): read whole, not lazily)
        shape = tuple(int(s) for s in src.result_shapes[edge.result])
        spec = LazyOperand("lazy", [], shape, self_read=(name == out_store), identity=identity,
                           layout=self.layout(plan))
        if not spec.self_read:
            leaves.append(self.buf(name))
        masks = []
        for axis, c in enumerate(comps):
            mode = plan.axes[axis].mode
            if c.kind != "slice":
                spec.axes.append("point")
                leaves.append(self.slot(plan, axis, self.code(c, node)))
                continue
            size = slice_size(c)
            a = self.tmp("a")
            lines.append(f"{a} = {self.code(c.start, node)}")
            start = a if mode == "block" else f"{a} % {plan.axes[axis].size}"
            if not _has_steps(size):
                spec.axes.append("fixed")
                leaves.append(start)
                statics.append(self.code(size, node))
                sizes.append((statics[-1], False))
                continue
            if identity is None:
                return None
            n, s, b, st = self.tmp("n"), self.tmp("s"), self.tmp("b"), self.tmp("st")
            mx, mn = ("_tmax", "_tmin") if self.traced else ("_max", "_min")
            cap = self.caps(name, axis, plan)
            lines.append(f"{n} = {mx}(0, {self.code(c.stop, node)} - {a}); {s} = {start}; "
                         f"{b} = _min({self.bucket(n, size)}, {cap}); {st} = {mn}({s}, {cap} - {b})")
            spec.axes.append("varying")
            leaves.append(st)
            masks += [f"{s} - {st}", n]
            statics.append(b)
            sizes.append((n, True))
        leaves += masks
        if not self.maskable(opdef, node, edge, spec):
            return None
        return spec

    def maskable(self, opdef: OpDef, node: Node, edge, spec) -> bool:
        """Whether padding the varying axes cannot change the result."""
        kept = [ax for ax in spec.axes if ax != "point"]
        varying = [j for j, ax in enumerate(kept) if ax == "varying"]
        if not varying:
            return True
        ndim = len(kept) + len(spec.shape)
        if opdef.kind == "reduce":
            dims = [d % ndim for d in opdef.attrs["dims"]]
            return all(j in dims for j in varying)
        if opdef.kind == "matmul":
            contracted = ndim - 1 if edge.number == 0 else (0 if ndim == 1 else ndim - 2)
            return varying == [contracted]
        return False

    # -- writes --------------------------------------------------------------------------
    def host_write(self, node: Node, result: int, value: str, lines: list[str], pad: str,
                   owned: bool = False) -> None:
        """Stores `value` (code) as the node's result at its point. `owned`: the value is a
        buffer no store writes again (a constant's, a param's): kept by reference."""
        plan = self.plan(node.index, result)
        name = store_name(node.index, result)
        steps = list(node.domain)
        if plan.kind == "point":
            # Never keep a view of a buffer that is written again (NumPy stores
            # exist on every backend: the jax one keeps host ops' results there).
            if not self.packable(node.index, result):
                self.not_traced("a point store of varying shape")
            if not self.traced and not owned:
                value = f"_own({value})"
            lines.append(pad + self.point_set(name, self.point_slot(plan, steps), value))
            return
        self.not_traced("a host write into an array store")
        if not self.backend.device_arrays:
            idx = [self.slot(plan, i, s) for i, s in enumerate(steps)]
            lines.append(f"{pad}{name}.buf[{_index(idx)}] = _v = {value}")
            for i, a in enumerate(plan.axes):
                if a.mode == "window":
                    mirror = list(idx)
                    mirror[i] = f"{idx[i]} + {a.size}"
                    lines.append(f"{pad}{name}.buf[{_index(mirror)}] = _v")
        else:
            lines.append(f"{pad}{name}.write(({''.join(s + ', ' for s in steps)}), _h2d({value}))")

    # -- one node ------------------------------------------------------------------------
    def scalars(self, opdef: OpDef, node: Node) -> str:
        items = [f"{n!r}: {self.code(e, node)}" for n, e in opdef.scalars]
        return "{" + ", ".join(items) + "}"

    def jit_call(self, node: Node, opdef: OpDef, edges: list, kname: str, pad: str, lines: list) -> bool:
        """Emits a jitted launch of `edges` through kernel `kname`; False if impossible."""
        from .jax_backend import mask_identity
        if not self.backend.jit_kernels or not opdef.jit_ok or len(node.result_shapes or [[]]) != 1:
            return False
        plan = self.plan(node.index, 0)
        if not plan.static_shape and (plan.kind != "point" or any(
                _has_steps(parse(t, dims=self.graph.dims)) for t in (node.result_shapes or [[]])[0])):
            return False   # a shape that depends on bounds only is fixed in a run: jitted into a point store
        out_name = store_name(node.index)
        inplace = plan.kind != "point"
        identity = mask_identity(opdef)
        leaves, statics, pre = [], [], []
        specs = []
        for edge in edges:
            sizes: list = []
            spec = self.lazy_operand(node, edge, opdef, out_name if inplace else None, identity,
                                     leaves, statics, pre, sizes)
            if spec is None:
                return False
            specs.append(spec)
            pre += self.empty_guard(node, opdef, spec, sizes)
        leaves += [self.code(e, node) for n, e in opdef.scalars if n in opdef.dynamic_scalars]
        statics += [self.code(e, node) for n, e in opdef.scalars if n in opdef.static_scalars]
        lines += [pad + p for p in pre]
        self.kernel_launch(node, opdef, specs, kname, statics, leaves, pad, lines)
        return True

    def value_call(self, node: Node, opdef: OpDef, edge, kname: str, pad: str, lines: list) -> str | None:
        """Emits a jitted read of `edge`'s operand as a value (a traced merge
        branch, selected before one write); its variable, or None if impossible."""
        from .jax_backend import OutSpec, mask_identity
        if not self.backend.jit_kernels or not opdef.jit_ok or len(node.result_shapes or [[]]) != 1 \
                or not self.plan(node.index, 0).static_shape:
            return None
        leaves, statics, pre, sizes = [], [], [], []
        spec = self.lazy_operand(node, edge, opdef, None, mask_identity(opdef), leaves, statics, pre, sizes)
        if spec is None or any(varying for _, varying in sizes):
            return None
        self.kernels[kname] = (opdef, [spec], OutSpec(False))
        lines += [pad + p for p in pre]
        var = self.tmp("v")
        static = "(" + "".join(s + ", " for s in statics) + ")"
        lines.append(f"{pad}{var} = {kname}({', '.join([static] + leaves)})")
        return var

    def kernel_launch(self, node: Node, opdef: OpDef, specs: list, kname: str, statics: list,
                      leaves: list, pad: str, lines: list) -> None:
        """Registers kernel `kname` and emits its launch writing the node's
        store: in place into an array store (donated buffer + slots), or
        the returned value into a point store."""
        from .jax_backend import OutSpec
        plan = self.plan(node.index, 0)
        out_name = store_name(node.index)
        inplace = plan.kind != "point"
        window = next(((i, a.size) for i, a in enumerate(plan.axes) if a.mode == "window"), (None, 0))
        self.kernels[kname] = (opdef, specs, OutSpec(inplace, len(plan.axes), window[0], window[1],
                                                     self.layout(plan) if inplace else None))
        static = "(" + "".join(s + ", " for s in statics) + ")"
        # an indexing op also folds its indices' range into _IX[k] (checked when the run ends)
        checked = "index_check" in opdef.attrs
        if checked:
            self.index_checked.add(node.index)
            leaves = leaves + [self.ix(node.index)]
        also = f", {self.ix(node.index)}" if checked else ""
        count = "" if self.traced else "_C[0] += 1; "
        if self.dyn is not None:   # one branch per capacity (dynamic_cap): the value, then the write
            if inplace:
                self.not_traced("a point-varying size with no static bound written in place")
            if not self.packable(node.index, 0):
                self.not_traced("a point store of varying shape")
            n, limits, strided = self.dyn
            self.dyn = None
            call = f"lambda _cap: {kname}({', '.join([static] + leaves)})" + (", True" if strided else "")
            lines.append(f"{pad}_r{also} = _capswitch({n}, ({''.join(x + ', ' for x in limits)}), {call}); "
                         + self.point_set(out_name, self.point_slot(plan, list(node.domain)), "_r"))
            return
        if inplace:
            slots = [self.slot(plan, i, s) for i, s in enumerate(node.domain)]
            args = ", ".join([static, self.buf(out_name)] + slots + leaves)
            lines.append(f"{pad}{count}{self.buf(out_name)}{also} = {kname}({args})")
        else:
            if not self.packable(node.index, 0):
                self.not_traced("a point store of varying shape")
            args = ", ".join([static] + leaves)
            lines.append(f"{pad}{count}_r{also} = {kname}({args}); "
                         + self.point_set(out_name, self.point_slot(plan, list(node.domain)), "_r"))

    def empty_guard(self, node: Node, opdef: OpDef, spec, sizes: list) -> list[str]:
        """A padded (masked) axis of a reduction that has no value on an
        empty input (max, min, argmax, ...: not sum, prod, any, all) must not
        be empty: the mask would return the identity (-inf for max) where the
        reference fails. The scheduler runs only needed points, so an empty
        one is an error: the host kernel raises it on an empty array of the
        operand's shape (the reference's message)."""
        if opdef.kind != "reduce" or opdef.attrs["reduce_kind"] in EMPTY_OK:
            return []
        padded = [n for n, varying in sizes if varying]
        if not padded:
            return []
        if self.traced:
            return self.guard(node.index, ("node", opdef.attrs["reduce_kind"]),
                              " | ".join(f"({n} == 0)" for n in padded))
        shape = "(" + "".join(f"{n}, " for n, _ in sizes) + "".join(f"{d}, " for d in spec.shape) + ")"
        test = " or ".join(f"{n} == 0" for n in padded)
        return [f"if {test}:",
                f"    from {__name__} import empty_reduction",
                f"    empty_reduction(_F{node.index}, {shape}, {opdef.attrs['reduce_kind']!r})"]

    def host_call(self, node: Node, opdef: OpDef, edges: list, pad: str, lines: list) -> None:
        self.not_traced(f"a host op ({opdef.kind})")
        self.host_nodes.add(node.index)
        lines.append(f"{pad}_C[1] += 1")
        pre: list[str] = []
        args = [self.host_read(node, e, pre) for e in edges]
        lines += [pad + p for p in pre]
        if self.backend.device_arrays:
            args = [f"_d2h({a})" for a in args]
        if opdef.kind == "udf":
            point = "(" + "".join(s + ", " for s in node.domain) + ")"
            lines.append(f"{pad}_r = _udf({node.index}, {point}, [{', '.join(args)}])")
        else:
            lines.append(f"{pad}_r = _F{node.index}(_np, [{', '.join(args)}], {self.scalars(opdef, node)})")
        for r in range(len(node.result_shapes)):   # none for a sink UDF
            self.host_write(node, r, f"_r[{r}]", lines, pad)

    def move(self, node: Node, opdef: OpDef, edge, kname: str, pad: str, lines: list) -> None:
        """A merge branch or an output: the operand's value becomes the node's."""
        src_plan, plan = self.plan(edge.source, edge.result), self.plan(node.index, 0)
        if src_plan.kind == "point" and plan.kind == "point" and all(c.kind != "slice" for c in edge.dep):
            pre: list[str] = []
            value = self.host_read(node, edge, pre)
            lines += [pad + p for p in pre]
            self.host_write(node, 0, value, lines, pad)
            return
        if self.jit_call(node, opdef, [edge], kname, pad, lines):
            return
        pre = []
        value = self.host_read(node, edge, pre)
        lines += [pad + p for p in pre]
        self.host_write(node, 0, value, lines, pad)

    def launch(self, node: Node, opdef: OpDef, pad: str, lines: list) -> None:
        """An output's move, a padded kernel, a jitted kernel or a host op."""
        k = node.index
        if opdef.kind == "output":
            self.move(node, opdef, node.edges[0], f"_K{k}", pad, lines)
        elif k in self.padded:
            from .padded import padded_call
            padded_call(self, node, opdef, self.padded[k], f"_K{k}", pad, lines)
        elif not self.jit_call(node, opdef, node.edges, f"_K{k}", pad, lines):
            self.host_call(node, opdef, node.edges, pad, lines)

    def launcher(self, node: Node, opdef: OpDef) -> str:
        k = node.index
        steps = ", ".join(node.domain)
        lines = [f"def _L{k}({steps}):", f"    # {node.label} at {node.location}"]
        pad = "    "
        if opdef.kind in ("constant", "param"):
            self.host_write(node, 0, f"_V{k}", lines, pad, owned=True)
        elif opdef.kind == "merge":
            for b, edge in enumerate(node.edges):
                cond = self.code(edge.cond, node)
                lines.append(f"    {'if' if b == 0 else 'elif'} {cond}:")
                if (edge.source, edge.result) not in self.plans:  # a branch never taken
                    lines.append(f"        raise RuntimeError('branch {b} of {node.label} is never taken')")
                    continue
                self.move(node, opdef, edge, f"_K{k}_{b}", "        ", lines)
            lines.append("    else:")
            lines.append(f"        raise RuntimeError('no branch of {node.label} holds')")
        else:
            self.launch(node, opdef, pad, lines)
        point = "(" + "".join(s + ", " for s in node.domain) + ")"
        lines[2:] = (["    try:"] + ["    " + line for line in lines[2:]] +
                     ["    except Exception as _e:",
                      f"        from {__name__} import launch_error",
                      f"        launch_error(_e, {node.location!r}, {node.name!r}, {tuple(node.domain)!r}, {point})",
                      "        raise"])
        return "\n".join(lines) + "\n"


def static_bucket(size, limit: int = 1 << 16) -> int | None:
    """The least power of two that the symbolic size provably never exceeds
    (None: none up to `limit`). Not rounded up to LEAST_KERNEL_BUCKET: a
    static capacity compiles once whatever it is, and the kernels compute on
    all of it (an 8-step return window at 32 made its cumsum 16x the work)."""
    if size is None:
        return None
    cap = 1
    while cap <= limit:
        if provably_at_most(size, cap):
            return cap
        cap *= 2
    return None


# Reductions with a value on an empty input (their identity); the others fail.
EMPTY_OK = ("sum", "prod", "any", "all")


def launch_error(error: Exception, location: str, op_name: str, steps: tuple, point: tuple) -> None:
    """Called by a launcher whose kernel raised `error`: a kernel's complaint
    (KernelError) becomes an EvaluationError naming the op's location, the op
    and the point, as the reference interpreter reports it; anything else
    goes on unchanged."""
    from types import SimpleNamespace

    from ..kernels import KernelError
    from ..reference_graph import EvaluationError
    if isinstance(error, KernelError):   # from an island's body op: that op's location
        node = SimpleNamespace(loc=getattr(error, "location", location), op_name=getattr(error, "op_name", op_name),
                               steps=steps)
        raise EvaluationError(f"{type(error).__name__}: {error}", node, point) from None


def empty_reduction(fn, shape: tuple, kind: str) -> None:
    """Raises the host kernel's error for a reduction over an empty axis
    (`fn`: the op's NumPy function, `shape`: the operand's at the point)."""
    import numpy as np

    from ..kernels import KernelError
    fn(np, [np.zeros(shape, dtype=np.float32)], {})
    raise KernelError(f"reduce {kind} over an empty dimension (shape {shape})")
