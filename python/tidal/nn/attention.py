"""Attention over a temporal dimension: keys and values are read temporally.

At step t the query q[t] attends to the keys/values of the steps selected by
the pattern, read with a temporal index on `dim` (other dims: the identity):

    "causal"   k[0:t + 1]                     (all previous steps: a K/V cache)
    "window"   k[max(0, t - w + 1):t + 1]     (the last w steps)
    "full"     k[0:T]                         (every step)

so the stacked K/V have the dynamic shape (t + 1, d), (min(t, w - 1) + 1, d)
or (T, d) and the program is one recurrent-tensor program for every T.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from tidal.symbolic import max_

from tidal.frontend import ops_reduce as R
from tidal.frontend import ops_shape as S
from tidal.frontend.errors import TidalError
from tidal.frontend.indexing import temporal_index
from tidal.frontend.tensor import RecurrentTensor

from .layers import Linear, RoPE
from .module import Module, make_rng, unique_prefix

__all__ = ["MultiHeadAttention", "attend", "temporal_window", "PATTERNS"]

PATTERNS = ("causal", "window", "full")


def temporal_window(x: RecurrentTensor, dim: Any, pattern: str = "causal",
                    window: int | None = None) -> RecurrentTensor:
    """x read over the pattern's slice of `dim` (a new leading axis), the identity elsewhere."""
    program = x.program
    d = program.dim_of(dim, "attention dimension")
    if d not in x.domain:
        raise TidalError(f"attention over {d.step.name}: the keys/values do not vary with "
                         f"{d.step.name} (domain ({', '.join(e.step.name for e in x.domain)}))",
                         "compute keys and values from inputs that vary with the attention dim")
    t, T = d.step, d.bound
    if pattern == "causal":
        comp = slice(0, t + 1)
    elif pattern == "window":
        if not isinstance(window, int) or window < 1:
            raise TidalError(f"window attention needs a window size >= 1, got {window!r}",
                             "pass window=w (an int)")
        comp = slice(max_(0, t - window + 1), t + 1)
    elif pattern == "full":
        comp = slice(0, T)
    else:
        raise TidalError(f"unknown attention pattern {pattern!r}", f"use one of {PATTERNS}")
    return temporal_index(x, [comp if e == d else e.step for e in x.domain])


def attend(q: Any, k: RecurrentTensor, v: RecurrentTensor, dim: Any, pattern: str = "causal",
           window: int | None = None, scale: float | None = None) -> RecurrentTensor:
    """Single-head attention of q (shape (d,)) over k, v (shapes (d,), (dv,)) read temporally."""
    K = temporal_window(k, dim, pattern, window)          # (n, d)
    V = temporal_window(v, dim, pattern, window)          # (n, dv)
    d = k.shape[-1]
    s = scale if scale is not None else 1.0 / math.sqrt(int(d.value))
    w = R.softmax(R.matmul(K, q) * s, -1)                 # (n,)
    return R.matmul(w, V)                                 # (dv,)


class MultiHeadAttention(Module):
    """Multi-head self-attention over the temporal dim `dim` (see the module doc).

    `forward(x)`: x has per-step shape (..., d_model) (leading axes, e.g. a batch,
    are kept) and varies with `dim`; the result has the same shape. With `rope`
    (True or "rotate_half": GPT-NeoX/Hugging Face; "interleaved": Meta's Llama),
    queries and keys are rotated by their step's position (RoPE over each head,
    base `rope_base`, Hugging Face's `rope_scaling`, e.g. llama3) before the keys
    are stacked.

    Grouped-query attention (Llama 3, Mistral): `n_kv_heads` < `n_heads` key/value
    heads (dividing it), each shared by n_heads / n_kv_heads query heads (head
    h reads key/value head h // group, as Hugging Face's repeat_kv); `head_dim`
    defaults to d_model / n_heads.

    Given weights: `wq`, `wk`, `wv`, `wo` (all four or none) in Tidal's `x @ W`
    layout (PyTorch's Linear weight transposed): wq (d_model, n_heads * head_dim),
    wk and wv (d_model, n_kv_heads * head_dim), wo (n_heads * head_dim, d_model);
    NumPy arrays or tensors of the program; with given weights there are no
    biases unless `bias=True` (zeros, to load with `load_state_dict`).
    """

    def __init__(self, d_model: int, n_heads: int, *, dim: Any, pattern: str = "causal",
                 window: int | None = None, rope: Any = False, rope_base: float = 10000.0,
                 rope_scaling: Any = None, n_kv_heads: int | None = None, head_dim: int | None = None,
                 bias: bool = False, wq: Any = None, wk: Any = None, wv: Any = None, wo: Any = None,
                 domain: Any = (), iteration_dim: Any = None, rng: Any = None,
                 seed: int | None = None, name: str = "mha", dtype: Any = None):
        n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        for what, n in (("d_model", d_model), ("n_heads", n_heads), ("n_kv_heads", n_kv_heads),
                        ("head_dim", 1 if head_dim is None else head_dim)):
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise TidalError(f"{what} must be a positive int, got {n!r}", f"pass {what}=<int >= 1>")
        if head_dim is None and d_model % n_heads:
            raise TidalError(f"d_model {d_model} is not divisible by n_heads {n_heads}",
                             "pick n_heads dividing d_model, or give head_dim")
        if n_heads % n_kv_heads:
            raise TidalError(f"n_heads {n_heads} is not a multiple of n_kv_heads {n_kv_heads}",
                             "each key/value head serves n_heads / n_kv_heads query heads")
        if pattern not in PATTERNS:
            raise TidalError(f"unknown attention pattern {pattern!r}", f"use one of {PATTERNS}")
        given = {"wq": wq, "wk": wk, "wv": wv, "wo": wo}
        absent = [k for k, v in given.items() if v is None]
        if absent and len(absent) < 4:
            raise TidalError(f"MultiHeadAttention got some projection weights but not {', '.join(absent)}",
                             "give all of wq, wk, wv, wo or none")
        dh = d_model // n_heads if head_dim is None else int(head_dim)
        rng = None if not absent else make_rng(rng, seed)
        name = unique_prefix(name)
        kw = dict(domain=domain, dim=iteration_dim, rng=rng, dtype=dtype)
        self.q = Linear(d_model, n_heads * dh, bias, weight=wq, name=f"{name}.q", **kw)
        self.k = Linear(d_model, n_kv_heads * dh, bias, weight=wk, name=f"{name}.k", **kw)
        self.v = Linear(d_model, n_kv_heads * dh, bias, weight=wv, name=f"{name}.v", **kw)
        self.o = Linear(n_heads * dh, d_model, bias, weight=wo, name=f"{name}.o", **kw)
        self.d_model, self.n_heads, self.n_kv_heads, self.head_dim = d_model, n_heads, n_kv_heads, dh
        self.dim, self.pattern, self.window = dim, pattern, window
        if rope is True:
            rope = "rotate_half"
        self.rope = RoPE(dh, base=rope_base, dtype=self.q.weight.dtype, convention=rope,
                         scaling=rope_scaling) if rope else None

    def forward(self, x: RecurrentTensor) -> RecurrentTensor:
        H, Hkv, dh = self.n_heads, self.n_kv_heads, self.head_dim
        G = H // Hkv                                               # query heads per key/value head
        d = x.program.dim_of(self.dim, "attention dimension")
        lead = tuple(x.shape[:-1])
        n = len(lead)
        q = S.reshape(self.q(x), *lead, Hkv, G, dh)
        k = S.reshape(self.k(x), *lead, Hkv, dh)
        v = S.reshape(self.v(x), *lead, Hkv, dh)
        if self.rope is not None:
            q, k = self.rope(q, d.step), self.rope(k, d.step)
        K = temporal_window(k, d, self.pattern, self.window)      # (m, ..., Hkv, dh)
        V = temporal_window(v, d, self.pattern, self.window)
        batch = tuple(range(1, n + 2))                            # the leading axes and Hkv
        K = S.permute(K, *batch, n + 2, 0)                        # (..., Hkv, dh, m)
        V = S.permute(V, *batch, 0, n + 2)                        # (..., Hkv, m, dh)
        scores = R.matmul(q, K) * (1.0 / math.sqrt(dh))           # (..., Hkv, G, m)
        w = R.softmax(scores, -1)
        out = S.reshape(R.matmul(w, V), *lead, H * dh)            # (..., Hkv, G, dh) -> (..., H * dh)
        return self.o(out)
