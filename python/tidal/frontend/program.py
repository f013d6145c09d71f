"""`td.Program`: the temporal dimensions, the traced ops, the UDF table.

    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), domain=(t,))
        p.output("y", x.tanh())
    p.mlir()                      # the rt module as text (verified)
    p.compile().run(bounds={T: 5}, inputs={"x": arr})

Statements are recorded in the order they are traced (ops, definition cases,
outputs); the rt module lists them in that order, which respects SSA
dominance because a Python value can only use values created before it.
"""
from __future__ import annotations

import contextvars
from typing import Any, Callable, Iterable

import numpy as np

from tidal.symbolic import Dim, Expr, Symbol

from .errors import SourceLocation, TidalError, user_location

__all__ = ["Program", "current_program", "Output"]

_ACTIVE: contextvars.ContextVar[tuple] = contextvars.ContextVar("tidal_programs", default=())


def current_program(required: bool = True, what: str = "this") -> "Program | None":
    """The innermost `with td.Program()` block's program."""
    stack = _ACTIVE.get()
    if stack:
        return stack[-1]
    if required:
        raise TidalError(f"{what} needs an active program",
                         "trace inside `with td.Program() as p:`")
    return None


class Output:
    """`p.output(name, value, when=cond)`: a named result of the program."""

    __slots__ = ("name", "value", "cond", "loc")

    def __init__(self, name: str, value: Any, cond: Expr | None, loc: SourceLocation):
        self.name, self.value, self.cond, self.loc = name, value, cond, loc

    def __repr__(self) -> str:
        when = f" when {self.cond}" if self.cond is not None else ""
        return f"Output({self.name!r}{when})"


class Program:
    """A recurrent-tensor program: dims, ops, definitions, outputs, UDFs."""

    def __init__(self, name: str = "main"):
        if not isinstance(name, str) or not name.isidentifier():
            raise TidalError(f"program name {name!r} is not an identifier", "use e.g. Program('main')")
        self.name = name
        self.loc = user_location()
        self.dim_list: list[Dim] = []
        self.fixed_bounds: dict[str, tuple[int, Any]] = {}   # bound name -> (value, where fixed)
        self.statements: list[Any] = []   # Node | Case | Output, in trace order
        self.nodes: list[Any] = []        # every Node, in trace order
        self.outputs: list[Output] = []
        self.stops: list = []             # td.stop_when (stopping.Stop), one per dim at most
        self.udfs: dict[str, Callable] = {}
        self._udf_keys: dict[str, Any] = {}
        self._names: dict[str, dict[str, SourceLocation]] = {"input": {}, "param": {}, "output": {}}
        self._next_seed = 0
        self._constants: dict = {}
        self._tokens: list = []

    # -- context --------------------------------------------------------------
    def __enter__(self) -> "Program":
        self._tokens.append(_ACTIVE.set(_ACTIVE.get() + (self,)))
        return self

    def __exit__(self, *exc) -> bool:
        _ACTIVE.reset(self._tokens.pop())
        return False

    # -- dimensions -----------------------------------------------------------
    def dims(self, *names: str | tuple[str, str] | Dim) -> tuple[Dim, ...]:
        """Declares temporal dims in program order: `(b, B), (t, T) = p.dims("b", "t")`.

        A name `"t"` has the bound `"T"`; give `("t", "Tmax")` or a `td.Dim` for
        another bound name. Returns the `Dim`s (each unpacks to (step, bound)).
        """
        if not names:
            raise TidalError("p.dims() needs at least one dimension name", 'e.g. p.dims("t")')
        made = []
        for n in names:
            try:
                if isinstance(n, Dim):
                    d = n
                elif isinstance(n, tuple):
                    d = Dim(n[0], bound=n[1])
                else:
                    d = Dim(n)
            except (ValueError, TypeError) as e:
                raise TidalError(f"invalid dimension {n!r}: {e}", 'use identifiers, e.g. p.dims("t")') from None
            used = {s.name for x in self.dim_list for s in x}
            if d.step.name in used or d.bound.name in used:
                raise TidalError(f"dimension {d.step.name} < {d.bound.name} clashes with a dimension "
                                 "already declared in this program", "declare each dimension once")
            self.dim_list.append(d)
            made.append(d)
        return tuple(made)

    def dim(self, name: str, bound: str | None = None, *, size: int | None = None) -> Dim:
        """Declares one dim: `t, T = p.dim("t")`. With `size`, the bound is fixed
        to that value (`l, L = p.dim("l", size=4)`, e.g. the layers of a
        `td.nn.Stack`): runs need not give it and may not give another value."""
        if size is not None and (isinstance(size, bool) or not isinstance(size, (int, np.integer))
                                 or size < 1):
            raise TidalError(f"the size of dimension {name!r} must be an int >= 1, got {size!r}",
                             f'e.g. p.dim("{name}", size=4)')
        d = self.dims(name if bound is None else (name, bound))[0]
        if size is not None:
            self.fixed_bounds[d.bound.name] = (int(size), user_location())
        return d

    def discard(self, nodes: Iterable[Any]) -> None:
        """Drops nodes that nothing reads from the printed program (e.g. the
        per-layer weights a `td.nn.Stack` replaced by stacked ones)."""
        drop = {id(n) for n in nodes}
        if not drop:
            return
        used: set[int] = set()
        for st in self.statements:
            for v in (st.inputs if hasattr(st, "inputs") else (getattr(st, "target", None), st.value)):
                v = getattr(v, "tensor", v)        # a conditional view (x[cond]) as an output
                if hasattr(v, "node"):
                    used.add(id(v.node))
        drop -= used
        self.statements = [st for st in self.statements if id(st) not in drop]
        for n in nodes:   # a dropped param's name is free again
            if id(n) in drop and n.op in self._names and n.attrs.get("name") in self._names[n.op]:
                del self._names[n.op][n.attrs["name"]]

    def order(self, d: Dim) -> int:
        return self.dim_list.index(d)

    def dim_of(self, symbol: Any, what: str = "expression") -> Dim:
        """The declared Dim a step/bound symbol (or Dim) belongs to."""
        if isinstance(symbol, Dim):
            d = symbol
        elif isinstance(symbol, Symbol) and symbol.role in ("step", "bound"):
            d = symbol.dim
        else:
            name = getattr(symbol, "name", symbol)
            raise TidalError(f"unknown dimension {name!r} in {what}: it is not a temporal dimension "
                             f"of this program (declared: {self._declared()})",
                             "declare it with p.dims(...) and use the returned step/bound")
        if d not in self.dim_list:
            raise TidalError(f"unknown dimension {d.step.name} < {d.bound.name} in {what}: it is not "
                             f"declared in this program (declared: {self._declared()})",
                             f'declare it with p.dims("{d.step.name}")')
        return d

    def _declared(self) -> str:
        return ", ".join(f"{d.step.name} < {d.bound.name}" for d in self.dim_list) or "none"

    def check_symbols(self, expr: Expr, what: str) -> set[Dim]:
        """The dims whose *steps* occur in `expr`; errors on undeclared symbols."""
        steps = set()
        for s in expr.free_symbols:
            d = self.dim_of(s, what)
            if s.role == "step":
                steps.add(d)
        return steps

    def canonical_domain(self, dims: Iterable[Dim]) -> tuple[Dim, ...]:
        """Dims sorted in program order, without duplicates."""
        return tuple(sorted(set(dims), key=self.order))

    def as_domain(self, domain: Any, what: str = "domain") -> tuple[Dim, ...]:
        """A user domain (dims, steps, or their names) in program order."""
        if domain is None:
            return ()
        if isinstance(domain, (Dim, Symbol, str)):
            domain = (domain,)
        out = []
        for d in domain:
            if isinstance(d, str):
                found = [x for x in self.dim_list if x.step.name == d]
                if not found:
                    raise TidalError(f"unknown dimension {d!r} in {what} (declared: {self._declared()})",
                                     "declare it with p.dims(...)")
                d = found[0]
            if isinstance(d, Symbol) and d.role == "bound":
                raise TidalError(f"{what} lists the bound {d.name}; domains list steps",
                                 f"write {d.partner} (the step) instead of {d.name}")
            out.append(self.dim_of(d, what))
        if len(set(out)) != len(out):
            raise TidalError(f"{what} lists a dimension twice", "list each dimension once")
        return self.canonical_domain(out)

    # -- names, seeds, udfs -----------------------------------------------------
    def claim_name(self, kind: str, name: Any) -> str:
        if not isinstance(name, str) or not name:
            raise TidalError(f"{kind} name {name!r} must be a non-empty string", f'e.g. td.{kind}("x", ...)')
        table = self._names[kind]
        if name in table:
            raise TidalError(f"{kind} name {name!r} is already used (at {table[name]})",
                             f"give each {kind} a unique name")
        table[name] = user_location()
        return name

    def next_seed(self) -> int:
        seed = self._next_seed
        self._next_seed += 1
        return seed

    def register_udf(self, fn: Callable, name: str | None, key: Any) -> str:
        """Registers `fn` under a unique callee name (reused for the same fn and key)."""
        base = name or getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "udf")
        base = "".join(c if c.isalnum() or c in "._" else "_" for c in base) or "udf"
        candidate, k = base, 0
        while candidate in self.udfs:
            if self.udfs[candidate] is fn and self._udf_keys[candidate] == key:
                return candidate
            k += 1
            candidate = f"{base}_{k}"
        self.udfs[candidate] = fn
        self._udf_keys[candidate] = key
        return candidate

    # -- outputs ----------------------------------------------------------------
    def output(self, name: str, value: Any, when: Any = None) -> None:
        """Returns `value` at every point of its domain (where `when` holds).

        `value` may be a tensor or a conditional view `x[cond]`.
        """
        from .indexing import output_value

        output_value(self, name, value, when)

    # -- results ------------------------------------------------------------------
    def mlir(self, locations: bool = True) -> str:
        """The verified rt module as text (with `loc(...)` locations by default)."""
        from .emit import print_module

        return print_module(self.module(), locations)

    def module(self, context: Any = None):
        """A fresh verified `mlir.ir.Module` holding this program in `rt`."""
        from .emit import build_module

        return build_module(self, context)

    def sdg(self, locations: bool = False) -> str:
        """The program after `rt-to-sdg`, as text."""
        from .emit import print_module
        from .executable import lower_to_sdg

        return print_module(lower_to_sdg(self.module()), locations)

    def compile(self, backend: str = "jax", *, passes=None, dump=None, timings=None, progress=None,
                device_memory=None):
        """Compile once; `.run(bounds={T: 10}, inputs={"x": arr})` for any bounds.

        backend: "jax" (default) or "numpy" run the isl-scheduled program;
        "reference" uses the reference interpreter (slow, obviously correct);
        td.backends() lists them, tidal.runtime.backends.get(name) tells what each can do.
        passes: the sdg passes run after rt-to-sdg (pipeline elements, e.g.
        ["sdg-dce"] for no fusion; default
        tidal.frontend.compile_pipeline.DEFAULT_SDG_PASSES: sdg-dce, sdg-restrict-merges, sdg-simplify, cse,
        sdg-reassociate, sdg-lift, sdg-vectorize, sdg-accumulate, sdg-tile, sdg-contract, sdg-fuse; options in braces, e.g.
        "sdg-tile{tile=16 min-bytes=0}" to tile every large reduction;
        td.default_passes(without=[...], options={...}) is the default with passes left out or configured).
        dump: a directory that gets every compile stage as a numbered file and
        an index.json (or set TIDAL_DUMP). timings: print the stages' times
        (or TIDAL_TIMINGS=1). progress: print each stage as it starts (or
        TIDAL_PROGRESS=1).
        device_memory (a backend with a memory budget: jax): a budget for the tensors kept on the device,
        in bytes (an int) or as a fraction (0 < f <= 1) of the device's memory;
        stores read furthest in the future are swapped to host memory and back
        before their next use (results are identical; loops run in Python, so
        it is slower). `exe.memory_report()` shows the swaps.
        """
        from .executable import Executable

        return Executable(self, backend, passes=passes, dump=dump, timings=timings, progress=progress,
                          device_memory=device_memory)

    def __repr__(self) -> str:
        dims = ", ".join(f"{d.step.name} < {d.bound.name}" for d in self.dim_list)
        return f"Program({self.name!r}, dims [{dims}], {len(self.nodes)} ops)"
