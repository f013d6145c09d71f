"""`sdg-verify-dependences`: check every dependence expression of an SDG.

The C++ verifiers only see one op at a time; this pass checks what needs the
producer too, with exact symbolic reasoning (`tidal.symbolic`):

* a dependence has one component per dimension of the producer's domain;
* it uses only the consumer's steps and the graph's bounds (and so does every
  merge condition and the condition of a conditional `sdg.output`, which
  must be boolean);
* every slice component has a size that cannot be negative at any point of
  the consumer's domain (`t + 1:t` or `t:3` are rejected).

Errors are reported on the consumer op, at its location, naming the operand.

Before (the dependence has two components, the producer's domain one dim):

    %x = sdg.input "x" domain [t] : !tidal.tensor<[4], f32>
    %y = sdg.unary exp %x[t, 0] domain [t] : (...) -> ...

After: the pipeline fails with

    error: 'sdg.unary' operand 0 (%x[t, 0]): the dependence has 2 components but
    the producer's domain [t] has 1 dimension

A valid graph is left unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Iterator

from mlir import ir

from tidal.dialects import ops_named
from tidal.dialects.attrs import expr_text, index_components
from tidal.symbolic import Dim, SymbolicError, check_slice, free_symbols, parse
from tidal.symbolic.indexing import Slice

from .base import ModulePass, PassFailure

__all__ = ["SdgVerifyDependences", "dependence_errors"]


def _graph_dims(graph: ir.Operation) -> list[Dim]:
    steps = [ir.StringAttr(a).value for a in ir.ArrayAttr(graph.attributes["steps"])]
    bounds = [ir.StringAttr(a).value for a in ir.ArrayAttr(graph.attributes["bounds"])]
    return [Dim(s, bound=b) for s, b in zip(steps, bounds)]


def _domain(op: ir.Operation) -> list[str] | None:
    if "domain" not in op.attributes:
        return None
    return index_components(op.attributes["domain"])


def _operand_deps(op: ir.Operation) -> Iterator[tuple[int, ir.Value, list[str]]]:
    """(operand number, value, dependence components) of an sdg op."""
    if "deps" in op.attributes:
        deps = ir.ArrayAttr(op.attributes["deps"])
        for i, (value, dep) in enumerate(zip(op.operands, deps)):
            yield i, value, index_components(dep)
    elif "dep" in op.attributes:  # sdg.output
        yield 0, op.operands[0], index_components(op.attributes["dep"])


def _producer_domain(value: ir.Value) -> list[str] | None:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    return _domain(owner.operation if hasattr(owner, "operation") else owner)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _check_expression(text: str, dims: list[Dim], allowed: set[str], what: str,
                      condition: bool = False) -> str | None:
    """An error message for `text` (a condition if `condition`), or None if
    it is valid here."""
    try:
        expr = parse(text, dims=dims, validate=False)
    except SymbolicError as e:
        return f"{what} '{text}' is not a valid symbolic expression: {e}"
    if condition and getattr(expr, "kind", None) != "bool":
        return f"{what} '{text}' is not a condition (a boolean expression)"
    outside = sorted(s.name for s in free_symbols(expr) if s.name not in allowed)
    if outside:
        return (f"{what} '{text}' uses {', '.join(outside)}, which the consumer's domain does not "
                f"provide (it may use its steps and the bounds: {', '.join(sorted(allowed))})")
    if isinstance(expr, Slice):
        try:
            check_slice(expr)
        except SymbolicError as e:
            return f"{what} '{text}' is not a valid slice: {str(e).split(';')[0]}"
    return None


def dependence_errors(graph: ir.Operation) -> list[tuple[ir.Operation, str]]:
    """All dependence problems in one `sdg.graph`, as (op, message) pairs."""
    dims = _graph_dims(graph)
    bounds = {d.bound.name for d in dims}
    errors = []
    for op in graph.regions[0].blocks[0].operations:
        op = op.operation
        domain = _domain(op)
        if domain is None:
            continue
        allowed = bounds | set(domain)
        for number, value, components in _operand_deps(op):
            label = f"operand {number} ({value.get_name()}[{', '.join(components)}])"
            source = _producer_domain(value)
            if source is not None and len(source) != len(components):
                errors.append((op, f"{label}: the dependence has {_plural(len(components), 'component')} "
                                   f"but the producer's domain [{', '.join(source)}] has "
                                   f"{_plural(len(source), 'dimension')}"))
                continue
            for component in components:
                message = _check_expression(component, dims, allowed, f"{label}: component")
                if message:
                    errors.append((op, message))
        if "conds" in op.attributes:
            for k, cond in enumerate(ir.ArrayAttr(op.attributes["conds"])):
                message = _check_expression(expr_text(cond), dims, allowed, f"branch {k} condition",
                                            condition=True)
                if message:
                    errors.append((op, message))
        if op.name == "sdg.output" and "cond" in op.attributes:  # a discardable attribute: unverified
            try:
                text = expr_text(op.attributes["cond"])
            except TypeError:
                errors.append((op, f"attribute 'cond' must be a #tidal.expr condition, got "
                                   f"{op.attributes['cond']}"))
            else:
                message = _check_expression(text, dims, allowed, "condition", condition=True)
                if message:
                    errors.append((op, message))
    return errors


@dataclass
class SdgVerifyDependences(ModulePass):
    __doc__ = __doc__

    name: ClassVar[str] = "sdg-verify-dependences"
    summary: ClassVar[str] = ("check that dependence expressions match the producer's domain, use only "
                              "the consumer's steps and bounds, and never slice a negative size")

    def run(self, op: ir.Operation) -> None:
        found = [e for graph in ops_named(op, "sdg.graph") for e in dependence_errors(graph)]
        for bad_op, message in found[1:]:
            bad_op.location.emit_error(f"'{bad_op.name}' {message}")
        if found:
            bad_op, message = found[0]
            raise PassFailure(f"'{bad_op.name}' {message}", bad_op)
