"""Simplification: canonical forms, facts, and brute-force soundness/idempotence."""

import pytest
from hypothesis import given

from symbolic_strategies import (
    POINTS, SMALL_POINTS, T, any_exprs, bool_exprs, first_mismatch, i, int_exprs, prop, t,
)
from tidal.symbolic import FALSE, TRUE, Const, Slice, IndexSeq, max_, min_, parse, simplify, to_text

def s(text: str) -> str:
    return to_text(simplify(parse(text, validate=False)))


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2 + 3 * 4", "14"),
        ("t + t + 1 - t", "t + 1"),
        ("1 - t + T", "T - t + 1"),
        ("t - T", "t - T"),
        ("-(i + 3) + 2 * t", "2 * t - i - 3"),
        ("(t + 1) * (t - 1)", "t * t - 1"),
        ("3 * (t - 1) - 3 * t", "-3"),
        ("0 * t", "0"),
    ],
)
def test_linear_canonical_form(text, expected):
    assert s(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("min(t + 3, T)", "min(t + 3, T)"),
        ("min(T, t + 3)", "min(t + 3, T)"),
        ("max(t - 3, 0)", "max(0, t - 3)"),
        ("min(t + 1, T)", "t + 1"),  # t + 1 <= T
        ("max(0, t)", "t"),  # t >= 0
        ("max(t, T)", "T"),
        ("min(3, 5, t)", "min(t, 3)"),
        ("min(min(t, i), min(T, 4))", "min(t, i, 4)"),
        ("max(max(t, 1), max(i, 1))", "max(1, i, t)"),
        ("min(t, t)", "t"),
        ("t + 1 - max(0, t - 2)", "min(t, 2) + 1"),
        ("min(t + 4, T) - t", "min(T - t, 4)"),
        ("max(0, t - 3) + 5", "max(0, t - 3) + 5"),
        ("max(1, t)", "max(1, t)"),
        ("min(t + 1, 3)", "min(t, 2) + 1"),
        ("min(t, 2) + 1 - min(t + 1, 3)", "0"),
        ("(4 * t + 5) // 4", "t + 1"),
        ("(4 * t + 3) // 4", "t"),
        ("min(t + 3, T) + 1", "min(t + 3, T) + 1"),
        ("2 * min(t, 3)", "min(2 * t, 6)"),
        ("-max(t, i)", "min(-t, -i)"),
    ],
)
def test_min_max_normalization(text, expected):
    assert s(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("t // 1", "t"),
        ("t % 1", "0"),
        ("(2 * t + 1) // 2", "t"),
        ("(4 * t + 6) // 4", "t + 1"),
        ("(t // 2) // 3", "t // 6"),
        ("(t // 2 + 1) // 3", "(t + 2) // 6"),
        ("(t % 5) // 5", "0"),
        ("(t % 5) % 7", "t % 5"),
        ("(t % 6) % 3", "t % 3"),
        ("(t + 7) % 5", "(t + 2) % 5"),
        ("t - 2 * (t // 2)", "t % 2"),
        ("(-3 - T) // 5", "(-T + 2) // 5 - 1"),
        ("(t % 5 + 5) // 5", "1"),
    ],
)
def test_division_and_modulo_rules(text, expected):
    assert s(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("t >= 0", "true"),
        ("t < T", "true"),
        ("T >= 1", "true"),
        ("T > 0", "true"),
        ("t == T", "false"),
        ("t > T - 1", "false"),
        ("t <= T - 1", "true"),
        ("t > 0", "t > 0"),
        ("3 > t", "t < 3"),
        ("t + 1 < T", "t < T - 1"),
        ("t % 5 == 0", "t % 5 == 0"),
        ("2 * t == 4", "t == 2"),
        ("2 * t == 3", "false"),
        ("2 * t != 3", "true"),
        ("t % 5 < 5", "true"),
        ("t // 2 <= t", "true"),
        ("i < min(t, 3)", "i < 3 & i < t"),
        ("2 * t < min(T, 2 * t + 2)", "2 * t < T"),
        ("t < min(t + 4, T)", "true"),
    ],
)
def test_comparisons_use_the_dimension_facts(text, expected):
    assert s(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("t > 0 & t > 0", "t > 0"),
        ("t > 2 & t > 0", "t > 2"),
        ("t > 2 | t > 0", "t > 0"),
        ("t > 3 & t < 2", "false"),
        ("t >= 3 | t < 3", "true"),
        ("t > 0 & t >= 1", "t >= 1"),
        ("~(t > 0)", "t <= 0"),
        ("~(t > 0 & i > 0)", "i <= 0 | t <= 0"),
        ("~~(t == 1)", "t == 1"),
        ("t == 1 & t != 1", "false"),
        ("t == 1 | t != 1", "true"),
        ("t > 0 & (t > 0 | i > 0)", "t > 0"),
        ("t > 0 | t > 0 & i > 0", "t > 0"),
        ("true & t > 0", "t > 0"),
        ("false | t > 0", "t > 0"),
        ("t > 0 & false", "false"),
        ("select(t > 0, true, false)", "t > 0"),
        ("t >= 1 & T >= t + 1", "t >= 1"),
    ],
)
def test_boolean_simplification(text, expected):
    assert s(text) == expected


def test_select_simplification():
    assert s("select(t >= 0, t, i)") == "t"
    assert s("select(t > 0, i, i)") == "i"
    assert s("select(t <= 0, 1, 2)") == s("select(t > 0, 2, 1)")  # canonical orientation


def test_slices_and_sequences_simplify_componentwise():
    seq = IndexSeq([t + 0, Slice(max_(t - 3, 0), min_(T, t + 1), validate=False)])
    assert to_text(simplify(seq)) == "[t, max(0, t - 3):t + 1]"
    assert simplify(Const(1) + 1).same(Const(2))
    assert simplify(t > -1) is TRUE and simplify(t < 0) is FALSE


def test_canonical_forms_coincide_for_equivalent_sums():
    assert simplify(t + 1 + i).same(simplify(i + (1 + t)))
    assert simplify(min_(t + 3, T) - 1).same(simplify(min_(t + 2, T - 1)))


@prop(1500)
@given(int_exprs)
def test_simplify_is_sound_and_idempotent_on_integers(e):
    simplified = simplify(e)
    assert first_mismatch(e, simplified, SMALL_POINTS) is None, (str(e), str(simplified))
    assert simplify(simplified) is simplified, (str(e), str(simplified), str(simplify(simplified)))


@prop(800)
@given(bool_exprs)
def test_simplify_is_sound_and_idempotent_on_conditions(e):
    simplified = simplify(e)
    assert first_mismatch(e, simplified, SMALL_POINTS) is None, (str(e), str(simplified))
    assert simplify(simplified) is simplified, (str(e), str(simplified))


@prop(300)
@given(any_exprs)
def test_simplify_is_sound_on_the_full_domain(e):
    simplified = simplify(e)
    assert first_mismatch(e, simplified, POINTS) is None, (str(e), str(simplified))
    assert simplify(simplified) is simplified
