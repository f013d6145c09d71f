"""Core of the expression library: the :class:`Expr` base class, constants, symbols, dimensions.

The node classes live in :mod:`.arithmetic`, :mod:`.logic` and :mod:`.indexing`
(all re-exported here).

Expressions are immutable and *hash-consed*: building the same structure twice
returns the very same object, so structural equality is identity.

Equality semantics (important)
------------------------------
Like numpy arrays, integer expressions overload ``==`` and ``!=`` to *build a
comparison*: ``t == 0`` is a boolean expression, not a Python ``bool``.  Use
:meth:`Expr.same` (or :func:`structurally_equal`) for structural equality.
``hash(e)`` hashes the structure, so expressions work as dict keys and set
members (the table lookups compare by identity first, which is exact for
hash-consed objects).  Converting a symbolic condition to ``bool`` (as in
``if t == 0:``) raises :class:`SymbolicTypeError` unless the condition
simplifies to a constant.  Never use ``in`` on a *list* of expressions; use a
set, a dict, or ``any(x.same(y) for y in ys)``.

Boolean expressions, slices and index sequences compare structurally with
``==`` (they have no symbolic equality).
"""

from __future__ import annotations

import numbers
import re
import weakref
from typing import Any, ClassVar, Iterator

from .errors import SymbolicError, SymbolicTypeError

INT, BOOL, SLICE, SEQ = "int", "bool", "slice", "seq"

#: Words of the textual form; they cannot be used as symbol names.
RESERVED_WORDS = frozenset(
    "floordiv mod eq ne lt le gt ge and or not min max select true false True False".split()
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ROLES = ("step", "bound", "param")


def _hash_token(value: Any) -> Any:
    # CPython has hash(-1) == hash(-2); keep the two constants apart.
    return ("-1",) if isinstance(value, int) and value == -1 else value


class Expr:
    """Base class of every symbolic expression node.

    ``args`` holds the child expressions; leaf payloads (a constant's value, a
    symbol's name, a comparison's operator, a divisor, a slice step) are extra
    attributes.  ``kind`` is one of ``"int"``, ``"bool"``, ``"slice"``,
    ``"seq"``.  See the module docstring for the equality semantics.
    """

    __slots__ = ("args", "_hash", "_free", "_sort_key", "__weakref__")
    kind: ClassVar[str] = INT
    _payload_fields: ClassVar[tuple[str, ...]] = ()
    _rank: ClassVar[int] = 99
    _table: ClassVar[weakref.WeakValueDictionary] = weakref.WeakValueDictionary()

    @classmethod
    def _make(cls, args: tuple, payload: tuple = ()) -> Any:
        key = (cls, payload, tuple(id(a) for a in args))
        found = Expr._table.get(key)
        if found is not None:
            return found
        obj = object.__new__(cls)
        put = object.__setattr__
        put(obj, "args", args)
        for name, value in zip(cls._payload_fields, payload):
            put(obj, name, value)
        tokens = tuple(_hash_token(v) for v in payload)
        put(obj, "_hash", hash((cls.__name__, tokens, tuple(a._hash for a in args))))
        put(obj, "_free", None)
        put(obj, "_sort_key", None)
        Expr._table[key] = obj
        return obj

    # -- identity, hashing, immutability ------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"symbolic expressions are immutable (setting {name!r} on `{self}`)")

    def __hash__(self) -> int:
        return self._hash

    def __copy__(self) -> Expr:
        return self

    def __deepcopy__(self, memo: dict) -> Expr:
        return self

    def __reduce__(self):
        payload = tuple(getattr(self, f) for f in self._payload_fields)
        return (_rebuild, (type(self), self.args, payload))

    def same(self, other: object) -> bool:
        """Structural equality (identity, since expressions are hash-consed)."""
        return self is other

    @property
    def payload(self) -> tuple:
        """The node's leaf data (e.g. ``(3,)`` for ``Const(3)``)."""
        return tuple(getattr(self, f) for f in self._payload_fields)

    @property
    def free_symbols(self) -> frozenset:
        """The set of :class:`Symbol` objects occurring in the expression."""
        if self._free is None:
            if not self.args:
                object.__setattr__(self, "_free", frozenset())
            else:  # an explicit-stack walk: a long flat sum is a deep tree
                from .transform import free_symbols
                return free_symbols(self)
        return self._free

    def sort_key(self) -> tuple:
        """A deterministic total-order key (independent of hash randomization)."""
        if self._sort_key is None:
            key = (self._rank, self.payload, tuple(a.sort_key() for a in self.args))
            object.__setattr__(self, "_sort_key", key)
        return self._sort_key

    def __str__(self) -> str:
        from .text_printer import to_text

        return to_text(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"

    def __bool__(self) -> bool:
        if self.kind == BOOL:
            from .simplifier import simplify

            result = simplify(self)
            if isinstance(result, BoolConst):
                return result.value
            raise _user_error(SymbolicTypeError(
                f"the truth value of the symbolic condition `{self}` is unknown "
                f"(it simplifies to `{result}`, not to a constant); use e.same(other) "
                f"for structural equality or evaluate(e, env) for a value"
            ), "bool", self)
        raise _user_error(SymbolicTypeError(f"the {self.kind} expression `{self}` has no truth value"),
                          "bool", self)

    def __index__(self) -> int:
        # int(), float(), range(), list indices; Const overrides it with its value.
        raise _user_error(SymbolicTypeError(f"the {self.kind} expression `{self}` is symbolic, not a Python int"),
                          "int", self)

    # -- arithmetic -----------------------------------------------------------
    def __add__(self, other):
        o = coerce(other)
        return _promoted(self, "__add__", other) if o is None else Add(self, o)

    def __radd__(self, other):
        o = coerce(other)
        return _promoted(self, "__radd__", other) if o is None else Add(o, self)

    def __sub__(self, other):
        o = coerce(other)
        return _promoted(self, "__sub__", other) if o is None else Sub(self, o)

    def __rsub__(self, other):
        o = coerce(other)
        return _promoted(self, "__rsub__", other) if o is None else Sub(o, self)

    def __mul__(self, other):
        o = coerce(other)
        return _promoted(self, "__mul__", other) if o is None else Mul(self, o)

    def __rmul__(self, other):
        o = coerce(other)
        return _promoted(self, "__rmul__", other) if o is None else Mul(o, self)

    def __floordiv__(self, other):
        o = coerce(other)
        return NotImplemented if o is None else _user_op(FloorDiv, "floordiv", self, o)

    def __rfloordiv__(self, other):
        o = coerce(other)
        return NotImplemented if o is None else _user_op(FloorDiv, "floordiv", o, self)

    def __mod__(self, other):
        o = coerce(other)
        return NotImplemented if o is None else _user_op(Mod, "mod", self, o)

    def __rmod__(self, other):
        o = coerce(other)
        return NotImplemented if o is None else _user_op(Mod, "mod", o, self)

    def __neg__(self):
        return Neg(self)

    def __pos__(self):
        return int_operand(self, "unary +")

    def __truediv__(self, other):
        if _promotable(other):
            return _promoted(self, "__truediv__", other)
        raise _user_error(SymbolicTypeError(f"true division of `{self}` is not supported; use // (floor division)"),
                          "truediv", self, other)

    def __rtruediv__(self, other):
        if _promotable(other):
            return _promoted(self, "__rtruediv__", other)
        raise _user_error(SymbolicTypeError(f"true division by `{self}` is not supported; use // (floor division)"),
                          "truediv", other, self)

    def __pow__(self, other):
        if _promotable(other):
            return _promoted(self, "__pow__", other)
        raise _user_error(SymbolicTypeError(f"powers of `{self}` are not supported"), "pow", self, other)

    def __rpow__(self, other):
        if _promotable(other):  # 0.99 ** i: a learning-rate schedule
            return _promoted(self, "__rpow__", other)
        raise _user_error(SymbolicTypeError(f"powers with exponent `{self}` are not supported"),
                          "pow", other, self)

    # -- comparisons (build expressions, see the module docstring) -----------
    def _compare(self, op: str, other):
        o = coerce(other)
        return NotImplemented if o is None else Compare(op, self, o)

    def __lt__(self, other):
        return self._compare("lt", other)

    def __le__(self, other):
        return self._compare("le", other)

    def __gt__(self, other):
        return self._compare("gt", other)

    def __ge__(self, other):
        return self._compare("ge", other)

    def __eq__(self, other):
        if self.kind != INT:
            return self is other if isinstance(other, Expr) else NotImplemented
        return self._compare("eq", other)

    def __ne__(self, other):
        if self.kind != INT:
            return self is not other if isinstance(other, Expr) else NotImplemented
        return self._compare("ne", other)

    # -- boolean connectives --------------------------------------------------
    def __and__(self, other):
        o = coerce(other)
        return NotImplemented if o is None else And(self, o)

    def __rand__(self, other):
        o = coerce(other)
        return NotImplemented if o is None else And(o, self)

    def __or__(self, other):
        o = coerce(other)
        return NotImplemented if o is None else Or(self, o)

    def __ror__(self, other):
        o = coerce(other)
        return NotImplemented if o is None else Or(o, self)

    def __invert__(self):
        return Not(self)


def _rebuild(cls: type, args: tuple, payload: tuple) -> Expr:
    return cls._make(args, payload)


def sort_key(e: Expr) -> tuple:
    """``e.sort_key()``, as a function for ``sorted(..., key=sort_key)``."""
    return e.sort_key()


def structurally_equal(a: object, b: object) -> bool:
    """True iff ``a`` and ``b`` are the same expression structure."""
    return isinstance(a, Expr) and a.same(b)


# -- numeric promotion -----------------------------------------------------
# Expressions are integers. `0.99 ** i` or `1e-3 * i` mean a *value* that
# varies with i; a higher layer (the frontend) may register how to make one
# (e.g. a tensor holding the expression's value), without this base layer
# importing it.
_numeric_promotion: Any = None


def set_numeric_promotion(promote: Any) -> Any:
    """Register `promote(expr) -> value`, used when an expression meets a
    non-integer number (`0.99 ** i`, `1e-3 * i`, `i / 2.0`): the operation is
    then carried out on `promote(expr)`. Returns the previous hook (None
    restores the default: such operations raise or return NotImplemented)."""
    global _numeric_promotion
    previous, _numeric_promotion = _numeric_promotion, promote
    return previous


def _promotable(value: Any) -> bool:
    return (_numeric_promotion is not None and isinstance(value, numbers.Real)
            and not isinstance(value, numbers.Integral))


def _promoted(expr: Expr, method: str, other: Any) -> Any:
    if not _promotable(other):
        return NotImplemented
    return getattr(_numeric_promotion(expr), method)(other)


# -- errors at the user's line -----------------------------------------------
# Python calls some methods on behalf of user code: `if t > 0:` and `max(t, 1)`
# (__bool__), `range(T)` and `int(T)` (__index__), `t / 2`, `t ** 2`, `t // T`.
# A higher layer (the frontend) may register how to report those mistakes
# (e.g. naming the user's line and what to write instead), without this base
# layer importing it.
_user_error_hook: Any = None


def set_user_error_hook(hook: Any) -> Any:
    """Register `hook(error, operation, operands) -> exception | None`, called
    before one of the errors above is raised (`operation` is "bool", "int",
    "truediv", "pow", "floordiv" or "mod"; `operands` the operation's operands):
    a returned exception is raised instead of `error`, None raises `error`.
    Returns the previous hook (None restores the default)."""
    global _user_error_hook
    previous, _user_error_hook = _user_error_hook, hook
    return previous


def _user_error(error: Exception, operation: str, *operands: Any) -> Exception:
    if _user_error_hook is not None:
        replaced = _user_error_hook(error, operation, operands)
        if replaced is not None:
            return replaced
    return error


def _user_op(cls: type, operation: str, *operands: Any) -> Expr:
    try:
        return cls(*operands)
    except SymbolicError as error:
        replaced = _user_error(error, operation, *operands)
        if replaced is error:
            raise
        raise replaced from None


def coerce(value: Any) -> Expr | None:
    """Convert a Python operand to an expression; ``None`` if not convertible."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool):
        return TRUE if value else FALSE
    if isinstance(value, numbers.Integral):
        return Const(int(value))
    return None


def as_expr(value: Any) -> Expr:
    """Convert ints, bools, Python slices and tuples/lists to expressions."""
    converted = coerce(value)
    if converted is not None:
        return converted
    if isinstance(value, slice):
        return Slice.from_python(value)
    if isinstance(value, (tuple, list)):
        return IndexSeq(value)
    raise SymbolicTypeError(f"cannot convert {value!r} of type {type(value).__name__} to an expression")


def int_operand(value: Any, context: str) -> Expr:
    """`value` as an integer expression, else a SymbolicTypeError naming `context`."""
    expr = coerce(value)
    if expr is None:
        raise SymbolicTypeError(f"operand {value!r} of {context} is not an integer expression")
    if expr.kind != INT:
        raise SymbolicTypeError(f"operand `{expr}` of {context} is a {expr.kind} expression, expected an integer one")
    return expr


def _check_identifier(name: Any, what: str) -> str:
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise ValueError(f"{what} {name!r} is not a valid identifier ([A-Za-z_][A-Za-z0-9_]*)")
    if name in RESERVED_WORDS:
        raise ValueError(f"{what} {name!r} is a reserved word of the textual form")
    return name


# -- leaves ---------------------------------------------------------------------
class Const(Expr):
    """An integer constant."""

    __slots__ = ("value",)
    _payload_fields = ("value",)
    _rank = 0

    def __new__(cls, value: int) -> Const:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise SymbolicTypeError(f"Const needs an int, got {value!r}")
        return cls._make((), (int(value),))

    def __int__(self) -> int:
        return self.value

    __index__ = __int__


class Symbol(Expr):
    """A named integer symbol.

    ``role`` is ``"step"`` (a dimension's current step, e.g. ``t``; known to
    satisfy ``0 <= t < partner``), ``"bound"`` (a dimension's upper bound,
    e.g. ``T``; known ``>= 1``) or ``"param"`` (no known facts).  For steps
    and bounds ``partner`` names the other symbol of the pair.  Usually built
    through :class:`Dim`.
    """

    __slots__ = ("name", "role", "partner")
    _payload_fields = ("name", "role", "partner")

    def __new__(cls, name: str, role: str = "param", partner: str | None = None) -> Symbol:
        _check_identifier(name, "symbol name")
        if role not in _ROLES:
            raise ValueError(f"symbol {name!r}: role must be one of {_ROLES}, got {role!r}")
        if role == "param":
            if partner is not None:
                raise ValueError(f"parameter symbol {name!r} cannot have a partner")
        else:
            _check_identifier(partner, f"partner of symbol {name!r}")
            if partner == name:
                raise ValueError(f"symbol {name!r} cannot be its own partner")
        return cls._make((), (name, role, partner))

    @property
    def free_symbols(self) -> frozenset:
        """``{self}``."""
        return frozenset((self,))

    def sort_key(self) -> tuple:
        """Steps sort before bounds, bounds before parameters, then by name."""
        return (_ROLES.index(self.role) + 1, self.name, self.partner or "")

    @property
    def dim(self) -> Dim:
        """The :class:`Dim` this step or bound symbol belongs to."""
        if self.role == "step":
            return Dim(self.name, bound=self.partner)
        if self.role == "bound":
            return Dim(self.partner, bound=self.name)
        raise ValueError(f"parameter symbol `{self.name}` belongs to no dimension")


class Dim:
    """A temporal dimension: a step symbol (``t``) and its upper bound (``T``).

    ``Dim("t")`` has bound ``T`` (the upper-cased step name); override with
    ``Dim("t", bound="Tmax")``.  Unpacks as ``t, T = Dim("t")``.  Every valid
    point satisfies ``0 <= t < T`` and ``T >= 1``.
    """

    __slots__ = ("step", "bound")

    def __init__(self, name: str, bound: str | None = None):
        _check_identifier(name, "dimension name")
        bound_name = name.upper() if bound is None else bound
        if bound_name == name:
            raise ValueError(f"dimension {name!r}: bound name equals the step name; pass bound=...")
        object.__setattr__(self, "step", Symbol(name, "step", bound_name))
        object.__setattr__(self, "bound", Symbol(bound_name, "bound", name))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Dim is immutable")

    @property
    def name(self) -> str:
        """The step symbol's name."""
        return self.step.name

    def __iter__(self) -> Iterator[Symbol]:
        return iter((self.step, self.bound))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Dim) and self.step is other.step and self.bound is other.bound

    def __hash__(self) -> int:
        return hash(("Dim", self.step._hash, self.bound._hash))

    def __reduce__(self):
        return (Dim, (self.step.name, self.bound.name))

    def __repr__(self) -> str:
        if self.bound.name == self.step.name.upper():
            return f"Dim({self.step.name!r})"
        return f"Dim({self.step.name!r}, bound={self.bound.name!r})"


def dims(*names: str) -> tuple[Dim, ...]:
    """``dims("t", "i")`` -> ``(Dim("t"), Dim("i"))``."""
    return tuple(Dim(n) for n in names)



# The arithmetic, boolean and indexing nodes live in their own modules; they
# import this one, so they are imported last (the names above exist by then).
from .arithmetic import (  # noqa: E402, F401  (re-exported)
    Add, FloorDiv, Max, Min, Mod, Mul, Neg, Sub, max_, min_, smax, smin,
)
from .logic import FALSE, TRUE, And, BoolConst, Compare, Not, Or  # noqa: E402
from .indexing import IndexSeq, Slice  # noqa: E402
