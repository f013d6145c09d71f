"""Helpers of the program suite: running a program, and JAX references in float64.

Every program runs with the reference interpreter (the oracle) and on the
scheduled JAX runtime (`p.compile()`'s default: isl schedule, generated host
program, XLA kernels), and the two must agree. TIDAL_PROGRAM_BACKENDS
overrides the list (e.g. "reference" alone for a quick run, or
"reference,jax,numpy").
"""

import jax
import jax.numpy as jnp
import numpy as np

from tidal import config

BACKENDS = list(config.program_backends.value)


def run(p, bounds, inputs=None, backend=None):
    """The outputs of `p` at `bounds`, on `backend` (default: each of BACKENDS, checked equal)."""
    outs = []
    for b in ([backend] if backend else BACKENDS):
        exe = _compiled(p, b)
        outs.append(exe.run(bounds=bounds, inputs=inputs or {}))
    for other in outs[1:]:
        for k, v in outs[0].items():
            np.testing.assert_allclose(np.asarray(other[k]), np.asarray(v), rtol=1e-4, atol=1e-5)
    return outs[0]


def _compiled(p, backend):
    cache = p.__dict__.setdefault("_test_executables", {})
    if backend not in cache:
        cache[backend] = p.compile(backend=backend)
    return cache[backend]


def param_value(p, name):
    """The initial value of the td.param called `name`, as float64."""
    for node in p.nodes:
        if node.op == "param" and node.attrs["name"] == name:
            return node.attrs["value"].astype(np.float64)
    raise KeyError(name)


def value_and_grads(f, *args):
    """(f(*args), [df/darg]) with jax.value_and_grad in float64."""
    with jax.enable_x64(True):
        xs = [jnp.asarray(np.asarray(a, dtype=np.float64)) for a in args]
        v, gs = jax.jit(jax.value_and_grad(f, argnums=tuple(range(len(xs)))))(*xs)
        return float(v), [np.asarray(g) for g in gs]


def x64(f, *args):
    """f(*args) under float64 JAX, as NumPy."""
    with jax.enable_x64(True):
        out = f(*[jnp.asarray(np.asarray(a, dtype=np.float64)) for a in args])
        return jax.tree_util.tree_map(np.asarray, out)


def close(actual, expected, rtol=2e-4, atol=2e-5):
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                               rtol=rtol, atol=atol)


def normal(seed, *shape):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)
