"""Programs whose outputs can be computed only for some bounds (issue 8.3).

`x[0] + x[1]` (domain []) reads `x` at `t = 1`, which exists when `T >= 2`.
The reference interpreter runs it at T = 3 and fails at T = 1; the scheduled
backends must do the same: compile once (parametric in the bounds), run
whenever every needed point exists, and otherwise raise, before running
anything, an error naming the op, the user's line and the bound
(`needs input "x" at t = 1 but T = 1`). See docs/semantics.md, "Reading an
operand", and `GraphSchedule.check_bounds`.
"""
import inspect

import re

import numpy as np
import pytest

import tidal as td
from tidal.lowering.schedule import UncomputableError
from sdg_fixtures import FAR_BASE

SCHEDULED = ["numpy", "jax"]
BACKENDS = ["reference"] + SCHEDULED


def here() -> int:
    return inspect.currentframe().f_back.f_lineno


def arange(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def run_all(p, bounds, inputs):
    """{backend: result} for every backend, each compiled once."""
    return {b: p.compile(backend=b).run(bounds=bounds, inputs=inputs) for b in BACKENDS}


def assert_results(results, expected):
    for backend, out in results.items():
        assert set(out) == set(expected), backend
        for name, value in expected.items():
            np.testing.assert_allclose(np.asarray(out[name]), value, rtol=1e-6, err_msg=f"{backend} {name}")


def constant_reads():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), domain=(t,))
        p.output("y", x[0] + x[1]); line_y = here()  # noqa: E702
        p.output("z", x[0:2].sum(0)); line_z = here()  # noqa: E702
    return p, line_y, line_z


# -- programs that run for some bounds ------------------------------------------------
@pytest.mark.parametrize("T", [2, 3, 5])
def test_constant_point_reads_run_on_every_backend(T):
    p, _, _ = constant_reads()
    x = arange(T, 2)
    assert_results(run_all(p, {"T": T}, {"x": x}), {"y": x[0] + x[1], "z": x[0:2].sum(0)})


@pytest.mark.parametrize("backend", SCHEDULED)
def test_one_compile_runs_and_refuses_by_bounds(backend):
    p, line_y, _ = constant_reads()
    exe = p.compile(backend=backend)
    x = arange(4, 2)
    out = exe.run(bounds={"T": 4}, inputs={"x": x})
    np.testing.assert_allclose(out["y"], x[0] + x[1])
    with pytest.raises(UncomputableError) as info:
        exe.run(bounds={"T": 1}, inputs={"x": x[:1]})
    error = info.value
    message = str(error)
    assert message.startswith(f"{__file__}:{line_y}:"), message          # the op's user line first
    assert 'needs input "x" at t = 1 but T = 1' in message, message
    assert "sdg.binary add" in message and 'sdg.output "y"' in message, message
    assert "T >= 2" in message, message
    assert error.location.startswith(f"{__file__}:{line_y}:")
    assert error.bounds == {"T": 1} and error.condition == "T >= 2"
    # the same executable still runs with bounds that work
    out = exe.run(bounds={"T": 2}, inputs={"x": x[:2]})
    np.testing.assert_allclose(out["z"], x[:2].sum(0))


def test_the_reference_refuses_the_same_bounds_at_the_same_line():
    p, line_y, _ = constant_reads()
    x = arange(1, 2)
    with pytest.raises(RuntimeError) as reference:
        p.compile(backend="reference").run(bounds={"T": 1}, inputs={"x": x})
    with pytest.raises(RuntimeError) as scheduled:
        p.compile(backend="numpy").run(bounds={"T": 1}, inputs={"x": x})
    for info in (reference, scheduled):
        assert f"{__file__}:{line_y}:" in str(info.value), str(info.value)
        assert re.search(r"needs (input \"x\" at )?t = 1 but T = 1", str(info.value)), str(info.value)


@pytest.mark.parametrize("backend", SCHEDULED)
def test_a_slice_past_the_bound_names_the_slice_line(backend):
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), domain=(t,))
        p.output("last", x[T - 1] * 2.0)
        p.output("head", x[0:3].sum(0)); line = here()  # noqa: E702
    exe = p.compile(backend=backend)
    for T in (3, 6):
        x = arange(T, 2)
        out = exe.run(bounds={"T": T}, inputs={"x": x})
        np.testing.assert_allclose(out["last"], x[T - 1] * 2.0)
        np.testing.assert_allclose(out["head"], x[0:3].sum(0))
    with pytest.raises(UncomputableError) as info:
        exe.run(bounds={"T": 2}, inputs={"x": arange(2, 2)})
    message = str(info.value)
    assert message.startswith(f"{__file__}:{line}:"), message
    assert 'needs input "x" at t = 2 but T = 2' in message and "T >= 3" in message, message


def test_constant_reads_at_the_last_point_need_nothing():
    """x[T - 1] exists for every T: no requirement, every bound runs."""
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), domain=(t,))
        p.output("y", x[T - 1] + x[0])
    for T in (1, 2, 4):
        x = arange(T, 2)
        assert_results(run_all(p, {"T": T}, {"x": x}), {"y": x[T - 1] + x[0]})
    assert p.compile(backend="numpy").compiled.sched.requirements == []


def two_dims():
    with td.Program() as p:
        (i, I), (t, T) = p.dims("i", "t")
        x = td.input("x", shape=(2,), domain=(i, t))
        p.output("per_i", x[i, 0] + x[i, 1]); line_i = here()  # noqa: E702
        p.output("per_t", x[0, t] + x[1, t]); line_t = here()  # noqa: E702
        p.output("one", x[1, 2] * 1.0); line_one = here()  # noqa: E702
    return p, line_i, line_t, line_one


@pytest.mark.parametrize("I, T", [(2, 3), (3, 4)])
def test_two_dims_run_on_every_backend(I, T):
    p, *_ = two_dims()
    x = arange(I, T, 2)
    assert_results(run_all(p, {"I": I, "T": T}, {"x": x}),
                   {"per_i": x[:, 0] + x[:, 1], "per_t": x[0] + x[1], "one": x[1, 2]})


@pytest.mark.parametrize("backend", SCHEDULED)
@pytest.mark.parametrize("I, T, which, needs, bound, condition", [
    (3, 1, "i", "at i = 0, t = 1 but T = 1", "T = 1", "T >= 2"),
    (1, 4, "t", "at i = 1, t = 0 but I = 1", "I = 1", "I >= 2"),
    (2, 2, "one", "at i = 1, t = 2 but T = 2", "T = 2", "T >= 3"),
])
def test_two_dims_name_the_bound_that_is_too_small(backend, I, T, which, needs, bound, condition):
    p, line_i, line_t, line_one = two_dims()
    line = {"i": line_i, "t": line_t, "one": line_one}[which]
    with pytest.raises(UncomputableError) as info:
        p.compile(backend=backend).run(bounds={"I": I, "T": T}, inputs={"x": arange(I, T, 2)})
    message = str(info.value)
    assert message.startswith(f"{__file__}:{line}:"), message
    assert f'needs input "x" {needs}' in message and condition in message, message
    with pytest.raises(RuntimeError, match=f"{__file__}:{line}:"):
        p.compile(backend="reference").run(bounds={"I": I, "T": T}, inputs={"x": arange(I, T, 2)})


def recurrence_read_at_a_constant():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        s = td.recurrent(shape=(), domain=(t,))
        s[0] = x[0]
        s[t + 1] = 0.5 * s[t] + x[t + 1]
        p.output("s3", s[3]); line = here()  # noqa: E702
        p.output("last", s[T - 1])
    return p, line


def _recurrence(x):
    s = [x[0]]
    for v in x[1:]:
        s.append(0.5 * s[-1] + v)
    return np.array(s, np.float32)


@pytest.mark.parametrize("T", [4, 7])
def test_a_recurrence_read_at_a_constant_point(T):
    p, _ = recurrence_read_at_a_constant()
    x = np.linspace(-1, 1, T, dtype=np.float32)
    s = _recurrence(x)
    assert_results(run_all(p, {"T": T}, {"x": x}), {"s3": s[3], "last": s[T - 1]})


@pytest.mark.parametrize("backend", SCHEDULED)
def test_a_recurrence_read_past_the_bound(backend):
    p, line = recurrence_read_at_a_constant()
    with pytest.raises(UncomputableError) as info:
        p.compile(backend=backend).run(bounds={"T": 2}, inputs={"x": np.ones(2, np.float32)})
    message = str(info.value)
    assert message.startswith(f"{__file__}:{line}:"), message
    assert "at t = 3 but T = 2" in message and "T >= 4" in message, message


@pytest.mark.parametrize("backend", SCHEDULED)
def test_a_udf_is_not_called_when_the_bounds_do_not_work(backend):
    """A UDF runs at every point of its domain: bounds that leave one of its
    points uncomputable are refused before anything runs (no call at all)."""
    calls = []

    def log(a):
        calls.append(np.asarray(a).copy())
        return np.asarray(a) * 2

    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), domain=(t,))
        p.output("y", td.udf(log, [x[1]], shape=(2,), dtype="float32")); line = here()  # noqa: E702
        p.output("x", x * 1.0)
    exe = p.compile(backend=backend)
    x = arange(3, 2)
    out = exe.run(bounds={"T": 3}, inputs={"x": x})
    np.testing.assert_allclose(out["y"], x[1] * 2)
    assert len(calls) == 1
    with pytest.raises(UncomputableError) as info:
        exe.run(bounds={"T": 1}, inputs={"x": x[:1]})
    assert len(calls) == 1
    message = str(info.value)
    assert message.startswith(f"{__file__}:{line}:") and 'needs input "x" at t = 1 but T = 1' in message, message


def test_a_program_no_bounds_can_run_still_fails_at_compile_time():
    """Every bound >= 2 fails: an error when compiling, as before."""
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        p.output("y", x[t + 1] * 1.0)
    with pytest.raises(ValueError, match=r"needs values that can never be computed \(e\.g\. with T = 2\)"):
        p.compile(backend="numpy")


# -- the scheduled runtime on sdg graphs ------------------------------------------------
V = "!tidal.tensor<[4], f32>"


@pytest.mark.parametrize("backend", SCHEDULED)
def test_only_the_needed_base_case_of_an_uncomputable_recurrence_runs(backend):
    """s[1..] can never be computed (their chains end at x[-5]); the output
    needs s[0] only. The worklist finds s's points one per round; the
    transitive closure of the reads gives the fixpoint at once."""
    from tidal.runtime.reference import evaluate
    from tidal.runtime.scheduled import compile_sdg
    from tidal.runtime.scheduled.checker import check_schedule
    text = FAR_BASE
    exe = compile_sdg(text, backend=backend)
    a = np.arange(4, dtype=np.float32)
    for T in (1, 3, 12):
        inputs = {"a": a, "x": arange(T, 4)}
        np.testing.assert_array_equal(exe.run({"T": T}, inputs)["s"], evaluate(text, {"T": T}, inputs)["s"])
        if backend == "numpy":
            assert check_schedule(exe, {"T": T}).executions == 3     # a, s[0], the output (x is never read)


def test_the_guarded_schedule_checks_out_where_it_runs():
    from tidal.runtime.scheduled.checker import check_schedule
    p, _, _ = constant_reads()
    exe = p.compile(backend="numpy").compiled
    for T in (2, 3, 7):
        report = check_schedule(exe, {"T": T})
        assert report.executions == 6                      # x at t = 0, 1; add, sum and two outputs once
