"""Tidal's MLIR dialects for Python: `tidal` (symbolic types and attributes),
`rt` (recurrent tensors as traced) and `sdg` (symbolic dependence graphs).

    from tidal.dialects import make_context, rt, sdg
    ctx = make_context()          # an mlir.ir.Context with all three loaded

The dialects are C++ (declared in ODS) and share one MLIR with `mlir.ir`.
"""
from __future__ import annotations

import os

from mlir import ir

from . import _tidal_dialects
from . import _tidal_enum_gen as enums  # registers the enum attribute builders

__all__ = ["register_dialects", "make_context", "plugin_path", "enums", "ops_named"]

# MLIR's Python finds an op's class by importing `<prefix>.<dialect>`: make
# `tidal.dialects.rt` / `tidal.dialects.sdg` discoverable.
from mlir._mlir_libs import _mlir as _cext  # noqa: E402

if "tidal.dialects" not in _cext.globals.dialect_search_modules:
    _cext.globals.append_dialect_search_prefix("tidal.dialects")


def register_dialects(context: ir.Context | None = None, load: bool = True) -> None:
    """Registers (and by default loads) tidal, rt and sdg in `context`."""
    _tidal_dialects.register_dialects(context, load)


def make_context() -> ir.Context:
    """A new context with Tidal's dialects and MLIR's upstream dialects."""
    ctx = ir.Context()
    register_dialects(ctx)
    return ctx


def plugin_path() -> str:
    """Path of the dialect plugin for `mlir-opt --load-dialect-plugin=...`."""
    # Installed beside the extension module (not beside this file in an
    # editable install).
    path = os.path.join(os.path.dirname(_tidal_dialects.__file__), "libTidalDialectPlugin.so")
    if not os.path.exists(path):
        raise FileNotFoundError(f"dialect plugin not found at {path}: reinstall tidal")
    return path


def ops_named(root, *names: str) -> list[ir.Operation]:
    """The ops called one of `names` under `root` (a module, an op or an op
    view), in pre-order, without looking inside a match (for example every
    `sdg.graph` of a module)."""
    root = root.operation if hasattr(root, "operation") else root
    found = []

    def visit(op):
        if op.name in names:
            found.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found
