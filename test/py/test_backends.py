"""The backend registry (tidal.runtime.backends): `td.backends()` names the
backends, each one an object with capabilities; the backend is chosen once, at
compile, and no code outside the registry compares backend names."""
import pathlib
import re

import numpy as np
import pytest

import tidal as td
from tidal.runtime import backends
from tidal.runtime.scheduled import compile_sdg

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = ["python", "symbolic", "dialects", "passes", "lowering", "runtime", "config", "examples"]


def cumulative_program():
    with td.Program("cumulative") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        s = td.recurrent(shape=(3,), domain=(t,))
        s[0] = x[0]
        s[t + 1] = s[t] * 0.5 + x[t + 1]
        p.output("s", s)
    return p


def test_td_backends_lists_the_registered_backends_default_first():
    assert td.backends() == ("jax", "numpy", "reference")
    assert td.backends() == backends.names()
    jax, numpy, reference = (backends.get(n) for n in td.backends())
    assert jax.jit_kernels and jax.traces_loops and jax.device_arrays and jax.memory_budget
    assert "gpu" in jax.devices and numpy.devices == ("cpu",)
    assert numpy.scheduled and not numpy.jit_kernels and not numpy.device_arrays
    assert not reference.scheduled
    assert backends.get(jax) is jax
    assert backends.names("scheduled") == ("jax", "numpy")
    assert backends.names("memory_budget", "scheduled") == ("jax",)


@pytest.mark.parametrize("name", td.backends())
def test_every_registered_backend_compiles_and_runs(name):
    x = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
    out = cumulative_program().compile(backend=name).run(bounds={"T": 6}, inputs={"x": x})["s"]
    want, acc = [], np.zeros(3, np.float32)
    for row in x:
        acc = acc * 0.5 + row
        want.append(acc)
    np.testing.assert_allclose(np.asarray(out), np.stack(want), rtol=1e-6)


def test_a_new_backend_is_one_registration():
    """A backend registered with the numpy kernel provider's capabilities compiles
    and runs under its own name, with no other change."""
    mine = backends.register(backends.Backend("numpy-copy", "a test's backend", scheduled=True,
                                              devices=("cpu",), kernel_providers=("numpy",)))
    try:
        assert "numpy-copy" in td.backends()
        x = np.ones((4, 3), np.float32)
        out = cumulative_program().compile(backend="numpy-copy").run(bounds={"T": 4}, inputs={"x": x})
        np.testing.assert_allclose(out["s"][-1], np.full(3, 1.875, np.float32))
        with pytest.raises(ValueError, match="registered already"):
            backends.register(backends.Backend("numpy-copy", "another", scheduled=False, devices=("cpu",),
                                               kernel_providers=()))
        assert backends.get("numpy-copy") is mine
    finally:
        backends.unregister("numpy-copy")
    assert "numpy-copy" not in td.backends()


def test_an_unknown_backend_is_an_error_at_the_users_line():
    p = cumulative_program()
    with pytest.raises(td.TidalError, match=r"test_backends.py:\d+: unknown backend 'cuda'") as e:
        p.compile(backend="cuda")
    assert "jax, numpy, reference" in str(e.value)
    with pytest.raises(td.TidalError, match="unknown backend 3"):
        p.compile(backend=3)


def test_device_memory_needs_a_backend_with_a_budget():
    with pytest.raises(td.TidalError, match=r"memory budget \(jax\); the numpy backend has none") as e:
        cumulative_program().compile(backend="numpy", device_memory=2 ** 20)
    assert "backend='jax'" in str(e.value)


def test_compile_sdg_takes_a_scheduled_backend_by_name_or_object():
    p = cumulative_program()
    exe = p.compile(backend="numpy")
    assert exe.compiled.backend is backends.NUMPY and exe.backend == "numpy"
    with pytest.raises(backends.UnknownBackend, match="not compiled: use one of jax, numpy"):
        compile_sdg(exe.module, backend="reference")
    with pytest.raises(backends.UnknownBackend, match="unknown backend 'tpu'"):
        compile_sdg(exe.module, backend="tpu")


def test_the_reference_backend_has_no_schedule_and_says_which_do():
    exe = cumulative_program().compile(backend="reference")
    with pytest.raises(td.TidalError, match="reference backend evaluates on demand") as e:
        exe.schedule()
    assert "backend='jax' or backend='numpy'" in str(e.value)


def test_no_code_outside_the_registry_compares_a_backend_name():
    names = "|".join(map(re.escape, td.backends()))
    compare = re.compile(rf"""(==|!=|\bin\b)\s*[(\[{{]?\s*['"]({names})['"]|['"]({names})['"]\s*(==|!=|\bin\b)""")
    found = []
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == ROOT / "runtime" / "backends.py":
                continue
            for i, line in enumerate(path.read_text().splitlines(), 1):
                if compare.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not found, "ask the backend's capabilities (tidal.runtime.backends) instead:\n" + "\n".join(found)
    assert compare.search('if backend == "jax":') and compare.search("b in ('numpy', 'jax')")
