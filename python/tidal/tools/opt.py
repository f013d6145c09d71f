"""tidal-opt: mlir-opt for Tidal, running upstream and Tidal passes together.

    tidal-opt in.mlir --pass-pipeline='builtin.module(sdg-dce,canonicalize)' -o out.mlir
    tidal-opt in.mlir --sdg-dce --canonicalize          (passes as flags, in order)
    tidal-opt in.mlir --split-input-file --verify-diagnostics
    tidal-opt --list-passes

Diagnostics are printed as mlir-opt prints them (`file:line:col: error: ...`
with the source line) and every failure exits with status 1.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import threading
import traceback

from mlir import ir

from tidal.dialects import make_context
from tidal.passes import (PassFailure, PipelineError, all_pass_names, build_pass_manager,
                          get_pass, is_known_pass, parse_pipeline, pass_options, run_pipeline)
from tidal.passes.base import format_option_value
import tidal.lowering.passes  # noqa: F401,E402  (registers sdg-schedule, sdg-lower-to-scf, sdg-view-graph)

from .diagnostics import Diag, DiagnosticVerifier, SourceSet, format_diag, from_mlir
from .source import BYTECODE_MAGIC, MAX_IR_NESTING, SPLIT_MARKER, Chunk, parse_source, split_input, too_deep

PROG = "tidal-opt"
__all__ = ["main"]


class UsageError(Exception):
    pass


class PluginError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would exit(2) with its own format
        raise UsageError(message)


def _parser() -> _Parser:
    p = _Parser(prog=PROG, allow_abbrev=False,
                description="Runs MLIR and Tidal passes on MLIR files (mlir-opt conventions). "
                            "Passes may also be given as flags, e.g. --sdg-dce --canonicalize.")
    p.add_argument("input", nargs="?", default="-", help="input file ('-' for stdin)")
    p.add_argument("-o", dest="output", default="-", metavar="FILE", help="output file")
    p.add_argument("--pass-pipeline", metavar="PIPELINE",
                   help="e.g. 'builtin.module(sdg-dce{keep-udfs=false},func.func(canonicalize))'")
    p.add_argument("--split-input-file", metavar="MARKER", nargs="?", const=SPLIT_MARKER,
                   help=f"process chunks separated by '{SPLIT_MARKER}' (or =MARKER) independently")
    p.add_argument("--verify-diagnostics", nargs="?", const="all", choices=["all", "only-expected"],
                   help="check diagnostics against expected-* comments (=only-expected: "
                        "ignore unexpected ones)")
    p.add_argument("--list-passes", action="store_true", help="list Tidal and upstream passes")
    p.add_argument("--load-pass-plugin", action="append", default=[], metavar="MODULE",
                   help="import a Python module or .py file that registers Tidal passes "
                        "(tidal.passes.register_pass)")
    p.add_argument("--mlir-print-ir-before-all", action="store_true")
    p.add_argument("--mlir-print-ir-after-all", action="store_true")
    p.add_argument("--mlir-print-ir-before", action="append", default=[], metavar="PASS")
    p.add_argument("--mlir-print-ir-after", action="append", default=[], metavar="PASS")
    p.add_argument("--mlir-print-op-generic", action="store_true")
    p.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations (loc(...))")
    p.add_argument("--allow-unregistered-dialect", action="store_true")
    p.add_argument("--no-implicit-module", action="store_true",
                   help="the input's single top-level op is the root (no implicit builtin.module)")
    p.add_argument("--verify-each", default="true", choices=["true", "false", "1", "0"],
                   help="verify the IR after each pass (default true)")
    return p


# Options that take an optional value only as `--opt=value` (llvm's
# ValueOptional): a bare `--split-input-file` must not eat the next argument.
_VALUE_OPTIONAL = {"--split-input-file": SPLIT_MARKER, "--verify-diagnostics": "all",
                   "--verify-each": "true"}


def _load_plugins(argv: list[str]) -> None:
    """Imports --load-pass-plugin modules first, so their passes can be
    named in the pipeline and as flags."""
    values = [a.split("=", 1)[1] for a in argv if a.startswith(("--load-pass-plugin=",
                                                                "-load-pass-plugin="))]
    values += [argv[i + 1] for i, a in enumerate(argv[:-1])
               if a in ("--load-pass-plugin", "-load-pass-plugin")]
    for value in values:
        try:
            if value.endswith(".py"):
                spec = importlib.util.spec_from_file_location(
                    "tidal_pass_plugin_" + pathlib.Path(value).stem, value)
                if spec is None or spec.loader is None:
                    raise ImportError("not a Python file")
                module = importlib.util.module_from_spec(spec)
                sys.modules[spec.name] = module  # dataclasses look their module up
                spec.loader.exec_module(module)
            else:
                importlib.import_module(value)
        except Exception as e:  # noqa: BLE001 - any failure is the user's plugin
            raise PluginError(f"cannot load pass plugin '{value}': {type(e).__name__}: {e}") from None


def _normalise(argv: list[str], parser: _Parser) -> tuple[list[str], list[str]]:
    """mlir-opt spellings -> argparse's, and pass flags -> pipeline elements."""
    known = set(parser._option_string_actions)  # noqa: SLF001 - argparse has no public API
    out, passes, positional_only = [], [], False
    for arg in argv:
        if positional_only or arg == "-" or not arg.startswith("-"):
            out.append(arg)
            continue
        if arg == "--":
            positional_only = True
            out.append(arg)
            continue
        if arg.startswith("-o="):
            out += ["-o", arg[3:]]
            continue
        if not arg.startswith("--") and len(arg.split("=")[0]) > 2:
            arg = "-" + arg  # llvm::cl accepts -split-input-file
        flag, eq, value = arg.partition("=")
        if flag in _VALUE_OPTIONAL and not eq:
            arg = f"{flag}={_VALUE_OPTIONAL[flag]}"
        if flag in known or flag in ("-o", "-h"):
            out.append(arg)
            continue
        name = flag[2:]
        if name and is_known_pass(name):
            passes.append(f"{name}{{{value}}}" if eq else name)
            continue
        raise UsageError(f"Unknown command line argument '{arg}'.")
    return out, passes


def _mlir_opt() -> str | None:
    import mlir
    candidate = pathlib.Path(list(mlir.__path__)[0]) / "bin" / "mlir-opt"
    return str(candidate) if candidate.exists() else shutil.which("mlir-opt")


def list_passes(out) -> int:
    """Tidal passes (from the registry) then upstream ones, as listed by the
    `mlir-opt --list-passes` shipped with the bindings (same upstream MLIR)."""
    out.write("Tidal passes:\n")
    for name in all_pass_names():
        cls = get_pass(name)
        out.write(f"  --{name:<46} -   {cls.summary}\n")
        for spec in pass_options(cls):
            text = f"    --{spec.name}=<{spec.type_name}>"
            out.write(f"{text:<50} - {spec.help} (default: {format_option_value(spec.default)})\n")
    tool = _mlir_opt()
    if tool is None:
        out.write("\nUpstream MLIR passes: mlir-opt not found, cannot list them.\n")
        return 0
    listing = subprocess.run([tool, "--list-passes"], capture_output=True, text=True)
    out.write(f"\nUpstream MLIR passes (from `{tool} --list-passes`):\n")
    lines = listing.stdout.splitlines()
    out.write("\n".join(lines[1:] if lines and lines[0] == "Passes:" else lines) + "\n")
    return 0


def _err(text: str) -> None:
    sys.stderr.write(text if text.endswith("\n") else text + "\n")
    sys.stderr.flush()


def _read_input(path: str):
    """(name, text-or-bytes) or raises OSError / UnicodeDecodeError."""
    if path == "-":
        data, name = sys.stdin.buffer.read(), "<stdin>"
    else:
        with open(path, "rb") as f:
            data, name = f.read(), path
    if data.startswith(BYTECODE_MAGIC):
        return name, data
    return name, data.decode("utf-8")


class _Driver:
    def __init__(self, args, pipeline_text: str, verifier: DiagnosticVerifier | None = None):
        self.args, self.pipeline_text, self.verifier = args, pipeline_text, verifier
        self.print_before = [n for v in args.mlir_print_ir_before for n in v.split(",") if n]
        self.print_after = [n for v in args.mlir_print_ir_after for n in v.split(",") if n]

    def process(self, name: str, source, chunk: Chunk | None) -> tuple[bool, str]:
        """Parses and runs one input (or chunk); prints its diagnostics.
        Returns (success, printed IR or '')."""
        args = self.args
        text = chunk.padded if chunk else source
        sources = SourceSet()  # source lines shown under messages: the whole input's
        if isinstance(source, str):
            sources.add(name, source)
        ctx = make_context()
        ctx.allow_unregistered_dialects = args.allow_unregistered_dialect
        ctx.enable_multithreading(False)
        diags, failed, internal, output = [], False, None, ""

        def on_diagnostic(d):
            diags.append(from_mlir(d))
            return True

        handler = ctx.attach_diagnostic_handler(on_diagnostic)
        try:
            with ctx:
                deep = too_deep(text) if isinstance(text, str) else None
                if deep is not None:
                    diags.append(Diag("error", f"nested too deeply: more than {MAX_IR_NESTING} levels of "
                                      "brackets ({, (, [, <); the input is not parsed", name, *deep))
                    root, failed = None, True
                else:
                    try:
                        root = parse_source(text, name, not args.no_implicit_module)
                    except ir.MLIRError as e:
                        diags += [from_mlir(d) for d in e.error_diagnostics]
                        root, failed = None, True
                if root is not None and self.pipeline_text:
                    try:
                        run_pipeline(root, self.pipeline_text,
                                     print_ir_before_all=args.mlir_print_ir_before_all,
                                     print_ir_after_all=args.mlir_print_ir_after_all,
                                     print_ir_before=self.print_before,
                                     print_ir_after=self.print_after,
                                     print_generic_op_form=args.mlir_print_op_generic,
                                     verify_each=args.verify_each in ("true", "1"))
                    except ir.MLIRError as e:
                        diags += [from_mlir(d) for d in e.error_diagnostics]
                        failed, internal = True, e.__cause__
                    except PipelineError as e:
                        _err(e.format())
                        failed = True
                if root is not None and not failed:
                    output = root.operation.get_asm(
                        print_generic_op_form=args.mlir_print_op_generic,
                        enable_debug_info=args.mlir_print_debuginfo) + "\n"
        finally:
            handler.detach()
        failed = failed or any(d.severity == "error" for d in diags)
        if self.verifier is not None:  # mismatches now, missing ones at the end
            for d in diags:
                self.verifier.process(d)
            ok = True
            if self.verifier.output:
                _err("\n".join(self.verifier.output))
                self.verifier.output.clear()
        else:
            ok = not failed
            if diags:
                _err("\n".join(format_diag(d, sources) for d in diags))
        if internal is not None and not isinstance(internal, PassFailure):
            _err(f"{PROG}: internal error in a Tidal pass (a bug, please report it):\n"
                 + "".join(traceback.format_exception(internal)))
        return ok, output


def _check_pipeline(pipeline_text: str, args) -> None:
    """Reports pipeline errors once, before any input is read."""
    if pipeline_text.strip():
        pipeline = parse_pipeline(pipeline_text)
        if not args.no_implicit_module:
            with make_context() as ctx:
                build_pass_manager(pipeline, ctx)
    for flag, values in (("--mlir-print-ir-before", args.mlir_print_ir_before),
                         ("--mlir-print-ir-after", args.mlir_print_ir_after)):
        for name in (n for v in values for n in v.split(",") if n):
            if not is_known_pass(name):
                raise UsageError(f"for the {flag} option: '{name}' is not a registered pass")


def _run(argv: list[str]) -> int:
    parser = _parser()
    _load_plugins(argv)
    argv, pass_flags = _normalise(argv, parser)
    args = parser.parse_args(argv)
    if args.list_passes:
        return list_passes(sys.stdout)
    if args.pass_pipeline is not None and pass_flags:
        raise UsageError("'--pass-pipeline' option can't be used with individual pass options")
    pipeline_text = args.pass_pipeline or ""
    if pass_flags:
        pipeline_text = f"builtin.module({','.join(pass_flags)})"
    try:
        _check_pipeline(pipeline_text, args)
    except PipelineError as e:
        _err(e.format())
        return 1
    try:
        name, source = _read_input(args.input)
    except OSError as e:
        _err(f"error: cannot open input file '{args.input}': {e.strerror or e}")
        return 1
    except UnicodeDecodeError as e:
        _err(f"{args.input}: error: input is neither UTF-8 text nor MLIR bytecode ({e.reason} "
             f"at byte {e.start})")
        return 1
    # As in mlir-opt 22, one verifier covers the whole input (all chunks): a
    # mismatch is reported when it happens, unmet expectations at the end.
    verifier = None
    if args.verify_diagnostics:
        whole = SourceSet()
        if isinstance(source, str):
            whole.add(name, source)
        verifier = DiagnosticVerifier(name, source if isinstance(source, str) else "", whole,
                                      args.verify_diagnostics == "only-expected")
    driver = _Driver(args, pipeline_text.strip(), verifier)
    if args.split_input_file and isinstance(source, str):
        chunks, warnings = split_input(source, name, args.split_input_file)
        warn_sources = SourceSet()
        warn_sources.add(name, source)
        for line, col, msg in warnings:
            _err(format_diag(Diag("warning", msg, name, line, col), warn_sources))
        results = [driver.process(name, source, c) for c in chunks]
        marker = SPLIT_MARKER + "\n"
        output = marker.join(out for _, out in results)
        ok = all(r for r, _ in results)
    else:
        ok, output = driver.process(name, source, None)
    if verifier is not None:
        ok = verifier.finish()
        if verifier.output:
            _err("\n".join(verifier.output))
    if args.output == "-":
        sys.stdout.write(output)
        sys.stdout.flush()
    elif ok:
        try:
            with open(args.output, "w") as f:
                f.write(output)
        except OSError as e:
            _err(f"error: cannot open output file '{args.output}': {e.strerror or e}")
            return 1
    return 0 if ok else 1


# MLIR's parser, verifier and printer recurse once or more per nesting level of the
# IR. tidal-opt runs on a thread with this much stack, so that every input within
# source.MAX_IR_NESTING (checked before parsing) is far from overflowing it: 8 MiB,
# the main thread's, overflowed at about 4,000 nested modules.
_STACK_BYTES = 512 << 20


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `tidal-opt` console script."""
    argv = sys.argv[1:] if argv is None else list(argv)
    outcome: list = []

    def work():
        try:
            outcome.append((_main(argv), None))
        except BaseException as e:    # re-raised on the caller's thread
            outcome.append((None, e))

    worker = threading.Thread(target=work, name=PROG, daemon=True)
    previous = threading.stack_size(_STACK_BYTES)   # read when the thread starts
    try:
        worker.start()
    finally:
        threading.stack_size(previous)
    try:
        worker.join()
    except KeyboardInterrupt:
        return 130
    code, error = outcome[0]
    if error is not None:
        raise error
    return code


def _main(argv: list[str]) -> int:
    try:
        return _run(argv)
    except UsageError as e:
        _err(f"{PROG}: {e}\n{PROG}: Try: '{PROG} --help'")
        return 1
    except PluginError as e:
        _err(f"{PROG}: error: {e}")
        return 1
    except BrokenPipeError:  # `tidal-opt ... | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
