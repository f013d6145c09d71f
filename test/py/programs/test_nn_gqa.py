"""td.nn for real checkpoints: grouped-query attention, llama3 RoPE scaling and
Linear's PyTorch (out, in) layout, against plain NumPy."""
import math

import numpy as np
import pytest

import tidal as td
from models.hf_llama import rope_inv_freq, tiny_config
from tidal.nn.layers import rope_scaled_frequencies


def _rope(x, pos, inv_freq):
    ang = pos * inv_freq.astype(np.float64)
    cos, sin = np.concatenate([np.cos(ang)] * 2), np.concatenate([np.sin(ang)] * 2)
    half = x.shape[-1] // 2
    rot = np.concatenate([-x[..., half:], x[..., :half]], -1)
    return x * cos + rot * sin


def _gqa_reference(x, wq, wk, wv, wo, H, Hkv, dh, inv_freq):
    """Causal GQA over the steps of x (T, B, D), Hugging Face's repeat_kv semantics."""
    T, B, _ = x.shape
    q = (x @ wq).reshape(T, B, H, dh)
    k = (x @ wk).reshape(T, B, Hkv, dh)
    v = (x @ wv).reshape(T, B, Hkv, dh)
    q = np.stack([_rope(q[t], t, inv_freq) for t in range(T)])
    k = np.stack([_rope(k[t], t, inv_freq) for t in range(T)])
    out = np.zeros((T, B, H, dh))
    for t in range(T):
        for h in range(H):
            kv = h // (H // Hkv)
            s = np.einsum("bd,nbd->bn", q[t, :, h], k[:t + 1, :, kv]) / math.sqrt(dh)
            w = np.exp(s - s.max(-1, keepdims=True))
            w /= w.sum(-1, keepdims=True)
            out[t, :, h] = np.einsum("bn,nbd->bd", w, v[:t + 1, :, kv])
    return out.reshape(T, B, H * dh) @ wo


@pytest.mark.parametrize("backend", ["reference", "jax"])
@pytest.mark.parametrize("heads", [(4, 2), (4, 1), (2, 2)])
def test_grouped_query_attention_matches_numpy(backend, heads):
    H, Hkv = heads
    D, dh, B, T = 12, 6, 2, 5
    rng = np.random.default_rng(H * 10 + Hkv)
    wq = rng.standard_normal((D, H * dh)).astype(np.float32) / np.sqrt(D)
    wk, wv = (rng.standard_normal((D, Hkv * dh)).astype(np.float32) / np.sqrt(D) for _ in range(2))
    wo = rng.standard_normal((H * dh, D)).astype(np.float32) / np.sqrt(H * dh)
    x = rng.standard_normal((T, B, D)).astype(np.float32)
    scaling = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 8}
    with td.Program() as p:
        (t, Tb), = p.dims("t")
        xin = td.input("x", shape=(B, D), domain=(t,))
        mha = td.nn.MultiHeadAttention(D, H, n_kv_heads=Hkv, head_dim=dh, dim=t, rope=True,
                                       rope_scaling=scaling, wq=wq, wk=wk, wv=wv, wo=wo)
        p.output("y", mha(xin))
    got = p.compile(backend=backend).run(bounds={"T": T}, inputs={"x": x})["y"]
    inv = rope_scaled_frequencies((1.0 / 10000.0 ** (np.arange(0, dh, 2) / dh)).astype(np.float32), scaling)
    np.testing.assert_allclose(got, _gqa_reference(x.astype(np.float64), wq, wk, wv, wo, H, Hkv, dh, inv),
                               rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("head_dim", [16, 64, 128])
def test_llama3_frequencies_match_an_independent_reference(head_dim):
    for original in (16, 32, 8192):
        config = tiny_config(head_dim=head_dim, rope_theta=500000.0,
                             rope_scaling={"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                                           "high_freq_factor": 4.0, "original_max_position_embeddings": original})
        base = (1.0 / 500000.0 ** (np.arange(0, head_dim, 2, dtype=np.int64).astype(np.float32) / head_dim))
        np.testing.assert_allclose(rope_scaled_frequencies(base.astype(np.float32), config["rope_scaling"]),
                                   rope_inv_freq(config), rtol=1e-6)


def test_bad_rope_scaling_and_heads_are_clear_errors():
    with td.Program() as p:
        (t, T), = p.dims("t")
        with pytest.raises(td.TidalError, match="rope_type 'yarn' is not supported"):
            td.nn.MultiHeadAttention(8, 2, dim=t, rope=True, rope_scaling={"rope_type": "yarn", "factor": 2.0})
        with pytest.raises(td.TidalError, match="not a multiple of n_kv_heads"):
            td.nn.MultiHeadAttention(12, 4, n_kv_heads=3, dim=t)


@pytest.mark.parametrize("lead", [(), (3,), (2, 3)])
def test_linear_out_in_layout_equals_the_transposed_weight(lead):
    rng = np.random.default_rng(5)
    W = rng.standard_normal((7, 4)).astype(np.float32)          # (out, in), PyTorch's
    x = rng.standard_normal(lead + (4,)).astype(np.float32)
    with td.Program() as p:
        xin = td.input("x", shape=lead + (4,))
        p.output("a", td.nn.Linear(4, 7, weight=W, bias=False, layout="out_in")(xin))
        p.output("b", td.nn.Linear(4, 7, weight=W.T, bias=False)(xin))
    out = p.compile(backend="numpy").run(inputs={"x": x})
    np.testing.assert_allclose(out["a"], x @ W.T, rtol=1e-5)
    np.testing.assert_allclose(out["a"], out["b"], rtol=1e-6)
    with td.Program():
        with pytest.raises(td.TidalError, match=r"expected \(7, 4\)"):
            td.nn.Linear(4, 7, weight=W.T, layout="out_in")
