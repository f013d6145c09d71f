"""Errors raised at the user's line, and the source locations ops carry.

Every op records where the user created it (the first stack frame outside the
`tidal` package) and prints it as an MLIR location `loc("file.py":line:col)`.
A `TidalError` names that place too: `file.py:12: <what went wrong>` followed
by a hint saying what to change.
"""
from __future__ import annotations

import linecache
import sys
from dataclasses import dataclass

__all__ = ["TidalError", "SourceLocation", "user_location", "user_frame", "location_of",
           "source_text", "symbolic_errors"]


@dataclass(frozen=True)
class SourceLocation:
    """A place in the user's Python source (1-based line and column)."""

    file: str
    line: int
    col: int = 1

    def mlir(self) -> str:
        """The MLIR file-line-column location, e.g. `loc("f.py":3:5)`."""
        name = self.file.replace("\\", "\\\\").replace('"', '\\"')
        return f'loc("{name}":{self.line}:{self.col})'

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


UNKNOWN = SourceLocation("<unknown>", 0, 0)


# Programs written with Tidal's API inside the package (tidal.models): their lines are
# the program's locations, as a user's would be, so the traced program (and its compile
# cache key) does not depend on where the model was called from.
_PROGRAMS = "tidal.models"


def _in_package(frame, package: str) -> bool:
    name = frame.f_globals.get("__name__", "")
    if package == "tidal" and (name == _PROGRAMS or name.startswith(_PROGRAMS + ".")):
        return False
    return name == package or name.startswith(package + ".")


def inside_tidal(frame) -> bool:
    """Whether `frame` runs code of the tidal package (not the user's)."""
    return _in_package(frame, "tidal")


def _position(frame) -> tuple | None:
    """(line, end_line, col, end_col) of the instruction the frame is running."""
    try:
        positions = frame.f_code.co_positions()
        index = frame.f_lasti // 2
        for i, pos in enumerate(positions):
            if i == index:
                return pos
    except (AttributeError, ValueError):  # pragma: no cover - older Pythons
        pass
    return None


def _column(frame) -> int:
    pos = _position(frame)
    return (pos[2] or 0) + 1 if pos else 1


def user_frame(skip: tuple[str, ...] = ("tidal",)):
    """The innermost frame outside the packages `skip` (None if there is none)."""
    frame = sys._getframe(1)
    while frame is not None and any(_in_package(frame, p) for p in skip):
        frame = frame.f_back
    return frame


def location_of(frame) -> SourceLocation:
    """The file, line and column a frame is running."""
    if frame is None:
        return UNKNOWN
    return SourceLocation(frame.f_code.co_filename, frame.f_lineno, _column(frame))


def user_location() -> SourceLocation:
    """Where the user's code called into Tidal: the first frame outside `tidal`."""
    return location_of(user_frame())


def caller_location() -> SourceLocation:
    """The first frame outside `tidal`, tidal.models included: where a user called
    a model (for errors about the call's arguments)."""
    return location_of(user_frame(("tidal", _PROGRAMS)))


def source_text(frame) -> str | None:
    """The source of the expression a frame is evaluating (e.g. the call
    `max(t, 1)` while `max` runs), or None when the source is not available."""
    pos = _position(frame) if frame is not None else None
    if not pos or None in pos:
        return None
    line, end_line, col, end_col = pos
    lines = linecache.getlines(frame.f_code.co_filename, frame.f_globals)
    if not 1 <= line <= end_line <= len(lines):
        return None
    if line == end_line:
        return lines[line - 1][col:end_col]
    parts = [lines[line - 1][col:]] + lines[line:end_line - 1] + [lines[end_line - 1][:end_col]]
    return " ".join(p.strip() for p in parts)


class TidalError(ValueError):
    """A mistake in a Tidal program, reported at the user's line.

    `str(err)` is `file.py:LINE: what went wrong` and, on a second line, a
    hint saying what to change. The parts are also attributes: `location`
    (a `SourceLocation`), `reason` and `hint`.
    """

    def __init__(self, reason: str, hint: str | None = None,
                 location: SourceLocation | None = None):
        self.location = location if location is not None else user_location()
        self.reason = reason
        self.hint = hint
        text = f"{self.location}: {reason}"
        if hint:
            text += f"\n  hint: {hint}"
        super().__init__(text)

    @property
    def filename(self) -> str:
        return self.location.file

    @property
    def lineno(self) -> int:
        return self.location.line


def symbolic_errors(what: str) -> "_SymbolicErrors":
    """Context manager turning `tidal.symbolic` errors into `TidalError`s."""
    return _SymbolicErrors(what)


class _SymbolicErrors:
    def __init__(self, what: str):
        self.what = what

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        from tidal.symbolic import SymbolicError

        if value is not None and isinstance(value, SymbolicError):
            raise TidalError(f"{self.what}: {value}",
                             "index and shape expressions must be integer expressions over the "
                             "program's dimensions (t + 1, max(0, t - 2), T - t, ...)") from None
        return False
