"""td.nn.Stack: identical blocks as a temporal layer dim (issue 11, item 2).

* A residual tanh block stacked L times gives, on every backend, what the same
  blocks unrolled give and what a NumPy loop over the layers gives (hypothesis
  over L, T and the weights); the traced program has the same number of ops
  for every L.
* The Llama decode of examples/llm_decode.py with `stacked=True` (a K/V cache
  per (l, t)) gives the unrolled program's tokens, which are the NumPy decode's,
  for causal and window attention, with its loops inside XLA.
* Gradients through the layer recurrence equal jax.grad of the unrolled model,
  and stacked weights stepped by an optimizer over an iteration dim train as
  the unrolled ones do.
* Errors: mismatched blocks, weights derived at construction, a block changing
  the shape, a fixed bound given another value, bad sizes.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tidal as td
from program_helpers import BACKENDS, close, normal, run, value_and_grads
from test_llm_decode import L, SCHEDULED, expected, tiny


class Residual(td.nn.Module):
    """x + tanh(x @ W + b): one block."""

    def __init__(self, W, b, k):
        self.lin = td.nn.Linear(W.shape[0], W.shape[1], weight=W, bias=b, name=f"blocks.{k}.lin")

    def forward(self, x):
        return x + td.tanh(self.lin(x))


def residual_program(Ws, bs, stacked):
    with td.Program("residual") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2, Ws[0].shape[0]), domain=(t,))
        blocks = [Residual(W, b, k) for k, (W, b) in enumerate(zip(Ws, bs))]
        if stacked:
            y = td.nn.Stack(blocks, name="blocks")(x)
        else:
            y = x
            for blk in blocks:
                y = blk(y)
        p.output("y", y)
    return p


def residual_numpy(Ws, bs, x):
    y = x.astype(np.float64)
    for W, b in zip(Ws, bs):
        y = y + np.tanh(y @ W + b)
    return y


@settings(max_examples=6, deadline=None)
@given(L_=st.integers(1, 4), T=st.integers(1, 5), seed=st.integers(0, 2 ** 16))
def test_stack_matches_unrolled_and_numpy(L_, T, seed):
    rng = np.random.default_rng(seed)
    Ws = [(rng.standard_normal((3, 3)) / 2).astype(np.float32) for _ in range(L_)]
    bs = [rng.standard_normal(3).astype(np.float32) for _ in range(L_)]
    x = rng.standard_normal((T, 2, 3)).astype(np.float32)
    want = residual_numpy(Ws, bs, x)
    stacked = run(residual_program(Ws, bs, True), {"T": T}, {"x": x})["y"]     # every backend, equal
    close(stacked, want)
    close(stacked, run(residual_program(Ws, bs, False), {"T": T}, {"x": x}, backend="reference")["y"])


def test_stack_program_size_is_flat_in_depth():
    rng = np.random.default_rng(0)

    def ops(n):
        Ws = [rng.standard_normal((3, 3)).astype(np.float32) for _ in range(n)]
        bs = [rng.standard_normal(3).astype(np.float32) for _ in range(n)]
        text = residual_program(Ws, bs, True).mlir(locations=False)
        return text.count(" = rt.") + text.count("rt.define"), text

    (n2, _), (n16, text) = ops(2), ops(16)
    assert n2 == n16
    assert 'rt.param "blocks.lin.weight" domain [] : !tidal.tensor<[16, 3, 3], f32>' in text
    assert "blocks.0." not in text          # the per-layer weights are not in the program


def test_stack_state_dict_and_fixed_bound():
    rng = np.random.default_rng(1)
    Ws = [rng.standard_normal((3, 3)).astype(np.float32) for _ in range(3)]
    bs = [rng.standard_normal(3).astype(np.float32) for _ in range(3)]
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2, 3), domain=(t,))
        stack = td.nn.Stack([Residual(W, b, k) for k, (W, b) in enumerate(zip(Ws, bs))], name="blocks")
        p.output("y", stack(x))
    state = stack.state_dict()
    assert sorted(state) == ["lin.bias", "lin.weight"]
    np.testing.assert_array_equal(state["lin.weight"], np.stack(Ws))
    exe = p.compile("numpy")
    xv = rng.standard_normal((2, 2, 3)).astype(np.float32)
    close(exe.run({"T": 2, "L": 3}, {"x": xv})["y"], residual_numpy(Ws, bs, xv))   # L may be given
    with pytest.raises(td.TidalError, match=r"L = 4, but L is fixed to 3 .*test_stack.py"):
        exe.run({"T": 2, "L": 4}, {"x": xv})


# ------------------------------------------------------------------ the decode program
@pytest.mark.parametrize("pattern", ["causal", "window"])
def test_stacked_decode_matches_unrolled_and_numpy(pattern):
    cfg = tiny(pattern, layers=3, rope="rotate_half" if pattern == "causal" else "interleaved")
    w, prompt = L.init_weights(cfg, 3), L.make_prompt(cfg, 3, 4)
    want, _ = expected(cfg, w, prompt, 10)
    scfg = L.Config(**{**cfg.__dict__, "stacked": True})
    p, model = L.build(scfg, w)
    unrolled, _ = L.build(cfg, w)
    assert len(p.statements) < len(unrolled.statements)
    for backend in ["reference"] + SCHEDULED:
        exe = p.compile(backend)
        out = exe.run(bounds={"P": 3, "T": 10}, inputs={"prompt": prompt})
        np.testing.assert_array_equal(out["tokens"], want, err_msg=backend)
        if backend == "jax":
            stats = exe.stats()
            assert stats["loop_fallbacks"] == 0 and stats["xla_loops"] > 0 and stats["host_ops"] == 0
    assert model.state_dict()["layers.attn.q.weight"].shape == (3, cfg.dim, cfg.dim)


# ------------------------------------------------------------------ autodiff and training
def _mlp_stack_loss(Ws, bs, head, x, y):
    h = x
    for k in range(Ws.shape[0]):
        h = h + jnp.tanh(h @ Ws[k] + bs[k])
    return ((h @ head - y) ** 2).mean()


def test_stack_gradients_equal_jax_grad_of_the_unrolled_model():
    rng = np.random.default_rng(4)
    Ws = [(rng.standard_normal((3, 3)) / 2).astype(np.float32) for _ in range(3)]
    bs = [rng.standard_normal(3).astype(np.float32) for _ in range(3)]
    head = rng.standard_normal((3, 1)).astype(np.float32)
    x, y = normal(5, 6, 3), normal(6, 6, 1)
    with td.Program() as p:
        xs, ys = td.input("x", shape=(6, 3)), td.input("y", shape=(6, 1))
        stack = td.nn.Stack([Residual(W, b, k) for k, (W, b) in enumerate(zip(Ws, bs))], name="blocks")
        loss = ((stack(xs) @ td.param("head", head) - ys) ** 2).mean()
        gw, gb = td.grad(loss, [stack.weights["lin.weight"], stack.weights["lin.bias"]])
        p.output("loss", loss)
        p.output("gw", gw)
        p.output("gb", gb)
    value, (want_w, want_b) = value_and_grads(
        lambda W, b: _mlp_stack_loss(W, b, jnp.asarray(head, jnp.float64), jnp.asarray(x, jnp.float64),
                                     jnp.asarray(y, jnp.float64)), np.stack(Ws), np.stack(bs))
    out = run(p, {}, {"x": x, "y": y})
    close(out["loss"], value)
    close(out["gw"], want_w)
    close(out["gb"], want_b)


def test_stack_trains_over_an_iteration_dim():
    rng = np.random.default_rng(7)
    Ws = [(rng.standard_normal((3, 3)) / 2).astype(np.float32) for _ in range(2)]
    bs = [np.zeros(3, np.float32) for _ in range(2)]
    head = rng.standard_normal((3, 1)).astype(np.float32)
    x, y = normal(8, 6, 3), normal(9, 6, 1)
    lr = 0.1
    with td.Program() as p:
        (i, I), = p.dims("i")
        xs, ys = td.input("x", shape=(6, 3)), td.input("y", shape=(6, 1))
        stack = td.nn.Stack([Residual(W, b, k) for k, (W, b) in enumerate(zip(Ws, bs))], name="blocks",
                            domain=(i,))
        loss = ((stack(xs) @ td.param("head", head) - ys) ** 2).mean()
        td.optim.SGD(stack.parameters(), lr=lr).step(td.grad(loss, stack.parameters()))
        p.output("loss", loss)
    W, b, losses = np.stack(Ws).astype(np.float64), np.stack(bs).astype(np.float64), []
    f = jax.value_and_grad(lambda W, b: _mlp_stack_loss(W, b, head.astype(np.float64), x.astype(np.float64),
                                                        y.astype(np.float64)), argnums=(0, 1))
    with jax.enable_x64(True):
        for _ in range(4):
            v, (gW, gb) = f(W, b)
            losses.append(float(v))
            W, b = W - lr * np.asarray(gW), b - lr * np.asarray(gb)
    close(run(p, {"I": 4}, {"x": x, "y": y})["loss"], losses)
    assert losses[-1] < losses[0]


# ------------------------------------------------------------------ errors
def test_stack_errors_at_the_users_line():
    rng = np.random.default_rng(2)
    W3, b3 = rng.standard_normal((3, 3)).astype(np.float32), np.zeros(3, np.float32)
    W4, b4 = rng.standard_normal((4, 4)).astype(np.float32), np.zeros(4, np.float32)

    class Derived(Residual):          # a tensor computed from the weights at construction
        def __init__(self, W, b, k):
            super().__init__(W, b, k)
            self.w2 = self.lin.weight * 2.0

        def forward(self, x):
            return x + td.tanh(x @ self.w2)

    class Wider(Residual):
        def forward(self, x):
            return td.cat([x, x], -1)

    with td.Program():
        (t, T), = td.current_program().dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        with pytest.raises(td.TidalError, match="non-empty list"):
            td.nn.Stack([])
        with pytest.raises(td.TidalError, match=r"parameter 'lin.weight' of block 1 has shape \(4, 4\)"):
            td.nn.Stack([Residual(W3, b3, 0), Residual(W4, b4, 1)])
        with pytest.raises(td.TidalError, match="block 1 is a Wider"):
            td.nn.Stack([Residual(W3, b3, 2), Wider(W3, b3, 3)])
        stack = td.nn.Stack([Derived(W3, b3, 4), Derived(W3, b3, 5)])
        with pytest.raises(td.TidalError, match="computed when the block was built") as e:
            stack(x)
        assert "test_stack.py" in str(e.value)
        with pytest.raises(td.TidalError, match=r"returned shape \('6',\)"):
            td.nn.Stack([Wider(W3, b3, 6), Wider(W3, b3, 7)])(x)
        with pytest.raises(td.TidalError, match="size of dimension 'k' must be an int >= 1"):
            td.current_program().dim("k", size=0)


def test_large_arrays_reach_the_module_exactly():
    """Params and constants over LARGE_ELEMENTS are set from their buffers after
    parsing (not printed): the module holds the exact values, every dtype."""
    from tidal.frontend.emit import LARGE_ELEMENTS

    rng = np.random.default_rng(3)
    arrays = {"f32": rng.standard_normal(LARGE_ELEMENTS + 1).astype(np.float32),
              "f16": rng.standard_normal(400).astype(np.float16),
              "i64": rng.integers(-2 ** 40, 2 ** 40, 300),
              "i8": rng.integers(-128, 127, 300).astype(np.int8),
              "i16": rng.integers(-2 ** 15, 2 ** 15 - 1, 300).astype(np.int16),
              "f64": rng.standard_normal((20, 20)),
              "b": rng.random(300) < 0.5}
    with td.Program() as p:
        for name, arr in arrays.items():
            p.output(name, td.param(name, arr) + td.constant(arr[::-1].copy()))
    for backend in BACKENDS:
        out = p.compile(backend).run()
        for name, arr in arrays.items():
            want = arr + arr[::-1] if arr.dtype != np.bool_ else arr | arr[::-1]
            np.testing.assert_array_equal(np.asarray(out[name]), want, err_msg=f"{name} {backend}")
    assert "dense<0" not in p.mlir(locations=False)     # the printed module shows the values
