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
from tidal.frontend.tensor_index import select_rows

from .module import Module, given_tensor, make_rng, parameter, unique_prefix

__all__ = ["Linear", "MLP", "Embedding", "RMSNorm", "RoPE", "ACTIVATIONS", "ROPE_CONVENTIONS"]

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
    """y = x @ weight + bias, weight of shape (in_features, out_features).

    Given weights: `Linear(d_in, d_out, weight=W, bias=b)` with W of shape
    (d_in, d_out) (note: PyTorch stores the transpose) and b of shape (d_out,),
    NumPy arrays (held by `td.param`s) or tensors of the program (e.g. a
    `td.input` fed at run time). `bias`: None (the default) is a bias
    initialised by `rng` unless `weight` is given (then no bias); True a bias
    (zeros when `weight` is given); False no bias; an array the given bias.
    Random weights follow PyTorch's uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)).
    `dtype` defaults to float32 for random weights and to the given array's.

    `layout="out_in"`: the weight is (out_features, in_features), PyTorch's and
    Hugging Face's layout, and y = x @ weight.T is computed as (weight @ x.T).T,
    so checkpoint weights are used as stored (never transposed: no copy).
    """

    def __init__(self, in_features: int, out_features: int, bias: Any = None, *, weight: Any = None,
                 domain: Any = (), dim: Any = None, rng: Any = None, seed: int | None = None,
                 name: str = "linear", dtype: Any = None, layout: str = "in_out"):
        _check_sizes(in_features=in_features, out_features=out_features)
        if layout not in ("in_out", "out_in"):
            raise TidalError(f"unknown Linear layout {layout!r}",
                             "use 'in_out' (x @ W, Tidal's) or 'out_in' (PyTorch's (out, in) weights)")
        name = unique_prefix(name)
        bound = 1.0 / math.sqrt(in_features)
        shape = (in_features, out_features) if layout == "in_out" else (out_features, in_features)
        if weight is None:
            rng = make_rng(rng, seed)
            w = rng.uniform(-bound, bound, size=shape).astype(dtype or np.float32)
        else:
            w = given_tensor(weight, shape, "Linear weight", dtype, transpose_hint=layout == "in_out")
        self.weight = _weight(name, "weight", w, domain, dim)
        wdtype = self.weight.dtype
        self.bias = None
        if bias is None:
            bias = weight is None
        if bias is True and weight is None:
            b = rng.uniform(-bound, bound, size=(out_features,)).astype(wdtype)
            self.bias = parameter(f"{name}.bias", b, domain, dim)
        elif bias is True:
            self.bias = parameter(f"{name}.bias", np.zeros(out_features, wdtype), domain, dim)
        elif bias is not False:
            b = given_tensor(bias, (out_features,), "Linear bias", wdtype)
            self.bias = _weight(name, "bias", b, domain, dim)
        self.in_features, self.out_features, self.layout = in_features, out_features, layout

    def forward(self, x: Any) -> RecurrentTensor:
        if self.layout == "in_out":
            y = R.matmul(x, self.weight)
        elif len(x.shape) == 1:
            y = R.matmul(self.weight, x)                                   # (out, in) @ (in,)
        else:                                                              # ((out, in) @ (in, n)).T
            flat = x if len(x.shape) == 2 else S.reshape(x, -1, self.in_features)
            y = S.permute(R.matmul(self.weight, S.permute(flat, 1, 0)), 1, 0)
            if len(x.shape) != 2:
                y = S.reshape(y, *x.shape[:-1], self.out_features)
        return y + self.bias if self.bias is not None else y


def _check_sizes(**sizes: Any) -> None:
    for what, n in sizes.items():
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise TidalError(f"{what} must be a positive int, got {n!r}", f"pass {what}=<int >= 1>")


def _weight(prefix: str, what: str, value: Any, domain: Any, dim: Any) -> RecurrentTensor:
    """A parameter from an array; a given tensor is used as it is (a float td.param
    is a parameter anyway; a td.input is data fed at run time)."""
    if isinstance(value, RecurrentTensor):
        if domain not in ((), None, []):
            raise TidalError(f"{prefix}.{what}: a given tensor cannot also get a domain",
                             "pass a NumPy array to make an iteration-varying weight")
        return value
    return parameter(f"{prefix}.{what}", value, domain, dim)


class MLP(Module):
    """Linear layers of `sizes[k] -> sizes[k + 1]` with `activation` between them
    (and `final_activation` after the last)."""

    def __init__(self, sizes: Sequence[int], activation: Any = "relu", final_activation: Any = None,
                 bias: Any = True, *, domain: Any = (), dim: Any = None, rng: Any = None,
                 seed: int | None = None, name: str = "mlp", dtype: Any = None):
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
    """Rows of a (num_embeddings, embedding_dim) table selected by integer indices
    (random normal rows, or `weight=` a given table of that shape)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, *, weight: Any = None, domain: Any = (),
                 dim: Any = None, rng: Any = None, seed: int | None = None, name: str = "embedding",
                 dtype: Any = None):
        _check_sizes(num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        name = unique_prefix(name)
        if weight is None:
            rng = make_rng(rng, seed)
            w = rng.normal(0.0, 1.0, size=(num_embeddings, embedding_dim)).astype(dtype or np.float32)
        else:
            w = given_tensor(weight, (num_embeddings, embedding_dim), "Embedding weight", dtype)
        self.weight = _weight(name, "weight", w, domain, dim)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim

    def forward(self, index: Any) -> RecurrentTensor:
        """Rows `weight[index]`: shape index.shape + (embedding_dim,) (an index outside
        [0, num_embeddings) is an error of the run, as in PyTorch)."""
        if isinstance(index, RecurrentTensor):
            return select_rows(self.weight, 0, index)
        return S.index_select(self.weight, 0, index)


class RMSNorm(Module):
    """x / sqrt(mean(x², last dim) + eps) * weight (weight: ones, or `weight=` given, shape (size,));
    float16/bfloat16 x is normalised in float32."""

    def __init__(self, size: int, eps: float = 1e-6, *, weight: Any = None, domain: Any = (),
                 dim: Any = None, name: str = "rmsnorm", dtype: Any = None):
        _check_sizes(size=size)
        name = unique_prefix(name)
        if weight is None:
            w = np.ones(size, dtype=dtype or np.float32)
        else:
            w = given_tensor(weight, (size,), "RMSNorm weight", dtype)
        self.weight = _weight(name, "weight", w, domain, dim)
        self.eps = eps

    def forward(self, x: Any) -> RecurrentTensor:
        """16-bit inputs are normalised in float32 and cast back before the weight
        multiplies them (as Hugging Face's LlamaRMSNorm)."""
        if isinstance(x, RecurrentTensor) and x.dtype.itemsize == 2:
            h = E.astype(x, np.float32)
            h = E.astype(h * E.rsqrt(R.mean(h * h, -1, keepdim=True) + self.eps), x.dtype)
            return h * self.weight
        ms = R.mean(x * x, -1, keepdim=True)
        return x * E.rsqrt(ms + self.eps) * self.weight


ROPE_CONVENTIONS = ("rotate_half", "interleaved")


class RoPE(Module):
    """Rotary position embedding on the last dim (size d, even), θ_j = base^(-2j/d):

    * `convention="rotate_half"` (GPT-NeoX, Hugging Face Llama): pair j is
      (x[j], x[j + d/2]): `x * cos(pos θ) + rotate_half(x) * sin(pos θ)`.
    * `convention="interleaved"` (Meta's Llama reference code, GPT-J): pair j is
      (x[2j], x[2j + 1]), rotated by pos θ_j as a complex number.

    `pos` is an int, a symbolic step (`t`), or an integer/float tensor of positions
    broadcasting against x's leading dims (e.g. `td.arange(0, t + 1)` for keys
    stacked over `0:t + 1`).

    `scaling`: Hugging Face's `rope_scaling` dict; `{"rope_type": "llama3",
    "factor", "low_freq_factor", "high_freq_factor",
    "original_max_position_embeddings"}` (Llama 3.1+) divides the frequencies
    of wavelengths longer than original/low_freq_factor by `factor`, keeps
    those shorter than original/high_freq_factor, and interpolates between.
    The angles are computed in float32 (as Hugging Face does) and the cos/sin
    cast to `dtype`."""

    def __init__(self, size: int, base: float = 10000.0, dtype: Any = np.float32,
                 convention: str = "rotate_half", scaling: Any = None):
        if size % 2:
            raise TidalError(f"RoPE needs an even size, got {size}", "use an even head dimension")
        if convention not in ROPE_CONVENTIONS:
            raise TidalError(f"unknown RoPE convention {convention!r}",
                             f"use one of {ROPE_CONVENTIONS} (Hugging Face: rotate_half, Meta: interleaved)")
        self.size, self.base, self.dtype = size, base, np.dtype(dtype)
        self.convention = convention
        # the frequencies and angles in float32, as Hugging Face computes them (float64 for a
        # float64 RoPE)
        self.angle_dtype = np.dtype(np.float64 if self.dtype == np.float64 else np.float32)
        exponents = np.arange(0, size, 2).astype(self.angle_dtype) / size
        self.inv_freq = rope_scaled_frequencies((1.0 / base ** exponents).astype(self.angle_dtype), scaling)

    def angles(self, pos: Any, program: Any) -> RecurrentTensor:
        """pos * frequency, in `angle_dtype`."""
        if isinstance(pos, (int, np.integer)) and not isinstance(pos, bool):
            pos = C.constant(float(pos), dtype=self.angle_dtype, program=program)
        elif isinstance(pos, Expr):
            pos = C.symbol(pos, program=program)
        pos = E.astype(pos, self.angle_dtype)
        freq = C.constant(self.inv_freq, program=program)
        return S.unsqueeze(pos, -1) * freq

    def forward(self, x: Any, pos: Any) -> RecurrentTensor:
        program = resolve_program([x], "RoPE") if isinstance(x, RecurrentTensor) else current_program()
        half = self.size // 2
        ang = self.angles(pos, program)
        cos, sin = E.astype(E.cos(ang), self.dtype), E.astype(E.sin(ang), self.dtype)   # (..., d/2)
        if self.convention == "interleaved":
            pairs = S.reshape(x, *x.shape[:-1], half, 2)
            a = S.squeeze(S.slice(pairs, -1, 0, 1), -1)
            b = S.squeeze(S.slice(pairs, -1, 1, 2), -1)
            out = S.stack([a * cos - b * sin, a * sin + b * cos], -1)
            return S.reshape(out, *x.shape)
        cos, sin = S.cat([cos, cos], -1), S.cat([sin, sin], -1)
        x1, x2 = S.slice(x, -1, 0, half), S.slice(x, -1, half, self.size)
        rot = S.cat([-x2, x1], -1)
        return x * cos + rot * sin


ROPE_TYPES = ("default", "llama3")


def rope_scaled_frequencies(inv_freq: np.ndarray, scaling: Any) -> np.ndarray:
    """The RoPE frequencies after Hugging Face's `rope_scaling` (None or
    rope_type "default": unchanged; "llama3": see RoPE), computed in inv_freq's dtype
    (float32 as Hugging Face does)."""
    if scaling is None:
        return inv_freq
    if not isinstance(scaling, dict):
        raise TidalError(f"rope scaling must be a dict (Hugging Face's rope_scaling), got {scaling!r}",
                         'e.g. {"rope_type": "llama3", "factor": 8.0, ...}')
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind == "default":
        return inv_freq
    if kind != "llama3":
        raise TidalError(f"rope_type {kind!r} is not supported", f"use one of {ROPE_TYPES}")
    try:
        factor = float(scaling["factor"])
        low, high = float(scaling["low_freq_factor"]), float(scaling["high_freq_factor"])
        original = float(scaling["original_max_position_embeddings"])
    except KeyError as e:
        raise TidalError(f"llama3 rope scaling lacks {e.args[0]!r}",
                         "give factor, low_freq_factor, high_freq_factor and "
                         "original_max_position_embeddings") from None
    if not high > low:
        raise TidalError(f"llama3 rope scaling needs high_freq_factor > low_freq_factor, got {high} and {low}",
                         "check the config's rope_scaling")
    f, ty = inv_freq, inv_freq.dtype.type
    wavelen = ty(2 * math.pi) / f
    long_wave, short_wave = original / low, original / high
    scaled = np.where(wavelen > long_wave, f / ty(factor), f)
    smooth = (original / wavelen - low) / (high - low)
    blended = (1 - smooth) * scaled / ty(factor) + smooth * scaled
    medium = (wavelen >= short_wave) & (wavelen <= long_wave)
    return np.where(medium, blended, scaled).astype(inv_freq.dtype)
