"""Tidal's settings: every `TIDAL_*` environment variable, declared and read here.

    from tidal import config
    config.xla_loops.value        # "on", "off" or "strict", from TIDAL_XLA_LOOPS
    config.describe()             # the table the README shows

A setting is read from the environment each time its `value` is asked for (a
test or a user may set the variable after Tidal is imported), and parsed here:
a value the setting does not accept raises `ValueError` naming the variable and
what it accepts. Arguments given in code (`p.compile(dump=...)`) take precedence
over the environment; the call sites say so.

This module is the bottom layer with `tidal.symbolic`: it imports nothing of
Tidal's, and any layer may import it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Setting", "SETTINGS", "describe", "dump", "timings", "progress", "cache_dir",
           "xla_loops", "cpu_kernels", "cpu_kernels_generic", "memory_limit",
           "fuzz_include", "fuzz_exclude", "fuzz_log", "fuzz_findings", "program_backends"]


def _flag(text: str) -> bool:
    """Any non-empty value but 0/false/no/off is on (as TIDAL_TIMINGS=1)."""
    return text.strip().lower() not in ("", "0", "false", "no", "off")


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise ValueError("not positive")
    return value


def _names(text: str) -> frozenset:
    return frozenset(part.strip() for part in text.split(",") if part.strip())


@dataclass(frozen=True)
class Setting:
    """One environment variable: its name, the value when unset, what it does,
    and how its text is parsed (None: the text as given)."""

    env: str
    default: Any
    doc: str
    parse: Callable[[str], Any] | None = None
    choices: tuple[str, ...] = ()
    accepts: str = ""          # what a valid value looks like, for the error
    testing: bool = False      # a setting of the test suite, not of running Tidal

    @property
    def value(self) -> Any:
        text = os.environ.get(self.env)
        if not text:
            return self.default
        if self.choices and text not in self.choices:
            raise ValueError(f"{self.env}={text!r}: use one of {', '.join(self.choices)}")
        if self.parse is None:
            return text
        try:
            return self.parse(text)
        except ValueError:
            raise ValueError(f"{self.env}={text!r}: expected {self.accepts or 'another value'}") from None


dump = Setting(
    "TIDAL_DUMP", None,
    "Directory that every compile writes its stages into (as `p.compile(dump=DIR)`): "
    "each stage's output and an index.json of tidal-opt commands that replay them.")
timings = Setting(
    "TIDAL_TIMINGS", False, "Print each compile's stage times to stderr (as `p.compile(timings=True)`).",
    parse=_flag)
progress = Setting(
    "TIDAL_PROGRESS", False,
    "Show a progress bar over each run's outermost loops (as `exe.run(..., progress=True)`).", parse=_flag)
cache_dir = Setting(
    "TIDAL_CACHE_DIR", None,
    "Directory that keeps XLA executables, isl schedules and the CPU kernels' library across "
    "processes (unset: compiled code lives in the process; the CPU kernels go to ~/.cache/tidal).")
xla_loops = Setting(
    "TIDAL_XLA_LOOPS", "on",
    "jax backend: run each loop whose body JAX can trace as one `lax.fori_loop` (on); "
    "always in Python (off); raise when a trace fails instead of running the loop in Python (strict).",
    choices=("on", "off", "strict"))
cpu_kernels = Setting(
    "TIDAL_CPU_KERNELS", True,
    "jax backend on CPU: Tidal's C++ kernels for small transposed matmuls (0 turns them off).", parse=_flag)
cpu_kernels_generic = Setting(
    "TIDAL_CPU_KERNELS_GENERIC", False,
    "The CPU kernels use their portable loops even where AVX-512 is available (any value but 0; "
    "read by the C++ library, once per process).", parse=lambda text: text != "0")
memory_limit = Setting(
    "TIDAL_MEMORY_LIMIT", None,
    "Bytes a run may use before it raises MemoryError (unset: physical memory or the cgroup limit).",
    parse=_positive_int, accepts="a positive number of bytes")
fuzz_include = Setting(
    "TIDAL_FUZZ_INCLUDE", frozenset(),
    "Tests: random-program generator features drawn only on request (feat,feat).", parse=_names, testing=True)
fuzz_exclude = Setting(
    "TIDAL_FUZZ_EXCLUDE", frozenset(),
    "Tests: generator features switched off while a defect is fixed (feat,feat).", parse=_names, testing=True)
fuzz_log = Setting(
    "TIDAL_FUZZ_LOG", None,
    "Tests: file the main fuzz test appends one line per program to (plus .current.py, .fail.md, "
    ".slow.md beside it).", testing=True)
fuzz_findings = Setting(
    "TIDAL_FUZZ_FINDINGS", None, "Tests: file the main fuzz test appends each shrunk failure to.",
    testing=True)
program_backends = Setting(
    "TIDAL_PROGRAM_BACKENDS", ("reference", "jax"),
    "Tests: the backends the program tests compare (comma-separated).",
    parse=lambda text: tuple(b for b in text.split(",") if b), testing=True)

SETTINGS: tuple[Setting, ...] = (dump, timings, progress, cache_dir, xla_loops, cpu_kernels,
                                 cpu_kernels_generic, memory_limit, fuzz_include, fuzz_exclude,
                                 fuzz_log, fuzz_findings, program_backends)


def describe(testing: bool | None = None) -> str:
    """The settings as a Markdown table (`testing`: only those of the test suite, or
    only the others; None: all)."""
    rows = ["| Variable | Default | What it does |", "|---|---|---|"]
    for s in SETTINGS:
        if testing is None or s.testing == testing:
            default = "unset" if s.default is None or s.default == frozenset() else (
                ",".join(s.default) if isinstance(s.default, tuple) else
                ("1" if s.default is True else "0") if isinstance(s.default, bool) else str(s.default))
            rows.append(f"| `{s.env}` | {default} | {s.doc} |")
    return "\n".join(rows)
