"""Sources: inputs, params, recurrent tensors, constants, generators, UDFs.

Lowering (one rt op each):
    td.input("x", shape, dtype, domain)     rt.input "x" domain D : type
    td.param("W", array, domain=())         rt.param "W" domain D (values bound at run time)
    td.recurrent(shape, dtype, domain)      rt.recurrent domain D (cases: rt.define)
    td.constant(array)                      rt.constant dense<...> domain []
    td.zeros/ones/full(shape, ...)          rt.full v domain D (D: steps of the shape)
    td.arange(n) / arange(a, b, k)          rt.iota 0 (then * k + a)
    td.rand/randn/bernoulli(shape, ...)     rt.random uniform|normal|bernoulli seed s
    td.symbol(expr)                         rt.symbol_value <expr>
    td.udf(fn, inputs, shape=, dtype=)      rt.udf "callee"(inputs) -> results
"""
from __future__ import annotations

import numbers
from typing import Any, Callable, Sequence

import numpy as np

from tidal.symbolic import Const, Expr, Slice, slice_size

from . import dtypes as dt
from .errors import TidalError, symbolic_errors
from .graph import constant as _constant
from .graph import is_tensor, lift, make, make_multi, resolve_program, symbol_value
from .program import Program, current_program
from .shapes import as_shape, size, static
from .tensor import RecurrentTensor

__all__ = ["input", "param", "recurrent", "constant", "tensor", "zeros", "ones", "full",
           "zeros_like", "ones_like", "full_like", "arange", "rand", "randn", "bernoulli",
           "symbol", "udf"]


def _program(program: Program | None, what: str) -> Program:
    return program if program is not None else current_program(what=what)


def _shape_args(shape: tuple) -> Any:
    return shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape


def _check_shape_steps(program: Program, shape: tuple, domain: tuple, what: str) -> None:
    for s in shape:
        steps = program.check_symbols(s, what)
        extra = steps - set(domain)
        if extra:
            names = ", ".join(d.step.name for d in extra)
            raise TidalError(f"the shape of {what} uses the step {names}, which is not in its domain",
                             f"add {names} to domain=..., or use the bound instead")


def input(name: str, shape: Any = (), dtype: Any = "float32", domain: Any = ()) -> RecurrentTensor:  # noqa: A001
    """A tensor fed at run time: an array with the domain's extents as leading axes."""
    program = current_program(what="td.input")
    dtype = dt.as_dtype(dtype)
    dom = program.as_domain(domain, f"domain of input {name!r}")
    shp = as_shape(shape, program, f"shape of input {name!r}")
    _check_shape_steps(program, shp, dom, f"input {name!r}")
    program.claim_name("input", name)
    return make("input", (), {"name": name}, shp, dtype, program=program, domain=dom)


def param(name: str, value: Any = None, dtype: Any = None, domain: Any = (), *,
          shape: Any = None) -> RecurrentTensor:
    """A named parameter of the program (e.g. weights), the same at every point.

    The IR keeps its name, shape and dtype; its values are bound to the
    compiled executable (`exe.load_state_dict`), so programs that differ only
    in their weights compile once. `value`: the initial values (an array);
    or None with `shape=` and `dtype=` for a parameter whose values are
    bound after compiling (`exe.load_state_dict({name: array})`)."""
    program = current_program(what="td.param")
    if value is None:
        if shape is None:
            raise TidalError(f"td.param {name!r} has neither a value nor a shape",
                             "pass an array, or shape=... and dtype=... and bind the values with "
                             "exe.load_state_dict after compiling")
        dtype = dt.as_dtype("float32" if dtype is None else dtype, f"dtype of param {name!r}")
        dims = as_shape(shape, program, f"shape of param {name!r}")
        if any(static(n) is None for n in dims):
            raise TidalError(f"td.param {name!r}: shape ({', '.join(map(str, dims))}) is not static",
                             "a parameter's shape is a tuple of ints, e.g. shape=(4096, 1024)")
        arr = None
    else:
        arr = np.asarray(value)
        dtype = dt.as_dtype(arr.dtype if dtype is None else dtype, f"dtype of param {name!r}")
        arr = np.asarray(arr, dtype=dtype, order="C")
        if shape is not None and tuple(shape) != arr.shape:
            raise TidalError(f"td.param {name!r}: shape={tuple(shape)} but the value has shape {arr.shape}",
                             "leave shape= out when giving a value")
        dims = tuple(Const(int(n)) for n in arr.shape)
    dom = program.as_domain(domain, f"domain of param {name!r}")
    program.claim_name("param", name)
    return make("param", (), {"name": name, "value": arr}, dims, dtype, program=program, domain=dom)


def recurrent(shape: Any = (), dtype: Any = "float32", domain: Any = (),
              name: str | None = None) -> RecurrentTensor:
    """A tensor defined by cases: `s[0] = a; s[t + 1] = f(s[t])` (first match wins)."""
    program = current_program(what="td.recurrent")
    dtype = dt.as_dtype(dtype)
    dom = program.as_domain(domain, "domain of the recurrent tensor")
    shp = as_shape(shape, program, "shape of the recurrent tensor")
    _check_shape_steps(program, shp, dom, "the recurrent tensor")
    attrs = {} if name is None else {"label": name}
    return make("recurrent", (), attrs, shp, dtype, program=program, domain=dom)


def constant(value: Any, dtype: Any = None, program: Program | None = None) -> RecurrentTensor:
    """An `rt.constant` holding a NumPy-convertible value."""
    program = _program(program, "td.constant")
    if dtype is None and dt.is_python_scalar(value):
        dtype = dt.promote([], [dt.weak_kind(value)])
    return _constant(program, value, None if dtype is None else dt.as_dtype(dtype))


tensor = constant


def full(shape: Any, value: Any, dtype: Any = None, domain: Any = (),
         program: Program | None = None) -> RecurrentTensor:
    """A tensor of `shape` (symbolic ok) filled with `value` (`rt.full`)."""
    program = _program(program, "td.full")
    if is_tensor(value) or isinstance(value, Expr):
        from .ops_shape import expand

        v = lift(value, program, None if dtype is None else dt.as_dtype(dtype))
        return expand(v, *as_shape(shape, program, "shape"))
    if not isinstance(value, numbers.Number):
        raise TidalError(f"full: fill value {value!r} is not a number", "pass a number or a scalar tensor")
    if dtype is None:
        dtype = dt.promote([], [dt.weak_kind(value)]) if dt.is_python_scalar(value) else np.asarray(value).dtype
    dtype = dt.as_dtype(dtype)
    shp = as_shape(_shape_args(shape) if isinstance(shape, tuple) else shape, program, "shape")
    dom = program.as_domain(domain, "domain")
    return make("full", (), {"value": float(value)}, shp, dtype, program=program, extra_domain=dom)


def zeros(*shape: Any, dtype: Any = "float32", domain: Any = (), program: Program | None = None) -> RecurrentTensor:
    """Zeros of a (possibly symbolic) shape: `td.zeros(T - t, 4)` or `td.zeros((4,))`."""
    return full(_shape_args(shape), 0, dtype, domain, program)


def ones(*shape: Any, dtype: Any = "float32", domain: Any = (), program: Program | None = None) -> RecurrentTensor:
    return full(_shape_args(shape), 1, dtype, domain, program)


def full_like(x: RecurrentTensor, value: Any, dtype: Any = None) -> RecurrentTensor:
    """`full` with x's shape, dtype and domain."""
    return full(x.shape, value, x.dtype if dtype is None else dtype, x.domain, x.program)


def zeros_like(x: RecurrentTensor, dtype: Any = None) -> RecurrentTensor:
    return full_like(x, 0, dtype)


def ones_like(x: RecurrentTensor, dtype: Any = None) -> RecurrentTensor:
    return full_like(x, 1, dtype)


def arange(start: Any, stop: Any = None, step: int = 1, dtype: Any = "int64",
           program: Program | None = None) -> RecurrentTensor:
    """0, 1, ..., n - 1 (`rt.iota`); `arange(a, b, k)` is `iota * k + a`. Symbolic ok."""
    program = _program(program, "td.arange")
    a, b = (Const(0), size(start, "arange stop")) if stop is None else \
        (size(start, "arange start"), size(stop, "arange stop"))
    if isinstance(step, bool) or not isinstance(step, numbers.Integral) or step <= 0:
        raise TidalError(f"arange step {step!r} must be a positive int", "e.g. td.arange(0, T, 2)")
    with symbolic_errors("arange"):
        n = slice_size(Slice(a, b, step, validate=False))
    out = make("iota", (), {"dim": 0}, (n,), dt.INDEX, program=program)
    if step != 1:
        out = out * step
    if static(a) != 0:
        out = out + (symbol_value(program, a) if a.free_symbols else a.value)
    from .ops_elementwise import astype

    return astype(out, dtype)


def random(dist: str, shape: tuple, dtype: Any, domain: Any, seed: int | None,
           program: Program | None, what: str) -> RecurrentTensor:
    """An `rt.random` draw of distribution `dist` (td.rand, td.randn, td.bernoulli, the samplers)."""
    program = _program(program, what)
    dtype = dt.as_dtype(dtype)
    shp = as_shape(_shape_args(shape), program, "shape")
    dom = program.as_domain(domain, "domain")
    s = program.next_seed() if seed is None else int(seed)
    return make("random", (), {"dist": dist, "seed": s}, shp, dtype, program=program, extra_domain=dom)


def rand(*shape: Any, dtype: Any = "float32", domain: Any = (), seed: int | None = None,
         program: Program | None = None) -> RecurrentTensor:
    """Uniform [0, 1) samples, fresh at every point of `domain` (`rt.random uniform`)."""
    return random("uniform", shape, dtype, domain, seed, program, "td.rand")


def randn(*shape: Any, dtype: Any = "float32", domain: Any = (), seed: int | None = None,
          program: Program | None = None) -> RecurrentTensor:
    """Standard normal samples (`rt.random normal`)."""
    return random("normal", shape, dtype, domain, seed, program, "td.randn")


def bernoulli(*shape: Any, domain: Any = (), seed: int | None = None,
              program: Program | None = None) -> RecurrentTensor:
    """Fair coin flips as bools (`rt.random bernoulli`)."""
    return random("bernoulli", shape, "bool", domain, seed, program, "td.bernoulli")


def symbol(expr: Any, program: Program | None = None) -> RecurrentTensor:
    """A symbolic expression's value as a scalar tensor: `0.99 ** td.symbol(i)`."""
    program = _program(program, "td.symbol")
    if isinstance(expr, numbers.Integral):
        expr = Const(int(expr))
    if not isinstance(expr, Expr):
        raise TidalError(f"td.symbol needs a symbolic expression, got {expr!r}", "e.g. td.symbol(t)")
    return symbol_value(program, expr)


def udf(fn: Callable, inputs: Sequence[Any] = (), *, shape: Any = None, dtype: Any = None,
        shapes: Sequence[Any] | None = None, dtypes: Sequence[Any] | None = None,
        domain: Any = (), name: str | None = None) -> Any:
    """Calls host code `fn(*arrays)` at every point of the domain (`rt.udf`).

    The result is declared: `shape=`/`dtype=` for one output (returns a
    tensor), `shapes=`/`dtypes=` for several (returns a tuple), neither for a
    sink that runs only for its effects (returns None). `fn` may keep
    external state; it is called once per point, in schedule order, with
    NumPy arrays (the inputs read at that point), and must return one array
    (or a tuple, or None for a sink). The domain is the union of the inputs'
    domains and `domain` (for sources without inputs, e.g. `domain=(t,)`).
    `fn` is registered in `p.udfs` under a unique callee name.
    """
    if not callable(fn):
        raise TidalError(f"td.udf needs a callable, got {fn!r}", "pass a Python function")
    inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    program = resolve_program(inputs, "td.udf") if inputs else current_program(what="td.udf")
    ins = tuple(lift(v, program) for v in inputs)
    if shapes is not None or dtypes is not None:
        if shape is not None or dtype is not None:
            raise TidalError("td.udf: give either shape/dtype (one output) or shapes/dtypes",
                             "not both")
        shapes = list(shapes or [])
        dtypes = list(dtypes) if dtypes is not None else ["float32"] * len(shapes)
        if len(shapes) != len(dtypes):
            raise TidalError(f"td.udf: {len(shapes)} shapes but {len(dtypes)} dtypes",
                             "declare one shape and one dtype per output")
        single = False
    elif shape is not None or dtype is not None:
        shapes, dtypes, single = [() if shape is None else shape], [dtype or "float32"], True
    else:
        shapes, dtypes, single = [], [], False
    results = [(as_shape(s, program, "udf output shape"), dt.as_dtype(d, "udf output dtype"))
               for s, d in zip(shapes, dtypes)]
    dom = program.as_domain(domain, "udf domain")
    callee = program.register_udf(fn, name, tuple(d.str for _, d in results))
    outs = make_multi("udf", ins, {"callee": callee, "fn": fn}, results, program=program,
                      extra_domain=dom)
    if single:
        return outs[0]
    return outs if outs else None
