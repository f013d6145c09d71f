"""Gradients through temporal dependences: `rt.index` and `rt.define` cases.

`y = x[φ]` (rt.index, sink domain D(y), source domain D(x)). With
`φ⁻¹ = invert(φ)` (tidal.symbolic.invert: the sink points that read source
point q, plus a condition on q):

    ∇x[q] = Σ_{p ∈ φ⁻¹(q)} ∇y[p] at the place of x[q] in y[p]     if cond(q)

* Point components only (`x[t - 1]`, `x[0]`, `x[T - 1 - t]`, `x[b, t + 1]`):
  x[q] is all of y[p], so `∇x[q] = ∇y[φ⁻¹(q)]` (summed over the stacked axis
  when φ⁻¹(q) is a slice, e.g. `x[t // 2]`).
* A slice component stacks the source points as a leading axis of y: x[q] sits
  at position `q - start(p)` of y[p]. The per-point sizes of ∇y[p] vary with
  p (`min(t, 2) + 1`), so ∇y cannot be stacked over p as is. At the sink each
  ∇y[p] is first padded along that axis to a size L that does not depend on p,
  placing position r at source coordinate `o(p) + r`:
    - bounded windows (`max(0, t - w + 1):t + 1`, `t:min(t + n, T)`), where
      `p - start(p) <= c1` and `stop(p) - p <= c2` for constants: o = p - c1,
      L = c1 + c2 (a window of constant size);
    - otherwise (prefixes `0:t + 1`, suffixes `t:T`): o = 0, L = the source
      bound (a full timeline).
  Then Z = pad(∇y) is read at φ⁻¹(q) (one stacked axis k per sink slice), and
  the element of x[q] is extracted from each p_k = a(q) + k: at position
  `q - o(p_k)`, which is the symbolic `q` (take) for o = 0 and the vector
  `(q - a(q) + c1) - iota(n)` (gather along the padded axis, a diagonal) for
  o = p - c1. The stacked axes are then summed.
* Constant slices (`x[0:T]`, `x[2:T:2]`): y does not vary with q, and
  `∇x[q] = ∇y.take(axis, (q - start) // step)` where q is in the slice: the
  paper's `f'(∇y).index(t)`.
* Several dims: one component per source dim, each handled as above; the
  inverse of the whole sequence is one `invert` call.

Cases `s[ψ] if c = v`: v (at point p) is s at ψ(p) where this case applies
(ψ(p) inside the domain, c(p), no earlier case defines ψ(p)), so
`∇v[p] = ∇s[ψ(p)]` there and 0 elsewhere, a conditional contribution that
reads the gradient placeholder of s: for `s[t + 1] = f(s[t])` this is the
backward recurrence `∇s[t] = ... ∇s[t + 1] ...`.
"""
from __future__ import annotations

import itertools

from tidal.symbolic import (FALSE, TRUE, And, Compare, Const, FloorDiv, IndexSeq, Mod, Not, Or,
                            NonInvertibleError, Select, Slice, evaluate, invert, max_, min_, simplify, slice_size, substitute)
from tidal.symbolic.analysis import is_affine_in
from tidal.symbolic.poly import expr_to_poly

from tidal.frontend import creation as C
from tidal.frontend import ops_shape as S
from tidal.frontend.errors import TidalError
from tidal.frontend.graph import make
from tidal.frontend.indexing import temporal_index
from tidal.frontend.shapes import provably

from .core import Contrib

__all__ = ["index_contribs", "case_contribs"]


def _sink_steps(component, sink) -> list:
    steps = component.free_symbols
    return [d for d in sink if d.step in steps]


def _const_upper(e, dims) -> int | None:
    """A constant c with e <= c everywhere (found on small domains, then proven)."""
    e = simplify(e)
    if not e.free_symbols:
        return evaluate(e, {})
    dims = sorted({s.dim for s in e.free_symbols if s.role in ("step", "bound")} | set(dims),
                  key=lambda d: d.step.name)
    if len(dims) > 3 or any(s.role == "param" for s in e.free_symbols):
        return None
    best = None
    for bounds in itertools.product(range(1, 7), repeat=len(dims)):
        env = {d.bound.name: b for d, b in zip(dims, bounds)}
        for point in itertools.product(*(range(b) for b in bounds)):
            env.update({d.step.name: v for d, v in zip(dims, point)})
            v = evaluate(e, env)
            best = v if best is None else max(best, v)
    if best is None or not provably(e <= best):
        return None
    return best


def _origin(component, p, source):
    """(origin o(p), size L, c1 or None) for a moving slice component over sink dim p."""
    if component.step != 1:
        raise TidalError(f"gradient of the stepped temporal slice `{component}` that moves with "
                         f"{p.step.name} is not supported",
                         "use a step of 1, or a constant slice such as x[0:T:2]")
    c1 = _const_upper(p.step - component.start, [p])
    c2 = _const_upper(component.stop - p.step, [p])
    if c1 is not None and c2 is not None and c1 + c2 >= 0:
        return simplify(p.step - c1), Const(c1 + c2), c1
    return Const(0), source.bound, None


def _read_comp(c):
    """A component for temporal_index: a point, or a (never-invalid) Python slice."""
    if c.kind == "slice":
        start = simplify(c.start)
        return slice(start, simplify(max_(start, c.stop)), c.step if c.step != 1 else None)
    return simplify(c)


def _take(r, dim: int, i):
    """`rt.take` of position i along dim. Where the frontend cannot prove i in range
    (`x[1:T]` has size T - 1, which is 0 at T = 1), the take is made directly with i
    clamped: the contribution's condition guarantees it is only read where i is valid."""
    i = simplify(i)
    n = r.shape[dim]
    if provably(i >= 0) and provably(i < n):
        return S.take(r, dim, i)
    i = simplify(min_(max_(i, 0), max_(n - 1, 0)))
    shape = r.shape[:dim] + r.shape[dim + 1:]
    return make("take", (r,), {"dim": dim, "index": i}, shape, r.dtype, exprs=[i])


def _find_select(e):
    if isinstance(e, Select):
        return e
    for a in e.args:
        found = _find_select(a)
        if found is not None:
            return found
    return None


def _replace(e, target, repl):
    """e with the subexpression `target` replaced by `repl` (rebuilt, simplified later)."""
    if e is target:
        return repl
    if not e.args:
        return e
    args = tuple(_replace(a, target, repl) for a in e.args)
    if all(a is b for a, b in zip(args, e.args)):
        return e
    if isinstance(e, Slice):
        return Slice(args[0], args[1], e.step, validate=False)
    if isinstance(e, (FloorDiv, Mod)):
        return type(e)(args[0], e.divisor)
    if isinstance(e, Compare):
        return Compare(e.op, *args)
    return type(e)(*args)


def split_selects(comps: list) -> list:
    """[(guard, comps)] without `select`s: each select splits into its two branches."""
    done, todo = [], [(TRUE, list(comps))]
    while todo:
        guard, cs = todo.pop()
        sel = next((s for s in map(_find_select, cs) if s is not None), None)
        if sel is None:
            done.append((guard, [simplify(c) for c in cs]))
            continue
        cond, a, b = sel.args
        for g, v in ((cond, a), (Not(cond), b)):
            g2 = simplify(And(guard, g))
            if g2 is not FALSE:
                todo.append((g2, [_replace(c, sel, v) for c in cs]))
    return done


def _monotone_in(part, step) -> bool:
    """True if the comparison `part` is monotone in `step` (affine, unit steps only)."""
    if not isinstance(part, Compare) or part.op not in ("lt", "le", "gt", "ge"):
        return False
    return is_affine_in(expr_to_poly(simplify(part.args[0] - part.args[1])), step)


def pulled_back(support, sink, inv_comps):
    """An over-approximation, in the source's steps, of `∃ p ∈ φ⁻¹(q): support(p)`.

    `support` (over the sink's steps, None: everywhere) is where ∇y may be
    non-zero. Point components of the inverse are substituted; for a slice
    component [a, b) each conjunct monotone in that step holds somewhere in the
    slice iff it holds at a or at b - 1 (and a < b); other conjuncts that read a
    slice step are dropped, which only widens the result."""
    if support is None:
        return TRUE
    env, ranges = {}, {}
    for d, c in zip(sink, inv_comps):
        if c.kind == "slice":
            ranges[d.step] = c
        else:
            env[d.step] = c
    parts = list(support.args) if isinstance(support, And) else [support]
    out = []
    for part in parts:
        moving = [s for s in part.free_symbols if s in ranges]
        if not moving:
            out.append(substitute(part, env))
        elif len(moving) == 1 and _monotone_in(part, moving[0]):
            c = ranges[moving[0]]
            ends = [substitute(part, {**env, moving[0]: e}) for e in (c.start, simplify(c.stop - 1))]
            out.append(And(Compare("lt", c.start, c.stop), Or(*ends)))
    return simplify(And(*out)) if out else TRUE


def index_contribs(node, gy, support=None) -> list:
    """The contributions of `y = x[φ]` (gradient gy, zero-free) to ∇x.

    `support` is a condition (sink steps) outside which gy is zero: the
    contributions carry its pull-back, so ops on ∇x that read forward values
    are only evaluated where the forward computed them."""
    x = node.inputs[0]
    phi = tuple(node.attrs["index"])
    sink, source = tuple(node.domain), tuple(x.domain)
    try:
        inv = invert(IndexSeq(phi, validate=False), sink, source)
    except NonInvertibleError as e:
        raise TidalError(f"cannot differentiate the temporal index {list(map(str, phi))}: {e}",
                         "temporal indices must be monotone in one step each (t + k, "
                         "max(0, t - k):t + 1, t:T, 0:t + 1, constants)") from None
    out = []
    for guard, comps in split_selects(list(inv.index)):
        cond = simplify(And(inv.condition, guard, pulled_back(support, sink, comps)))
        if cond is not FALSE:
            out.append(_contrib(node, gy, x, phi, sink, source, comps, cond))
    return out


def _contrib(node, gy, x, phi, sink, source, inv_index, cond) -> Contrib:
    program = x.program
    slices = [k for k, c in enumerate(phi) if c.kind == "slice"]
    # 1. sink side: pad every moving stacked axis to a p-independent size.
    z = gy
    plans = []
    for axis, k in enumerate(slices):
        c, src = phi[k], source[k]
        movers = _sink_steps(c, sink)
        if not movers:
            plans.append(("const", c, None, None))
            continue
        if len(movers) > 1:
            raise TidalError(f"gradient of the temporal slice `{c}` that moves with several dims "
                             "is not supported", "index with one moving dim per component")
        p = movers[0]
        o, size, c1 = _origin(c, p, src)
        before, after = simplify(c.start - o), simplify(o + size - c.stop)
        if not (static_zero(before) and static_zero(after)):
            z = S.pad(z, (before, after), dim=axis)
        if c1 is not None and p not in z.domain:
            z = z + C.full((), 0.0, dtype=z.dtype, domain=(p,), program=program)
        plans.append(("abs", c, p, None) if c1 is None else ("rel", c, p, c1))
    missing = [d for d in sink if d not in z.domain]
    # 2. read Z at the inverse: one stacked axis per sink dim whose inverse is a slice.
    comps, inv_axes, count = [], {}, None
    for d in z.domain:
        ic = inv_index[sink.index(d)]
        if ic.kind == "slice":
            inv_axes[d] = len(inv_axes)
        comps.append(_read_comp(ic))
    for d in missing:  # z is constant along d: the sum over φ⁻¹ is a multiplicity
        ic = inv_index[sink.index(d)]
        if ic.kind == "slice":
            n = C.symbol(slice_size(ic), program=program).astype(z.dtype)
            count = n if count is None else count * n
    r = temporal_index(z, comps) if comps else z
    m = len(inv_axes)
    # 3. extract x[q] along each stacked axis of φ's slices (always at axis m).
    for pos, (kind, c, p, c1) in enumerate(plans):
        q = source[slices[pos]].step
        if kind == "const":
            i = simplify((q - c.start) // c.step) if c.step != 1 else simplify(q - c.start)
            r = _take(r, m, i)
        elif kind == "abs":
            r = _take(r, m, q)
        else:
            ic = inv_index[sink.index(p)]
            if ic.kind != "slice":
                r = _take(r, m, q - (ic - c1))
            else:
                j = inv_axes[p]
                n = r.shape[j]
                base = C.symbol(simplify(q - ic.start + c1), program=program)
                idx = base - C.arange(n, program=program)
                shape = [1] * r.ndim
                shape[j] = n
                idx = S.reshape(idx, *shape)
                target = list(r.shape)
                target[m] = Const(1)
                idx = S.expand(idx, *target)
                r = S.squeeze(S.gather(r, m, idx), m)
    if m:
        r = r.sum(tuple(range(m)))
    if count is not None:
        r = r * count
    return Contrib(r, source, None if cond is TRUE else cond)


def static_zero(e) -> bool:
    return isinstance(e, Const) and e.value == 0


def _in_bounds(d, e):
    return And(Compare("ge", e, 0), Compare("lt", e, d.bound))


def _defines(s, case, q: dict):
    """Condition that `case` defines the point q (dim -> expression)."""
    parts, env = [], {}
    for d, c in zip(s.domain, case.index):
        if d.step in c.free_symbols:
            k = simplify(c - d.step)
            src = simplify(q[d] - k)
            parts.append(_in_bounds(d, src))
            env[d.step] = src
        else:
            parts.append(Compare("eq", q[d], c))
    if case.cond is not None:
        parts.append(substitute(case.cond, env) if env else case.cond)
    return And(*parts) if parts else TRUE


def case_contribs(s, k: int, gs) -> Contrib | None:
    """The contribution of case k of s to ∇(its value): ∇s at ψ(p) where it applies."""
    case = s.cases[k]
    psi = tuple(case.index)
    moving = [d for d, c in zip(s.domain, psi) if d.step in c.free_symbols]
    q = {d: simplify(c) for d, c in zip(s.domain, psi)}
    parts = [_in_bounds(d, q[d]) for d in s.domain]
    if case.cond is not None:
        parts.append(case.cond)
    for earlier in s.cases[:k]:
        parts.append(Not(_defines(s, earlier, q)))
    applies = simplify(And(*parts))
    if applies is FALSE:
        return None
    read = temporal_index(gs, list(psi))
    value = case.value
    if len(read.shape) != len(value.shape) or any(not a.same(b) for a, b in zip(read.shape, value.shape)):
        read = S.reshape(read, *value.shape)
    return Contrib(read, tuple(moving), None if applies is TRUE else applies)

