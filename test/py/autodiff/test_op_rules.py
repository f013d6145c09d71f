"""One VJP rule at a time: loss = sum(op(inputs) * c) for a fixed random cotangent c,
gradients against jax.grad. Inputs have no temporal dims here (the temporal rules are
in test_dependences.py)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tidal as td
from ad_helpers import close, jax_grads, normal

IDX = np.array([2, 0, 2], dtype=np.int64)
GIDX = np.array([[1, 0, 1], [2, 2, 0]], dtype=np.int64)

def jax_linear_scan(a, b, dim, reverse=False):
    """y[k] = b[k] + a[k] y[k -/+ 1] along dim, step by step (differentiable by jax)."""
    a = jnp.moveaxis(jnp.broadcast_to(a, b.shape), dim, 0)
    b = jnp.moveaxis(b, dim, 0)
    ys, prev = [None] * b.shape[0], jnp.zeros(b.shape[1:], b.dtype)
    for k in (range(b.shape[0] - 1, -1, -1) if reverse else range(b.shape[0])):
        prev = b[k] + a[k] * prev
        ys[k] = prev
    return jnp.moveaxis(jnp.stack(ys), 0, dim)


# name: (tidal fn, jax fn, input shapes, positive inputs)
CASES = {
    "neg": (lambda x: -x, lambda x: -x, [(2, 3)], False),
    "exp": (td.exp, jnp.exp, [(2, 3)], False),
    "log": (td.log, jnp.log, [(2, 3)], True),
    "tanh": (td.tanh, jnp.tanh, [(2, 3)], False),
    "sigmoid": (td.sigmoid, jax.nn.sigmoid, [(2, 3)], False),
    "relu": (td.relu, jax.nn.relu, [(2, 3)], False),
    "sqrt": (td.sqrt, jnp.sqrt, [(2, 3)], True),
    "rsqrt": (td.rsqrt, lambda x: 1 / jnp.sqrt(x), [(2, 3)], True),
    "abs": (td.abs, jnp.abs, [(2, 3)], False),
    "sin": (td.sin, jnp.sin, [(2, 3)], False),
    "cos": (td.cos, jnp.cos, [(2, 3)], False),
    "reciprocal": (td.reciprocal, lambda x: 1 / x, [(2, 3)], True),
    "square": (td.square, jnp.square, [(2, 3)], False),
    "floor_sign_ceil": (lambda x: td.floor(x) + td.sign(x) + td.ceil(x) + x,
                        lambda x: jnp.floor(x) + jnp.sign(x) + jnp.ceil(x) + x, [(4,)], False),
    "add_broadcast": (lambda a, b: a + b, lambda a, b: a + b, [(2, 3), (3,)], False),
    "sub_broadcast": (lambda a, b: a - b, lambda a, b: a - b, [(2, 1), (2, 3)], False),
    "mul_broadcast": (lambda a, b: a * b, lambda a, b: a * b, [(2, 3), (1, 3)], False),
    "div": (lambda a, b: a / b, lambda a, b: a / b, [(2, 3), (2, 3)], True),
    "pow": (lambda a, b: a ** b, lambda a, b: a ** b, [(2, 3), (3,)], True),
    "pow_const": (lambda a: a ** 3, lambda a: a ** 3, [(4,)], False),
    "maximum": (td.maximum, jnp.maximum, [(2, 3), (2, 3)], False),
    "minimum": (td.minimum, jnp.minimum, [(3,), (2, 3)], False),
    "mod": (lambda a, b: a % b, jnp.mod, [(2, 3), (2, 3)], True),
    "where": (lambda a, b: td.where(a > b, a * 2.0, b), lambda a, b: jnp.where(a > b, a * 2.0, b),
              [(2, 3), (3,)], False),
    "cast_f64": (lambda a: a.astype("float64") * 2.0, lambda a: a * 2.0, [(3,)], False),
    "sum_dims": (lambda x: x.sum(1), lambda x: x.sum(1), [(2, 3, 2)], False),
    "sum_keepdim": (lambda x: x.sum((0, 2), keepdim=True), lambda x: x.sum((0, 2), keepdims=True),
                    [(2, 3, 2)], False),
    "mean": (lambda x: x.mean(-1), lambda x: x.mean(-1), [(2, 3)], False),
    "prod": (lambda x: x.prod(0), lambda x: x.prod(0), [(3, 2)], False),
    "amax": (lambda x: x.amax(1), lambda x: x.max(1), [(2, 4)], False),
    "amin_keepdim": (lambda x: x.amin(0, keepdim=True), lambda x: x.min(0, keepdims=True),
                     [(3, 2)], False),
    "cumsum": (lambda x: x.cumsum(1), lambda x: jnp.cumsum(x, 1), [(2, 4)], False),
    "cumsum_reverse": (lambda x: td.cumsum(x, 0, reverse=True), lambda x: jnp.cumsum(x[::-1], 0)[::-1],
                       [(4, 2)], False),
    "linear_scan": (lambda a, b: td.linear_scan(a, b, 1), lambda a, b: jax_linear_scan(a, b, 1),
                    [(2, 4), (2, 4)], False),
    "linear_scan_reverse_broadcast": (lambda a, b: td.linear_scan(a, b, 0, reverse=True),
                                      lambda a, b: jax_linear_scan(a, b, 0, reverse=True), [(2,), (4, 2)], False),
    "discounted_sum_per_step": (lambda g, x: td.discounted_sum(x, g, 0),
                                lambda g, x: jax_linear_scan(g, x, 0, reverse=True)[0], [(3, 2), (3, 2)], False),
    "cumprod": (lambda x: x.cumprod(1), lambda x: jnp.cumprod(x, 1), [(2, 3)], True),
    "cummax": (lambda x: x.cummax(0), lambda x: jax.lax.cummax(x, 0), [(4, 2)], False),
    "cummin_reverse": (lambda x: td.cummin(x, 1, reverse=True), lambda x: jax.lax.cummin(x, 1, reverse=True),
                       [(2, 4)], False),
    "matmul_2d": (lambda a, b: a @ b, lambda a, b: a @ b, [(2, 3), (3, 4)], False),
    "matmul_vec_mat": (lambda a, b: a @ b, lambda a, b: a @ b, [(3,), (3, 2)], False),
    "matmul_mat_vec": (lambda a, b: a @ b, lambda a, b: a @ b, [(2, 3), (3,)], False),
    "matmul_dot": (lambda a, b: a @ b, lambda a, b: a @ b, [(3,), (3,)], False),
    "matmul_batched": (lambda a, b: a @ b, lambda a, b: a @ b, [(2, 2, 3), (3, 2)], False),
    "matmul_broadcast": (lambda a, b: a @ b, lambda a, b: a @ b, [(1, 2, 3), (2, 3, 2)], False),
    "reshape": (lambda x: x.reshape(3, 2) * td.arange(2).astype("float32"),
                lambda x: x.reshape(3, 2) * jnp.arange(2), [(2, 3)], False),
    "permute": (lambda x: x.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1), [(2, 3, 4)], False),
    "expand": (lambda x: x.expand(2, 3, 2), lambda x: jnp.broadcast_to(x, (2, 3, 2)), [(3, 1)], False),
    "squeeze_unsqueeze": (lambda x: x.squeeze(1).unsqueeze(0), lambda x: x[:, 0][None], [(2, 1)], False),
    "flip": (lambda x: x.flip(1), lambda x: x[:, ::-1], [(2, 3)], False),
    "slice": (lambda x: x[:, 1:3], lambda x: x[:, 1:3], [(2, 4)], False),
    "slice_step": (lambda x: x[0:5:2], lambda x: x[0:5:2], [(5,)], False),
    "take": (lambda x: x[:, 2], lambda x: x[:, 2], [(2, 4)], False),
    "index_select": (lambda x: x.index_select(0, td.constant(IDX)), lambda x: x[IDX], [(3, 2)], False),
    "index_select_scalar": (lambda x: x.index_select(1, td.constant(np.int64(1))), lambda x: x[:, 1],
                            [(2, 3)], False),
    "gather": (lambda x: x.gather(1, td.constant(GIDX)),
               lambda x: jnp.take_along_axis(x, GIDX, 1), [(2, 3)], False),
    "scatter_add": (lambda x, s: x.scatter_add(1, td.constant(GIDX), s),
                    lambda x, s: x.at[jnp.arange(2)[:, None], GIDX].add(s), [(2, 4), (2, 3)], False),
    "cat": (lambda a, b: td.cat([a, b, a], 1), lambda a, b: jnp.concatenate([a, b, a], 1),
            [(2, 1), (2, 3)], False),
    "stack": (lambda a, b: td.stack([a, b], 0), lambda a, b: jnp.stack([a, b], 0), [(3,), (3,)], False),
    "pad": (lambda x: x.pad((1, 2), dim=0, value=3.0), lambda x: jnp.pad(x, ((1, 2), (0, 0)),
                                                                         constant_values=3.0),
            [(2, 2)], False),
    "softmax": (lambda x: td.softmax(x, -1), lambda x: jax.nn.softmax(x, -1), [(2, 4)], False),
    "log_softmax": (lambda x: td.log_softmax(x, 0), lambda x: jax.nn.log_softmax(x, 0), [(3, 2)], False),
    "logsumexp": (lambda x: td.logsumexp(x, -1), lambda x: jax.nn.logsumexp(x, -1), [(2, 3)], False),
    "discounted_sum": (lambda x: x.discounted_sum(0.7, dim=1),
                       lambda x: (x * 0.7 ** jnp.arange(4)).sum(1), [(2, 4)], False),
    "clamp": (lambda x: x.clamp(-0.5, 0.5), lambda x: jnp.clip(x, -0.5, 0.5), [(2, 3)], False),
}


def run_case(fn, ref, shapes, positive, seed=0):
    vals = [normal(seed + k, *s) for k, s in enumerate(shapes)]
    if positive:
        vals = [np.abs(v) + 0.5 for v in vals]
    with jax.enable_x64(True):
        out_shape = np.shape(ref(*[jnp.asarray(v, dtype=jnp.float64) for v in vals]))
    cot = normal(99, *out_shape)
    with td.Program("rule") as p:
        xs = [td.input(f"x{k}", shape=s) for k, s in enumerate(shapes)]
        y = fn(*xs)
        loss = (y * td.constant(cot)).sum()
        grads = td.grad(loss, xs)
        p.output("loss", loss)
        for k, g in enumerate(grads):
            p.output(f"g{k}", g)
    out = p.compile(backend="reference").run(inputs={f"x{k}": v for k, v in enumerate(vals)})
    loss, grads = jax_grads(lambda *a: (ref(*a) * cot).sum(), *vals)
    close(out["loss"], loss)
    for k, g in enumerate(grads):
        close(out[f"g{k}"], g)
        assert out[f"g{k}"].shape == vals[k].shape and out[f"g{k}"].dtype == np.float32


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule(name):
    run_case(*CASES[name])


@settings(max_examples=15)
@given(st.lists(st.sampled_from(["exp", "tanh", "sin", "square", "sigmoid", "neg", "cos"]),
                min_size=1, max_size=4), st.integers(0, 1000))
def test_random_elementwise_chains(ops, seed):
    """A chain of unary ops differentiates like the composition JAX differentiates."""
    jx = {"exp": jnp.exp, "tanh": jnp.tanh, "sin": jnp.sin, "square": jnp.square,
          "sigmoid": jax.nn.sigmoid, "neg": jnp.negative, "cos": jnp.cos}

    def tidal_fn(x):
        for o in ops:
            x = td.neg(x) if o == "neg" else getattr(td, o)(x) * 0.5
        return x

    def jax_fn(x):
        for o in ops:
            x = -x if o == "neg" else jx[o](x) * 0.5
        return x

    run_case(tidal_fn, jax_fn, [(3,)], False, seed)


def test_ties_split_evenly_like_jax():
    """max/min of equal values, relu at 0 and a reduction max with ties follow JAX."""
    with td.Program() as p:
        a = td.input("a", shape=(3,))
        b = td.input("b", shape=(3,))
        loss = (td.maximum(a, b) * 3.0 + td.relu(a) + a.amax() * 2.0).sum()
        da, db = td.grad(loss, [a, b])
        p.output("da", da)
        p.output("db", db)
    va, vb = np.array([1.0, 0.0, 1.0], np.float32), np.array([1.0, 2.0, -1.0], np.float32)
    out = p.compile(backend="reference").run(inputs={"a": va, "b": vb})
    _, (da, db) = jax_grads(lambda a, b: (jnp.maximum(a, b) * 3.0 + jax.nn.relu(a) + a.max() * 2.0).sum(),
                            va, vb)
    close(out["da"], da)
    close(out["db"], db)


@pytest.mark.parametrize("backend", ["reference", "numpy", "jax"])
def test_the_gradient_of_a_nan_extremum_is_nan_on_every_backend(backend):
    """A max/min (or running max/min) that is NaN equals none of its
    elements: every element's share of the gradient is 0/0, NaN. Jitted by
    XLA, `convert(mask) / count` became `select(mask, 1 / count, 0)`: 0, not
    NaN, on the jax backend only (a random program's gradient, fuzz)."""
    with td.Program() as p:
        a = td.input("a", shape=(4,))
        da, = td.grad(a.amin() + a.amax() * 2.0, [a])
        dc, = td.grad(td.cummax(a, 0).sum(), [a])
        p.output("da", da)
        p.output("dc", dc)
    va = np.array([1.0, np.nan, -2.0, 0.5], np.float32)
    out = p.compile(backend=backend).run(inputs={"a": va})
    assert np.isnan(np.asarray(out["da"])).all(), out["da"]
    assert np.isnan(np.asarray(out["dc"])[1:]).all(), out["dc"]   # the running max is NaN from element 1 on
    finite = np.array([1.0, 3.0, -2.0, 3.0], np.float32)          # and without NaN: JAX's ties rule
    out = p.compile(backend=backend).run(inputs={"a": finite})
    np.testing.assert_allclose(out["da"], [0.0, 1.0, 1.0, 1.0])
