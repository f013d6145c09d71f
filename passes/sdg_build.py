"""Small helpers the sdg passes share to make ops: `create` (an op just before
another, reading (value, dependence) pairs), `i64_attr`, and `mentions` (does
a dependence component or size name a step)."""
from __future__ import annotations

from mlir import ir

from tidal.dialects.attrs import index_attr, tensor_type
from tidal.symbolic import SymbolicError, parse

__all__ = ["create", "i64_attr", "I64", "kind_name", "mentions"]

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
