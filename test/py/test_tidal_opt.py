"""tidal-opt as a program (subprocess: exit codes, stderr) and its pieces
(split-input-file, the diagnostic verifier) in process."""
import os
import shutil
import subprocess
import sysconfig
import textwrap

import pytest

from tidal.tools.diagnostics import Diag, DiagnosticVerifier, SourceSet, format_diag
from tidal.tools.source import split_input


def _tidal_opt():
    script = os.path.join(sysconfig.get_path("scripts"), "tidal-opt")
    return script if os.path.exists(script) else shutil.which("tidal-opt")


OPT_TOOL = _tidal_opt()
GRAPH = textwrap.dedent("""\
    // a graph with a dead op
    !v = !tidal.tensor<[4], f32>
    sdg.graph @g dims [t < T] {
      %x = sdg.input "x" domain [t] : !v
      %e = sdg.unary exp %x[t] domain [t] : (!v) -> !v
      sdg.output "x" %x[t] domain [t] : !v
    }
    func.func @f() {
      return
    }
    """)


def run(*args, stdin=None, cwd=None):
    assert OPT_TOOL, "tidal-opt is not installed"
    return subprocess.run([OPT_TOOL, *map(str, args)], input=stdin, capture_output=True,
                          text=True, cwd=cwd)


def assert_clean_failure(out):
    """Failed as a user error: status 1 (not a signal), no traceback."""
    assert out.returncode == 1, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr


@pytest.fixture
def graph_file(tmp_path):
    path = tmp_path / "graph.mlir"
    path.write_text(GRAPH)
    return path


def test_runs_a_mixed_pipeline_and_writes_the_output(graph_file, tmp_path):
    out_file = tmp_path / "out.mlir"
    out = run(graph_file, "--pass-pipeline=builtin.module(sdg-dce,canonicalize,cse)", "-o", out_file)
    assert out.returncode == 0, out.stderr
    text = out_file.read_text()
    assert "sdg.unary exp" not in text and 'sdg.output "x"' in text and "func.func @f" in text
    assert out.stdout == ""


def test_malformed_input_names_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text(GRAPH.replace("sdg.unary exp %x[t]", "sdg.unary exp %x[t"))
    out = run(bad, "--sdg-dce")
    assert_clean_failure(out)
    first = out.stderr.splitlines()[0]
    assert first.startswith(f"{bad}:5:") and ": error: " in first
    assert "sdg.unary exp %x[t" in out.stderr.splitlines()[1]  # the source line is shown
    assert out.stdout == ""


def test_verifier_errors_in_multi_op_input_keep_the_file_name_and_line(tmp_path):
    # Several top-level ops with an alias: parsed through the implicit module.
    bad = tmp_path / "verify.mlir"
    bad.write_text(GRAPH.replace("domain [t] : (!v) -> !v", "domain [t, t] : (!v) -> !v"))
    out = run(bad)
    assert_clean_failure(out)
    assert out.stderr.startswith(f"{bad}:5:8: error: 'sdg.unary' op domain lists dimension "
                                 "'t' twice")


def test_stdin_is_named_stdin(graph_file):
    out = run("-", "--sdg-dce", stdin=GRAPH.replace("return", "retur"))
    assert_clean_failure(out)
    assert out.stderr.startswith("<stdin>:9:3: error: custom op 'retur' is unknown")
    ok = run("--sdg-dce", stdin=GRAPH)
    assert ok.returncode == 0 and "sdg.unary exp" not in ok.stdout


def test_unknown_pass_bad_option_missing_file_unknown_flag(graph_file, tmp_path):
    out = run(graph_file, "--pass-pipeline=builtin.module(cse,bogus-pass)")
    assert_clean_failure(out)
    assert out.stderr.splitlines() == [
        "<pass-pipeline>:1:20: error: 'bogus-pass' does not refer to a registered pass or pass "
        "pipeline", "builtin.module(cse,bogus-pass)", " " * 19 + "^"]
    out = run(graph_file, "--sdg-dce=keep-udfs=perhaps")
    assert_clean_failure(out)
    assert "invalid value 'perhaps' for option 'keep-udfs' of pass 'sdg-dce'" in out.stderr
    missing = tmp_path / "missing.mlir"
    out = run(missing)
    assert_clean_failure(out)
    assert f"cannot open input file '{missing}'" in out.stderr
    out = run(graph_file, "--bogus-flag")
    assert_clean_failure(out)
    assert "Unknown command line argument '--bogus-flag'" in out.stderr


PLUGIN = textwrap.dedent("""\
    from dataclasses import dataclass
    from typing import ClassVar
    from tidal.passes import ModulePass, PassFailure, option, register_pass

    @dataclass
    class Picky(ModulePass):
        name: ClassVar[str] = "test-picky"
        summary: ClassVar[str] = "rejects the first graph"
        crash: bool = option(False)

        def run(self, op):
            if self.crash:
                raise RuntimeError("boom")
            graph = op.regions[0].blocks[0].operations[0]
            raise PassFailure("this graph is not good enough", graph)

    register_pass(Picky)
    """)


def test_a_failing_tidal_pass_is_a_diagnostic_and_a_crash_an_internal_error(graph_file, tmp_path):
    plugin = tmp_path / "picky.py"
    plugin.write_text(PLUGIN)
    out = run(graph_file, f"--load-pass-plugin={plugin}", "--sdg-dce", "--test-picky")
    assert_clean_failure(out)
    assert out.stderr.splitlines()[:2] == [
        f"{graph_file}:3:1: error: this graph is not good enough", "sdg.graph @g dims [t < T] {"]
    out = run(graph_file, f"--load-pass-plugin={plugin}", "--test-picky=crash=true")
    assert out.returncode == 1
    assert "error: internal error in pass 'test-picky': RuntimeError: boom" in out.stderr
    assert "Traceback" in out.stderr  # a bug in a pass is shown as one


def test_split_input_file_with_verify_diagnostics(tmp_path):
    path = tmp_path / "split.mlir"
    path.write_text(textwrap.dedent("""\
        func.func @a() {
          return
        }
        // -----
        func.func @b() {
          // expected-error@+1 {{custom op 'retur' is unknown}}
          retur
        }
        // -----
        func.func @c() {
          // expected-error@+1 {{this is never said}}
          return
        }
        """))
    out = run(path, "--split-input-file", "--verify-diagnostics")
    assert_clean_failure(out)
    assert out.stderr.splitlines() == [
        f'{path}:11:6: error: expected error "this is never said" was not produced',
        "  // expected-error@+1 {{this is never said}}", "     ^" + "~" * 17]
    chunks = out.stdout.split("// -----\n")
    assert len(chunks) == 3 and "@a" in chunks[0] and chunks[1] == "" and "@c" in chunks[2]
    plain = run(path, "--split-input-file")
    assert_clean_failure(plain)
    assert plain.stderr.startswith(f"{path}:7:3: error: custom op 'retur' is unknown")


def test_print_ir_after_all_and_list_passes(graph_file):
    out = run(graph_file, "--sdg-dce", "--cse", "--mlir-print-ir-after-all", "-o", os.devnull)
    assert out.returncode == 0
    assert out.stderr.index("// -----// IR Dump After SdgDeadCodeElimination (sdg-dce) //----- //") \
        < out.stderr.index("// -----// IR Dump After CSE (cse) //----- //")
    listing = run("--list-passes")
    assert listing.returncode == 0
    text = listing.stdout
    assert text.startswith("Tidal passes:\n")
    import tidal.lowering.passes  # noqa: F401  (tidal-opt registers them when it starts)
    from tidal.passes.registry import all_pass_names
    tidal_section = text[:text.index("Upstream MLIR passes")]
    listed = [line.split()[0][2:] for line in tidal_section.splitlines() if line.startswith("  --")]
    assert listed == all_pass_names()  # every registered Tidal pass, sorted
    assert "    --keep-udfs=<bool>" in text and "(default: true)" in text
    upstream = text.index("Upstream MLIR passes")
    assert text.index("--sdg-dce") < upstream < text.index("  --canonicalize ") \
        and "    --max-iterations=<long>" in text


def test_single_op_inputs_and_no_implicit_module(tmp_path):
    one = tmp_path / "one.mlir"
    one.write_text("func.func @f() {\n  return\n}\n")
    out = run(one)
    assert out.returncode == 0 and out.stdout.startswith("module {\n  func.func @f()")
    two = tmp_path / "two.mlir"
    two.write_text(GRAPH)
    out = run(two, "--no-implicit-module")
    assert_clean_failure(out)
    assert out.stderr.startswith(f"{two}:0:0: error: source must contain a single top-level "
                                 "operation, found: 2")


# In-process pieces.

def test_split_input_follows_mlir_opt():
    text = "a // ----- b\nc // --- d\ne\n// -----0\nf\n// -----\ng"
    chunks, warnings = split_input(text, "x.mlir")
    assert [c.text for c in chunks] == ["a ", " b\nc // --- d\ne\n// -----0\nf\n", "\ng"]
    # padded chunks keep the original line and column of every character
    assert chunks[1].padded == "          " + chunks[1].text
    assert chunks[2].padded == "\n" * 5 + " " * 8 + "\ng"
    # `// ---` not followed by `--`, and upstream's check of the third dash against '0'
    assert warnings == [(2, 9, "near miss with file split marker"),
                        (4, 7, "near miss with file split marker")]


def _verify(text, diags, only_expected=False):
    sources = SourceSet()
    sources.add("f.mlir", text)
    v = DiagnosticVerifier("f.mlir", text, sources, only_expected)
    for d in diags:
        v.process(d)
    return v.finish(), v.output


VERIFY_TEXT = textwrap.dedent("""\
    op1
    // expected-warning@above {{w1}}
    // expected-remark@above {{r1}}
    // expected-note@below {{n1}}
    // expected-error-re@below {{value {{[0-9]+}} is bad}}
    op6
    op7 // expected-error {{same line}}
    // expected-error@unknown {{nowhere}}
    // expected-warning@-8 {{w2}}
    """)


def test_verifier_matches_every_designator():
    diags = [Diag("warning", "a w1 b", "f.mlir", 1, 1), Diag("remark", "r1", "f.mlir", 1, 2),
             Diag("error", "value 42 is bad", "f.mlir", 6, 1, notes=[
                 Diag("note", "see n1", "f.mlir", 6, 3),
                 Diag("note", "see current operation: op6", "f.mlir", 6, 1)]),
             Diag("error", "on the same line", "f.mlir", 7, 1),
             Diag("error", "nowhere to be found", None), Diag("warning", "w2", "f.mlir", 1, 1)]
    ok, output = _verify(VERIFY_TEXT, diags)
    assert ok and output == []


def test_verifier_reports_like_mlir_opt():
    diags = [Diag("error", "w1", "f.mlir", 1, 1),          # near miss: a warning was expected
             Diag("error", "value x is bad", "f.mlir", 6, 1),  # the regex wants digits
             Diag("error", "same line", "other.mlir", 7, 1)]   # another file: unexpected
    ok, output = _verify(VERIFY_TEXT, diags)
    assert not ok
    assert output[0] == "f.mlir:2:4: error: 'error' diagnostic emitted when expecting a 'warning'" \
                        "\n// expected-warning@above {{w1}}\n   ^"
    assert output[1].startswith("f.mlir:6:1: error: unexpected error: value x is bad\nop6\n^")
    assert output[2] == "other.mlir:7:1: error: unexpected error: same line"
    missing = [o.splitlines()[0] for o in output[3:]]
    assert missing == ['f.mlir:2:4: error: expected warning "w1" was not produced',
                       'f.mlir:3:4: error: expected remark "r1" was not produced',
                       'f.mlir:4:4: error: expected note "n1" was not produced',
                       'f.mlir:5:4: error: expected error "value {{[0-9]+}} is bad" was not produced',
                       'f.mlir:7:8: error: expected error "same line" was not produced',
                       'f.mlir:9:4: error: expected warning "w2" was not produced',
                       # as in MLIR: expectations at unknown locations come last
                       '<unknown>:0: error: expected error "nowhere" was not produced']
    assert output[3].splitlines()[2] == "   ^~"  # the range covers the expected text
    ok, output = _verify(VERIFY_TEXT, diags[:1], only_expected=True)
    assert not ok and all("was not produced" in o for o in output)


def test_verifier_rejects_bad_regexes():
    ok, output = _verify("// expected-error-re {{a {{[}} b}}\n", [])
    assert not ok and "invalid regex" in output[0]


def test_format_diag_shows_source_once_per_location():
    sources = SourceSet()
    sources.add("f.mlir", "\tabc def\nline2")
    d = Diag("error", "boom", "f.mlir", 1, 6, notes=[Diag("note", "same place", "f.mlir", 1, 6),
                                                      Diag("note", "elsewhere", "f.mlir", 2, 1),
                                                      Diag("note", "no location", None)])
    assert format_diag(d, sources).splitlines() == [
        "f.mlir:1:6: error: boom", "        abc def", "            ^",
        "f.mlir:1:6: note: same place",
        "f.mlir:2:1: note: elsewhere", "line2", "^",
        "<unknown>:0: note: no location"]


def test_main_in_process_reports_pipeline_errors(capsys):
    from tidal.tools.opt import main
    assert main(["--pass-pipeline=builtin.module(sdg-dce{nope=1})", os.devnull]) == 1
    err = capsys.readouterr().err
    assert "no such option 'nope' for pass 'sdg-dce'; valid options: keep-udfs=<bool>" in err
    assert main(["--mlir-print-ir-after=nope", os.devnull]) == 1
    assert "'nope' is not a registered pass" in capsys.readouterr().err
    assert main([os.devnull, "--pass-pipeline=cse", "--sdg-dce"]) == 1
    assert main(["--load-pass-plugin=/nonexistent/plugin.py", os.devnull]) == 1
    assert "cannot load pass plugin" in capsys.readouterr().err


DEEP = {   # each nests n levels of one kind of MLIR syntax that the parser recurses on
    "modules": lambda n: "builtin.module {" * n + "}" * n,
    "regions": lambda n: '"test.op"() ({' * n + "})" * n,
    "arrays": lambda n: '"test.op"() {a = ' + "[" * n + "]" * n + "} : () -> ()",
    "types": lambda n: '"test.op"() : () -> ' + "tuple<" * n + "i32" + ">" * n,
    "affine": lambda n: '"test.op"() {m = affine_map<(d0) -> (' + "(" * n + "d0" + ")" * n + ")>} : () -> ()",
}


@pytest.mark.parametrize("kind", sorted(DEEP))
@pytest.mark.parametrize("n", [20000, 100000])
def test_deeply_nested_input_is_a_diagnostic_not_a_signal(tmp_path, kind, n):
    from tidal.tools.source import MAX_IR_NESTING
    path = tmp_path / "deep.mlir"
    path.write_text("// deep\n" + DEEP[kind](n) + "\n")
    r = run("--allow-unregistered-dialect", path)
    assert r.returncode == 1, (r.returncode, r.stderr[-300:])
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"{path}:2:") and \
        f"nested too deeply: more than {MAX_IR_NESTING} levels of brackets" in first, first[:300]


def test_nesting_within_the_limit_parses():
    # 4,000 nested modules overflowed the main thread's 8 MiB stack (signal 11);
    # tidal-opt parses on a thread with a larger one.
    from tidal.tools.source import MAX_IR_NESTING
    n = MAX_IR_NESTING - 1
    r = run("-", stdin="builtin.module {" * n + "}" * n)
    assert r.returncode == 0, (r.returncode, r.stderr[-300:])
    assert r.stdout.count("module {") == n


def test_brackets_in_strings_and_comments_do_not_count():
    from tidal.tools.source import MAX_IR_NESTING, too_deep
    n = MAX_IR_NESTING + 1
    assert too_deep('"test.op"() {s = "' + "[" * n + '"} : () -> ()\n// ' + "{" * n) is None
    assert too_deep('"test.op"() {s = "a\\"' + "[" * n + '"} : () -> ()') is None   # escaped quote
    assert too_deep("[" * n) == (1, n)
    assert too_deep("(" * MAX_IR_NESTING + " -> " * 10) is None                   # arrows close nothing
