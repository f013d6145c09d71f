"""sdg-reassociate on generated chains `(X @ Y) @ Z` / `X @ (Y @ Z)` whose operands
are weights (no temporal dim), inputs at the point, or a prefix window of an
input (`x[0:t + 1]`): every backend agrees with NumPy with and without the pass,
and the pass rewrites exactly when the other association's summed cost is lower."""
import numpy as np
from hypothesis import given, settings, strategies as st

import tidal as td

WITHOUT = td.default_passes(without=["sdg-reassociate"])
KINDS = ["weight", "point", "window"]


@settings(max_examples=15, deadline=None)
@given(left=st.booleans(), kinds=st.tuples(*[st.sampled_from(KINDS)] * 3),
       sizes=st.tuples(*[st.sampled_from([1, 2, 8, 32])] * 4), T=st.integers(1, 4), seed=st.integers(0, 2 ** 16))
def test_reassociated_chains_agree_with_numpy(left, kinds, sizes, T, seed):
    a, k, m, n = sizes
    if all(x == "weight" for x in kinds):     # something over t
        kinds = ("point",) + kinds[1:]
    shapes = [(a, k), (k, m), (m, n)]
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal((T,) + s).astype(np.float32) for s in shapes]
    with td.Program() as p:
        (t, Tn), = p.dims("t")
        ops, refs = [], []
        for j, (kind, shape, v) in enumerate(zip(kinds, shapes, values)):
            if kind == "weight":
                ops.append(td.param(f"w{j}", v[0]))
                refs.append(lambda q, v=v: v[0])
            else:
                x = td.input(f"x{j}", shape=shape[1:] if kind == "window" and j == 0 else shape,
                             dtype="float32", domain=(t,))
                if kind == "window" and j == 0:        # rows of the first operand: x[0:t + 1]
                    ops.append(x[0:t + 1])
                    refs.append(lambda q, v=v: v[:q + 1, 0])
                else:
                    ops.append(x)
                    refs.append(lambda q, v=v: v[q])
        y = (ops[0] @ ops[1]) @ ops[2] if left else ops[0] @ (ops[1] @ ops[2])
        p.output("y", y)
    inputs = {}
    for j, (kind, v) in enumerate(zip(kinds, values)):
        if kind != "weight":
            inputs[f"x{j}"] = v[:, 0] if kind == "window" and j == 0 else v
    want = [refs[0](q).astype(np.float64) @ refs[1](q) @ refs[2](q) for q in range(T)]
    for backend in ("numpy", "jax"):
        for passes in (None, WITHOUT):
            exe = p.compile(backend=backend, passes=passes)
            out = exe.run({"T": T}, inputs)["y"]
            if passes is None:
                assert ("sdg-reassociate" in exe.stages) and \
                    (exe.stages["sdg-reassociate"] != exe.stages["cse"]) == _cheaper(left, kinds, sizes)
            for q in range(T):
                np.testing.assert_allclose(np.asarray(out[q]), want[q], rtol=1e-4, atol=1e-4,
                                           err_msg=f"{backend} {passes} t={q}")


def _cheaper(left, kinds, sizes) -> bool:
    """Whether the pass should rewrite: the inner product has the outer one's domain
    (an operand over t) and the other association costs fewer multiply-adds summed
    over t < 256 (the default bound), the moved product over t only if one of its
    operands is."""
    a, k, m, n = sizes
    rows = [t + 1 if kinds[0] == "window" else a for t in range(256)]
    over_t = [x != "weight" for x in kinds]
    inner, moved = ((0, 1), (1, 2)) if left else ((1, 2), (0, 1))
    if not any(over_t[j] for j in inner):
        return False
    if left:     # (X @ Y) @ Z -> X @ (Y @ Z)
        now = sum(r * k * m + r * m * n for r in rows)
        then = (256 if any(over_t[j] for j in moved) else 1) * k * m * n + sum(r * k * n for r in rows)
    else:        # X @ (Y @ Z) -> (X @ Y) @ Z
        now = sum(k * m * n + r * k * n for r in rows)
        then = (sum(r * k * m for r in rows) if any(over_t[j] for j in moved) else a * k * m) \
            + sum(r * m * n for r in rows)
    return then < now
