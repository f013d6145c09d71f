"""Slice sizes, slice validation and access-pattern classification."""

import pytest
from hypothesis import given

from symbolic_strategies import PARAMS, POINTS, T, prop, slices, t
from tidal.symbolic import (
    AccessPattern, Const, Dim, InvalidSliceError, Slice, check_slice, classify, compile_expr,
    max_, parse, slice_size, to_text,
)


@pytest.mark.parametrize(
    "text, size",
    [
        ("t:T", "T - t"),
        ("0:T", "T"),
        ("0:t + 1", "t + 1"),
        ("t:t + 3", "3"),
        ("max(0, t - 2):t + 1", "min(t, 2) + 1"),
        ("max(0, t - 3):t + 1", "min(t, 3) + 1"),
        ("t:min(t + 3, T)", "min(T - t, 3)"),
        ("0:T:2", "(T + 1) // 2"),
        ("1:T:3", "(T + 1) // 3"),
        ("0:5", "5"),
        ("t + 1:t", "0"),
        ("t:3", "max(0, -t + 3)"),
    ],
)
def test_slice_size(text, size):
    assert to_text(slice_size(parse(text, validate=False))) == size


def test_point_has_size_one():
    assert slice_size(t - 1).same(Const(1))


@prop(500)
@given(slices)
def test_slice_size_agrees_with_range_length(s):
    size = compile_expr(slice_size(s), PARAMS)
    bounds = compile_expr(s, PARAMS)
    for point in POINTS[::3]:
        python_slice = bounds(*point)
        expected = len(range(python_slice.start, python_slice.stop, python_slice.step or 1))
        assert size(*point) == expected, (str(s), point)


@prop(500)
@given(slices)
def test_accepted_slices_never_have_negative_size(s):
    try:
        check_slice(s)
    except InvalidSliceError:
        return
    lengths = compile_expr(s.stop - s.start, PARAMS)
    assert all(lengths(*p) >= 0 for p in POINTS), str(s)


def test_check_slice_on_the_issue_examples():
    with pytest.raises(InvalidSliceError):
        check_slice(Slice(t + 1, t, validate=False))
    with pytest.raises(InvalidSliceError):
        check_slice(Slice(t, 3, validate=False))
    check_slice(Slice(max_(0, t - 3), t + 1))


@pytest.mark.parametrize(
    "text, pattern, extra",
    [
        ("t", AccessPattern.POINT, {"offset": 0}),
        ("t - 1", AccessPattern.POINT, {"offset": -1}),
        ("t + 3", AccessPattern.POINT, {"offset": 3}),
        ("min(t + 1, T - 1)", AccessPattern.POINT, {"offset": 1}),
        ("T - 1 - t", AccessPattern.POINT, {"offset": None}),
        ("0", AccessPattern.CONSTANT, {}),
        ("T - 1", AccessPattern.CONSTANT, {}),
        ("i", AccessPattern.CONSTANT, {}),
        ("t % 5", AccessPattern.OTHER, {}),
        ("t * t", AccessPattern.OTHER, {}),
        ("max(0, t - 3):t + 1", AccessPattern.WINDOW, {"window": 4, "offset": -3}),
        ("t:min(t + 3, T)", AccessPattern.WINDOW, {"window": 3, "offset": 0}),
        ("t - 2:t + 3", AccessPattern.WINDOW, {"window": 5, "offset": -2}),
        ("0:t + 1", AccessPattern.PREFIX, {}),
        ("2:t + 1", AccessPattern.PREFIX, {}),
        ("t:T", AccessPattern.SUFFIX, {}),
        ("t + 1:T", AccessPattern.SUFFIX, {}),
        ("0:T", AccessPattern.FULL, {}),
        ("0:5", AccessPattern.CONSTANT_SLICE, {}),
        ("0:T:2", AccessPattern.CONSTANT_SLICE, {}),
        ("1:T", AccessPattern.CONSTANT_SLICE, {}),
        ("t // 4 * 4:t // 4 * 4 + 4", AccessPattern.BLOCK, {}),
        ("t:2 * t + 1", AccessPattern.OTHER, {}),
    ],
)
def test_classify(text, pattern, extra):
    access = classify(parse(text, validate=False), Dim("t"))
    assert access.pattern is pattern, (text, access)
    for field, value in extra.items():
        assert getattr(access, field) == value, (text, field, access)


def test_classify_reports_sizes_and_accepts_step_symbols():
    window = classify(parse("max(0, t - 3):t + 1"), t)
    assert to_text(window.size) == "min(t, 3) + 1" and window.window == 4
    assert to_text(classify(parse("t:T"), t).size) == "T - t"
    assert classify(parse("t"), Dim("i")).pattern is AccessPattern.CONSTANT
    assert classify(parse("[0:I, t]", validate=False)[0], Dim("i")).pattern is AccessPattern.FULL
    with pytest.raises(TypeError):
        classify(t > 0, t)
    with pytest.raises(TypeError):
        classify(t, T)
