"""`tidal.models.Llama`: Hugging Face Llama checkpoints, decoded as one recurrent-tensor program.

    model = Llama.from_pretrained("Llama-3.2-1B")            # bf16 kept, memory-mapped
    ids = model.generate(prompt_ids, max_new_tokens=64, eos_token_id=128001)

The program (built from td.nn modules; `program()` traces it) has the bound L
(the prompt's rows, padded to a bucket: `prompt_bucket`), the prompt's own length
P (an input) and a temporal dim u < N over the generated tokens:

    prefill    x = layers(embed(prompt))              prompt (L, B): one batched pass,
               causal (or window) mask over L x L     keys/values K, V (L, B, Hkv, dh) kept
    first      tok[0] = pick(head(x[P - 1]))
    decode     y[u] = layers(embed(tok[u]))           position P + u
               attention over K's rows < P and kd[0:u + 1] (or the window's part of
               each), one softmax over both
               next[u] = eos if done[u] else pick(head(y[u]));  tok[u + 1] = next[u]

Weights are td.params declared by shape: the program is compiled once per
(batch, window, sampling) and the checkpoint's arrays are bound to it
(`exe.load_state_dict`), as stored: Linear layers use PyTorch's (out, in)
layout (`td.nn.Linear(layout="out_in")`), so nothing is transposed or copied;
on the jax CPU backend the bound arrays alias the memory-mapped file.
The bounds L and N, the prompt, its length and the EOS id are run-time values:
other prompts, prompt lengths (of one bucket), lengths to generate and EOS ids
reuse the compiled program (new XLA kernels only for a new bucket of L, and for
a new power-of-two capacity of the decode's key/value stores).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from tidal.frontend import creation as C
from tidal.frontend import ops_elementwise as E
from tidal.frontend import ops_reduce as R
from tidal.frontend import ops_shape as S
from tidal.frontend.program import Program
from tidal.frontend import dtypes as dt
from tidal.nn import Embedding, Linear, Module, RMSNorm, RoPE
from tidal.symbolic import max_

from .checkpoint import aligned_copy, open_safetensors, read_config
from .errors import model_error
from .llama_config import LlamaConfig

__all__ = ["Llama", "LlamaConfig"]


class _Block(Module):
    """One decoder layer: RMSNorm, grouped-query attention with RoPE, RMSNorm, SwiGLU."""

    def __init__(self, cfg: LlamaConfig, params: dict, i: int, dtype: np.dtype):
        pre = f"model.layers.{i}."
        D, F = cfg.hidden_size, cfg.intermediate_size
        q, kv = cfg.num_attention_heads * cfg.head_dim, cfg.num_key_value_heads * cfg.head_dim

        def linear(name, n_in, n_out):
            return Linear(n_in, n_out, weight=params[pre + name + ".weight"], bias=False, layout="out_in",
                          name=pre + name)

        self.input_layernorm = RMSNorm(D, cfg.rms_norm_eps, weight=params[pre + "input_layernorm.weight"])
        self.q_proj, self.k_proj = linear("self_attn.q_proj", D, q), linear("self_attn.k_proj", D, kv)
        self.v_proj, self.o_proj = linear("self_attn.v_proj", D, kv), linear("self_attn.o_proj", q, D)
        self.post_attention_layernorm = RMSNorm(D, cfg.rms_norm_eps,
                                                weight=params[pre + "post_attention_layernorm.weight"])
        self.gate_proj, self.up_proj = linear("mlp.gate_proj", D, F), linear("mlp.up_proj", D, F)
        self.down_proj = linear("mlp.down_proj", F, D)
        self.rope = RoPE(cfg.head_dim, base=cfg.rope_theta, dtype=dtype, scaling=cfg.scaling())
        self.cfg = cfg

    def project(self, x, pos):
        """(q (..., Hkv, G, dh), k (..., Hkv, dh), v (..., Hkv, dh)) of x (..., D) at
        positions `pos`: a scalar tensor, or one position per row of x's first axis."""
        c = self.cfg
        lead, Hkv, dh = tuple(x.shape[:-1]), c.num_key_value_heads, c.head_dim
        h = self.input_layernorm(x)
        q = S.reshape(self.q_proj(h), *lead, Hkv, c.num_attention_heads // Hkv, dh)
        k = S.reshape(self.k_proj(h), *lead, Hkv, dh)
        v = S.reshape(self.v_proj(h), *lead, Hkv, dh)
        if pos.ndim == 0:
            return self.rope(q, pos), self.rope(k, pos), v
        return self.rope(q, S.reshape(pos, -1, 1, 1, 1)), self.rope(k, S.reshape(pos, -1, 1, 1)), v

    def attend(self, q, K, V, mask=None):
        """Grouped-query attention of queries q (n, B, Hkv, G, dh) over keys and values
        K, V (m, B, Hkv, dh) -> (n, B, H * dh); `mask` (n, m) bool: which keys each query sees."""
        c = self.cfg
        n, B, Hkv, G, dh = q.shape
        qs = S.reshape(S.permute(q, 1, 2, 3, 0, 4), B, Hkv, G * n, dh)     # (B, Hkv, G n, dh)
        scores = R.matmul(qs, S.permute(K, 1, 2, 3, 0)) * (1.0 / math.sqrt(dh))   # (B, Hkv, G n, m)
        if mask is not None:
            scores = S.reshape(scores, B, Hkv, G, n, K.shape[0])
            scores = S.reshape(E.where(mask, scores, -np.inf), B, Hkv, G * n, K.shape[0])
        w = E.astype(R.softmax(E.astype(scores, np.float32), -1), scores.dtype)   # in float32, as HF
        out = S.reshape(R.matmul(w, S.permute(V, 1, 2, 0, 3)), B, Hkv, G, n, dh)   # (B, Hkv, G, n, dh)
        return S.reshape(S.permute(out, 3, 0, 1, 2, 4), n, B, c.num_attention_heads * dh)

    def attend_step(self, q, Kp, Vp, seen, Kd, Vd):
        """One decoding step's attention: queries q (B, Hkv, G, dh) over the prompt's
        keys/values Kp, Vp (L, B, Hkv, dh) where `seen` (L,) holds, and over the
        step's own window Kd, Vd (m, B, Hkv, dh), m varying with the step. The two
        parts share one softmax (a common max and denominator), so no value of a
        step-varying size is formed outside the reductions that consume it."""
        c = self.cfg
        B, Hkv, G, dh = q.shape
        scale = 1.0 / math.sqrt(dh)
        f32 = np.float32
        s1 = E.astype(R.matmul(q, S.permute(Kp, 1, 2, 3, 0)) * scale, f32)     # (B, Hkv, G, L)
        s1 = E.where(seen, s1, -np.inf)
        s2 = E.astype(R.matmul(q, S.permute(Kd, 1, 2, 3, 0)) * scale, f32)     # (B, Hkv, G, m)
        top = E.maximum(R.amax(s1, -1, keepdim=True), R.amax(s2, -1, keepdim=True))
        e1, e2 = E.exp(s1 - top), E.exp(s2 - top)
        den = R.sum(e1, -1, keepdim=True) + R.sum(e2, -1, keepdim=True)
        w1, w2 = E.astype(e1 / den, q.dtype), E.astype(e2 / den, q.dtype)
        out = R.matmul(w1, S.permute(Vp, 1, 2, 0, 3)) + R.matmul(w2, S.permute(Vd, 1, 2, 0, 3))   # (B, Hkv, G, dh)
        return S.reshape(out, B, c.num_attention_heads * dh)

    def finish(self, x, attn):
        """The rest of the layer, given the attention's output attn (like x)."""
        x = x + self.o_proj(attn)
        h = self.post_attention_layernorm(x)
        g = self.gate_proj(h)
        return x + self.down_proj(g * E.sigmoid(g) * self.up_proj(h))


def _pick(logits, sample: tuple | None):
    if sample is None:
        return R.argmax(logits, -1)
    temperature, seed = sample
    from tidal.frontend.ops_sampling import categorical

    return categorical(logits / temperature, seed=seed)


def prompt_bucket(length: int) -> int:
    """The padded prompt length a prompt of `length` tokens is prefilled at: a power
    of two >= 16, so prompts of one bucket share the prefill's XLA kernels."""
    return max(16, 1 << (int(length) - 1).bit_length())


class Llama:
    """A Llama checkpoint bound to Tidal programs (see the module doc)."""

    def __init__(self, config: LlamaConfig, weights: dict[str, Any], dtype: Any = None, backend: str = "jax"):
        self.config = config
        shapes = config.weight_shapes()
        missing = [n for n in shapes if n not in weights]
        if missing:
            raise model_error(f"the checkpoint lacks {', '.join(map(repr, missing[:4]))}"
                             f"{', ...' if len(missing) > 4 else ''}", "check that it is a Llama checkpoint")
        file_dtype = np.dtype(weights["model.embed_tokens.weight"].dtype)
        self.dtype = dt.as_dtype(file_dtype if dtype is None else dtype, "Llama dtype")
        self.backend = backend
        self.weights = {}
        for name, shape in shapes.items():
            w = weights[name]
            if tuple(w.shape) != shape:
                raise model_error(f"checkpoint tensor {name!r} has shape {tuple(w.shape)}, the config says {shape}",
                                 "check config.json against the weights")
            self.weights[name] = w if np.dtype(w.dtype) == self.dtype else aligned_copy(w, self.dtype)
        self._executables: dict[tuple, Any] = {}

    @classmethod
    def from_pretrained(cls, directory: Any, dtype: Any = None, backend: str = "jax") -> "Llama":
        """A Hugging Face Llama directory: config.json and model.safetensors (or a
        sharded model.safetensors.index.json). Weights are memory-mapped and
        kept in the file's dtype unless `dtype` is given (converted once here)."""
        config = LlamaConfig.from_dict(read_config(directory))
        tensors = open_safetensors(directory)
        if "model.embed_tokens.weight" not in tensors:
            raise model_error(f"{directory!r} holds no model.embed_tokens.weight", "load a Llama checkpoint")
        file, key = tensors["model.embed_tokens.weight"]
        want = dt.as_dtype(file.info(key)[0] if dtype is None else dtype, "Llama dtype")
        weights = {}
        for name in config.weight_shapes():
            if name in tensors:
                file, key = tensors[name]
                # in place (memory-mapped) when aligned and of the dtype wanted; else read once
                # into an aligned buffer (and converted there)
                same = file.info(key)[0] == want and file.aligned(key)
                weights[name] = file.array(key) if same else file.read(key, want)
        return cls(config, weights, dtype=want, backend=backend)

    # -- the program -------------------------------------------------------------------
    def program(self, batch: int, window: int | None = None, sample: tuple | None = None,
                logits: bool = False) -> Program:
        """The generation program for `batch` sequences (see the module doc):
        bounds L (the padded prompt rows) and N; inputs "prompt" (L, batch),
        "length" () and "eos" () int64; outputs "first" (batch,), the first generated
        token, and "next" (N, batch), the token after each generated one. With
        `logits`, the prefill alone, output "logits" (L, batch, vocab) (float32)."""
        cfg, dtype = self.config, self.dtype
        with Program("llama_logits" if logits else "llama_generate") as p:
            (s, L), = p.dims(("s", "L"))
            params = {name: C.param(name, shape=shape, dtype=dtype) for name, shape in cfg.weight_shapes().items()}
            embed = Embedding(cfg.vocab_size, cfg.hidden_size, weight=params["model.embed_tokens.weight"])
            blocks = [_Block(cfg, params, i, dtype) for i in range(cfg.num_hidden_layers)]
            norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps, weight=params["model.norm.weight"])
            head = Linear(cfg.hidden_size, cfg.vocab_size, bias=False, layout="out_in", name="lm_head",
                          weight=params["model.embed_tokens.weight" if cfg.tie_word_embeddings else "lm_head.weight"])
            prompt = C.input("prompt", shape=(L, batch), dtype="int64")   # padded to L rows
            length = C.input("length", shape=(), dtype="int64")           # P, the prompt's own length

            # prefill: all L prompt rows in one pass (causal mask); rows >= P are padding,
            # never read: the first token comes from row P - 1, and decoding masks them
            x, cache = embed(prompt), []                   # (L, B, D)
            positions = C.arange(L)
            rows, cols = S.reshape(positions, -1, 1), S.reshape(positions, 1, -1)
            mask = cols <= rows
            if window is not None:
                mask = mask & (rows - cols < window)
            for block in blocks:
                q, k, v = block.project(x, positions)
                x = block.finish(x, block.attend(q, k, v, mask))
                cache.append((k, v))
            if logits:
                p.output("logits", E.astype(head(norm(x)), np.float32))
                return p
            first = _pick(head(norm(S.index_select(x, 0, length - 1))), sample)
            (u, N), = p.dims(("u", "N"))
            eos = C.input("eos", shape=(), dtype="int64")

            tok = C.recurrent(shape=(batch,), dtype="int64", domain=(u,), name="tok")
            done = C.recurrent(shape=(batch,), dtype="bool", domain=(u,), name="done")
            tok[0] = first
            done[0] = first == eos
            # decode: token u at position P + u; it sees the prompt rows < P (and, with a
            # window, > P + u - window) and its own keys kd[lo:u + 1], read temporally
            lo = 0 if window is None else max_(0, u - window + 1)
            seen = positions < length
            if window is not None:
                seen = seen & (positions > length + C.symbol(u - window))
            y = embed(tok)                                 # (B, D)
            for block, (k, v) in zip(blocks, cache):
                q, kd, vd = block.project(y, length + C.symbol(u))
                y = block.finish(y, block.attend_step(q, k, v, seen, kd[lo:u + 1], vd[lo:u + 1]))
            nxt = E.where(done, eos, _pick(head(norm(y)), sample))   # the token after token u
            tok[u + 1] = nxt
            done[u + 1] = done | (nxt == eos)
            # every step's next token is an output, the last one (token N) too: each step
            # then runs the same ops, with no condition around the last step's in the loop
            # (XLA would not hoist the weights' conversions out of a conditional)
            p.output("first", first)
            p.output("next", nxt)
        return p

    def executable(self, batch: int, window: int | None = None, sample: tuple | None = None):
        """The compiled program for (batch, window, sampling), compiled on first use
        and bound to the weights."""
        key = (batch, window, sample)
        exe = self._executables.get(key)
        if exe is None:
            exe = self.program(batch, window, sample).compile(backend=self.backend)
            exe.load_state_dict(self.weights)
            self._executables[key] = exe
        return exe

    def logits(self, prompt_ids: Any, window: int | None = None) -> np.ndarray:
        """float32 logits (B, P, vocab) at every prompt position (a forward pass,
        as Hugging Face's `model(ids).logits`)."""
        prompt = self._check_prompt(prompt_ids)
        key = ("logits", prompt.shape[0], window)
        exe = self._executables.get(key)
        if exe is None:
            exe = self.program(prompt.shape[0], window, logits=True).compile(backend=self.backend)
            exe.load_state_dict(self.weights)
            self._executables[key] = exe
        rows, P = self._rows(prompt), prompt.shape[1]
        out = exe.run(bounds={"L": rows.shape[0]}, inputs={"prompt": rows, "length": np.array(P, np.int64)})
        return np.asarray(out["logits"])[:P].transpose(1, 0, 2)

    def _check_prompt(self, prompt_ids: Any) -> np.ndarray:
        prompt = np.asarray(prompt_ids)
        if prompt.ndim == 1:
            prompt = prompt[None]
        if prompt.ndim != 2 or prompt.shape[1] < 1 or prompt.dtype.kind not in "iu":
            raise model_error(f"prompt_ids must be integer token ids of shape (batch, length >= 1), got "
                              f"{prompt.dtype} {prompt.shape}", "pass e.g. np.array([[1, 15043, 29892]])")
        if prompt.size and (prompt.min() < 0 or prompt.max() >= self.config.vocab_size):
            raise model_error(f"prompt_ids hold ids outside [0, {self.config.vocab_size})", "check the tokenizer")
        return prompt

    @staticmethod
    def _rows(prompt: np.ndarray) -> np.ndarray:
        """The prompt as (bucket, B) rows, zero-padded: one compilation per bucket."""
        rows = np.zeros((prompt_bucket(prompt.shape[1]), prompt.shape[0]), np.int64)
        rows[:prompt.shape[1]] = prompt.T
        return rows

    def generate(self, prompt_ids: Any, max_new_tokens: int, eos_token_id: int | None = None,
                 window: int | None = None, temperature: float = 0.0, seed: int = 0) -> np.ndarray:
        """Token ids (B, P + max_new_tokens): the prompt, then the generated tokens.
        Greedy at temperature 0, else sampled from softmax(logits / temperature)
        with seeded draws. After a sequence emits `eos_token_id`, its later
        positions hold it. `window`: sliding-window attention over the last
        `window` positions."""
        prompt = self._check_prompt(prompt_ids)
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, (int, np.integer)) or max_new_tokens < 1:
            raise model_error(f"max_new_tokens must be an int >= 1, got {max_new_tokens!r}", "e.g. max_new_tokens=32")
        if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 1):
            raise model_error(f"window must be an int >= 1 or None, got {window!r}", "e.g. window=4096")
        if not temperature >= 0:
            raise model_error(f"temperature must be >= 0, got {temperature!r}", "0 is greedy")
        sample = None if temperature == 0 else (float(temperature), int(seed))
        exe = self.executable(prompt.shape[0], window, sample)
        eos = -1 if eos_token_id is None else int(eos_token_id)
        rows, P = self._rows(prompt), prompt.shape[1]
        out = exe.run(bounds={"L": rows.shape[0], "N": int(max_new_tokens)},
                      inputs={"prompt": rows, "length": np.array(P, np.int64), "eos": np.array(eos, np.int64)})
        generated = np.concatenate([np.asarray(out["first"])[None], np.asarray(out["next"])[:-1]], 0)   # (n, B)
        return np.concatenate([prompt.astype(np.int64), generated.T], 1)
