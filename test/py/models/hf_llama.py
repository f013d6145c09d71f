"""Hugging Face Llama checkpoints for tests: write tiny random ones, read them back, and
decode them greedily with an independent plain-NumPy reference.

Independent of tidal on purpose: it is written from the semantics of transformers'
`LlamaForCausalLM` (eager attention), so it can judge `tidal.models.Llama`:

* RMSNorm in (at least) float32, cast back to the input dtype, times the weight;
* rotate-half RoPE, inv_freq = 1 / theta ** (arange(0, head_dim, 2) / head_dim) in float32,
  with "llama3" rope_scaling (`rope_inv_freq`);
* grouped-query attention: query head h reads kv head h // (num_heads / num_kv_heads);
  scores scaled by head_dim ** -0.5, softmax in (at least) float32;
* SwiGLU MLP down(silu(gate(x)) * up(x)); nn.Linear weights are (out, in): y = x @ W.T;
* tie_word_embeddings: the output matrix is model.embed_tokens.weight;
* greedy: argmax of the last position's logits, the first index on ties.

Test files import it as `from models.hf_llama import ...` (conftest.py puts test/py on sys.path).
"""
from __future__ import annotations

import json
import math
import os

import ml_dtypes
import numpy as np

LLAMA_CONFIG_KEYS = (
    "architectures", "model_type", "hidden_size", "intermediate_size", "num_hidden_layers",
    "num_attention_heads", "num_key_value_heads", "head_dim", "vocab_size", "rms_norm_eps",
    "rope_theta", "rope_scaling", "max_position_embeddings", "tie_word_embeddings",
    "torch_dtype", "bos_token_id", "eos_token_id")

# safetensors dtype names <-> NumPy dtypes (bfloat16 through ml_dtypes).
_ST_DTYPES = {"F64": np.dtype(np.float64), "F32": np.dtype(np.float32), "F16": np.dtype(np.float16),
              "BF16": np.dtype(ml_dtypes.bfloat16), "I64": np.dtype(np.int64), "I32": np.dtype(np.int32)}
_NP_DTYPES = {"float32": "F32", "float16": "F16", "bfloat16": "BF16"}


def tiny_config(**overrides) -> dict:
    """A tiny LlamaConfig-style dict: GQA (4 query heads on 2 kv heads), untied, llama3 RoPE
    scaling whose original context (32) makes head_dim 16 / theta 1e4 exercise all three of
    its bands: wavelength 6.3 < 32/4 kept, 19.9 smoothed, the other six divided by the factor."""
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 97,
        "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
        "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 32},
        "max_position_embeddings": 128, "tie_word_embeddings": False, "torch_dtype": "float32",
        "bos_token_id": 1, "eos_token_id": 2}
    unknown = set(overrides) - set(LLAMA_CONFIG_KEYS)
    assert not unknown, f"not LlamaConfig keys: {sorted(unknown)}"
    config.update(overrides)
    return config


def head_dim(config: dict) -> int:
    return config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]


def rope_inv_freq(config: dict) -> np.ndarray:
    """(head_dim // 2,) float32 inverse frequencies, HF's default or llama3 rope."""
    d = head_dim(config)
    inv = (1.0 / config.get("rope_theta", 10000.0) ** (np.arange(0, d, 2).astype(np.float32) / d)).astype(np.float32)
    rs = config.get("rope_scaling") or {}
    kind = rs.get("rope_type", rs.get("type", "default"))
    if kind == "default":
        return inv
    if kind != "llama3":
        raise NotImplementedError(f"rope_scaling {kind!r}")
    factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old = rs["original_max_position_embeddings"]
    wavelen = 2 * math.pi / inv
    scaled = np.where(wavelen > old / low, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < old / high) & ~(wavelen > old / low)
    return np.where(medium, smoothed, scaled).astype(np.float32)


# -- checkpoints ------------------------------------------------------------------------------
def _write_safetensors(path: str, tensors: dict[str, np.ndarray]) -> None:
    header, offset = {}, 0
    for name, a in tensors.items():
        st = next(k for k, v in _ST_DTYPES.items() if v == a.dtype)
        header[name] = {"dtype": st, "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text)
        for a in tensors.values():
            f.write(np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes())


def _read_safetensors(path: str) -> dict[str, np.ndarray]:
    """Memory-mapped, read-only arrays of one .safetensors file."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    header.pop("__metadata__", None)
    if not header:
        return {}
    data = np.memmap(path, np.uint8, "r", offset=8 + n)
    return {name: data[a:b].view(_ST_DTYPES[h["dtype"]]).reshape(h["shape"])
            for name, h in header.items() for a, b in [h["data_offsets"]]}


def llama_shapes(config: dict) -> dict[str, tuple]:
    """The HF tensor names and (out, in) shapes of a LlamaForCausalLM, in model order."""
    e, f, v = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    hd, nq = head_dim(config), config["num_attention_heads"]
    nkv = config.get("num_key_value_heads") or nq
    shapes = {"model.embed_tokens.weight": (v, e)}
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        shapes.update({p + "self_attn.q_proj.weight": (nq * hd, e), p + "self_attn.k_proj.weight": (nkv * hd, e),
                       p + "self_attn.v_proj.weight": (nkv * hd, e), p + "self_attn.o_proj.weight": (e, nq * hd),
                       p + "mlp.gate_proj.weight": (f, e), p + "mlp.up_proj.weight": (f, e),
                       p + "mlp.down_proj.weight": (e, f),
                       p + "input_layernorm.weight": (e,), p + "post_attention_layernorm.weight": (e,)})
    shapes["model.norm.weight"] = (e,)
    if not config.get("tie_word_embeddings", False):
        shapes["lm_head.weight"] = (v, e)
    return shapes


def write_random_llama(directory, config: dict, dtype: str = "float32", seed: int = 0,
                       shards: int = 1) -> dict[str, np.ndarray]:
    """Write config.json and random weights in HF's layout; return the arrays written (in `dtype`).

    Linear weights ~ N(0, 1/fan_in), embeddings and lm_head ~ N(0, 1) (so tied and untied
    models have logits of std ~sqrt(hidden): healthy top-2 margins), norm weights 1 + 0.1 N(0, 1).
    shards > 1 splits the tensors, in model order, over model-0000k-of-0000n.safetensors
    with a model.safetensors.index.json."""
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in llama_shapes(config).items():
        if len(shape) == 1:
            w = 1 + 0.1 * rng.standard_normal(shape)
        elif name in ("model.embed_tokens.weight", "lm_head.weight"):
            w = rng.standard_normal(shape)
        else:
            w = rng.standard_normal(shape) / math.sqrt(shape[1])
        out[name] = w.astype(_ST_DTYPES[_NP_DTYPES[dtype]])
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump({**config, "torch_dtype": dtype}, f, indent=2)
    if shards == 1:
        _write_safetensors(os.path.join(directory, "model.safetensors"), out)
        return out
    names, weight_map = list(out), {}
    for k, part in enumerate(np.array_split(np.arange(len(names)), shards)):
        file = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        _write_safetensors(os.path.join(directory, file), {names[i]: out[names[i]] for i in part})
        weight_map.update({names[i]: file for i in part})
    index = {"metadata": {"total_size": int(sum(a.nbytes for a in out.values()))}, "weight_map": weight_map}
    with open(os.path.join(directory, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f, indent=2)
    return out


def read_llama(directory) -> tuple[dict, dict[str, np.ndarray]]:
    """(config, {HF name: memory-mapped array in the file's dtype}), single file or sharded."""
    with open(os.path.join(directory, "config.json")) as f:
        config = json.load(f)
    index = os.path.join(directory, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    weights = {}
    for file in files:
        weights.update(_read_safetensors(os.path.join(directory, file)))
    return config, weights


# -- the NumPy reference decoder --------------------------------------------------------------
def _rms(x, w, eps):
    x32 = x.astype(np.promote_types(x.dtype, np.float32))
    return w * (x32 / np.sqrt((x32 * x32).mean(-1, keepdims=True) + eps)).astype(x.dtype)


def _forward(config, W, ids, pos0, cache, window, dt):
    """Logits (B, V) of the last of `ids` (B, T) at positions pos0.., writing K/V into `cache`."""
    B, T = ids.shape
    hd, nq = head_dim(config), config["num_attention_heads"]
    nkv = config.get("num_key_value_heads") or nq
    eps, acc = config["rms_norm_eps"], np.promote_types(dt, np.float32)
    pos = pos0 + np.arange(T)
    ang = pos.astype(np.float32)[:, None] * rope_inv_freq(config)[None, :]
    ang = np.concatenate([ang, ang], -1).astype(acc)
    cos, sin = np.cos(ang).astype(dt), np.sin(ang).astype(dt)

    def rope(x):                                        # (B, heads, T, hd)
        half = np.concatenate([-x[..., hd // 2:], x[..., :hd // 2]], -1)
        return x * cos + half * sin

    S = pos0 + T                                        # keys at positions 0..S-1
    kpos = np.arange(S)
    mask = kpos[None, :] <= pos[:, None]
    if window is not None:
        mask &= kpos[None, :] > pos[:, None] - window
    h = W["model.embed_tokens.weight"][ids]
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}."
        x = _rms(h, W[p + "input_layernorm.weight"], eps)
        q, k, v = ((x @ W[p + f"self_attn.{n}_proj.weight"].T).reshape(B, T, -1, hd).transpose(0, 2, 1, 3)
                   for n in "qkv")
        kc, vc = cache[i]
        kc[:, :, pos0:S], vc[:, :, pos0:S] = rope(k), v
        keys, vals = (np.repeat(c[:, :, :S], nq // nkv, axis=1) for c in (kc, vc))
        s = (rope(q) @ keys.transpose(0, 1, 3, 2)).astype(acc) * acc.type(hd ** -0.5)
        s = np.where(mask, s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        a = (s / s.sum(-1, keepdims=True)).astype(dt)
        o = (a @ vals).transpose(0, 2, 1, 3).reshape(B, T, nq * hd)
        h = h + o @ W[p + "self_attn.o_proj.weight"].T
        x = _rms(h, W[p + "post_attention_layernorm.weight"], eps)
        g = x @ W[p + "mlp.gate_proj.weight"].T
        g = g / (1 + np.exp(-g.astype(acc))).astype(dt)
        h = h + (g * (x @ W[p + "mlp.up_proj.weight"].T)) @ W[p + "mlp.down_proj.weight"].T
    x = _rms(h[:, -1], W["model.norm.weight"], eps)
    head = W["model.embed_tokens.weight"] if config.get("tie_word_embeddings", False) else W["lm_head.weight"]
    return x @ head.T


def numpy_logits_margins(model, prompt_ids, max_new_tokens: int, eos_token_id=None, window=None,
                         compute_dtype=np.float32):
    """Greedy decoding with a K/V cache -> (tokens (B, P + n) int64, logits (B, n, V), margins (B, n)).

    `model`: a checkpoint directory or (config, weights) as `read_llama` returns. The prompt
    (B, P) is prefilled in one causal pass; weights and activations are in `compute_dtype`
    (float64: a high-precision reference; float32 matches an f32 implementation up to
    rounding; half types only approximate HF's rounding points). window=W: position t attends
    to positions max(0, t-W+1)..t. eos_token_id (an int; None: never stop) is emitted, then
    repeated in every later column of that row; if every row has finished, the remaining
    columns are filled with it without running the model.
    logits[b, i]: the logits that chose tokens[b, P + i] (NaN once skipped); margins[b, i]:
    their top-1 minus top-2 gap, inf where row b had finished (the token is forced), so
    margins.min(0) is the smallest live gap per step: a mismatch at a step whose gap is
    ~1e-6 (f32) is a near-tie, not a bug."""
    config, W = read_llama(model) if isinstance(model, (str, os.PathLike)) else model
    dt = np.dtype(compute_dtype)
    W = {k: np.asarray(v).astype(dt) for k, v in W.items()}
    prompt = np.atleast_2d(np.asarray(prompt_ids)).astype(np.int64)
    B, P = prompt.shape
    n, V = max_new_tokens, config["vocab_size"]
    hd, nkv = head_dim(config), config.get("num_key_value_heads") or config["num_attention_heads"]
    cache = [tuple(np.zeros((B, nkv, P + n, hd), dt) for _ in "kv") for _ in range(config["num_hidden_layers"])]
    tokens = np.full((B, P + n), -1 if eos_token_id is None else eos_token_id, np.int64)
    tokens[:, :P] = prompt
    logits_out = np.full((B, n, V), np.nan, np.float64)
    margins = np.full((B, n), np.inf)
    done = np.zeros(B, bool)
    logits = _forward(config, W, prompt, 0, cache, window, dt) if n else None
    for i in range(n):
        pick = np.argmax(logits, -1)                    # the first index on ties
        top2 = np.sort(logits.astype(np.float64), -1)[:, -2:]
        logits_out[:, i] = logits
        margins[:, i] = np.where(done, np.inf, top2[:, 1] - top2[:, 0])
        tokens[:, P + i] = np.where(done, eos_token_id if eos_token_id is not None else 0, pick)
        if eos_token_id is not None:
            done |= tokens[:, P + i] == eos_token_id
            if done.all():
                break
        if i + 1 < n:
            logits = _forward(config, W, tokens[:, P + i:P + i + 1], P + i, cache, window, dt)
    return tokens, logits_out, margins


def numpy_generate(model, prompt_ids, max_new_tokens: int, eos_token_id=None, window=None,
                   compute_dtype=np.float32) -> np.ndarray:
    """The tokens (B, P + max_new_tokens) of `numpy_logits_margins`."""
    return numpy_logits_margins(model, prompt_ids, max_new_tokens, eos_token_id, window, compute_dtype)[0]
