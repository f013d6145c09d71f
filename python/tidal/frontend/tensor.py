"""The traced graph: `Node`s (one rt op each), `RecurrentTensor`s (their
results) and `Case`s (definitions of recurrent tensors).

Walking the graph (for autodiff, printing, checks):

    y.node            the producing Node: .op ("binary"), .attrs ({"kind": "add"}),
                      .inputs (RecurrentTensors), .domain, .loc, .outputs
    y.op, y.inputs, y.attrs, y.loc     shortcuts to the node's fields
    y.shape           tuple of canonical symbolic sizes (tidal.symbolic Exprs)
    y.dtype           a NumPy dtype
    y.domain          tuple of td.Dim in program order
    s.cases           for `op == "recurrent"`: the Cases in definition order

`op` is the rt mnemonic (`input param recurrent index unary binary where
reduce scan matmul reshape permute expand squeeze unsqueeze flip slice take
index_select gather scatter_add concat pad cast udf constant full iota random
symbol_value`); the MLIR op is `rt.<op>`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tidal.symbolic import Dim, Expr, to_text

from .errors import SourceLocation, TidalError

__all__ = ["Node", "Case", "RecurrentTensor", "Domain"]


def _as_dim(d: Any) -> Any:
    return d.dim if isinstance(d, Expr) and getattr(d, "role", None) == "step" else d


class Domain(tuple):
    """A tuple of `td.Dim` in program order that also compares equal to the
    tuple of their steps: `x.domain == (t,)` and `x.domain == (Dim("t"),)`."""

    __slots__ = ()

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, tuple):
            return NotImplemented
        return len(self) == len(other) and all(a == _as_dim(b) for a, b in zip(self, other))

    def __ne__(self, other: Any) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = tuple.__hash__

    @property
    def steps(self) -> tuple:
        return tuple(d.step for d in self)

    @property
    def bounds(self) -> tuple:
        return tuple(d.bound for d in self)

    def __repr__(self) -> str:
        return "(" + ", ".join(d.step.name for d in self) + ("," if len(self) == 1 else "") + ")"


class Node:
    """One traced rt op."""

    __slots__ = ("program", "op", "inputs", "attrs", "domain", "loc", "outputs", "id")

    def __init__(self, program, op: str, inputs: tuple, attrs: dict, domain: tuple,
                 loc: SourceLocation, id: int):
        self.program = program
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.domain = Domain(domain)
        self.loc = loc
        self.outputs: tuple = ()
        self.id = id

    def __repr__(self) -> str:
        kind = self.attrs.get("kind") or self.attrs.get("name") or ""
        dom = ", ".join(d.step.name for d in self.domain)
        return f"Node(#{self.id} {self.op} {kind} domain [{dom}] at {self.loc})".replace("  ", " ")


class Case:
    """`target[index] if cond = value`: one case of a recurrent tensor's definition."""

    __slots__ = ("target", "index", "cond", "value", "loc")

    def __init__(self, target, index: tuple, cond: Expr | None, value, loc: SourceLocation):
        self.target, self.index, self.cond, self.value, self.loc = target, index, cond, value, loc

    def __repr__(self) -> str:
        idx = ", ".join(str(c) for c in self.index)
        when = f" if {self.cond}" if self.cond is not None else ""
        return f"Case([{idx}]{when} at {self.loc})"


def shape_str(shape: tuple) -> str:
    return "(" + ", ".join(to_text(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


class RecurrentTensor:
    """A tensor with temporal dims (its domain) and a symbolic spatial shape.

    Build them with `td.input`, `td.param`, `td.recurrent`, the creation
    functions and the operators; index them with symbolic expressions
    (`x[t - 1]`, `x[0:t + 1]`, `x[b, i, t:T]`); define recurrent ones by cases
    (`s[0] = ...; s[t + 1] = f(s[t])`).
    """

    __slots__ = ("node", "output_index", "shape", "dtype", "cases", "__weakref__")

    def __init__(self, node: Node, index: int, shape: tuple, dtype: np.dtype):
        self.node = node
        self.output_index = index
        self.shape = shape
        self.dtype = dtype
        self.cases: list[Case] = []

    # -- graph ------------------------------------------------------------------
    @property
    def program(self):
        return self.node.program

    @property
    def op(self) -> str:
        return self.node.op

    @property
    def inputs(self) -> tuple:
        return self.node.inputs

    @property
    def attrs(self) -> dict:
        return self.node.attrs

    @property
    def domain(self) -> tuple[Dim, ...]:
        return self.node.domain

    @property
    def loc(self) -> SourceLocation:
        return self.node.loc

    @property
    def ndim(self) -> int:
        return len(self.shape)

    rank = ndim

    @property
    def name(self) -> str | None:
        """The name of an input or param (None for other tensors)."""
        return self.node.attrs.get("name")

    def size(self, dim: int | None = None):
        """The symbolic shape, or one dimension's symbolic size."""
        if dim is None:
            return self.shape
        from .shapes import norm_dim

        return self.shape[norm_dim(dim, self.ndim)]

    def __repr__(self) -> str:
        kind = self.node.attrs.get("kind") or self.node.attrs.get("name") or ""
        dom = ", ".join(d.step.name for d in self.domain)
        op = f"{self.op} {kind}".strip()
        return (f"RecurrentTensor({op}, shape={shape_str(self.shape)}, dtype={self.dtype}, "
                f"domain=({dom}{',' if len(self.domain) == 1 else ''}))")

    # -- Python protocol guards ----------------------------------------------------
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        from .protocols import truth_value

        raise truth_value()

    def __iter__(self):
        raise TidalError("a recurrent tensor cannot be iterated while tracing",
                         "index it explicitly (x[..., 0]) or use td.unbind-free ops such as sum/cat")

    def __len__(self) -> int:
        raise TidalError("len() of a recurrent tensor is not a Python int (shapes may be symbolic)",
                         "use x.shape[0] (a symbolic size)")

    def __index__(self):
        raise TidalError("a recurrent tensor cannot be used as a Python index",
                         "use td.index_select / td.gather for data-dependent indexing")

    def _no_value(self, what: str):
        from .protocols import no_value

        raise no_value(what)

    def __array__(self, *args, **kwargs):
        self._no_value("NumPy cannot turn a recurrent tensor into an array")

    def __float__(self):
        self._no_value("float() of a recurrent tensor")

    def __int__(self):
        self._no_value("int() of a recurrent tensor")

    def numpy(self):
        """Raises: a traced tensor has no value (output it and run the program)."""
        self._no_value("x.numpy()")

    def item(self):
        """Raises: a traced tensor has no value (output it and run the program)."""
        self._no_value("x.item()")

    def tolist(self):
        """Raises: a traced tensor has no value (output it and run the program)."""
        self._no_value("x.tolist()")

    # NumPy's protocols: `ndarray + x` and `np.float32(2) * x` act as the operators;
    # other NumPy functions raise, naming Tidal's op (see protocols.py).
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from .protocols import array_ufunc

        return array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from .protocols import array_function

        return array_function(func, types, args, kwargs)

    # Indexing lives in indexing.py; operators and methods are bound in methods.py.
    def __getitem__(self, key: Any) -> "RecurrentTensor":
        from .indexing import getitem

        return getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        from .indexing import setitem

        setitem(self, key, value)
