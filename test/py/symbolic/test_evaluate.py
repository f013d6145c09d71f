"""Evaluation (tree walk and compiled), substitution."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symbolic_strategies import (
    I, PARAMS, SMALL_POINTS, T, any_exprs, as_comparable, i, int_exprs, prop, t,
)
from tidal.symbolic import (
    Dim, IndexSeq, Slice, Symbol, UnboundSymbolError, compile_expr, compile_source, evaluate,
    max_, min_, parse, select, substitute, to_text,
)

ENV_NAMES = ("t", "T", "i", "I")


def test_evaluate_integers_conditions_slices_and_sequences():
    env = {t: 5, T: 10, i: 1, I: 3}
    assert evaluate(t + 1, env) == 6
    assert evaluate((t - 7) // 2, env) == -1 and evaluate((t - 7) % 3, env) == 1  # Python semantics
    assert evaluate(min_(t + 3, T), env) == 8 and evaluate(max_(0, t - 7), env) == 0
    assert evaluate(t % 5 == 0, env) is True
    assert evaluate((t > 0) & (t < T - 1), env) is True
    assert evaluate(~(t > 0) | (i == 1), env) is True
    assert evaluate(select(t > 6, t, -t), env) == -5
    assert evaluate(Slice(max_(0, t - 3), t + 1), env) == slice(2, 6)
    assert evaluate(Slice(0, T, 2), env) == slice(0, 10, 2)
    assert evaluate(IndexSeq([i, t - 1, Slice(0, t + 1)]), env) == (1, 4, slice(0, 6))


def test_evaluate_accepts_names_and_reports_missing_symbols():
    assert evaluate(t + T, {"t": 1, "T": 2}) == 3
    assert evaluate(3, {}) == 3
    with pytest.raises(UnboundSymbolError, match="`T`"):
        evaluate(t + T, {t: 1})


def test_compile_generates_a_lambda_once():
    f = compile_expr(t + 1, [t, T])
    assert f.__source__ == "lambda t, T: (t + 1)"
    assert f(3, 10) == 4 and f(t=3, T=10) == 4
    g = compile_expr(Slice(max_(0, t - 3), t + 1), [t, T])
    assert g(5, 10) == slice(2, 6)
    assert "lambda t, T:" in compile_source(t % 5 == 0, [t, T])


def test_compile_accepts_dims_and_names_and_sanitizes_identifiers():
    d = Dim("t")
    f = compile_expr(d.step + d.bound, [d])
    assert f(1, 2) == 3
    h = compile_expr(t + T, ["t", "T"])
    assert h(1, 2) == 3
    odd = Symbol("_x")
    assert compile_expr(odd * 2, [odd])(4) == 8
    assert "_p0" in compile_source(odd, [odd])


def test_compile_reports_missing_params_and_duplicates():
    with pytest.raises(UnboundSymbolError, match="`i`"):
        compile_expr(t + i, [t, T])
    with pytest.raises(ValueError, match="twice"):
        compile_expr(t, [t, t])


def test_compiled_sequence_and_select():
    f = compile_expr(parse("[i, t - 1, 0:t + 1, select(t > 0, t, 0)]"), PARAMS)
    assert f(2, 5, 1, 3) == (1, 1, slice(0, 3), 2)
    empty = compile_expr(IndexSeq([]), PARAMS)
    assert empty(0, 1, 0, 1) == ()


@prop(400)
@given(any_exprs)
def test_compiled_functions_agree_with_tree_evaluation(e):
    f = compile_expr(e, PARAMS)
    for point in SMALL_POINTS[::7]:
        env = dict(zip(ENV_NAMES, point))
        assert as_comparable(f(*point)) == as_comparable(evaluate(e, env)), (str(e), env)


def test_substitute_examples():
    assert to_text(substitute(t + T, {t: t + 1})) == "t + 1 + T"
    assert to_text(substitute(Slice(t, T), {t: t + 1})) == "t + 1:T"
    assert to_text(substitute(t - i, {t: i, i: t})) == "i - t"  # simultaneous
    assert to_text(substitute(t % 5 == 0, {"t": 3}, simplify=True)) == "false"
    assert substitute(Slice(t, t + 1), {t: T}).same(Slice(T, T + 1, validate=False))


@prop(400)
@given(any_exprs, int_exprs, st.sampled_from([t, i, T]))
def test_substitution_agrees_with_evaluation(e, replacement, symbol):
    substituted = substitute(e, {symbol: replacement})
    f = compile_expr(e, PARAMS)
    g = compile_expr(substituted, PARAMS)
    r = compile_expr(replacement, PARAMS)
    position = next(k for k, p in enumerate(PARAMS) if p is symbol)
    for point in SMALL_POINTS[::5]:
        changed = list(point)
        changed[position] = r(*point)
        assert as_comparable(g(*point)) == as_comparable(f(*changed)), (str(e), str(replacement))
