"""td.categorical / td.multinomial: the documented draw rule (re-implemented
here with NumPy), the same draws on every backend (reference, numpy, jax,
jax with x64), fresh draws at every point, seeds, empirical frequencies
(a chi-square bound at a fixed seed), and errors at the user's line."""
import jax
import numpy as np
from tidal.runtime.counter_random import random_draw
import pytest

import tidal as td

BACKENDS = ("reference", "numpy", "jax", "jax-x64")


def run_all(p, bounds, inputs):
    """{backend: outputs} for every backend; executables cached on the program."""
    cache = p.__dict__.setdefault("_test_exes", {})
    out = {}
    for b in BACKENDS:
        x64 = b == "jax-x64"
        with jax.enable_x64(x64):
            if b not in cache:
                cache[b] = p.compile(backend="jax" if x64 else b)
            out[b] = {k: np.asarray(v) for k, v in cache[b].run(bounds=bounds, inputs=inputs).items()}
    return out


def the_same_everywhere(outs):
    first = outs["reference"]
    for backend, out in outs.items():
        for k, v in first.items():
            assert out[k].dtype == np.int64, (backend, k)
            np.testing.assert_array_equal(out[k], v, err_msg=f"{backend} {k}")
    return first


# -- the rule of docs/semantics.md, in NumPy -------------------------------------------------------
def rule_cdf(p, axis):
    c = np.cumsum(np.asarray(p, np.float64), axis=axis)
    return c / np.take(c, [-1], axis=axis)


def rule_categorical(logits, seed, point, axis=-1):
    x = np.asarray(logits, np.float64)
    cdf = rule_cdf(np.exp(x - x.max(axis=axis, keepdims=True)), axis)
    u = random_draw(np, "uniform", seed, point, np.delete(np.array(x.shape), axis % x.ndim))
    count = (cdf <= np.expand_dims(u, axis)).sum(axis=axis)
    return np.minimum(count, x.shape[axis] - 1)


def rule_multinomial(probs, n, seed, point):
    cdf = rule_cdf(probs, -1)
    u = random_draw(np, "uniform", seed, point, np.shape(probs)[:-1] + (n,))
    return np.minimum((cdf[..., None, :] <= u[..., :, None]).sum(-1), np.shape(probs)[-1] - 1)


def test_draws_follow_the_rule_on_every_backend():
    rng = np.random.default_rng(0)
    n = 7
    logits = rng.standard_normal((n, 3, 5)).astype(np.float32)
    probs = np.array([[0.1, 0.0, 0.5, 0.4], [1.0, 2.0, 3.0, 0.0]], np.float32)  # unnormalised ok
    with td.Program() as p:
        (t, T), = p.dims("t")
        lg = td.input("l", shape=(3, 5), domain=(t,))
        pr = td.input("p", shape=(2, 4))
        p.output("c", td.categorical(lg, seed=11))
        p.output("c0", td.categorical(lg, dim=0, seed=12))
        p.output("m", td.multinomial(pr, 6, seed=13, domain=(t,)))
        p.output("m1", td.multinomial(pr[0], seed=14))                  # no domain: one draw
    out = the_same_everywhere(run_all(p, {"T": n}, {"l": logits, "p": probs}))
    for k in range(n):
        np.testing.assert_array_equal(out["c"][k], rule_categorical(logits[k], 11, (k,)))
        np.testing.assert_array_equal(out["c0"][k], rule_categorical(logits[k], 12, (k,), axis=0))
        np.testing.assert_array_equal(out["m"][k], rule_multinomial(probs, 6, 13, (k,)))
    np.testing.assert_array_equal(out["m1"], rule_multinomial(probs[0], 1, 14, ()))
    assert out["c"].shape == (n, 3) and out["c0"].shape == (n, 5) and out["m"].shape == (n, 2, 6)
    assert len({tuple(r) for r in out["m"].reshape(n, -1).tolist()}) > 1   # fresh draws per t
    assert not np.isin(out["m"][:, 0], [1]).any() and not np.isin(out["m"][:, 1], [3]).any()


def test_seeds_change_the_draws_and_fix_them():
    def program(seed_a, seed_b):
        with td.Program() as p:
            (t, T), = p.dims("t")
            lg = td.zeros(8, domain=(t,))                 # uniform over 8 categories
            p.output("a", td.categorical(lg, seed=seed_a))
            p.output("b", td.categorical(lg, seed=seed_b))
            p.output("n1", td.categorical(lg))            # the program's next seeds (0, 1)
            p.output("n2", td.categorical(lg))
        return p.compile(backend="numpy").run(bounds={"T": 64})

    same, other = program(5, 5), program(5, 6)
    np.testing.assert_array_equal(same["a"], same["b"])
    np.testing.assert_array_equal(same["a"], other["a"])
    assert (other["a"] != other["b"]).any()
    assert (same["n1"] != same["n2"]).any()
    np.testing.assert_array_equal(same["n1"], [rule_categorical(np.zeros(8), 0, (k,)) for k in range(64)])


def _chi2(counts, probs):
    expected = probs * counts.sum()
    return float(((counts - expected) ** 2 / expected).sum())


def test_empirical_frequencies_match_the_probabilities():
    """15000 categorical draws over 300 points and 20000 multinomial draws at 1:
    chi-square statistics with 4 degrees of freedom below 25 (p < 1e-4 for a
    correct sampler; a category shifted by one gives thousands)."""
    logits = np.log(np.array([0.05, 0.15, 0.2, 0.25, 0.35]))
    probs = np.exp(logits)
    with td.Program() as p:
        (t, T), = p.dims("t")
        lg = td.input("l", shape=(50, 5), dtype="float64")
        p.output("c", td.categorical(lg, seed=21, domain=(t,)))
        p.output("m", td.multinomial(td.input("p", shape=(5,), dtype="float64"), 20000, seed=22))
    outs = run_all(p, {"T": 300}, {"l": np.tile(logits, (50, 1)), "p": probs * 3.0})
    out = the_same_everywhere(outs)
    assert out["c"].shape == (300, 50)
    for draws in (out["c"], out["m"]):
        counts = np.bincount(draws.ravel(), minlength=5)
        assert _chi2(counts, probs) < 25, counts


def test_impossible_categories_are_never_drawn():
    with td.Program() as p:
        (t, T), = p.dims("t")
        lg = td.input("l", shape=(4,), domain=(t,))
        p.output("c", td.categorical(lg, seed=1))
        p.output("m", td.multinomial(td.exp(lg), 50, seed=2))
    logits = np.tile(np.array([-np.inf, 0.0, -np.inf, 1.0], np.float32), (40, 1))
    logits[::2, 1] = -np.inf                                            # one category left
    out = the_same_everywhere(run_all(p, {"T": 40}, {"l": logits}))
    assert set(np.unique(out["c"])) == {1, 3} and set(np.unique(out["m"])) == {1, 3}
    assert (out["c"][::2] == 3).all() and (out["m"][::2] == 3).all()


def test_sampling_in_a_decode_loop():
    """tok[t + 1] ~ categorical(E[tok[t]] @ W): a new draw at every step."""
    rng = np.random.default_rng(3)
    E, W = rng.standard_normal((6, 4)), rng.standard_normal((4, 6))
    with td.Program() as p:
        (t, T), = p.dims("t")
        e, w = td.param("E", E), td.param("W", W)
        tok = td.recurrent(shape=(), dtype="int64", domain=(t,))
        tok[0] = td.constant(np.int64(0))
        tok[t + 1] = td.categorical(e.index_select(0, tok[t]) @ w, seed=9)
        p.output("tok", tok)
    out = the_same_everywhere(run_all(p, {"T": 30}, {}))
    toks = [0]
    for k in range(29):          # the categorical of the case s[t + 1] runs at point t = k
        toks.append(int(rule_categorical(E[toks[-1]] @ W, 9, (k,))))
    np.testing.assert_array_equal(out["tok"], toks)
    assert len(set(toks)) > 2


def test_sampling_errors_at_the_users_line(line_of):
    with td.Program():
        x = td.input("x", shape=(3, 4))
        cases = [
            (lambda: td.categorical(x, dim=2), "out of range", "dim"),  # @dim
            (lambda: td.categorical(x.sum()), "rank >= 1", "scalar"),  # @scalar
            (lambda: td.categorical(x, seed=-1), "non-negative int", "seed"),  # @seed
            (lambda: td.multinomial(x, 0), "positive int", "zero"),  # @zero
            (lambda: td.multinomial(x, 2, replacement=False), "without replacement", "norep"),  # @norep
            (lambda: td.multinomial(td.zeros(3, 0)), "empty dimension", "empty"),  # @empty
        ]
        for fn, message, marker in cases:
            with pytest.raises(td.TidalError, match=message) as e:
                fn()
            assert e.value.lineno == line_of(marker), marker
        assert td.multinomial(x, 1, replacement=False).shape == td.multinomial(x).shape


def test_samples_carry_no_gradient():
    with td.Program() as p:
        w = td.param("w", np.array([0.5, 1.0, 2.0]))
        i = td.categorical(w, seed=0)
        loss = (w * 2.0).sum() + i.astype("float64")
        (g,) = td.grad(loss, [w])
        p.output("g", g)
    np.testing.assert_array_equal(p.compile(backend="reference").run()["g"], [2.0, 2.0, 2.0])
