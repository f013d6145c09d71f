"""Python and NumPy protocols meeting symbolic expressions and tensors.

Python asks steps, bounds and tensors for things they cannot give while
tracing: a truth value (`if t > 0:`, `and`, chained comparisons, built-in
`max(t, 1)`), a Python int (`range(T)`, `int(T)`, `float(t)`), an integer
quotient (`t / 2`), values for NumPy (`np.exp(x)`, `np.sum(x)`,
`np.asarray(x)`). Each raises a `TidalError` at the user's line saying what
is wrong and what to write instead (`td.max(t, 1)`, `t // 2`, `td.where`,
definitions by cases, `td.exp(x)`).

* Symbolic expressions (`tidal.symbolic`) raise their own errors; the
  frontend registers `symbolic_user_error` with
  `tidal.symbolic.set_user_error_hook`. It replaces an error only when user
  code (not Tidal's own) made the call, with a `TidalError` that is still an
  instance of the library's error class (a `TypeError` for `if t > 0:`), so
  code catching either keeps working.
* Tensors implement NumPy's `__array_ufunc__` and `__array_function__`.
  The ufuncs that Python operators call (`np.add` for `ndarray + x`,
  `np.multiply` for `np.float32(2) * x`, comparisons, `@`, `&`, ...) act as
  those operators, so NumPy operands work on either side; every other NumPy
  function raises, naming Tidal's equivalent.
"""
from __future__ import annotations

import importlib
import re
from typing import Any

import numpy as np

from tidal.symbolic import Const, Expr, Symbol

from .errors import TidalError, inside_tidal, location_of, source_text, user_frame

__all__ = ["symbolic_user_error", "array_ufunc", "array_function", "no_value", "truth_value"]

_HOOK_SKIP = ("tidal.frontend.protocols", "tidal.symbolic", "numpy")
_NUMPY_SKIP = ("tidal", "numpy")


# -- symbolic expressions ---------------------------------------------------------
_CLASSES: dict = {}


def _tidal_flavour(cls: type) -> type:
    """A TidalError that is also an instance of the library error class `cls`."""
    if issubclass(cls, TidalError):
        return cls
    if cls not in _CLASSES:
        _CLASSES[cls] = type("TidalError", (TidalError, cls), {
            "__module__": TidalError.__module__, "__qualname__": TidalError.__qualname__,
            "__doc__": f"A TidalError that is also a {cls.__name__} (raised where user code "
                       "misuses a symbolic expression)."})
    return _CLASSES[cls]


def _show(v: Any) -> str:
    return str(v) if isinstance(v, Expr) else repr(v)


def _operand(v: Any) -> str:
    """`v` as the operand of a binary operator (parenthesized when compound)."""
    text = _show(v)
    return text if not isinstance(v, Expr) or isinstance(v, (Symbol, Const)) else f"({text})"


def _int_value(v: Any) -> int | None:
    if isinstance(v, Const):
        return v.value
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        return int(v)
    return None


def _depends(e: Expr) -> str:
    names = sorted(s.name for s in e.free_symbols)
    return ", ".join(names) if names else "nothing"


_EXTREMUM = re.compile(r"(?:builtins\.)?(max|min)\(|(?:np|numpy)\.(maximum|minimum|fmax|fmin)\(")


def _extremum_call(text: str | None) -> tuple[str, str] | None:
    """('max', 't, 1)'): the function and the rest of the call when the user's
    expression is a call to Python's (or NumPy's elementwise) max/min."""
    m = _EXTREMUM.match(text or "")
    if not m:
        return None
    fn = m.group(1) or ("max" if m.group(2) in ("maximum", "fmax") else "min")
    return fn, text[m.end():]


def _condition_error(e: Expr, text: str | None) -> tuple[str, str]:
    call = _extremum_call(text)
    if e.kind != "bool":
        return (f"the integer expression `{e}` has no truth value",
                f"compare it explicitly, e.g. `{_operand(e)} > 0`, and use that condition in "
                f"td.where({_operand(e)} > 0, a, b) or in a definition key (s[{_operand(e)} > 0] = ...)")
    if call is not None:
        fn, args = call
        return (f"Python's {fn}() compares its arguments, and the truth value of the symbolic "
                f"condition `{e}` is not known while tracing",
                f"use the symbolic {fn}: `td.{fn}({args}`")
    steps = ", ".join(sorted(s.name for s in e.free_symbols if s.role == "step")) or "t"
    return (f"the truth value of the symbolic condition `{e}` is not known while tracing: it "
            f"depends on {_depends(e)}, whose value is known only when the program runs",
            f"Python's if/while/and/or/not run once, while tracing: choose values with "
            f"td.where({e}, a, b), or define by cases with the condition in the key "
            f"(s[{e}] = a; s[{steps}] = b: the first matching case applies); combine conditions "
            f"with &, | and ~ (not `and`, `or`, `not` or chained comparisons such as 0 < t < T)")


def _int_error(e: Expr, text: str | None) -> tuple[str, str]:
    if isinstance(e, Symbol) and e.role == "bound":
        reason = (f"`{e}` is the bound of the temporal dimension {e.partner} < {e}: a symbol, "
                  f"not a Python number (its value is given when the program runs, e.g. "
                  f"exe.run(bounds={{{e}: 10}}))")
    elif isinstance(e, Symbol) and e.role == "step":
        reason = (f"`{e}` is the step of the temporal dimension {e} < {e.partner}: a symbol, "
                  f"not a Python number (the program computes every {e} at once)")
    else:
        reason = f"`{e}` is a symbolic expression, not a Python number"
    if text is not None and re.match(r"(?:builtins\.)?range\(", text):
        hint = ("loops over time are temporal dimensions, not Python loops: read the earlier "
                "steps with a slice (x[0:t + 1].sum(0)) and define recurrences by cases "
                "(s[0] = x[0]; s[t + 1] = f(s[t], x[t + 1]))")
    else:
        hint = ("keep it symbolic: use it in indices (x[t - 1], x[0:t + 1]) and shapes "
                "(td.zeros(T - t)); td.symbol(t) is its value as a tensor")
    return reason, hint


def _truediv_error(a: Any, b: Any) -> tuple[str, str]:
    A, B = _operand(a), _operand(b)
    reason = (f"`{A} / {B}` is a true division of symbolic integers, which is not an integer "
              f"(indices and sizes are integers)")
    k = _int_value(b)
    if k is not None and k > 0:
        return reason, (f"for an index use floor division: `{A} // {B}`; for a float value that "
                        f"varies with {_depends(a)}, divide by a float: `{A} / {float(k)}` (a tensor)")
    if _int_value(a) is not None:
        value = f"{float(_int_value(a))} / {B}"
    else:
        value = f"1.0 * {A} / {B}"
    return reason, (f"indices are divided only by positive integer constants, with floor "
                    f"division (t // 2); for a float value, start from a float: `{value}` "
                    f"(a tensor)")


def _pow_error(a: Any, b: Any) -> tuple[str, str]:
    A, B = _operand(a), _operand(b)
    if isinstance(a, Expr):
        k = _int_value(b)
        value = f"`{A} ** {float(k)}`" if k is not None else f"`td.symbol({_show(a)}) ** {B}`"
        return (f"powers of `{_show(a)}` are not supported: `{A} ** {B}` is not affine (indices "
                f"are steps and bounds times constants, with min, max, // and %)",
                f"for an index, write it with constants (2 * t, t + t // 2); for a float value "
                f"use a float exponent: {value} (a tensor)")
    k = _int_value(a)
    value = f"`{float(k)} ** {B}`" if k is not None else f"`{A} ** td.symbol({_show(b)})`"
    return (f"powers with exponent `{_show(b)}` are not supported on symbolic integers "
            f"(`{A} ** {B}` is not affine)",
            f"for a float value (e.g. a decay), use {value} (a tensor)")


def _division_error(error: Exception, operation: str, a: Any, b: Any) -> tuple[str, str]:
    op = "//" if operation == "floordiv" else "%"
    if isinstance(b, Expr) and b.free_symbols:
        hint = (f"indices are divided only by positive integer constants (t // 2, t % 4); for a "
                f"value that varies, compute on tensors: `td.symbol({_show(a)}) {op} {_operand(b)}`")
    else:
        hint = f"divide by a positive integer constant, e.g. `t {op} 2`"
    return str(error), hint


def symbolic_user_error(error: Exception, operation: str, operands: tuple) -> Exception | None:
    """The `tidal.symbolic.set_user_error_hook` hook (see the module doc)."""
    frame = user_frame(_HOOK_SKIP)
    if frame is None or inside_tidal(frame):
        return None  # Tidal's own code: the library error stays as it is
    text = source_text(frame)
    numpy_call = re.match(r"(?:np|numpy)\.([A-Za-z_][A-Za-z0-9_]*)\(", text or "")
    if numpy_call is not None and _extremum_call(text) is None:
        # NumPy computing with an expression (np.arange(T), np.zeros((T, 4)))
        name = numpy_call.group(1)
        symbols = sorted({s.name for v in operands if isinstance(v, Expr) for s in v.free_symbols})
        td_name = _td_name(name)
        return _tidal_flavour(type(error))(
            f"np.{name} cannot compute with the symbolic {', '.join(symbols) or 'expression'}: "
            f"steps and bounds have no value while tracing",
            f"use Tidal's op: `{_suggest(text, td_name)}`" if td_name else
            "compute with Tidal ops on td.symbol(t), its value as a tensor",
            location_of(frame))
    if operation == "bool":
        reason, hint = _condition_error(operands[0], text)
    elif operation == "int":
        reason, hint = _int_error(operands[0], text)
    elif operation == "truediv":
        reason, hint = _truediv_error(*operands)
    elif operation == "pow":
        reason, hint = _pow_error(*operands)
    elif operation in ("floordiv", "mod"):
        reason, hint = _division_error(error, operation, *operands)
    else:
        return None
    return _tidal_flavour(type(error))(reason, hint, location_of(frame))


# -- tensors: truth values and values ---------------------------------------------
def truth_value() -> TidalError:
    """`bool(tensor)`: `if x > 0:`, `x > 0 and ...`, built-in `max(x, 0)`."""
    frame = user_frame(_NUMPY_SKIP)
    call = _extremum_call(source_text(frame))
    if call is not None:
        fn, args = call
        name = "maximum" if fn == "max" else "minimum"
        return TidalError(f"Python's {fn}() compares its arguments, and the truth value of a "
                          "recurrent tensor is not known while tracing",
                          f"use the elementwise td.{name}: `td.{name}({args}`", location_of(frame))
    return TidalError("the truth value of a recurrent tensor is not known while tracing",
                      "Python's if/while/and/or/not run once, while tracing: use td.where(cond, a, b) "
                      "for data-dependent choices, & | ~ to combine tensor conditions, or a symbolic "
                      "condition such as `y[t % 5 == 0] = ...` for conditional definitions",
                      location_of(frame))


def no_value(what: str) -> TidalError:
    """`float(x)`, `x.numpy()`, `np.asarray(x)`: a tensor has no value while tracing."""
    frame = user_frame(_NUMPY_SKIP)
    return TidalError(f"{what}: a recurrent tensor has no value while tracing",
                      "compute with Tidal ops (td.exp(x), x.sum(0), td.where(...)); to read values, "
                      "output the tensor and run the program: p.output('y', y); "
                      "p.compile().run(...)['y']",
                      location_of(frame))


# -- tensors: NumPy's protocols ------------------------------------------------------
# The ufuncs Python operators call on an ndarray or NumPy scalar operand.
_OPERATORS = {
    "add": "add", "subtract": "sub", "multiply": "mul", "true_divide": "div", "divide": "div",
    "floor_divide": "floordiv", "remainder": "mod", "power": "pow", "matmul": "matmul",
    "less": "lt", "less_equal": "le", "greater": "gt", "greater_equal": "ge", "equal": "eq",
    "not_equal": "ne", "bitwise_and": "logical_and", "bitwise_or": "logical_or",
    "bitwise_xor": "logical_xor",
}
# NumPy names whose Tidal equivalent has another name (same names map to themselves).
_ALIASES = {
    "absolute": "abs", "fabs": "abs", "negative": "neg", "fmax": "maximum", "fmin": "minimum",
    "concatenate": "cat", "concat": "cat", "clip": "clamp", "expand_dims": "unsqueeze",
    "swapaxes": "transpose", "dot": "matmul", "broadcast_to": "expand",
    "take_along_axis": "gather", "cumulative_sum": "cumsum", "cumulative_prod": "cumprod",
    "max": "amax", "min": "amin",
}
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "amax", "minimum": "amin",
           "logical_and": "all", "logical_or": "any"}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod", "maximum": "cummax", "minimum": "cummin"}


def _td_name(name: str) -> str | None:
    frontend = importlib.import_module("tidal.frontend")
    candidate = _ALIASES.get(name, name)
    return candidate if candidate in frontend.__all__ else None


# Tidal ops whose arguments read as NumPy's (`axis=` is `dim=`): the hint can copy the call.
_SAME_ARGS = {"sum", "prod", "mean", "amax", "amin", "max", "min", "any", "all", "cumsum",
              "cumprod", "cummax", "cummin", "where", "clamp", "cat", "stack", "unsqueeze",
              "matmul", "squeeze", "flip", "logsumexp", "softmax", "log_softmax", "zeros", "ones",
              "full", "arange"}


def _suggest(text: str | None, td_name: str) -> str:
    """`np.exp(x)` -> `td.exp(x)` when the user's call can be copied."""
    from .ops_elementwise import __all__ as elementwise

    m = re.match(r"(?:np|numpy)\.[A-Za-z_][A-Za-z0-9_]*\(", text or "")
    if m is None or not (td_name in _SAME_ARGS or td_name in elementwise):
        return f"td.{td_name}(...)"
    args = re.sub(r"\baxis=", "dim=", re.sub(r"\bkeepdims=", "keepdim=", text[m.end():]))
    return f"td.{td_name}({args}"


def _numpy_error(shown: str, td_name: str | None) -> TidalError:
    frame = user_frame(_NUMPY_SKIP)
    reason = (f"{shown} cannot compute on a recurrent tensor: NumPy needs values, and a tensor "
              "has none while tracing")
    if td_name is None:
        hint = ("Tidal has no equivalent: compose it from td ops, or run NumPy code on the values "
                "at each point with td.udf(fn, [x], shape=..., dtype=...)")
    else:
        call = _suggest(source_text(frame), td_name) if shown.count(".") == 1 else f"td.{td_name}(...)"
        hint = f"use Tidal's op: `{call}`"
    return TidalError(reason, hint, location_of(frame))


def array_ufunc(ufunc: Any, method: str, inputs: tuple, kwargs: dict) -> Any:
    """`RecurrentTensor.__array_ufunc__` (see the module doc)."""
    name = getattr(ufunc, "__name__", str(ufunc))
    if method == "__call__" and name in _OPERATORS:
        if "out" in kwargs:
            raise TidalError(f"np.{name}(..., out=...) cannot write a recurrent tensor into a NumPy "
                             "array (an in-place operator such as `arr += x` does that)",
                             "make a new value instead: `y = arr + x` is a tensor",
                             location_of(user_frame(_NUMPY_SKIP)))
        if kwargs:
            raise TidalError(f"np.{name}(..., {'=..., '.join(kwargs)}=...) is not supported on a "
                             "recurrent tensor",
                             "use the operator, and cast with .astype(...) (e.g. (a + x).astype("
                             "'float64'))", location_of(user_frame(_NUMPY_SKIP)))
        from . import ops_elementwise as E, ops_reduce as R

        fn = R.matmul if name == "matmul" else getattr(E, _OPERATORS[name])
        return fn(*inputs)
    if method == "__call__":
        raise _numpy_error(f"np.{name}", _td_name(name))
    table = {"reduce": _REDUCE, "accumulate": _ACCUMULATE}.get(method, {})
    raise _numpy_error(f"np.{name}.{method}", table.get(name))


def array_function(func: Any, types: tuple, args: tuple, kwargs: dict) -> Any:
    """`RecurrentTensor.__array_function__`: NumPy functions raise, naming Tidal's op."""
    name = getattr(func, "__name__", str(func))
    parts = (getattr(func, "__module__", None) or "numpy").split(".")
    sub = parts[1] if len(parts) > 1 and not parts[1].startswith("_") else ""  # np.linalg
    shown = f"np.{sub + '.' if sub else ''}{name}"
    raise _numpy_error(shown, None if sub else _td_name(name))
