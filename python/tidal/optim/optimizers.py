"""SGD and Adam as recurrences over an iteration dimension (see the package doc)."""
from __future__ import annotations

import numbers
from typing import Any, Sequence

from tidal.frontend import creation as C
from tidal.frontend import ops_elementwise as E
from tidal.frontend.dtypes import is_float
from tidal.frontend.errors import TidalError
from tidal.frontend.graph import resolve_program
from tidal.frontend.tensor import RecurrentTensor

__all__ = ["Optimizer", "SGD", "Adam"]


def _names(dims) -> str:
    return ", ".join(d.step.name for d in dims) or "none"


class Optimizer:
    """Base class: checks the parameters, finds the iteration dim, adds the update cases."""

    def __init__(self, params: Sequence[RecurrentTensor], lr: Any, dim: Any = None):
        self.params = list(params)
        if not self.params:
            raise TidalError("the optimizer got no parameters", "pass model.parameters()")
        for p in self.params:
            if not isinstance(p, RecurrentTensor):
                raise TidalError(f"the optimizer got {p!r}, not a tensor", "pass model.parameters()")
        self.program = resolve_program(self.params, type(self).__name__)
        self.dim = self._find_dim(dim)
        for p in self.params:
            self._check_param(p)
        if isinstance(lr, bool) or not isinstance(lr, (numbers.Real, RecurrentTensor)):
            raise TidalError(f"lr must be a number or a tensor, got {lr!r}",
                             "e.g. lr=1e-3, or lr = 1e-3 * 0.99 ** td.symbol(i).astype('float32')")
        if isinstance(lr, RecurrentTensor):
            if lr.ndim != 0:
                raise TidalError(f"lr must be a scalar tensor, got shape {lr.shape}", "reduce it to a scalar")
            extra = [d for d in lr.domain if any(d not in p.domain for p in self.params)]
            if extra:
                raise TidalError(f"lr varies with {_names(extra)}, which the parameters do not",
                                 "a learning rate may vary with the parameters' dims (e.g. i)")
        self.lr = lr
        self.state: list[dict] = [{} for _ in self.params]
        self.stepped = False

    def _find_dim(self, dim: Any):
        if dim is not None:
            return self.program.dim_of(dim, "optimizer dim")
        common = set(self.params[0].domain)
        for p in self.params[1:]:
            common &= set(p.domain)
        if len(common) == 1:
            return common.pop()
        raise TidalError(f"cannot tell the optimizer's iteration dim: the parameters share the dims "
                         f"({_names(self.program.canonical_domain(common))})",
                         "create the parameters with domain=(i,) (td.nn.parameter / modules), or pass dim=i")

    def _check_param(self, p: RecurrentTensor) -> None:
        from tidal.frontend.indexing import describe

        if p.op != "recurrent" or self.dim not in p.domain:
            raise TidalError(f"{describe(p)} cannot be updated by an optimizer: it is not a recurrent "
                             f"tensor over the iteration dim {self.dim.step.name}",
                             f"create it with td.nn.parameter(name, value, domain=({self.dim.step.name},)) "
                             "or a td.nn module with domain=(i,)")
        if not p.cases:
            raise TidalError(f"{describe(p)} has no initial case", f"define {describe(p)}[0] = init first")
        if not is_float(p.dtype):
            raise TidalError(f"{describe(p)} has dtype {p.dtype}; only floating-point tensors train",
                             "use a float dtype")

    # -- helpers for subclasses ---------------------------------------------------------
    def key(self, p: RecurrentTensor, at: Any) -> tuple:
        """A definition key: `at` on the iteration dim, the identity on the others."""
        return tuple(at if d == self.dim else slice(None) for d in p.domain)

    def recurrence(self, p: RecurrentTensor, name: str, init: float = 0.0) -> RecurrentTensor:
        """A state tensor over p's domain with `s[0] = init` (the next case is the caller's)."""
        s = C.recurrent(shape=p.shape, dtype=p.dtype, domain=p.domain, name=name)
        s[self.key(p, 0)] = init
        return s

    def lr_for(self, p: RecurrentTensor) -> Any:
        return E.astype(self.lr, p.dtype) if isinstance(self.lr, RecurrentTensor) else float(self.lr)

    def step_count(self, p: RecurrentTensor) -> RecurrentTensor:
        """i + 1 as a tensor of p's dtype (the 1-based step number at iteration i)."""
        return E.astype(C.symbol(self.dim.step + 1, program=self.program), p.dtype)

    def update(self, k: int, p: RecurrentTensor, g: RecurrentTensor) -> RecurrentTensor:  # pragma: no cover
        raise NotImplementedError

    # -- the step --------------------------------------------------------------------------
    def step(self, grads: Any = None) -> list[RecurrentTensor]:
        """Defines `p[i + 1] = update(p[i], g[i])` for every parameter; returns the new values.

        `grads` aligns with the parameters (a list, or a dict keyed by position); without
        it, each parameter's `.grad` from `loss.backward()` is used.
        """
        if self.stepped:
            raise TidalError("this optimizer already stepped: each parameter has its update case",
                             "call step() once (it defines the update for every iteration)")
        if grads is None:
            from tidal.autodiff import grad_of

            grads = [grad_of(p) for p in self.params]
            missing = [k for k, g in enumerate(grads) if g is None]
            if missing:
                raise TidalError(f"parameter {missing[0]} has no gradient",
                                 "call loss.backward() first, or pass the gradients: opt.step(grads)")
        if isinstance(grads, RecurrentTensor):
            grads = [grads]
        grads = list(grads)
        if len(grads) != len(self.params):
            raise TidalError(f"step() got {len(grads)} gradients for {len(self.params)} parameters",
                             "pass one gradient per parameter, in the same order")
        out = []
        with self.program:
            for k, (p, g) in enumerate(zip(self.params, grads)):
                g = self._check_grad(p, g)
                new = self.update(k, p, g)
                p[self.key(p, self.dim.step + 1)] = new
                out.append(new)
        self.stepped = True
        return out

    def _check_grad(self, p: RecurrentTensor, g: Any) -> RecurrentTensor:
        if not isinstance(g, RecurrentTensor):
            raise TidalError(f"a gradient must be a tensor, got {type(g).__name__}", "pass td.grad(...) results")
        if g.ndim != p.ndim or any(not a.same(b) for a, b in zip(g.shape, p.shape)):
            raise TidalError(f"gradient shape {tuple(map(str, g.shape))} differs from the parameter's "
                             f"{tuple(map(str, p.shape))}", "pass the gradients in the parameters' order")
        extra = [d for d in g.domain if d not in p.domain]
        if extra:
            raise TidalError(f"the gradient varies with {_names(extra)}, which the parameter does not",
                             "reduce over those dims first (e.g. a loss summed over them)")
        return E.astype(g, p.dtype)


class SGD(Optimizer):
    """`p[i + 1] = p[i] - lr * d[i]`, d = g (+ weight_decay * p), with momentum μ:
    `buf[0] = 0; buf[i + 1] = μ buf[i] + d[i]` and d = buf[i + 1] (PyTorch's rule)."""

    def __init__(self, params: Sequence[RecurrentTensor], lr: Any = 1e-2, momentum: float = 0.0,
                 weight_decay: float = 0.0, dim: Any = None):
        super().__init__(params, lr, dim)
        self.momentum, self.weight_decay = float(momentum), float(weight_decay)

    def update(self, k, p, g):
        if self.weight_decay:
            g = g + self.weight_decay * p
        if self.momentum:
            buf = self.recurrence(p, "sgd.momentum")
            nxt = buf * self.momentum + g
            buf[self.key(p, self.dim.step + 1)] = nxt
            self.state[k]["momentum"] = buf
            g = nxt
        return p - self.lr_for(p) * g


class Adam(Optimizer):
    """Adam (Kingma & Ba) with bias correction; state m, v are recurrences over i."""

    def __init__(self, params: Sequence[RecurrentTensor], lr: Any = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, dim: Any = None):
        super().__init__(params, lr, dim)
        b1, b2 = betas
        if not (0.0 <= b1 < 1.0 and 0.0 <= b2 < 1.0):
            raise TidalError(f"Adam betas must be in [0, 1), got {betas}", "e.g. betas=(0.9, 0.999)")
        self.betas, self.eps, self.weight_decay = (float(b1), float(b2)), float(eps), float(weight_decay)

    def update(self, k, p, g):
        b1, b2 = self.betas
        if self.weight_decay:
            g = g + self.weight_decay * p
        m, v = self.recurrence(p, "adam.m"), self.recurrence(p, "adam.v")
        m_next = m * b1 + g * (1.0 - b1)
        v_next = v * b2 + g * g * (1.0 - b2)
        nxt = self.key(p, self.dim.step + 1)
        m[nxt] = m_next
        v[nxt] = v_next
        self.state[k].update(m=m, v=v)
        n = self.step_count(p)
        m_hat = m_next / (1.0 - b1 ** n)
        v_hat = v_next / (1.0 - b2 ** n)
        return p - self.lr_for(p) * m_hat / (E.sqrt(v_hat) + self.eps)
