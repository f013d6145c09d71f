"""`p.compile(backend=...)` and `.run(bounds=..., inputs=...)`.

Every backend lowers the rt module with `tidal.passes.rt_to_sdg`. The
default backends, "jax" and "numpy", compile it once with the scheduled
runtime (`tidal.runtime.scheduled`: isl schedule, lowering to scf, a
generated host program) and run it for any bounds; "reference" evaluates it
with the reference interpreter (`tidal.runtime.reference`), the oracle the
others are tested against. Both are imported lazily. Inputs are validated against the declared shapes, dtypes and the
bounds before anything runs.

Inputs are arrays whose leading axes are the extents of the input's domain
(program order) followed by its per-point shape; an input whose per-point
shape varies with a step is a nested list (one level per domain dim) of
arrays. Results come back as the interpreter returns them (see
docs/semantics.md, `rt.output`).
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable, Mapping

import numpy as np

from tidal import config
from tidal.symbolic import Dim, Symbol, evaluate

from tidal.runtime import backends as runtime_backends
from tidal.runtime.run_checks import cast_exact, check_bound, is_device_array, owned_copy

from .errors import TidalError

__all__ = ["Executable", "backends", "lower_to_sdg", "normalize_bounds", "validate_inputs"]


def backends() -> tuple[str, ...]:
    """The names of the registered backends, the default first (`td.backends()`;
    their capabilities: `tidal.runtime.backends.get(name)`)."""
    return runtime_backends.names()


def scheduled_backends() -> str:
    """The backends that compile a schedule, as `backend="jax" or "numpy"`."""
    return " or ".join(f"backend={n!r}" for n in runtime_backends.names("scheduled"))


def backend_named(name: Any) -> "runtime_backends.Backend":
    """The registered backend `name`, or a TidalError at the user's line."""
    try:
        return runtime_backends.get(name)
    except runtime_backends.UnknownBackend:
        raise TidalError(f"unknown backend {name!r}", f"use one of {', '.join(backends())}") from None


def lower_to_sdg(module):
    """Runs `rt-to-sdg` in place (imported lazily) and returns the module."""
    try:
        from tidal.passes.rt_to_sdg import rt_to_sdg
    except ImportError as e:
        raise ImportError(f"the rt-to-sdg pass is not available (tidal.passes.rt_to_sdg): {e}") from None
    rt_to_sdg(module)
    return module


def normalize_bounds(program: Any, bounds: Mapping | None) -> dict[str, int]:
    """`{T: 10}` / `{"T": 10}` / `{Dim: 10}` -> `{"T": 10}` for every program dim."""
    by_bound = {d.bound.name: d for d in program.dim_list}
    by_step = {d.step.name: d for d in program.dim_list}
    out: dict[str, int] = {}
    for key, value in (bounds or {}).items():
        if isinstance(key, Dim):
            name = key.bound.name
        elif isinstance(key, Symbol):
            name = key.name
        elif isinstance(key, str):
            name = key
        else:
            raise TidalError(f"bounds key {key!r} is not a bound", "key bounds by symbol or name: {T: 10}")
        if name in by_step and name not in by_bound:
            raise TidalError(f"bounds key {name!r} is a step; bounds are keyed by the bound symbol",
                             f"write {{{by_step[name].bound.name}: ...}}")
        if name not in by_bound:
            raise TidalError(f"bounds key {name!r} is not a bound of this program "
                             f"(bounds: {', '.join(by_bound) or 'none'})", "remove it or fix the name")
        try:
            out[name] = check_bound(name, value)
        except ValueError as e:
            raise TidalError(str(e), f"e.g. {{{name}: 10}}") from None
    for name, (value, where) in getattr(program, "fixed_bounds", {}).items():
        if name in out and out[name] != value:
            raise TidalError(f"bound {name} = {out[name]}, but {name} is fixed to {value} "
                             f"(declared at {where})", f"leave {name} out of bounds= (or give {value})")
        out[name] = value
    missing = [n for n in by_bound if n not in out]
    if missing:
        raise TidalError(f"no value for the bound{'s' if len(missing) > 1 else ''} {', '.join(missing)}",
                         "give every bound, e.g. bounds={" + ", ".join(f"{n}: 10" for n in missing) + "}")
    return out


def _convert(name: str, value: Any, dtype: np.dtype, shape: tuple, where: str, device: bool = False):
    if device and is_device_array(value, dtype, shape):
        return value     # the jax backend reads it where it is (no copy to the host and back)
    try:
        arr = np.asarray(value)
    except ValueError as e:  # ragged nested lists
        raise TidalError(f"input {name!r}{where} is not a regular array: {e}",
                         "pass a NumPy array of the declared shape") from None
    if arr.dtype == object:
        raise TidalError(f"input {name!r}{where} is not numeric data", "pass a NumPy array")
    try:
        arr = cast_exact(arr, dtype, f"input {name!r}{where}")
    except ValueError as e:
        raise TidalError(f"{e} (declared {dtype})", f"pass {dtype} data that fits, or declare the input "
                         "with a dtype that holds it") from None
    if arr.shape != shape:
        raise TidalError(f"input {name!r}{where} has shape {arr.shape}, expected {shape}",
                         "the leading axes are the extents of the input's domain (program order), "
                         "then its per-point shape, evaluated at the given bounds")
    return arr


def _input_value(node: Any, value: Any, bounds: dict[str, int], device: bool = False) -> Any:
    name = node.attrs["name"]
    x = node.outputs[0]
    dims = node.domain
    if not any(s.role == "step" for e in x.shape for s in e.free_symbols):
        lead = tuple(bounds[d.bound.name] for d in dims)
        per_point = tuple(int(evaluate(e, bounds)) for e in x.shape)
        return _convert(name, value, x.dtype, lead + per_point, "", device)

    def walk(v: Any, k: int, env: dict) -> Any:
        if k == len(dims):
            shape = tuple(int(evaluate(e, env)) for e in x.shape)
            return _convert(name, v, x.dtype, shape, " at " + ", ".join(f"{n}={env[n]}" for n in env
                                                                          if n not in bounds))
        d = dims[k]
        n = bounds[d.bound.name]
        if not isinstance(v, (list, tuple)) or len(v) != n:
            raise TidalError(f"input {name!r} has a per-point shape that varies with the steps, so it is "
                             f"a nested list; level {k} must be a list of {n} entries ({d.step.name} < "
                             f"{d.bound.name})", "pass one array per point")
        return [walk(item, k + 1, {**env, d.step.name: i}) for i, item in enumerate(v)]

    return walk(value, 0, dict(bounds))


def validate_inputs(program: Any, inputs: Mapping | None, bounds: dict[str, int],
                    device: bool = False) -> dict[str, Any]:
    """Checks names, shapes (against the bounds) and dtypes; returns converted
    values (NumPy arrays; with `device`, a jax.Array of the declared dtype and
    shape as it is)."""
    nodes = {n.attrs["name"]: n for n in program.nodes if n.op == "input"}
    given = dict(inputs or {})
    for key in given:
        if not isinstance(key, str):
            raise TidalError(f"inputs are keyed by name, got {key!r}", 'e.g. inputs={"x": arr}')
    unknown = [k for k in given if k not in nodes]
    if unknown:
        raise TidalError(f"unknown input{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                         f"(declared: {', '.join(map(repr, nodes)) or 'none'})", "check the names")
    missing = [k for k in nodes if k not in given]
    if missing:
        raise TidalError(f"missing input{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}",
                         "give every td.input a value")
    return {k: _input_value(nodes[k], v, bounds, device) for k, v in given.items()}


def device_budget(device_memory: Any, backend: "runtime_backends.Backend") -> int | None:
    """`device_memory` of p.compile() in bytes (None: no budget); a float in
    (0, 1] is a fraction of the device's memory (its XLA limit, else the RAM)."""
    if device_memory is None:
        return None
    if not backend.memory_budget:
        able = runtime_backends.names("memory_budget")
        raise TidalError(f"device_memory needs a backend that keeps a device memory budget ({', '.join(able)}); "
                         f"the {backend} backend has none", f"compile with backend={able[0]!r}, or drop device_memory")
    if isinstance(device_memory, bool) or not isinstance(device_memory, (int, float, np.integer, np.floating)):
        raise TidalError(f"device_memory must be a number of bytes or a fraction, not {device_memory!r}",
                         "e.g. device_memory=2**30 or device_memory=0.5")
    if isinstance(device_memory, (float, np.floating)):
        if not 0 < device_memory <= 1:
            raise TidalError(f"device_memory={device_memory}: a fraction must lie in (0, 1]",
                             "give bytes as an int, or a fraction of the device's memory")
        return max(1, int(device_memory * _device_bytes()))
    if device_memory <= 0:
        raise TidalError(f"device_memory={device_memory}: the budget must be positive", "give a number of bytes")
    return int(device_memory)


def _device_bytes() -> int:
    import jax
    stats = jax.devices()[0].memory_stats() or {}
    if stats.get("bytes_limit"):
        return int(stats["bytes_limit"])
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def _udf_table(program: Any) -> dict[str, Callable]:
    """{callee: function}. Every backend checks what a UDF returns against its
    declaration (tidal.runtime.run_checks.check_udf_result)."""
    return {node.attrs["callee"]: node.attrs["fn"] for node in program.nodes if node.op == "udf"}


class Executable:
    """A compiled program: `.run(bounds={T: 10}, inputs={"x": arr})` -> {name: value}.

    `exe.stages` holds what each compile stage produced (see
    tidal.frontend.compile_pipeline for the list); `exe.timings()` their times.
    `exe.backend` is the backend's name, `exe.backend_info` the registered
    backend (tidal.runtime.backends.Backend: what it can do)."""

    def __init__(self, program: Any, backend: str = "jax", *, passes=None, dump=None,
                 timings: bool | None = None, progress: bool | None = None, device_memory=None):
        self.backend_info = info = backend_named(backend)     # chosen once, here
        budget = device_budget(device_memory, info)
        from . import compile_cache
        from .compile_pipeline import make_stages, sdg_stages, trace_stage

        self.program = program
        self.backend = backend
        steps, self._stages = make_stages(passes, dump, progress)
        self.udfs = _udf_table(program)
        self.rt_module = trace_stage(program, self._stages)
        key = None if self._stages.dump is not None else compile_cache.program_key(
            self.rt_module, backend, tuple(element for _, element, _ in steps) + (("device_memory", budget),),
            self.udfs)
        hit = compile_cache.lookup(key) if key is not None else None
        self.cache_hit = hit is not None   # p.compile() of an equal program: nothing recompiled
        if hit is not None:
            self.module, self._stages, self.compiled = hit
        else:
            self.module = sdg_stages(program, steps, self._stages)
            self.compiled = None
            if info.scheduled:  # schedule and generate the host program once
                from tidal.runtime.scheduled import compile_sdg

                compile_cache.persistent_cache_from_environment()
                self.compiled = compile_sdg(self.module, udfs=self.udfs, backend=info, stages=self._stages,
                                            device_memory=budget)
            if key is not None:
                compile_cache.store(key, (self.module, self._stages, self.compiled))
        self._param_nodes = {n.attrs["name"]: n for n in program.nodes if n.op == "param"}
        self._binding = None   # no values yet: params declared by shape (td.param(name, shape=...))
        values = {name: n.attrs["value"] for name, n in self._param_nodes.items()}
        if all(v is not None for v in values.values()):
            self._bind(values)
        if timings if timings is not None else config.timings.value:
            print(("(compile cache hit: the stages of the first compile)\n" if self.cache_hit else "")
                  + self.timings(), file=sys.stderr)

    # -- parameters: run-time buffers, bound by name ---------------------------------
    def _bind(self, values: dict[str, Any]) -> None:
        if self.compiled is not None:
            kept = self.compiled.params.specs     # params the passes left (dead ones are gone)
            try:
                self._binding = self.compiled.bind({k: v for k, v in values.items() if k in kept})
            except ValueError as e:
                raise TidalError(str(e), "give each td.param an array of its shape") from None
        else:   # the reference interpreter: the values as given (a copy of a writeable array)
            self._binding = {k: owned_copy(v) for k, v in values.items()}

    def state_dict(self) -> dict[str, Any]:
        """{name: value} of every td.param, as bound to this executable (arrays
        on the backend's device; `np.asarray` them for NumPy copies); empty
        before values are bound to params declared by shape."""
        if self._binding is None:
            return {}
        if self.compiled is None:
            return dict(self._binding)
        return {name: self._binding[name] if name in self._binding else self._param_nodes[name].attrs["value"]
                for name in self._param_nodes}

    def load_state_dict(self, state: Mapping[str, Any], strict: bool = True) -> None:
        """Binds new values to the td.params by name (arrays of their shapes;
        floats are converted to the param's dtype). No recompilation: the
        program was compiled for the params' shapes and dtypes, not their
        values. `strict`: every param must be given (else the others keep
        their values); an unknown name is an error either way."""
        state = dict(state)
        unknown = [k for k in state if k not in self._param_nodes]
        if unknown:
            raise TidalError(f"load_state_dict: unknown parameter{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(map(repr, unknown))} (declared: {', '.join(map(repr, self._param_nodes))})",
                             "check the names (exe.state_dict() lists them)")
        missing = [k for k in self._param_nodes if k not in state]
        if (strict or self._binding is None) and missing:
            raise TidalError(f"load_state_dict: no value for {', '.join(map(repr, missing))}",
                             "give every parameter, or pass strict=False to keep the others")
        self._bind({**self.state_dict(), **state})

    @property
    def stages(self) -> dict[str, str]:
        """Stage name -> its output (MLIR, schedule, store plans, host program), in order."""
        return self._stages.as_dict()

    def timings(self) -> str:
        """The compile stages' times, as a table."""
        return self._stages.timings()

    def draw(self, kind: str, path: Any, **options: Any) -> None:
        """Pictures: `draw("sdg", "g.svg")` (the dependence graph; .dot, .svg,
        .png, .pdf) and `draw("schedule", "s.png", bounds={T: 8})` (the
        executed schedule as a timeline). See tidal.frontend.drawing."""
        from .drawing import draw

        draw(self, kind, path, **options)

    def _repr_svg_(self) -> str | None:
        """Jupyter shows an Executable as its SDG (None without Graphviz)."""
        from .drawing import render_dot, sdg_dot

        try:
            return render_dot(sdg_dot(self), "svg").decode()
        except TidalError:
            return None

    def run(self, bounds: Mapping | None = None, inputs: Mapping | None = None, *,
            progress: bool | None = None) -> dict[str, Any]:
        """Runs for `bounds`; `progress=True` (or TIDAL_PROGRESS=1) shows a bar
        with steps per second over each outermost loop (scheduled backends)."""
        if self._binding is None:
            unbound = [name for name, n in self._param_nodes.items() if n.attrs["value"] is None]
            raise TidalError(f"no values bound to the parameter{'s' if len(unbound) > 1 else ''} "
                             f"{', '.join(map(repr, unbound[:4]))}{', ...' if len(unbound) > 4 else ''}",
                             "bind them first: exe.load_state_dict({name: array, ...})")
        b = normalize_bounds(self.program, bounds)
        values = validate_inputs(self.program, inputs, b, device=self.backend_info.device_arrays)
        if self.compiled is not None:
            if progress is None:
                progress = config.progress.value
            return self.compiled.run(b, values, progress=bool(progress), params=self._binding)
        from tidal.runtime.reference import evaluate as reference_evaluate

        self._steps = {d.step.name: b[d.bound.name] for d in self.program.dim_list if d.bound.name in b}
        if not self.program.stops:
            return reference_evaluate(self.module, b, values, self.udfs, params=self._binding)
        return reference_evaluate(self.module, b, values, self.udfs, params=self._binding, steps=self._steps)

    def schedule(self) -> str:
        """The generated loop nest, readable (scheduled backends only)."""
        if self.compiled is None:
            raise TidalError(f"the {self.backend} backend evaluates on demand and has no schedule",
                             f"compile with a scheduled backend ({scheduled_backends()}) to see the loop nest")
        return self.compiled.schedule()

    __call__ = run

    def stats(self) -> dict[str, int]:
        """Counters of the compiled program and its last run (scheduled backends):
        kernels, host_ops, xla_compilations (so far), launches, host_launches,
        device_to_host, host_to_device, store_bytes. See
        tidal.runtime.scheduled.ScheduledProgram.stats. `steps`: the steps the
        last run ran per dim (the bound given, or t_stop + 1 where td.stop_when
        ended it); the reference backend reports only these."""
        if self.compiled is None:
            if getattr(self, "_steps", None) is not None:
                return {"steps": dict(self._steps)}
            raise TidalError(f"the {self.backend} backend interprets the program and has no kernels to count",
                             f"compile with {scheduled_backends()} for exe.stats(), or run it first (its "
                             f"stats are the steps run)")
        return self.compiled.stats()

    def memory_plan(self):
        """Which array stores share memory, planned at compile time with symbolic
        sizes (scheduled backends): `.storages` (each with its size in bytes as
        an expression of the bounds and its values), `.bytes(bounds)`,
        `print(plan)`. See tidal.lowering.memory_plan."""
        if self.compiled is None:
            raise TidalError("the reference backend keeps no stores to plan",
                             'compile with backend="jax" or "numpy" for exe.memory_plan()')
        return self.compiled.memory_plan()

    def memory_report(self):
        """What the last run's stores held over time (scheduled backends):
        `.peak_bytes`, `.timeline`, `.stores` (per store: bytes, when allocated
        and freed), `print(report)`, `report.plot("mem.png")` (matplotlib).
        See tidal.runtime.scheduled.memory."""
        if self.compiled is None:
            raise TidalError("the reference backend keeps no stores to report on",
                             'compile with backend="jax" or "numpy" for exe.memory_report()')
        try:
            return self.compiled.memory_report()
        except RuntimeError as e:
            raise TidalError(str(e), "run the executable first: exe.run(bounds=..., inputs=...)") from None

    def __repr__(self) -> str:
        return f"Executable({self.program.name!r}, backend={self.backend!r})"
