"""Progress bars over the host program's outermost loops (`exe.run(..., progress=True)`).

The host program (`_program`) is rewritten once, with `ast`, into
`_program_progress`: every loop that no other loop encloses iterates through
`_progress(range(...), "host loop N")`, which shows a bar with steps per
second (tqdm when it is installed, a one-line bar on stderr otherwise). The
plain `_program` is untouched, so a run without progress pays nothing.
"""
from __future__ import annotations

import ast
import sys
import time

__all__ = ["progress_source", "progress"]


class _Outermost(ast.NodeTransformer):
    def __init__(self):
        self.depth = 0
        self.count = 0

    def visit_FunctionDef(self, node: ast.FunctionDef):
        if node.name == "_program":
            node.name = "_program_progress"
        self.generic_visit(node)
        return node

    def visit_For(self, node: ast.For):
        if self.depth == 0:
            self.count += 1
            node.iter = ast.Call(ast.Name("_progress", ast.Load()),
                                 [node.iter, ast.Constant(f"host loop {self.count}")], [])
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1
        return node


def progress_source(program_source: str) -> str:
    """The source of `_program_progress`: `_program` with its outermost loops wrapped."""
    tree = _Outermost().visit(ast.parse(program_source))
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


class _Bar:
    """A minimal stand-in for tqdm: `label: 40% |####      | 4/10 [12.3 it/s]` on stderr."""

    def __init__(self, iterable, desc: str):
        self.iterable, self.desc = iterable, desc
        self.total = len(iterable) if hasattr(iterable, "__len__") else None

    def _show(self, done: int, start: float, end: str = "") -> None:
        rate = done / max(time.perf_counter() - start, 1e-9)
        if self.total:
            filled = int(30 * done / self.total)
            bar = f"{100 * done // self.total:3d}% |{'#' * filled}{' ' * (30 - filled)}| {done}/{self.total}"
        else:
            bar = f"{done}"
        sys.stderr.write(f"\r{self.desc}: {bar} [{rate:.1f} it/s]{end}")
        sys.stderr.flush()

    def __iter__(self):
        start, last, done = time.perf_counter(), 0.0, 0
        for item in self.iterable:
            yield item
            done += 1
            now = time.perf_counter()
            if now - last > 0.1:
                self._show(done, start)
                last = now
        self._show(done, start, "\n")


def progress(iterable, desc: str):
    """`iterable` with a progress bar (tqdm if available)."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _Bar(iterable, desc)
    return tqdm(iterable, desc=desc, unit="step", leave=True)
