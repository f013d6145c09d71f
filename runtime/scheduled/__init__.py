"""The scheduled runtime: executes the isl schedule of an SDG (paper §5-§6).

    from tidal.runtime.scheduled import compile_sdg
    exe = compile_sdg(module, udfs=None)          # once: schedule, lower, generate
    out = exe.run({"T": 100}, {"x": x})            # any bounds, many times
    print(exe.schedule())                          # the loop nest

`compile_sdg` returns a `ScheduledProgram` (program.py); the frontend's
`td.Executable` holds one as `exe.compiled`. The scheduled backends
(tidal.runtime.backends): "jax" (default; jitted kernels, stores on the device,
in-place writes, padded dynamic shapes) and "numpy" (eager, in-place NumPy).
"""
from .program import ScheduledProgram, compile_sdg

__all__ = ["compile_sdg", "ScheduledProgram"]
