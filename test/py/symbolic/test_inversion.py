"""Inversion of dependence expressions: the paper's examples and brute force."""

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from symbolic_strategies import constant_components, dependent_components, prop, two_dim_deps
from tidal.symbolic import (
    TRUE, Dim, IndexSeq, NonInvertibleError, compile_expr, invert, parse, to_text,
)

TD, ID = Dim("t"), Dim("i")
t, T = TD
i, I = ID


@pytest.mark.parametrize(
    "dep, inverse, condition",
    [
        ("[t + 3]", "[t - 3]", "t >= 3"),
        ("[t - 1]", "[t + 1]", "t < T - 1"),
        ("[t]", "[t]", "true"),
        ("[max(0, t - 3):t + 1]", "[t:min(t + 4, T)]", "true"),
        ("[t:T]", "[0:t + 1]", "true"),
        ("[t:min(t + 3, T)]", "[max(0, t - 2):t + 1]", "true"),
        ("[0:t + 1]", "[t:T]", "true"),
        ("[0:T]", "[0:T]", "true"),
        ("[T - 1 - t]", "[T - t - 1]", "true"),
        ("[0]", "[0:T]", "t == 0"),
        ("[T - 1]", "[0:T]", "t == T - 1"),
        ("[0:5]", "[0:T]", "t < 5"),
        ("[0:T:2]", "[0:T]", "t % 2 == 0"),
        ("[t // 4 * 4:t // 4 * 4 + 4]", "[4 * (t // 4):min(4 * (t // 4) + 4, T)]", "true"),
        ("[t // 2]", "[2 * t:min(2 * t + 2, T)]", "2 * t < T"),
        ("[min(t, 5):t + 1]", "[t:select(t >= 5, T, t + 1)]", "true"),
    ],
)
def test_single_dimension_examples(dep, inverse, condition):
    result = invert(parse(dep), [TD], [TD])
    assert to_text(result.index) == inverse
    assert to_text(result.condition) == condition
    _check_brute_force(parse(dep), [TD], [TD], result)


def test_paper_examples_in_mlir_form():
    assert to_text(invert(parse("[t + 3]"), [TD], [TD]).index, mlir=True) == "[t - 3]"
    result = invert(parse("[max(0, t - 3):t + 1]"), [TD], [TD])
    assert to_text(result.index, mlir=True) == "[t:min(t + 4, T)]"


def test_multi_dimensional():
    result = invert(parse("[i, t - 1]"), [ID, TD], [ID, TD])
    assert to_text(result.index) == "[i, t + 1]" and to_text(result.condition) == "t < T - 1"
    _check_brute_force(parse("[i, t - 1]"), [ID, TD], [ID, TD], result)


def test_sink_dimension_missing_from_the_source_is_read_entirely():
    result = invert(parse("[t]"), [ID, TD], [TD])
    assert to_text(result.index) == "[0:I, t]" and result.condition is TRUE
    _check_brute_force(parse("[t]"), [ID, TD], [TD], result)


def test_constant_component_is_over_no_sink_dim():
    result = invert(parse("[0:T]"), [], [TD])  # y = f(x[0:T]) with y over no dims
    assert to_text(result.index) == "[]" and result.condition is TRUE
    result = invert(parse("[i, 0:T]"), [ID], [ID, TD])
    assert to_text(result.index) == "[i]" and result.condition is TRUE
    result = invert(parse("[i, 3]"), [ID], [ID, TD])
    assert to_text(result.condition) == "t == 3"


def test_transposed_dimensions_rename_through_the_source():
    dep = parse("[i, t + 1]")  # source (t, i) read by sink (i, t) transposed
    result = invert(dep, [TD, ID], [TD, ID])
    assert to_text(result.index) == "[i - 1, t]"
    assert to_text(result.condition) == "i >= 1 & i < T + 1 & t < I"
    _check_brute_force(dep, [TD, ID], [TD, ID], result)


def test_diagonal_two_components_on_one_sink_dim():
    dep = parse("[t, t:T]")  # source (t, i) read at (t, t..T-1) from sink (t)
    result = invert(dep, [TD], [TD, ID])
    assert to_text(result.condition) == "T > i & t < i + 1"
    _check_brute_force(dep, [TD], [TD, ID], result)


@pytest.mark.parametrize(
    "dep, sink, source, match",
    [
        ("[t % 5]", [TD], [TD], "not a supported monotone form"),
        ("[t * t]", [TD], [TD], "not monotone"),
        ("[T - t:T]", [TD], [TD], "decreases"),
        ("[i + t]", [ID, TD], [TD], "several sink dims"),
        ("[t:T:2]", [TD], [TD], "stepped slice"),
        ("[i]", [TD], [TD], "not a sink dimension"),
        ("[t, 0]", [TD], [TD], "2 components"),
    ],
)
def test_non_invertible_dependences_name_the_expression(dep, sink, source, match):
    with pytest.raises(NonInvertibleError, match=match) as info:
        invert(parse(dep, validate=False), sink, source)
    if "components" not in match:
        assert "`" in str(info.value)


# -- brute force ------------------------------------------------------------------------
def _component_set(fn, args):
    value = fn(*args)
    if isinstance(value, slice):
        return set(range(value.start, value.stop, value.step or 1))
    return {value}


def _check_brute_force(dep, sink_dims, source_dims, result, max_bound=7):
    """Compare the inversion with brute force over all bounds up to ``max_bound``."""
    all_dims = list(dict.fromkeys([*sink_dims, *source_dims]))
    params = [x for d in all_dims for x in (d.step, d.bound)]
    dep_fns = [compile_expr(c, params) for c in dep]
    inv_fns = [compile_expr(c, params) for c in result.index]
    cond_fn = compile_expr(result.condition, params)
    position = {d: k for k, d in enumerate(all_dims)}
    for bounds in itertools.product(range(1, max_bound + 1), repeat=len(all_dims)):
        def args_for(steps: dict):
            values = []
            for d, bound in zip(all_dims, bounds):
                values += [steps.get(d, 0), bound]
            return values

        readers: dict = {}
        for sink_point in itertools.product(*(range(bounds[position[d]]) for d in sink_dims)):
            args = args_for(dict(zip(sink_dims, sink_point)))
            sets = [_component_set(f, args) for f in dep_fns]
            for source_point in itertools.product(*sets):
                if all(0 <= q < bounds[position[d]] for q, d in zip(source_point, source_dims)):
                    readers.setdefault(source_point, set()).add(sink_point)
        for source_point in itertools.product(*(range(bounds[position[d]]) for d in source_dims)):
            args = args_for(dict(zip(source_dims, source_point)))
            expected = readers.get(source_point, set())
            if not cond_fn(*args):
                assert not expected, (str(dep), bounds, source_point, expected)
                continue
            got = set(itertools.product(*(_component_set(f, args) for f in inv_fns)))
            assert got == expected, (str(dep), str(result.index), bounds, source_point, got, expected)


@st.composite
def single_dim_deps(draw):
    component = draw(st.one_of(dependent_components(t, T), constant_components(T)))
    return IndexSeq([component], validate=False)


@prop(250)
@given(single_dim_deps())
def test_inversion_matches_brute_force_single_dim(dep):
    try:
        result = invert(dep, [TD], [TD])
    except NonInvertibleError:
        pytest.fail(f"{dep} should be invertible")
    _check_brute_force(dep, [TD], [TD], result)
    # inverses travel through the MLIR text form
    assert parse(to_text(result.index, mlir=True)).same(result.index)
    assert parse(to_text(result.condition, mlir=True)).same(result.condition)


@prop(120)
@given(two_dim_deps())
def test_inversion_matches_brute_force_two_dims(case):
    dep, source = case
    result = invert(dep, [ID, TD], source)
    _check_brute_force(dep, [ID, TD], source, result, max_bound=4)
