"""Vector-Jacobian products of the spatial ops (one rule per rt op).

`vjp(node, y, g, needed)` returns one gradient (or None: zero) per input of
`node`, given the gradient `g` of its result `y`; `needed[k]` says whether
input k wants one. The rules are written with the frontend's own ops, so a
gradient is just more traced RTs. Non-differentiable ops (comparisons,
logical ops, floor/ceil/sign/floordiv, argmax/argmin/argsort, casts from
integers, iota, random, constants, UDFs) contribute nothing: their inputs get
no gradient through them (a UDF is a constant to autodiff); `sort`/`topk`
values are differentiable through their `gather`. Conventions follow JAX where the
derivative is ambiguous: `relu'(0) = 0`, `max`/`min` split ties evenly,
reductions `max`/`min` share the gradient among all maximal elements.
"""
from __future__ import annotations

from typing import Any, Callable

from tidal.symbolic import Const, simplify

from tidal.frontend import creation as C
from tidal.frontend import ops_elementwise as E
from tidal.frontend import ops_reduce as R
from tidal.frontend import ops_shape as S
from tidal.frontend.dtypes import is_float
from tidal.frontend.errors import TidalError
from tidal.frontend.shapes import static
from tidal.frontend.tensor import RecurrentTensor

__all__ = ["vjp", "unbroadcast", "RULES"]


def _same(a, b) -> bool:
    return len(a) == len(b) and all(x.same(y) for x, y in zip(a, b))


def unbroadcast(g: RecurrentTensor, shape: tuple) -> RecurrentTensor:
    """Sums g (of a broadcast shape) down to `shape` (NumPy broadcasting in reverse)."""
    if _same(g.shape, shape):
        return g
    lead = g.ndim - len(shape)
    if lead > 0:
        g = g.sum(tuple(range(lead)))
    dims = tuple(i for i, s in enumerate(shape) if static(s) == 1 and static(g.shape[i]) != 1)
    if dims:
        g = g.sum(dims, keepdim=True)
    if not _same(g.shape, shape):
        g = S.reshape(g, *shape)
    return g


def _zeros(x: RecurrentTensor) -> RecurrentTensor:
    return C.full(x.shape, 0.0, dtype=x.dtype, program=x.program)


# -- elementwise -----------------------------------------------------------------------
_UNARY: dict[str, Callable] = {
    "neg": lambda x, y, g: -g,
    "exp": lambda x, y, g: g * y,
    "log": lambda x, y, g: g / x,
    "tanh": lambda x, y, g: g * (1.0 - y * y),
    "sigmoid": lambda x, y, g: g * y * (1.0 - y),
    "relu": lambda x, y, g: E.where(x > 0, g, 0.0),
    "sqrt": lambda x, y, g: g * 0.5 / y,
    "rsqrt": lambda x, y, g: g * (-0.5) * y / x,
    "abs": lambda x, y, g: g * E.sign(x),
    "sin": lambda x, y, g: g * E.cos(x),
    "cos": lambda x, y, g: -(g * E.sin(x)),
    "reciprocal": lambda x, y, g: -(g * y * y),
    "square": lambda x, y, g: g * x * 2.0,
}
ZERO_UNARY = ("sign", "floor", "ceil")


def _unary(node, y, g, needed):
    kind = node.attrs["kind"]
    x = node.inputs[0]
    if kind in ZERO_UNARY or kind == "not":
        return [None]
    return [_UNARY[kind](x, y, g)]


def _tie(a, b, g, strict):
    """g where a wins (strictly), half of g on ties (JAX's convention)."""
    return E.where(strict(a, b), g, E.where(E.eq(a, b), g * 0.5, 0.0))


def _binary(node, y, g, needed):
    kind = node.attrs["kind"]
    a, b = node.inputs
    if not is_float(y.dtype):
        return [None, None]
    ga = gb = None
    if kind == "add":
        ga, gb = g, g
    elif kind == "sub":
        ga, gb = g, -g
    elif kind == "mul":
        ga = g * b if needed[0] else None
        gb = g * a if needed[1] else None
    elif kind == "div":
        ga = g / b if needed[0] else None
        gb = -(g * y / b) if needed[1] else None
    elif kind == "pow":
        if needed[0]:
            ga = E.where(E.eq(b, 0.0), 0.0, g * b * E.pow(a, b - 1.0))
        if needed[1]:
            ga_log = E.where(a > 0, E.log(E.where(a > 0, a, 1.0)), 0.0)
            gb = g * y * ga_log
    elif kind == "max":
        ga = _tie(a, b, g, E.gt) if needed[0] else None
        gb = _tie(b, a, g, E.gt) if needed[1] else None
    elif kind == "min":
        ga = _tie(a, b, g, E.lt) if needed[0] else None
        gb = _tie(b, a, g, E.lt) if needed[1] else None
    elif kind == "mod":
        ga = g
        gb = -(g * E.floor(a / b)) if needed[1] else None
    else:  # floordiv: piecewise constant
        return [None, None]
    return [None if v is None else unbroadcast(v, x.shape) for v, x in ((ga, a), (gb, b))]


def _where(node, y, g, needed):
    c, a, b = node.inputs
    ga = unbroadcast(E.where(c, g, 0.0), a.shape) if needed[1] else None
    gb = unbroadcast(E.where(c, 0.0, g), b.shape) if needed[2] else None
    return [None, ga, gb]


def _cast(node, y, g, needed):
    x = node.inputs[0]
    return [E.astype(g, x.dtype) if is_float(x.dtype) else None]


# -- reductions, scans, matmul ------------------------------------------------------------
def _keep(t, dims, keepdim):
    if keepdim:
        return t
    for d in sorted(dims):
        t = S.unsqueeze(t, d)
    return t


def _reduce(node, y, g, needed):
    kind, dims, keepdim = node.attrs["kind"], node.attrs["dims"], node.attrs["keepdim"]
    x = node.inputs[0]
    ge = _keep(g, dims, keepdim)
    if kind == "sum":
        return [S.expand(ge, *x.shape)]
    ye = _keep(y, dims, keepdim)
    if kind == "prod":   # the product of the others, without dividing by a zero
        zero = E.eq(x, 0.0)
        safe = E.where(zero, 1.0, x)
        zeros = E.astype(zero, x.dtype).sum(dims, keepdim=True)
        nonzero = safe.prod(dims, keepdim=True)           # the product of the non-zero elements
        others = E.where(E.eq(zeros, 0.0), nonzero / safe,
                         E.where(E.logical_and(E.eq(zeros, 1.0), zero), nonzero, 0.0))
        return [S.expand(ge, *x.shape) * others]
    if kind in ("max", "min"):
        mask = E.astype(E.eq(x, ye), x.dtype)
        count = mask.sum(dims, keepdim=True)
        return [S.expand(ge, *x.shape) * _spread(mask, count)]
    return [None]  # any/all, argmax/argmin: boolean and integer results


def _scan(node, y, g, needed):
    kind, d, rev = node.attrs["kind"], node.attrs["dim"], node.attrs["reverse"]
    x = node.inputs[0]
    if kind == "cumsum":
        return [R.cumsum(g, d, reverse=not rev)]
    if kind == "cumprod":
        return [R.cumsum(g * y, d, reverse=not rev) / x]
    # cummax / cummin: y[j] = x[i*] for the extremal i* <= j (>= j reversed)
    n = x.shape[d]
    xi = S.unsqueeze(x, d + 1)                      # (..., n_i, 1, ...)
    yj = S.unsqueeze(y, d)                          # (..., 1, n_j, ...)
    k = C.arange(n, program=x.program)
    ki, kj = S.unsqueeze(k, 1), S.unsqueeze(k, 0)
    order = (ki >= kj) if rev else (ki <= kj)
    for _ in range(x.ndim - 1 - d):
        order = S.unsqueeze(order, -1)
    hit = E.astype(E.logical_and(E.eq(xi, yj), order), x.dtype)
    count = hit.sum(d, keepdim=True)
    gj = S.unsqueeze(g, d)
    return [(_spread(hit, count) * gj).sum(d + 1)]


def _spread(mask, count):
    """`mask / count`, the gradient's share of each element equal to an
    extremum, with NaN written out where no element equals it (a NaN
    extremum: count 0). XLA's algebraic simplifier turns `convert(mask) /
    count` into `select(mask, 1 / count, 0)`, which gives 0 there where IEEE
    division gives NaN: a jitted JAX program and the reference disagreed."""
    return E.where(E.eq(count, 0.0), float("nan"), mask / count)


def _shifted(x, d: int, toward_end: bool):
    """x moved one position along d (toward the end or the start), a zero filling the gap."""
    n = x.shape[d]     # pad, then slice n: the size stays n, even where n may be 0
    if toward_end:
        return S.slice(S.pad(x, (1, 0), dim=d), d, 0, n)
    return S.slice(S.pad(x, (0, 1), dim=d), d, 1, simplify(n + 1))


def _linear_scan(node, y, g, needed):
    """y[k] = b[k] + a[k] y[k -/+ 1]: the adjoint l obeys the transposed recurrence
    l[k] = g[k] + a[k +/- 1] l[k +/- 1] (a scan the other way), db = l and
    da[k] = l[k] y[k -/+ 1]."""
    d, rev = node.attrs["dim"], node.attrs["reverse"]
    a = node.inputs[0]
    lam = R.linear_scan(_shifted(a, d, toward_end=rev), g, d, reverse=not rev)
    da = lam * _shifted(y, d, toward_end=not rev) if needed[0] else None
    return [da, lam]


def _matmul(node, y, g, needed):
    a, b = node.inputs
    a1 = a if a.ndim > 1 else S.unsqueeze(a, 0)
    b1 = b if b.ndim > 1 else S.unsqueeze(b, -1)
    g1 = g
    if b.ndim == 1:
        g1 = S.unsqueeze(g1, g1.ndim)
    if a.ndim == 1:
        g1 = S.unsqueeze(g1, g1.ndim - 1)
    ga = gb = None
    if needed[0]:
        ga = unbroadcast(R.matmul(g1, S.transpose(b1, -2, -1)), a1.shape)
        if a.ndim == 1:
            ga = S.squeeze(ga, 0)
    if needed[1]:
        gb = unbroadcast(R.matmul(S.transpose(a1, -2, -1), g1), b1.shape)
        if b.ndim == 1:
            gb = S.squeeze(gb, -1)
    return [ga, gb]


# -- shapes and spatial indexing -------------------------------------------------------------
def _scatter_fallback(x, g, dim, start):
    """∇ of a slice as scatter_add into zeros (when padding widths are not provable)."""
    n = g.shape[dim]
    idx = C.arange(n, program=x.program) + C.symbol(start, program=x.program) \
        if start.free_symbols else C.arange(n, program=x.program) + int(static(start))
    shape = [1] * g.ndim
    shape[dim] = n
    idx = S.expand(S.reshape(idx, *shape), *g.shape)
    return S.scatter_add(_zeros(x), dim, idx, g)


def _embed(x, g, dim, start):
    """g placed at [start, start + len) along dim of a zero tensor of x's shape."""
    after = simplify(x.shape[dim] - start - g.shape[dim])
    try:
        return S.pad(g, (start, after), dim=dim)
    except TidalError:
        return _scatter_fallback(x, g, dim, start)


def _slice(node, y, g, needed):
    return [_embed(node.inputs[0], g, node.attrs["dim"], node.attrs["start"])]


def _take(node, y, g, needed):
    d = node.attrs["dim"]
    return [_embed(node.inputs[0], S.unsqueeze(g, d), d, node.attrs["index"])]


def _index_select(node, y, g, needed):
    x, idx = node.inputs
    d = node.attrs["dim"]
    if idx.ndim == 0:
        g = S.unsqueeze(g, d)
        idx = S.unsqueeze(idx, 0)
    shape = [1] * g.ndim
    shape[d] = g.shape[d]
    i = S.expand(S.reshape(idx, *shape), *g.shape)
    return [S.scatter_add(_zeros(x), d, i, g), None]


def _gather(node, y, g, needed):
    x, idx = node.inputs
    return [S.scatter_add(_zeros(x), node.attrs["dim"], idx, g), None]


def _scatter_add(node, y, g, needed):
    x, idx, src = node.inputs
    d = node.attrs["dim"]
    gsrc = S.gather(g, d, idx) if needed[2] else None
    return [g, None, gsrc]


def _concat(node, y, g, needed):
    d = node.attrs["dim"]
    out, start = [], Const(0)
    for x, need in zip(node.inputs, needed):
        n = x.shape[d]
        out.append(S.slice(g, d, start, simplify(start + n)) if need else None)
        start = simplify(start + n)
    return out


def _pad(node, y, g, needed):
    x = node.inputs[0]
    d, before = node.attrs["dim"], node.attrs["before"]
    return [S.slice(g, d, before, simplify(before + x.shape[d]))]


def _permute(node, y, g, needed):
    perm = node.attrs["perm"]
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return [S.permute(g, *inv)]


RULES: dict[str, Callable] = {
    "unary": _unary,
    "binary": _binary,
    "where": _where,
    "cast": _cast,
    "reduce": _reduce,
    "scan": _scan,
    "linear_scan": _linear_scan,
    "matmul": _matmul,
    "argsort": lambda n, y, g, need: [None],  # positions: sort/topk values get theirs through gather
    "reshape": lambda n, y, g, need: [S.reshape(g, *n.inputs[0].shape)],
    "permute": _permute,
    "expand": lambda n, y, g, need: [unbroadcast(g, n.inputs[0].shape)],
    "squeeze": lambda n, y, g, need: [S.unsqueeze(g, n.attrs["dim"])],
    "unsqueeze": lambda n, y, g, need: [S.squeeze(g, n.attrs["dim"])],
    "flip": lambda n, y, g, need: [S.flip(g, n.attrs["dim"])],
    "slice": _slice,
    "take": _take,
    "index_select": _index_select,
    "gather": _gather,
    "scatter_add": _scatter_add,
    "concat": _concat,
    "pad": _pad,
}
NON_DIFFERENTIABLE = ("udf", "input", "param", "constant", "full", "iota", "random", "symbol_value")


def vjp(node, y, g, needed: list) -> list[Any]:
    """Per-input gradients of `node` given the gradient g of its result y."""
    if node.op in NON_DIFFERENTIABLE:
        return [None] * len(node.inputs)
    rule = RULES.get(node.op)
    if rule is None:
        raise TidalError(f"no gradient rule for rt.{node.op}", "this op is not differentiable yet",
                         location=node.loc)
    out = rule(node, y, g, needed)
    return [o if need else None for o, need in zip(out, needed)]
