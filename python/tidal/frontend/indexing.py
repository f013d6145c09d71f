"""`x[...]`, `s[...] = v` and `p.output(...)`.

Reading `x[k0, k1, ...]` (x with domain (d0, ..., dn-1) and spatial rank r):

* The first components address the temporal dims, in domain order; the rest
  address the spatial dims of the temporally indexed tensor (numpy-style:
  ints/expressions take, slices slice, None inserts, `...` fills). Temporal
  dims not given are indexed by the identity (`x[t - 1]` on domain (b, t)
  means `x[t - 1, t]`, as in the paper); `:` on a temporal position is the
  identity. `...` stands for the identity on the remaining temporal dims and
  `:` on the spatial dims it covers.
* A temporal component is a point (an affine expression with min/max,
  floordiv/mod by constants: `t - 1`, `0`, `min(t + 3, T - 1)`) or a slice
  (`max(0, t - 2):t + 1`, `t:T`, `0:T:2`); each slice adds a leading spatial
  dim of its (symbolic) size. The result's domain is the dims whose steps the
  index uses (a constant index removes the dim). Lowers to `rt.index`.
* Disambiguation: a temporal position given exactly the step of its own dim
  (`c[t]` on domain (t,)) is a no-op as a temporal index. When such a
  component is given to a *derived* tensor (not an input/param/recurrent)
  whose shape depends on that step (typically after a temporal slice), it is
  read as a spatial index instead: `x[0:t + 1].cumsum(0)[t]` takes element
  `t` of the prefix sums (`rt.take`). Write `c[:, t]` for the explicit
  "temporal identity, then spatial t".
* `x[cond]` with a boolean expression is a conditional view, usable only as
  `p.output(name, x[cond])`.
* An integer tensor (any int dtype; or a NumPy array or list of ints) among
  the spatial components gathers along that axis as NumPy's advanced indexing
  with one index array: `E[tok[t]]` (E without a domain) has shape
  `tok.shape + E.shape[1:]`, `x[t, :, idx]` has `x.shape[:1] + idx.shape +
  x.shape[2:]`; ints separated from it by a slice, None or `...` move its axes
  first, as in NumPy. Negative indices count from the end; an index out of
  `[-n, n)` is an error of the run at the line (a constant one, while
  tracing). It composes `rt.index_select` and `rt.reshape`
  (`tensor_index.py`). A tensor cannot be a temporal component: `x[idx]` on a
  tensor with domain (t,) is refused with the hint `x[t, idx]`. Refused too:
  boolean masks (`td.where`), float tensors, and two index tensors in one
  subscript (NumPy would pair them).

Defining `s[k0, ...] (if cond) = v` (s from `td.recurrent`): components are
points `d + k` of their own dim or constants (`0`, `T - 1`); boolean
expressions in the key become the case's condition; missing components are
the identity. Lowers to `rt.define`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tidal.symbolic import (Add, Const, Dim, Expr, FloorDiv, Max, Min, Mod, Mul, Neg, Slice, Sub,
                            Symbol, simplify, slice_size, substitute)

from . import dtypes as dt
from .errors import TidalError, symbolic_errors, user_location
from .graph import lift, make, resolve_program
from .program import Output, Program
from .shapes import static
from .tensor import Case, RecurrentTensor
from .tensor_index import (check_one_tensor, front_axes, gather_axis, index_component,
                           refuse_index_tensor)

__all__ = ["getitem", "setitem", "Masked", "output_value", "describe"]

SOURCES = ("input", "param", "recurrent")


def describe(x: RecurrentTensor) -> str:
    name = x.attrs.get("name") or x.attrs.get("label")
    if name:
        return f"{x.op} {name!r}"
    return f"the {x.op} tensor created at line {x.loc.line}"


class Masked:
    """`x[cond]`: `x` where the symbolic condition holds (for outputs)."""

    __slots__ = ("tensor", "cond")

    def __init__(self, tensor: RecurrentTensor, cond: Expr):
        self.tensor, self.cond = tensor, cond

    def __getattr__(self, name: str):
        raise TidalError(f"x[cond] is a conditional view; it has no attribute {name!r}",
                         "use it only as p.output(name, x[cond]); use td.where for values")

    def __repr__(self) -> str:
        return f"Masked({self.tensor!r} where {self.cond})"

    def _not_a_value(self, *args, **kwargs):
        raise TidalError("x[cond] is a conditional view, which can only be output (p.output(name, x[cond]))",
                         "use td.where(cond, x, other) to combine values conditionally")

    __bool__ = __iter__ = __getitem__ = __call__ = _not_a_value


def _guard_operators() -> None:
    for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
               "lt", "le", "gt", "ge"):
        setattr(Masked, f"__{op}__", Masked._not_a_value)
        setattr(Masked, f"__r{op}__", Masked._not_a_value)
    for op in ("neg", "pos", "abs", "invert"):
        setattr(Masked, f"__{op}__", Masked._not_a_value)


_guard_operators()


def _is_full(c: Any) -> bool:
    return isinstance(c, slice) and c.start is None and c.stop is None and c.step is None


def _is_bool_expr(c: Any) -> bool:
    return isinstance(c, Expr) and c.kind == "bool"


_AFFINE = (Const, Symbol, Add, Sub, Neg, Min, Max, FloorDiv, Mod)


def check_affine(e: Expr, what: str) -> None:
    """Temporal indices must be affine with min/max (and floordiv/mod by constants)."""
    def bad(x: Expr) -> bool:
        if isinstance(x, Mul):
            if all(a.free_symbols for a in x.args):
                return True
        elif not isinstance(x, _AFFINE):
            return True
        return any(bad(a) for a in x.args)

    if bad(e):
        raise TidalError(f"{what} `{e}` is not affine (with min/max): the polyhedral scheduler "
                         "cannot represent it",
                         "use sums of steps and bounds times constants, min, max, and // or % by "
                         "constants (t - 1, min(t + 3, T), t // 4 * 4)")


def _symbol_value_of(x: RecurrentTensor) -> bool:
    """Whether `x` is computed from `rt.symbol_value`s and constants only (`t - 1.0`)."""
    seen, stack, found = set(), [x], False
    while stack:
        y = stack.pop()
        if id(y) in seen:
            continue
        seen.add(id(y))
        if y.op == "symbol_value":
            found = True
        elif y.op in ("unary", "binary", "cast"):
            stack.extend(y.inputs)
        elif y.op != "constant":
            return False
    return found


def _point(program: Program, c: Any, what: str) -> Expr:
    if isinstance(c, Dim):
        return c.step
    if isinstance(c, RecurrentTensor):
        if _symbol_value_of(c):
            raise TidalError(f"{what} is a {c.dtype} tensor computed from steps or bounds: a float "
                             "(as in t - 1.0 or T * 1.5) or td.symbol turns a symbolic expression "
                             "into a value",
                             "indices are integer expressions: use ints, and // to divide "
                             "(t - 1 rather than t - 1.0, T * 3 // 2 rather than T * 1.5)")
        raise TidalError(f"{what} is a tensor; temporal indices must be symbolic expressions",
                         "index spatial dims with tensors after the temporal ones (x[t, idx]), or "
                         "use a symbolic expression (t - 1, 0, T - 1)")
    if _is_bool_expr(c):
        raise TidalError(f"{what} `{c}` is a condition", "conditions select whole tensors: "
                         "write x[cond] alone, or s[t + 1, cond] = ... in a definition")
    if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer, Expr)):
        raise TidalError(f"{what} {c!r} is not an integer or symbolic expression",
                         "use e.g. x[t - 1], x[0], x[0:t + 1]")
    with symbolic_errors(what):
        e = simplify(Const(int(c)) if not isinstance(c, Expr) else c)
    if e.kind != "int":
        raise TidalError(f"{what} `{e}` is not an integer expression", "use e.g. t - 1")
    program.check_symbols(e, what)
    check_affine(e, what)
    return e


def _temporal_component(program: Program, d: Dim, c: Any, what: str) -> Expr:
    """A canonical point or Slice for dim `d`."""
    if _is_full(c):
        return d.step
    if isinstance(c, slice):
        start = Const(0) if c.start is None else _point(program, c.start, f"{what} start")
        stop = d.bound if c.stop is None else _point(program, c.stop, f"{what} stop")
        step = 1 if c.step is None else c.step
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step <= 0:
            raise TidalError(f"{what}: slice step {c.step!r} must be a positive int", "e.g. x[0:T:2]")
        try:
            return Slice(start, stop, int(step))
        except ValueError as e:
            raise TidalError(f"{what} `{start}:{stop}` is not a valid slice: {e}",
                             "the stop must be >= the start at every point (e.g. "
                             "x[max(0, t - 2):t + 1])") from None
    return _point(program, c, what)


def _split(x: RecurrentTensor, items: tuple) -> tuple[list, list]:
    """(temporal components, spatial components) of an index key."""
    n = len(x.domain)
    ellipses = [i for i, c in enumerate(items) if c is Ellipsis]
    if len(ellipses) > 1:
        raise TidalError("an index can have only one ellipsis (...)", "remove the extra ...")
    if ellipses:
        e = ellipses[0]
        before, after = list(items[:e]), list(items[e + 1:])
        temporal = []
        for c in before[:n]:
            if c is None:
                break
            temporal.append(c)
        return temporal, before[len(temporal):] + [Ellipsis] + after
    temporal = []
    for j, c in enumerate(items[:n]):
        if c is None:
            break
        d = x.domain[j]
        if (isinstance(c, (Symbol, Dim)) and (c if isinstance(c, Symbol) else c.step) is d.step
                and x.op not in SOURCES
                and any(d.step in s.free_symbols for s in x.shape)):
            break  # the identity on a dynamic-shaped derived tensor: spatial (see module doc)
        temporal.append(c)
    return temporal, list(items[len(temporal):])


def _check_not_before_start(x: RecurrentTensor, d: Dim, c: Expr) -> None:
    """A constant index below 0 reads a step that never exists: refused here, at the
    read, rather than where the scheduler finds it (an output's or reader's line)."""
    for e in ((c.start,) if c.kind == "slice" else (c,)):
        if isinstance(e, Const) and e.value < 0:
            raise TidalError(f"temporal index {e.value} of {describe(x)} on {d.step.name} is before its "
                             f"first step ({d.step.name} runs from 0 to {d.bound.name} - 1); negative "
                             "indices do not count from the end",
                             f"for the last step write {d.bound.name} - 1, for the previous one "
                             f"{d.step.name} - 1")


def temporal_index(x: RecurrentTensor, comps: list) -> RecurrentTensor:
    """`rt.index` of x at the components (missing ones are the identity)."""
    program = x.program
    phi = []
    for j, d in enumerate(x.domain):
        what = f"temporal index of {describe(x)} on {d.step.name}"
        phi.append(_temporal_component(program, d, comps[j], what) if j < len(comps) else d.step)
        _check_not_before_start(x, d, phi[-1])
    if all(c.same(d.step) for c, d in zip(phi, x.domain)):
        return x
    env = {}
    lead = []
    for c, d in zip(phi, x.domain):
        if c.kind == "slice":
            if any(d.step in s.free_symbols for s in x.shape):
                raise TidalError(f"cannot read {describe(x)} over the slice `{c}`: its shape varies "
                                 f"with {d.step.name}, so the values do not stack",
                                 "read single points (x[t - 1]) or give the tensor a fixed shape (pad it)")
            with symbolic_errors("temporal slice"):
                lead.append(slice_size(c))
        else:
            env[d.step] = c
    with symbolic_errors("shape"):
        shape = tuple(lead) + tuple(simplify(substitute(s, env)) if env else s for s in x.shape)
    dims = set()
    for c in phi:
        for e in ((c.start, c.stop) if c.kind == "slice" else (c,)):
            dims |= program.check_symbols(e, "temporal index")
    return make("index", (x,), {"index": tuple(phi)}, shape, x.dtype,
                domain=program.canonical_domain(dims))


def spatial_index(y: RecurrentTensor, items: list) -> RecurrentTensor:
    """numpy-style spatial indexing (take, slice, unsqueeze, and one integer
    tensor: `tensor_index.gather_axis`)."""
    from .ops_shape import permute, slice as slice_op, take, unsqueeze

    items = [index_component(y.program, c) for c in items]
    check_one_tensor(items)
    consuming = [c for c in items if c is not None and c is not Ellipsis]
    if len(consuming) > y.ndim:
        raise TidalError(f"too many indices: {len(consuming)} spatial indices for a tensor with "
                         f"{y.ndim} spatial dims (shape {_show(y.shape)})",
                         "temporal dims come first in an index (x[t - 1, ...]); check the number of "
                         "components")
    ellipsis = [j for j, c in enumerate(items) if c is Ellipsis]   # not `in`: a tensor's == is an op
    if ellipsis:
        k = ellipsis[0]
        items = items[:k] + [slice(None)] * (y.ndim - len(consuming)) + items[k + 1:]
    d, gathered = 0, None
    for c in items:
        if c is None:
            y = unsqueeze(y, d)
            d += 1
        elif isinstance(c, slice):
            if not _is_full(c):
                y = slice_op(y, d, c.start, c.stop, c.step)
            d += 1
        elif isinstance(c, RecurrentTensor):
            y = gather_axis(y, d, c)
            gathered = (d, c.ndim)
            d += c.ndim
        elif _is_bool_expr(c):
            raise TidalError(f"a condition `{c}` cannot index a spatial dim",
                             "conditions select whole tensors: x[cond]")
        else:
            y = take(y, d, c.step if isinstance(c, Dim) else c)
    if gathered is not None and gathered[0] > 0 and gathered[1] and front_axes(items):
        a, k = gathered
        y = permute(y, *range(a, a + k), *range(a), *range(a + k, y.ndim))
    return y


def getitem(x: RecurrentTensor, key: Any) -> Any:
    resolve_program([x], "indexing")
    if _is_bool_expr(key):
        return Masked(x, _condition(x.program, key, x.domain, f"condition on {describe(x)}"))
    items = key if isinstance(key, tuple) else (key,)
    if any(_is_bool_expr(c) for c in items):
        raise TidalError("a condition can only index a whole tensor (x[cond]) or appear in a definition key",
                         "write x[cond] with the condition alone")
    temporal, spatial = _split(x, items)
    for d, c in zip(x.domain, temporal):
        if isinstance(c, (list, np.ndarray)) or (isinstance(c, RecurrentTensor) and not _symbol_value_of(c)):
            _refuse_temporal_tensor(x, d, c)
    y = temporal_index(x, temporal)
    consuming = [c for c in spatial if c is not None and c is not Ellipsis]
    if len(consuming) > y.ndim:
        names = ", ".join(d.step.name for d in x.domain)
        raise TidalError(f"too many indices for {describe(x)}: it has {len(x.domain)} temporal dims "
                         f"({names or 'none'}) and {x.ndim} spatial dims (shape {_show(x.shape)}), "
                         f"but {len(temporal) + len(consuming)} index components were given",
                         "give at most one component per temporal dim (first, in domain order), then "
                         "one per spatial dim")
    return spatial_index(y, spatial)


def _refuse_temporal_tensor(x: RecurrentTensor, d: Dim, c: Any) -> None:
    """A tensor (or array, list) where a temporal component goes (`x[idx]` on a
    tensor with a domain)."""
    what = f"the index of {describe(x)} on its temporal dim {d.step.name}"
    if isinstance(c, RecurrentTensor):
        refuse_index_tensor(c, what)
    kind = "an integer tensor" if isinstance(c, RecurrentTensor) else f"a {type(c).__name__}"
    steps = ", ".join(e.step.name for e in x.domain)
    raise TidalError(f"{what} is {kind}; temporal indices must be symbolic expressions "
                     "(which step is read cannot depend on data)",
                     f"to gather along its first spatial axis at every step, give the temporal dims "
                     f"first: x[{steps}, idx] (x[..., idx] for its last axis)")


def _condition(program: Program, cond: Any, domain: tuple, what: str) -> Expr:
    with symbolic_errors(what):
        c = simplify(cond)
    steps = program.check_symbols(c, what)
    extra = steps - set(domain)
    if extra:
        names = ", ".join(d.step.name for d in extra)
        raise TidalError(f"{what} `{c}` uses {names}, which is not in the tensor's domain "
                         f"({', '.join(d.step.name for d in domain) or 'empty'})",
                         "conditions may use the steps of the tensor's domain and any bounds")
    return c


def setitem(s: RecurrentTensor, key: Any, value: Any) -> None:
    """One case of a recurrent tensor's definition (`rt.define`)."""
    from . import checks

    program = resolve_program([s, value], "a definition")
    if s.op != "recurrent":
        raise TidalError(f"cannot assign to {describe(s)}: only tensors created with td.recurrent(...) "
                         "are defined by cases",
                         "declare it with s = td.recurrent(shape=..., dtype=..., domain=...) and "
                         "assign s[...] = value")
    items = key if isinstance(key, tuple) else (key,)
    cond: Expr | None = None
    comps = []
    for c in items:
        if _is_bool_expr(c):
            cond = c if cond is None else cond & c
        elif c is Ellipsis:
            continue
        else:
            comps.append(c)
    n = len(s.domain)
    if len(comps) > n:
        raise TidalError(f"too many temporal components in the definition key: {len(comps)} given, "
                         f"but {describe(s)} has {n} temporal dims "
                         f"({', '.join(d.step.name for d in s.domain) or 'none'})",
                         "a definition indexes only temporal dims; build the whole per-point value "
                         "(e.g. with td.cat or td.where) and assign it")
    psi = []
    for j, d in enumerate(s.domain):
        c = comps[j] if j < len(comps) else slice(None)
        what = f"definition index on {d.step.name}"
        if isinstance(c, slice) and not _is_full(c):
            raise TidalError(f"{what}: a definition indexes points, not slices ({c.start}:{c.stop})",
                             f"define one case per pattern, e.g. s[{d.step.name} + 1] = ...")
        e = d.step if _is_full(c) else _point(program, c, what)
        if e.free_symbols & {x.step for x in program.dim_list} and \
                not (d.step in e.free_symbols and static(simplify(e - d.step)) is not None):
            raise TidalError(f"{what} `{e}` must be `{d.step.name} + k` (k a constant) or a constant "
                             f"such as 0 or {d.bound.name} - 1",
                             f"write s[{d.step.name} + k] = ... and express the value in terms of "
                             f"{d.step.name}")
        psi.append(e)
    if cond is not None:
        cond = _condition(program, cond, s.domain, "definition condition")
    v = _value(s, value, program, psi)
    checks.check_case_domains(s, psi, cond, v)
    case = Case(s, tuple(psi), cond, v, user_location())
    checks.check_case_reads(s, case)
    s.cases.append(case)
    program.statements.append(case)


def _value(s: RecurrentTensor, value: Any, program: Program, psi: list) -> RecurrentTensor:
    from .ops_elementwise import astype
    from .ops_shape import expand

    if dt.is_weak_scalar(value) and dt.weak_kind(value) > dt.weak_kind(s.dtype.type(0).item()):
        origin = "Python" if dt.is_python_scalar(value) else "NumPy"
        raise TidalError(f"dtype mismatch: cannot define a {s.dtype} tensor with the {origin} "
                         f"{type(value).__name__} {value!r}",
                         f"pass a value of a {s.dtype} kind, or declare the recurrent tensor with a "
                         "floating dtype")
    v = lift(value, program, s.dtype)
    if v.dtype != s.dtype:
        if not np.can_cast(v.dtype, s.dtype, "same_kind"):
            raise TidalError(f"dtype mismatch: cannot define a {s.dtype} tensor with a {v.dtype} value",
                             f"cast the value explicitly with .astype('{s.dtype}')")
        v = astype(v, s.dtype)
    env = {d.step: c for d, c in zip(s.domain, psi) if not c.same(d.step)}
    with symbolic_errors("shape"):
        target = tuple(simplify(substitute(x, env)) if env else x for x in s.shape)
    if any(not a.same(b) for a, b in zip(target, s.shape)):
        raise TidalError("this recurrent tensor's shape varies with a step that the case shifts; "
                         "rt.define needs the value's type to equal the target's",
                         "give the recurrent tensor a fixed shape (pad it), or define it by the identity case")
    if len(v.shape) != len(target) or any(not a.same(b) for a, b in zip(v.shape, target)):
        try:
            v = expand(v, *target)
        except TidalError:
            raise TidalError(f"shape mismatch: the value has shape {_show(v.shape)} but the recurrent "
                             f"tensor has shape {_show(target)}",
                             "the value of a case must have (or broadcast to) the tensor's shape") from None
    return v


def _show(shape: tuple) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def output_value(program: Program, name: str, value: Any, when: Any) -> None:
    cond = None
    if isinstance(value, Masked):
        value, cond = value.tensor, value.cond
    if isinstance(value, RecurrentTensor) and value.program is not program:
        raise TidalError(f"output {name!r} is a tensor from another Program ({value.program.name!r})",
                         "a tensor can only be output by the Program that created it")
    v = lift(value, program, what=f"output {name!r}")
    if when is not None:
        cond = when if cond is None else cond & when
    if cond is not None:
        cond = _condition(program, cond, v.domain, f"condition of output {name!r}")
    program.claim_name("output", name)
    out = Output(name, v, cond, user_location())
    program.outputs.append(out)
    program.statements.append(out)

