"""`p.compile()` as named stages: exe.stages, dumps with index.json, replays
with tidal-opt, timings, and reproducers for internal errors."""
import importlib.util
import json
import os
import shlex
import subprocess

import numpy as np
import pytest

import tidal as td
from tidal.frontend.compile_pipeline import DEFAULT_SDG_PASSES
from tidal.passes.stages import InternalCompilerError

from test_tidal_opt import OPT_TOOL

PLUGIN = os.path.join(os.path.dirname(__file__), "..", "lit", "tidal-opt", "Inputs", "test_passes.py")
PLUGIN = os.path.abspath(PLUGIN)


def _program():
    """A program with a dead op, a recurrence, a window and a gradient."""
    with td.Program("stages") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        W = td.param("W", np.eye(3, dtype=np.float32) * 0.5)
        y = td.tanh(x @ W)
        _dead = td.exp(y) * 2.0
        s = td.recurrent(shape=(3,), domain=(t,))
        s[0] = y[0]
        s[t + 1] = s * 0.5 + y[t + 1]
        w = y[td.max(0, t - 2):t + 1].sum(0)
        p.output("s", s)
        p.output("w", w)
        g, = td.grad((s * w).sum(), [W])
        p.output("g", g)
    return p


def _tidal_opt(command: str, cwd: str) -> subprocess.CompletedProcess:
    argv = shlex.split(command)
    assert argv[0] == "tidal-opt"
    return subprocess.run([OPT_TOOL, *argv[1:]], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def dumped(tmp_path_factory):
    d = tmp_path_factory.mktemp("dump")
    exe = _program().compile(backend="numpy", dump=str(d))
    return exe, str(d), json.load(open(d / "index.json"))["stages"]


def test_stages_are_the_pipeline_in_order(dumped):
    exe, _, _ = dumped
    names = list(exe.stages)
    assert names == ["rt", "rt-to-sdg", *DEFAULT_SDG_PASSES, "sdg-schedule", "schedule",
                     "sdg-lower-to-scf", "storage", "memory-plan", "host", "load"]
    assert exe.stages["rt"].lstrip().startswith("module") and "rt.program" in exe.stages["rt"]
    assert "sdg.graph" in exe.stages["rt-to-sdg"] and "rt.program" not in exe.stages["rt-to-sdg"]
    assert "tidal.schedule" in exe.stages["sdg-schedule"]
    assert "scf.for" in exe.stages["sdg-lower-to-scf"]
    assert "// loop nest" in exe.stages["schedule"] and "def _program" in exe.stages["host"]
    # the dead op is in the traced graph and gone after sdg-dce
    assert "sdg.unary exp" in exe.stages["rt-to-sdg"] and "sdg.unary exp" not in exe.stages["sdg-dce"]


def test_dump_writes_numbered_files_and_an_index_matching_exe_stages(dumped):
    exe, d, index = dumped
    assert [s["name"] for s in index] == list(exe.stages)
    files = [s["file"] for s in index if s["file"]]
    assert len(files) >= 5
    assert files == sorted(files) and [f[:2] for f in files] == [f"{k:02d}" for k in range(len(files))]
    assert sorted(os.listdir(d)) == sorted(files + ["index.json"])
    for s in index:
        assert s["seconds"] >= 0
        if s["file"]:
            assert open(os.path.join(d, s["file"])).read() == exe.stages[s["name"]]


def test_every_mlir_stage_reparses_with_tidal_opt(dumped):
    _, d, index = dumped
    for s in index:
        if s["file"] and s["file"].endswith(".mlir"):
            r = _tidal_opt(f"tidal-opt {s['file']} --mlir-print-debuginfo", d)
            assert r.returncode == 0, (s["file"], r.stderr)
            assert r.stdout == open(os.path.join(d, s["file"])).read(), s["file"]


def test_replaying_each_pass_stage_gives_its_ir(dumped):
    _, d, index = dumped
    replayed, last = 0, None
    for s in index:
        if "command" in s:
            r = _tidal_opt(s["command"], d)
            assert r.returncode == 0, (s["name"], r.stderr)
            # a stage that changed nothing has no file: its IR is the last file's
            assert r.stdout == open(os.path.join(d, s["file"] or last)).read(), s["name"]
            replayed += 1
        if s["file"] and s["file"].endswith(".mlir"):
            last = s["file"]
    assert replayed == 3 + len(DEFAULT_SDG_PASSES)   # rt-to-sdg, the sdg passes, sdg-schedule, sdg-lower-to-scf


def test_a_pass_that_changes_nothing_gets_no_file_and_results_do_not_depend_on_passes(tmp_path):
    p = _program()
    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    exe = p.compile(backend="numpy", dump=str(tmp_path), passes=["sdg-dce", "sdg-dce"])
    index = json.load(open(tmp_path / "index.json"))["stages"]
    dce = [s for s in index if s["name"] == "sdg-dce"]
    assert dce[0]["file"] and dce[1]["file"] is None
    plain = p.compile(backend="numpy", passes=[])
    assert "sdg-dce" not in plain.stages
    a, b = exe.run(bounds={"T": 4}, inputs={"x": x}), plain.run(bounds={"T": 4}, inputs={"x": x})
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=1e-6)


def test_dump_from_the_environment_and_timings(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TIDAL_DUMP", str(tmp_path / "env"))
    monkeypatch.setenv("TIDAL_TIMINGS", "1")
    exe = _program().compile(backend="numpy")
    err = capsys.readouterr().err
    assert "Tidal compile time" in err and "sdg-schedule" in err and "total" in err
    index = json.load(open(tmp_path / "env" / "index.json"))["stages"]
    assert [s["name"] for s in index] == list(exe.stages)


def test_an_unknown_pass_is_a_clear_error():
    with pytest.raises(td.TidalError, match="no-such-pass"):
        _program().compile(passes=["no-such-pass"])


def test_default_passes_leaves_out_and_configures_passes_of_the_default_pipeline():
    """td.default_passes: the default pipeline with passes left out or given
    options, in order, and the compile runs exactly that pipeline."""
    assert td.default_passes() == DEFAULT_SDG_PASSES
    untiled = td.default_passes(without=["sdg-tile"])
    assert untiled == tuple(e for e in DEFAULT_SDG_PASSES if e != "sdg-tile")
    assert td.default_passes(without="sdg-tile") == untiled
    passes = td.default_passes(without=["sdg-lift"], options={"sdg-tile": {"tile": 4, "min-bytes": 0},
                                                              "sdg-vectorize": {"windows": False}})
    want = [{"sdg-tile": "sdg-tile{tile=4 min-bytes=0}", "sdg-vectorize": "sdg-vectorize{windows=false}"}.get(e, e)
            for e in DEFAULT_SDG_PASSES if e != "sdg-lift"]
    assert list(passes) == want
    assert td.default_passes(options={"sdg-tile": "tile=4 min-bytes=0"}) == \
        td.default_passes(options={"sdg-tile": {"tile": 4, "min-bytes": 0}})
    exe = _program().compile(backend="numpy", passes=passes)
    ran = [name for name in exe.stages if name in DEFAULT_SDG_PASSES]
    assert ran == [e for e in DEFAULT_SDG_PASSES if e != "sdg-lift"]


@pytest.mark.parametrize("kwargs,match", [
    ({"without": ["sdg-nope"]}, "'sdg-nope' is not in the default pipeline"),
    ({"options": {"sdg-lift-recurrence": "max-order=2"}}, "'sdg-lift-recurrence' is not in the default pipeline"),
    ({"without": ["sdg-tile"], "options": {"sdg-tile": "tile=4"}}, "both left out and given options"),
    ({"options": {"sdg-tile": {"tiles": 4}}}, "td.default_passes: no such option 'tiles' for pass 'sdg-tile'"),
    ({"options": {"sdg-tile": 4}}, "the options of 'sdg-tile' are a int"),
])
def test_default_passes_rejects_what_the_default_pipeline_lacks_at_the_users_line(kwargs, match):
    with pytest.raises(td.TidalError, match=match) as err:
        td.default_passes(**kwargs)
    assert err.value.filename == __file__ and err.value.hint


@pytest.fixture
def plugin(monkeypatch):
    """The lit tests' pass plugin, registered for one test only (the registry
    is restored afterwards, so other tests see the usual pass list)."""
    from tidal.passes import registry
    monkeypatch.setattr(registry, "_LOADED", dict(registry._LOADED))
    monkeypatch.setattr(registry, "_TABLE", dict(registry._TABLE))
    _load_plugin()


def _load_plugin():
    spec = importlib.util.spec_from_file_location("tidal_pass_plugin_test_passes", PLUGIN)
    module = importlib.util.module_from_spec(spec)
    import sys
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)


def test_an_internal_error_in_a_pass_prints_a_reproducer_that_reproduces_it(plugin):
    with pytest.raises(InternalCompilerError) as info:
        _program().compile(backend="numpy", passes=["sdg-dce", "test-crash"])
    e = info.value
    assert e.stage == "test-crash"
    assert "internal error in compile stage 'test-crash': ZeroDivisionError" in str(e)
    assert e.reproducer and e.reproducer in str(e) and "--load-pass-plugin" in e.reproducer
    path = shlex.split(e.reproducer)[1]
    assert "sdg.graph" in open(path).read() and "sdg.unary exp" not in open(path).read()  # after sdg-dce
    r = _tidal_opt(e.reproducer, os.path.dirname(path))
    assert r.returncode == 1
    assert "internal error in pass 'test-crash'" in r.stderr and "ZeroDivisionError" in r.stderr
    os.remove(path)


def test_a_user_error_in_a_pass_is_not_an_internal_error(plugin):
    from tidal.passes import PassFailure
    with pytest.raises(PassFailure, match="graphs are not welcome"):
        _program().compile(backend="numpy", passes=["test-fail-on-graph"])


def test_progress_for_compile_and_run(capsys, monkeypatch):
    exe = _program().compile(backend="numpy", progress=True)
    err = capsys.readouterr().err
    assert [line.split()[1] for line in err.splitlines() if line.startswith("[tidal]")] == list(exe.stages)
    x = np.random.default_rng(0).normal(size=(20, 3)).astype(np.float32)
    plain = exe.run(bounds={"T": 20}, inputs={"x": x})
    assert capsys.readouterr().err == ""          # off by default
    monkeypatch.setenv("TIDAL_PROGRESS", "1")
    shown = exe.run(bounds={"T": 20}, inputs={"x": x})
    err = capsys.readouterr().err
    assert "host loop 1" in err and "19/19" in err
    for k in plain:
        np.testing.assert_array_equal(plain[k], shown[k])


def test_the_runtime_lowers_the_schedule_it_computed_without_reading_it_back(monkeypatch):
    """Fuzz finding F9: after 3,154 programs in one process, re-reading the
    schedule attribute's text and deriving the domains again gave "the schedule
    attribute of @fuzz does not match its operators" for a valid program (it
    compiles in a fresh process). The runtime now hands sdg-lower-to-scf the
    schedule it computed; only tidal-opt's separate pass reads the attribute."""
    import tidal.lowering.sdg_lower_to_scf as lower

    def refuse(*args, **kwargs):
        raise AssertionError("the runtime re-read the schedule attribute")

    monkeypatch.setattr(lower, "load_schedule", refuse)
    exe = _program().compile(backend="numpy")
    x = np.random.default_rng(0).normal(size=(3, 3)).astype(np.float32)
    ref = _program().compile(backend="reference").run(bounds={"T": 3}, inputs={"x": x})
    out = exe.run(bounds={"T": 3}, inputs={"x": x})
    for k in ref:
        np.testing.assert_allclose(out[k], ref[k], rtol=1e-5)
