"""The compile cache: compiling the same program again is a hit.

In one process, `p.compile()` of a program equal to one compiled before (the
same traced `rt` module, locations included, the same constant values, the
same UDF functions, backend and passes) returns a new Executable sharing the
earlier one's compiled program: no passes, no isl
scheduling, no code generation, and the XLA kernels already compiled stay
compiled. Parameters are not part of the key (only their names, shapes and
dtypes are in the IR): a program with other weights is a hit, and its
Executable binds its own weights. The cache keeps the `CAPACITY` most recent compilations. A
compile that dumps its stages (`dump=`, `TIDAL_DUMP`) always compiles.

Across processes, `enable_persistent_cache(directory)` turns on JAX's
persistent compilation cache there (opt-in: it sets JAX's global
`jax_compilation_cache_dir` and caches every kernel, however quick to
compile), so a second process loads the XLA executables instead of
compiling them, and loads the isl schedules of the graphs it compiled
before instead of computing them (checked against the graph, recomputed when
they do not fit); `TIDAL_CACHE_DIR=directory` does the same at the first compile.
"""
from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from typing import Any

import numpy as np
from mlir import ir

from tidal import config
from tidal.dialects.element_types import dense_array

__all__ = ["program_key", "lookup", "store", "clear", "enable_persistent_cache", "CAPACITY"]

CAPACITY = 8
_ENTRIES: "OrderedDict[tuple, Any]" = OrderedDict()


def program_key(rt_module: Any, backend: str, passes: tuple, udfs: dict) -> tuple | None:
    """What a compilation depends on: the module's text (large constants
    elided) and a digest of every dense attribute's values; UDFs by identity
    (the cache holds them, so an id is never reused while its entry lives).
    None (do not cache) for a module whose values live in resources."""
    op = rt_module.operation
    text = op.get_asm(large_elements_limit=64, enable_debug_info=True)
    if "dense_resource" in text:   # values this digest would not see: no caching
        return None
    digest = hashlib.sha256(text.encode())

    def visit(inner):
        attrs = inner.attributes
        for i in range(len(attrs)):
            attr = attrs[i].attr
            if isinstance(attr, ir.DenseElementsAttr):   # what the text elided
                digest.update(np.ascontiguousarray(dense_array(attr)).tobytes())
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return (digest.hexdigest(), backend, passes, tuple(sorted(udfs.items(), key=lambda kv: kv[0])))


def lookup(key: tuple) -> Any:
    entry = _ENTRIES.get(key)
    if entry is not None:
        _ENTRIES.move_to_end(key)
    return entry


def store(key: tuple, entry: Any) -> None:
    _ENTRIES[key] = entry
    _ENTRIES.move_to_end(key)
    while len(_ENTRIES) > CAPACITY:
        _ENTRIES.popitem(last=False)


def clear() -> None:
    """Forget every cached compilation of this process."""
    _ENTRIES.clear()


def enable_persistent_cache(directory: str | os.PathLike) -> None:
    """Keep XLA executables in `directory` across processes (JAX's persistent
    compilation cache; this sets JAX's global configuration), and the isl
    schedules of compiled graphs in `directory/schedules`
    (tidal.lowering.schedule_cache)."""
    import jax

    from tidal.lowering import schedule_cache

    os.makedirs(directory, exist_ok=True)
    schedule_cache.set_directory(os.path.join(directory, "schedules"))
    jax.config.update("jax_compilation_cache_dir", os.fspath(directory))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def persistent_cache_from_environment() -> None:
    directory = config.cache_dir.value
    if directory:
        import jax

        from tidal.lowering import schedule_cache

        if jax.config.jax_compilation_cache_dir != directory or \
                schedule_cache.directory() != os.path.join(directory, "schedules"):
            enable_persistent_cache(directory)
