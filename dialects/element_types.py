"""MLIR element types as NumPy dtypes, and dense attributes as NumPy arrays.

    numpy_dtype("bf16") == BFLOAT16          # ml_dtypes.bfloat16
    dense_array(attr)                        # the attribute's values, bf16 included
    dense_attr(arr, element_type)            # and back, from the array's buffer

NumPy has no bfloat16; `ml_dtypes` (a dependency of jax) adds it as a NumPy dtype,
which jax.numpy uses too. Its `kind` is "V", not "f", so `is_float` (not
`dtype.kind == "f"`) says whether a dtype is a float. MLIR's Python bindings cannot
expose bf16 storage through the buffer protocol (`np.array(attr)` of a bf16
attribute is an object array of the attribute itself), so `dense_array` reads its
raw bytes (`_tidal_dialects.dense_raw_data`) and views them as bfloat16.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from mlir import ir

from . import _tidal_dialects

__all__ = ["BFLOAT16", "NUMPY_DTYPES", "MLIR_NAMES", "numpy_dtype", "is_float", "dense_array", "dense_attr"]

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
NUMPY_DTYPES = {
    "i1": np.dtype(np.bool_), "i8": np.dtype(np.int8), "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32), "i64": np.dtype(np.int64), "f16": np.dtype(np.float16),
    "bf16": BFLOAT16, "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
}
MLIR_NAMES = {v: k for k, v in NUMPY_DTYPES.items()}


def numpy_dtype(name: str) -> np.dtype:
    """The NumPy dtype of an MLIR element type name (`f32`, `bf16`, `i1`, ...)."""
    return NUMPY_DTYPES[name]


def is_float(dt: Any) -> bool:
    """Floating point, bfloat16 included (whose NumPy kind is "V")."""
    dt = np.dtype(dt)
    return dt.kind == "f" or dt == BFLOAT16


def dense_array(attr: ir.Attribute) -> np.ndarray:
    """The values of a DenseElementsAttr, shaped as its type. bf16 is read from
    the attribute's raw bytes; other types through the bindings' buffer (a view
    of the attribute's storage, which it keeps alive, for numbers; bit-packed
    bools come back unpacked)."""
    attr = ir.DenseElementsAttr(attr)
    shape = tuple(attr.type.shape)
    if isinstance(attr.type.element_type, ir.BF16Type):
        flat = np.frombuffer(_tidal_dialects.dense_raw_data(attr), dtype="<u2").view(BFLOAT16)
        if attr.is_splat:
            return np.full(shape, flat[0], dtype=BFLOAT16)
        return flat.reshape(shape)
    element = attr.type.element_type
    if isinstance(element, ir.IntegerType) and element.width == 1:
        return np.array(attr).reshape(shape)
    return np.asarray(attr).reshape(shape)


def dense_attr(arr: np.ndarray, element_type: ir.Type) -> ir.Attribute:
    """A DenseElementsAttr of `element_type` holding `arr` (copied from its buffer;
    bf16 through its bits, which the bindings take as the raw storage)."""
    arr = np.ascontiguousarray(arr)
    if arr.dtype == BFLOAT16:
        arr = arr.view("<u2")
    return ir.DenseElementsAttr.get(arr, type=element_type)
