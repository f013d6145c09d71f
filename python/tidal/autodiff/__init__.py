"""Symbolic automatic differentiation of recurrent-tensor programs.

    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        W = td.param("W", np.eye(3, dtype=np.float32))
        h = td.recurrent(shape=(3,), domain=(t,))
        h[0] = td.tanh(x[0] @ W)
        h[t + 1] = td.tanh(x[t + 1] @ W + h[t])
        loss = (h[0:T] ** 2).sum()
        (dW,) = td.grad(loss, [W])           # an RT in the same program
        p.output("dW", dW)

`td.grad(loss, wrt)` returns gradients (RTs); `loss.backward(inputs)` does the
same and records them so that `x.grad` returns them (the optimizers of
`td.optim` read `.grad` when `step()` is called without gradients).
`core.py` documents the semantics, `temporal.py` the temporal rules (inverse
dependences, backward recurrences), `rules.py` the spatial VJPs.
"""
from __future__ import annotations

from typing import Any

from tidal.frontend.dtypes import is_float

from .core import grad

__all__ = ["grad", "backward", "grad_of", "mark_parameter", "is_parameter", "parameters_of"]


def _table(program: Any, name: str) -> dict:
    """A per-program side table keyed by id (tensors overload ==, so no weak dicts)."""
    table = program.__dict__.get(name)
    if table is None:
        table = program.__dict__[name] = {}
    return table


def mark_parameter(x: Any) -> Any:
    """Marks a tensor as a trainable parameter (what `loss.backward()` differentiates by default)."""
    _table(x.program, "_autodiff_params")[id(x)] = x
    return x


def is_parameter(x: Any) -> bool:
    """Marked by `mark_parameter` (td.nn parameters), or a floating-point `td.param`."""
    return id(x) in _table(x.program, "_autodiff_params") or (x.op == "param" and is_float(x.dtype))


def parameters_of(program: Any) -> list:
    """The marked parameters and the floating-point `td.param`s of a program, in trace order."""
    out, marked = [], _table(program, "_autodiff_params")
    for node in program.nodes:
        for x in node.outputs:
            if id(x) in marked or (node.op == "param" and is_float(x.dtype)):
                out.append(x)
    return out


def backward(loss: Any, inputs: Any = None) -> list:
    """Computes the gradients of `loss` w.r.t. `inputs` (default: the program's parameters
    that the loss depends on) and records them as `x.grad`. Returns them as a list."""
    from .core import Builder

    if inputs is None:
        cands = parameters_of(loss.program)
        live = Builder(loss.program, loss, cands).relevant if cands else set()
        inputs = [x for x in cands if id(x) in live]
    elif not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    grads = grad(loss, list(inputs)) if inputs else []
    table = _table(loss.program, "_autodiff_grads")
    for x, g in zip(inputs, grads):
        table[id(x)] = (x, g)
    return grads


def grad_of(x: Any) -> Any:
    """The gradient recorded for x by the last `backward()` that computed one, or None."""
    found = _table(x.program, "_autodiff_grads").get(id(x))
    return found[1] if found is not None and found[0] is x else None
