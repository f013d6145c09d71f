"""Hypothesis strategies and brute-force helpers shared by the symbolic tests.

Random expressions range over two dimensions ``t < T`` and ``i < I``; the
brute-force checks evaluate them at every point of small domains.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tidal.symbolic import (
    Add, Compare, Const, Dim, FloorDiv, IndexSeq, Max, Min, Mod, Mul, Neg, Select, Slice, Sub,
    And, Or, Not, TRUE, FALSE, compile_expr,
)

T_DIM, I_DIM = Dim("t"), Dim("i")
t, T = T_DIM
i, I = I_DIM
PARAMS = [t, T, i, I]

#: Bound values for brute force: every (T, I) pair from this list, every t < T, i < I.
BOUNDS = (1, 2, 3, 5, 8, 12)
SMALL_BOUNDS = (1, 2, 4, 7)


def domain_points(bounds=BOUNDS):
    """All (t, T, i, I) tuples of the small test domains."""
    result = []
    for tb, ib in itertools.product(bounds, bounds):
        for tv, iv in itertools.product(range(tb), range(ib)):
            result.append((tv, tb, iv, ib))
    return result


POINTS = domain_points()
SMALL_POINTS = domain_points(SMALL_BOUNDS)


def as_comparable(value):
    """Slices are compared by (start, stop, step); tuples element-wise."""
    if isinstance(value, slice):
        return ("slice", value.start, value.stop, value.step or 1)
    if isinstance(value, tuple):
        return tuple(as_comparable(v) for v in value)
    return value


def values_at(expr, points=POINTS):
    """Values of ``expr`` at every point (through ``compile_expr``)."""
    fn = compile_expr(expr, PARAMS)
    return [as_comparable(fn(*p)) for p in points]


def first_mismatch(a, b, points=POINTS):
    """The first point where ``a`` and ``b`` differ, or None."""
    fa, fb = compile_expr(a, PARAMS), compile_expr(b, PARAMS)
    for p in points:
        if as_comparable(fa(*p)) != as_comparable(fb(*p)):
            return dict(zip(("t", "T", "i", "I"), p)), fa(*p), fb(*p)
    return None


# -- random expressions -----------------------------------------------------------
OPS = ("lt", "le", "eq", "ne", "ge", "gt")
leaves = st.one_of(st.sampled_from([t, T, i, I]), st.integers(-6, 6).map(Const))
divisors = st.integers(1, 5)


def _conditions(ints):
    return st.builds(Compare, st.sampled_from(OPS), ints, ints)


def _extend_ints(children):
    pairs = st.tuples(children, children)
    return st.one_of(
        pairs.map(lambda ab: Add(*ab)),
        pairs.map(lambda ab: Sub(*ab)),
        st.tuples(st.integers(-3, 3).map(Const), children).map(lambda ab: Mul(*ab)),
        pairs.map(lambda ab: Mul(*ab)),
        children.map(Neg),
        st.builds(FloorDiv, children, divisors),
        st.builds(Mod, children, divisors),
        st.lists(children, min_size=2, max_size=3).map(lambda xs: Min(*xs)),
        st.lists(children, min_size=2, max_size=3).map(lambda xs: Max(*xs)),
        st.builds(Select, _conditions(children), children, children),
    )


int_exprs = st.recursive(leaves, _extend_ints, max_leaves=10)

bool_leaves = st.one_of(_conditions(int_exprs), st.sampled_from([TRUE, FALSE]))


def _extend_bools(children):
    return st.one_of(
        st.lists(children, min_size=2, max_size=3).map(lambda xs: And(*xs)),
        st.lists(children, min_size=2, max_size=3).map(lambda xs: Or(*xs)),
        children.map(Not),
        st.builds(Select, children, children, children),
    )


bool_exprs = st.recursive(bool_leaves, _extend_bools, max_leaves=4)

slices = st.builds(
    lambda a, b, s: Slice(a, b, s, validate=False), int_exprs, int_exprs, st.sampled_from([1, 1, 2, 3])
)
components = st.one_of(int_exprs, slices)
index_seqs = st.lists(components, min_size=0, max_size=3).map(lambda cs: IndexSeq(cs, validate=False))
any_exprs = st.one_of(int_exprs, bool_exprs, slices, index_seqs)

# Affine expressions (what isl accepts): no products of two symbols.
_affine_leaves = leaves


def _extend_affine(children):
    pairs = st.tuples(children, children)
    return st.one_of(
        pairs.map(lambda ab: Add(*ab)),
        pairs.map(lambda ab: Sub(*ab)),
        st.tuples(st.integers(-3, 3).map(Const), children).map(lambda ab: Mul(*ab)),
        children.map(Neg),
        st.builds(FloorDiv, children, divisors),
        st.builds(Mod, children, divisors),
        st.lists(children, min_size=2, max_size=3).map(lambda xs: Min(*xs)),
        st.lists(children, min_size=2, max_size=3).map(lambda xs: Max(*xs)),
        st.builds(Select, _conditions(children), children, children),
    )


affine_exprs = st.recursive(_affine_leaves, _extend_affine, max_leaves=6)


# -- random dependences in the class that invert() supports -------------------------
def monotone_ends(step, bound):
    """Expressions non-decreasing in ``step`` (sink-dim end points)."""
    base = st.one_of(
        st.integers(-3, 4).map(lambda c: step + c),
        st.integers(-2, 6).map(Const),
        st.integers(-2, 1).map(lambda c: bound + c),
    )

    def extend(children):
        return st.one_of(
            st.tuples(children, children).map(lambda ab: Min(*ab)),
            st.tuples(children, children).map(lambda ab: Max(*ab)),
            st.builds(lambda e, d: FloorDiv(e, d) * d, children, st.integers(1, 3)),
            st.builds(lambda e, c: e + c, children, st.integers(-2, 2)),
        )

    return st.recursive(base, extend, max_leaves=4)


def dependent_components(step, bound):
    """A point or slice over one sink dim (``step``)."""
    ends = monotone_ends(step, bound)
    return st.one_of(
        st.integers(-3, 3).map(lambda c: step + c),
        st.integers(-1, 1).map(lambda c: bound - 1 - step + c),
        ends,
        st.builds(lambda a, b: Slice(a, b, validate=False), ends, ends),
    )


def constant_components(bound):
    """A component that ignores every sink dim."""
    ends = st.one_of(st.integers(-1, 6).map(Const), st.integers(-2, 0).map(lambda c: bound + c))
    return st.one_of(
        ends,
        st.builds(lambda a, b, s: Slice(a, b, s, validate=False), ends, ends, st.sampled_from([1, 1, 2])),
    )


@st.composite
def two_dim_deps(draw, sources=([T_DIM], [I_DIM, T_DIM], [T_DIM, I_DIM], [I_DIM])):
    """(dependence, source dims) for a sink with dims (i, t): one component per
    source dim, each reading one of the sink's dims or none (a constant)."""
    source = draw(st.sampled_from(list(sources)))
    components = []
    for d in source:
        reader = draw(st.sampled_from([d, T_DIM, I_DIM, None]))
        if reader is None:
            components.append(draw(constant_components(d.bound)))
        else:
            components.append(draw(dependent_components(reader.step, reader.bound)))
    return IndexSeq(components, validate=False), source


def prop(max_examples: int):
    """Settings for a property test: no deadline, no example database on disk."""
    return settings(
        max_examples=max_examples, deadline=None, database=None,
        suppress_health_check=list(HealthCheck),
    )
