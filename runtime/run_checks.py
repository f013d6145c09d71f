"""Checks every backend applies to what a run is given: bounds, values entering
the program (inputs, UDF results) and the memory a run would need.

One implementation, so `reference`, `numpy` and `jax` refuse the same things with
the same words:

* `check_bound(name, value)`: an integer >= 1 that fits in int64 (index
  arithmetic and isl work in 64 bits; a bound past that would wrap or hang).
* `cast_exact(value, dtype, what)`: the value as an array of `dtype`, or a
  `ValueError` when the conversion would change a value: integers that do not
  fit (2**40 into int32), negative integers into unsigned types, floats into
  integers, non-booleans into bool, finite floats that overflow to inf, `None`
  or non-numeric objects. Widening and float rounding (float64 -> float32, int
  -> float) are allowed, as in NumPy's "same_kind" casting.
* `check_udf_result(...)`: what a UDF returned against its declaration (count,
  per-point shape, dtype via `cast_exact`); a sink's return value is ignored.
* `check_footprint(entries)`: the bytes a run would hold, estimated before
  anything is allocated, against the memory of this machine.
"""
from __future__ import annotations

import functools
import os
from typing import Any, Iterable, Sequence

import ml_dtypes
import numpy as np

from tidal import config
from tidal.dialects.attrs import with_derived
from tidal.dialects.element_types import BFLOAT16

__all__ = ["INT64_MAX", "check_bound", "check_bounds", "cast_exact", "param_array", "owned_copy",
           "check_udf_result", "check_footprint",
           "memory_limit", "format_bytes"]

INT64_MAX = 2 ** 63 - 1


def check_bound(name: str, value: Any) -> int:
    """`value` as an int, or ValueError if it is not an integer in [1, 2**63 - 1]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"bound '{name}' must be an int >= 1, got {value!r}")
    value = int(value)
    if value < 1:
        raise ValueError(f"bound '{name}' must be an int >= 1, got {value}")
    if value > INT64_MAX:
        raise ValueError(f"bound '{name}' = {value} does not fit in int64 (at most 2**63 - 1)")
    return value


def check_bounds(names: Sequence[str], bounds: dict, derived: dict | None = None) -> dict[str, int]:
    """{name: int} for every bound in `names` (a graph's), or ValueError for an
    unknown, missing or invalid one. `derived` ({name: expression text over
    the other bounds}, sdg-tile's tile counts) are computed, not given."""
    derived = derived or {}
    given = [n for n in names if n not in derived]
    for name in sorted(set(bounds) & set(derived)):
        raise ValueError(f"bound '{name}' is derived ({name} = {derived[name]}), not given by a run; "
                         "leave it out")
    unknown = sorted(set(bounds) - set(names))
    if unknown:
        raise ValueError(f"unknown bound '{unknown[0]}' (the graph's bounds: {', '.join(given)})")
    missing = [n for n in given if n not in bounds]
    if missing:
        raise ValueError(f"no value for bound '{missing[0]}'")
    out = with_derived({name: check_bound(name, bounds[name]) for name in given}, derived)
    for name in derived:
        check_bound(name, out[name])
    return {name: out[name] for name in names}


def _kind(dtype: np.dtype) -> str:
    """NumPy's kind letter, with bfloat16 (kind "V" in ml_dtypes) a float."""
    return "f" if dtype == BFLOAT16 else dtype.kind


def _describe(arr: np.ndarray) -> str:
    return f"{arr.dtype} of shape {arr.shape}"


def is_device_array(value: Any, dtype, shape: tuple) -> bool:
    """A jax.Array of exactly this dtype and shape: usable as is, no conversion
    or copy (jax is not imported for this)."""
    import sys
    jax = sys.modules.get("jax")
    return (jax is not None and isinstance(value, jax.Array) and value.dtype == np.dtype(dtype)
            and tuple(value.shape) == tuple(shape))


def cast_exact(value: Any, dtype, what: str) -> np.ndarray:
    """`value` as an array of `dtype`; ValueError naming `what` if a value would change."""
    dtype = np.dtype(dtype)
    if value is None:
        raise ValueError(f"{what} is None, expected {dtype} data")
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as e:  # ragged nested lists
        raise ValueError(f"{what} is not a regular array: {e}") from None
    if arr.dtype == dtype:
        return arr
    kind, target = _kind(arr.dtype), _kind(dtype)
    if kind not in "biuf" or target not in "biuf":
        raise ValueError(f"{what} is {_describe(arr)}, which cannot be converted to {dtype}")
    if target == "b" and kind != "b":
        raise ValueError(f"{what} is {_describe(arr)}, expected bool (compare, e.g. `x != 0`, "
                         f"to make booleans)")
    if target in "iu" and kind == "f":
        raise ValueError(f"{what} is {_describe(arr)}: floats are not converted to {dtype} "
                         f"implicitly (round and cast them first)")
    if target in "iu" and kind in "iu" and arr.size:
        info = np.iinfo(dtype)
        lo, hi = arr.min(), arr.max()
        if lo < info.min or hi > info.max:
            bad = lo if lo < info.min else hi
            raise ValueError(f"{what} holds {int(bad)}, which does not fit in {dtype} "
                             f"([{info.min}, {info.max}]); declare a wider dtype")
    if target == "f" and kind == "f" and arr.size and ml_dtypes.finfo(dtype).max < ml_dtypes.finfo(arr.dtype).max:
        finite = arr[np.isfinite(arr)]
        if finite.size and np.abs(finite).max() > ml_dtypes.finfo(dtype).max:
            raise ValueError(f"{what} holds {float(np.abs(finite).max()):g}, which overflows {dtype}; "
                             f"declare a wider dtype")
    return arr.astype(dtype)


def param_array(name: str, value: Any, dtype, shape: tuple, device: bool = False) -> Any:
    """A parameter's value as an array of its declared dtype and shape, or
    ValueError. Floats of another float dtype are converted (as PyTorch's
    `load_state_dict` copies into the parameter's dtype); other conversions
    must be exact. With `device`, a jax.Array of the declared dtype and shape is kept as is."""
    dtype, shape = np.dtype(dtype), tuple(shape)
    if device and is_device_array(value, dtype, shape):
        return value
    what = f"parameter {name!r}"
    arr = np.asarray(value) if hasattr(value, "__array__") else value
    if isinstance(arr, np.ndarray) and _kind(arr.dtype) == "f" == _kind(dtype):
        arr = arr.astype(dtype, copy=False)
    else:
        arr = cast_exact(arr, dtype, what)
    if arr.shape != shape:
        raise ValueError(f"{what} has shape {arr.shape}, expected {shape}")
    return arr


def owned_copy(value: Any) -> Any:
    """`value` as a buffer its caller cannot change later: a writeable or strided
    NumPy array is copied (C order); a read-only one (a memory-mapped checkpoint)
    and anything else (a device array) are kept as they are."""
    if isinstance(value, np.ndarray) and (value.flags.writeable or not value.flags.c_contiguous):
        return np.array(value, order="C")
    return value


def check_udf_result(callee: str, out: Any, shapes: Sequence[tuple], dtypes: Sequence) -> tuple:
    """The arrays a UDF returned, as a tuple matching its declaration, or ValueError."""
    if not dtypes:  # a sink runs for its effects; what it returns is ignored
        return ()
    if len(dtypes) == 1:
        out = (out,)
    elif not isinstance(out, (tuple, list)) or len(out) != len(dtypes):
        got = f"{len(out)} values" if isinstance(out, (tuple, list)) else type(out).__name__
        raise ValueError(f"UDF '{callee}' is declared with {len(dtypes)} results but returned {got}")
    results = []
    for i, (value, shape, dtype) in enumerate(zip(out, shapes, dtypes)):
        what = f"UDF '{callee}' result{f' {i}' if len(dtypes) > 1 else ''}"
        arr = cast_exact(value, dtype, what)
        if tuple(arr.shape) != tuple(shape):
            raise ValueError(f"{what} has shape {tuple(arr.shape)}, declared {tuple(shape)} "
                             f"({np.dtype(dtype)})")
        results.append(arr)
    return tuple(results)


def memory_limit() -> int:
    """Bytes a run may use: physical memory, or the cgroup limit when lower.
    `TIDAL_MEMORY_LIMIT` (bytes) overrides it."""
    limit = config.memory_limit.value
    return limit if limit is not None else _machine_memory()


@functools.lru_cache(maxsize=1)
def _machine_memory() -> int:
    """Physical memory, or the cgroup limit when lower (read once a process)."""
    try:
        limit = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        limit = 1 << 62
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit():
            limit = min(limit, int(text))
    return limit


def format_bytes(n: int) -> str:
    for unit, size in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def check_footprint(entries: Iterable[tuple[str, int]], limit: int | None = None) -> None:
    """`entries` = (what, bytes) for everything a run would hold. Raises
    MemoryError naming the largest holder when the total exceeds `limit`."""
    entries = list(entries)
    total = sum(b for _, b in entries)
    limit = memory_limit() if limit is None else limit
    if total <= limit:
        return
    what, biggest = max(entries, key=lambda e: e[1])
    def both(n: int) -> str:
        text = format_bytes(n)
        return text if text.endswith(" bytes") else f"{text} ({n} bytes)"

    raise MemoryError(f"this run would need {both(total)} of memory, more than the "
                      f"{format_bytes(limit)} available; the largest is {what}: "
                      f"{both(biggest)}. Use smaller bounds "
                      f"(or set TIDAL_MEMORY_LIMIT to raise the limit)")
