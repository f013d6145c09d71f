"""Index components over temporal dimensions: slices and index sequences.

An *index component* is either an integer expression (a point) or a
:class:`Slice` ``start:stop`` (optionally ``start:stop:step`` with a constant
positive step).  An :class:`IndexSeq` ``[b, i, t:T]`` holds one component per
dimension.  A slice denotes ``range(start, stop, step)``; its size is
``max(0, ceil((stop - start) / step))``.
"""

from __future__ import annotations

import numbers
from typing import Any, Iterable, Iterator

from .errors import SymbolicTypeError
from .expr import INT, SEQ, SLICE, Expr, coerce, int_operand


class Slice(Expr):
    """``start:stop`` or ``start:stop:step`` (step a positive int constant).

    With ``validate=True`` (the default) the constructor raises
    :class:`~tidal.symbolic.errors.InvalidSliceError` when the size
    ``stop - start`` may be negative at some valid point (using the facts
    ``0 <= t < T``, ``T >= 1`` of every dimension), e.g. ``t + 1:t`` or
    ``t:3``.  Internal rewrites build slices with ``validate=False``.
    """

    __slots__ = ("step",)
    _payload_fields = ("step",)
    kind = SLICE
    _rank = 40

    def __new__(cls, start, stop, step: int = 1, *, validate: bool = True) -> Slice:
        a = int_operand(start, "slice start")
        b = int_operand(stop, "slice stop")
        step_expr = coerce(step)
        if step_expr is not None and step_expr.kind == INT and not step_expr.free_symbols:
            from .evaluation import evaluate

            step = evaluate(step_expr, {})
        if isinstance(step, bool) or not isinstance(step, numbers.Integral) or step <= 0:
            raise SymbolicTypeError(f"slice `{a}:{b}`: the step must be a positive integer constant, got {step!r}")
        result = cls._make((a, b), (int(step),))
        if validate:
            from .analysis import check_slice

            check_slice(result)
        return result

    @property
    def start(self) -> Expr:
        """The first index (inclusive)."""
        return self.args[0]

    @property
    def stop(self) -> Expr:
        """The end index (exclusive)."""
        return self.args[1]

    @classmethod
    def from_python(cls, value: slice, bound: Any = None, *, validate: bool = True) -> Slice:
        """Convert a Python ``slice``; a missing start is 0, a missing stop is ``bound``."""
        start = 0 if value.start is None else value.start
        if value.stop is None:
            if bound is None:
                raise SymbolicTypeError(f"slice {value!r} has no stop and no bound was given")
            stop = bound.bound if hasattr(bound, "bound") else bound
        else:
            stop = value.stop
        step = 1 if value.step is None else value.step
        return cls(start, stop, step, validate=validate)


def as_component(value: Any, bound: Any = None, *, validate: bool = True) -> Expr:
    """Convert an int, integer expression, :class:`Slice` or Python slice to a component."""
    if isinstance(value, slice):
        return Slice.from_python(value, bound, validate=validate)
    expr = coerce(value)
    if expr is None or expr.kind not in (INT, SLICE):
        shown = f"`{expr}`" if expr is not None else repr(value)
        raise SymbolicTypeError(f"index component {shown} must be an integer expression or a slice")
    return expr


class IndexSeq(Expr):
    """A sequence of index components, one per dimension: ``[b, i, t:T]``."""

    __slots__ = ()
    kind = SEQ
    _rank = 41

    def __new__(cls, components: Iterable[Any] = (), *, validate: bool = True) -> IndexSeq:
        if isinstance(components, (Expr, slice, numbers.Integral)):
            raise SymbolicTypeError(
                f"IndexSeq takes an iterable of components, got {components!r}; wrap it in a list"
            )
        return cls._make(tuple(as_component(c, validate=validate) for c in components))

    @property
    def components(self) -> tuple[Expr, ...]:
        """The index components (points and slices)."""
        return self.args

    def __len__(self) -> int:
        return len(self.args)

    def __iter__(self) -> Iterator[Expr]:
        return iter(self.args)

    def __getitem__(self, position: int) -> Expr:
        return self.args[position]


def index_seq(*components: Any) -> IndexSeq:
    """``index_seq(b, i, slice(t, T))`` -> ``[b, i, t:T]``."""
    return IndexSeq(components)
