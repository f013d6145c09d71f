"""The executed schedule, point by point: the generated host program run with
its launchers replaced by a recorder (`exe.draw("schedule", ...)`).

The host program (`_program(T, ...)`, the `host` compile stage) is what a run
executes; here its source is parsed, every launcher call `_L<k>(point...)` is
rewritten to `_record(k, loop, point...)` where `loop` numbers the innermost
`for` that contains the call (0: none), and the rewritten program runs for
the given bounds. Nothing is computed and nothing is derived a second time:
the order is the order of the calls a run would make.
"""
from __future__ import annotations

import ast
from typing import NamedTuple

from .hostgen import HELPERS

__all__ = ["Launch", "trace_schedule"]


class Launch(NamedTuple):
    node: int          # the sdg node (statement S<node>)
    point: tuple       # its coordinates, in the node's domain order
    loop: int          # the innermost enclosing host loop (0: straight-line code)


class _Rewrite(ast.NodeTransformer):
    def __init__(self):
        self.loops = [0]
        self.count = 0

    def visit_For(self, node: ast.For):
        self.count += 1
        self.loops.append(self.count)
        self.generic_visit(node)
        self.loops.pop()
        return node

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id.startswith("_L") and f.id[2:].isdigit():
            args = [ast.Constant(int(f.id[2:])), ast.Constant(self.loops[-1]), *node.args]
            return ast.copy_location(ast.Call(ast.Name("_record", ast.Load()), args, []), node)
        return node


def trace_schedule(program_source: str, bound_names: list, bounds: dict, limit: int = 100_000,
                   memory: list | None = None) -> list[Launch]:
    """The launches of one run of `program_source` (a host program) with `bounds`
    (bound name -> int), in execution order. More than `limit` launches is
    an error (this is for small bounds). `memory`: a list that gets the
    program's store lifetimes, `("alloc" | "free", node, launches before it)`."""
    tree = _Rewrite().visit(ast.parse(program_source))
    ast.fix_missing_locations(tree)
    out: list[Launch] = []

    def record(node, loop, *point):
        if len(out) >= limit:
            raise ValueError(f"the schedule makes more than {limit} launches at these bounds; "
                             "draw it with smaller bounds")
        out.append(Launch(node, tuple(int(c) for c in point), loop))

    ns = dict(HELPERS)
    ns["_record"] = record
    for kind in ("alloc", "free"):
        ns[f"_{kind}"] = (lambda kind: lambda k, quiet=False:      # quiet: memory.py's sampling hint
                          memory is not None and memory.append((kind, k, len(out))))(kind)
    exec(compile(tree, "<tidal schedule trace>", "exec"), ns)  # noqa: S102
    ns.update({b: int(bounds[b]) for b in bound_names})   # a stopped bound is read as a global
    ns["_program"](*(int(bounds[b]) for b in bound_names))
    return out
