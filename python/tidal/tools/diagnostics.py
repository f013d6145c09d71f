"""Diagnostics for tidal-opt: printed like mlir-opt, and `--verify-diagnostics`.

MLIR's Python bindings have no binding of `SourceMgrDiagnosticHandler` or of
`SourceMgrDiagnosticVerifierHandler`; they give a context-level handler
(`Context.attach_diagnostic_handler`) and the errors of a failed parse or
pass run (`MLIRError.error_diagnostics`). This module copies those into plain
`Diag` records, prints them as llvm::SourceMgr does (`file:line:col: error:
message`, the source line, a caret) and re-implements the verifier of
mlir/lib/IR/Diagnostics.cpp: `expected-(error|warning|note|remark)(-re)?`
with `@+N`, `@-N`, `@above`, `@below`, `@unknown` or no designator, matched by
substring (by regex for `-re`, `{{...}}` blocks inside), reporting
"unexpected error: ..." and "expected error "..." was not produced".
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from mlir import ir

__all__ = ["Diag", "from_mlir", "SourceSet", "format_diag", "DiagnosticVerifier",
           "OP_ON_DIAGNOSTIC_NOTE"]

# Notes MLIR attaches when printOpOnDiagnostic is on; mlir-opt turns that
# off under --verify-diagnostics, the bindings cannot, so they are dropped.
OP_ON_DIAGNOSTIC_NOTE = "see current operation: "

_SEVERITY = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.NOTE: "note",
    ir.DiagnosticSeverity.REMARK: "remark",
}


@dataclass
class Diag:
    """A diagnostic copied out of MLIR. `file` is None for a location with
    no file/line/column inside it."""

    severity: str
    message: str
    file: Optional[str] = None
    line: int = 0
    col: int = 0
    notes: list["Diag"] = field(default_factory=list)

    @property
    def where(self):
        return (self.file, self.line, self.col)


def _file_loc(loc) -> Optional[tuple[str, int, int]]:
    """The first file:line:col inside a location (as findInstanceOf does)."""
    try:
        if loc.is_a_file():
            return loc.filename, loc.start_line, loc.start_col
        if loc.is_a_name():
            return _file_loc(loc.child_loc)
        if loc.is_a_callsite():
            return _file_loc(loc.callee) or _file_loc(loc.caller)
        if loc.is_a_fused():
            for sub in loc.locations:
                found = _file_loc(sub)
                if found:
                    return found
    except Exception:  # a location kind the bindings cannot take apart
        return None
    return None


def from_mlir(diag) -> Diag:
    """Copies an `ir.Diagnostic` (valid only inside a handler) or an
    `ir.DiagnosticInfo` (from MLIRError) into a Diag."""
    where = _file_loc(diag.location)
    d = Diag(_SEVERITY.get(diag.severity, "error"), diag.message)
    if where:
        d.file, d.line, d.col = where
    d.notes = [from_mlir(n) for n in diag.notes]
    return d


class SourceSet:
    """Source texts by buffer name, to print source lines under messages."""

    def __init__(self):
        self.lines: dict[str, list[str]] = {}

    def add(self, name: str, text: str) -> None:
        self.lines[name] = text.split("\n")

    def source_line(self, file: Optional[str], line: int) -> Optional[str]:
        lines = self.lines.get(file) if file is not None else None
        if lines is None or not 1 <= line <= len(lines):
            return None
        return lines[line - 1].rstrip("\r")


def _render(sources: SourceSet, file, line, col, severity, message, show_source=True,
            range_len=1) -> str:
    if file is None:
        head = f"<unknown>:0: {severity}: {message}"
    else:
        head = f"{file}:{line}:{col}: {severity}: {message}"
    src = sources.source_line(file, line) if show_source and line and col else None
    if src is None:
        return head
    caret_col = len(src[:col - 1].expandtabs(8))
    return (f"{head}\n{src.expandtabs(8)}\n" + " " * caret_col + "^"
            + "~" * max(0, range_len - 1))


def format_diag(d: Diag, sources: SourceSet) -> str:
    """A diagnostic and its notes as mlir-opt prints them; a note shows its
    source line only when its location differs from the previous one."""
    out = [_render(sources, *d.where, d.severity, d.message)]
    prev = d.where
    for n in d.notes:
        out.append(_render(sources, *n.where, n.severity, n.message, show_source=n.where != prev))
        prev = n.where
    return "\n".join(out)


_EXPECTED = re.compile(r"expected-(error|note|remark|warning)(-re)? *"
                       r"(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}$")


@dataclass
class _Expected:
    kind: str
    line: int            # the line the diagnostic must be on
    at_line: int         # where the designator is written
    at_col: int
    substring: str
    regex: Optional[re.Pattern] = None
    matched: bool = False

    def match(self, message: str) -> bool:
        if self.regex is not None:
            return self.regex.search(message) is not None
        return self.substring in message


def _compile(substring: str) -> re.Pattern:
    """`-re` text: literal outside `{{ }}`, a regex inside each block."""
    out, rest = [], substring
    while rest:
        start = rest.find("{{")
        if start < 0:
            out.append(re.escape(rest))
            break
        out.append(re.escape(rest[:start]))
        rest = rest[start + 2:]
        end = rest.find("}}")
        if end < 0:
            raise ValueError("found start of regex with no end '}}'")
        try:
            re.compile(rest[:end])
        except re.error as e:
            raise ValueError(f"invalid regex: {e}") from None
        out.append(f"({rest[:end]})")
        rest = rest[end + 2:]
    return re.compile("".join(out))


class DiagnosticVerifier:
    """Checks the diagnostics of one buffer against its expected-* lines.
    `text` is the buffer with its original line numbering (a split chunk is
    padded with the lines before it). Messages go to `self.output`."""

    def __init__(self, name: str, text: str, sources: SourceSet, only_expected: bool = False):
        self.name, self.sources, self.only_expected = name, sources, only_expected
        self.output: list[str] = []
        self.ok = True
        self.expected: list[_Expected] = []
        self.unknown: list[_Expected] = []
        lines = text.split("\n")
        last_plain, pending_below = 0, []
        for index, raw in enumerate(lines):
            m = _EXPECTED.search(raw.rstrip(" \t\n\v\f\r"))
            if not m:
                for e in pending_below:
                    e.line = index + 1
                pending_below, last_plain = [], index
                continue
            kind, is_re, _, where, substring = m.groups()
            e = _Expected(kind, index + 1, index + 1, m.start() + 1, substring)
            if is_re:
                try:
                    e.regex = _compile(substring)
                except ValueError as err:
                    self._error_at(e, str(err), len(substring))
                    continue
            if where == "unknown":  # like MLIR, reported without a location
                e.at_line = 0
                self.unknown.append(e)
                continue
            if where in ("above", "below"):
                if where == "above":
                    e.line = last_plain + 1
                else:
                    e.line = len(lines)  # if it dangles
                    pending_below.append(e)
            elif where:
                e.line += int(where)
            self.expected.append(e)

    def _error_at(self, e: _Expected, message: str, range_len: int = 1) -> None:
        self.ok = False
        if e.at_line == 0:  # an @unknown expectation: no location, as in MLIR
            self.output.append(f"<unknown>:0: error: {message}")
        else:
            self.output.append(_render(self.sources, self.name, e.at_line, e.at_col, "error",
                                       message, range_len=range_len))

    def process(self, diag: Diag) -> None:
        """Matches a diagnostic and its notes against the expectations."""
        for d in [diag] + [n for n in diag.notes if not n.message.startswith(OP_ON_DIAGNOSTIC_NOTE)]:
            self._process_one(d)

    def _process_one(self, d: Diag) -> None:
        if d.file is None:
            candidates = self.unknown
        else:
            candidates = self.expected if d.file == self.name else []
        near = None
        for e in candidates:
            if d.file is not None and d.line != e.line:
                continue
            if e.match(d.message):
                if e.kind == d.severity:
                    e.matched = True
                    return
                near = e
        if self.only_expected:
            return
        if near is not None:
            self._error_at(near, f"'{d.severity}' diagnostic emitted when expecting a '{near.kind}'")
        else:
            self.ok = False
            self.output.append(_render(self.sources, *d.where, "error",
                                       f"unexpected {d.severity}: {d.message}"))

    def finish(self) -> bool:
        """Reports the expectations nothing matched; True if all is well."""
        for e in self.expected + self.unknown:
            if not e.matched:
                self._error_at(e, f'expected {e.kind} "{e.substring}" was not produced',
                               len(e.substring))
        return self.ok
