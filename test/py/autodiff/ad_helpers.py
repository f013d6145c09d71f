"""Helpers of the autodiff tests: build a program with td.grad, run it with the
reference interpreter, compare with jax.grad (float64) of an equivalent function."""
import jax
import jax.numpy as jnp
import numpy as np

import tidal as td


def normal(seed, *shape):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def jax_grads(f, *args):
    """(value, [grad per arg]) of f at args, in float64."""
    with jax.enable_x64(True):
        xs = [jnp.asarray(np.asarray(a, dtype=np.float64)) for a in args]
        v, gs = jax.jit(jax.value_and_grad(f, argnums=tuple(range(len(xs)))))(*xs)
        return float(v), [np.asarray(g) for g in gs]


def close(actual, expected, rtol=2e-4, atol=2e-5):
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                               rtol=rtol, atol=atol)


def grad_program(build, inputs, dims=()):
    """A program with inputs {name: (shape, domain-dim-names, dtype)} whose loss is
    `build(p, dims, **tensors)`; outputs "loss" and "d<name>" for every float input."""
    with td.Program("grad_test") as p:
        ds = p.dims(*dims) if dims else ()
        by_name = {d.step.name: d for d in ds}
        xs = {n: td.input(n, shape=s, domain=tuple(by_name[d] for d in dom), dtype=dt)
              for n, (s, dom, dt) in inputs.items()}
        loss = build(p, ds, **xs)
        wrt = [n for n, x in xs.items() if x.dtype.kind == "f"]
        grads = td.grad(loss, [xs[n] for n in wrt])
        p.output("loss", loss)
        for n, g in zip(wrt, grads):
            p.output("d" + n, g)
    return p, wrt


def check(build, ref, inputs, values, bounds=None, dims=(), rtol=2e-4, atol=2e-5, program=None):
    """Runs the program at `bounds` with `values` and compares loss and gradients with jax."""
    p, wrt = program or grad_program(build, inputs, dims)
    out = p.compile(backend="reference").run(bounds=bounds or {}, inputs=values)
    loss, grads = jax_grads(lambda *a: ref(**dict(zip(wrt, a)),
                                           **{k: v for k, v in values.items() if k not in wrt}),
                            *[values[n] for n in wrt])
    close(out["loss"], loss, rtol, atol)
    for n, g in zip(wrt, grads):
        close(out["d" + n], g, rtol, atol)
    return out
