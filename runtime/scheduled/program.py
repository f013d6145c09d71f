"""`compile_sdg`: schedule, lower and generate the host program of an SDG, once.

    exe = compile_sdg(module_or_text, udfs={"env.step": step})
    out = exe.run({"T": 10}, {"x": x})      # same conventions as reference.evaluate
    print(exe.schedule())                    # the loop nest, readable

Compilation: `schedule_graph` (isl) -> `sdg-lower-to-scf` (a func.func over the
bounds) -> store plans verified against the schedule (`plan_storage`) ->
launchers and host program as Python source, compiled once. The bounds are
arguments of the program, so one executable runs with any bounds; a run
allocates the stores for its bounds, loads the inputs and calls the program.
"""
from __future__ import annotations

import contextlib

import numpy as np
from mlir import ir

from tidal import config
from tidal.lowering.graph import read_graph
from tidal.lowering.lifetimes import lifetimes, memory_events
from tidal.lowering.loop_ast import format_loop_nest
from tidal.lowering.memory_plan import plan_memory
from tidal.lowering.schedule import ScheduleError, ScheduleOptions, options_for
from tidal.lowering.sdg_lower_to_scf import lower_graph_op
from tidal.lowering.sdg_schedule import SdgSchedule
from tidal.lowering.stopping import graph_stops
from tidal.lowering.storage import AxisPlan, StorePlan, plan_storage
from tidal.lowering.to_scf import run_function_name
from tidal.passes.base import pipeline_element
from tidal.passes.stages import CompileStages, module_snapshot
from tidal.symbolic import compile_expr, evaluate, parse, slice_size

from .. import backends
from ..backends import Backend
from ..reference import load_graph
from ..reference_graph import EvaluationError, format_point
from .allocation import StoreAllocator
from .hostgen import HELPERS, host_source
from .launchers import LauncherGen, store_name
from ..run_checks import check_bounds, check_udf_result
from .memory import MemoryTracker
from .swapping import make_swapper, start_swapper
from .opdecode import DTYPES, decode
from .stores import ArrayStore, Padded, kernel_bucket, unpad
from .packing import DenseSlots
from .parameters import Binding, ParameterTable

__all__ = ["compile_sdg", "ScheduledProgram", "USER_ERRORS"]

# Errors that are about the user's program, not bugs of a compile stage.
USER_ERRORS = (ScheduleError, EvaluationError)


def compile_sdg(module, udfs=None, *, backend: "str | Backend" = "jax", graph: str | None = None,
                options: ScheduleOptions | None = None, stages: CompileStages | None = None,
                xla_loops: bool | None = None, device_memory: int | None = None) -> "ScheduledProgram":
    """Compiles the `sdg.graph` (or `rt.program`) of `module` (an ir.Module or
    text; the caller's module is not modified). Raises `ScheduleError` for an
    unschedulable program. `backend`: a scheduled backend (tidal.runtime.backends),
    or its name. `options`: isl's (by default the graph's,
    tidal.lowering.schedule.options_for). `xla_loops` (jax): run each loop whose body JAX can
    trace as one `lax.fori_loop` (traced.py) instead of a Python loop; by
    default on, off with TIDAL_XLA_LOOPS=off (=strict: a failed trace raises
    instead of falling back to the Python loop). Each step is a named stage recorded in `stages`
    (tidal.passes.stages; `exe.stages`): sdg-schedule, schedule,
    sdg-lower-to-scf, storage, host. `device_memory` (jax): a budget in bytes
    for the stores on the device, kept by swapping (swapping.py; loops then
    run in Python)."""
    backend = backends.get(backend)
    if not backend.scheduled:
        raise backends.UnknownBackend(f"the {backend} backend is not compiled: use one of "
                                      f"{', '.join(backends.names('scheduled'))}")
    if device_memory is not None and (not backend.memory_budget or int(device_memory) <= 0):
        raise ValueError(f"device_memory needs a backend with a device memory budget (the {backend} backend has "
                         "none) and a positive number of bytes")
    if not isinstance(module, str):
        root = module.operation if hasattr(module, "operation") else module
        module = root.clone()
    root, graph_op = load_graph(module, graph)
    stages = stages if stages is not None else CompileStages()
    stages.allow(*USER_ERRORS)
    if xla_loops is None:
        xla_loops = config.xla_loops.value != "off"
    return ScheduledProgram(root, graph_op, dict(udfs or {}), backend, options, stages,
                            xla_loops and backend.traces_loops and device_memory is None, device_memory)


class ScheduledProgram:
    """An SDG compiled for a scheduled backend (`compile_sdg`): its schedule,
    store plans, memory plan and generated host program, loaded once; `run`
    executes it for any bounds, its `StoreAllocator` creating and freeing the
    run's stores."""

    def __init__(self, root, graph_op, udfs, backend, options, stages, xla_loops=False, device_memory=None):
        self.root, self.udfs, self.backend = root, udfs, backend
        self.device_memory = None if device_memory is None else int(device_memory)
        self.xla_loops = xla_loops
        self.loop_fallbacks: dict[int, str] = {}   # loop -> why its trace failed (runs in Python)
        self.stages = stages
        self._udf_shapes: dict[int, list] = {}
        self._compile_counts: dict[str, int] = {}   # kernel -> traces, this executable's own
        self._inlined = 0                            # of those, traces inside a loop's trace
        self._counts = [0, 0, 0, 0]   # last run: jitted launches, host ops, device->host, host->device
        self._store_bytes = 0
        self._bound_values: tuple = ()
        with root.context:
            self.graph = graph = read_graph(graph_op)
            _check_names(graph)
            # sdg.stop_when: node -> the bound it lowers (stopping.py)
            stops = graph_stops(graph)
            self.stop_bounds = {s.index: s.bound for s in stops}
            self.stop_dependent = set().union(*(s.dependent for s in stops)) if stops else set()
            self.stop_names = set().union(*(s.names for s in stops)) if stops else set()   # and derived bounds
            options = options or options_for(graph)   # none given: the graph's (tiles: not whole-component)

            schedule_pass = SdgSchedule.with_options(options)   # the registered pass, as tidal-opt runs it
            self.sched = stages.run("sdg-schedule", lambda: schedule_pass.schedule(graph_op, graph),
                                    text=lambda _: module_snapshot(root), suffix=".mlir",
                                    pipeline=f"builtin.module({pipeline_element(schedule_pass)})")
            stages.run("schedule", lambda: None, text=lambda _: self.schedule_text, suffix=".txt")  # printed if asked
            stages.run("sdg-lower-to-scf", lambda: lower_graph_op(graph_op, self.sched), text=lambda _: module_snapshot(root),
                       suffix=".mlir", pipeline="builtin.module(sdg-lower-to-scf)")
            self.plans = stages.run("storage", lambda: plan_storage(self.sched), text=self.format_plans, suffix=".txt")
            self.statements = self.sched.statements()
            # values allocated when their lifetime starts (the lowered program's `_alloc(k)`)
            self.late = {k for allocs, _ in memory_events(graph, self.sched.loop_tree(), self.statements).values()
                         for k in allocs}
            # the array stores' storages, symbolic, reused across lifetimes (memory_plan.py)
            self.mem_plan = stages.run("memory-plan", lambda: plan_memory(
                graph, self.plans, lifetimes(graph, self.sched.loop_tree(), self.statements)), text=str, suffix=".txt")
            self.source, self.host_program = stages.run("host", lambda: self._generate(graph), text=lambda r: r[0],
                                              suffix=".py")
            self.params = ParameterTable(graph, self.opdefs)
        self._installed: Binding | None = None     # the binding the namespace's `_V<k>` point at
        stages.run("load", self._load, text=lambda _: "\n".join(self.kernel_names) + "\n", suffix=".txt")

    def _load(self) -> None:
        """The host program compiled and its namespace filled (kernels wrapped for jit)."""
        self.allocator = StoreAllocator(self.graph, self.plans, self.mem_plan, self.late, self.backend,
                                        self.device_memory, self._gen.padded, self._counts)
        with self._device_scope():
            self.ns = self.allocator.ns = self._namespace(self._gen)
        exec(compile(self.source, f"<tidal program @{self.graph.name}>", "exec"), self.ns)  # noqa: S102
        self._program = self.ns["_program"]

    def _generate(self, graph):
        """The launchers and the host program, as Python source."""
        self.opdefs = {k: decode(graph.nodes[k], graph) for k in self.statements}
        for kind in ("sdg.input", "sdg.output"):
            for k in self.statements:
                if graph.nodes[k].name == kind:
                    self.plans[(k, 0)] = self._whole_plan(graph.nodes[k])
        gen = LauncherGen(graph, self.plans, self.opdefs, self.backend)
        inputs = {k for k in self.statements if graph.nodes[k].name == "sdg.input"}
        from .stopping import stop_launcher
        launchers = [stop_launcher(gen, graph.nodes[k], self.stop_bounds[k]) if k in self.stop_bounds
                     else gen.launcher(graph.nodes[k], self.opdefs[k]) for k in self.statements
                     if k not in inputs]
        plain, self.bound_names = host_source(self.root, run_function_name(graph), inputs,
                                              guard=self.device_memory is not None, stops=self.stop_bounds,
                                              dynamic=self.stop_names)
        program, traceable = plain, {}
        if self.xla_loops:
            from .traced import traced_launcher
            for k in self.statements:
                if k not in inputs:
                    traced = traced_launcher(gen, graph.nodes[k], self.opdefs[k])
                    if traced is not None:
                        launchers.append(traced[0])
                        traceable[k] = traced[1:]
            program, _ = host_source(self.root, run_function_name(graph), inputs, traceable,
                                     stops=self.stop_bounds, dynamic=self.stop_names)
        self.host_nodes = sorted(gen.host_nodes)
        self.index_checked = sorted(gen.index_checked)
        self.padded_nodes = sorted(gen.padded)      # run as padded kernels (padded.py)
        self._gen = gen
        self.xla_loop_count = program.count("_jit_loop(")
        return "\n".join(launchers) + "\n" + program, plain

    # -- compilation helpers ------------------------------------------------------------
    def _whole_plan(self, node) -> StorePlan:
        """Inputs and outputs keep every point: one block per domain axis."""
        if node.name == "sdg.input":
            shape, static = node.result_shapes[0], True
        else:
            edge = node.edges[0]
            shape = list(self.graph.nodes[edge.source].result_shapes[edge.result])
            static = all(c.kind != "slice" or not any(s.role == "step" for s in slice_size(c).free_symbols)
                         for c in edge.dep)
        static = static and all(not any(s.role == "step" for s in parse(t).free_symbols) for t in shape)
        static = static and "cond" not in node.attrs
        axes = [AxisPlan(s, "block") for s in node.domain]
        kind = "block" if static else "point"
        if static and self.backend.jit_kernels and node.name == "sdg.output":
            # A point-stored value is kept by reference and stacked once at the
            # end (about 1.5 us a point) instead of a jitted in-place write per point.
            edge = node.edges[0]
            source = self.plans.get((edge.source, edge.result))
            if source is not None and source.kind == "point" and all(c.kind != "slice" for c in edge.dep):
                kind = "point"
        return StorePlan(node.index, 0, kind, axes, static)

    def _user_scope(self):
        """Undoes `_device_scope` for user code (UDFs) called during a run."""
        if not self.backend.device_arrays:
            return contextlib.nullcontext()
        import jax
        return jax.enable_x64(self._user_x64)

    def _device_scope(self):
        """The context kernels are built, traced and run in: with device (JAX)
        arrays, 64-bit types on (`jax.enable_x64(True)`: thread-local, undone
        on exit, so the user's JAX configuration is left alone), so i64
        indices (argmax, symbol values) and f64 programs stay on the device."""
        if not self.backend.device_arrays:
            return contextlib.nullcontext()
        import jax
        self._user_x64 = bool(jax.config.jax_enable_x64)
        return jax.enable_x64(True)

    def _namespace(self, gen: LauncherGen) -> dict:
        ns = dict(HELPERS)
        ns.update(_np=np, _slice=slice, _kbucket=kernel_bucket, _DT={k: np.dtype(v) for k, v in DTYPES.items()},
                  _udf=self._call_udf, _own=_own, _C=self._counts, _Padded=Padded, _unpad=unpad,
                  _d2h=self._device_to_host, _h2d=self._host_to_device, _alloc=self.allocator.alloc, _free=self.allocator.free,
                  _stop=self._stop)
        if self.device_memory is not None:
            self.allocator.swapper = make_swapper(self)
            ns["_G"] = self.allocator.swapper.guard
        for k, d in self.opdefs.items():
            ns[f"_F{k}"] = d.fn
            if d.kind == "constant":
                ns[f"_V{k}"] = d.value
        if self.backend.jit_kernels:
            import jax
            from .jax_backend import jit_kernel, kernel_key
            for k, d in self.opdefs.items():
                if d.kind == "constant" and self.on_device:   # under a budget: on the host
                    ns[f"_V{k}"] = jax.device_put(d.value)
            shared: dict[str, object] = {}   # kernel_key -> jitted: equal kernels compile once
            for name, (opdef, specs, out) in gen.kernels.items():
                key = kernel_key(opdef, specs, out)
                if key not in shared:
                    shared[key] = jit_kernel(f"{self.graph.name}{name}", opdef, specs, out,
                                             counter=self._compile_counts)
                ns[name] = shared[key]
            self.distinct_kernels = len(shared)
        self.kernel_names = sorted(gen.kernels)
        if self.xla_loops:
            from .traced import loop_namespace
            ns.update(loop_namespace())
            ns.update(_run_loop=self._run_loop, _count_trace=self._count_trace)
        return ns

    def _count_trace(self, name: str) -> None:
        from .jax_backend import count_compile
        count_compile(name)
        self._compile_counts[name] = self._compile_counts.get(name, 0) + 1

    def _run_loop(self, n: int, jitted, keys: list, written: list, plain, args: tuple, free: tuple,
                  bound_values: tuple) -> None:
        """Runs traced loop `n` (traced.py) on the run's stores, or its plain
        twin `plain(*free)` if its trace failed (once: then always). `args`:
        its traced arguments (bounds of its loop structure, host values);
        `bound_values`: the bounds its launchers read (its jit key, with the
        buffers' shapes). `written`: the keys it writes (donated, replaced
        by its results); the others it only reads."""
        if n in self.loop_fallbacks:
            return plain(*free)
        from .packing import pack_buffers, unpack_buffers
        stopped = [k for k in written if k.startswith("_DYN")]    # stopped bounds the loop lowers
        if stopped:
            keys = [k for k in keys if k not in stopped]
        read, buffers, zeros = pack_buffers(self.ns, keys, set(written))
        for key in stopped:
            buffers[key] = np.int64(self.ns[key[4:]])
        counts = self._compile_counts
        traces, own = sum(counts.values()), counts.get(f"_loop{n}", 0)
        try:
            buffers = jitted((bound_values, zeros), *args, read, buffers)
            # kernels traced inside the loop's trace are part of its one XLA program
            self._inlined += sum(counts.values()) - traces - (counts.get(f"_loop{n}", 0) - own)
        except Exception as e:   # noqa: BLE001 - a trace JAX refuses: the loop runs in Python
            if config.xla_loops.value == "strict":   # tests: a refused trace is a bug
                raise
            self.loop_fallbacks[n] = f"{type(e).__name__}: {e}"
            return plain(*free)
        self._counts[0] += 1
        lowered = {key[4:]: int(buffers.pop(key)) for key in stopped}
        self._counts[2] += len(lowered)
        unpack_buffers(self.ns, buffers)
        for bound, value in lowered.items():
            self._lower(bound, value)

    def _stop(self, bound: str, t: int, value) -> None:
        """An `sdg.stop_when`'s launcher at step t: where its condition holds, the
        run's `bound` (a global of the host program) becomes t + 1 if that is less."""
        if t + 1 < self.ns[bound]:
            if not isinstance(value, (np.ndarray, np.generic, bool)):
                self._counts[2] += 1
            if bool(np.asarray(value)):
                self._lower(bound, t + 1)

    def _lower(self, bound: str, value: int) -> None:
        """A stop lowered `bound` to `value`: the host program's global, and the
        layouts of the stores made from now on (allocation.py `rebound`)."""
        if value >= self.ns[bound]:
            return
        self.ns[bound] = value
        bounds = dict(self.allocator._run_bounds)
        bounds[bound] = value
        for b, text in self.graph.derived.items():    # bounds derived from it (sdg-tile)
            if text:
                bounds[b] = self.ns[b] = int(evaluate(parse(text), bounds))
        self.sched.check_bounds(bounds)   # what the rest needs exists at these bounds (UncomputableError)
        self.allocator.rebound(bounds, self.stop_dependent)

    def _device_to_host(self, value):
        if not isinstance(value, np.ndarray):
            self._counts[2] += 1
        return np.asarray(value)

    def _host_to_device(self, value):
        if isinstance(value, np.ndarray) or np.isscalar(value):
            self._counts[3] += 1
        return value

    def _call_udf(self, k: int, point: tuple, args: list) -> tuple:
        d = self.opdefs[k]
        callee = d.attrs["callee"]
        fn = self.udfs.get(callee)
        node = self.graph.nodes[k]
        if fn is None:
            raise EvaluationError(f"{node.location}: no UDF registered under '{callee}'")
        if k not in self._udf_shapes:  # per-point shapes, compiled on first use
            params = list(node.domain) + list(self.graph.bounds)
            self._udf_shapes[k] = [[compile_expr(parse(t), params) for t in texts]
                                   for texts in node.result_shapes]
        env = tuple(point) + self._bound_values
        shapes = [tuple(int(f(*env)) for f in fs) for fs in self._udf_shapes[k]]
        try:
            with self._user_scope():   # the user's function sees the user's JAX configuration
                result = fn(*args)
            return check_udf_result(callee, result, shapes, d.dtypes)
        except ValueError as e:
            where = f" at point {format_point(node.domain, point)}" if point else ""
            raise EvaluationError(f"{node.location}: '{node.name}'{where}: {e}") from None

    # -- running -------------------------------------------------------------------------
    def _check_bounds(self, bounds: dict) -> dict:
        try:
            return check_bounds(self.bound_names, bounds, self.graph.derived)
        except ValueError as e:
            raise EvaluationError(str(e)) from None

    @property
    def on_device(self) -> bool:
        """Whether constants and params live on the device (not under a memory budget: host)."""
        return self.backend.device_arrays and self.device_memory is None

    def bind(self, params: dict | None = None) -> Binding:
        """The values of the params (`{name: array}`), converted once for runs
        (device arrays on a device backend); ValueError if one is unknown,
        missing or of another shape. Runs given the binding copy nothing."""
        with self._device_scope():
            return self.params.bind(params, self.on_device)

    def run(self, bounds: dict, inputs: dict | None = None, progress: bool = False,
            params: "Binding | dict | None" = None) -> dict:
        """Runs the program for `bounds`; returns {output name: value} like
        `tidal.runtime.reference.evaluate`. `params`: a `bind` result (or a
        dict, bound for this run; None: the values in the IR). `progress`: a
        bar over each outermost host loop (progress.py)."""
        if not isinstance(params, Binding):
            try:
                params = self.bind(params)
            except ValueError as e:
                raise EvaluationError(str(e)) from None
        with self._device_scope():
            if params is not self._installed:
                self.params.install(self.ns, params)
                self._installed = params
            return self._run(bounds, inputs, progress)

    def _run(self, bounds: dict, inputs: dict | None, progress: bool) -> dict:
        bounds = self._check_bounds(bounds)
        self.sched.check_bounds(bounds)  # UncomputableError if an output or UDF needs a missing point
        self._bound_values = tuple(bounds[b] for b in self.graph.bounds)
        self._counts[:] = [0, 0, 0, 0]
        self.last_stores = self._memory_report = None
        allocator = self.allocator
        stores = allocator.allocate(bounds, inputs or {})    # the previous run's stores go now
        swapper = allocator.swapper
        memory = allocator.memory = MemoryTracker(allocator.describe_store,
                                                  swapper and (lambda key: key in swapper.on_host), self.device_memory)
        if swapper is not None:
            start_swapper(self, bounds)
        memory.started(stores)
        self.ns.update(stores)
        self.ns.update(bounds)
        program = self._progress_program() if progress else self._program
        if self.index_checked:
            from .jax_backend import index_range_start
            self.ns["_IX"] = {k: index_range_start() for k in self.index_checked}
        if self._gen.guards:
            import jax.numpy as jnp
            self.ns["_EG"] = {k: jnp.zeros(1 + len(self.graph.nodes[k].domain), dtype=jnp.int64)
                              for k in self._gen.guards}
        program(*(bounds[b] for b in self.bound_names))
        self._check_index_ranges()
        self._check_empty_guards()
        if self.stop_bounds:     # the bounds as the stops left them (docs/semantics.md, rt.stop_when)
            bounds = {b: (self.ns[b] if b in self.stop_bounds.values() else v) for b, v in bounds.items()}
            self.sched.check_bounds(bounds)
        self.steps = {d.step.name: bounds[d.bound.name] for d in self.graph.dims}
        stores = allocator.live
        self.last_stores = stores
        self._memory_report = memory.report()
        self._store_bytes = self._memory_report.peak_bytes
        return self._results(bounds, stores)

    def _check_empty_guards(self) -> None:
        """Raises the error of a reduction with no value on an empty input
        (max, ...) that an XLA loop ran over an empty padded axis (a flag per
        op, read once when the run ends)."""
        from types import SimpleNamespace
        for k, what in self._gen.guards.items():
            flag = [int(v) for v in np.asarray(self.ns["_EG"][k])]
            if not flag[0]:
                continue
            node = self.graph.nodes[k]
            if what[0] == "island":
                location, op_name, kind = what[1:]
            else:
                location, op_name, kind = node.location, node.name, what[1]
            where = SimpleNamespace(loc=location, op_name=op_name, steps=node.domain)
            raise EvaluationError(f"KernelError: reduce {kind} over an empty dimension", where, tuple(flag[1:]))

    def _check_index_ranges(self) -> None:
        """Raises the error a NumPy kernel would have raised if a jitted
        indexing op read an index out of range during the run (one copy to
        the host per indexing op, when the run ends)."""
        for k in self.index_checked:
            low, over = (int(v) for v in np.asarray(self.ns["_IX"][k]))
            if low < 0 or over >= 0:
                node = self.graph.nodes[k]
                what = f"index {low} < 0" if low < 0 else f"an index {over + 1} past the last one"
                raise EvaluationError(f"{node.location}: '{node.name}': index out of range: {what} "
                                      f"(indices must lie in [0, size) of dimension "
                                      f"{self.opdefs[k].attrs['index_check'][2]})")

    def _results(self, bounds, stores) -> dict:
        out = {}
        for k in self.statements:
            node = self.graph.nodes[k]
            if node.name != "sdg.output":
                continue
            name = ir.StringAttr(node.op.attributes["name"]).value
            store = stores[store_name(k)]
            extents = [bounds[d.bound.name] for d in self.graph.dims_of(node)]
            if isinstance(store, ArrayStore):
                out[name] = np.array(store.result(extents))
                self._counts[2] += store.xp is not np
            elif "cond" in node.attrs:
                out[name] = {p: np.asarray(v) for p, v in sorted(store.data.items())}
            elif isinstance(store.data, DenseSlots):
                out[name] = store.data.array(extents)
            elif store.plan.static_shape:
                values = [np.asarray(store.data[p]) for p in np.ndindex(*extents)]
                out[name] = np.stack(values).reshape(tuple(extents) + values[0].shape)
            else:
                out[name] = _nest({p: np.asarray(v) for p, v in store.data.items()}, extents)
        return out

    # -- introspection -------------------------------------------------------------------
    def _progress_program(self):
        """`_program` with progress bars, compiled on first use into the same namespace."""
        if "_program_progress" not in self.ns:
            from .progress import progress, progress_source

            self.ns["_progress"] = progress
            exec(compile(progress_source(self.host_program), "<tidal program, progress>", "exec"), self.ns)  # noqa: S102
        return self.ns["_program_progress"]

    def trace(self, bounds: dict) -> list:
        """The launches a run with `bounds` (bound name -> int) makes, in order:
        [(node, point, loop)] (schedule_trace.trace_schedule)."""
        from .schedule_trace import trace_schedule

        return trace_schedule(self.host_program, self.bound_names, self._check_bounds(dict(bounds)))

    @property
    def lowered(self) -> str:
        """The module after sdg-lower-to-scf (the stage's text)."""
        return next(s.text for s in self.stages.stages if s.name == "sdg-lower-to-scf")

    def schedule_text(self) -> str:
        """The isl schedule tree, then the loop nest (the `schedule` stage)."""
        return f"// isl schedule tree\n{self.sched.text()}\n\n// loop nest\n{self.schedule()}"

    def format_plans(self, plans: dict) -> str:
        """One line per stored value: its op and store plan (the `storage` stage)."""
        lines = []
        for (k, r), plan in sorted(plans.items()):
            node = self.graph.nodes[k]
            lines.append(f"{plan}  // {node.name} at {node.location}")
        return "\n".join(lines) + "\n"

    def schedule(self) -> str:
        """The loop nest of the schedule, readable (one line per execution)."""
        tree = self.sched.loop_tree()
        head = f"@{self.graph.name}({', '.join(self.graph.bounds)}):\n"
        return head + format_loop_nest(tree, self.graph, "  ", memory_events(self.graph, tree, self.sched.statements()))

    def store_kinds(self) -> dict[str, str]:
        """{"%3": "window [t:window(3)]", ...} for every computed value."""
        return {f"%{k}" + (f"#{r}" if r else ""): f"{p.kind} [{', '.join(map(str, p.axes))}]"
                for (k, r), p in sorted(self.plans.items())}

    def stats(self) -> dict:
        """Counters: `kernels` (jitted kernels) and `host_ops` (operators run with
        NumPy on the host) of this executable; `xla_compilations` so far; for the
        last run: `launches` (jitted kernel calls), `host_launches`,
        `device_to_host` / `host_to_device` (explicit copies: operands fetched for
        host ops, host results written to device stores, inputs loaded, results
        read), `store_bytes` (the peak bytes its stores held at once:
        `memory_report().peak_bytes`) and `storage_reuses` (stores that took
        the memory of an earlier value: `memory_plan()`);
        `xla_loops`: loops run as one XLA program each (traced.py; one launch
        per call), `loop_fallbacks`: those of them whose trace failed (Python);
        `steps`: the steps the last run ran per dim ({"t": 37}): the bound
        given, or t_stop + 1 where an `sdg.stop_when` ended it."""
        launches, host, d2h, h2d = self._counts
        return {"steps": dict(getattr(self, "steps", {})),
                "kernels": len(self.kernel_names), "host_ops": len(self.host_nodes),
                "xla_loops": getattr(self, "xla_loop_count", 0), "loop_fallbacks": len(self.loop_fallbacks),
                "xla_compilations": self.compiles(), "launches": launches, "host_launches": host,
                "device_to_host": d2h, "host_to_device": h2d, "store_bytes": self._store_bytes,
                "storage_reuses": self.allocator.reuses}

    def memory_plan(self):
        """The array stores' storages (lowering/memory_plan.MemoryPlan): which
        values share memory, and each storage's size in bytes, symbolic."""
        return self.mem_plan

    def memory_report(self):
        """What the last run's stores held over time (memory.MemoryReport)."""
        report = getattr(self, "_memory_report", None)
        if report is None:
            raise RuntimeError("no run yet: call run() first, then memory_report()")
        return report

    def compiles(self) -> int:
        """Number of XLA programs compiled for this executable so far: kernels
        run on their own and loops (a kernel traced inside a loop is part of
        the loop's program; `_compile_counts` counts every trace by name)."""
        return sum(self._compile_counts.values()) - self._inlined


_RESERVED = {"range", "min", "max", "slice", "True", "False", "None"}


def _check_names(graph) -> None:
    """Steps and bounds become Python names in the generated program."""
    for name in graph.steps + graph.bounds:
        if not name.isidentifier() or name.startswith("_") or name in _RESERVED:
            raise NotImplementedError(f"@{graph.name}: the dimension name '{name}' cannot be used by the "
                                      f"scheduled runtime (rename it)")


def _own(value):
    """`value`, copied if it is a NumPy view (of a store buffer that may be overwritten)."""
    return value.copy() if isinstance(value, np.ndarray) and value.base is not None else value


def _nest(values: dict, extents):
    def build(prefix, depth):
        if depth == len(extents):
            return values[prefix]
        return [build(prefix + (i,), depth + 1) for i in range(extents[depth])]
    return build((), 0)
