"""Fuzz findings about storage (the regression tests of issue 8's random-program
generator, continued from test_fuzz_regressions.py)."""
import numpy as np

import tidal as td

BACKENDS = ("reference", "numpy", "jax")


def test_f16_a_ring_store_is_checked_against_the_loops_that_run():
    # fuzz seed 49 (as found, dead values included: they shape the schedule). isl
    # gave the merge n64[t] and the island case that reads it at t + 1 equal times
    # (the schedule tree leaves them unordered); the loops isl's AST generates run
    # the read at t + 1 first, and the store plans, checked with strict "before" /
    # "after" in the tree's order, ignored the tie: the island's ring(1) store was
    # overwritten (at t + 1) before the merge read it (at t), and row 2 of o0 was
    # row 3's value on numpy and jax. Ties now count as possibly after.
    PARAMS = {"W23": np.array([[0.2800000011920929, 0.10999999940395355, -0.029999999329447746], [-1.159999966621399, 0.2199999988079071, -1.059999942779541], [0.44999998807907104, 0.30000001192092896, 0.41999998688697815]], dtype="float32"), "W25": np.array([[0.18000000715255737, -0.0, -0.27000001072883606], [-1.1399999856948853, 0.009999999776482582, 0.46000000834465027], [0.5199999809265137, -0.27000001072883606, 1.1100000143051147]], dtype="float32"), "W61": np.array([[-0.2800000011920929, -0.5299999713897705, 0.5299999713897705], [-0.5600000023841858, -0.8899999856948853, 0.33000001311302185], [0.41999998688697815, -0.4699999988079071, -0.2800000011920929]], dtype="float32")}
    with td.Program("fuzz") as p:
        (t, T), = p.dims("t")
        n0 = td.input("x0", shape=(3,), dtype="bool", domain=(t,))
        n1 = td.input("x1", shape=(2,), dtype="int32", domain=(t,))
        n2 = td.input("x2", shape=(2,), dtype="float32", domain=(t,))
        n3 = n2[0:t + 1]
        n4 = n3.discounted_sum(0.9, dim=0)
        n5 = td.rand(domain=(t,), dtype="float32", seed=1)
        n6 = td.recurrent(shape=(3,), dtype="float32", domain=(t,))
        n7 = td.recurrent(shape=(3,), dtype="float32", domain=(t,))
        n8 = n5[0]
        n6[0] = n8
        n9 = n5[1]
        n6[1] = n9
        n7[0] = 0.5
        n7[1] = 0.5
        n10 = n7[t - 1]
        n11 = n6[t - 2]
        n12 = n6[t - 1]
        n13 = n6[0:t]
        n14 = n13.discounted_sum(0.5, dim=0)
        n15 = n5[t - 1]
        n16 = n11 * n15
        n17 = td.tanh(n16)
        n6[t] = n17
        n18 = n6[t - 1]
        n19 = n7[t - 2]
        n20 = n7[t - 1]
        n21 = n7[0:t]
        n22 = n21.sum(0)
        n23 = td.param("W23", PARAMS["W23"])
        n24 = n19 @ n23
        n25 = td.param("W25", PARAMS["W25"])
        n26 = n18 @ n25
        n27 = n18 % 1.5
        n28 = n24 + n27
        n29 = n28 * 0.5
        n7[t] = n29
        n30 = n1 // 2
        n31 = td.recurrent(shape=(), dtype="int32", domain=(t,))
        n32 = td.recurrent(shape=(2,), dtype="float64", domain=(t,))
        n33 = n5[T - 1]
        n34 = n33 * 2.0
        n35 = n34.astype("int32")
        n31[T - 1] = n35
        n36 = n5[T - 1]
        n32[T - 1] = n36
        n37 = n1[t - 1]
        n38 = n2[t - 1]
        n39 = n4[t - 1]
        n40 = n5[t - 1]
        n41 = n31 - n31
        n42 = n31 + n41
        n43 = n42 % 7
        n31[t - 1] = n43
        n44 = n31[t - 1]
        n45 = n2[t - 1]
        n46 = n4 * n5
        n32[t - 1, (t + -1) % 2 == 0] = n46
        n47 = n32 - n45
        n48 = n47 * 0.5
        n32[t - 1] = n48
        n49 = n6[0]
        n50 = n6[T - 1]
        n51 = n49 - n50
        n52 = td.recurrent(shape=(), dtype="float32", domain=(t,))
        n53 = n31[T - 1]
        n54 = n53.astype("float64")
        n52[T - 1] = n54
        n55 = td.abs(n2)
        n56 = n55 + 1.0
        n57 = n5 / n56
        n58 = n57.sum()
        n59 = n52 * n58
        n60 = n59 * 0.5
        n52[t - 1] = n60
        n61 = td.param("W61", PARAMS["W61"])
        n62 = n25 @ n61
        n63 = n2[td.max(0, t - 1)]
        n64 = td.recurrent(shape=(3,), dtype="float64", domain=(t,))
        n64[0] = n51
        n65 = n6[1]
        n64[1] = n65
        n66 = n64[t - 2]
        n67 = n64[t - 1]
        n68 = n0[t - 1]
        n69 = n5[t - 1]
        n70 = n6[t - 1]
        n71 = n31[t - 1]
        n72 = n52[t - 2]
        n73 = n71.astype("float32")
        n74 = n72 < 0.3
        n75 = td.logical_not(n74)
        n76 = n73 * -0.5
        n77 = td.where(n75, n73, n76)
        n78 = n66 + n77
        n79 = td.sin(n78)
        n64[t] = n79
        p.output("o0", n64)
        p.output("o1", n32)
    inputs = {"x0": np.array([[False, False, True], [False, True, True], [False, False, False], [True, False, True]], dtype="bool"), "x1": np.array([[-2, -2], [-2, 4], [3, -4], [0, 1]], dtype="int32"), "x2": np.array([[-1.2458527088165283, -0.6620538234710693], [-0.25569024682044983, -0.37838006019592285], [-0.9010139107704163, -0.024349091574549675], [0.37294766306877136, 0.4701046347618103]], dtype="float32")}
    want = p.compile(backend="reference").run(bounds={"T": 4}, inputs=inputs)
    np.testing.assert_allclose(want["o0"][2], [0.171687] * 3, atol=1e-6)
    for backend in BACKENDS[1:]:
        out = p.compile(backend=backend).run(bounds={"T": 4}, inputs=inputs)
        for name in ("o0", "o1"):
            np.testing.assert_allclose(np.asarray(out[name]), np.asarray(want[name]), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} on {backend}")


def test_f17_a_strided_read_does_not_stop_the_lifting_pass():
    # fuzz seed 52 (program ~60, shrunk): sdg-lift computed the read shape of every
    # reduction's operand, and a strided one (x[0:I:2, t]) raised inside the pass
    # ("internal error in compile stage 'sdg-lift'"). Such reads are now refused.
    with td.Program("fuzz") as p:
        (i, I), (t, T) = p.dims("i", "t")
        x = td.input("x0", shape=(), dtype="float32", domain=(i, t))
        s = x[0:I:2, t].sum(0)
        p.output("o0", s)
        g, = td.grad(td.tanh(s), [x])
        p.output("g0", g)
    xv = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    want = xv[0::2].sum(0)
    grad = np.zeros_like(xv)
    grad[0::2] = 1 - np.tanh(want) ** 2
    for backend in BACKENDS:
        out = p.compile(backend=backend).run({"I": 4, "T": 3}, {"x0": xv})
        np.testing.assert_allclose(out["o0"], want, rtol=1e-6, err_msg=backend)
        np.testing.assert_allclose(out["g0"], grad, rtol=1e-5, err_msg=backend)


def test_f18_gradient_of_per_step_discounts_over_a_window_that_may_be_empty():
    # fuzz seed 53 (program ~230): the VJP of linear_scan shifted its coefficients with
    # pad(slice(a, 0, n - 1)), whose size max(0, n - 2) + 1 is not n where the window
    # x[t + 1:T] may be empty (n = T - t - 1): tracing the gradient failed. The shift
    # is now pad then slice n, of size n whatever n.
    import jax
    import jax.numpy as jnp

    w0 = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    with td.Program("fuzz") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), dtype="float32", domain=(t,))
        w = td.param("w", w0)
        v = x * w
        win = v[t + 1:T]
        g = win.discounted_sum(td.sigmoid(win), dim=0)
        loss = g[0:T].sum()
        p.output("g", g)
        p.output("dw", td.grad(loss, [w])[0])
    xv = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)

    def reference(wv):
        vv = jnp.asarray(xv, jnp.float64) * wv
        total = 0.0
        for t0 in range(5):
            acc = jnp.zeros(3)
            for k in range(4, t0, -1):           # window t0 + 1 .. 4, from the end
                acc = vv[k] + jax.nn.sigmoid(vv[k]) * acc
            total = total + acc.sum()
        return total

    with jax.enable_x64(True):
        want = np.asarray(jax.grad(reference)(jnp.asarray(w0, jnp.float64)))
    for backend in BACKENDS:
        out = p.compile(backend=backend).run({"T": 5}, {"x": xv})
        np.testing.assert_allclose(out["g"][-1], 0.0, err_msg=backend)   # the empty window
        np.testing.assert_allclose(out["dw"], want, rtol=1e-4, err_msg=backend)


def test_f20_vectorizing_a_reduction_over_a_strided_slice():
    # fuzz seed 55 (program ~235, shrunk): sdg-vectorize batched `x[i, 0:T:2].amin(0)`
    # over i and computed its operand's read type assuming unit-step slices
    # ("internal error in compile stage 'sdg-vectorize': AttributeError"); a strided
    # slice has (T + 1) // 2 rows.
    with td.Program("fuzz") as p:
        (i, I), (t, T) = p.dims("i", "t")
        x = td.input("x0", shape=(2,), dtype="float32", domain=(i, t))
        m = x[i, 0:T:2].amin(0)
        p.output("o0", td.tanh(m)[0:I].sum(0))
    xv = np.sin(np.arange(4 * 5 * 2, dtype=np.float32)).reshape(4, 5, 2)
    want = np.tanh(xv[:, 0::2].min(1)).sum(0)
    assert "sdg.reduce min [1]" in p.compile(backend="numpy").stages["sdg-vectorize"]
    for backend in BACKENDS:
        out = p.compile(backend=backend).run({"I": 4, "T": 5}, {"x0": xv})
        np.testing.assert_allclose(out["o0"], want, rtol=1e-5, err_msg=backend)
