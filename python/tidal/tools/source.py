"""Reading tidal-opt's input: `--split-input-file` chunks and parsing with
mlir-opt's implicit module, keeping the input's name, lines and columns.

`ir.Module.parse` takes no source name (its locations say "-"), so sources
are parsed with `ir.Operation.parse(text, source_name=name)`, which wants a
single top-level op. As in mlir-opt, a lone `builtin.module` is the root and
another lone op is moved into a new module (located at `name:0:0`). Several
top-level ops (with type/attribute aliases around them) cannot be wrapped in
text without moving lines or breaking aliases, so that (valid) input is
parsed by `ir.Module.parse`, printed with its locations, and parsed again
under the right name. Chunks are padded with the lines before them, so
diagnostics carry the line and column of the original file, as mlir-opt 22
reports them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from mlir import ir

__all__ = ["SPLIT_MARKER", "Chunk", "split_input", "parse_source", "BYTECODE_MAGIC",
           "MAX_IR_NESTING", "too_deep"]

# MLIR's parser recurses once or more per nested region, attribute or type: deep
# enough nesting overflows any stack (a signal, not a diagnostic). Real IR nests a
# few dozen levels; the text is checked before MLIR sees it, and tidal-opt parses on
# a thread whose stack holds twice this many levels (opt._STACK_BYTES: 20,000 levels
# of modules, arrays, tuple types and affine parentheses parse there).
# Far above the symbolic expressions' own limit of 256 (a parenthesis and a call a
# level), which reports a deeper expression itself.
MAX_IR_NESTING = 10000
_BRACKETS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|->|[{(\[<]|[})\]>]')

SPLIT_MARKER = "// -----"
BYTECODE_MAGIC = b"ML\xefR"
_SINGLE_OP = "source must contain a single top-level operation"


@dataclass
class Chunk:
    """One piece of the input: `text` starts at `offset` of the whole input
    and `padded` is it with everything before it blanked (same line/col)."""

    text: str
    offset: int
    padded: str


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _chunk(text: str, start: int, end: int) -> Chunk:
    line, col = _line_col(text, start)
    return Chunk(text[start:end], start, "\n" * (line - 1) + " " * (col - 1) + text[start:end])


def split_input(text: str, name: str, marker: str = SPLIT_MARKER):
    """Splits as mlir/lib/Support/ToolUtilities.cpp does: at every
    occurrence of `marker` (even inside a line). Returns the chunks and the
    near-miss warnings (`// ---` not followed by `--`) as (line, col, msg)."""
    head, check = marker[:-2], marker[-2:]
    pieces, pos = [], 0
    while True:  # StringRef::split on `head`, remembering offsets
        found = text.find(head, pos)
        if found < 0:
            pieces.append((pos, len(text)))
            break
        pieces.append((pos, found))
        pos = found + len(head)
    chunks, warnings = [], []
    prev_start, prev_end = pieces[0]
    for start, end in pieces[1:]:
        piece = text[start:end]
        # Upstream compares the third character with '0' (sic), not '-'.
        if piece.startswith(check) and len(piece) > len(check) and piece[len(check)] != "0":
            chunks.append(_chunk(text, prev_start, prev_end))
            prev_start, prev_end = start + len(check), end
        else:
            line, col = _line_col(text, start)
            warnings.append((line, col, "near miss with file split marker"))
            prev_end = end
    chunks.append(_chunk(text, prev_start, prev_end))
    return chunks, warnings


def too_deep(text: str) -> tuple[int, int] | None:
    """(line, col) of the first bracket ({, (, [ or <) opened more than
    MAX_IR_NESTING levels deep, outside strings and comments; None if none is."""
    depth = 0
    for m in _BRACKETS.finditer(text):
        tok = m.group()
        if tok in "{([<":
            depth += 1
            if depth > MAX_IR_NESTING:
                return _line_col(text, m.start())
        elif tok in "})]>":
            depth = max(0, depth - 1)
    return None


def _reparse_with_name(text: str, name: str):
    """Several top-level ops: `ir.Module.parse` builds the implicit module
    (aliases and all) but names the source "-"; print it with its locations,
    rename the source and parse that single module again under `name`."""
    ctx = ir.Context.current
    swallow = ctx.attach_diagnostic_handler(lambda d: True)  # already reported once
    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    try:
        module = ir.Module.parse(text)
        asm = module.operation.get_asm(enable_debug_info=True, print_generic_op_form=True,
                                       assume_verified=True)
        return ir.Operation.parse(asm.replace('loc("-":', f'loc("{quoted}":'), source_name=name)
    finally:
        swallow.detach()


def parse_source(source, name: str, implicit_module: bool = True):
    """Parses text (or bytecode) named `name`. Returns the root: an
    `ir.Module`/`builtin.module` op or, with `implicit_module=False`, the
    single top-level op. Raises ir.MLIRError with the parser's diagnostics,
    whose locations name `name`."""
    try:
        op = ir.Operation.parse(source, source_name=name)
    except ir.MLIRError as e:
        diags = e.error_diagnostics
        if not (implicit_module and isinstance(source, str) and len(diags) == 1
                and diags[0].message.startswith(_SINGLE_OP)):
            raise
        return _reparse_with_name(source, name)
    if not implicit_module or op.operation.name == "builtin.module":
        return op
    module = ir.Module.create(loc=ir.Location.file(name, 0, 0))
    ir.InsertionPoint(module.body).insert(op.operation)
    return module
