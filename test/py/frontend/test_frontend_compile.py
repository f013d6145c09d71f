"""`p.compile()` / `.run()` / `p.sdg()` wiring and input validation, with
stand-ins for `tidal.passes.rt_to_sdg` and `tidal.runtime.reference` (the
real ones are exercised by test_frontend_end_to_end.py)."""
import sys
import types

import numpy as np
import pytest

import tidal as td


@pytest.fixture
def backend(monkeypatch):
    """Stand-ins that record what the frontend passes them."""
    seen = {}

    def rt_to_sdg(module):
        seen["lowered"] = module
        module.operation.attributes["test.lowered_by_stand_in"] = __import__("mlir").ir.UnitAttr.get(
            module.context)

    def evaluate(module, bounds, inputs, udfs=None, params=None):
        seen.update(module=module, bounds=bounds, inputs=inputs, udfs=udfs, params=params)
        return {"ok": True}

    monkeypatch.setitem(sys.modules, "tidal.passes.rt_to_sdg", types.SimpleNamespace(rt_to_sdg=rt_to_sdg))
    monkeypatch.setitem(sys.modules, "tidal.runtime.reference", types.SimpleNamespace(evaluate=evaluate))
    return seen


def program():
    with td.Program() as p:
        (i, I), (t, T) = p.dims("i", "t")
        x = td.input("x", shape=(4,), domain=(t,))
        n = td.input("n", shape=(2,), dtype="int32", domain=(i, t))
        ragged = td.input("r", shape=(t + 1,), domain=(t,))
        y = td.udf(lambda a: [1.0, 2.0, 3.0, 4.0], [x], shape=(4,), dtype="float32")
        p.output("y", y + n.sum().astype("float32") + ragged.sum())
    return p, (i, I), (t, T)


def inputs(nt=3, ni=2):
    return {"x": np.zeros((nt, 4), np.float32), "n": np.zeros((ni, nt, 2), np.int32),
            "r": [np.zeros(k + 1, np.float32) for k in range(nt)]}


def test_compile_lowers_and_run_passes_names_arrays_and_udfs(backend):
    p, (i, I), (t, T) = program()
    exe = p.compile(backend="reference")
    assert backend["lowered"] is exe.module and "test.lowered_by_stand_in" in str(exe.module)
    given = inputs()
    given["x"] = given["x"].astype(np.float64).tolist()  # lists and wider floats are converted
    assert exe.run(bounds={T: 3, "I": 2}, inputs=given) == {"ok": True}
    assert backend["bounds"] == {"I": 2, "T": 3}
    x = backend["inputs"]["x"]
    assert isinstance(x, np.ndarray) and x.dtype == np.float32 and x.shape == (3, 4)
    assert [a.shape for a in backend["inputs"]["r"]] == [(1,), (2,), (3,)]
    (callee, fn), = backend["udfs"].items()
    # the user's own function: every backend checks and converts what it returns
    # (tidal.runtime.run_checks.check_udf_result, tested in test_runtime_run_checks.py)
    assert fn is p.udfs[callee]
    assert fn(np.zeros(4, np.float32)) == [1.0, 2.0, 3.0, 4.0]


def test_bounds_accept_dims_symbols_and_names(backend):
    p, (i, I), (t, T) = program()
    exe = p.compile(backend="reference")
    exe.run(bounds={td.Dim("i"): 2, T: 3}, inputs=inputs())
    assert backend["bounds"] == {"I": 2, "T": 3}


def test_sdg_text_comes_from_the_pass(backend):
    p, _, _ = program()
    assert "test.lowered_by_stand_in" in p.sdg()


def test_unknown_backend():
    p, _, _ = program()
    with pytest.raises(td.TidalError, match="unknown backend 'gpu'"):
        p.compile(backend="gpu")


@pytest.mark.parametrize("bounds, message", [
    ({"T": 3}, "no value for the bound I"),
    ({"T": 3, "I": 0}, "must be an int >= 1"),
    ({"T": 3, "I": 2.5}, "must be an int >= 1"),
    ({"T": 3, "i": 2}, "is a step; bounds are keyed by the bound symbol"),
    ({"T": 3, "I": 2, "K": 1}, "'K' is not a bound of this program"),
])
def test_bad_bounds(backend, bounds, message, line_of):
    p, _, _ = program()
    exe = p.compile(backend="reference")
    with pytest.raises(td.TidalError, match=message) as err:
        exe.run(bounds=bounds, inputs=inputs())  # @run-bounds
    assert err.value.lineno == line_of("run-bounds")


def _with(**changes):
    given = inputs()
    for k, v in changes.items():
        if v is None:
            del given[k]
        else:
            given[k] = v
    return given


@pytest.mark.parametrize("given, message", [
    (_with(z=np.zeros(3)), "unknown input 'z'"),
    (_with(x=None), "missing input 'x'"),
    (_with(x=np.zeros((2, 4), np.float32)), r"input 'x' has shape \(2, 4\), expected \(3, 4\)"),
    (_with(n=np.zeros((3, 2, 2), np.int32)), r"expected \(2, 3, 2\)"),
    (_with(n=np.zeros((2, 3, 2), np.float32)), "input .n. is float32 of shape .*: floats are not converted to int32"),
    (_with(n=np.full((2, 3, 2), 2**40, np.int64)), "holds 1099511627776, which does not fit in int32"),
    (_with(r=[np.zeros(1, np.float32)] * 3), r"input 'r' at t=1 has shape \(1,\), expected \(2,\)"),
    (_with(r=np.zeros((3, 2), np.float32)), "nested list"),
    (_with(x=[[1, 2], [3]]), "not a regular array"),
])
def test_bad_inputs(backend, given, message, line_of):
    p, (i, I), (t, T) = program()
    exe = p.compile(backend="reference")
    with pytest.raises(td.TidalError, match=message) as err:
        exe.run(bounds={T: 3, I: 2}, inputs=given)  # @run-inputs
    assert err.value.lineno == line_of("run-inputs")
    assert "inputs" not in backend  # nothing ran
