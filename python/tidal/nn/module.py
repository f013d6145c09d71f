"""`Module` (parameter bookkeeping) and `parameter` (trainable tensors)."""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from tidal.frontend import creation as C
from tidal.frontend.dtypes import is_float
from tidal.frontend.errors import TidalError
from tidal.frontend.program import current_program
from tidal.frontend.tensor import RecurrentTensor

__all__ = ["Module", "parameter", "unique_name", "unique_prefix", "make_rng", "iteration_dim",
           "given_tensor", "param_node"]


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
        dtype = arr.dtype if is_float(arr.dtype) else np.float32
    arr = arr.astype(dtype, copy=False)   # no copy: the executable reads the values when it binds them
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


def _shape_text(shape: tuple) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def given_tensor(value: Any, shape: tuple, what: str, dtype: Any = None, transpose_hint: bool = True) -> Any:
    """A weight the user gave (`weight=W`), checked: a floating-point NumPy array
    (or anything `np.asarray` takes) of exactly `shape`, returned as an array
    (cast to `dtype` when one is given, else its own float dtype); or a
    `RecurrentTensor` (e.g. a `td.input` fed at run time) of that static shape,
    returned as it is. Errors are `TidalError`s at the user's line."""
    shape = tuple(int(s) for s in shape)
    if isinstance(value, RecurrentTensor):
        from tidal.frontend.shapes import static

        got = tuple(static(s) for s in value.shape)
        if got != shape:
            raise TidalError(f"{what} has shape {_shape_text(tuple(value.shape))}, expected "
                             f"{_shape_text(shape)}", _transpose_hint(got, shape, transpose_hint))
        if not is_float(value.dtype):
            raise TidalError(f"{what} has dtype {value.dtype}, expected a floating-point dtype",
                             "declare it float32 (or cast it with .astype('float32'))")
        return value
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as e:
        raise TidalError(f"{what} is not an array: {e}", "pass a NumPy array") from None
    if not is_float(arr.dtype):
        raise TidalError(f"{what} has dtype {arr.dtype}, expected a floating-point array",
                         "pass float32 weights (e.g. W.astype(np.float32))")
    if arr.shape != shape:
        raise TidalError(f"{what} has shape {_shape_text(arr.shape)}, expected {_shape_text(shape)}",
                         _transpose_hint(arr.shape, shape, transpose_hint))
    return arr.astype(dtype if dtype is not None else arr.dtype, copy=False)


def _transpose_hint(got: tuple, shape: tuple, transpose: bool = True) -> str:
    if transpose and len(got) == 2 == len(shape) and got == shape[::-1]:
        return ("Tidal's Linear weights are (in_features, out_features) and compute x @ weight; "
                "PyTorch and Hugging Face store (out_features, in_features): pass W.T")
    return f"pass an array of shape {_shape_text(shape)}"


def param_node(x: RecurrentTensor) -> Any:
    """The `td.param` node holding a parameter's value: the tensor's own node, or
    (iteration-varying weights) the param of its first case `W[0] = td.param(...)`;
    None when the value is not a param (a `td.input` given as a weight)."""
    if x.op == "param":
        return x.node
    if x.op == "recurrent":
        for case in x.cases:
            if isinstance(case.value, RecurrentTensor) and case.value.op == "param":
                return case.value.node
    return None


class Module:
    """Base class: attributes that are tensors marked as parameters, or modules, or
    lists of modules, are collected by `parameters()` (in attribute order, each
    tensor once: a tied weight keeps its first name).

    `state_dict()` returns {name: NumPy array} of the parameters' current values
    and `load_state_dict(d)` replaces them (names as `named_parameters()` gives
    them: `layers.0.attn.q.weight`), like PyTorch's: missing or unexpected keys
    and shape mismatches are errors (with `strict=False`, keys may be missing or
    unexpected and the two lists are returned). Values are stored in the
    program's `td.param`s and bound when it is compiled; to change the weights of
    a compiled program, use the executable's `exe.load_state_dict` (no recompilation).
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, RecurrentTensor]]:
        seen: set[int] = set()
        for key, value in vars(self).items():
            for name, p in _named(value, prefix + key):
                if id(p) not in seen:
                    seen.add(id(p))
                    yield name, p

    def state_dict(self) -> dict[str, np.ndarray]:
        """{name: a copy of the parameter's value} for every parameter held by a td.param."""
        out = {}
        for name, p in self.named_parameters():
            node = param_node(p)
            if node is not None and node.attrs["value"] is not None:   # declared by shape: no value yet
                out[name] = np.array(node.attrs["value"])
        return out

    def load_state_dict(self, state: Any, strict: bool = True) -> tuple[list[str], list[str]]:
        """Replaces the parameters' values by `state[name]` (see the class doc);
        returns (missing, unexpected) key lists. Nothing changes when it raises."""
        if not hasattr(state, "keys") or not hasattr(state, "__getitem__"):
            raise TidalError("load_state_dict needs a mapping of names to arrays, got "
                             f"{type(state).__name__}",
                             "pass a dict (e.g. td.nn.load_weights('model.safetensors'))")
        params = dict(self.named_parameters())
        missing = [n for n in params if n not in state]
        unexpected = [str(k) for k in state.keys() if k not in params]
        if strict and (missing or unexpected):
            parts = []
            if missing:
                parts.append(f"missing key{'s' if len(missing) > 1 else ''} {_names(missing)}")
            if unexpected:
                parts.append(f"unexpected key{'s' if len(unexpected) > 1 else ''} {_names(unexpected)}")
            raise TidalError(f"load_state_dict into {type(self).__name__}: " + "; ".join(parts),
                             f"the module's keys are {_names(list(params))}; pass strict=False "
                             "to load a subset")
        updates = []
        for name, p in params.items():
            if name not in state:
                continue
            node = param_node(p)
            if node is None:
                raise TidalError(f"load_state_dict: parameter {name!r} is not a td.param "
                                 f"({p.op}), so it has no stored value",
                                 "feed it at run time instead (inputs={...})")
            out = node.outputs[0]
            shape = tuple(int(str(s)) for s in out.shape)
            arr = given_tensor(state[name], shape, f"state_dict[{name!r}]")
            updates.append((node, np.array(arr, dtype=out.dtype, order="C")))
        for node, arr in updates:
            node.attrs["value"] = arr
        return missing, unexpected

    def parameters(self) -> list[RecurrentTensor]:
        return [p for _, p in self.named_parameters()]

    def __repr__(self) -> str:
        shapes = ", ".join(f"{n}: {tuple(str(s) for s in p.shape)}" for n, p in self.named_parameters())
        return f"{type(self).__name__}({shapes})"


def _names(keys: list[str], limit: int = 8) -> str:
    shown = ", ".join(repr(k) for k in keys[:limit])
    return shown + (f", ... ({len(keys)} in all)" if len(keys) > limit else "")


def _named(value: Any, name: str) -> Iterator[tuple[str, RecurrentTensor]]:
    from tidal.autodiff import is_parameter

    if isinstance(value, Module):
        yield from value.named_parameters(name + ".")
    elif isinstance(value, (list, tuple)):
        for k, v in enumerate(value):
            yield from _named(v, f"{name}.{k}")
    elif isinstance(value, RecurrentTensor) and is_parameter(value):
        yield name, value
