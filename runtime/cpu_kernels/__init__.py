"""CPU kernels for what XLA:CPU runs slowly, called from JAX as XLA FFI custom calls.

    from tidal.runtime import cpu_kernels
    c = cpu_kernels.tn_matmul(a, b)       # a: (K, M), b: (K, N) float32 -> a.T @ b
    c = cpu_kernels.tn_matmul(a, b, r)    # a[:r].T @ b[:r] (a last tile's valid rows)
    cpu_kernels.status()                  # "ready: ...so" or why the kernels are not used

`tn_matmul` is the product of a weight gradient summed over rows (sdg-contract's
`h^T @ g`): XLA:CPU runs it on Eigen at about 2/3 of the speed of its plain
products, and PPO's epochs spend 7 ms an iteration in it (tn_matmul.cc says
how the kernel avoids that). The JAX backend calls it for a float32 matmul
whose left operand is the transpose of a 2-D value, on the CPU platform
(runtime/scheduled/opdecode.py); anything else keeps XLA's product.

The C++ source is compiled on first use, with the C++ compiler that built
the dialects (`$CXX`, else `c++`), against the installed jaxlib's FFI headers
(`jax.ffi.include_dir()`), into `$TIDAL_CACHE_DIR` (default
`~/.cache/tidal`)/cpu-kernels (a temporary directory if that cannot be
written), one library per source, jaxlib version and compiler; processes that compile at once each write their own file and
rename it into place. If anything fails (no compiler, no headers) the
kernels are not used and every product stays XLA's; `status()` says why.
`TIDAL_CPU_KERNELS=0` turns them off; `TIDAL_CPU_KERNELS_GENERIC=1` (read
once per process) runs the portable loops instead of the AVX-512 ones.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading

from tidal import config

__all__ = ["tn_matmul", "available", "status", "MIN_SIZE"]

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tn_matmul.cc")
_TARGET, _TARGET_ROWS = "tidal_tn_matmul", "tidal_tn_matmul_rows"
# below this many rows or columns XLA's product is as fast (the kernel works in
# blocks of 8 rows by 32 columns of the result)
MIN_SIZE = 16

_lock = threading.Lock()
_state: dict = {}


def _cache_dir() -> str:
    root = config.cache_dir.value or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "tidal")
    return os.path.join(root, "cpu-kernels")


def _library_path(name: str) -> str:
    """The library's path in the cache directory, or in a per-user temporary one
    when the cache cannot be written (a read-only home)."""
    for folder in (_cache_dir(), os.path.join(tempfile.gettempdir(), f"tidal-cpu-kernels-{os.getuid()}")):
        try:
            os.makedirs(folder, exist_ok=True)
            if os.access(folder, os.W_OK) or os.path.exists(os.path.join(folder, name)):
                return os.path.join(folder, name)
        except OSError:
            continue
    raise OSError("no writable directory for the CPU kernels' library (set TIDAL_CACHE_DIR)")


def _compile(compiler: str, include: str, out: str) -> None:
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=os.path.dirname(out))
    os.close(fd)
    try:
        subprocess.run([compiler, "-O3", "-std=c++17", "-fPIC", "-shared", "-w", "-I", include, "-o", tmp, _SOURCE],
                       check=True, capture_output=True, text=True, timeout=300)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _load() -> bool:
    """Compiles (once per cache) and registers the kernels; False (with the reason
    in status()) when they cannot be used."""
    with _lock:
        if "ok" in _state:
            return _state["ok"]
        _state["ok"], _state["why"] = False, ""
        if not config.cpu_kernels.value:
            _state["why"] = "off (TIDAL_CPU_KERNELS=0)"
            return False
        try:
            import jax
            import jax.ffi
            import jaxlib

            compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
            if not compiler:
                _state["why"] = "no C++ compiler ($CXX, c++ or g++) to build them"
                return False
            include = jax.ffi.include_dir()
            with open(_SOURCE, "rb") as f:
                key = hashlib.sha256(f.read() + f"{jaxlib.__version__}|{compiler}".encode()).hexdigest()[:16]
            path = _library_path(f"libtidal_cpu_kernels-{key}.so")
            if not os.path.exists(path):
                _compile(compiler, include, path)
            lib = ctypes.CDLL(path)
            jax.ffi.register_ffi_target(_TARGET, jax.ffi.pycapsule(lib.TidalTnMatmul), platform="cpu")
            jax.ffi.register_ffi_target(_TARGET_ROWS, jax.ffi.pycapsule(lib.TidalTnMatmulRows), platform="cpu")
        except subprocess.CalledProcessError as e:
            _state["why"] = f"compiling {_SOURCE} failed: {(e.stderr or '').strip()[-500:]}"
            return False
        except Exception as e:  # noqa: BLE001 - any failure leaves XLA's products in place
            _state["why"] = f"{type(e).__name__}: {e}"
            return False
        _state["ok"], _state["lib"], _state["why"] = True, lib, f"ready: {path}"
        return True


def available() -> bool:
    """Whether the kernels can be called (compiling and registering them on the first call)."""
    return _load()


def status() -> str:
    _load()
    return _state["why"]


def tn_matmul(a, b, rows=None):
    """a.T @ b for float32 JAX arrays a (K, M) and b (K, N), by the FFI kernel;
    with `rows` (an integer scalar, traced or not), a[:rows].T @ b[:rows], rows
    clamped to [0, K]: the product of both operands zeroed past `rows`, whatever
    they hold there. None when the kernels are unavailable or the shapes are
    not that."""
    import jax
    import jax.numpy as jnp

    if a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[0] or a.dtype != jnp.float32 \
            or b.dtype != jnp.float32 or not _load():
        return None
    out = jax.ShapeDtypeStruct((a.shape[1], b.shape[1]), jnp.float32)
    if rows is None:
        return jax.ffi.ffi_call(_TARGET, out)(a, b)
    return jax.ffi.ffi_call(_TARGET_ROWS, out)(a, b, jnp.asarray(rows).astype(jnp.int32).reshape(()))
