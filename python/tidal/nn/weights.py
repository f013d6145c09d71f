"""Weights on disk: `.npz` and `.safetensors` files as {name: NumPy array}.

    state = td.nn.load_weights("llama.safetensors")   # {"layers.0.attn.q.weight": array, ...}
    model.load_state_dict(state)                       # before p.compile()
    td.nn.save_weights("llama.safetensors", model.state_dict())

A safetensors file is parsed with NumPy alone: an 8-byte little-endian header
length N, N bytes of JSON `{name: {"dtype": "F32", "shape": [..],
"data_offsets": [begin, end]}, "__metadata__": {...}}` (offsets relative to the
end of the header), then the raw little-endian bytes. BF16 tensors are widened
to float32 exactly, or kept as `td.bfloat16` (`ml_dtypes.bfloat16`) arrays with
`load_weights(path, keep_bfloat16=True)`; `save_weights` writes bfloat16 arrays
as BF16 (an `.npz` cannot hold them: NumPy saves them as raw void data).
Malformed files are `TidalError`s naming the file and the tensor.
"""
from __future__ import annotations

import json
import os
import struct
import zipfile
from typing import Any, Mapping

import numpy as np

from tidal.frontend.dtypes import BFLOAT16
from tidal.frontend.errors import TidalError

__all__ = ["load_weights", "save_weights", "SAFETENSORS_DTYPES"]

SAFETENSORS_DTYPES = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
    "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?",
}
_NAMES = {np.dtype(v).newbyteorder("="): k for k, v in SAFETENSORS_DTYPES.items()}
_NAMES[BFLOAT16] = "BF16"
_MAX_HEADER = 100 * 2 ** 20


def load_weights(path: Any, keep_bfloat16: bool = False) -> dict[str, np.ndarray]:
    """{name: array} from a `.npz` or `.safetensors` file (chosen by the suffix;
    any other suffix is sniffed: a zip archive is read as npz). BF16 tensors
    come back as float32, or as bfloat16 with `keep_bfloat16=True`."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise TidalError(f"no weights file {path!r}", "give the path of a .npz or .safetensors file")
    if path.endswith(".npz") or (not path.endswith(".safetensors") and zipfile.is_zipfile(path)):
        return _load_npz(path)
    return _load_safetensors(path, keep_bfloat16)


def save_weights(path: Any, state: Mapping[str, Any]) -> str:
    """Writes {name: array} as `.npz` or (any other suffix) `.safetensors`; returns the path."""
    path = os.fspath(path)
    arrays = {}
    for name, value in state.items():
        if not isinstance(name, str) or not name:
            raise TidalError(f"weight names must be non-empty strings, got {name!r}",
                             "use names like 'layers.0.attn.q.weight'")
        arrays[name] = np.ascontiguousarray(value)
    if path.endswith(".npz"):
        bf16 = [name for name, arr in arrays.items() if arr.dtype == BFLOAT16]
        if bf16:
            raise TidalError(f"weight {bf16[0]!r} is bfloat16, which an .npz file cannot hold "
                             "(NumPy would save raw void data)", "save as .safetensors, or cast to float32")
        np.savez(path, **arrays)
        return path
    header: dict[str, Any] = {}
    offset = 0
    for name, arr in arrays.items():
        key = arr.dtype.newbyteorder("=") if arr.dtype.byteorder not in "|=" else arr.dtype
        if key not in _NAMES:
            raise TidalError(f"weight {name!r} has dtype {arr.dtype}, which safetensors cannot hold",
                             f"use one of {sorted(SAFETENSORS_DTYPES)} (or save as .npz)")
        header[name] = {"dtype": _NAMES[key], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + arr.nbytes]}
        offset += arr.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)                     # the format aligns the data to 8 bytes
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for arr in arrays.values():
            if arr.dtype == BFLOAT16:   # its bits as uint16, which NumPy orders little-endian
                arr = arr.view(np.uint16)
            f.write(arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes())
    return path


def _load_npz(path: str) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: np.array(data[name]) for name in data.files}
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise TidalError(f"cannot read the npz file {path!r}: {e}", "write it with np.savez") from None


def _load_safetensors(path: str, keep_bfloat16: bool = False) -> dict[str, np.ndarray]:
    with open(path, "rb") as f:
        raw = f.read()

    def bad(reason: str) -> TidalError:
        return TidalError(f"{path!r} is not a valid safetensors file: {reason}",
                          "safetensors: 8-byte little-endian header length, JSON header, raw data")

    if len(raw) < 8:
        raise bad(f"{len(raw)} bytes, too short for the header length")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > min(_MAX_HEADER, len(raw) - 8):
        raise bad(f"header length {n} exceeds the file ({len(raw)} bytes)")
    try:
        header = json.loads(raw[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise bad(f"the header is not JSON ({e})") from None
    if not isinstance(header, dict):
        raise bad("the header is not a JSON object")
    data = memoryview(raw)[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            kind, shape, (begin, end) = info["dtype"], [int(s) for s in info["shape"]], info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise bad(f"tensor {name!r} lacks dtype/shape/data_offsets: {info!r}") from None
        if kind == "BF16":
            dtype = np.dtype("<u2")
        elif kind in SAFETENSORS_DTYPES:
            dtype = np.dtype(SAFETENSORS_DTYPES[kind])
        else:
            raise bad(f"tensor {name!r} has dtype {kind!r}, which this reader does not know")
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if any(s < 0 for s in shape) or not (isinstance(begin, int) and isinstance(end, int)) \
                or not 0 <= begin <= end <= len(data) or end - begin != count * dtype.itemsize:
            raise bad(f"tensor {name!r}: data_offsets {[begin, end]} do not hold {kind} {shape} "
                      f"({count * dtype.itemsize} bytes; {len(data)} bytes of data)")
        arr = np.frombuffer(data[begin:end], dtype=dtype).reshape(shape)
        if kind == "BF16":
            arr = arr.astype(np.uint16)   # native order
            arr = arr.view(BFLOAT16) if keep_bfloat16 else (arr.astype(np.uint32) << 16).view(np.float32)
        out[name] = arr.astype(arr.dtype.newbyteorder("=")) if arr.dtype != BFLOAT16 else arr
    return out
