"""Shrunk failures of the random-program fuzzer, kept as plain tests.

Each test is a finding of `test_fuzz_programs.py`, minimised (by hypothesis,
then by hand), with the values every backend must give. A finding that is
still open is marked `xfail(strict=True)` with its number in the fuzz report:
the test fails as soon as the defect is fixed, so the marker gets removed and
the test keeps guarding the fix.
"""
import numpy as np
import pytest

import tidal as td

BACKENDS = ("reference", "numpy", "jax")


def run_everywhere(p, bounds, inputs):
    return {b: p.compile(backend=b).run(bounds=bounds, inputs=inputs) for b in BACKENDS}


def assert_all(outs, name, expected, **tol):
    for b, out in outs.items():
        np.testing.assert_allclose(np.asarray(out[name]), expected, err_msg=f"{name} on {b}", **tol)


@pytest.mark.parametrize("T", [1, 3])
def test_f1_max_over_a_window_that_is_empty_where_an_earlier_case_applies(T):
    with td.Program("f1") as p:
        (t, T_), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        s = td.recurrent(shape=(), domain=(t,))
        s[0] = x[0]
        s[t] = x[td.max(0, t - 2):t].amax(0)    # empty at t = 0, where s[0] applies
        p.output("s", s)
    x = np.arange(1, T + 1, dtype=np.float32)
    expected = [x[0]] + [x[max(0, k - 2):k].max() for k in range(1, T)]
    assert_all(run_everywhere(p, {"T": T}, {"x": x}), "s", expected)


def test_f1_dead_max_over_an_empty_window():
    with td.Program("f1_dead") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        x[td.max(0, t - 2):t].amax(0)            # never used
        p.output("o", x * 2.0)
    x = np.array([1.0, 2.0], np.float32)
    assert_all(run_everywhere(p, {"T": 2}, {"x": x}), "o", x * 2.0)
