"""Small helpers the sdg passes share to make ops: `create` (an op just before
another, reading (value, dependence) pairs), `i64_attr`, `mentions` (does
a dependence component or size name a step) and `value_bytes` (a value's
size with every bound at an assumed value, for the passes' size thresholds)."""
from __future__ import annotations

from mlir import ir

import numpy as np

from tidal.dialects.attrs import index_attr, tensor_element_type, tensor_shape, tensor_type
from tidal.symbolic import SymbolicError, evaluate, free_symbols, parse

__all__ = ["create", "i64_attr", "I64", "kind_name", "mentions", "value_bytes"]

I64 = lambda: ir.IntegerType.get_signless(64)  # noqa: E731


def i64_attr(value: int, ctx=None) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64, ctx), value)


def create(before: ir.Operation, name: str, shape: list[str], elem: str, operands, domain, attrs=None) -> ir.Value:
    """A new op `name` just before `before`, reading (value, components) pairs
    (no `deps` for an op without operands: a source)."""
    ctx = before.context
    with ctx, before.location, ir.InsertionPoint(before):
        attrs = dict(attrs or {})
        attrs["domain"] = index_attr(list(domain), ctx)
        if operands:
            attrs["deps"] = ir.ArrayAttr.get([index_attr(list(d), ctx) for _, d in operands])
        return ir.Operation.create(name, results=[tensor_type(shape, elem, ctx)],
                                   operands=[v for v, _ in operands], attributes=attrs).results[0]


def mentions(text: str, step: str) -> bool:
    """Whether a component or size (`t + 1`, a slice `t:min(t + 8, T)`) names
    `step`; True when it does not parse (the caller then leaves it alone)."""
    try:
        return any(step in {s.name for s in parse(part).free_symbols}
                   for part in text.split(":") if part.strip())
    except SymbolicError:
        return True


def kind_name(o: ir.Operation) -> str:
    """The kind of a binary op, a reduction or a scan (`mul`, `sum`, `cumsum`), else ''."""
    from tidal.dialects import enums
    table = {"sdg.binary": enums.BinaryKind, "sdg.reduce": enums.ReduceKind, "sdg.scan": enums.ScanKind}.get(o.name)
    if table is None or "kind" not in o.attributes:
        return ""
    return str(table(ir.IntegerAttr(o.attributes["kind"]).value))


def value_bytes(t: ir.Type, assume: int) -> int:
    """The bytes of a value of type t, every symbol of its shape at `assume` (0 when
    a size does not evaluate)."""
    try:
        dims = [parse(x) for x in tensor_shape(t)]
        env = {s.name: assume for d in dims for s in free_symbols(d)}
        n = int(np.prod([max(int(evaluate(d, env)), 1) for d in dims], dtype=object)) if dims else 1
    except (SymbolicError, ValueError, TypeError, ZeroDivisionError):
        return 0
    digits = "".join(c for c in tensor_element_type(t) if c.isdigit())
    return n * max(1, int(digits or 8) // 8)
