"""The isl bridge: domains, dependence maps, reading maps back, inverse agreement."""

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("islpy")

from symbolic_strategies import affine_exprs, prop, two_dim_deps  # noqa: E402
from tidal.symbolic import (  # noqa: E402
    Dim, IndexSeq, NonAffineError, Slice, compile_expr, invert, parse, to_text,
)
from tidal.symbolic.isl_bridge import (  # noqa: E402
    check_inverse_agrees, dependence_map, domain_set, fix_params, inverse_via_isl, inversion_map,
    map_to_dependence, points,
)

TD, ID = Dim("t"), Dim("i")
t, T = TD
i, I = ID

PAPER_DEPS = [
    "[t + 3]", "[t - 1]", "[max(0, t - 3):t + 1]", "[t:T]", "[t:min(t + 3, T)]", "[0:t + 1]",
    "[0:T]", "[0]", "[0:5]", "[0:T:2]", "[T - 1 - t]", "[t // 2]", "[t // 4 * 4:t // 4 * 4 + 4]",
    "[min(t, 5):t + 1]",
]


def test_domain_set():
    domain = domain_set([TD])
    assert str(domain) == "[T] -> { [t] : 0 <= t < T }"
    assert points(fix_params(domain_set([TD, ID]), {"T": 3, "I": 2})) == sorted(
        itertools.product(range(3), range(2))
    )
    restricted = fix_params(domain_set([TD], t % 5 == 0), {"T": 12})
    assert points(restricted) == [(0,), (5,), (10,)]


def test_dependence_map_text_and_conditions():
    m = dependence_map([TD], parse("[t - 1]"), [TD], t > 0)
    assert str(m) == "[T] -> { [t] -> [t' = -1 + t] : 0 < t < T }"
    m = dependence_map([TD], parse("[t - 1]"), [TD], t % 5 == 0)
    assert points(fix_params(m, {"T": 12})) == [(5, 4), (10, 9)]
    window = dependence_map([TD], parse("[max(0, t - 3):t + 1]"), [TD])
    assert points(fix_params(window, {"T": 3})) == [(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]


def test_select_in_a_dependence_becomes_a_disjunction():
    dep = IndexSeq([parse("select(t > 2, t - 1, 0)")])
    m = fix_params(dependence_map([TD], dep, [TD]), {"T": 5})
    assert points(m) == [(0, 0), (1, 0), (2, 0), (3, 2), (4, 3)]


def test_non_affine_products_are_rejected():
    with pytest.raises(NonAffineError, match=r"dependence `\[t \* i\]`.*`t \* i`") as info:
        dependence_map([TD, ID], parse("[t * i]"), [TD])
    assert "__out" not in str(info.value)
    with pytest.raises(NonAffineError, match=r"condition `t \* t > 2`"):
        domain_set([TD], t * t > 2)
    # products that simplify to affine ones are fine
    dependence_map([TD], IndexSeq([(t + 1) * (t - 1) - t * t + 1]), [TD])


@pytest.mark.parametrize("dep", PAPER_DEPS)
def test_inverse_agrees_with_isl(dep):
    assert check_inverse_agrees(parse(dep), [TD], [TD])


@pytest.mark.parametrize(
    "dep, sink, source",
    [("[i, t - 1]", [ID, TD], [ID, TD]), ("[t]", [ID, TD], [TD]), ("[i, t + 1]", [TD, ID], [TD, ID]),
     ("[i, 0:T]", [ID], [ID, TD]), ("[t, t:T]", [TD], [TD, ID])],
)
def test_inverse_agrees_with_isl_multi_dim(dep, sink, source):
    assert check_inverse_agrees(parse(dep), sink, source)


def test_check_inverse_detects_a_wrong_inverse():
    dep = parse("[max(0, t - 3):t + 1]")
    reversed_map = dependence_map([TD], dep, [TD]).reverse()
    good = invert(dep, [TD], [TD])
    wrong = good._replace(index=IndexSeq([Slice(t, T)]))
    assert reversed_map.is_equal(inversion_map(good, [TD], [TD]))
    assert not reversed_map.is_equal(inversion_map(wrong, [TD], [TD]))


@pytest.mark.parametrize(
    "dep", ["[t + 3]", "[max(0, t - 3):t + 1]", "[t:T]", "[t:min(t + 3, T)]", "[0:t + 1]", "[0:T]", "[0:5]"]
)
def test_isl_inverse_reads_back_as_the_symbolic_inverse(dep):
    from_isl = inverse_via_isl(parse(dep), [TD], [TD])
    symbolic = invert(parse(dep), [TD], [TD])
    assert from_isl.index.same(symbolic.index), (to_text(from_isl.index), to_text(symbolic.index))
    assert check_equivalent_conditions(from_isl.condition, symbolic.condition)


def check_equivalent_conditions(a, b):
    fa, fb = compile_expr(a, [t, T]), compile_expr(b, [t, T])
    return all(fa(x, n) == fb(x, n) for n in range(1, 12) for x in range(n))


def test_map_to_dependence_round_trip_on_inversion_maps():
    for dep in PAPER_DEPS[:8]:
        inverse = invert(parse(dep), [TD], [TD])
        read = map_to_dependence(inversion_map(inverse, [TD], [TD]), [TD], [TD])
        again = inversion_map(read, [TD], [TD])
        assert again.is_equal(inversion_map(inverse, [TD], [TD])), dep


def test_map_to_dependence_reports_unsupported_shapes():
    from tidal.symbolic import IslTranslationError

    two_pieces = dependence_map([TD], parse("[min(t, 5):t + 1]"), [TD]).reverse()
    with pytest.raises(IslTranslationError, match="pieces"):
        map_to_dependence(two_pieces, [TD], [TD])
    scaled = dependence_map([TD], parse("[2 * t]"), [TD])
    assert to_text(map_to_dependence(scaled, [TD], [TD]).index) == "[2 * t]"
    with pytest.raises(IslTranslationError, match="not \\+-1"):
        map_to_dependence(scaled.reverse(), [TD], [TD])


# -- properties -------------------------------------------------------------------------
@prop(100)
@given(two_dim_deps(sources=([TD], [ID, TD], [TD, ID])))
def test_symbolic_inversion_agrees_with_isl_reverse(case):
    dep, source = case
    assert check_inverse_agrees(dep, [ID, TD], source), str(dep)


@prop(120)
@given(affine_exprs, affine_exprs, st.booleans())
def test_dependence_map_points_match_brute_force(a, c, as_slice):
    component = Slice(a, c, validate=False) if as_slice else a
    dep = IndexSeq([component])
    m = dependence_map([TD, ID], dep, [TD])
    fn = compile_expr(component, [t, T, i, I])
    for bt, bi in [(1, 1), (3, 2), (5, 3)]:
        expected = set()
        for x, y in itertools.product(range(bt), range(bi)):
            value = fn(x, bt, y, bi)
            reads = range(value.start, value.stop) if isinstance(value, slice) else [value]
            expected |= {(x, y, q) for q in reads if 0 <= q < bt}
        assert set(points(fix_params(m, {"T": bt, "I": bi}))) == expected, (str(dep), bt, bi)


@prop(120)
@given(affine_exprs, st.sampled_from(["lt", "le", "eq", "ne", "ge", "gt"]))
def test_condition_restricts_the_domain_like_evaluation(e, op):
    from tidal.symbolic import Compare

    cond = Compare(op, e, 1)
    fn = compile_expr(cond, [t, T, i, I])
    domain = domain_set([TD, ID], cond)
    for bt, bi in [(2, 2), (6, 3)]:
        expected = {(x, y) for x in range(bt) for y in range(bi) if fn(x, bt, y, bi)}
        assert set(points(fix_params(domain, {"T": bt, "I": bi}))) == expected, str(cond)


def test_names_that_isl_reserves_are_escaped():
    d, e = Dim("floor", bound="Ceil"), Dim("t", bound="infty")
    assert str(domain_set([d, e])) == "[Ceil_, infty_] -> { [floor_, t] : 0 <= floor_ < Ceil_ and 0 <= t < infty_ }"
    assert check_inverse_agrees(parse("[floor - 1]", dims=[d]), [d], [d])
    read_back = inverse_via_isl(parse("[max(0, t - 3):t + 1]", dims=[e]), [e], [e])
    assert read_back.index.same(invert(parse("[max(0, t - 3):t + 1]", dims=[e]), [e], [e]).index)
