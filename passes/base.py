"""The base of Tidal's Python passes (modelled on xDSL's `ModulePass`).

A pass is a small dataclass: its fields are its options, `name` is the name
used in pipelines (`sdg-dce`), `summary` is the one-line help, the docstring
shows IR before/after, and `run(op)` rewrites the root `builtin.module`
operation in place through the MLIR Python API:

    @dataclass
    class MyPass(ModulePass):
        '''Before: ... After: ...'''
        name: ClassVar[str] = "my-pass"
        summary: ClassVar[str] = "does something"
        max_iters: int = option(4, "how many times to try")

        def run(self, op: ir.Operation) -> None:
            ...

A pass reports a user-facing failure by raising `PassFailure(message, op)` or
by emitting an error diagnostic on an op (`op.location.emit_error(...)`);
either fails the pipeline with that diagnostic. Code a pass calls (the
scheduler, a graph reader) raises `OpError` (or a subclass) for input it
cannot handle: the runner reports it the same way, at the op's location,
never as an internal error.

In a pipeline string options are spelt with dashes (`{max-iters=3}`, the
field `max_iters`); underscores are accepted too.
"""
from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from typing import Any, ClassVar

from mlir import ir

__all__ = ["ModulePass", "OpError", "PassFailure", "OptionSpec", "option", "pass_options", "pipeline_element",
           "convert_option", "format_option_value", "graph_steps", "sdg_graphs"]


class OpError(Exception):
    """A user-facing problem with the input IR, about one op: `message` and
    `op` (None: the root operation). Any layer below the passes may raise it
    (or a subclass); a Tidal pass that lets it escape fails with an error
    diagnostic at `op`'s location (`file:line:col: error: message`)."""

    def __init__(self, message: str, op: ir.Operation | ir.OpView | None = None):
        super().__init__(message)
        self.message = message
        self.op = op


class PassFailure(OpError):
    """Raised by a pass to fail the pipeline with an error diagnostic at `op`
    (the root operation when `op` is None)."""


def option(default: Any, help: str = "") -> Any:
    """A pass option: a dataclass field with a default and a help text."""
    if isinstance(default, (list, dict, set)):
        value = list(default) if isinstance(default, list) else default
        return dataclasses.field(default_factory=lambda: type(value)(value), metadata={"help": help})
    return dataclasses.field(default=default, metadata={"help": help})


class ModulePass:
    """Base class of Tidal passes. Subclasses are dataclasses (their fields
    are the options) with class attributes `name` and `summary`."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""

    def run(self, op: ir.Operation) -> None:  # pragma: no cover - abstract
        raise NotImplementedError(f"pass {type(self).__name__} has no run()")


@dataclass(frozen=True)
class OptionSpec:
    """One option of a pass: pipeline spelling, field, type, default, help."""

    name: str          # as written in pipelines: keep-udfs
    field: str         # the dataclass field: keep_udfs
    type: Any          # the resolved annotation: bool, int, list[str], ...
    default: Any
    help: str

    @property
    def type_name(self) -> str:
        return _type_name(self.type)


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is list:
        (arg,) = typing.get_args(tp) or (str,)
        return f"list[{_type_name(arg)}]"
    if origin is typing.Literal:
        return "|".join(str(a) for a in typing.get_args(tp))
    return getattr(tp, "__name__", str(tp))


def pass_options(cls: type) -> list[OptionSpec]:
    """The options of a pass class, in declaration order."""
    if not dataclasses.is_dataclass(cls):
        return []
    hints = typing.get_type_hints(cls)
    specs = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = dataclasses.MISSING
        specs.append(OptionSpec(f.name.replace("_", "-"), f.name, hints.get(f.name, str), default,
                                f.metadata.get("help", "")))
    return specs


def pipeline_element(pass_: ModulePass) -> str:
    """The pipeline element that makes this pass with these options: its name,
    and the options that differ from their defaults in braces
    (`sdg-schedule{proximity=false}`)."""
    changed = [f"{spec.name}={format_option_value(getattr(pass_, spec.field))}"
               for spec in pass_options(type(pass_)) if getattr(pass_, spec.field) != spec.default]
    return pass_.name + ("{" + " ".join(changed) + "}" if changed else "")


def format_option_value(value: Any) -> str:
    """An option value as it would be written in a pipeline."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(format_option_value(v) for v in value)
    if value is dataclasses.MISSING:
        return "<required>"
    return str(value)


_TRUE = {"true", "1", "on", "yes"}
_FALSE = {"false", "0", "off", "no"}


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    if len(text) >= 2 and text[0] == "{" and text[-1] == "}":
        return text[1:-1]
    return text


def top_level_pieces(text: str, is_separator) -> list[tuple[int, str]]:
    """(offset, piece) for the pieces of `text` between separator characters
    that stand outside quotes and brackets; empty pieces are dropped. Raises
    ValueError(offset) for a quote or bracket left open at the end."""
    pieces, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text + "\0"):
        if i == len(text) or (not quote and depth == 0 and is_separator(ch)):
            if i == len(text) and (quote or depth):
                raise ValueError(start)
            if text[start:i].strip():
                pieces.append((start, text[start:i]))
            start = i + 1
        elif quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "{([":
            depth += 1
        elif ch in "})]":
            depth -= 1
    return pieces


def _split_list(text: str) -> list[str]:
    """Splits `a,b,{c,d},"e,f"` at top-level commas."""
    try:
        return [piece.strip() for _, piece in top_level_pieces(text, lambda ch: ch == ",")]
    except ValueError:  # an unterminated quote: keep the text whole, conversion reports it
        return [text.strip()] if text.strip() else []


def convert_option(tp: Any, text: str | None) -> Any:
    """Converts an option's text to `tp`; raises ValueError saying what was
    expected. `text` is None for a bare flag (`{keep-udfs}` means true)."""
    origin = typing.get_origin(tp)
    if text is None:
        if tp is bool:
            return True
        raise ValueError(f"expected a value of type {_type_name(tp)}")
    if origin is list:
        (arg,) = typing.get_args(tp) or (str,)
        return [convert_option(arg, item) for item in _split_list(_unquote(text))]
    if origin is typing.Literal:
        choices = typing.get_args(tp)
        for c in choices:
            if str(c) == _unquote(text):
                return c
        raise ValueError(f"expected one of {', '.join(map(str, choices))}")
    if tp is bool:
        low = text.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ValueError("expected a boolean (true/false/1/0)")
    if tp is int:
        for base in (0, 10):  # 0x1f, 0b1 and also 010
            try:
                return int(text.strip(), base)
            except ValueError:
                pass
        raise ValueError("expected an integer")
    if tp is float:
        try:
            return float(text.strip())
        except ValueError:
            raise ValueError("expected a number") from None
    if tp is str:
        return _unquote(text)
    raise ValueError(f"options of type {_type_name(tp)} cannot be set from a pipeline")


def sdg_graphs(op: ir.Operation, pass_name: str):
    """Each sdg.graph under `op`, or a PassFailure at one that is not one block."""
    from tidal.dialects import ops_named

    for graph in ops_named(op, "sdg.graph"):
        if len(graph.regions) != 1 or len(graph.regions[0].blocks) != 1:
            raise PassFailure(f"{pass_name} expects an sdg.graph with one block", graph)
        yield graph


def graph_steps(op: ir.Operation, dims: str, pass_name: str, innermost_first: bool = False):
    """(graph, step) for each sdg.graph under `op` and each step named in `dims`
    (comma-separated; default: every step of the graph), or a PassFailure at the
    graph for a step it does not have."""
    wanted = [s.strip() for s in dims.split(",") if s.strip()]
    for graph in sdg_graphs(op, pass_name):
        steps = [ir.StringAttr(a).value for a in ir.ArrayAttr(graph.attributes["steps"])]
        unknown = [s for s in wanted if s not in steps]
        if unknown:
            raise PassFailure(f"{pass_name}: no step {', '.join(unknown)} in @"
                              f"{ir.StringAttr(graph.attributes['sym_name']).value} "
                              f"(steps: {', '.join(steps) or 'none'})", graph)
        for step in (wanted or (list(reversed(steps)) if innermost_first else steps)):
            yield graph, step
