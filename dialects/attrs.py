"""Python helpers for the `tidal` dialect's types and attributes.

MLIR's Python bindings have no generated classes for out-of-tree attributes,
so these helpers build them from their textual form and read them back:

    tensor_type(["T - t", 4], "f32")      -> !tidal.tensor<[T - t, 4], f32>
    index_attr(["t - 1", "0:t + 1"])      -> #tidal.index<[t - 1, 0:t + 1]>
    expr_attr("t gt 0")                   -> #tidal.expr<t gt 0>
    index_components(attr) == ["t - 1", "0:t + 1"]

Texts are in the MLIR-safe keyword form of `tidal.symbolic`
(`to_text(e, mlir=True)`); the C++ parser validates them and prints them in
canonical spacing.
"""
from __future__ import annotations

from typing import Iterable, Sequence, Union

from mlir import ir

Component = Union[str, int]

_TENSOR_PREFIX = "!tidal.tensor<"
_INDEX_PREFIX = "#tidal.index<"
_EXPR_PREFIX = "#tidal.expr<"


def _join(components: Iterable[Component]) -> str:
    return "[" + ", ".join(str(c) for c in components) + "]"


def split_top_level(text: str) -> list[str]:
    """Splits `a, min(b, c), d` at the commas outside parentheses/brackets."""
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "([<":
            depth += 1
        elif ch in ")]>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    tail = "".join(current).strip()
    if tail:
        parts.append(tail)
    return parts


def _parse(kind: str, text: str, context: ir.Context | None):
    try:
        if kind == "type":
            return ir.Type.parse(text, context)
        return ir.Attribute.parse(text, context)
    except ir.MLIRError as e:  # a malformed expression: say which one
        raise ValueError(f"invalid symbolic {kind} {text!r}: {e}") from None


def tensor_type(shape: Sequence[Component], element_type: str | ir.Type,
                context: ir.Context | None = None) -> ir.Type:
    """`!tidal.tensor<[...], elt>` for a shape of symbolic texts or ints."""
    return _parse("type", f"{_TENSOR_PREFIX}{_join(shape)}, {element_type}>", context)


def index_attr(components: Sequence[Component], context: ir.Context | None = None) -> ir.Attribute:
    """`#tidal.index<[...]>` (a dependence expression, a domain, ...)."""
    return _parse("attribute", f"{_INDEX_PREFIX}{_join(components)}>", context)


def expr_attr(text: Component, context: ir.Context | None = None) -> ir.Attribute:
    """`#tidal.expr<...>` for one symbolic expression."""
    return _parse("attribute", f"{_EXPR_PREFIX}{text}>", context)


def _strip(text: str, prefix: str, what: str) -> str:
    if not (text.startswith(prefix) and text.endswith(">")):
        raise TypeError(f"expected a {what}, got {text}")
    return text[len(prefix):-1]


def index_components(attr: ir.Attribute) -> list[str]:
    """The component texts of a `#tidal.index<[...]>`."""
    body = _strip(str(attr), _INDEX_PREFIX, "#tidal.index attribute")
    return split_top_level(body[1:-1])


def expr_text(attr: ir.Attribute) -> str:
    """The expression text of a `#tidal.expr<...>`."""
    return _strip(str(attr), _EXPR_PREFIX, "#tidal.expr attribute")


def derived_bounds(graph_op) -> dict[str, str]:
    """{bound: expression text} of a graph's bounds derived from the others
    (`n < N = (T + 63) floordiv 64`, made by sdg-tile); {} when runs give all."""
    op = getattr(graph_op, "operation", graph_op)
    if "derived" not in op.attributes:
        return {}
    texts = [ir.StringAttr(a).value for a in ir.ArrayAttr(op.attributes["derived"])]
    bounds = [ir.StringAttr(a).value for a in ir.ArrayAttr(op.attributes["bounds"])]
    return {b: t for b, t in zip(bounds, texts) if t}


def with_derived(bounds: dict, derived: dict[str, str]) -> dict:
    """`bounds` (the given ones, {name: int}) plus the derived ones computed."""
    if not derived:
        return dict(bounds)
    from tidal.symbolic import evaluate, parse
    out = dict(bounds)
    for name, text in derived.items():
        out[name] = int(evaluate(parse(text), bounds))
    return out


def is_tensor_type(t: ir.Type) -> bool:
    return str(t).startswith(_TENSOR_PREFIX)


def tensor_shape(t: ir.Type) -> list[str]:
    """The dimension texts of a `!tidal.tensor<[...], elt>`."""
    body = _strip(str(t), _TENSOR_PREFIX, "!tidal.tensor type")
    close = body.index("]")
    return split_top_level(body[1:close])


def tensor_element_type(t: ir.Type) -> str:
    """The element type of a `!tidal.tensor`, as text (e.g. 'f32')."""
    body = _strip(str(t), _TENSOR_PREFIX, "!tidal.tensor type")
    return body[body.index("]") + 1:].lstrip(", ").strip()
