"""set_numeric_promotion: how a symbolic integer meets a non-integer number."""
import pytest

from tidal.symbolic import Dim, Expr, SymbolicTypeError, set_numeric_promotion


class Value:
    """Stands in for a higher layer's value type (the frontend's tensors)."""

    def __init__(self, expr, log=()):
        self.expr, self.log = expr, list(log)

    def __rpow__(self, base):
        return ("rpow", base, str(self.expr))

    def __rmul__(self, other):
        return ("rmul", other, str(self.expr))

    def __truediv__(self, other):
        return ("truediv", str(self.expr), other)


def test_floats_use_the_registered_promotion_and_ints_stay_symbolic():
    t, T = Dim("t")
    previous = set_numeric_promotion(Value)
    try:
        assert 0.99 ** t == ("rpow", 0.99, "t")
        assert 1e-3 * (t + 1) == ("rmul", 1e-3, "t + 1")
        assert t / 2.0 == ("truediv", "t", 2.0)
        assert isinstance(t * 2, Expr) and isinstance(2.0 * t, tuple)  # ints stay symbolic
        with pytest.raises(SymbolicTypeError):
            t ** 2
    finally:
        set_numeric_promotion(previous)


def test_without_a_promotion_floats_are_rejected():
    t, T = Dim("t")
    previous = set_numeric_promotion(None)
    try:
        with pytest.raises(TypeError):
            0.5 * t
        with pytest.raises(SymbolicTypeError, match="powers with exponent `t`"):
            0.99 ** t
    finally:
        set_numeric_promotion(previous)
