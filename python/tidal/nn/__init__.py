"""`td.nn`: PyTorch-style modules whose parameters are recurrent tensors.

    with td.Program() as p:
        (i, I), (t, T) = p.dims("i", "t")
        rng = np.random.default_rng(0)
        mlp = td.nn.MLP([4, 16, 1], activation="tanh", domain=(i,), rng=rng)
        y = mlp(x)                                   # x: domain (i, t), shape (4,)
        loss = ((y - target) ** 2)[i, 0:T].mean()    # domain (i,)
        opt = td.optim.Adam(mlp.parameters(), lr=1e-2)
        opt.step(td.grad(loss, mlp.parameters()))   # defines W[i + 1] for every W

A parameter is created by `td.nn.parameter(name, value, domain)`:

* `domain=()` (the default): a `td.param`, constant everywhere (it still has
  gradients; it cannot be stepped by an optimizer).
* `domain=(i,)` (iteration-varying weights, Fig. 8 of the paper): a
  `td.recurrent` over `i` with the case `W[0] = td.param(name, value)`; an
  optimizer's `step` adds `W[i + 1] = W[i] - lr * update(g[i])`.

Initial values come from a NumPy generator (`rng=`, or `seed=`), so a
program is reproducible; `Linear` uses PyTorch's uniform(-1/sqrt(fan_in),
1/sqrt(fan_in)) for weights and biases. Parameter names are made unique in
the program (`linear.weight`, `linear_1.weight`, ...).

Modules: `Linear`, `MLP`, `Embedding`, `RMSNorm`, `RoPE` (rotate-half or
interleaved pairs), `MultiHeadAttention` (causal `0:t + 1`, window
`max(0, t - w + 1):t + 1` or full `0:T` over a temporal dim).

`Stack(blocks)` runs a list of identical blocks as a temporal layer dim
`l < L` (bound fixed to L): their weights stacked along a leading axis and read
as `W[l]`, the first block traced once, so the program's size does not depend
on the depth (see tidal.nn.stack).

Given weights instead of random ones: `Linear(d_in, d_out, weight=W, bias=b)`
(W is (d_in, d_out): `x @ W`), `Embedding(n, d, weight=E)`,
`RMSNorm(d, weight=g)`, `MultiHeadAttention(d, h, dim=t, wq=.., wk=.., wv=..,
wo=..)`; shapes and dtypes are checked at the user's line. A whole module tree
takes a checkpoint with `module.load_state_dict(td.nn.load_weights(path))`
(`.npz` or `.safetensors`, names as `named_parameters()` gives them, e.g.
`layers.0.attn.q.weight`; missing/unexpected keys and shape mismatches are
errors) and gives its values back with `module.state_dict()`.
"""
from __future__ import annotations

from .attention import MultiHeadAttention, attend
from .layers import MLP, ROPE_CONVENTIONS, Embedding, Linear, RMSNorm, RoPE
from .module import Module, parameter
from .stack import Stack
from .weights import load_weights, save_weights

__all__ = ["Module", "parameter", "Linear", "MLP", "Embedding", "RMSNorm", "RoPE", "ROPE_CONVENTIONS",
           "MultiHeadAttention", "attend", "Stack", "load_weights", "save_weights"]
