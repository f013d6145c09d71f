"""Textual form: the two printers, the parser, round trips, parse errors."""

import re

import pytest
from hypothesis import given

from symbolic_strategies import I, T, any_exprs, i, prop, t
from tidal.symbolic import (
    Const, Dim, IndexSeq, Neg, Not, ParseError, Slice, Symbol, UnknownSymbolError, max_, min_,
    parse, select, to_mlir_text, to_text,
)

b, B = Dim("b")

# (expression, Pythonic text, MLIR-safe text)
EXAMPLES = [
    (t + 1, "t + 1", "t + 1"),
    (t - 1, "t - 1", "t - 1"),
    (1 - t, "1 - t", "1 - t"),
    (-t, "-t", "-t"),
    (t // 2, "t // 2", "t floordiv 2"),
    (t % 5 == 0, "t % 5 == 0", "t mod 5 eq 0"),
    (t != T - 1, "t != T - 1", "t ne T - 1"),
    ((t > 0) & (t < T - 1), "t > 0 & t < T - 1", "t gt 0 and t lt T - 1"),
    ((t >= 1) | (t <= 0), "t >= 1 | t <= 0", "t ge 1 or t le 0"),
    (~(t == 0), "~t == 0", "not t eq 0"),
    (min_(t + 3, T), "min(t + 3, T)", "min(t + 3, T)"),
    (max_(0, t - 3), "max(0, t - 3)", "max(0, t - 3)"),
    (select(t > 0, t - 1, 0), "select(t > 0, t - 1, 0)", "select(t gt 0, t - 1, 0)"),
    (Slice(t, T), "t:T", "t:T"),
    (Slice(0, t + 1), "0:t + 1", "0:t + 1"),
    (Slice(max_(0, t - 3), t + 1), "max(0, t - 3):t + 1", "max(0, t - 3):t + 1"),
    (Slice(t, min_(t + 3, T)), "t:min(t + 3, T)", "t:min(t + 3, T)"),
    (Slice(0, T, 2), "0:T:2", "0:T:2"),
    (IndexSeq([t + 3]), "[t + 3]", "[t + 3]"),
    (IndexSeq([i, t - 1]), "[i, t - 1]", "[i, t - 1]"),
    (IndexSeq([t - 1, Slice(0, T)]), "[t - 1, 0:T]", "[t - 1, 0:T]"),
    (IndexSeq([b, i, Slice(t, T)]), "[b, i, t:T]", "[b, i, t:T]"),
    (IndexSeq([]), "[]", "[]"),
    ((t + 1) % 5 == 0, "(t + 1) % 5 == 0", "(t + 1) mod 5 eq 0"),
    ((t + 1) * 2, "(t + 1) * 2", "(t + 1) * 2"),
    (2 * (t + 1), "2 * (t + 1)", "2 * (t + 1)"),
    (t - (i - 1), "t - (i - 1)", "t - (i - 1)"),
    ((t - i) - 1, "t - i - 1", "t - i - 1"),
    (-(t + 1), "-(t + 1)", "-(t + 1)"),
    (t * -1, "t * -1", "t * -1"),
    (t - Const(-3), "t - -3", "t - -3"),
    (-2 * t, "-2 * t", "-2 * t"),
    (Neg(t * 2), "-(t * 2)", "-(t * 2)"),
    (t // 2 * 2, "t // 2 * 2", "t floordiv 2 * 2"),
    (t // (2 * 3), "t // 6", "t floordiv 6"),
    (~((t > 0) & (i > 0)), "~(t > 0 & i > 0)", "not (t gt 0 and i gt 0)"),
    ((t > 0) & ((i > 0) | (I > 1)), "t > 0 & (i > 0 | I > 1)", "t gt 0 and (i gt 0 or I gt 1)"),
    (Not(Not(t > 0)), "~~t > 0", "not not t gt 0"),
    (parse("true") & (t > 0), "true & t > 0", "true and t gt 0"),
]


@pytest.mark.parametrize("expr, pythonic, mlir", EXAMPLES)
def test_printers(expr, pythonic, mlir):
    assert to_text(expr) == pythonic == str(expr)
    assert to_text(expr, mlir=True) == mlir == to_mlir_text(expr)


@pytest.mark.parametrize("expr, pythonic, mlir", EXAMPLES)
def test_parser_reads_both_forms(expr, pythonic, mlir):
    assert parse(pythonic).same(expr)
    assert parse(mlir).same(expr)


def test_parser_accepts_mixed_forms_and_spacing():
    assert parse("t mod 5 == 0 & t>0").same((t % 5 == 0) & (t > 0))
    assert parse("  min( t+3 ,T )").same(min_(t + 3, T))
    assert parse("t // 2 floordiv 3").same(t // 2 // 3)
    assert parse("True | False").same(parse("true or false"))
    assert parse("[ ]").same(IndexSeq([]))
    assert parse("min(t)").same(t)


def test_symbol_resolution():
    custom = Dim("t", bound="Tmax")
    assert parse("t + Tmax", dims=[custom]).same(custom.step + custom.bound)
    assert parse("t", dims=[Dim("t")]).same(t)
    n = Symbol("N")
    assert parse("t + N", dims=[Dim("t")], symbols=[n]).same(t + n)
    assert parse("x + 1", symbols={"x": t}).same(t + 1)
    with pytest.raises(UnknownSymbolError, match="unknown symbol 'i'") as info:
        parse("t + i", dims=[Dim("t")])
    assert info.value.position == 4 and info.value.text == "t + i"
    with pytest.raises(UnknownSymbolError, match="Tmax"):
        parse("t + Tmax")  # mixed case: no convention applies


@pytest.mark.parametrize(
    "text, position, reason",
    [
        ("t +", 3, "expected an expression"),
        ("min(t, 3", 8, "expected ')'"),
        ("t < i < T", 6, "do not chain"),
        ("t $ 1", 2, "unexpected character"),
        ("(t + 1", 6, "expected ')'"),
        ("t + 1)", 5, "unexpected ')'"),
        ("select(t > 0, 1)", 0, "select takes 3 arguments"),
        ("t // T", 2, "not a constant"),
        ("t + (t > 0)", 2, "bool"),
        ("[t, 0:T", 7, "expected ']'"),
        ("t:3", 1, "negative size"),
        ("t + + 1", 4, "expected an expression"),
        ("min", 3, "expected '('"),
        ("t @ 2", 2, "unexpected character"),
    ],
)
def test_parse_errors_name_text_and_position(text, position, reason):
    with pytest.raises(ParseError) as info:
        parse(text, validate=True)
    assert info.value.position == position, str(info.value)
    assert reason in str(info.value)
    assert repr(text) in str(info.value)


def test_slices_are_validated_only_on_request():
    assert parse("t + 1:t").same(Slice(t + 1, t, validate=False))
    with pytest.raises(ParseError, match="negative size"):
        parse("[0, t + 1:t]", validate=True)
    parse("[max(0, t - 3):t + 1]", validate=True)


MLIR_TOKEN = re.compile(r"\d+|[A-Za-z_][A-Za-z0-9_]*|[-+*:,()\[\]]| ")
MLIR_KEYWORDS = set("floordiv mod eq ne lt le gt ge and or not min max select true false".split())


def _only_mlir_safe_tokens(text):
    return MLIR_TOKEN.sub("", text) == ""


@prop(1200)
@given(any_exprs)
def test_round_trip_both_forms(e):
    for mlir in (False, True):
        text = to_text(e, mlir=mlir)
        parsed = parse(text, validate=False)
        assert parsed.same(e), (text, to_text(parsed, mlir=mlir))
        assert to_text(parsed, mlir=mlir) == text
    mlir_text = to_text(e, mlir=True)
    assert _only_mlir_safe_tokens(mlir_text), mlir_text
    assert "  " not in mlir_text and "( " not in mlir_text and " )" not in mlir_text


def test_canonical_spacing_rules():
    text = to_text(IndexSeq([Slice(max_(0, t - 3), t + 1), min_(t + 3, T) - 1]), mlir=True)
    assert text == "[max(0, t - 3):t + 1, min(t + 3, T) - 1]"
    assert " :" not in text and ": " not in text and "[ " not in text
