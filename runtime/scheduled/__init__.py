"""The scheduled runtime: executes the isl schedule of an SDG (paper §5-§6).

    from tidal.runtime.scheduled import compile_sdg
    exe = compile_sdg(module, udfs=None)          # once: schedule, lower, generate
    out = exe.run({"T": 100}, {"x": x})            # any bounds, many times
    print(exe.schedule())                          # the loop nest

Backends: "jax" (default; one jitted kernel per operator, stores on device,
in-place writes, padded dynamic shapes) and "numpy" (eager, in-place NumPy).
"""
from .executable import Executable, compile_sdg

__all__ = ["compile_sdg", "Executable"]
