"""Tidal: a compiler for dynamic deep learning with recurrent tensors.

    import tidal as td
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), dtype="float32", domain=(t,))
        s = td.recurrent(shape=(4,), dtype="float32", domain=(t,))
        s[0] = x[0]
        s[t + 1] = s[t] * 0.5 + x[t + 1]
        p.output("s", s)
    print(p.mlir())
    p.compile().run(bounds={T: 10}, inputs={"x": arr})

Gradients: `td.grad(loss, [W])` (tidal.autodiff); layers: `td.nn`; optimizers
whose state is a recurrence over an iteration dim: `td.optim`.

The public API is `tidal.frontend`'s (`td.Program`, `td.input`, `td.param`,
`td.recurrent`, `td.udf`, the ops, `td.TidalError`, ...). `td.min`/`td.max`
are the symbolic min/max on integer expressions and reductions (or
elementwise) on tensors; `td.Dim`, `td.dims`, `td.select`, `td.simplify` and
`td.to_text` come from `tidal.symbolic`.

The frontend is imported on first use of one of these names, so importing a
lower layer (`tidal.symbolic`, `tidal.dialects`, ...) does not import it.
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_SYMBOLIC = ("Dim", "Expr", "Slice", "dims", "select", "simplify", "to_text")
# td.nn.Linear, td.optim.Adam, td.models.Llama, ...; the layers below the frontend too, so
# that `from tidal import config` in a layer imports that package, not the frontend
_SUBPACKAGES = ("autodiff", "nn", "optim", "models", "config", "dialects", "passes", "lowering", "runtime")
_AUTODIFF = ("grad",)                        # td.grad(loss, [W])


def _frontend_names() -> list[str]:
    return list(importlib.import_module("tidal.frontend").__all__)


def _star_names() -> list[str]:
    """What `from tidal import *` binds: not the names that would shadow
    builtins (`input`, `sum`, `max`, `slice`, ...; use `td.sum` for those)."""
    import builtins

    return [n for n in [*_SYMBOLIC, *_frontend_names(), *_AUTODIFF] if not hasattr(builtins, n)]


def __getattr__(name: str) -> Any:
    if name in _SYMBOLIC:
        return getattr(importlib.import_module("tidal.symbolic"), name)
    if name in _SUBPACKAGES:
        return importlib.import_module(f"tidal.{name}")
    if name in _AUTODIFF:
        return getattr(importlib.import_module("tidal.autodiff"), name)
    if name.startswith("__"):
        raise AttributeError(name)
    frontend = importlib.import_module("tidal.frontend")
    if name in frontend.__all__:
        return getattr(frontend, name)
    raise AttributeError(f"module 'tidal' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SYMBOLIC) | set(_frontend_names()) | set(_SUBPACKAGES)
                  | set(_AUTODIFF))


class _All(list):
    """`from tidal import *` exports the frontend and the symbolic re-exports
    (computed on first use, so that importing `tidal` stays light), except
    names that shadow builtins."""

    def _names(self) -> list[str]:
        if not list.__len__(self):
            list.extend(self, _star_names())
        return list(list.__iter__(self))

    def __iter__(self):
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __getitem__(self, i):
        return self._names()[i]

    def __contains__(self, name) -> bool:
        return name in self._names()


__all__ = _All()  # type: ignore[assignment]
