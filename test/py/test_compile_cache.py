"""The compile cache (tidal.frontend.compile_cache): an equal program is a hit,
anything a compilation depends on changes the key, and XLA executables and
isl schedules persist across processes with TIDAL_CACHE_DIR."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tidal as td
from tidal.frontend import compile_cache


def _program(scale=0.5, udf=None, leak=0.0):
    with td.Program("cached") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        W = td.param("W", np.eye(3, dtype=np.float32) * scale)
        h = td.recurrent(shape=(3,), domain=(t,))
        h[0] = td.tanh(x[0])
        h[t + 1] = td.tanh(h @ W + x[t + 1] + h * leak)
        if udf is not None:
            p.output("u", td.udf(udf, h, shape=(3,), dtype="float32"))
        p.output("h", h)
    return p


@pytest.fixture(autouse=True)
def _fresh_cache():
    compile_cache.clear()
    yield
    compile_cache.clear()


def test_compiling_an_equal_program_again_is_a_hit():
    x = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    first = _program().compile(backend="numpy")
    again = _program().compile(backend="numpy")   # traced anew: equal text, equal weights
    assert not first.cache_hit and again.cache_hit and again.compiled is first.compiled
    np.testing.assert_array_equal(first.run(bounds={"T": 5}, inputs={"x": x})["h"],
                                  again.run(bounds={"T": 5}, inputs={"x": x})["h"])


def test_what_a_compilation_depends_on_changes_the_key():
    p = _program()
    base = p.compile(backend="numpy")
    assert not _program(leak=0.25).compile(backend="numpy").cache_hit      # another constant
    assert not p.compile(backend="jax").cache_hit                          # other backend
    assert not p.compile(backend="numpy", passes=["sdg-dce"]).cache_hit    # other passes
    assert p.compile(backend="numpy").compiled is base.compiled


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_other_weights_are_a_hit_and_run_with_their_own_values(backend):
    """Parameters are run-time buffers: the key holds their shapes and dtypes,
    not their values, so a program with other weights shares the compilation
    (no new XLA compilation) and runs with its own weights."""
    x = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)

    def expected(scale):
        h = np.tanh(x[0])
        out = [h]
        for k in range(1, 4):
            h = np.tanh(h @ (np.eye(3, dtype=np.float32) * scale) + x[k])
            out.append(h)
        return np.stack(out)

    first = _program(scale=0.5).compile(backend=backend)
    h_first = first.run(bounds={"T": 4}, inputs={"x": x})["h"]
    compilations = first.stats()["xla_compilations"]
    other = _program(scale=-2.0).compile(backend=backend)
    assert other.cache_hit and other.compiled is first.compiled
    np.testing.assert_allclose(other.run(bounds={"T": 4}, inputs={"x": x})["h"], expected(-2.0), rtol=1e-5)
    np.testing.assert_allclose(first.run(bounds={"T": 4}, inputs={"x": x})["h"], h_first)  # its own, still
    np.testing.assert_allclose(h_first, expected(0.5), rtol=1e-5)
    assert other.stats()["xla_compilations"] == compilations


def test_other_udf_functions_are_another_program():
    def double(v):
        return v * 2

    def triple(v):
        return v * 3

    x = np.ones((2, 3), dtype=np.float32)
    a = _program(udf=double).compile(backend="numpy")
    b = _program(udf=triple).compile(backend="numpy")
    assert not b.cache_hit
    ua, ub = (e.run(bounds={"T": 2}, inputs={"x": x})["u"] for e in (a, b))
    np.testing.assert_allclose(ub, ua * 1.5, rtol=1e-6)
    assert _program(udf=double).compile(backend="numpy").cache_hit


def test_a_dumping_compile_always_compiles(tmp_path):
    p = _program()
    p.compile(backend="numpy")
    exe = p.compile(backend="numpy", dump=str(tmp_path))
    assert not exe.cache_hit and (tmp_path / "index.json").exists()


def test_the_cache_keeps_the_most_recent_compilations():
    _program(leak=0.0).compile(backend="numpy")
    for k in range(compile_cache.CAPACITY):
        _program(leak=1.0 + k).compile(backend="numpy")
    assert not _program(leak=0.0).compile(backend="numpy").cache_hit     # evicted
    assert _program(leak=compile_cache.CAPACITY).compile(backend="numpy").cache_hit


_CHILD = """
import numpy as np, tidal as td
with td.Program("persist") as p:
    (t, T), = p.dims("t")
    x = td.input("x", shape=(3,), domain=(t,))
    h = td.recurrent(shape=(3,), domain=(t,))
    h[0] = x[0]
    h[t + 1] = td.tanh(h * 0.5 + x[t + 1])
    p.output("h", h)
print(p.compile(backend="jax").run(bounds={"T": 4}, inputs={"x": np.ones((4, 3), np.float32)})["h"].sum())
from tidal.lowering import schedule_cache
print(schedule_cache.STATS["hits"], schedule_cache.STATS["misses"])
"""


def test_xla_executables_persist_across_processes(tmp_path):
    env = dict(os.environ, TIDAL_CACHE_DIR=str(tmp_path / "xla"), JAX_PLATFORMS="cpu")

    def run():
        r = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip(), sorted(os.listdir(tmp_path / "xla"))

    out1, files1 = run()
    out2, files2 = run()
    (value1, stats1), (value2, stats2) = out1.splitlines(), out2.splitlines()
    assert files1 and value1 == value2
    assert files2 == files1          # the second process loaded every kernel, compiled none
    assert (stats1, stats2) == ("0 1", "1 0")   # and its schedule, computed by the first
    assert len(os.listdir(tmp_path / "xla" / "schedules")) == 1


def test_values_the_key_cannot_see_are_not_cached():
    """A module whose values live in resource blobs (elided from the text the
    key digests) gets no key, so no other program can ever hit its entry."""
    from mlir import ir

    from tidal.dialects import make_context
    text = """
    func.func @f() -> tensor<2xf32> {
      %c = arith.constant dense_resource<blob> : tensor<2xf32>
      return %c : tensor<2xf32>
    }
    {-#
      dialect_resources: { builtin: { blob: "0x040000000000803F00000040" } }
    #-}
    """
    with make_context():
        module = ir.Module.parse(text)
        assert compile_cache.program_key(module, "numpy", (), {}) is None
        plain = ir.Module.parse("func.func @g() -> tensor<2xf32> {\n"
                                "  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
                                "  return %c : tensor<2xf32>\n}")
        assert compile_cache.program_key(plain, "numpy", (), {}) is not None
