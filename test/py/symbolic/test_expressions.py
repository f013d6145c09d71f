"""Construction, operator overloading, equality semantics and construction errors."""

import copy
import pickle

import pytest

from tidal.symbolic import (
    FALSE, TRUE, Add, And, Compare, Const, Dim, Expr, IndexSeq, InvalidSliceError, Max, Min,
    NonConstantDivisorError, Select, Slice, Sub, Symbol, SymbolicTypeError, dims, index_seq,
    max_, min_, select, smax, smin, structurally_equal, to_text,
)

t, T = Dim("t")
i, I = Dim("i")
b, B = Dim("b")


def test_dim_pairs_step_and_bound():
    d = Dim("t")
    assert d.step.name == "t" and d.bound.name == "T"
    assert d.step.role == "step" and d.bound.role == "bound"
    assert d.step.partner == "T" and d.bound.partner == "t"
    assert d == Dim("t") and hash(d) == hash(Dim("t"))
    assert d.step.dim == d and d.bound.dim == d
    step, bound = d
    assert step is t and bound is T


def test_dim_custom_bound_and_dims_helper():
    d = Dim("t", bound="Tmax")
    assert d.bound.name == "Tmax" and d.step.partner == "Tmax"
    assert not d.step.same(t)  # a different pairing is a different symbol
    td, id_ = dims("t", "i")
    assert td.step is t and id_.bound is I
    assert repr(d) == "Dim('t', bound='Tmax')" and repr(td) == "Dim('t')"


@pytest.mark.parametrize("name", ["min", "mod", "and", "true", "1t", "t-1", ""])
def test_reserved_or_invalid_dim_names_are_rejected(name):
    with pytest.raises(ValueError):
        Dim(name)


def test_dim_whose_bound_equals_its_name_needs_explicit_bound():
    with pytest.raises(ValueError, match="bound"):
        Dim("T")
    assert Dim("T", bound="TT").bound.name == "TT"


def test_operators_build_expressions():
    assert isinstance(t + 1, Add) and to_text(t + 1) == "t + 1"
    assert isinstance(1 - t, Sub) and to_text(1 - t) == "1 - t"
    assert to_text(min_(t + 3, T)) == "min(t + 3, T)"
    assert to_text(t % 5 == 0) == "t % 5 == 0"
    assert to_text((t > 0) & (t < T - 1)) == "t > 0 & t < T - 1"
    assert to_text(-t) == "-t" and to_text(-(t + 1)) == "-(t + 1)"
    assert to_text(2 * t // 3) == "2 * t // 3"
    assert to_text((t >= 1) | ~(i == 0)) == "t >= 1 | ~i == 0"
    assert to_text(select(t > 0, t - 1, 0)) == "select(t > 0, t - 1, 0)"


def test_constructor_folds_negation():
    assert (-Const(3)).same(Const(-3))
    assert (-(-t)).same(t)


def test_min_max_helpers_and_aliases():
    assert smin is min_ and smax is max_
    assert min_(t) is t
    assert isinstance(min_(t, T), Min) and isinstance(max_([t, 1, T]), Max)
    assert max_([t, 1, T]).same(Max(t, 1, T))
    with pytest.raises(SymbolicTypeError):
        min_()
    with pytest.raises(SymbolicTypeError):
        Min(t)


def test_hash_consing_gives_structural_identity():
    a, c = t + 1, t + 1
    assert a is c and a.same(c) and structurally_equal(a, c)
    assert hash(a) == hash(c)
    assert not (t + 1).same(1 + t)
    table = {t + 1: "x", min_(t, T): "y"}
    assert table[t + 1] == "x" and table[min_(t, T)] == "y"
    assert len({t + 1, t + 1, t + 2}) == 2


def test_minus_one_and_minus_two_do_not_collide():
    assert hash(Const(-1)) != hash(Const(-2))
    assert {Const(-1): 1, Const(-2): 2}[Const(-2)] == 2


def test_eq_builds_a_comparison_not_a_bool():
    cond = t == 0
    assert isinstance(cond, Compare) and cond.op == "eq"
    assert isinstance(t != 0, Compare) and (t != 0).op == "ne"
    assert isinstance(1 == t, Compare)


def test_truth_value_of_symbolic_condition_raises():
    with pytest.raises(SymbolicTypeError, match="truth value"):
        if t == 0:
            pass
    with pytest.raises(TypeError):
        bool(t < T - 1)
    with pytest.raises(TypeError):
        0 < t < T  # Python chains through bool()
    with pytest.raises(SymbolicTypeError):
        bool(t)


def test_truth_value_of_decidable_condition():
    assert bool(t == t) is True
    assert bool(t != t) is False
    assert bool(t < T) is True  # 0 <= t < T
    assert bool(t >= T) is False
    assert bool(T > 0) is True
    assert bool((t + 1) == (1 + t)) is True  # simplifies to a constant
    assert bool(TRUE) and not bool(FALSE)


def test_structural_equality_for_non_integer_kinds():
    assert (t > 0) == (t > 0)
    assert (t > 0) != (t > 1)
    assert Slice(0, T) == Slice(0, T)
    assert IndexSeq([t, 0]) != IndexSeq([0, t])


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: t & 1, "integer|boolean"),
        (lambda: (t > 0) + 1, "bool"),
        (lambda: t / 2, "floor division"),
        (lambda: ~t, "boolean"),
        (lambda: Compare("eq", t > 0, 1), "bool"),
        (lambda: select(t, 1, 2), "boolean"),
        (lambda: select(t > 0, 1, t > 1), "both"),
        (lambda: min_(t, t > 0), "bool"),
    ],
)
def test_kind_errors_name_the_operand(build, match):
    with pytest.raises(SymbolicTypeError, match=match):
        build()


def test_non_constant_divisor_is_rejected_with_the_expression():
    with pytest.raises(NonConstantDivisorError, match=r"`t // T`"):
        t // T
    with pytest.raises(NonConstantDivisorError, match=r"`t % i`"):
        t % i
    with pytest.raises(NonConstantDivisorError, match="positive"):
        t // 0
    with pytest.raises(NonConstantDivisorError, match="positive"):
        t % -2
    assert (t // (Const(2) + 1)).divisor == 3  # constant expressions fold


def test_foreign_operands_are_not_implemented():
    with pytest.raises(TypeError):
        t + "a"
    assert (t == None) is False  # noqa: E711 - falls back to identity


def test_immutability_copy_and_pickle():
    e = min_(t + 3, T) // 2
    with pytest.raises(AttributeError):
        e.divisor = 3
    assert copy.copy(e) is e and copy.deepcopy(e) is e
    assert pickle.loads(pickle.dumps(e)) is e
    assert pickle.loads(pickle.dumps(Dim("t", bound="Tmax"))) == Dim("t", bound="Tmax")


def test_free_symbols():
    assert (t + T * 2 - i).free_symbols == {t, T, i}
    assert Const(3).free_symbols == frozenset()


def test_slices_and_sequences():
    s = Slice(t, T)
    assert s.start is t and s.stop is T and s.step == 1 and s.kind == "slice"
    seq = index_seq(b, i, slice(t, T))
    assert to_text(seq) == "[b, i, t:T]" and len(seq) == 3 and seq[2].same(s)
    assert to_text(Slice(0, T, 2)) == "0:T:2"
    assert Slice.from_python(slice(None, None), T_dim := Dim("t")).same(Slice(0, T_dim.bound))
    with pytest.raises(SymbolicTypeError, match="step"):
        Slice(0, T, 0)
    with pytest.raises(SymbolicTypeError, match="step"):
        Slice(0, T, t)
    with pytest.raises(SymbolicTypeError):
        IndexSeq([t > 0])


@pytest.mark.parametrize("start, stop", [(t + 1, t), (t, Const(3)), (T, t), (Const(0), t - 1), (i, t)])
def test_slices_that_may_have_negative_size_are_rejected(start, stop):
    with pytest.raises(InvalidSliceError, match="negative size") as info:
        Slice(start, stop)
    assert f"`{to_text(start)}:{to_text(stop)}`" in str(info.value)
    Slice(start, stop, validate=False)  # the escape hatch


def test_negative_slice_error_gives_a_witness_point():
    with pytest.raises(InvalidSliceError, match=r"at t=\d+, T=\d+"):
        Slice(t, 3)


@pytest.mark.parametrize(
    "start, stop",
    [(t, T), (Const(0), t + 1), (max_(0, t - 3), t + 1), (t, min_(t + 3, T)), (Const(0), Const(5)),
     (4 * (t // 4), 4 * (t // 4) + 4), (t // 2 * 2, t + 1), (Const(0), T)],
)
def test_valid_slices_are_accepted(start, stop):
    Slice(start, stop)


def test_expr_base_class_is_exported():
    assert isinstance(t, Expr) and isinstance(t, Symbol)
    assert isinstance(And(t > 0, i > 0), Expr) and isinstance(Select(t > 0, t, 0), Expr)
