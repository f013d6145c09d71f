"""Symbolic reverse-mode differentiation over a traced program (`td.grad`).

The gradient program is made of ordinary recurrent tensors, traced into the
same `td.Program` after the forward ops, so it lowers to rt (and sdg) like
anything else. The algorithm (TEMPO, section 3):

* `loss` must be a scalar per point; with a domain `D(L)` the seed is 1 at
  every point, i.e. `td.grad(L, wrt)` is the gradient of `sum_{p in D(L)} L[p]`
  (a loss over iterations `i` whose parameters vary with `i` gives the
  per-iteration gradients).
* The tensors in `wrt` are leaves: gradients flow into them and stop there
  (a parameter `W[0] = init; W[i + 1] = W[i] - lr * g[i]` is differentiated
  as the value `W[i]`, not through its optimizer recurrence).
* Every differentiable tensor `x` on a path from `wrt` to `loss` gets a
  gradient `∇x`: an RT with x's shape, dtype and (at most) x's domain, the sum
  of the *contributions* of its consumers. A contribution is
  `Contrib(value, cdom, cond)`: `value` read at a point of the conceptual
  domain `cdom` (the consumer's domain), zero where the symbolic condition
  `cond` is false, and never evaluated there (which keeps gradient ops away
  from the points the forward never computes, e.g. `x[t + 1]` at `t = T - 1`).
  Summing a contribution into x sums over `cdom \\ D(x)` (the domains the
  consumer had in addition: a parameter with domain `()` used at every `t`
  gets `c[0:T].sum(0)`).
* Spatial ops use their VJP (`rules.py`); `rt.index` uses the inverse of its
  dependence expression and `rt.define` cases read the target's gradient at
  the case's index (`temporal.py`). Recurrent tensors make cycles: each one
  (that is not a leaf) gets a gradient placeholder `td.recurrent` up front,
  which the case rules read (a backward recurrence) and which is defined once
  all its contributions are known.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

from tidal.symbolic import TRUE, Expr, Or, simplify

from tidal.frontend import creation as C
from tidal.frontend.dtypes import is_float as dtype_is_float
from tidal.frontend.errors import TidalError
from tidal.frontend.indexing import temporal_index
from tidal.frontend.program import Program, current_program
from tidal.frontend.tensor import RecurrentTensor

__all__ = ["grad", "Contrib", "Builder", "is_float"]


class Contrib(NamedTuple):
    value: RecurrentTensor
    cdom: tuple          # conceptual domain (Dims, program order)
    cond: Expr | None    # None: everywhere


def is_float(x: RecurrentTensor) -> bool:
    return dtype_is_float(x.dtype)


def _deps(x: RecurrentTensor) -> list:
    if x.op == "recurrent":
        return [c.value for c in x.cases]
    return list(x.inputs)


def _key(x: RecurrentTensor) -> int:
    return id(x)


class Builder:
    """One `td.grad` call: the relevant subgraph, contributions, placeholders."""

    def __init__(self, program: Program, loss: RecurrentTensor, wrt: list):
        self.program = program
        self.loss = loss
        self.wrt = wrt
        self.leaves = {_key(w) for w in wrt}
        self.contribs: dict[int, list[Contrib]] = {}
        self.placeholders: dict[int, RecurrentTensor] = {}
        self.relevant = self._relevant()

    # -- which tensors carry gradients -------------------------------------------
    def _relevant(self) -> set[int]:
        ancestors: dict[int, RecurrentTensor] = {}
        stack = [self.loss]
        while stack:
            x = stack.pop()
            if _key(x) in ancestors:
                continue
            ancestors[_key(x)] = x
            if _key(x) in self.leaves:
                continue
            stack.extend(_deps(x))
        live = {k for k in self.leaves if k in ancestors}
        changed = True
        while changed:
            changed = False
            for k, x in ancestors.items():
                if k in live or not is_float(x):
                    continue
                if any(_key(d) in live for d in _deps(x)):
                    live.add(k)
                    changed = True
        return live

    def needs(self, x: RecurrentTensor) -> bool:
        return _key(x) in self.relevant and is_float(x)

    def add(self, x: RecurrentTensor, contrib: Contrib | None) -> None:
        if contrib is None or not self.needs(x):
            return
        cond = contrib.cond
        if cond is not None:
            cond = simplify(cond)
            if cond is TRUE:
                cond = None
            elif cond.free_symbols == frozenset() and not bool(cond):
                return  # never applies
        value = contrib.value
        if value.dtype != x.dtype:
            value = value.astype(x.dtype)
        self.contribs.setdefault(_key(x), []).append(Contrib(value, tuple(contrib.cdom), cond))

    # -- combining contributions ---------------------------------------------------
    def materialize(self, c: Contrib) -> RecurrentTensor:
        """The contribution as a tensor that is zero where its condition is false."""
        if c.cond is None:
            return c.value
        dom = self.program.canonical_domain(set(c.cdom) | set(c.value.domain))
        r = C.recurrent(shape=c.value.shape, dtype=c.value.dtype, domain=dom, name="grad_where")
        r[c.cond] = c.value
        r[...] = 0.0
        return r

    def reduce_dims(self, value: RecurrentTensor, dims: list) -> RecurrentTensor:
        """Sums `value` over the temporal `dims` (reading `value[..., 0:D, ...]`)."""
        present = [d for d in dims if d in value.domain]
        absent = [d for d in dims if d not in value.domain]
        if present:
            comps = [slice(0, d.bound) if d in present else d.step for d in value.domain]
            value = temporal_index(value, comps).sum(tuple(range(len(present))))
        for d in absent:  # constant along d: the sum is D copies
            value = value * C.symbol(d.bound, program=self.program).astype(value.dtype)
        return value

    @staticmethod
    def union(x: RecurrentTensor, parts: list) -> Expr | None:
        """Where the sum of `parts` may be non-zero: the union of their conditions,
        None (everywhere) when one has none or one reads a dim x does not have."""
        steps = {d.step for d in x.domain}
        conds = [c.cond for c in parts]
        if any(c is None or not {s for s in c.free_symbols if s.role == "step"} <= steps
               for c in conds):
            return None
        cond = simplify(Or(*conds))
        return None if cond is TRUE else cond

    def total(self, x: RecurrentTensor) -> tuple[RecurrentTensor | None, Expr | None]:
        """(∇x, condition) from x's contributions; (None, None) when there are none."""
        parts = self.contribs.pop(_key(x), [])
        if not parts:
            return None, None
        dom = set(x.domain)
        conds = {c.cond for c in parts}
        if len(conds) == 1 and all(set(c.cdom) <= dom for c in parts):
            cond = parts[0].cond
            values = [c.value for c in parts]
        else:
            cond = self.union(x, parts)
            values = []
            for c in parts:
                v = self.materialize(c)
                extra = [d for d in c.cdom if d not in dom]
                values.append(self.reduce_dims(v, extra) if extra else v)
        g = values[0]
        for v in values[1:]:
            g = g + v
        if g.dtype != x.dtype:
            g = g.astype(x.dtype)
        return g, cond

    # -- the sweep --------------------------------------------------------------------
    def run(self) -> list:
        from .rules import vjp
        from .temporal import case_contribs, index_contribs

        if self.needs(self.loss):
            seed = C.full((), 1.0, dtype=self.loss.dtype, program=self.program)
            self.add(self.loss, Contrib(seed, self.loss.domain, None))
        order = list(self.program.nodes)  # the forward graph (gradient nodes are appended)
        for node in order:  # placeholders and case contributions, up front
            if node.op != "recurrent":
                continue
            s = node.outputs[0]
            if not self.needs(s) or _key(s) in self.leaves:
                continue
            gs = C.recurrent(shape=s.shape, dtype=s.dtype, domain=s.domain, name="grad")
            self.placeholders[_key(s)] = gs
            for k, case in enumerate(s.cases):
                if self.needs(case.value):
                    self.add(case.value, case_contribs(s, k, gs))
        for node in reversed(order):
            for y in node.outputs:
                if not self.needs(y) or _key(y) in self.leaves:
                    continue
                g, cond = self.total(y)
                if node.op == "recurrent":
                    self.define_placeholder(y, g, cond)
                    continue
                if g is None:
                    continue
                if node.op == "index":
                    x = node.inputs[0]
                    if self.needs(x):
                        gm = self.materialize(Contrib(g, node.domain, cond))
                        for contrib in index_contribs(node, gm, cond):
                            self.add(x, contrib)
                    continue
                needed = [self.needs(x) for x in node.inputs]
                if not any(needed):
                    continue
                grads = vjp(node, y, g, needed)
                for x, gx, need in zip(node.inputs, grads, needed):
                    if need and gx is not None:
                        self.add(x, Contrib(gx, node.domain, cond))
        done: dict[int, RecurrentTensor] = {}
        for w in self.wrt:  # (a tensor listed twice gets the same gradient)
            if _key(w) not in done:
                done[_key(w)] = self.result(w)
        return [done[_key(w)] for w in self.wrt]

    def define_placeholder(self, s: RecurrentTensor, g, cond) -> None:
        gs = self.placeholders[_key(s)]
        if g is None:
            gs[...] = 0.0
        elif cond is None:
            gs[...] = g
        else:
            gs[cond] = g
            gs[...] = 0.0

    def result(self, w: RecurrentTensor) -> RecurrentTensor:
        parts = self.contribs.get(_key(w))
        if not parts:
            g = None
        else:
            g, cond = self.total(w)
            if cond is not None:
                g = self.materialize(Contrib(g, w.domain, cond))
        if g is None:
            return C.full(w.shape, 0.0, dtype=w.dtype, domain=w.domain, program=self.program)
        if tuple(g.domain) != tuple(w.domain) or any(not a.same(b) for a, b in zip(g.shape, w.shape)):
            g = g + C.full(w.shape, 0.0, dtype=w.dtype, domain=w.domain, program=self.program)
        return g


def _check(program: Program, loss: Any, wrt: Sequence[Any]) -> None:
    if not isinstance(loss, RecurrentTensor):
        raise TidalError(f"td.grad needs a tensor loss, got {type(loss).__name__}",
                         "pass the scalar loss tensor, e.g. td.grad(loss, [W])")
    if loss.ndim != 0:
        raise TidalError(f"td.grad needs a scalar loss (shape ()), got shape "
                         f"({', '.join(str(s) for s in loss.shape)})",
                         "reduce it first, e.g. loss.sum() or loss.mean()")
    if not is_float(loss):
        raise TidalError(f"td.grad needs a floating-point loss, got {loss.dtype}",
                         "cast it, e.g. loss.astype('float32')")
    for w in wrt:
        if not isinstance(w, RecurrentTensor):
            raise TidalError(f"td.grad: {w!r} is not a tensor", "pass the tensors to differentiate by")
        if w.program is not program:
            raise TidalError("td.grad: a tensor in wrt belongs to another Program",
                             "differentiate within one program")
        if not is_float(w):
            raise TidalError(f"td.grad: cannot differentiate with respect to a {w.dtype} tensor",
                             "only floating-point tensors have gradients")


def grad(loss: RecurrentTensor, wrt: Any) -> Any:
    """Gradients of `loss` with respect to each tensor of `wrt` (a list, or one tensor).

    Returns a list in the order of `wrt` (a single tensor for a single tensor).
    Each gradient is an RT with the shape, dtype and domain of its tensor; it is
    zero where the loss does not depend on it. See the module doc for the
    semantics of losses with a domain and of leaves.
    """
    single = isinstance(wrt, RecurrentTensor)
    items = [wrt] if single else list(wrt)
    if isinstance(loss, RecurrentTensor):
        program = loss.program
    else:
        program = current_program(what="td.grad")
    _check(program, loss, items)
    active = current_program(required=False)
    if active is not None and active is not program:
        raise TidalError("td.grad: the loss belongs to another Program than the active one",
                         "call td.grad inside the loss's `with td.Program()` block")
    with program:
        out = Builder(program, loss, items).run()
    return out[0] if single else out
