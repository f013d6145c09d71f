"""`Module` (parameter bookkeeping) and `parameter` (trainable tensors)."""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from tidal.frontend import creation as C
from tidal.frontend.errors import TidalError
from tidal.frontend.program import current_program
from tidal.frontend.tensor import RecurrentTensor

__all__ = ["Module", "parameter", "unique_name", "unique_prefix", "make_rng", "iteration_dim"]


def unique_name(program: Any, base: str) -> str:
    """`base`, or `base_1`, `base_2`, ... : the first param name not used yet."""
    used = program._names["param"]
    if base not in used:
        return base
    k = 1
    while f"{base}_{k}" in used:
        k += 1
    return f"{base}_{k}"


def unique_prefix(base: str) -> str:
    """A module name no parameter of the active program starts with: `linear`, `linear_1`, ..."""
    used = current_program(what="a td.nn module")._names["param"]

    def taken(prefix: str) -> bool:
        return any(n == prefix or n.startswith(prefix + ".") for n in used)

    if not taken(base):
        return base
    k = 1
    while taken(f"{base}_{k}"):
        k += 1
    return f"{base}_{k}"


def make_rng(rng: Any = None, seed: int | None = None) -> np.random.Generator:
    if rng is not None:
        if not isinstance(rng, np.random.Generator):
            raise TidalError(f"rng must be a numpy Generator, got {type(rng).__name__}",
                             "pass rng=np.random.default_rng(seed)")
        return rng
    return np.random.default_rng(0 if seed is None else seed)


def iteration_dim(program: Any, domain: tuple, dim: Any = None):
    """The dim an optimizer steps along: `dim`, or the only dim of `domain`."""
    if dim is not None:
        return program.dim_of(dim, "iteration dimension")
    if len(domain) == 1:
        return domain[0]
    return None


def parameter(name: str, value: Any, domain: Any = (), dim: Any = None,
              dtype: Any = None) -> RecurrentTensor:
    """A trainable tensor initialised to `value` (see the package doc).

    With a non-empty `domain`, a recurrent tensor over it whose first case
    is `W[dim = 0] = td.param(name, value)`; `dim` (default: the only dim of
    the domain) is the iteration dim an optimizer steps along.
    """
    from tidal.autodiff import mark_parameter

    program = current_program(what="td.nn.parameter")
    arr = np.asarray(value)
    if dtype is None:
        dtype = arr.dtype if arr.dtype.kind == "f" else np.float32
    arr = arr.astype(dtype)
    name = unique_name(program, name)
    dom = program.as_domain(domain, f"domain of parameter {name!r}")
    if not dom:
        return mark_parameter(C.param(name, arr))
    d = iteration_dim(program, dom, dim)
    if d is None or d not in dom:
        raise TidalError(f"parameter {name!r} has domain ({', '.join(x.step.name for x in dom)}) "
                         "but no iteration dimension", "pass dim=i (one of the domain's dims)")
    w = C.recurrent(shape=arr.shape, dtype=arr.dtype, domain=dom, name=name)
    key = tuple(0 if x == d else slice(None) for x in dom)
    w[key] = C.param(name, arr)
    return mark_parameter(w)


class Module:
    """Base class: attributes that are tensors marked as parameters, or modules, or
    lists of modules, are collected by `parameters()` (in attribute order)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, RecurrentTensor]]:
        for key, value in vars(self).items():
            yield from _named(value, prefix + key)

    def parameters(self) -> list[RecurrentTensor]:
        return [p for _, p in self.named_parameters()]

    def __repr__(self) -> str:
        shapes = ", ".join(f"{n}: {tuple(str(s) for s in p.shape)}" for n, p in self.named_parameters())
        return f"{type(self).__name__}({shapes})"


def _named(value: Any, name: str) -> Iterator[tuple[str, RecurrentTensor]]:
    from tidal.autodiff import is_parameter

    if isinstance(value, Module):
        yield from value.named_parameters(name + ".")
    elif isinstance(value, (list, tuple)):
        for k, v in enumerate(value):
            yield from _named(v, f"{name}.{k}")
    elif isinstance(value, RecurrentTensor) and is_parameter(value):
        yield name, value
