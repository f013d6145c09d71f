"""The IR-reading and rewriting helpers the sdg passes share.

Each pass is its own module and imports no other pass's private names: what
several of them need lives here (or, for the graph view and its cycles, in
`sdg_graph_view`). Reading: the type and shape of a value read through a
dependence (`read_type`, `read_shape`, `parse_slice`), an op's dependence on
one operand (`dep_of`) and its attributes (`op_attrs`). Rewriting: replacing
a dependence (`set_dep`) and erasing the ops a rewrite left unread
(`erase_dead`).
"""
from __future__ import annotations

from mlir import ir

from tidal.dialects.attrs import index_attr, index_components, tensor_element_type, tensor_shape, tensor_type
from tidal.symbolic import SymbolicError, parse, slice_size, to_text

__all__ = ["read_type", "read_shape", "parse_slice", "dep_of", "set_dep", "op_attrs", "erase_dead"]


def parse_slice(component: str):
    """The Slice a unit-step slice component's text denotes, else None."""
    if component.count(":") != 1:
        return None
    try:
        return parse(f"[{component}]", validate=False).components[0]
    except SymbolicError:
        return None


def read_type(value: ir.Value, dep: tuple) -> ir.Type:
    """The type of `value` read at `dep`: one leading axis per slice (its length), then the value's shape."""
    lead = [to_text(slice_size(parse(f"[{c}]", validate=False).components[0]), mlir=True)
            for c in dep if ":" in c]       # strided slices too (a vectorized read of x[0:I:2, t])
    if not lead:
        return value.type
    return tensor_type(lead + tensor_shape(value.type), tensor_element_type(value.type), value.type.context)


def read_shape(value: ir.Value, dep) -> list[str] | None:
    """The shape of `value` read at `dep` (one leading axis per slice), or None for a strided slice."""
    if any(":" in c and parse_slice(c) is None for c in dep):
        return None
    return tensor_shape(read_type(value, tuple(dep)))


def dep_of(o: ir.Operation, i: int) -> list[str] | None:
    """The dependence through which `o` reads operand i (None: it has none)."""
    if "deps" in o.attributes:
        return index_components(ir.ArrayAttr(o.attributes["deps"])[i])
    if "dep" in o.attributes and i == 0:
        return index_components(o.attributes["dep"])
    return None


def set_dep(o: ir.Operation, i: int, dep: list[str]) -> None:
    """Makes `o` read operand i through the dependence `dep`."""
    if "deps" in o.attributes:
        deps = list(ir.ArrayAttr(o.attributes["deps"]))
        deps[i] = index_attr(dep, o.context)
        o.attributes["deps"] = ir.ArrayAttr.get(deps, o.context)
    else:
        o.attributes["dep"] = index_attr(dep, o.context)


def op_attrs(o: ir.Operation) -> dict:
    """The attributes of `o` by name, except its dependences and domain."""
    return {o.attributes[j].name: o.attributes[j].attr for j in range(len(o.attributes))
            if o.attributes[j].name not in ("deps", "domain")}


def erase_dead(graph: ir.Operation) -> None:
    """Erases the ops the rewrite left unread (pure tensor ops only, readers first)."""
    keep = {"sdg.output", "sdg.stop_when", "sdg.udf", "sdg.input", "sdg.param", "sdg.merge"}
    changed = True
    while changed:
        changed = False
        for o in reversed([x.operation for x in graph.regions[0].blocks[0].operations]):
            if o.name in keep or len(o.regions) or not o.name.startswith("sdg."):
                continue
            if all(not list(r.uses) for r in o.results):
                o.erase()
                changed = True
