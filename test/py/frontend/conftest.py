"""Helpers for the frontend tests, as fixtures.

* `filecheck(text, checks)`: a small FileCheck. `checks` holds lines
  `CHECK: pat`, `CHECK-NEXT: pat`, `CHECK-NOT: pat`; in a pattern,
  `[[X:regex]]` captures a variable, `[[X]]` reuses it, `{{regex}}` is a
  regex, everything else is literal. Matches go line by line, in order.
* `line_of(marker)`: the line number of the line ending in `# @marker` in
  the calling test file.
* `locs(text)`: {op line text without its loc: (file, line, col)} pairs, in order.
* `parse(text)`: parses with the Tidal dialects and verifies.
"""
import inspect
import re

import pytest
from mlir import ir

from tidal.dialects import make_context

_TOKEN = re.compile(r"\[\[([A-Za-z_][A-Za-z0-9_]*)(?::(.*?))?\]\]|\{\{(.*?)\}\}")


def _compile(pattern: str, variables: dict) -> tuple[re.Pattern, list]:
    out, pos, defined = [], 0, []
    for m in _TOKEN.finditer(pattern):
        out.append(re.escape(pattern[pos:m.start()]))
        name, regex, raw = m.groups()
        if raw is not None:
            out.append(f"(?:{raw})")
        elif regex is not None:
            out.append(f"(?P<{name}>{regex})")
            defined.append(name)
        else:
            if name not in variables:
                raise AssertionError(f"FileCheck variable [[{name}]] used before it is defined")
            out.append(re.escape(variables[name]))
        pos = m.end()
    out.append(re.escape(pattern[pos:]))
    return re.compile("".join(out)), defined


def filecheck_impl(text: str, checks: str) -> dict:
    lines = text.splitlines()
    variables: dict = {}
    cursor = 0          # next line to search
    last = -1           # line of the previous match
    pending_not = []
    for raw in checks.strip().splitlines():
        raw = raw.strip()
        if not raw:
            continue
        kind, _, pattern = raw.partition(":")
        pattern = pattern.strip()
        if kind == "CHECK-NOT":
            pending_not.append(pattern)
            continue
        regex, defined = _compile(pattern, variables)
        if kind == "CHECK-NEXT":
            candidates = [last + 1] if last + 1 < len(lines) else []
        elif kind == "CHECK":
            candidates = range(cursor, len(lines))
        else:
            raise AssertionError(f"unknown check kind in {raw!r}")
        found = None
        for i in candidates:
            m = regex.search(lines[i])
            if m:
                found = (i, m)
                break
        if found is None:
            context = "\n".join(lines[max(cursor - 2, 0):cursor + 12])
            raise AssertionError(f"{kind}: {pattern!r} not found after line {cursor + 1}:\n{context}\n"
                                 f"--- full text ---\n{text}")
        i, m = found
        for np_ in pending_not:
            nregex, _ = _compile(np_, variables)
            for j in range(cursor, i):
                if nregex.search(lines[j]):
                    raise AssertionError(f"CHECK-NOT: {np_!r} matched line {j + 1}: {lines[j]}")
        pending_not = []
        for name in defined:
            variables[name] = m.group(name)
        last, cursor = i, i + 1
    for np_ in pending_not:
        nregex, _ = _compile(np_, variables)
        for j in range(cursor, len(lines)):
            if nregex.search(lines[j]):
                raise AssertionError(f"CHECK-NOT: {np_!r} matched line {j + 1}: {lines[j]}")
    return variables


@pytest.fixture
def filecheck():
    return filecheck_impl


def line_of_impl(marker: str, depth: int = 1) -> int:
    filename = inspect.stack()[depth].filename
    with open(filename) as f:
        for n, line in enumerate(f, 1):
            if line.rstrip().endswith(f"# @{marker}"):
                return n
    raise AssertionError(f"marker # @{marker} not found in {filename}")


@pytest.fixture
def line_of():
    return lambda marker: line_of_impl(marker, depth=2)


_LOC = re.compile(r'\s*loc\("((?:[^"\\]|\\.)*)":(\d+):(\d+)\)\s*$')


def locs_impl(text: str) -> list:
    out = []
    for line in text.splitlines():
        m = _LOC.search(line)
        if m:
            out.append((line[:m.start()].strip(), (m.group(1), int(m.group(2)), int(m.group(3)))))
    return out


@pytest.fixture
def locs():
    return locs_impl


def parse_impl(text: str) -> ir.Module:
    ctx = make_context()
    with ctx:
        module = ir.Module.parse(text)
        assert module.operation.verify()
    return module


@pytest.fixture
def parse():
    return parse_impl
