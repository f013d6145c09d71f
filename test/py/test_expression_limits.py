"""Limits of the two parsers of symbolic expressions: the C++ one of the
dialects (tidal-opt, mlir-opt, the Python bindings) and `tidal.symbolic.parse`
(used by the Tidal passes on attribute text).

* Nesting (parentheses, min/max/select calls, prefix `-` and `not`) deeper
  than 256 levels is rejected with a diagnostic at the token that opens level
  257: never a crash (3,000 nested parentheses used to segfault tidal-opt) nor
  a RecursionError.
* Long flat expressions (`t + t + ... + t`) take time linear in their length
  (10,000 terms used to take 3 s in tidal-opt, 100,000 minutes).

Timings are CPU times (the machine is shared) compared between sizes: linear
is t(100k) = 10 t(10k); the tests allow 30x, never an absolute duration.
"""
import os
import re
import resource
import shutil
import subprocess
import sys
import sysconfig
import time

import pytest
from mlir import ir

from tidal.dialects import make_context
from tidal.symbolic import (Dim, ParseError, free_symbols, parse, simplify, to_mlir_text,
                            to_text)
from tidal.symbolic.text_parser import MAX_NESTING_DEPTH

MESSAGE = ("expression nested too deeply (more than 256 levels of parentheses, calls and "
           "prefix operators)")
LIMIT = 256
t = Dim("t").step


def _tidal_opt():
    script = os.path.join(sysconfig.get_path("scripts"), "tidal-opt")
    return script if os.path.exists(script) else shutil.which("tidal-opt")


OPT_TOOL = _tidal_opt()


def tidal_opt(*args, timeout=60):
    """(completed process, CPU seconds it used)."""
    assert OPT_TOOL, "tidal-opt is not installed"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([OPT_TOOL, *map(str, args)], capture_output=True, text=True,
                         timeout=timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cpu_time(f, repeat=3):
    """The least CPU time of `repeat` calls of f, and f's result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        result = None
        start = time.process_time()
        result = f()
        best = min(best, time.process_time() - start)
    return best, result


def nested(opener, n, inner="t"):
    closer = ")" * opener.count("(")
    return opener * n + inner + closer * n


def opening(text, level):
    """The offset of the token that opens nesting level `level` (1-based) in a
    text whose every `(`, `-`, `~` and `not` opens a level."""
    return [m.start() for m in re.finditer(r"[(~-]|\bnot\b", text)][level - 1]


V = "!tidal.tensor<[4], f32>"
# One line per place an expression can be; {} is the expression.
PLACES = {
    "operand index": f"  %y = sdg.unary exp %x[{{}}] domain [t] : ({V}) -> {V}",
    "type shape": '  %y = sdg.input "y" domain [t] : !tidal.tensor<[4, {}], f32>',
    "#tidal.expr": f'  sdg.output "x" %x[t] domain [t] {{{{cond = #tidal.expr<{{}} eq 0>}}}} : {V}',
}
OPENERS = ["(", "-", "not ", "min(t, ", "max(0, -("]


def graph(line):
    return f'sdg.graph @g dims [t < T] {{\n  %x = sdg.input "x" domain [t] : {V}\n{line}\n}}\n'


@pytest.mark.parametrize("place, opener", [("operand index", o) for o in OPENERS]
                         + [(p, "(") for p in sorted(PLACES) if p != "operand index"])
def test_tidal_opt_rejects_3000_levels_with_a_diagnostic_at_level_257(tmp_path, place, opener):
    expression = nested(opener, 3000)
    line = PLACES[place].format(expression)
    path = tmp_path / "deep.mlir"
    path.write_text(graph(line))
    out, _ = tidal_opt(path, "--sdg-verify-dependences")
    assert out.returncode == 1, (out.returncode, out.stderr[-2000:])  # not a signal
    assert "Traceback" not in out.stderr
    column = line.index(expression) + opening(expression, LIMIT + 1) + 1
    assert f"{path}:3:{column}: error: " in out.stderr, out.stderr[:500]
    assert MESSAGE in out.stderr
    assert out.stderr.count("error:") == 1


def test_tidal_opt_accepts_256_levels_and_its_output_parses_back(tmp_path):
    # `- -t` prints as `--t`: the printed form never nests deeper than the
    # input, so it parses back (as `-(-t)` it would nest 511 levels).
    expressions = ["-" * LIMIT + "t", nested("(", LIMIT), nested("-(", LIMIT // 2),
                   nested("min(t, ", LIMIT, "T"), nested("t + (", LIMIT - 1, "t - 1")]
    lines = [f"  %y{i} = sdg.unary exp %x[{e}] domain [t] : ({V}) -> {V}"
             for i, e in enumerate(expressions)]
    path = tmp_path / "limit.mlir"
    path.write_text(graph("\n".join(lines)))
    first, _ = tidal_opt(path)
    assert first.returncode == 0, first.stderr[:2000]
    printed = tmp_path / "printed.mlir"
    printed.write_text(first.stdout)
    # Through the Python parser too (sdg-verify-dependences parses every index).
    second, _ = tidal_opt(printed, "--sdg-verify-dependences")
    assert second.returncode == 0, second.stderr[:2000]
    assert second.stdout == first.stdout
    assert f"[{'-' * LIMIT}t]" in first.stdout
    assert f"[{'-' * (LIMIT // 2)}t]" in first.stdout
    assert f"[{nested('min(t, ', LIMIT, 'T')}]" in first.stdout


def test_bindings_parse_the_limit_and_reject_beyond_it():
    with make_context() as ctx:
        ok = ir.Attribute.parse(f"#tidal.index<[{nested('(', LIMIT)}, {'-' * LIMIT}1]>", ctx)
        assert str(ok) == f"#tidal.index<[t, {'-' * LIMIT}1]>"
        with pytest.raises(ir.MLIRError, match="nested too deeply"):
            ir.Attribute.parse(f"#tidal.expr<{nested('(', LIMIT + 1, 'true')}>", ctx)
        with pytest.raises(ir.MLIRError, match="nested too deeply"):
            ir.Type.parse(f"!tidal.tensor<[{nested('max(0, ', 3000)}], f32>", ctx)


def _linear(measure, sizes=(1_000, 10_000, 100_000), factor=30):
    """Asserts measure(n) grows linearly over sizes (10x apart); the smaller
    sizes first, so that quadratic code fails before the largest size."""
    times = {}
    for small, large in zip(sizes, sizes[1:]):
        times.setdefault(small, measure(small))
        times[large] = measure(large)
        assert times[large] < factor * times[small], times


def _flat(n, term="t"):
    return " + ".join([term] * n)


def test_cxx_parser_and_printer_are_linear_in_flat_length():
    with make_context() as ctx:
        def measure(n):
            text = _flat(n)
            seconds, attr = cpu_time(lambda: ir.Attribute.parse(f"#tidal.index<[{text}, 0:{text}]>",
                                                                ctx))
            assert str(attr) == f"#tidal.index<[{text}, 0:{text}]>"
            return seconds

        _linear(measure)


def test_cxx_scope_check_is_linear_in_distinct_symbols():
    # The shape uses n symbols that are not in scope: the verifier lists the
    # symbols of the shape (once each) and reports the first.
    with make_context() as ctx:
        def measure(n):
            names = " + ".join(f"a{i}" for i in range(n))
            text = (f'sdg.graph @g dims [t < T] {{\n  %x = sdg.input "x" domain [t] : '
                    f"!tidal.tensor<[{names}], f32>\n}}")

            def verify():
                with pytest.raises(ir.MLIRError, match="uses 'a0', which is neither"):
                    ir.Module.parse(text, ctx)

            return cpu_time(verify)[0]

        _linear(measure, sizes=(10_000, 100_000))


def test_python_parse_print_simplify_are_linear_in_flat_length():
    names = (f"x{i}" for i in range(1000))

    def measure(n):
        def work():
            # A new symbol each time: expressions are hash-consed and
            # simplify caches, so a repeated text would be faster.
            x = Dim(next(names)).step
            text = _flat(n, x.name)
            e = parse(text)
            assert to_mlir_text(e) == text and to_text(e) == text
            assert simplify(e).same(n * x) and free_symbols(e) == {x}

        return cpu_time(work, repeat=1 if n > 10_000 else 3)[0]

    _linear(measure)


@pytest.mark.parametrize("opener", ["(", "-", "~", "not ", "min(t, ", "select(true, 0, ",
                                    "max(0, -("])
def test_python_parser_has_the_limit_of_the_cxx_one(opener):
    assert MAX_NESTING_DEPTH == LIMIT
    inner = "t eq 0" if opener in ("~", "not ") else "t"
    per_level = len(re.findall(r"[(~-]|\bnot\b", opener))
    levels = LIMIT // per_level  # at most LIMIT levels
    parse(nested(opener, levels, inner))
    text = nested(opener, levels + 1, inner)  # more than LIMIT
    with pytest.raises(ParseError, match="nested too deeply") as info:
        parse(text)
    assert info.value.reason == MESSAGE
    assert info.value.position == opening(text, LIMIT + 1)


def test_python_parser_nesting_is_not_cumulative():
    deep = nested("(", LIMIT)
    e = parse(f"[{deep} + {deep}, {deep}:{deep} + 1]")
    assert to_text(e) == "[t + t, t:t + 1]"
    assert parse(" + ".join([nested("-(", LIMIT // 2)] * 100)).same(parse(_flat(100)))


def test_python_parser_never_recurses():
    # Called with the stack nearly full, it still parses 256 levels and
    # rejects 3,000 with a ParseError (a recursive-descent parser needs
    # thousands of frames for either).
    frames = 0
    frame = sys._getframe()
    while frame is not None:
        frames, frame = frames + 1, frame.f_back

    def at_depth(n, f):
        return f() if n <= 0 else at_depth(n - 1, f)

    headroom = sys.getrecursionlimit() - frames - 40
    assert at_depth(headroom, lambda: parse(nested("(", LIMIT))).same(t)
    with pytest.raises(ParseError, match="nested too deeply"):
        at_depth(headroom, lambda: parse(nested("min(t, ", 3000)))


def test_tidal_opt_runs_passes_on_100k_term_expressions(tmp_path):
    def run(n, timeout):
        text = _flat(n)
        path = tmp_path / f"flat{n}.mlir"
        path.write_text(graph(PLACES["operand index"].format(f"{text} - {n - 1} * t")
                              + f'\n  sdg.output "y" %y[t] domain [t] : {V}'))
        out, seconds = tidal_opt(path, "--sdg-verify-dependences", "--sdg-dce", timeout=timeout)
        assert out.returncode == 0, out.stderr[-2000:]
        assert f"[{text} - {n - 1} * t]" in out.stdout
        return seconds

    small = run(10_000, timeout=120)
    large = run(100_000, timeout=max(60, 60 * small))
    assert large < 30 * small, (small, large)


def test_free_symbols_of_a_long_flat_sum_do_not_recurse():
    """`Expr.free_symbols` (used by every pass, rt-to-sdg first) walked the tree
    recursively: rt-to-sdg raised RecursionError on a flat index of ~500 terms."""
    e = parse(_flat(20_000, "t + T"), dims=[Dim("t")])
    assert sorted(s.name for s in e.free_symbols) == ["T", "t"]


def test_rt_to_sdg_on_a_10k_term_index(tmp_path):
    index = " + ".join(["t"] * 5_000 + ["T"] * 5_000) + " - 10000 * t - 5000 * T + t"
    f = tmp_path / "flat.mlir"
    f.write_text(f'''rt.program @p dims [t < T] {{
  %x = rt.input "x" domain [t] : {V}
  %y = rt.index %x[{index}] domain [t] : ({V}) -> {V}
  rt.output "y" %y : {V}
}}
''')
    out, _ = tidal_opt(f, "--pass-pipeline=builtin.module(rt-to-sdg)", timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "sdg.output" in out.stdout
