"""Layers: Linear, MLP, Embedding, RMSNorm, RoPE."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from tidal.symbolic import Expr

from tidal.frontend import creation as C
from tidal.frontend import ops_elementwise as E
from tidal.frontend import ops_reduce as R
from tidal.frontend import ops_shape as S
from tidal.frontend.errors import TidalError
from tidal.frontend.graph import resolve_program
from tidal.frontend.program import current_program
from tidal.frontend.tensor import RecurrentTensor

from .module import Module, make_rng, parameter, unique_prefix

__all__ = ["Linear", "MLP", "Embedding", "RMSNorm", "RoPE", "ACTIVATIONS"]

ACTIVATIONS = {
    "relu": E.relu, "tanh": E.tanh, "sigmoid": E.sigmoid, "identity": lambda x: x, None: lambda x: x,
    "gelu_tanh": lambda x: 0.5 * x * (1.0 + E.tanh(0.7978845608 * (x + 0.044715 * x * x * x))),
}


def _activation(name: Any):
    if callable(name):
        return name
    if name not in ACTIVATIONS:
        raise TidalError(f"unknown activation {name!r}", f"use one of {sorted(k for k in ACTIVATIONS if k)}")
    return ACTIVATIONS[name]


class Linear(Module):
    """y = x @ weight + bias, weight of shape (in_features, out_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *, domain: Any = (),
                 dim: Any = None, rng: Any = None, seed: int | None = None, name: str = "linear",
                 dtype: Any = np.float32):
        rng = make_rng(rng, seed)
        name = unique_prefix(name)
        bound = 1.0 / math.sqrt(in_features)
        w = rng.uniform(-bound, bound, size=(in_features, out_features)).astype(dtype)
        self.weight = parameter(f"{name}.weight", w, domain, dim)
        self.bias = None
        if bias:
            b = rng.uniform(-bound, bound, size=(out_features,)).astype(dtype)
            self.bias = parameter(f"{name}.bias", b, domain, dim)
        self.in_features, self.out_features = in_features, out_features

    def forward(self, x: Any) -> RecurrentTensor:
        y = R.matmul(x, self.weight)
        return y + self.bias if self.bias is not None else y


class MLP(Module):
    """Linear layers of `sizes[k] -> sizes[k + 1]` with `activation` between them
    (and `final_activation` after the last)."""

    def __init__(self, sizes: Sequence[int], activation: Any = "relu", final_activation: Any = None,
                 bias: bool = True, *, domain: Any = (), dim: Any = None, rng: Any = None,
                 seed: int | None = None, name: str = "mlp", dtype: Any = np.float32):
        if len(sizes) < 2:
            raise TidalError(f"MLP needs at least two sizes, got {list(sizes)}", "e.g. MLP([4, 16, 1])")
        rng = make_rng(rng, seed)
        name = unique_prefix(name)
        self.layers = [Linear(a, b, bias, domain=domain, dim=dim, rng=rng, name=f"{name}.{k}", dtype=dtype)
                       for k, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]))]
        self.activation = _activation(activation)
        self.final_activation = _activation(final_activation)

    def forward(self, x: Any) -> RecurrentTensor:
        for k, layer in enumerate(self.layers):
            x = layer(x)
            x = self.activation(x) if k + 1 < len(self.layers) else self.final_activation(x)
        return x


class Embedding(Module):
    """Rows of a (num_embeddings, embedding_dim) table selected by integer indices."""

    def __init__(self, num_embeddings: int, embedding_dim: int, *, domain: Any = (), dim: Any = None,
                 rng: Any = None, seed: int | None = None, name: str = "embedding",
                 dtype: Any = np.float32):
        rng = make_rng(rng, seed)
        name = unique_prefix(name)
        w = rng.normal(0.0, 1.0, size=(num_embeddings, embedding_dim)).astype(dtype)
        self.weight = parameter(f"{name}.weight", w, domain, dim)

    def forward(self, index: Any) -> RecurrentTensor:
        return S.index_select(self.weight, 0, index)


class RMSNorm(Module):
    """x / sqrt(mean(x², last dim) + eps) * weight (weight initialised to ones)."""

    def __init__(self, size: int, eps: float = 1e-6, *, domain: Any = (), dim: Any = None,
                 name: str = "rmsnorm", dtype: Any = np.float32):
        name = unique_prefix(name)
        self.weight = parameter(f"{name}.weight", np.ones(size, dtype=dtype), domain, dim)
        self.eps = eps

    def forward(self, x: Any) -> RecurrentTensor:
        ms = R.mean(x * x, -1, keepdim=True)
        return x * E.rsqrt(ms + self.eps) * self.weight


class RoPE(Module):
    """Rotary position embedding (the "rotate half" convention of GPT-NeoX/Llama):
    `x * cos(pos θ) + rotate_half(x) * sin(pos θ)` with θ_j = base^(-2j/d) on the last dim
    (size d, even). `pos` is an int, a symbolic step (`t`), or an integer/float tensor
    of positions broadcasting against x's leading dims (e.g. `td.arange(0, t + 1)` for
    keys stacked over `0:t + 1`)."""

    def __init__(self, size: int, base: float = 10000.0, dtype: Any = np.float32):
        if size % 2:
            raise TidalError(f"RoPE needs an even size, got {size}", "use an even head dimension")
        self.size, self.base, self.dtype = size, base, np.dtype(dtype)
        self.inv_freq = (base ** (-np.arange(0, size, 2, dtype=np.float64) / size)).astype(self.dtype)

    def angles(self, pos: Any, program: Any) -> RecurrentTensor:
        if isinstance(pos, (int, np.integer)) and not isinstance(pos, bool):
            pos = C.constant(float(pos), dtype=self.dtype, program=program)
        elif isinstance(pos, Expr):
            pos = C.symbol(pos, program=program)
        pos = E.astype(pos, self.dtype)
        freq = C.constant(self.inv_freq, program=program)
        return S.unsqueeze(pos, -1) * freq

    def forward(self, x: Any, pos: Any) -> RecurrentTensor:
        program = resolve_program([x], "RoPE") if isinstance(x, RecurrentTensor) else current_program()
        half = self.size // 2
        ang = self.angles(pos, program)
        cos, sin = E.cos(ang), E.sin(ang)
        cos, sin = S.cat([cos, cos], -1), S.cat([sin, sin], -1)
        x1, x2 = S.slice(x, -1, 0, half), S.slice(x, -1, half, self.size)
        rot = S.cat([-x2, x1], -1)
        return x * cos + rot * sin
