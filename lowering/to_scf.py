"""Lowering a scheduled `sdg.graph` to `func`/`scf`/`arith` (the paper's §5.3).

The isl AST of the schedule becomes one function whose arguments are the
graph's bounds (`index`), with `scf.for`/`scf.if` over `index` values and
`arith` ops for bounds and conditions. Executing node `k` at a point is a call
to a private declaration carrying the node's number, so the program uses
upstream dialects only and maps back to the graph:

    func.func private @g_op3(index) attributes {tidal.graph = @g, tidal.op = "%3 = sdg.binary add", tidal.op_index = 3 : i64}
    func.func @g_run(%arg0: index) attributes {tidal.bounds = ["T"], tidal.graph = @g} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.for %i0 = %c0 to %arg0 step %c1 {
        func.call @g_op3(%i0) : (index) -> ()
      }
      return
    }

The schedule stays parametric: compile once, run with any bounds. The
`sdg.graph` itself is kept (the runtime reads its operators).
"""
from __future__ import annotations

import json
import re

from tidal.symbolic.isl_bridge import isl_name

from .graph import Graph
from .loop_ast import Exec, For, If, format_expr

__all__ = ["run_function_name", "op_function_name", "memory_function_name", "lower_to_text", "symbol_ref", "SCHEDULE_ATTR"]

SCHEDULE_ATTR = "tidal.schedule"
_BOOL_OPS = {"eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not"}
_CMP = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_ARITH = {"add": "arith.addi", "sub": "arith.subi", "mul": "arith.muli", "floordiv": "arith.floordivsi",
          "mod": "arith.remsi", "min": "arith.minsi", "max": "arith.maxsi"}


def run_function_name(graph: Graph) -> str:
    return f"{graph.name}_run"


def op_function_name(graph: Graph, index: int) -> str:
    return f"{graph.name}_op{index}"


def memory_function_name(graph: Graph, kind: str, index: int) -> str:
    """`<graph>_alloc<k>` / `<graph>_free<k>`: allocating / freeing node k's store."""
    return f"{graph.name}_{kind}{index}"


_BARE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")


def symbol_ref(name: str) -> str:
    """`@name` as MLIR text (quoted unless `name` is a bare identifier)."""
    return f"@{name}" if _BARE_ID.fullmatch(name) else f"@{_string(name)}"


def _string(text: str) -> str:
    return json.dumps(text)  # a valid MLIR string literal for printable text


class _Emitter:
    def __init__(self, bounds: list[str]):
        self.lines: list[str] = []
        # the schedule AST names a bound by its isl name (`floor_` for `floor`);
        # the SSA names `%argN` cannot clash with constants, loops or temporaries
        self.scopes: list[dict] = [{("var", isl_name(b)): f"%arg{i}" for i, b in enumerate(bounds)}]
        self.counter = 0
        self.depth = 1

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def fresh(self, hint: str = "v") -> str:
        self.counter += 1
        return f"%{hint}{self.counter}"

    def lookup(self, e: tuple) -> str | None:
        for scope in reversed(self.scopes):
            if e in scope:
                return scope[e]
        return None

    def value(self, e: tuple) -> str:
        """SSA name of expression `e` (index or i1), emitting what is missing."""
        known = self.lookup(e)
        if known is not None:
            return known
        op = e[0]
        if op == "int":
            name = f"%c{e[1]}" if e[1] >= 0 else f"%c_{-e[1]}"
            self.line(f"{name} = arith.constant {e[1]} : index")
            self.scopes[0][e] = name  # constants live at function level
            if self.depth > 1:  # hoist: move the line to the function's top
                self.lines.insert(0, "  " + self.lines.pop().lstrip())
            return name
        if op == "var":
            raise ValueError(f"unknown variable {e[1]} in the schedule AST")
        args = [self.value(a) for a in e[1:]]
        name = self.fresh()
        if op in _CMP:
            self.line(f"{name} = arith.cmpi {_CMP[op]}, {args[0]}, {args[1]} : index")
        elif op in ("and", "or"):
            self.line(f"{name} = arith.{'andi' if op == 'and' else 'ori'} {args[0]}, {args[1]} : i1")
        elif op == "not":
            true = self.value_bool_true()
            self.line(f"{name} = arith.xori {args[0]}, {true} : i1")
        elif op == "neg":
            zero = self.value(("int", 0))
            self.line(f"{name} = arith.subi {zero}, {args[0]} : index")
        elif op == "select":
            kind = "i1" if e[2][0] in _BOOL_OPS else "index"
            self.line(f"{name} = arith.select {args[0]}, {args[1]}, {args[2]} : {kind}")
        else:
            self.line(f"{name} = {_ARITH[op]} {args[0]}, {args[1]} : index")
        self.scopes[-1][e] = name
        return name

    def value_bool_true(self) -> str:
        key = ("bool", True)
        if key not in self.scopes[0]:
            self.lines.insert(0, "  %true = arith.constant true")
            self.scopes[0][key] = "%true"
        return "%true"


def _emit_body(em: _Emitter, graph: Graph, stmts: list) -> None:
    for s in stmts:
        if isinstance(s, For):
            lo, hi, step = em.value(s.lower), em.value(s.upper), em.value(("int", s.step))
            var = "%i" + s.var.lstrip("c")
            em.line(f"scf.for {var} = {lo} to {hi} step {step} {{")
            em.scopes.append({("var", s.var): var})
            em.depth += 1
            _emit_body(em, graph, s.body)
            em.depth -= 1
            em.scopes.pop()
            em.line("}")
        elif isinstance(s, If):
            cond = em.value(s.cond)
            em.line(f"scf.if {cond} {{  // {format_expr(s.cond)}")
            for branch, last in ((s.then, not s.orelse), (s.orelse, True)):
                if branch is s.orelse and not s.orelse:
                    break
                em.scopes.append({})
                em.depth += 1
                _emit_body(em, graph, branch)
                em.depth -= 1
                em.scopes.pop()
                em.line("}" if last else "} else {")
        else:
            assert isinstance(s, Exec)
            args = [em.value(a) for a in s.args]
            types = ", ".join("index" for _ in args)
            listed = ": " + ", ".join(map(str, s.branches)) if s.branches else ""   # array<i64> if none
            attrs = "" if s.branches is None else f" {{tidal.branches = array<i64{listed}>}}"
            em.line(f"func.call {symbol_ref(op_function_name(graph, s.node))}({', '.join(args)}){attrs} : "
                    f"({types}) -> ()")


def lower_to_text(graph: Graph, tree: list, statements: list[int], memory: dict | None = None) -> str:
    """MLIR text of the private declarations (one per scheduled node) and the
    run function for `tree` (a loop tree from `loop_ast.from_isl`).
    `memory`: {top-level statement: (nodes allocated before it, nodes freed
    after it)} (lifetimes.memory_events), as calls of `@<graph>_alloc<k>` /
    `@<graph>_free<k>` (declarations with `tidal.memory` and `tidal.node`)."""
    memory = memory or {}
    out = []
    for k in statements:
        node = graph.nodes[k]
        types = ", ".join("index" for _ in node.domain)
        out.append(f"func.func private {symbol_ref(op_function_name(graph, k))}({types}) attributes "
                   f"{{tidal.graph = {symbol_ref(graph.name)}, tidal.op = {_string(node.label)}, "
                   f"tidal.op_index = {k} : i64}}")
    for kind, slot in (("alloc", 0), ("free", 1)):
        for k in sorted(k for events in memory.values() for k in events[slot]):
            out.append(f"func.func private {symbol_ref(memory_function_name(graph, kind, k))}() attributes "
                       f"{{tidal.graph = {symbol_ref(graph.name)}, tidal.memory = {_string(kind)}, "
                       f"tidal.node = {k} : i64}}")
    em = _Emitter(graph.bounds)
    for j, stmt in enumerate(tree):
        allocs, frees = memory.get(j, ((), ()))
        for k in allocs:
            em.line(f"func.call {symbol_ref(memory_function_name(graph, 'alloc', k))}() : () -> ()")
        _emit_body(em, graph, [stmt])
        for k in frees:
            em.line(f"func.call {symbol_ref(memory_function_name(graph, 'free', k))}() : () -> ()")
    em.depth = 1
    em.line("return")
    args = ", ".join(f"%arg{i}: index" for i in range(len(graph.bounds)))
    bounds = ", ".join(_string(b) for b in graph.bounds)
    out.append(f"func.func {symbol_ref(run_function_name(graph))}({args}) attributes "
               f"{{tidal.bounds = [{bounds}], tidal.graph = {symbol_ref(graph.name)}}} {{")
    out += em.lines
    out.append("}")
    return "\n".join(out) + "\n"
