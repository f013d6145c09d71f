"""Named compile stages: what `p.compile()` ran, in order, with each output kept.

`p.compile()` is a fixed, ordered list of stages (see
`tidal.frontend.executable.Executable` for the list): tracing to `rt`,
`rt-to-sdg`, each `sdg` pass, scheduling, lowering to `scf`, storage planning
host-program generation and loading. Each stage runs through `CompileStages.run`,
which times it and keeps its output as text (MLIR for IR stages, with
locations; the isl schedule and loop nest; the store plans; the generated
Python). With a dump directory every stage is written as a numbered file as
soon as it is done (`00-rt.mlir`, `01-sdg.mlir`, ...), a pass stage that left
the IR unchanged gets no file, and `index.json` lists the stages: name, file,
seconds and, for pass stages, the `tidal-opt` command that turns the previous
`.mlir` file into this one:

    {"name": "sdg-schedule", "file": "02-sdg-schedule.mlir", "seconds": 0.21,
     "pipeline": "builtin.module(sdg-schedule)",
     "command": "tidal-opt 01-sdg.mlir --mlir-print-debuginfo --pass-pipeline='builtin.module(sdg-schedule)'"}

An internal error in a stage (a bug, not an error in the user's program:
those are `OpError`s and the errors in `user_errors`) is re-raised as
`InternalCompilerError`, whose message names the stage and, for a pass stage,
writes the stage's input IR to a file and prints the `tidal-opt` command that
reproduces the failure outside Python (MLIR's crash reproducers).
"""
from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable

from .base import OpError

__all__ = ["Stage", "CompileStages", "InternalCompilerError", "module_text", "module_snapshot", "replay_command"]

SUFFIXES = (".mlir", ".txt", ".py")


def module_text(module) -> str:
    """The IR of a module or operation as `tidal-opt --mlir-print-debuginfo` prints it."""
    op = module.operation if hasattr(module, "operation") else module
    return op.get_asm(enable_debug_info=True) + "\n"


def module_snapshot(module) -> Callable[[], str]:
    """The module as it is now, printed later (`module_text`) and only if asked:
    a clone of its operation (attributes, weights included, are uniqued in the
    context and shared, so this is cheap) instead of text that can run to tens of
    megabytes for a model's dense weights."""
    op = module.operation if hasattr(module, "operation") else module
    clone = op.clone()
    cached: list[str] = []

    def render() -> str:
        if not cached:
            cached.append(module_text(clone))
        return cached[0]

    return render


def replay_command(pipeline: str, path: str, plugins: tuple = ()) -> str:
    """The `tidal-opt` command that runs `pipeline` (a builtin.module pipeline) on `path`."""
    loads = "".join(f" --load-pass-plugin {shlex.quote(p)}" for p in plugins)
    return (f"tidal-opt {shlex.quote(path)}{loads} --mlir-print-debuginfo "
            f"--pass-pipeline={shlex.quote(pipeline)}")


@dataclass
class Stage:
    """One stage of a compile: its output as text (`suffix` tells which kind).
    `output` is the text, or a function that renders it on first use."""

    name: str
    output: str | Callable[[], str]
    seconds: float
    suffix: str                    # ".mlir", ".txt" or ".py"
    pipeline: str | None = None    # pass stages: builtin.module(...) from the previous .mlir stage
    file: str | None = None        # the dump file (None: not dumped, or the IR did not change)

    @property
    def text(self) -> str:
        if callable(self.output):
            self.output = self.output()
        return self.output

    def as_json(self, previous_file: str | None, plugins: tuple) -> dict:
        out = {"name": self.name, "file": self.file, "seconds": round(self.seconds, 6)}
        if self.pipeline is not None:
            out["pipeline"] = self.pipeline
            if previous_file is not None:
                out["command"] = replay_command(self.pipeline, previous_file, plugins)
        return out


class InternalCompilerError(RuntimeError):
    """A compile stage failed on a bug of Tidal's (not on the user's program).
    `stage` names it; `reproducer` is the `tidal-opt` command, or None."""

    def __init__(self, message: str, stage: str, reproducer: str | None):
        super().__init__(message)
        self.stage, self.reproducer = stage, reproducer


class CompileStages:
    """Runs and records the stages of one compile. `dump`: a directory to
    write them to (created; earlier numbered files in it are replaced);
    `progress`: print each stage as it starts; `plugins`: modules that
    register passes, named in reproducer commands (`--load-pass-plugin`)."""

    def __init__(self, dump: str | os.PathLike | None = None, *, progress: bool = False,
                 plugins: tuple = (), user_errors: tuple = ()):
        self.stages: list[Stage] = []
        self.dump = os.fspath(dump) if dump is not None else None
        self.progress = progress
        self.plugins = tuple(plugins)
        self.user_errors = (OpError,) + tuple(user_errors)
        if self.dump is not None:
            os.makedirs(self.dump, exist_ok=True)
            for name in os.listdir(self.dump):
                if name == "index.json" or (name[:2].isdigit() and name[2:3] == "-" and name.endswith(SUFFIXES)):
                    os.remove(os.path.join(self.dump, name))

    # -- running ----------------------------------------------------------------------
    def allow(self, *errors: type) -> None:
        """Also treat `errors` as errors in the user's program (not internal)."""
        self.user_errors = self.user_errors + tuple(e for e in errors if e not in self.user_errors)

    def last_mlir(self) -> Stage | None:
        return next((s for s in reversed(self.stages) if s.suffix == ".mlir"), None)

    def run(self, name: str, fn: Callable[[], Any], *, text: Callable[[Any], Any],
            suffix: str = ".txt", pipeline: str | None = None) -> Any:
        """Runs `fn()`, records `text(result)` (a str, or a function rendering it
        later, e.g. `module_snapshot`) as stage `name` and returns the result.
        `pipeline` (builtin.module(...)): this stage is that tidal-opt pipeline
        applied to the previous `.mlir` stage."""
        if suffix not in SUFFIXES:
            raise ValueError(f"stage suffix {suffix!r} is not one of {SUFFIXES}")
        if self.progress:
            print(f"[tidal] {name} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        try:
            result = fn()
        except self.user_errors:
            raise
        except Exception as e:
            raise self._internal(name, pipeline, e) from e
        seconds = time.perf_counter() - start
        self.record(Stage(name, text(result), seconds, suffix, pipeline))
        return result

    def record(self, stage: Stage) -> None:
        previous = self.last_mlir()
        self.stages.append(stage)
        if self.dump is None:
            return
        unchanged = (stage.pipeline is not None and previous is not None
                     and stage.suffix == ".mlir" and previous.text == stage.text)
        if not unchanged:
            stage.file = f"{sum(s.file is not None for s in self.stages):02d}-{stage.name}{stage.suffix}"
            with open(os.path.join(self.dump, stage.file), "w") as f:
                f.write(stage.text)
            self.write_index()

    def _internal(self, name: str, pipeline: str | None, error: Exception) -> InternalCompilerError:
        message = (f"internal error in compile stage '{name}': {type(error).__name__}: {error}\n"
                   "this is a bug in Tidal, not in your program; please report it")
        previous = self.last_mlir()
        reproducer = None
        if pipeline is not None and previous is not None:
            fd, path = tempfile.mkstemp(prefix=f"tidal-{name}-", suffix=".mlir")
            with os.fdopen(fd, "w") as f:
                f.write(previous.text)
            reproducer = replay_command(pipeline, path, self.plugins)
            message += f" with this reproducer (the stage's input IR is in {path}):\n  {reproducer}"
        return InternalCompilerError(message, name, reproducer)

    # -- reading ----------------------------------------------------------------------
    def as_dict(self) -> dict[str, str]:
        """Stage name -> output text, in order."""
        return {s.name: s.text for s in self.stages}

    def index(self) -> list[dict]:
        out, previous = [], None
        for s in self.stages:
            out.append(s.as_json(previous, self.plugins))
            if s.suffix == ".mlir" and s.file is not None:
                previous = s.file
        return out

    def write_index(self) -> None:
        with open(os.path.join(self.dump, "index.json"), "w") as f:
            json.dump({"stages": self.index()}, f, indent=2)
            f.write("\n")

    def timings(self) -> str:
        """A table of the stages' times, like `mlir-opt --mlir-timing`."""
        total = sum(s.seconds for s in self.stages) or 1e-12
        width = max([len(s.name) for s in self.stages] + [5])
        lines = ["===-- Tidal compile time --===", f"  {'seconds':>9}  {'%':>6}  stage"]
        for s in self.stages:
            lines.append(f"  {s.seconds:9.4f}  {100 * s.seconds / total:5.1f}%  {s.name:<{width}}")
        lines.append(f"  {total:9.4f}  100.0%  total")
        return "\n".join(lines)
