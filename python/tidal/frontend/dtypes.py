"""Element types: the NumPy dtypes Tidal supports, promotion, MLIR names.

Promotion follows NumPy 2 (`np.result_type` on the tensors' dtypes), with
scalars *weak*: Python scalars, symbolic integer expressions, and NumPy
scalars (`np.float64(0.125)`, `np.float32(2)`, `np.int64(3)`, `np.bool_`:
what `np.sqrt(hd)` or `arr.sum()` return) join an operation by their kind
only, and the tensor's dtype wins, as in PyTorch:

* `float32 tensor * 0.5` and `float32 tensor * np.float64(0.5)` are float32,
  `int32 tensor + 1` and `int32 tensor + np.int64(1)` are int32;
* a scalar of a higher kind raises the kind to the *default* dtype of that
  kind, as in JAX: `int32 tensor * 0.5` is float32 (the default float),
  `bool tensor + 1` is int64 (the default int, Tidal's index type);
* with only weak operands, a float is float32, an int int64, a bool bool.

NumPy *arrays*, 0-d ones included (`np.array(0.5)`), keep their dtype
(strong), as in NumPy and JAX. JAX keeps NumPy scalars strong too; in its
default 32-bit mode it first narrows `np.float64` to float32, so
`float32 array * np.float64(2)` is float32 there as here, but
`float16 array * np.float32(2)` is float32 in JAX and float16 in Tidal
(PyTorch's rule: the scalar does not choose the dtype). Creating a tensor
from a NumPy scalar (`td.constant(np.float64(1))`, `td.full(s, np.float64(1))`)
keeps its dtype.
Two departures from NumPy, both PyTorch's and JAX's rules: tensors of integer
and float dtypes promote to the float dtype (`int64 + float32` is float32,
NumPy says float64), and an operation that turns integers into floats
(`int / int`, `exp(int32)`, `mean`) gives the default float32 unless NumPy
picks a narrower one (`np.exp` of int8 is float16). float64 only comes from
float64. Otherwise which dtype an operation computes in is asked from NumPy.

bfloat16 (`td.bfloat16`, `"bfloat16"`, `"bf16"`: `ml_dtypes.bfloat16`, the NumPy
dtype jax.numpy uses; its NumPy kind is "V", so `is_float` says whether a dtype
is a float) promotes as in JAX, which NumPy does not know (`np.result_type`
raises for bfloat16 with float16 or an int): with float16 it gives float32, with
float32 or float64 the wider one, with ints and bools bfloat16; weak scalars keep
it (`bf16 tensor * 0.5` is bfloat16). A function of bfloat16 is bfloat16
(`exp`, `mean`, `softmax`); sums, products, their scans and matmuls of
bfloat16 accumulate in float32 and round the result to bfloat16, on every backend.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from tidal.dialects.element_types import BFLOAT16, MLIR_NAMES, NUMPY_DTYPES, is_float

from .errors import TidalError

__all__ = ["as_dtype", "mlir_name", "promote", "weak_kind", "is_weak_scalar", "is_python_scalar", "is_float",
           "DEFAULT_FLOAT", "INDEX", "BOOL", "BFLOAT16", "ufunc_result", "reduction_result"]

_MLIR = MLIR_NAMES
_FROM_MLIR = NUMPY_DTYPES
DEFAULT_FLOAT = np.dtype(np.float32)
INDEX = np.dtype(np.int64)
BOOL = np.dtype(np.bool_)
F16 = np.dtype(np.float16)
_SUPPORTED = ", ".join(str(d) for d in _MLIR)


def as_dtype(value: Any, what: str = "dtype") -> np.dtype:
    """A supported NumPy dtype from a name (`"float32"`, `"f32"`, `"bfloat16"`), type or dtype."""
    if isinstance(value, str) and value in _FROM_MLIR:
        return _FROM_MLIR[value]
    try:
        dt = np.dtype(value)
    except TypeError:
        raise TidalError(f"{what} {value!r} is not a dtype",
                         f"use one of {_SUPPORTED}") from None
    if dt not in _MLIR:
        raise TidalError(f"{what} {dt} is not supported by Tidal",
                         f"use one of {_SUPPORTED} (cast the data first)")
    return dt


def mlir_name(dt: np.dtype) -> str:
    """The MLIR element type of a supported dtype (`f32`, `i1`, ...)."""
    return _MLIR[np.dtype(dt)]


def is_python_scalar(value: Any) -> bool:
    """Python bools, ints and floats (not NumPy scalars)."""
    return isinstance(value, (bool, int, float)) and not isinstance(value, np.generic)


def is_weak_scalar(value: Any) -> bool:
    """Operands typed by their kind only: Python and NumPy bool/int/float scalars
    (not arrays, not 0-d arrays)."""
    if isinstance(value, np.generic):
        return value.dtype.kind in "biuf" or value.dtype == BFLOAT16
    return is_python_scalar(value)


def weak_kind(value: Any) -> int:
    """0 for bool, 1 for int, 2 for float."""
    if isinstance(value, (bool, np.bool_)):
        return 0
    if isinstance(value, numbers.Integral):
        return 1
    return 2


def _kind(dt: np.dtype) -> int:
    return 0 if dt.kind == "b" else 1 if dt.kind in "iu" else 2


def _promote_floats(floats: list[np.dtype]) -> np.dtype:
    """JAX's lattice on floats: bfloat16 and float16 meet at float32 (NumPy has no rule)."""
    others = [d for d in floats if d != BFLOAT16]
    if len(others) == len(floats):
        return np.result_type(*floats)
    if not others:
        return BFLOAT16
    wider = np.result_type(*others)
    return DEFAULT_FLOAT if wider == F16 else wider


_WEAK_DEFAULT = {0: BOOL, 1: INDEX, 2: DEFAULT_FLOAT}
_WEAK_RAISE = {1: INDEX, 2: DEFAULT_FLOAT}


def promote(strong: list[np.dtype], weak_kinds: list[int] = ()) -> np.dtype:
    """The common dtype of tensors (`strong`) and weak scalars of `weak_kinds`."""
    if strong:
        floats = [np.dtype(d) for d in strong if is_float(d)]
        try:  # integers meeting floats take the floats' dtype (PyTorch, JAX): i64 + f32 is f32
            base = _promote_floats(floats) if floats else np.result_type(*strong)
        except TypeError as e:
            raise TidalError(f"cannot promote dtypes {', '.join(map(str, strong))}: {e}") from None
    else:
        return _WEAK_DEFAULT[max(weak_kinds)] if weak_kinds else DEFAULT_FLOAT
    top = max(weak_kinds, default=0)
    if top > _kind(base):
        base = _WEAK_RAISE[top]
    if base not in _MLIR:
        raise TidalError(f"dtype promotion gives {base}, which Tidal does not support",
                         f"cast the operands to one of {_SUPPORTED} first")
    return base


def check_scalar_fits(value: Any, dt: np.dtype) -> None:
    """A weak int scalar must be representable in the integer dtype it joins."""
    if dt.kind in "iu" and isinstance(value, numbers.Integral) and not isinstance(value, bool):
        info = np.iinfo(dt)
        if not info.min <= int(value) <= info.max:
            kind = "Python int" if isinstance(value, int) else f"NumPy {np.asarray(value).dtype}"
            raise TidalError(f"the {kind} {value} does not fit in {dt}",
                             "cast the tensor to a wider dtype (e.g. .astype('int64')) first")


_PROBE_CACHE: dict = {}


def ufunc_result(ufunc: Any, *dts: np.dtype) -> np.dtype:
    """The dtype NumPy's `ufunc` returns for arrays of `dts` (TidalError if none)."""
    key = (ufunc, dts)
    if key not in _PROBE_CACHE:
        try:
            with np.errstate(all="ignore"):
                out = ufunc(*[np.zeros(1, d) for d in dts])
            _PROBE_CACHE[key] = np.asarray(out).dtype
        except TypeError:
            _PROBE_CACHE[key] = None
    result = _PROBE_CACHE[key]
    if result is None:
        name = getattr(ufunc, "__name__", str(ufunc))
        raise TidalError(f"{name} is not defined for {', '.join(map(str, dts))} tensors (as in NumPy)",
                         "cast the operand with .astype(...) first")
    if result not in _MLIR:
        result = np.dtype(np.float64) if result.kind == "f" else INDEX
    if result == np.float64 and not any(np.dtype(d) == np.float64 for d in dts):
        # Integers turned into floats (int / 2, int64 + float32, exp of an int) take
        # the default float, as in PyTorch and JAX; float64 only comes from float64.
        result = np.dtype(np.float32)
    return result


class _AlongAxis0:
    def __init__(self, fn: Any):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", str(fn))

    def __call__(self, a):
        return self.fn(a, axis=0)

    def __eq__(self, other):
        return isinstance(other, _AlongAxis0) and other.fn is self.fn

    def __hash__(self):
        return hash(self.fn)


def reduction_result(fn: Any, dt: np.dtype) -> np.dtype:
    """The dtype of a NumPy reduction/scan `fn` (e.g. `np.sum` of int32 is int64)."""
    return ufunc_result(_AlongAxis0(fn), dt)
