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
from tidal.lowering.schedule import ScheduleError
from numeric_checks import central_differences

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


def test_f5_needed_sets_of_two_modular_recurrences_compile():
    """Fuzz finding F5 (5,000-program run, program ~950): the needed sets of
    two recurrences with `t % 3 == 0` cases had 15 pieces and 25
    existentials; isl's coalesce of a dependence built on them failed
    ("original tableau does not correspond to original basic map"), and
    without coalescing the store planning ran for minutes. A cycle whose
    simple hulls are not closed now keeps its valid domains (needed.py), and
    a failed coalesce keeps the map as it is (polyhedral.coalesced)."""
    with td.Program("f5") as p:
        (i, I), (t, T) = p.dims("i", "t")
        n0 = td.input("x0", shape=(3,), dtype="float32", domain=(t,))
        n1 = td.recurrent(shape=(), dtype="int32", domain=(i, t))
        n2 = n0 * 2.0
        n3 = n2.astype("int32")
        n4 = td.square(n3)
        n5 = n4.sum()
        n6 = n5.astype("int32")
        n1[t >= 2] = n6
        n7 = n0 * 2.0
        n8 = n7.astype("int64")
        n9 = n8.sum()
        n10 = n9.astype("int32")
        n1[i, t] = n10
        n11 = td.recurrent(shape=(), dtype="float32", domain=(t,))
        n12 = td.recurrent(shape=(2,), dtype="float32", domain=(t,))
        n11[0] = 0.5
        n11[1] = 0.5
        n11[2] = 0.5
        n12[0] = 0.5
        n12[1] = 0.5
        n12[2] = 0.5
        n13 = n12[t - 2]
        n14 = n11[t - 3]
        n15 = n11[t - 2]
        n16 = n11[t - 1]
        n17 = n11[td.max(0, t - 2):t]
        n18 = n17.amax(0)
        n19 = n16 - n15
        n11[t, t % 3 == 0] = n19
        n20 = td.maximum(n15, -1.25)
        n21 = n14 * n20
        n22 = td.sin(n21)
        n11[t] = n22
        n23 = n11[t - 3]
        n24 = n12[t - 3]
        n25 = n12[t - 2]
        n26 = n12[t - 1]
        n27 = n23 < 0.3
        n28 = n23 * -0.5
        n29 = td.where(n27, n23, n28)
        n12[t, t % 3 == 0] = n29
        n30 = td.flip(n26, 0)
        n31 = n24 + n30
        n32 = td.sin(n31)
        n12[t] = n32
        n33 = td.bernoulli(3, domain=(), seed=1)
        n34 = td.symbol(i)
        n35 = n34.astype("float64")
        n36 = td.recurrent(shape=(2, 3), dtype="float64", domain=(t,))
        n37 = n11 < 0.3
        n38 = td.where(n37, n11, n11)
        n39 = n38.astype("float64")
        n36[t == T - 1] = n39
        n40 = n33.astype("float64")
        n36[t] = n40
        n41 = td.randn(3, domain=(i,), dtype="float64", seed=2)
        n42 = n36[td.max(0, t - 1):t + 1]
        n43 = n42.discounted_sum(0.9, dim=0)
        p.output("o0", n43)
    outs = {}
    for bounds in ({"I": 1, "T": 1}, {"I": 2, "T": 2}, {"I": 3, "T": 5}):
        x0 = np.random.default_rng(0).normal(size=(bounds["T"], 3)).astype(np.float32)
        outs = run_everywhere(p, bounds, {"x0": x0})
        assert_all(outs, "o0", np.asarray(outs["reference"]["o0"]), rtol=1e-6)


def test_f6_a_reader_moved_after_a_later_write_of_a_ring_slot():
    """Fuzz finding F6. The schedule map puts the n-step mean at T - 2 at
    time [T - 1, 0, ..] and the cast feeding it at T - 1 at [T - 1, 1, ..],
    so the store planner gave the cast a ring of one slot; but the two were
    children of an isl `set` node (any order), and the AST ran the mean
    after the loop that writes the cast at T - 1: numpy and jax returned -4
    (the last point twice) for -3.5. Set nodes now become sequences in the
    map's order (schedule._sequential)."""
    with td.Program("f6") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), dtype="int32", domain=(t,))
        s = x.sum()
        m = s[t:td.min(t + 2, T)].mean(0)
        p.output("o", m[T - 2])
    xv = np.array([[0, 3, 0], [-2, 3, -1], [1, 0, -4], [2, -3, -3]], dtype="int32")
    assert_all(run_everywhere(p, {"T": 4}, {"x": xv}), "o", -3.5)


@pytest.mark.parametrize("I", [2, 4])
def test_f7_gradient_of_two_recurrences_with_a_modular_case_compiles(I):
    """Fuzz finding F7, as the fuzzer shrank it: the scheduled backends
    refused the program at compile time ("the computable points of
    '%2 = sdg.merge' do not converge"); the reference ran it. The forward
    recurrence's valid domain needs isl's transitive closure, and the closure
    of the reads of the whole graph (gradient included) was not exact; valid
    domains are now solved one strongly connected component at a time."""
    rng = np.random.default_rng(7)
    W7 = rng.uniform(-0.5, 0.5, (3, 3)).astype(np.float32)
    W11 = rng.uniform(-0.5, 0.5, (3, 3)).astype(np.float32)
    with td.Program("f7") as p:
        (i, _I), (t, T) = p.dims("i", "t")
        n0 = td.input("x0", shape=(), dtype="bool", domain=(t,))
        n2 = td.recurrent(shape=(3,), dtype="float32", domain=(i,))
        n3 = td.recurrent(shape=(3,), dtype="float32", domain=(i,))
        n2[0] = 0.5
        n3[0] = n0[1].astype("float64")
        n2[i + 1] = td.tanh(n2 @ td.param("W7", W7) + n2[td.max(0, i - 1):i + 1].sum(0))
        w11 = td.param("W11", W11)
        n3[i + 1, (i + 1) % 3 == 0] = n3
        n3[i + 1] = td.tanh(n3 @ w11 + n3)
        p.output("o0", n3)
        p.output("oc", n2[i % 2 == 0])
        g0_, = td.grad(n3.sum(), [w11]); p.output("g0", g0_)

    def loss(w):
        s, total = np.ones(3), 3.0
        for k in range(1, I):
            s = s if k % 3 == 0 else np.tanh(s @ w + s)
            total += s.sum()
        return total

    outs = run_everywhere(p, {"I": I, "T": 3}, {"x0": np.array([False, True, True])})
    assert_all(outs, "g0", central_differences(loss, W11.astype(np.float64)), rtol=1e-4, atol=1e-5)


def test_f8_gradient_reads_no_forward_value_the_forward_never_computes():
    """Fuzz finding F8: n7 is computable only at t >= 1 (it reads x[i, t - 1])
    and only read there, but the gradient of `maximum` read n7's operands at
    every t, t = 0 included: both the reference (at run time) and the
    scheduled backends (at compile time) refused a valid program. The
    gradient of a tensor now carries where it may be non-zero (its
    contributions' conditions, pulled back through temporal indices), and the
    ops computing it only run there."""
    W = np.random.default_rng(8).uniform(-0.5, 0.5, (3, 3)).astype(np.float32)
    with td.Program("f8") as p:
        (i, I), (t, T) = p.dims("i", "t")
        x = td.input("x0", shape=(), dtype="float32", domain=(i, t))
        n4 = td.recurrent(shape=(3,), dtype="float32", domain=(i, t))
        n4[i, T - 1] = 0.5
        n5 = x[i, t - 1]
        n7 = n4 + td.maximum(x[td.max(0, i - 2):i + 1, t].sum(0), n5)
        n4[i, t - 1] = ((n7[td.max(0, i - 2):i + 1, t].sum(0) @ td.param("W", W)) + n5) * 0.5
        p.output("o0", n4)
        g, = td.grad(n4.sum(), [x]); p.output("g0", g)

    def loss(xv):
        n_i, n_t = xv.shape
        n4 = np.zeros((n_i, n_t, 3))
        n4[:, n_t - 1] = 0.5
        for tt in range(n_t - 1, 0, -1):
            n7 = np.stack([n4[a, tt] + max(xv[max(0, a - 2):a + 1, tt].sum(), xv[a, tt - 1])
                           for a in range(n_i)])
            for a in range(n_i):
                n4[a, tt - 1] = (n7[max(0, a - 2):a + 1].sum(0) @ W + xv[a, tt - 1]) * 0.5
        return n4.sum()

    xv = np.random.default_rng(1).normal(size=(3, 3)).astype(np.float32)
    outs = run_everywhere(p, {"I": 3, "T": 3}, {"x0": xv})
    assert_all(outs, "g0", central_differences(loss, xv.astype(np.float64)), rtol=1e-4, atol=1e-5)


def test_f10_a_value_of_the_last_steps_is_computed_before_its_reader():
    """F10 (seed 37, program 3,855): isl's AST ran the domain-[] value h[T - 2]
    (S5[] -> [T] in the band) after the merge that reads it at t = T - 2
    (S3[t] -> [2 + t]), although the schedule tree orders it first. The loop
    tree is now checked against the dependences in the order it executes
    (executed_order.py); this one falls back to the schedule with its
    0-dimensional statements lifted, whose AST is right."""
    W = np.array([[-0.7, -0.6, -0.65], [-0.31, 0.72, -0.8], [0.47, 0.63, -0.18]], dtype=np.float32)
    with td.Program("f10") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        h = td.recurrent(shape=(3,), domain=(t,))
        h[T - 1] = td.symbol(T - 1 - t).astype("float32")[T - 1]
        h[T - 2] = x[T - 2]
        h[t - 2, (t - 2) % 2 == 0] = x[t - 2]
        h[t - 2] = td.tanh(h[t - 1] @ td.param("W", W) + (0.5 + x[t - 2]))
        p.output("oc", h[t % 2 == 0])
    x = np.array([-0.6, -0.35], dtype=np.float32)
    outs = run_everywhere(p, {"T": 2}, {"x": x})
    for b, out in outs.items():
        np.testing.assert_allclose(out["oc"][(0,)], np.full(3, -0.6, np.float32), err_msg=b)


def test_f11_a_fused_program_computes_no_point_the_unfused_one_does_not():
    """F11 (seed 40, program 1,090): with 64-bit values admitted into islands
    the fused program ran a max over an empty window at t = 0, a point nobody
    needs. Cause: the needed points of the max were a simple hull (an
    over-approximation, lowering/needed.py) that added t = 0; fusion only
    changed which sets were complex enough to be hulled. Fixed in needed.py:
    a fallible op's points with an empty read that no output reaches are
    removed, with the points that read them."""
    with td.Program("f11") as p:
        (t, T), = p.dims("t")
        n0 = td.input("x0", shape=(3,), dtype="int32", domain=())
        n1 = td.input("x1", shape=(2,), dtype="float32", domain=(t,))
        n2 = td.input("x2", shape=(2,), dtype="float32", domain=(t,))
        n3 = n0.sum()
        n4 = td.recurrent(shape=(3,), dtype="int32", domain=(t,))
        n5 = td.recurrent(shape=(), dtype="float32", domain=(t,))
        n4[0] = 1
        n6 = n3.astype("float32")
        n5[0] = n6
        n7 = n5[t - 1]
        n8 = n4[t - 1]
        n9 = -n0
        n10 = n8 + n9
        n11 = n10 % 7
        n4[t] = n11
        n12 = n4[t - 1]
        n13 = n5[t - 1]
        n14 = n5[td.max(0, t - 2):t]
        n15 = n14.amax(0)
        n16 = n2[t - 1]
        n5[t, t % 2 == 0] = n15
        n17 = td.tanh(n13)
        n18 = n15 > 0.3
        n19 = td.logical_not(n18)
        n20 = n18 & n19
        n21 = td.where(n20, n13, n17)
        n22 = n13 + n21
        n23 = td.tanh(n22)
        n5[t] = n23
        n24 = td.symbol(t)
        n25 = n1[td.max(0, t - 1)]
        n26 = n1[0:T]
        n27 = n26.sum(0)
        n28 = td.recurrent(shape=(), dtype="float32", domain=(t,))
        n28[0] = 0.5
        n29 = n5 ** 2
        n30 = n28 + n29
        n31 = td.tanh(n30)
        n28[t + 1] = n31
        n32 = td.recurrent(shape=(2, 3), dtype="bool", domain=(t,))
        n33 = td.recurrent(shape=(3,), dtype="float32", domain=(t,))
        n34 = n5[T - 1]
        n35 = n34 > 0.3
        n32[T - 1] = n35
        n36 = n5[T - 2]
        n37 = n36 < 0.3
        n32[T - 2] = n37
        n38 = n0 > 0
        n32[T - 3] = n38
        n39 = n5[T - 1]
        n33[T - 1] = n39
        n40 = n4[T - 2]
        n41 = n40.astype("float32")
        n33[T - 2] = n41
        n33[T - 3] = 0.5
        n42 = n33[t + 2]
        n43 = n32[t + 1]
        n44 = n32[t + 2]
        n45 = n32[t + 3]
        n46 = n32[t + 1:td.min(t + 3, T)]
        n47 = n46.sum(0)
        n48 = n4[t + 2]
        n49 = n5[t + 2]
        n50 = td.logical_not(n45)
        n51 = n44 ^ n50
        n32[t] = n51
        n52 = n33[t + 1]
        n53 = n33[t + 2]
        n54 = n33[t + 3]
        n55 = n24[t + 2]
        n56 = n28 ** 2
        n33[t, t % 2 == 0] = n56
        n57 = n53 * n54
        n58 = td.tanh(n57)
        n33[t] = n58
        p.output("o0", n33)
        p.output("o1", n32)
    inputs = {"x0": np.array([4, 1, 4], dtype="int32"), "x1": np.array([[-0.3468681573867798, -1.5239185094833374], [-0.7462887167930603, -0.31870192289352417], [-0.451185941696167, -1.5767537355422974], [-0.029772557318210602, -1.298516869544983]], dtype="float32"), "x2": np.array([[1.5031042098999023, -0.7137938141822815], [0.6988546848297119, -0.637138307094574], [-0.26673978567123413, -1.8515347242355347], [-1.0050594806671143, -1.0383380651474]], dtype="float32")}
    outs = run_everywhere(p, {"T": 4}, inputs)
    for b in ("numpy", "jax"):
        for name in ("o0", "o1"):
            np.testing.assert_allclose(np.asarray(outs[b][name], dtype=np.float64),
                                       np.asarray(outs["reference"][name], dtype=np.float64), rtol=1e-5, atol=1e-6)


def _f12_minimal():
    # the core of F12: a backward recurrence with a modular case whose base case
    # reads x0 at i = 1, so every point of it is computable only when I >= 2
    with td.Program("f12_minimal") as p:
        (i, I), (t, T) = p.dims("i", "t")
        x0 = td.input("x0", shape=(), dtype="float32", domain=(i, t))
        both = x0[0, t] + x0[1, t]                      # domain (t,)
        s = td.recurrent(shape=(), dtype="int64", domain=(t,))
        s[T - 1] = both[T - 1].astype("int64")
        after = s[t + 1]
        s[t, t % 3 == 0] = after
        s[t] = after + 1
        p.output("s", s)
    return p


def test_f12_minimal_a_computable_only_for_some_bounds_backward_recurrence():
    # F12 (seed 42, program 3,133): the whole read relation's transitive closure
    # (two statements, t % 3 branches, the parameter I) ran out of isl's budget and
    # the valid domains did not converge: a ScheduleError at compile time. Now the
    # component's statements are eliminated one at a time (lowering/valid_elimination.py).
    p = _f12_minimal()
    x0 = np.array([[1.7, -2.2, 3.9, 0.4, 5.5], [2.1, 0.3, -1.2, 4.4, 3.0]], dtype=np.float32)
    for T in (1, 3, 5):
        want, v = [], int(np.float32(x0[0, T - 1]) + np.float32(x0[1, T - 1]))
        for t in range(T - 1, -1, -1):
            if t < T - 1:
                v = v if t % 3 == 0 else v + 1
            want.append(v)
        outs = run_everywhere(p, {"I": 2, "T": T}, {"x0": x0[:, :T]})
        assert_all(outs, "s", np.array(want[::-1]))
    for b in BACKENDS:   # I = 1: no point of s is computable, and the output needs them
        with pytest.raises(RuntimeError, match=r"(input \"x0\"|sdg.input).* i = 1.*but I = 1"):
            p.compile(backend=b).run(bounds={"I": 1, "T": 4}, inputs={"x0": x0[:1, :4]})


def test_f12_a_backward_recurrence_with_a_modular_case_and_a_halved_read_compiles():
    with td.Program("f12") as p:
        (i, I), (t, T) = p.dims("i", "t")
        n0 = td.input("x0", shape=(), dtype="float32", domain=(i, t))
        n1 = td.input("x1", shape=(), dtype="int32", domain=(i, t))
        n2 = n0[td.max(0, i - 2):i + 1, t]
        n3 = n2.sum(0)
        n4 = td.recurrent(shape=(), dtype="float32", domain=(t,))
        n4[0] = 0.5
        n4[1] = 0.5
        n5 = n4[t + 1]
        n6 = td.ceil(n4)
        n7 = n4 + n6
        n8 = td.tanh(n7)
        n4[t + 2] = n8
        n9 = n0[0, t]
        n10 = n0[1, t]
        n11 = n9 + n10
        n12 = n4[td.max(0, t - 2):t + 1]
        n13 = n12.discounted_sum(0.9, dim=0)
        n14 = td.recurrent(shape=(2,), dtype="int64", domain=(i, t))
        n15 = n0[0, t]
        n16 = n15 * 2.0
        n17 = n16.astype("int64")
        n14[0, t] = n17
        n18 = n3[i + 1, t]
        n19 = n11 * 2.0
        n20 = n19.astype("int32")
        n21 = n0 > 0.3
        n22 = n1 + 1
        n23 = td.where(n21, n1, n22)
        n24 = n20 * n23
        n25 = n14 - n24
        n26 = n25 % 7
        n14[i + 1, t] = n26
        n27 = n4[t // 2]
        n28 = n0[td.max(0, i - 2):i + 1, t]
        n29 = n28.amax(0)
        n30 = td.recurrent(shape=(3,), dtype="int64", domain=(t,))
        n31 = td.recurrent(shape=(3,), dtype="float64", domain=(t,))
        n32 = n11[T - 1]
        n33 = n32 * 2.0
        n34 = n33.astype("int32")
        n30[T - 1] = n34
        n35 = n13[T - 1]
        n31[T - 1] = n35
        n36 = n31[t + 1]
        n37 = n30[t + 1]
        n38 = n4[t + 1]
        n30[t, t % 3 == 0] = n37
        n39 = td.abs(n37)
        n40 = n37 + n39
        n41 = n40 % 7
        n30[t] = n41
        n42 = n31[t + 1]
        n43 = n31[t + 1:td.min(t + 3, T)]
        n44 = n43.mean(0)
        n45 = td.maximum(n27, n27)
        n46 = td.minimum(n13, n45)
        n47 = n42 * n46
        n48 = td.sin(n47)
        n31[t] = n48
        p.output("o0", n31)
        p.output("o1", n30)
    rng = np.random.default_rng(12)
    for I, T in ((2, 1), (2, 4), (3, 7)):
        inputs = {"x0": rng.standard_normal((I, T)).astype(np.float32),
                  "x1": rng.integers(-3, 4, (I, T)).astype(np.int32)}
        outs = run_everywhere(p, {"I": I, "T": T}, inputs)
        for name in ("o0", "o1"):
            assert_all(outs, name, np.asarray(outs["reference"][name]), rtol=1e-6)


def test_f13_a_domainless_value_read_between_two_xla_loops_is_not_donated():
    # fuzz seed 43 (as found): the dense array of a domain-less point store is
    # the value itself; handed to a host reader after one XLA loop and kept by
    # another store, it was donated by the next loop call ("Array has been deleted").
    with td.Program("f13") as p:
        (i, I), (t, T) = p.dims("i", "t")
        n0 = td.input("x0", shape=(), dtype="float64", domain=(i, t))
        n1 = td.input("x1", shape=(), dtype="float32", domain=())
        n10 = td.recurrent(shape=(2,), dtype="float64", domain=(i, t))
        n10[i, T - 1] = n0[i, T - 1]
        n10[i, T - 2] = n0[i, T - 2]
        n10[i, T - 3] = n0[i, T - 3]
        n19 = n10[i, t + 3] + (n1 + n10[i, t + 2])
        n21 = n19[0:i + 1, t].discounted_sum(0.9, dim=0)
        n10[i, t, t % 3 == 0] = n1 / 1.5
        n10[i, t] = td.sin(n21 + td.where(n1 > 0.3, n1, n1 * -0.5))
        p.output("o0", n10)
        g0, g1 = td.grad(n10.sum(), [n0, n1])
        p.output("g0", g0)
        p.output("g1", g1)
    inputs = {"x0": np.array([[0.48, -0.83], [0.54, 0.70]]), "x1": np.array(-0.64, dtype=np.float32)}
    outs = run_everywhere(p, {"I": 2, "T": 2}, inputs)
    for name in ("o0", "g0", "g1"):
        assert_all(outs, name, outs["reference"][name], rtol=1e-6)
    assert p.compile(backend="jax").compiled.stats()["xla_loops"] > 0


def test_f14_a_merge_in_a_branch_that_never_runs_traces():
    # fuzz seed 46 (as found, dead values included: they shape the schedule):
    # inside an XLA loop, lax.cond traces both branches of an scf.if; a merge in
    # the branch that never runs had no condition that holds at trace time, and
    # tracing raised "no branch of a merge holds".
    W12 = np.array([[-0.0, 0.52], [0.37, 0.36]], dtype=np.float32)
    with td.Program("f14") as p:
        (i, I), (t, T) = p.dims("i", "t")
        n0 = td.input("x0", shape=(), dtype="int64", domain=())
        n1 = td.input("x1", shape=(2, 3), dtype="float32", domain=(i, t))
        n2 = td.input("x2", shape=(2,), dtype="bool", domain=(i, t))
        n3 = td.rand(3, domain=(i, t), dtype="float64", seed=1)
        n4 = n2[td.max(0, i - 1), t]  # noqa: F841
        n5 = n2[td.max(0, i - 1), t]
        n6 = n1 @ n3
        n7 = td.recurrent(shape=(2,), dtype="float32", domain=(i, t))
        n7[i, 0] = n0.astype("float32")
        n9 = n7[i, td.max(0, t - 1):t + 1]
        n10 = n9.sum(0)  # noqa: F841
        n11 = n6[i, t + 1]
        n13 = n7 @ td.param("W12", W12)
        n7[i, t + 1, (t + 1) % 3 == 0] = td.take(n2.astype("float32"), 0, -1)
        n18 = td.cat([n5.astype("float64"), n11], 0).sum()
        n7[i, t + 1] = td.sin(n13 + n18).astype("float32")
        n22 = n7 @ n7
        p.output("o0", n22)
        p.output("o1", n0)
        p.output("o2", n2)
        g0, = td.grad(n22, [n1])
        p.output("g0", g0)
    inputs = {"x0": np.array(1, dtype=np.int64),
              "x1": np.array([[[[-1.14, 0.014, -0.032], [-0.168, -0.221, -1.16]]]], dtype=np.float32),
              "x2": np.array([[[False, True]]])}
    outs = run_everywhere(p, {"I": 1, "T": 1}, inputs)
    for name in ("o0", "g0"):
        assert_all(outs, name, outs["reference"][name], rtol=1e-5, atol=1e-6)
    assert p.compile(backend="jax").compiled.stats()["xla_loops"] > 0


@pytest.mark.parametrize("zeros", [[], [(1, 0)], [(1, 0), (2, 0)], [(1, 0), (1, 1), (3, 2)]])
def test_f15_gradient_of_a_product_with_zero_factors_is_not_nan(zeros):
    # fuzz seed 48 (program ~1,080): d prod(x) / d x_j was prod(x) / x_j, NaN where
    # x_j = 0 (a bool cast to float in the fuzz program). Now the product of the others
    # (zero-safe: the non-zero product, where exactly one factor is zero, else 0).
    import jax
    import jax.numpy as jnp

    with td.Program("f15") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        y = x[0:t + 1].prod(0)                         # running product over the prefix
        z = x[0:T].prod((0, 1))                       # one product over both axes
        g, = td.grad(y[0:T].sum() + z, [x])
        p.output("g", g)
    xv = np.random.default_rng(15).uniform(0.5, 1.5, (4, 3)).astype(np.float32)
    for r, c in zeros:
        xv[r, c] = 0.0

    def f(x):
        return jnp.cumprod(x, 0).sum() + jnp.prod(x)

    with jax.enable_x64(True):
        want = np.asarray(jax.grad(f)(jnp.asarray(xv, jnp.float64)))
    outs = run_everywhere(p, {"T": 4}, {"x": xv})
    assert_all(outs, "g", want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("T", [2, 3, 5])
def test_f16_a_merge_in_a_peeled_loop_keeps_the_branches_of_each_copy(T):
    # isl guards the backward recurrence's first step (`c0 == -1`) with an else;
    # lowering/loop_peel.py splits that loop in three. The copies once shared their
    # statements, so the merge o[t] got the branches of the last copy annotated:
    # on jax, o[1] read the branch that does not hold there (0 instead of 1.386).
    with td.Program("f16") as p:
        (t, T_), = p.dims("t")
        s = td.recurrent(shape=(3,), domain=(t,))
        s[T_ - 1] = 0.5
        s[t - 1, (t - 1) % 3 == 0] = s
        s[t - 1] = td.tanh(s + s)
        o = td.recurrent(shape=(), domain=(t,))
        o[t % 3 == 1] = td.tanh(s).sum()
        o[t] = s.sum()
        p.output("o", o)
    state = [np.full(3, 0.5, np.float32)]
    for k in range(T - 2, -1, -1):   # s[k] from s[k + 1]
        nxt = state[0]
        state.insert(0, nxt if k % 3 == 0 else np.tanh(nxt + nxt))
    expected = [np.tanh(v).sum() if k % 3 == 1 else v.sum() for k, v in enumerate(state)]
    assert_all(run_everywhere(p, {"T": T}, {}), "o", expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("T", [3, 5])
def test_vectorize_does_not_batch_a_read_of_a_merge_without_its_base_case(T):
    """Fuzz finding (non-CI seed 3 of test_fuzz_vectorize.py, shrunk by hand): `a[t - 1]`
    of a backward recurrence is a merge `a[T - 2] if t eq T - 1, a'[t - 1] if true`,
    with no value at t = 0; the recurrence c reads it at t only for t >= 1. sdg-vectorize
    batched its cast to float64 before c's loop (early_point), which needed every point,
    t = 0 included: the default pipeline failed where the program without passes runs
    (a merge that can lack a value near the step's ends is now read per point)."""
    w = np.eye(3) * 0.5
    with td.Program("fv") as p:
        (t, T_), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        a = td.recurrent(shape=(3,), domain=(t,))
        a[T_ - 1] = td.zeros(3) + x[T_ - 1]
        a[T_ - 2] = td.zeros(3) + x[T_ - 2]
        a[t] = td.tanh(a[t + 1] * 2.0)
        c = td.recurrent(shape=(2, 3), dtype="float64", domain=(t,))
        c[T_ - 1] = td.zeros(2, 3).astype("float64") + 0.5
        c[t - 1] = td.sin(c[t] @ w + a[t - 1])
        p.output("c", c)
    x = np.linspace(-0.4, 0.4, T).astype(np.float32)
    a_ = np.zeros((T, 3), np.float64)
    a_[T - 1], a_[T - 2] = x[T - 1], x[T - 2]
    for k in range(T - 3, -1, -1):
        a_[k] = np.tanh(a_[k + 1] * 2.0)
    c_ = np.zeros((T, 2, 3))
    c_[T - 1] = 0.5
    for k in range(T - 1, 0, -1):
        c_[k - 1] = np.sin(c_[k] @ w + a_[k - 1])
    assert_all(run_everywhere(p, {"T": T}, {"x": x}), "c", c_, rtol=1e-5, atol=1e-6)
    want = p.compile(backend="reference", passes=[]).run(bounds={"T": T}, inputs={"x": x})["c"]
    np.testing.assert_allclose(want, c_, rtol=1e-5, atol=1e-6)
