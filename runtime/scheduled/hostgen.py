"""The host program: the lowered `func.func` (scf/arith/func.call) as Python.

`host_source(run_func, bounds, skip)` translates the function produced by
`sdg-lower-to-scf` op by op: `scf.for` -> `for c in range(lb, ub, step):`,
`scf.if` -> `if`/`else`, `arith` -> integer expressions bound to locals, and
`func.call @<graph>_op<k>(...)` -> `_L<k>(...)` (a launcher; calls to nodes in
`skip`, e.g. inputs already in their stores, are dropped). The result is
compiled once with `compile()`; running it is plain Python loops calling
launchers, with no AST interpretation at run time.

A steady-state loop whose body only calls jitted launchers could later be
emitted as one `lax.fori_loop` over a carried tuple of store buffers (the
launchers already take and return buffers); this module keeps that boundary
explicit: one Python `for` per `scf.for`.
"""
from __future__ import annotations

from mlir import ir

__all__ = ["host_source", "HostGenError"]

_BIN = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*", "arith.floordivsi": "//",
        "arith.andi": "and", "arith.ori": "or"}
_CMP = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">="}   # arith.cmpi predicates eq..sge
_CALLS = {"arith.remsi": "_remsi", "arith.divsi": "_divsi", "arith.minsi": "_min",
          "arith.maxsi": "_max", "arith.ceildivsi": "_ceildivsi"}


class HostGenError(Exception):
    pass


def _remsi(a: int, b: int) -> int:
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


def _divsi(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _ceildivsi(a: int, b: int) -> int:
    return -((-a) // b)


HELPERS = {"_remsi": _remsi, "_divsi": _divsi, "_ceildivsi": _ceildivsi, "_min": min, "_max": max}


class _Gen:
    def __init__(self, skip: set[int]):
        self.names: dict = {}
        self.lines: list[str] = []
        self.skip = skip
        self.count = 0

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def v(self, value: ir.Value) -> str:
        try:
            return self.names[value]
        except KeyError:
            raise HostGenError(f"value {value.get_name()} is used before it is defined") from None

    def block(self, block: ir.Block, depth: int) -> None:
        start = len(self.lines)
        for op in block.operations:
            self.op(op.operation, depth)
        if len(self.lines) == start:
            self.lines.append("    " * depth + "pass")

    def op(self, op: ir.Operation, depth: int) -> None:
        pad = "    " * depth
        name = op.name
        if name in ("func.return", "scf.yield"):
            return
        if name == "arith.constant":
            attr = op.attributes["value"]
            text = "True" if str(attr) == "true" else "False" if str(attr) == "false" else \
                str(ir.IntegerAttr(attr).value)
            self.names[op.results[0]] = text
            return
        if name.startswith("arith."):
            args = [self.v(x) for x in op.operands]
            if name in _BIN:
                expr = f"({args[0]} {_BIN[name]} {args[1]})"
            elif name == "arith.cmpi":
                pred = ir.IntegerAttr(op.attributes["predicate"]).value
                if pred not in _CMP:
                    raise HostGenError(f"unsupported arith.cmpi predicate {pred} (unsigned?)")
                expr = f"({args[0]} {_CMP[pred]} {args[1]})"
            elif name == "arith.xori":
                expr = f"({args[0]} != {args[1]})"
            elif name == "arith.select":
                expr = f"({args[1]} if {args[0]} else {args[2]})"
            elif name in _CALLS:
                expr = f"{_CALLS[name]}({args[0]}, {args[1]})"
            else:
                raise HostGenError(f"unsupported op '{name}' in the lowered program")
            var = self.fresh("v")
            self.lines.append(f"{pad}{var} = {expr}")
            self.names[op.results[0]] = var
            return
        if name == "scf.for":
            lb, ub, step = (self.v(x) for x in op.operands[:3])
            body = op.regions[0].blocks[0]
            iv = self.fresh("c")
            self.names[body.arguments[0]] = iv
            rng = f"range({lb}, {ub})" if step == "1" else f"range({lb}, {ub}, {step})"
            self.lines.append(f"{pad}for {iv} in {rng}:")
            self.block(body, depth + 1)
            return
        if name == "scf.if":
            self.lines.append(f"{pad}if {self.v(op.operands[0])}:")
            self.block(op.regions[0].blocks[0], depth + 1)
            if len(op.regions) > 1 and len(op.regions[1].blocks):
                self.lines.append(f"{pad}else:")
                self.block(op.regions[1].blocks[0], depth + 1)
            return
        if name == "func.call":
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            index = self.callees[callee]
            if index not in self.skip:
                args = ", ".join(self.v(x) for x in op.operands)
                self.lines.append(f"{pad}_L{index}({args})")
            return
        raise HostGenError(f"unsupported op '{name}' in the lowered program")


def host_source(module_op: ir.Operation, run_name: str, skip: set[int]) -> tuple[str, list[str]]:
    """(source of `def _program(<bounds>):`, bound names) for function `run_name`."""
    body = module_op.regions[0].blocks[0]
    callees, run = {}, None
    for op in body.operations:
        op = op.operation
        if op.name != "func.func":
            continue
        sym = ir.StringAttr(op.attributes["sym_name"]).value
        if "tidal.op_index" in op.attributes:
            callees[sym] = ir.IntegerAttr(op.attributes["tidal.op_index"]).value
        if sym == run_name:
            run = op
    if run is None:
        raise HostGenError(f"no function @{run_name} in the lowered module")
    bounds = [ir.StringAttr(a).value for a in ir.ArrayAttr(run.attributes["tidal.bounds"])]
    gen = _Gen(skip)
    gen.callees = callees
    entry = run.regions[0].blocks[0]
    for arg, b in zip(entry.arguments, bounds):
        gen.names[arg] = b
    gen.block(entry, 1)
    return f"def _program({', '.join(bounds)}):\n" + "\n".join(gen.lines) + "\n", bounds
