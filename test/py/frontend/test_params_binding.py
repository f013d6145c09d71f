"""Parameters are run-time buffers: declared by name, shape and dtype in the IR,
bound to the executable (`exe.load_state_dict`), rebound without recompiling."""
import numpy as np
import pytest

import tidal as td


def _program(W=None):
    with td.Program("bound") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        w = td.param("W", W) if W is not None else td.param("W", shape=(3, 3), dtype="float32")
        b = td.param("b", np.zeros(3, np.float32))
        p.output("y", x @ w + b)
    return p


@pytest.mark.parametrize("backend", td.backends())
def test_a_param_declared_by_shape_is_bound_after_compiling(backend):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    exe = _program().compile(backend=backend)
    with pytest.raises(td.TidalError, match="no values bound to the parameter 'W'") as e:
        exe.run(bounds={"T": 4}, inputs={"x": x})
    assert e.value.location.file == __file__
    with pytest.raises(td.TidalError, match="no value for 'W'"):
        exe.load_state_dict({"b": np.ones(3, np.float32)}, strict=False)   # nothing bound yet: all needed
    W1, W2 = (rng.standard_normal((3, 3)).astype(np.float32) for _ in range(2))
    exe.load_state_dict({"W": W1, "b": np.ones(3, np.float32)})
    np.testing.assert_allclose(exe.run(bounds={"T": 4}, inputs={"x": x})["y"], x @ W1 + 1, rtol=1e-5)
    scheduled = exe.backend_info.scheduled
    compilations = exe.stats()["xla_compilations"] if scheduled else None
    exe.load_state_dict({"W": W2.astype(np.float64)}, strict=False)       # floats convert; b is kept
    np.testing.assert_allclose(exe.run(bounds={"T": 4}, inputs={"x": x})["y"], x @ W2 + 1, rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(exe.state_dict()["W"]), W2)
    if scheduled:
        assert exe.stats()["xla_compilations"] == compilations            # rebinding compiles nothing


def test_bad_bindings_are_clear_errors():
    exe = _program(np.eye(3, dtype=np.float32)).compile(backend="numpy")
    with pytest.raises(td.TidalError, match="unknown parameter 'V'"):
        exe.load_state_dict({"V": np.eye(3)}, strict=False)
    with pytest.raises(td.TidalError, match="no value for 'b'"):
        exe.load_state_dict({"W": np.eye(3)})
    with pytest.raises(td.TidalError, match=r"parameter 'W' has shape \(2, 3\), expected \(3, 3\)"):
        exe.load_state_dict({"W": np.ones((2, 3))}, strict=False)
    with td.Program() as p:
        p.output("n", td.param("n", np.arange(3, dtype=np.int32)) * 2)
    ints = p.compile(backend="numpy")
    with pytest.raises(td.TidalError, match="floats are not converted"):
        ints.load_state_dict({"n": np.array([0.5, 1, 2])})
    with td.Program() as q:
        (t, T), = q.dims("t")
        with pytest.raises(td.TidalError, match="neither a value nor a shape"):
            td.param("Z")
        with pytest.raises(td.TidalError, match="has a negative size -1"):
            td.param("Z", shape=(3, -1))
        with pytest.raises(td.TidalError, match=r"shape \(T, 2\) is not static"):
            td.param("Z", shape=(T, 2))


@pytest.mark.parametrize("backend", td.backends())
def test_the_binding_is_a_snapshot_of_the_callers_array(backend):
    """An array the caller may change later is copied when bound; rebinding is explicit."""
    W = np.eye(3, dtype=np.float32)
    exe = _program(W).compile(backend=backend)
    x = np.ones((2, 3), np.float32)
    before = exe.run(bounds={"T": 2}, inputs={"x": x})["y"]
    W[:] = 7
    np.testing.assert_array_equal(exe.run(bounds={"T": 2}, inputs={"x": x})["y"], before)
    exe.load_state_dict({"W": W}, strict=False)
    np.testing.assert_allclose(exe.run(bounds={"T": 2}, inputs={"x": x})["y"], x @ W)
