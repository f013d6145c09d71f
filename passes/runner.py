"""Builds an MLIR `PassManager` from a mixed pipeline and runs it.

Upstream elements are handed to MLIR as pipeline text (`pm.add("cse")`);
Tidal passes are added as Python callables (`pm.add(callable, name=...)`) at
the top level, in pipeline order. MLIR's IR printing instrumentation covers
both kinds: a Tidal pass dumps as `IR Dump After SdgDeadCodeElimination
(sdg-dce)`. Printing for selected passes only (`print_ir_after=["cse"]`) is
done by capturing the dumps MLIR writes to stderr and keeping the selected
ones, since the bindings only offer all-or-nothing printing.
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from typing import Iterable, Sequence

from mlir import ir, passmanager

from .base import ModulePass, OpError
from .pipeline import Pipeline, PipelineError, TidalStep, parse_pipeline
from .registry import UnknownPassError, get_pass

__all__ = ["run_pipeline", "build_pass_manager", "is_known_pass", "upstream_pass_exists"]

_UNKNOWN = "does not refer to a registered pass or pass pipeline"
_upstream_cache: dict[str, bool] = {}


@contextlib.contextmanager
def capture_stderr_fd():
    """Redirects file descriptor 2 (where LLVM writes) to a buffer; yields a
    list that holds the captured text once the block exits."""
    out: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield out
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            out.append(tmp.read().decode("utf-8", errors="replace"))


def upstream_pass_exists(name: str, context: ir.Context | None = None) -> bool:
    """Whether MLIR knows a pass or pass pipeline called `name`."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        return False
    if name not in _upstream_cache:
        ctx = context or ir.Context()
        try:
            with capture_stderr_fd():
                passmanager.PassManager.parse(f"any({name})", context=ctx)
            _upstream_cache[name] = True
        except ValueError as e:  # restricted to an op: it exists all the same
            _upstream_cache[name] = _UNKNOWN not in str(e)
    return _upstream_cache[name]


def is_known_pass(name: str, context: ir.Context | None = None) -> bool:
    """A Tidal pass or an upstream pass."""
    try:
        get_pass(name)
        return True
    except UnknownPassError:
        return upstream_pass_exists(name, context)


def _upstream_error(message: str, captured: str) -> tuple[str, int | None]:
    """MLIR's complaint about a pipeline element, on one line, and the
    column it names inside the element (if any)."""
    m = re.search(r"PassPipeline Parser:1:(\d+): error: ([^\n]*)", message)
    if m:
        return m.group(2), int(m.group(1))
    lines = [ln.strip(" :") for ln in (message + "\n" + captured).splitlines() if ln.strip(" :")]
    return ": ".join(lines) or "invalid pass pipeline element", None


class _TidalPassRunner:
    """The callable MLIR runs for one Tidal pass. Turns OpError (PassFailure
    and the errors of the layers a pass calls, reported at their op), error
    diagnostics and unexpected exceptions (internal errors) into a failed
    pass with an error diagnostic; never lets an exception escape into MLIR."""

    def __init__(self, pass_: ModulePass):
        self.pass_ = pass_
        self.internal_error: BaseException | None = None

    def __call__(self, op: ir.Operation, external_pass) -> None:
        errors = []

        def on_diagnostic(diag):
            if diag.severity == ir.DiagnosticSeverity.ERROR:
                errors.append(diag.message)
            return False  # not handled: the pass manager still collects it

        handler = op.context.attach_diagnostic_handler(on_diagnostic)
        failed = False
        try:
            self.pass_.run(op)
        except OpError as e:
            failed = True
            location = op.location
            if e.op is not None:
                with contextlib.suppress(Exception):  # an erased op: fall back to the root
                    location = e.op.operation.location
            location.emit_error(e.message)
        except Exception as e:  # a bug in the pass: report it, keep MLIR sane
            failed = True
            self.internal_error = e
            op.location.emit_error(f"internal error in pass '{self.pass_.name}': "
                                   f"{type(e).__name__}: {e}")
        finally:
            handler.detach()
        if failed or errors:
            external_pass.signal_pass_failure()


def build_pass_manager(pipeline: Pipeline, context: ir.Context, anchor: str | None = None):
    """A PassManager for `pipeline` (on ops named `anchor`, by default the
    pipeline's) and the runners of its Tidal passes. Raises PipelineError for
    unknown upstream passes or bad upstream options."""
    anchor = anchor or pipeline.anchor
    pm = passmanager.PassManager(anchor, context=context)
    runners = []
    for step in pipeline.steps:
        if isinstance(step, TidalStep):
            if anchor != "builtin.module":
                raise PipelineError(f"Tidal pass '{step.name}' needs a 'builtin.module' root, "
                                    f"not '{anchor}'", pipeline.text,
                                    step.ref.start + 1 if step.ref else 1)
            runner = _TidalPassRunner(step.pass_)
            pm.add(runner, name=type(step.pass_).__name__, argument=step.name,
                   description=type(step.pass_).summary)
            runners.append(runner)
            continue
        for ref in step.refs:
            if not upstream_pass_exists(ref.name, context):
                raise PipelineError(f"'{ref.name}' {_UNKNOWN}", pipeline.text, ref.start + 1)
        try:
            with capture_stderr_fd() as captured:
                pm.add(step.text)
        except ValueError as e:
            message, col = _upstream_error(str(e), "".join(captured))
            raise PipelineError(message, pipeline.text,
                                step.start + (col if col else 1)) from None
    return pm, runners


_DUMP_HEADER = re.compile(r"^// -----// IR Dump (Before|After) .*?\(([^()\s]+)\)")


def _filter_dumps(text: str, before_all: bool, after_all: bool, before: set, after: set) -> str:
    """Keeps the IR dumps of the selected passes from MLIR's printer output
    (and anything printed before the first dump)."""
    kept, keep = [], True
    for line in text.splitlines(keepends=True):
        m = _DUMP_HEADER.match(line)
        if m:
            kind, arg = m.groups()
            keep = (before_all or arg in before) if kind == "Before" else (after_all or arg in after)
        if keep:
            kept.append(line)
    return "".join(kept)


def _names(names: Iterable[str] | str | None) -> set:
    if not names:
        return set()
    if isinstance(names, str):
        names = [names]
    return {n.strip() for item in names for n in item.split(",") if n.strip()}


def run_pipeline(module, pipeline: str | Pipeline, *, print_ir_before_all: bool = False,
                 print_ir_after_all: bool = False, print_ir_before: Sequence[str] = (),
                 print_ir_after: Sequence[str] = (), print_generic_op_form: bool = False,
                 verify_each: bool = True):
    """Runs a mixed upstream/Tidal pipeline on `module` (an `ir.Module` or a
    root operation) in place and returns it.

    Raises PipelineError (a ValueError) for a bad pipeline and `ir.MLIRError`
    (with `.error_diagnostics`) when a pass fails; if a Tidal pass crashed,
    the original exception is the error's `__cause__`. IR dumps go to stderr
    in mlir-opt's format (`// -----// IR Dump After CSE (cse) //----- //`).
    """
    root = module.operation if hasattr(module, "operation") else module
    if not isinstance(pipeline, Pipeline):
        pipeline = parse_pipeline(pipeline, anchor=root.name)
    before, after = _names(print_ir_before), _names(print_ir_after)
    for flag, names in (("print_ir_before", before), ("print_ir_after", after)):
        for name in sorted(names):
            if not is_known_pass(name, root.context):
                raise PipelineError(f"{flag}: '{name}' is not a registered pass")
    pm, runners = build_pass_manager(pipeline, root.context, root.name)
    pm.enable_verifier(verify_each)
    printing = print_ir_before_all or print_ir_after_all or before or after
    if printing:
        pm.enable_ir_printing(print_before_all=bool(print_ir_before_all or before),
                              print_after_all=bool(print_ir_after_all or after),
                              print_generic_op_form=print_generic_op_form)
    filtered = bool(before or after) and not (print_ir_before_all and print_ir_after_all)
    captured: list[str] = []
    try:
        with (capture_stderr_fd() if filtered else contextlib.nullcontext([])) as captured:
            pm.run(root)
    except ir.MLIRError as e:
        internal = next((r.internal_error for r in runners if r.internal_error), None)
        if internal is not None:
            raise e from internal
        raise
    finally:
        if filtered and captured:
            sys.stderr.write(_filter_dumps(captured[0], print_ir_before_all, print_ir_after_all,
                                           before, after))
            sys.stderr.flush()
    return module
