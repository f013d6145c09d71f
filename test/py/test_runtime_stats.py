"""`exe.stats()`: the counters the benchmarks print, checked exactly on small
programs whose launches can be counted by hand."""
import numpy as np
import pytest

import tidal as td


def program():
    """y[t] = x[t] * 2 (a jitted kernel per t), u[t] = udf(y[t]) (a host op per t,
    which fetches y[t] from the device), z[t] = u[t] + 1 (jitted, reads the host
    value u[t]: a copy to the device)."""
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), domain=(t,))
        y = x * 2
        u = td.udf(lambda a: a + 1, [y], shape=(4,), dtype="float32")
        p.output("z", u + 1)
    return p, T


@pytest.mark.parametrize("n", [3, 7])
def test_jax_counters_match_the_schedule(n):
    p, T = program()
    exe = p.compile(backend="jax")
    out = exe.run(bounds={T: n}, inputs={"x": np.ones((n, 4), np.float32)})
    np.testing.assert_array_equal(out["z"], np.full((n, 4), 4, np.float32))
    s = exe.stats()
    assert s["host_ops"] == 1 and s["kernels"] >= 2
    assert s["host_launches"] == n                     # the UDF, once per t
    assert s["device_to_host"] >= n                    # y[t] fetched for the UDF at every t
    assert s["host_to_device"] >= n + 1                # the input, and u[t] for every t
    assert s["launches"] >= 2 * n                      # x * 2 and u + 1 at every t
    assert s["store_bytes"] >= 2 * n * 4 * 4           # x and z keep n points of 4 float32 (y, u: one)
    compiled = s["xla_compilations"]
    assert compiled > 0
    exe.run(bounds={T: n}, inputs={"x": np.ones((n, 4), np.float32)})
    again = exe.stats()
    assert again["xla_compilations"] == compiled       # same bounds: nothing recompiles
    assert {k: again[k] for k in ("launches", "host_launches")} == \
        {k: s[k] for k in ("launches", "host_launches")}   # counters are per run


def test_numpy_backend_counts_host_ops_and_no_copies():
    p, T = program()
    exe = p.compile(backend="numpy")
    exe.run(bounds={T: 5}, inputs={"x": np.ones((5, 4), np.float32)})
    s = exe.stats()
    assert s["kernels"] == 0 and s["launches"] == 0 and s["xla_compilations"] == 0
    assert s["device_to_host"] == 0 and s["host_to_device"] == 0
    assert s["host_launches"] >= 3 * 5                 # mul, udf, add at every t
    assert 2 * 5 * 4 * 4 <= s["store_bytes"] < 3 * 5 * 4 * 4   # x and z whole, y and u one point


def test_reference_backend_has_no_counters():
    p, T = program()
    with pytest.raises(td.TidalError, match="no kernels to count"):
        p.compile(backend="reference").stats()


def layered(n_layers: int):
    """A recurrent cell of `n_layers` identical layers (own weights each)."""
    rng = np.random.default_rng(0)
    with td.Program(f"layers{n_layers}") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3, 8), domain=(t,))
        h = x
        for j in range(n_layers):
            w = td.param(f"w{j}", rng.normal(size=(8, 8)).astype(np.float32) * 0.3)
            h = td.tanh(h @ w + 1.0) * 0.5 + h
            p.output(f"h{j}", h)      # read twice: each layer is an island of its own
    return p


def test_identical_layers_share_their_kernels():
    """Kernels whose traced code is the same (the layers of a model) are one
    jitted function: compilations do not grow with the number of layers,
    and the results are the reference's."""
    x = np.random.default_rng(1).normal(size=(4, 3, 8)).astype(np.float32)
    counts = {}
    for n in (2, 4):   # the first layer reads the input's store, the others the previous layer's
        p = layered(n)
        exe = p.compile(backend="jax")
        out = exe.run(bounds={"T": 4}, inputs={"x": x})
        ref = p.compile(backend="reference").run(bounds={"T": 4}, inputs={"x": x})
        for j in range(n):
            np.testing.assert_allclose(np.asarray(out[f"h{j}"]), np.asarray(ref[f"h{j}"]), rtol=1e-5, atol=1e-6)
        counts[n] = exe.stats()["xla_compilations"]
        if n == 4:
            assert exe.compiled.distinct_kernels < exe.stats()["kernels"], exe.compiled.source
    assert counts[4] == counts[2], counts
