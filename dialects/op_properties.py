"""What each `sdg` op is, in one table that the passes and the runtime read.

    from tidal.dialects.op_properties import ops_with, properties
    ops_with("elementwise")            # frozenset({'sdg.unary', 'sdg.binary', 'sdg.where', 'sdg.cast'})
    properties("sdg.reduce").kernel    # 'reduction'

A pass's set of ops is a query of this table (`ops_with("pure")`), or a query
less the ops the pass has no rule for, said where it is defined; it is never a
list of its own that could drift from another pass's. A new op gets its row
here (`test/py/test_op_properties.py` checks every op of the dialect has one).

The properties (MLIR's traits are the model; ODS declares the ops, this table
what the compiler knows about them):

* elementwise: each result element is a function of the operands' elements at
  the same index (broadcast), so any axis can be split or batched;
* metadata: moves or re-labels elements without arithmetic (a view in NumPy);
* axis: has an i64 `dim` attribute naming an axis of its per-point value (a
  batch axis put in front shifts it);
* reduction: combines the elements along axes into fewer (sums, contractions);
* source: no tensor operands (its value comes from attributes and the point);
* pure: computes its value from its operands and its point alone (no state, no
  draws, nothing seen outside), so equal ops compute equal values;
* side_effects: observable beyond its value (outputs, user functions);
* fusable: a device kernel computes it at a point, inside a fused island;
* paddable: it runs on a value padded along a point-varying axis (padded
  lanes masked where a reduction reads them);
* kernel: its cost class: elementwise, reduction, contraction, scan, sort,
  movement, gather, source, host (runs in Python), or None (structure, no kernel).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["OpProperties", "TABLE", "properties", "ops_with"]


@dataclass(frozen=True)
class OpProperties:
    kernel: str | None
    elementwise: bool = False
    metadata: bool = False
    axis: bool = False
    reduction: bool = False
    source: bool = False
    pure: bool = True
    side_effects: bool = False
    fusable: bool = False
    paddable: bool = False


_ELEMENTWISE = OpProperties("elementwise", elementwise=True, fusable=True, paddable=True)
_STRUCTURE = OpProperties(None, pure=False)

TABLE: dict[str, OpProperties] = {
    # computation
    "sdg.unary": _ELEMENTWISE,
    "sdg.binary": _ELEMENTWISE,
    "sdg.where": _ELEMENTWISE,
    "sdg.cast": _ELEMENTWISE,
    "sdg.reduce": OpProperties("reduction", reduction=True, fusable=True, paddable=True),
    "sdg.matmul": OpProperties("contraction", reduction=True, fusable=True, paddable=True),
    "sdg.scan": OpProperties("scan", axis=True, fusable=True),
    "sdg.linear_scan": OpProperties("scan"),
    "sdg.argsort": OpProperties("sort", axis=True, fusable=True),
    # moving elements
    "sdg.reshape": OpProperties("movement", metadata=True, fusable=True),
    "sdg.permute": OpProperties("movement", metadata=True, fusable=True, paddable=True),
    "sdg.expand": OpProperties("movement", metadata=True, fusable=True),
    "sdg.squeeze": OpProperties("movement", metadata=True, axis=True, fusable=True, paddable=True),
    "sdg.unsqueeze": OpProperties("movement", metadata=True, axis=True, fusable=True, paddable=True),
    "sdg.flip": OpProperties("movement", metadata=True, axis=True, fusable=True),
    "sdg.slice": OpProperties("movement", axis=True, fusable=True),
    "sdg.take": OpProperties("movement", axis=True, fusable=True),
    "sdg.concat": OpProperties("movement", axis=True, fusable=True),
    "sdg.pad": OpProperties("movement", axis=True, fusable=True),
    "sdg.index_select": OpProperties("gather", axis=True),
    "sdg.gather": OpProperties("gather", axis=True),
    "sdg.scatter_add": OpProperties("gather", axis=True),
    # sources
    "sdg.constant": OpProperties("source", source=True),
    "sdg.full": OpProperties("source", source=True, fusable=True),
    "sdg.iota": OpProperties("source", source=True, axis=True, fusable=True),
    "sdg.symbol_value": OpProperties("source", source=True, fusable=True),
    "sdg.random": OpProperties("source", source=True, pure=False),
    # the graph's boundary and structure
    "sdg.input": OpProperties(None, source=True, pure=False),
    "sdg.param": OpProperties(None, source=True, pure=False),
    "sdg.output": OpProperties(None, pure=False, side_effects=True),
    "sdg.udf": OpProperties("host", pure=False, side_effects=True),
    "sdg.stop_when": OpProperties(None, pure=False, side_effects=True),
    "sdg.merge": _STRUCTURE,
    "sdg.island": _STRUCTURE,
    "sdg.yield": _STRUCTURE,
    "sdg.graph": _STRUCTURE,
}

_FLAGS = {f.name for f in fields(OpProperties) if f.name != "kernel"}


def properties(name: str) -> OpProperties:
    """The row of op `name` ('sdg.reduce'); KeyError for an op the table lacks."""
    return TABLE[name]


def ops_with(*flags: str) -> frozenset:
    """The ops that have every one of `flags` (e.g. ops_with("pure", "axis"))."""
    unknown = set(flags) - _FLAGS
    if unknown:
        raise ValueError(f"unknown op properties {sorted(unknown)}: use {sorted(_FLAGS)}")
    return frozenset(name for name, p in TABLE.items() if all(getattr(p, f) for f in flags))
