"""LLM decoding (examples/llm_decode.py, bench/decode.py) and td.nn with given weights.

* The example's program at tiny sizes produces the tokens of an independent plain
  NumPy decode (a KV cache in Python lists) with the same weights, on the
  reference interpreter and on the scheduled backends, for both attention
  patterns and both RoPE conventions. Each case checks first that the NumPy
  decode has no near-ties (top-2 logit gap < 1e-3), so equal tokens are a real
  agreement and not luck.
* The benchmark's JAX baseline (padded cache, one jit) and PyTorch baseline
  produce the same tokens as the NumPy decode.
* Given weights (shapes, dtypes, errors at the user's line), load_state_dict,
  the safetensors/npz reader, and RoPE's two conventions against NumPy.
"""
import json
import os
import struct
import sys

import numpy as np
import pytest

import tidal as td
from program_helpers import BACKENDS, close

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
for sub in ("examples", "bench"):
    if os.path.join(ROOT, sub) not in sys.path:
        sys.path.insert(0, os.path.join(ROOT, sub))

import decode as bench_decode  # noqa: E402  (bench/decode.py)
import llm_decode as L  # noqa: E402  (examples/llm_decode.py)

SCHEDULED = [b for b in BACKENDS if b != "reference"]


def tiny(pattern="causal", layers=2, **kw):
    base = dict(dim=32, heads=4, hidden=64, vocab=64, batch=2) if layers > 1 else \
        dict(dim=16, heads=2, hidden=32, vocab=32, batch=2)
    base.update(kw)
    return L.Config(layers=layers, pattern=pattern, window=2, **base)


def expected(cfg, weights, prompt, steps):
    tokens, margins = L.numpy_decode(cfg, weights, prompt, steps)
    gen = margins[len(prompt) - 1:]
    assert gen.min() > 1e-3, "a near-tie in the reference decode: pick another seed"
    assert len(np.unique(tokens[len(prompt):])) > 1 or cfg.tied   # not a constant sequence
    return tokens, margins


def decode(cfg, weights, prompt, steps, backend, **kw):
    p, _ = L.build(cfg, weights, margins=True, **kw)
    return p.compile(backend=backend).run(bounds={"P": len(prompt), "T": steps}, inputs={"prompt": prompt})


# ------------------------------------------------------------------ the example's program
@pytest.mark.parametrize("pattern,rope,tied", [("causal", "rotate_half", False),
                                               ("window", "interleaved", False),
                                               ("causal", "interleaved", True)])
def test_decode_reference_matches_numpy(pattern, rope, tied):
    cfg = tiny(pattern, rope=rope, tied=tied)
    w, prompt = L.init_weights(cfg, 3), L.make_prompt(cfg, 3, 4)
    want, margins = expected(cfg, w, prompt, 9)
    out = decode(cfg, w, prompt, 9, "reference")
    np.testing.assert_array_equal(out["tokens"], want)
    close(out["margin"][:-1], margins, rtol=1e-3, atol=1e-4)


# every scheduled backend of TIDAL_PROGRAM_BACKENDS on both patterns; numpy at least on one
SCHEDULED_CASES = [(pat, b) for pat in ("causal", "window") for b in SCHEDULED] + \
    ([("window", "numpy")] if "numpy" not in SCHEDULED else [])


@pytest.mark.parametrize("pattern,backend", SCHEDULED_CASES)
def test_decode_scheduled_matches_numpy(pattern, backend):
    cfg = tiny(pattern, layers=1, rope="rotate_half" if pattern == "causal" else "interleaved")
    w, prompt = L.init_weights(cfg, 5), L.make_prompt(cfg, 3, 6)
    want, _ = expected(cfg, w, prompt, 9)
    np.testing.assert_array_equal(decode(cfg, w, prompt, 9, backend)["tokens"], want)


@pytest.mark.parametrize("pattern", ["causal", "window"])
def test_decode_runs_as_one_xla_loop_compiled_once(pattern):
    """The decode step is too large to separate (lowering/schedule.py,
    separate_max_ops): prompt and generated steps run in one loop with guards,
    one XLA computation, instead of two loops and two peeled steps compiled
    on their own. Guards with nothing to run (the prompt's input) are dropped."""
    cfg = tiny(pattern, rope="rotate_half")
    w, prompt = L.init_weights(cfg, 3), L.make_prompt(cfg, 3, 4)
    want, _ = expected(cfg, w, prompt, 12)
    p, _ = L.build(cfg, w, margins=True)
    exe = p.compile()
    for steps in (12, 9):
        np.testing.assert_array_equal(exe.run(bounds={"P": 3, "T": steps}, inputs={"prompt": prompt})["tokens"],
                                      want[:steps])
    stats = exe.compiled.stats()
    assert stats["xla_loops"] == 1 and stats["launches"] == 1, stats
    assert exe.compiled.compiles() == 1
    assert not [line for line in exe.compiled.source.splitlines() if line.strip() == "pass"]


@pytest.mark.parametrize("pattern", ["causal", "window"])
def test_decode_under_half_its_peak_memory_gives_the_same_tokens(pattern):
    """p.compile(device_memory=...) (issue 13): half the stores' unconstrained peak;
    weights and caches go to the host and back between launches."""
    cfg = tiny(pattern, rope="rotate_half")
    w, prompt = L.init_weights(cfg, 3), L.make_prompt(cfg, 3, 4)
    want, _ = expected(cfg, w, prompt, 12)
    p, _ = L.build(cfg, w, margins=True)
    bounds, inputs = {"P": len(prompt), "T": 12}, {"prompt": prompt}
    free = p.compile()
    np.testing.assert_array_equal(free.run(bounds=bounds, inputs=inputs)["tokens"], want)
    budget = free.memory_report().peak_bytes // 2
    exe = p.compile(device_memory=budget)
    np.testing.assert_array_equal(exe.run(bounds=bounds, inputs=inputs)["tokens"], want)
    report = exe.memory_report()
    assert report.peak_device_bytes <= budget
    outs = [name for _, name, d, _ in report.swapped if d == "out"]
    weights = {f"%{k}" for k in range(len(exe.compiled.graph.nodes))
               if exe.compiled.graph.nodes[k].name == "sdg.param"}
    assert weights & set(outs), report           # weights left the device and came back


def test_sampling_reference():
    cfg = tiny("window")
    w, prompt = L.init_weights(cfg, 3), L.make_prompt(cfg, 3, 4)
    greedy, _ = expected(cfg, w, prompt, 9)
    cold = decode(cfg, w, prompt, 9, "reference", sample=True, temperature=1e-5, seed=7)["tokens"]
    np.testing.assert_array_equal(cold, greedy)          # T -> 0: sampling is argmax
    hot = decode(cfg, w, prompt, 9, "reference", sample=True, temperature=2.0, seed=7)["tokens"]
    again = decode(cfg, w, prompt, 9, "reference", sample=True, temperature=2.0, seed=7)["tokens"]
    np.testing.assert_array_equal(hot, again)            # seeded
    np.testing.assert_array_equal(hot[:3], prompt)
    assert hot.min() >= 0 and hot.max() < cfg.vocab and not np.array_equal(hot, greedy)


def test_example_main_checks_against_numpy(capsys):
    L.main(["--backend", "reference", "--check", "--T", "4", "--prompt", "2", "--dim", "16", "--heads",
            "2", "--hidden", "32", "--vocab", "32", "--layers", "1", "--runs", "1", "--pattern", "window",
            "--window", "2"])
    assert "identical tokens" in capsys.readouterr().out


# ------------------------------------------------------------------ the benchmark's baselines
@pytest.mark.parametrize("pattern,rope", [("causal", "rotate_half"), ("window", "interleaved")])
def test_bench_jax_baseline_matches_numpy(pattern, rope):
    cfg = tiny(pattern, rope=rope)
    w, prompt = L.init_weights(cfg, 3), L.make_prompt(cfg, 3, 4)
    want, margins = expected(cfg, w, prompt, 10)
    tokens, got = bench_decode.jax_decode(cfg, w, prompt, 10)
    np.testing.assert_array_equal(tokens, want)
    close(got, margins, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("pattern,tied", [("causal", False), ("window", True)])
def test_bench_torch_baseline_matches_jax_and_numpy(pattern, tied):
    pytest.importorskip("torch")   # torch is in the [bench] extra, not in [test]
    cfg = tiny(pattern, tied=tied)
    w, prompt = L.init_weights(cfg, 3), L.make_prompt(cfg, 3, 4)
    want, margins = expected(cfg, w, prompt, 10)
    tokens, got = bench_decode.torch_decode(cfg, w, prompt, 10)
    np.testing.assert_array_equal(tokens, want)
    np.testing.assert_array_equal(bench_decode.jax_decode(cfg, w, prompt, 10)[0], tokens)
    close(got, margins, rtol=1e-3, atol=1e-4)


def test_bench_measure_same_tokens_for_all_systems():
    """bench/decode.py's measure() (what each benchmark child runs) on a tiny model."""
    systems = ["tidal", "jax"] + (["torch"] if _has_torch() else [])
    rows = []
    for s in systems:
        cfg = {"system": s, "pattern": "window", "window": 2, "T": 5, "prompt": 3, "warm": 1,
               "dim": 16, "layers": 1, "heads": 2, "hidden": 32, "vocab": 32, "batch": 2}
        rows.append({**cfg, **bench_decode.measure(cfg)})
    assert len({r["tokens_sha256"] for r in rows}) == 1 and len(rows[0]["tokens"]) == 5
    assert rows[0]["stats"]["xla_compilations"] > 0 and rows[0]["ms_per_token"] > 0
    lines = bench_decode.compare_tokens(rows)
    assert len(lines) == 1 and "!=" not in lines[0] and "==" in lines[0]


def test_bench_compare_tokens_tells_ties_from_mismatches():
    base = {"pattern": "causal", "T": 3}
    a = {**base, "system": "jax", "tokens": [[1, 2], [3, 4], [5, 6]], "near_ties": []}
    tie = {**base, "system": "torch", "tokens": [[1, 2], [3, 9], [5, 6]], "near_ties": [[1, 1, 2e-7]]}
    bad = {**base, "system": "tidal", "tokens": [[1, 2], [3, 4], [7, 6]], "near_ties": []}
    (line,) = bench_decode.compare_tokens([a, tie, bad])
    assert "jax != tidal from generated token 2 (sequence 0): NOT at a near-tie" in line
    assert "jax != torch from generated token 1 (sequence 1): a float tie" in line


def _has_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


# ------------------------------------------------------------------ given weights
def raises_here(match, fn):
    """fn() (a one-line lambda) raises a TidalError matching `match`, located at fn's line."""
    with pytest.raises(td.TidalError, match=match) as err:
        fn()
    assert err.value.filename == __file__ and err.value.lineno == fn.__code__.co_firstlineno, str(err.value)
    return err.value


def test_given_weights_modules_match_numpy():
    rng = np.random.default_rng(0)
    E, g = rng.normal(size=(5, 4)).astype(np.float32), rng.normal(size=4).astype(np.float32)
    W, b = rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=3).astype(np.float32)
    with td.Program() as p:
        (t, T), = p.dims("t")
        idx = td.input("idx", shape=(), dtype="int64", domain=(t,))
        emb, norm = td.nn.Embedding(5, 4, weight=E), td.nn.RMSNorm(4, eps=1e-5, weight=g)
        lin, nobias = td.nn.Linear(4, 3, weight=W, bias=b), td.nn.Linear(4, 3, weight=W)
        fed = td.nn.Linear(4, 3, weight=td.input("w", shape=(4, 3)), bias=False)
        h = norm(emb(idx))
        p.output("y", lin(h))
        p.output("z", nobias(h) - fed(h))
    assert nobias.bias is None and [n for n, _ in nobias.named_parameters()] == ["weight"]
    assert [n for n, _ in fed.named_parameters()] == []          # a td.input is data, not a parameter
    i = np.array([0, 3, 4, 3])
    out = p.compile(backend="reference").run(bounds={"T": 4}, inputs={"idx": i, "w": W * 0.5})
    x = E[i] / np.sqrt((E[i] ** 2).mean(-1, keepdims=True) + 1e-5) * g
    close(out["y"], x @ W + b)
    close(out["z"], x @ W * 0.5)


def test_given_weight_errors_at_the_users_line():
    W = np.zeros((4, 3), np.float32)
    with td.Program() as p:
        (t, T), = p.dims("t")
        e = raises_here(r"Linear weight has shape \(3, 4\), expected \(4, 3\)",
                        lambda: td.nn.Linear(4, 3, weight=W.T))
        assert "pass W.T" in e.hint
        raises_here("expected a floating-point array", lambda: td.nn.Linear(4, 3, weight=W.astype(np.int32)))
        raises_here(r"Linear bias has shape \(4,\), expected \(3,\)",
                    lambda: td.nn.Linear(4, 3, weight=W, bias=np.ones(4)))
        raises_here(r"Embedding weight has shape \(4, 3\), expected \(5, 3\)",
                    lambda: td.nn.Embedding(5, 3, weight=W))
        raises_here(r"RMSNorm weight has shape \(3,\), expected \(4,\)",
                    lambda: td.nn.RMSNorm(4, weight=np.ones(3)))
        raises_here("but not wk, wv, wo", lambda: td.nn.MultiHeadAttention(4, 2, dim=t, wq=np.eye(4)))
        sq = np.eye(4, dtype=np.float32)
        raises_here(r"shape \(3, 4\), expected \(4, 4\)",
                    lambda: td.nn.MultiHeadAttention(4, 2, dim=t, wq=sq, wk=sq, wv=sq, wo=W.T))
        raises_here(r"shape \(4, 2\), expected \(4, 3\)",
                    lambda: td.nn.Linear(4, 3, weight=td.input("w", shape=(4, 2))))
        raises_here("unknown RoPE convention 'meta'", lambda: td.nn.RoPE(4, convention="meta"))
        raises_here("in_features must be a positive int", lambda: td.nn.Linear(0, 3))


class Net(td.nn.Module):
    def __init__(self):
        self.layers = [td.nn.Linear(3, 4, name="l0"), td.nn.Linear(4, 2, bias=False, name="l1")]
        self.norm = td.nn.RMSNorm(4)

    def forward(self, x):
        return self.layers[1](self.norm(td.relu(self.layers[0](x))))


def _net_program():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))
        net = Net()
        p.output("y", net(x))
    return p, net


def _net_numpy(s, x):
    h = np.maximum(x @ s["layers.0.weight"] + s["layers.0.bias"], 0)
    h = h / np.sqrt((h * h).mean(-1, keepdims=True) + 1e-6) * s["norm.weight"]
    return h @ s["layers.1.weight"]


@pytest.mark.parametrize("suffix", [".safetensors", ".npz"])
def test_load_state_dict_from_a_file(tmp_path, suffix):
    p, net = _net_program()
    keys = ["layers.0.weight", "layers.0.bias", "layers.1.weight", "norm.weight"]
    assert list(net.state_dict()) == keys
    rng = np.random.default_rng(1)
    new = {k: rng.normal(size=v.shape).astype(np.float64) for k, v in net.state_dict().items()}
    path = td.nn.save_weights(tmp_path / f"w{suffix}", new)
    loaded = td.nn.load_weights(path)
    assert list(loaded) == keys and all(loaded[k].dtype == np.float64 for k in keys)
    assert net.load_state_dict(loaded) == ([], [])
    state = net.state_dict()
    assert all(state[k].dtype == np.float32 for k in keys)          # cast to the parameters' dtype
    x = rng.normal(size=(3, 3)).astype(np.float32)
    out = p.compile(backend="reference").run(bounds={"T": 3}, inputs={"x": x})
    close(out["y"], _net_numpy(new, x), rtol=1e-4)


def test_load_state_dict_errors():
    p, net = _net_program()
    before = net.state_dict()
    good = {k: v + 1 for k, v in before.items()}
    missing = {k: v for k, v in good.items() if k != "norm.weight"}
    raises_here(r"missing key 'norm.weight'", lambda: net.load_state_dict(missing))
    raises_here(r"unexpected key 'layers.1.bias'",
                lambda: net.load_state_dict({**good, "layers.1.bias": np.ones(2)}))
    e = raises_here(r"state_dict\['layers.1.weight'\] has shape \(2, 4\), expected \(4, 2\)",
                    lambda: net.load_state_dict({**good, "layers.1.weight": np.ones((2, 4), np.float32)}))
    assert "W.T" in e.hint
    raises_here("expected a floating-point array",
                lambda: net.load_state_dict({**good, "norm.weight": np.ones(4, int)}))
    raises_here("needs a mapping", lambda: net.load_state_dict([1, 2]))
    for k, v in net.state_dict().items():                            # nothing was loaded
        np.testing.assert_array_equal(v, before[k])
    assert net.load_state_dict({**missing, "extra": np.ones(1)}, strict=False) == (["norm.weight"], ["extra"])
    np.testing.assert_array_equal(net.state_dict()["layers.0.bias"], good["layers.0.bias"])
    np.testing.assert_array_equal(net.state_dict()["norm.weight"], before["norm.weight"])


def test_llama_state_dict_names_and_tied_weights():
    cfg = tiny("causal", tied=True)
    w = L.init_weights(cfg, 0)
    _, model = L.build(cfg, w)
    assert list(model.state_dict()) == list(L.weight_shapes(cfg)) and "layers.1.attn.q.weight" in w
    assert "output.weight" not in model.state_dict()                 # tied: the embedding, once


# ------------------------------------------------------------------ the safetensors reader
def _safetensors_bytes(entries, metadata=None):
    """A file written by hand following the format (not with td.nn.save_weights)."""
    header, blobs, off = {}, b"", 0
    if metadata:
        header["__metadata__"] = metadata
    for name, (kind, shape, raw) in entries.items():
        header[name] = {"dtype": kind, "shape": shape, "data_offsets": [off, off + len(raw)]}
        blobs, off = blobs + raw, off + len(raw)
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + blobs


def test_safetensors_reader(tmp_path):
    bf16 = np.array([0x3FC0, 0xC000, 0x0000], "<u2").tobytes()          # 1.5, -2.0, 0.0
    raw = _safetensors_bytes({"a.b": ("F32", [2, 2], np.arange(4, dtype="<f4").tobytes()),
                              "h": ("BF16", [3], bf16), "i": ("I64", [], np.int64(7).tobytes()),
                              "m": ("BOOL", [2], b"\x01\x00")}, {"format": "pt"})
    (tmp_path / "m.safetensors").write_bytes(raw)
    got = td.nn.load_weights(tmp_path / "m.safetensors")
    assert sorted(got) == ["a.b", "h", "i", "m"]
    np.testing.assert_array_equal(got["a.b"], np.arange(4, dtype=np.float32).reshape(2, 2))
    assert got["h"].dtype == np.float32 and got["h"].tolist() == [1.5, -2.0, 0.0]
    assert got["i"].shape == () and int(got["i"]) == 7 and got["m"].tolist() == [True, False]
    arrays = {"x": np.ones((2, 3), np.float16), "y": np.arange(3, dtype=np.int32)}
    back = td.nn.load_weights(td.nn.save_weights(tmp_path / "s.safetensors", arrays))
    assert all(back[k].dtype == v.dtype and np.array_equal(back[k], v) for k, v in arrays.items())
    (tmp_path / "bad1.safetensors").write_bytes(raw[:5])
    raises_here("too short", lambda: td.nn.load_weights(tmp_path / "bad1.safetensors"))
    (tmp_path / "bad2.safetensors").write_bytes(raw[:-3])
    raises_here(r"tensor 'i': data_offsets \[22, 30\] do not hold I64",
                lambda: td.nn.load_weights(tmp_path / "bad2.safetensors"))
    raises_here("no weights file", lambda: td.nn.load_weights(tmp_path / "none.npz"))


# ------------------------------------------------------------------ RoPE's two conventions
def rope_hf(x, pos, base):
    """Hugging Face's apply_rotary_pos_emb (rotate_half), NumPy."""
    d = x.shape[-1]
    inv = 1.0 / base ** (np.arange(0, d, 2) / d)
    emb = np.concatenate([pos * inv, pos * inv])
    rot = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], -1)
    return x * np.cos(emb) + rot * np.sin(emb)


def rope_meta(x, pos, base):
    """Meta's apply_rotary_emb (pairs as complex numbers, view_as_complex), NumPy."""
    d = x.shape[-1]
    freqs = np.exp(1j * pos / base ** (np.arange(0, d, 2) / d))
    xc = x.reshape(*x.shape[:-1], d // 2, 2)
    z = (xc[..., 0] + 1j * xc[..., 1]) * freqs
    return np.stack([z.real, z.imag], -1).reshape(x.shape)


@pytest.mark.parametrize("convention,ref", [("rotate_half", rope_hf), ("interleaved", rope_meta)])
def test_rope_conventions_match_numpy(convention, ref):
    d = 8
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2, d), domain=(t,))
        rope = td.nn.RoPE(d, base=100.0, convention=convention)
        p.output("y", rope(x, t))
        p.output("z", rope(x[0:t + 1], td.arange(0, t + 1).unsqueeze(-1)))     # keys stacked over 0:t+1
    x = np.random.default_rng(0).normal(size=(4, 2, d)).astype(np.float32)
    out = p.compile(backend="reference").run(bounds={"T": 4}, inputs={"x": x})
    want = np.stack([ref(x[s].astype(np.float64), s, 100.0) for s in range(4)])
    close(out["y"], want)
    close(out["z"][-1], want)
    assert not np.allclose(rope_hf(x[3], 3, 100.0), rope_meta(x[3], 3, 100.0))   # they differ
    perm = np.r_[0:d:2, 1:d:2]                       # interleaved = rotate_half on de-interleaved pairs
    np.testing.assert_allclose(rope_meta(x[3], 3, 100.0)[..., perm], rope_hf(x[3][..., perm], 3, 100.0),
                               rtol=1e-6, atol=1e-6)
