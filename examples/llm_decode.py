"""Llama-style decoding as one recurrent-tensor program.

A decoder of `layers` blocks (RMSNorm, multi-head attention with RoPE, RMSNorm,
SwiGLU MLP, residuals), a final RMSNorm and an output projection (tied to the
embedding or not), run over a temporal dim t for a batch of sequences:

    tok[t] = prompt[t]                        for t < P   (prefill, one token per step)
    tok[t + 1] = argmax(logits(tok[0:t + 1]))  otherwise   (greedy decoding)

The K/V cache is not written anywhere: each layer's keys and values are
recurrent tensors over t and the attention reads them as `k[0:t + 1]` (causal)
or `k[max(0, t - W + 1):t + 1]` (window); Tidal's schedule decides what to keep
(a growing store for causal, a window store for window). No masks, no padding:
the prompt is an input over its own dim s < P, read as `prompt[t]` under the
condition t < P. Sampling (`--sample`) draws from softmax(logits / temperature).

    python examples/llm_decode.py                          # greedy, causal, jax backend
    python examples/llm_decode.py --pattern window --window 4 --T 24 --check
    python examples/llm_decode.py --backend numpy --layers 1 --sample

`--check` decodes the same prompt with the plain NumPy loop below (a KV cache
in Python lists) and compares the tokens. Weights are drawn from a seeded NumPy
generator (`init_weights`), or loaded with `--weights file.safetensors|.npz`
(names as `Llama.state_dict()`: `layers.0.attn.q.weight`, ...).
"""
from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass

import numpy as np

import tidal as td


@dataclass(frozen=True)
class Config:
    dim: int = 64
    layers: int = 2
    heads: int = 4
    hidden: int = 128          # SwiGLU hidden size
    vocab: int = 256
    batch: int = 2
    pattern: str = "causal"    # or "window"
    window: int = 8
    rope: str = "rotate_half"  # or "interleaved" (Meta's convention)
    rope_base: float = 10000.0
    tied: bool = False         # output projection = embedding.T
    eps: float = 1e-5
    stacked: bool = False      # the layers as a temporal dim l (td.nn.Stack), not unrolled


def weight_shapes(cfg: Config) -> dict[str, tuple]:
    """The state-dict names and shapes (Tidal's `x @ W` layout: (in, out))."""
    D, F, V = cfg.dim, cfg.hidden, cfg.vocab
    shapes = {"embed.weight": (V, D)}
    for i in range(cfg.layers):
        pre = f"layers.{i}."
        shapes[pre + "attn_norm.weight"] = (D,)
        for w in "qkvo":
            shapes[pre + f"attn.{w}.weight"] = (D, D)
        shapes[pre + "mlp_norm.weight"] = (D,)
        shapes[pre + "mlp.gate.weight"] = (D, F)
        shapes[pre + "mlp.up.weight"] = (D, F)
        shapes[pre + "mlp.down.weight"] = (F, D)
    shapes["norm.weight"] = (D,)
    if not cfg.tied:
        shapes["output.weight"] = (D, V)
    return shapes


def init_weights(cfg: Config, seed: int = 0) -> dict[str, np.ndarray]:
    """Deterministic float32 weights: N(0, 1/fan_in) matrices, N(0, 1) embeddings,
    norm gains 1 + N(0, 0.1)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in weight_shapes(cfg).items():
        if len(shape) == 1:
            w = 1.0 + 0.1 * rng.standard_normal(shape)
        elif name == "embed.weight":
            w = rng.standard_normal(shape)
        else:
            w = rng.standard_normal(shape) / np.sqrt(shape[0])
        out[name] = w.astype(np.float32)
    return out


class SwiGLU(td.nn.Module):
    def __init__(self, dim: int, hidden: int, w: dict, pre: str):
        self.gate = td.nn.Linear(dim, hidden, weight=w[pre + "gate.weight"], bias=False, name=pre + "gate")
        self.up = td.nn.Linear(dim, hidden, weight=w[pre + "up.weight"], bias=False, name=pre + "up")
        self.down = td.nn.Linear(hidden, dim, weight=w[pre + "down.weight"], bias=False, name=pre + "down")

    def forward(self, x):
        g = self.gate(x)
        return self.down(g * td.sigmoid(g) * self.up(x))


class Block(td.nn.Module):
    def __init__(self, cfg: Config, t, w: dict, pre: str):
        self.attn_norm = td.nn.RMSNorm(cfg.dim, cfg.eps, weight=w[pre + "attn_norm.weight"],
                                       name=pre + "attn_norm")
        self.attn = td.nn.MultiHeadAttention(
            cfg.dim, cfg.heads, dim=t, pattern=cfg.pattern, window=cfg.window, rope=cfg.rope,
            rope_base=cfg.rope_base, name=pre + "attn",
            **{f"w{k}": w[pre + f"attn.{k}.weight"] for k in "qkvo"})
        self.mlp_norm = td.nn.RMSNorm(cfg.dim, cfg.eps, weight=w[pre + "mlp_norm.weight"],
                                      name=pre + "mlp_norm")
        self.mlp = SwiGLU(cfg.dim, cfg.hidden, w, pre + "mlp.")

    def forward(self, x):
        x = x + self.attn(self.attn_norm(x))        # attention over k[0:t+1] / the window
        return x + self.mlp(self.mlp_norm(x))


class Llama(td.nn.Module):
    """logits (batch, vocab) at every step t from the tokens tok[t] (batch,)."""

    def __init__(self, cfg: Config, t, weights: dict):
        self.embed = td.nn.Embedding(cfg.vocab, cfg.dim, weight=weights["embed.weight"], name="embed")
        self.layers = [Block(cfg, t, weights, f"layers.{i}.") for i in range(cfg.layers)]
        if cfg.stacked:   # one traced block over a layer dim: the program's size is flat in depth
            self.layers = td.nn.Stack(self.layers, name="layers")
        self.norm = td.nn.RMSNorm(cfg.dim, cfg.eps, weight=weights["norm.weight"], name="norm")
        if not cfg.tied:
            self.output = td.nn.Linear(cfg.dim, cfg.vocab, weight=weights["output.weight"], bias=False,
                                       name="output")
        self.cfg = cfg

    def forward(self, tok):
        x = self.embed(tok)                         # (batch, dim)
        if self.cfg.stacked:
            x = self.layers(x)
        else:
            for block in self.layers:
                x = block(x)
        x = self.norm(x)
        return self.output(x) if not self.cfg.tied else x @ self.embed.weight.T


def _argmax(logits, n: int):
    """Index of the first maximum on the last axis (np.argmax's ties)."""
    if hasattr(td, "argmax"):
        return td.argmax(logits, -1).astype("int64")
    top = logits.max(-1, keepdim=True)
    return td.where(logits == top, td.arange(0, n), n).min(-1)


def _sample(logits, n: int, t, temperature: float, seed: int):
    if hasattr(td, "categorical"):
        return td.categorical(logits / temperature, seed=seed).astype("int64")
    # Gumbel-max until td.categorical exists: argmax(logits / T + G), G ~ Gumbel(0, 1)
    u = td.rand(*(int(str(s)) for s in logits.shape), domain=(t,), seed=seed).clamp(1e-20, 1.0)
    return _argmax(logits / temperature - td.log(-td.log(u)), n)


def build(cfg: Config, weights: dict, *, sample: bool = False, temperature: float = 1.0,
          seed: int = 0, margins: bool = False, eos: int | None = None, stop: bool = True):
    """The decoding program: bounds P (prompt length) and T (prompt + generated);
    input "prompt" (P, batch) int64; output "tokens" (T, batch) (the prompt, then
    the generated tokens) and, with `margins`, "margin" (T, batch): the gap between
    the two largest logits at each step (to tell exact ties from real mismatches).

    With `eos`, a sequence that has generated the token `eos` is done and
    generates `eos` from then on, and (with `stop`) the run ends at the first
    step where every sequence is done (`td.stop_when`): "tokens" then has
    t_stop + 1 <= T rows, the last one holding the last sequence's first EOS."""
    with td.Program("llama_decode") as p:
        (s, P), (t, T) = p.dims(("s", "P"), "t")
        prompt = td.input("prompt", shape=(cfg.batch,), dtype="int64", domain=(s,))
        tok = td.recurrent(shape=(cfg.batch,), dtype="int64", domain=(t,))
        tok[t, t < P] = prompt[t]                   # prefill: the prompt, one token per step
        model = Llama(cfg, t, weights)
        logits = model(tok)                         # (batch, vocab)
        nxt = _sample(logits, cfg.vocab, t, temperature, seed) if sample else _argmax(logits, cfg.vocab)
        if eos is not None:   # done[t]: the sequence has generated eos by step t
            done = td.recurrent(shape=(cfg.batch,), dtype="bool", domain=(t,))
            done[t, t < P] = td.zeros(cfg.batch, dtype="bool")
            done[t] = done[t - 1] | (tok == eos)
            nxt = td.where(done, eos, nxt)
            if stop:
                td.stop_when(done.all())            # the run ends once every sequence is done
        tok[t + 1] = nxt
        p.output("tokens", tok)
        if margins:
            top = logits.max(-1, keepdim=True)
            second = td.where(logits == top, -np.inf, logits).max(-1)
            p.output("margin", top.squeeze(-1) - second)
    return p, model


def make_prompt(cfg: Config, length: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, cfg.vocab, size=(length, cfg.batch)).astype(np.int64)


# -- an independent decode in plain NumPy (the check) -----------------------------------------
def _rope_np(x, pos, cfg: Config):
    d = x.shape[-1]
    ang = pos * cfg.rope_base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    cos, sin = np.cos(ang), np.sin(ang)
    if cfg.rope == "interleaved":
        z = (x[..., 0::2] + 1j * x[..., 1::2]) * (cos + 1j * sin)
        return np.stack([z.real, z.imag], -1).reshape(x.shape).astype(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1).astype(x.dtype)


def numpy_decode(cfg: Config, weights: dict, prompt: np.ndarray, steps: int,
                 dtype=np.float64, eos: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(tokens (steps, batch), margins (steps - 1, batch)): greedy decoding with a
    KV cache in Python lists, sliced to the window for pattern "window". With
    `eos`, as `build(eos=...)`: a sequence repeats eos once it generated it, and
    decoding ends after the step where every sequence has (fewer rows)."""
    w = {k: v.astype(dtype) for k, v in weights.items()}
    H, dh, B = cfg.heads, cfg.dim // cfg.heads, cfg.batch

    def rms(x, g):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + cfg.eps) * g

    toks = [prompt[i] for i in range(min(len(prompt), steps))]
    cache = [([], []) for _ in range(cfg.layers)]
    margins = []
    done = np.zeros(B, dtype=bool)
    for t in range(steps - 1):
        if eos is not None and t >= len(prompt):
            done |= toks[t] == eos
            if done.all():
                break
        x = w["embed.weight"][toks[t]]
        for i, (ks, vs) in enumerate(cache):
            pre = f"layers.{i}."
            h = rms(x, w[pre + "attn_norm.weight"])
            q, k, v = (h @ w[pre + f"attn.{n}.weight"] for n in "qkv")
            q, k, v = (a.reshape(B, H, dh) for a in (q, k, v))
            ks.append(_rope_np(k, t, cfg))
            vs.append(v)
            lo = 0 if cfg.pattern == "causal" else max(0, t - cfg.window + 1)
            K, Vv = np.stack(ks[lo:], 1), np.stack(vs[lo:], 1)        # (B, n, H, dh)
            s = np.einsum("bhd,bnhd->bhn", _rope_np(q, t, cfg), K) / np.sqrt(dh)
            a = np.exp(s - s.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            x = x + np.einsum("bhn,bnhd->bhd", a, Vv).reshape(B, -1) @ w[pre + "attn.o.weight"]
            h = rms(x, w[pre + "mlp_norm.weight"])
            g = h @ w[pre + "mlp.gate.weight"]
            x = x + (g / (1 + np.exp(-g)) * (h @ w[pre + "mlp.up.weight"])) @ w[pre + "mlp.down.weight"]
        x = rms(x, w["norm.weight"])
        logits = x @ (w["embed.weight"].T if cfg.tied else w["output.weight"])
        top2 = np.sort(logits, -1)[:, -2:]
        margins.append(top2[:, 1] - top2[:, 0])
        if t + 1 >= len(toks):
            toks.append(np.argmax(logits, -1) if eos is None else np.where(done, eos, np.argmax(logits, -1)))
    return np.stack(toks).astype(np.int64), np.stack(margins) if margins else np.zeros((0, B))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    d = Config()
    ap.add_argument("--pattern", choices=("causal", "window"), default=d.pattern)
    ap.add_argument("--window", type=int, default=d.window)
    ap.add_argument("--T", type=int, default=16, help="tokens to generate")
    ap.add_argument("--prompt", type=int, default=4, help="prompt length P")
    for name in ("layers", "dim", "heads", "hidden", "vocab", "batch"):
        ap.add_argument(f"--{name}", type=int, default=getattr(d, name))
    ap.add_argument("--rope", choices=td.nn.ROPE_CONVENTIONS, default=d.rope)
    ap.add_argument("--tied", action="store_true", help="output projection tied to the embedding")
    ap.add_argument("--stacked", action="store_true", help="layers as a temporal dim (td.nn.Stack)")
    ap.add_argument("--backend", choices=td.backends(), default="jax")
    ap.add_argument("--sample", action="store_true", help="sample instead of greedy argmax")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0, help="weights (and sampling) seed")
    ap.add_argument("--weights", help="load a .safetensors/.npz state dict instead of seeded weights")
    ap.add_argument("--save-weights", help="write the weights used to this .safetensors/.npz file")
    ap.add_argument("--runs", type=int, default=2, help="runs (the first one compiles kernels)")
    ap.add_argument("--check", action="store_true", help="compare with the NumPy decode (greedy)")
    a = ap.parse_args(argv)
    cfg = Config(dim=a.dim, layers=a.layers, heads=a.heads, hidden=a.hidden, vocab=a.vocab, batch=a.batch,
                 pattern=a.pattern, window=a.window, rope=a.rope, tied=a.tied,
                 stacked=a.stacked)
    print("config:", asdict(cfg), f"prompt={a.prompt} generate={a.T} backend={a.backend}")
    weights = init_weights(cfg, a.seed)
    t0 = time.perf_counter()
    p, model = build(cfg, weights, sample=a.sample, temperature=a.temperature, seed=a.seed)
    if a.weights:
        model.load_state_dict(td.nn.load_weights(a.weights))   # strict: names and shapes must match
        weights = model.state_dict()
    if a.save_weights:
        print("saved", td.nn.save_weights(a.save_weights, model.state_dict()))
    t1 = time.perf_counter()
    exe = p.compile(backend=a.backend)
    t2 = time.perf_counter()
    prompt = make_prompt(cfg, a.prompt, a.seed + 1)
    bounds = {"P": a.prompt, "T": a.prompt + a.T}
    times = []
    for _ in range(max(1, a.runs)):
        start = time.perf_counter()
        tokens = exe.run(bounds=bounds, inputs={"prompt": prompt})["tokens"]
        times.append(time.perf_counter() - start)
    print(f"trace {t1 - t0:.2f} s, compile {t2 - t1:.2f} s, first run {times[0]:.2f} s"
          + (f", warm run {min(times[1:]):.3f} s = {1e3 * min(times[1:]) / a.T:.2f} ms/token "
             f"({a.prompt + a.T} steps)" if len(times) > 1 else ""))
    if exe.backend_info.scheduled:          # the reference interpreter keeps no counters
        print("runtime counters:", exe.stats())
    for b in range(cfg.batch):
        print(f"sequence {b}: prompt {prompt[:, b].tolist()} -> generated {tokens[a.prompt:, b].tolist()}")
    if a.check:
        if a.sample:
            print("--check compares greedy decoding only")
            return tokens
        expected, margin = numpy_decode(cfg, weights, prompt, a.prompt + a.T)
        same = np.array_equal(tokens, expected)
        print("NumPy decode:", "identical tokens" if same else
              f"DIFFERENT tokens (smallest top-2 logit gap {margin.min():.2e})")
        if not same:
            raise SystemExit(1)
    return tokens


if __name__ == "__main__":
    main()
