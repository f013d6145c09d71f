"""Textual pass pipelines that mix upstream MLIR passes and Tidal passes.

    builtin.module(sdg-dce{keep-udfs=false},func.func(canonicalize),cse)
    sdg-dce,canonicalize                    (a bare list: builtin.module is implied)

`parse_pipeline` splits the text into ordered steps: a Tidal pass (resolved
through the registry, its options converted to the dataclass field types) or
an upstream element kept as text (`cse`, `func.func(canonicalize{...})`) for
MLIR to parse. Tidal passes are Python callables, which MLIR can only run at
the top level of a pass manager, so one nested under another anchor
(`func.func(sdg-dce)`) is an error. Errors are `PipelineError`s that point
into the pipeline text like MLIR's own parser does.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Union

from .base import ModulePass, convert_option, pass_options, top_level_pieces
from .registry import UnknownPassError, get_pass

__all__ = ["PipelineError", "PassRef", "Nest", "TidalStep", "UpstreamStep", "Pipeline",
           "parse_pipeline", "parse_elements", "ROOT_ANCHOR"]

ROOT_ANCHOR = "builtin.module"
_NAME_STOP = set("(){},") | set(" \t\r\n")


class PipelineError(ValueError):
    """A malformed pipeline, an unknown pass or a bad option. `col` is the
    1-based column in `text` that the message is about."""

    def __init__(self, message: str, text: str = "", col: int = 1):
        super().__init__(message)
        self.message, self.text, self.col = message, text, max(1, col)

    def format(self, source: str = "<pass-pipeline>") -> str:
        """mlir-opt style: `source:1:col: error: message`, the text, a caret."""
        out = f"{source}:1:{self.col}: error: {self.message}"
        if self.text and "\n" not in self.text:
            out += f"\n{self.text}\n{' ' * (self.col - 1)}^"
        return out

    def __str__(self) -> str:
        return self.format()


@dataclass
class PassRef:
    """`name` or `name{options}` in the text; `start`/`end` delimit it."""

    name: str
    options: str | None
    start: int
    end: int
    options_start: int = 0


@dataclass
class Nest:
    """`anchor(elements)`: passes nested on the ops named `anchor`."""

    anchor: str
    elements: list[Union["PassRef", "Nest"]]
    start: int
    end: int


@dataclass
class TidalStep:
    """A Tidal pass with its options, run on the root module."""

    pass_: ModulePass
    ref: PassRef | None = None

    @property
    def name(self) -> str:
        return self.pass_.name


@dataclass
class UpstreamStep:
    """One top-level upstream element, as text for `PassManager.add`."""

    text: str
    refs: list[PassRef]      # the pass references in it, to check names
    start: int = 0           # offset of `text` in the pipeline text


@dataclass
class Pipeline:
    text: str
    steps: list[Union[TidalStep, UpstreamStep]] = field(default_factory=list)
    anchor: str = ROOT_ANCHOR

    def __str__(self) -> str:
        return self.text


class _Parser:
    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def error(self, message: str, pos: int | None = None) -> PipelineError:
        return PipelineError(message, self.text, (self.pos if pos is None else pos) + 1)

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def elements(self, closing: str) -> list[Union[PassRef, Nest]]:
        out: list[Union[PassRef, Nest]] = []
        self.skip_ws()
        if self.peek() == closing:  # empty list: `builtin.module()` or ""
            return out
        while True:
            out.append(self.element())
            self.skip_ws()
            ch = self.peek()
            if ch == ",":
                self.pos += 1
                continue
            if ch == closing:
                return out
            if ch == "":
                raise self.error("encountered unbalanced parentheses while parsing pipeline")
            raise self.error(f"expected ',' or '{closing or 'end of pipeline'}' after "
                             f"'{out[-1].anchor if isinstance(out[-1], Nest) else out[-1].name}', "
                             f"found '{ch}'")

    def element(self) -> Union[PassRef, Nest]:
        self.skip_ws()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in _NAME_STOP:
            self.pos += 1
        name = self.text[start:self.pos]
        if not name:
            raise self.error("expected a pass name or an op anchor"
                             + (f", found '{self.peek()}'" if self.peek() else ""))
        self.skip_ws()
        if self.peek() == "(":
            self.pos += 1
            inner = self.elements(")")
            if self.peek() != ")":
                raise self.error("encountered unbalanced parentheses while parsing pipeline", start)
            self.pos += 1
            return Nest(name, inner, start, self.pos)
        if self.peek() == "{":
            open_pos = self.pos
            self.pos = _match_brace(self.text, open_pos, self.error)
            return PassRef(name, self.text[open_pos + 1:self.pos - 1], start, self.pos, open_pos + 1)
        return PassRef(name, None, start, self.pos)


def _match_brace(text: str, open_pos: int, error) -> int:
    """Offset just past the `}` matching the `{` at `open_pos` (quotes and
    nested braces allowed inside)."""
    depth, quote, i = 0, "", open_pos
    while i < len(text):
        ch = text[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise error("encountered unbalanced braces while parsing pipeline options", open_pos)


def parse_elements(text: str, anchor: str = ROOT_ANCHOR) -> list[Union[PassRef, Nest]]:
    """The syntax tree of a pipeline, without the root anchor `anchor(...)`."""
    p = _Parser(text)
    elems = p.elements("")
    if p.pos < len(text):
        raise p.error(f"unexpected '{text[p.pos]}' in pipeline")
    if len(elems) == 1 and isinstance(elems[0], Nest) and elems[0].anchor == anchor:
        return elems[0].elements
    return elems


def _option_items(text: str, base: int, error):
    """(key, value-or-None, offset) for each `key=value` / `key` in an
    option string; whitespace separates items outside quotes and braces."""
    try:
        pieces = top_level_pieces(text, str.isspace)
    except ValueError as e:
        raise error("unterminated quote or brace in pass options", base + e.args[0]) from None
    for offset, item in pieces:
        key, eq, value = item.partition("=")
        yield key.strip(), (value if eq else None), base + offset


def _bind_tidal(ref: PassRef, text: str) -> TidalStep:
    cls = get_pass(ref.name)
    specs = {s.name: s for s in pass_options(cls)}
    by_field = {s.field: s for s in specs.values()}
    valid = ", ".join(f"{s.name}=<{s.type_name}>" for s in specs.values()) or "none"

    def error(msg, pos):
        return PipelineError(msg, text, pos + 1)

    kwargs = {}
    for key, value, pos in _option_items(ref.options or "", ref.options_start, error):
        spec = specs.get(key) or by_field.get(key)
        if spec is None:
            raise error(f"no such option '{key}' for pass '{ref.name}'; valid options: {valid}", pos)
        if spec.field in kwargs:
            raise error(f"option '{spec.name}' of pass '{ref.name}' is given twice", pos)
        try:
            kwargs[spec.field] = convert_option(spec.type, value)
        except ValueError as e:
            shown = "" if value is None else f" '{value}'"
            raise error(f"invalid value{shown} for option '{spec.name}' of pass '{ref.name}': {e}",
                        pos) from None
    missing = [s.name for s in specs.values()
               if s.default is dataclasses.MISSING and s.field not in kwargs]
    if missing:
        raise error(f"pass '{ref.name}' needs option(s) {', '.join(missing)}", ref.start)
    try:
        return TidalStep(cls(**kwargs), ref)
    except (TypeError, ValueError) as e:
        raise error(f"invalid options for pass '{ref.name}': {e}", ref.start) from None


def _is_tidal(name: str) -> bool:
    try:
        get_pass(name)
        return True
    except UnknownPassError:
        return False


def _pass_refs(elem: Union[PassRef, Nest]) -> list[PassRef]:
    if isinstance(elem, PassRef):
        return [elem]
    return [r for e in elem.elements for r in _pass_refs(e)]


def parse_pipeline(text: str, anchor: str = ROOT_ANCHOR) -> Pipeline:
    """Parses a pipeline (`builtin.module(...)` or a bare list) into steps.
    Checks the syntax, Tidal pass names, their options and their nesting;
    upstream names are checked by MLIR when the pass manager is built.
    `anchor` is the root op's name (a bare list runs on it)."""
    if not isinstance(text, str):
        raise TypeError(f"a pipeline is a string, got {type(text).__name__}")
    pipeline = Pipeline(text, anchor=anchor)
    for elem in parse_elements(text, anchor):
        if isinstance(elem, PassRef) and _is_tidal(elem.name):
            pipeline.steps.append(_bind_tidal(elem, text))
            continue
        if isinstance(elem, Nest):
            for ref in _pass_refs(elem):
                if _is_tidal(ref.name):
                    raise PipelineError(
                        f"Tidal pass '{ref.name}' runs on the top-level '{anchor}' only and "
                        f"cannot be nested under '{elem.anchor}' (Python passes cannot be added to "
                        f"a nested pass manager)", text, ref.start + 1)
        pipeline.steps.append(UpstreamStep(text[elem.start:elem.end], _pass_refs(elem), elem.start))
    return pipeline
