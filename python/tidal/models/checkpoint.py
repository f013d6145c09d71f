"""Hugging Face checkpoint directories: `config.json` and safetensors weights.

    config = read_config(directory)                       # the parsed config.json
    tensors = open_safetensors(directory)                 # {name: memory-mapped array}

`open_safetensors` reads `model.safetensors`, or the shards listed by
`model.safetensors.index.json` (`{"weight_map": {name: file}}`). Tensors are
NumPy views of the memory-mapped files: nothing is read until used, and a
tensor kept in its dtype is never copied on the host. bfloat16 tensors come
back as `ml_dtypes.bfloat16` arrays. Malformed files are `TidalError`s naming
the file and the tensor.
"""
from __future__ import annotations

import json
import mmap
import os
import struct
from typing import Any

import numpy as np

from .errors import model_error

__all__ = ["read_config", "open_safetensors", "SafetensorsFile", "aligned_copy", "ALIGN"]

_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
           "U8": "u1", "BOOL": "?"}
_MAX_HEADER = 100 * 2 ** 20
# jax's CPU backend aliases a read-only host buffer aligned to this many bytes (no copy)
ALIGN = 64


def _bfloat16() -> np.dtype:
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


def read_config(directory: Any) -> dict:
    """config.json of a checkpoint directory, as a dict."""
    directory = os.fspath(directory)
    path = os.path.join(directory, "config.json")
    if not os.path.isdir(directory):
        raise model_error(f"no checkpoint directory {directory!r}",
                         "give the directory holding config.json and model.safetensors")
    if not os.path.isfile(path):
        raise model_error(f"{directory!r} has no config.json", "a Hugging Face checkpoint directory has one")
    try:
        with open(path) as f:
            config = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise model_error(f"cannot read {path!r}: {e}", "check the file") from None
    if not isinstance(config, dict):
        raise model_error(f"{path!r} is not a JSON object", "check the file")
    return config


class SafetensorsFile:
    """One memory-mapped safetensors file: `names`, `info(name)`, `array(name)`."""

    def __init__(self, path: str):
        self.path = path
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        except OSError as e:
            raise model_error(f"cannot open {path!r}: {e}", "check the checkpoint's files") from None
        if size < 8:
            raise self._bad(f"{size} bytes, too short for the header length")
        (n,) = struct.unpack("<Q", self._map[:8])
        if n > min(_MAX_HEADER, size - 8):
            raise self._bad(f"header length {n} exceeds the file ({size} bytes)")
        try:
            header = json.loads(self._map[8:8 + n].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise self._bad(f"the header is not JSON ({e})") from None
        if not isinstance(header, dict):
            raise self._bad("the header is not a JSON object")
        header.pop("__metadata__", None)
        self._header, self._start, self._size = header, 8 + n, size - 8 - n
        self.names = list(header)

    def _bad(self, reason: str) -> Exception:
        return model_error(f"{self.path!r} is not a valid safetensors file: {reason}",
                          "safetensors: 8-byte little-endian header length, JSON header, raw data")

    def info(self, name: str) -> tuple[np.dtype, tuple, int, int]:
        """(dtype, shape, begin, end) of a tensor, checked against the file."""
        info = self._header[name]
        try:
            kind, shape, (begin, end) = info["dtype"], tuple(int(s) for s in info["shape"]), info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise self._bad(f"tensor {name!r} lacks dtype/shape/data_offsets: {info!r}") from None
        if kind == "BF16":
            dtype = _bfloat16()
        elif kind in _DTYPES:
            dtype = np.dtype(_DTYPES[kind])
        else:
            raise self._bad(f"tensor {name!r} has dtype {kind!r}, which this reader does not know")
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if any(s < 0 for s in shape) or not (isinstance(begin, int) and isinstance(end, int)) \
                or not 0 <= begin <= end <= self._size or end - begin != count * dtype.itemsize:
            raise self._bad(f"tensor {name!r}: data_offsets {[begin, end]} do not hold {kind} {list(shape)}")
        return dtype, shape, begin, end

    def array(self, name: str) -> np.ndarray:
        """The tensor as a read-only view of the mapped file (native byte order)."""
        dtype, shape, begin, end = self.info(name)
        if begin == end:
            return np.zeros(shape, dtype)
        arr = np.frombuffer(self._map, dtype=dtype, count=(end - begin) // dtype.itemsize,
                            offset=self._start + begin).reshape(shape)
        return arr if arr.dtype.isnative else arr.astype(arr.dtype.newbyteorder("="))

    def read(self, name: str, dtype: Any = None, align: int = ALIGN) -> np.ndarray:
        """A read-only copy of the tensor (as `dtype`, converted once) in an `align`-byte
        aligned buffer, read with pread straight into it (no page of the mapping is
        touched): what a device can use in place when the file's own layout is not aligned."""
        src, shape, begin, end = self.info(name)
        dtype = src if dtype is None else np.dtype(dtype)
        raw = _aligned(end - begin, align)
        if end > begin:
            with open(self.path, "rb") as f:
                got = os.preadv(f.fileno(), [raw], self._start + begin)
            if got != end - begin:
                raise self._bad(f"tensor {name!r}: read {got} of {end - begin} bytes")
        out = raw.view(src).reshape(shape)
        if dtype != src or not out.dtype.isnative:
            return aligned_copy(out, dtype.newbyteorder("="), align)
        out.flags.writeable = False
        return out

    def aligned(self, name: str, align: int = ALIGN) -> bool:
        """Whether the tensor's bytes in the mapping start on an `align`-byte boundary."""
        _, _, begin, _ = self.info(name)
        return (self._start + begin) % align == 0 and mmap.ALLOCATIONGRANULARITY % align == 0


def _aligned(nbytes: int, align: int) -> np.ndarray:
    """An uninitialised uint8 buffer of `nbytes` starting on an `align`-byte boundary."""
    raw = np.empty(nbytes + align, np.uint8)
    start = (-raw.ctypes.data) % align
    return raw[start:start + nbytes]


def aligned_copy(w: np.ndarray, dtype: Any, align: int = ALIGN) -> np.ndarray:
    """A read-only copy of `w` as `dtype` in an `align`-byte aligned buffer: what jax's
    CPU backend binds in place (an unaligned or writeable array it would copy again)."""
    dtype = np.dtype(dtype)
    out = _aligned(w.size * dtype.itemsize, align).view(dtype).reshape(w.shape)
    np.copyto(out, w, casting="unsafe")
    out.flags.writeable = False
    return out


def open_safetensors(directory: Any) -> dict[str, tuple[SafetensorsFile, str]]:
    """{tensor name: (file, name)} of a checkpoint directory: model.safetensors, or
    the shards of model.safetensors.index.json."""
    directory = os.fspath(directory)
    single = os.path.join(directory, "model.safetensors")
    index = os.path.join(directory, "model.safetensors.index.json")
    if os.path.isfile(single):
        f = SafetensorsFile(single)
        return {name: (f, name) for name in f.names}
    if not os.path.isfile(index):
        raise model_error(f"{directory!r} has neither model.safetensors nor model.safetensors.index.json",
                         "save the checkpoint with safe_serialization=True")
    try:
        with open(index) as fh:
            weight_map = json.load(fh)["weight_map"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as e:
        raise model_error(f"cannot read the shard index {index!r}: {e}",
                         'it must hold {"weight_map": {tensor name: file name}}') from None
    files: dict[str, SafetensorsFile] = {}
    out = {}
    for name, file in weight_map.items():
        if file not in files:
            path = os.path.join(directory, file)
            if os.path.basename(file) != file or not os.path.isfile(path):
                raise model_error(f"the shard index names {file!r}, which is not a file of {directory!r}",
                                 "check the checkpoint's files")
            files[file] = SafetensorsFile(path)
        if name not in files[file].names:
            raise model_error(f"the shard index puts {name!r} in {file!r}, which does not hold it",
                             "check the checkpoint's files")
        out[name] = (files[file], name)
    return out
