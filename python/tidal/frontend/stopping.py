"""`td.stop_when(cond)`: dynamic termination of a run (`rt.stop_when`).

    with td.Program() as p:
        (t, T), = p.dims("t")
        ...
        td.stop_when((tok == eos).all())      # a boolean scalar over t
    exe.run(bounds={T: 512}, ...)             # T: the most steps; a run ends after the first t where it holds

The run means what the program means with `T = t_stop + 1` (docs/semantics.md,
`rt.stop_when`): outputs over t have t_stop + 1 steps, and reads like `r[t:T]`
or `x[T - 1]` see the stopped bound. So the condition at `t` must be known
without `T` and without any point after `t`: `check_stops` walks what it reads
and refuses, at the user's line, a read of a later point (`x[t + 1]`, `x[5]`),
a use of `T` (`x[t:T]`, `x[T - 1]`, a case `s[T - 1] = ...`, a shape), or a
backward case (`s[t] = f(s[t + 1])`).
"""
from __future__ import annotations

from typing import Any

from tidal.symbolic import Const, Dim, Expr, Slice, free_symbols, to_text
from tidal.symbolic.poly import expr_to_poly
from tidal.symbolic.prover import prove_le

from .errors import SourceLocation, TidalError, user_location
from .program import current_program
from .tensor import RecurrentTensor

__all__ = ["Stop", "stop_when", "check_stops"]

_ZERO = Const(0)


class Stop:
    """`td.stop_when(cond)`: the run ends after the first point of `dim` where `cond` holds."""

    __slots__ = ("value", "dim", "loc")

    def __init__(self, value: RecurrentTensor, dim: Dim, loc: SourceLocation):
        self.value, self.dim, self.loc = value, dim, loc

    def __repr__(self) -> str:
        return f"Stop(over {self.dim.step.name} at {self.loc})"


def _dim_of(program, dim: Any) -> Dim | None:
    """The program's Dim named by `dim` (a Dim, its step, or the step's name)."""
    name = dim.step.name if isinstance(dim, Dim) else getattr(dim, "name", dim)
    for d in program.dim_list:
        if d.step.name == name or d.bound.name == name:
            return d
    return None


def stop_when(cond: Any, dim: Any = None) -> None:
    """Ends the run after the first point where `cond` holds.

    `cond`: a boolean scalar tensor over one temporal dim (`(tok == eos).all()`
    over t). The bound given to `run` becomes the maximum: memory is planned
    for it, the loop stops at the first t where `cond` holds, and every output
    over t is cut to t_stop + 1 steps (`exe.stats()["steps"]` tells how many
    ran). Values that depend on the bound (`r[t:T]`, `x[T - 1]`, sums over all
    of t) see T = t_stop + 1. `dim` (optional) names the dim it stops, which
    must be the condition's own.
    """
    program = current_program(what="td.stop_when")
    if not isinstance(cond, RecurrentTensor):
        raise TidalError(f"td.stop_when needs a boolean tensor over a temporal dim, got "
                         f"{type(cond).__name__} {cond!r}",
                         "give a condition computed at every step, e.g. td.stop_when((tok == eos).all())")
    if cond.program is not program:
        raise TidalError("td.stop_when's condition is a tensor from another Program",
                         "stop on a tensor of the Program being traced")
    if cond.shape != () or cond.dtype.kind != "b":
        shape = "(" + ", ".join(to_text(s) for s in cond.shape) + ("," if len(cond.shape) == 1 else "") + ")"
        raise TidalError(f"td.stop_when needs one boolean per point (a scalar, shape ()); this condition "
                         f"has shape {shape} and dtype {cond.dtype}",
                         "reduce it to one boolean per step, e.g. (tok == eos).all() or (x > 0).any()")
    if dim is not None:
        named = _dim_of(program, dim)
        if named is None:
            raise TidalError(f"td.stop_when(dim={dim!r}): the program has no such dim "
                             f"(its dims: {', '.join(d.step.name for d in program.dim_list) or 'none'})",
                             "name a dim of p.dims(...), e.g. dim=t")
        if named not in cond.domain:
            raise TidalError(f"td.stop_when(dim={named.step.name}): the condition is not over "
                             f"{named.step.name} (its domain is {cond.domain!r})",
                             f"stop on a condition computed at every {named.step.name}")
    if not cond.domain:
        raise TidalError("td.stop_when needs a condition over a temporal dim; this one is over no dim "
                         "(the same at every point)",
                         "compute it at every step, e.g. from x[t]: td.stop_when(x[t].sum() > 10)")
    over = cond.domain[-1]
    if dim is not None and _dim_of(program, dim) != over:
        raise TidalError(f"td.stop_when(dim={_dim_of(program, dim).step.name}): the dim it stops must be the "
                         f"condition's last (innermost) dim, {over.step.name}",
                         "stop the innermost dim of the condition's domain")
    if len(cond.domain) > 1:
        raise TidalError(f"td.stop_when over an inner dim is not supported yet: this condition is over "
                         f"{cond.domain!r}, so each point of {', '.join(d.step.name for d in cond.domain[:-1])} "
                         f"would stop at its own {over.step.name} (ragged outputs)",
                         f"stop on a condition over {over.step.name} alone, e.g. reduce over the outer dims "
                         f"inside one step")
    if any(s.dim == over for s in program.stops):
        first = next(s for s in program.stops if s.dim == over)
        raise TidalError(f"td.stop_when over {over.step.name} is already given (at {first.loc})",
                         "combine the conditions: td.stop_when(a | b)")
    stop = Stop(cond, over, user_location())
    program.stops.append(stop)
    program.statements.append(stop)


# -- what the condition may read --------------------------------------------------------------
def _uses(e: Any, bound: Expr) -> bool:
    if isinstance(e, (tuple, list)):
        return any(_uses(x, bound) for x in e)
    if not isinstance(e, Expr):
        return False
    return any(s.name == bound.name for s in free_symbols(e))


def _shift(c: Expr, step: Expr | None) -> int | None:
    """The least constant e in [-8, 8] with `c <= step + e` at every point (`step`
    None: `c <= e`), or None when none is provable."""
    diff = c - step if step is not None else c
    for e in range(-8, 9):
        try:
            if prove_le(expr_to_poly(diff), expr_to_poly(Const(e))):
                return e
        except Exception:   # noqa: BLE001 - not provable
            return None
    return None


def check_stops(program) -> None:
    """Refuses a stop condition whose value at t needs T or a point after t."""
    for stop in program.stops:
        _check_stop(stop)


def _check_stop(stop: Stop) -> None:
    """Walks what the condition reads. Each tensor over t is visited with `d`:
    it is needed at steps <= q + d when the condition is evaluated at q (a
    read `x[t + 1]` adds 1, a case `s[t + 1] = v` subtracts 1 for `v`); a
    tensor not over t is needed at q = 0 already (d = None: its reads along t
    must be <= 0). Refused: d > 0 anywhere (a later step) and any use of T."""
    t, T = stop.dim.step, stop.dim.bound
    where = f"the condition of td.stop_when at {stop.loc}"
    hint = (f"the condition at {t.name} may read only {t.name} and earlier steps, and not {T.name} "
            f"(it is known only when the run stops)")
    best: dict = {}
    stack = [(stop.value, 0)]

    def later(c, node_loc, what):
        raise TidalError(f"{where} reads a later step: {what} on {t.name}", hint, location=node_loc)

    while stack:
        x, d = stack.pop()
        node = x.node
        over_t = stop.dim in x.domain
        d = d if over_t else None
        key = node.id
        if key in best and (best[key] is None or d is None or best[key] >= d):
            continue
        best[key] = d
        for out in node.outputs:
            if _uses(out.shape, T) and node.op != "index":    # an index says which component
                raise TidalError(f"{where} depends on the bound {T.name} (a shape here)", hint,
                                 location=node.loc)
        for name, value in node.attrs.items():
            if name != "index" and _uses(value, T):
                raise TidalError(f"{where} depends on the bound {T.name} ({name} here)", hint,
                                 location=node.loc)
        if node.op == "index":
            src = node.inputs[0]
            nd = 0
            for dim, c in zip(src.domain, node.attrs["index"]):
                if _uses(c, T):
                    raise TidalError(f"{where} depends on the bound {T.name} (it reads "
                                     f"[{to_text(c)}] on {dim.step.name})", hint, location=node.loc)
                if dim == stop.dim:
                    last = c.stop - 1 if isinstance(c, Slice) else c
                    e = _shift(last, t if over_t else None)
                    nd = e if e is not None else 9
                    if nd + (d or 0) > 0:
                        later(c, node.loc, f"[{to_text(c)}]")
            stack.append((src, nd + (d or 0)))
            continue
        if node.op == "recurrent":
            for case in x.cases:
                if _uses(case.index, T) or (case.cond is not None and _uses(case.cond, T)):
                    raise TidalError(f"{where} depends on the bound {T.name} (a case that uses it)", hint,
                                     location=case.loc)
                k = 0
                if over_t:
                    c = case.index[list(x.domain).index(stop.dim)]
                    if _uses(c, t):
                        k = -(_shift(t, c) if _shift(t, c) is not None else -9)   # c = t + k
                        if (d or 0) - k > 0:
                            later(c, case.loc, f"a case [{to_text(c)}] defined from a later step")
                stack.append((case.value, (d or 0) - k))
            continue
        for value in node.inputs:
            stack.append((value, d or 0))
