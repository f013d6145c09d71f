"""`tidal.models.Llama` on tiny random Hugging Face checkpoints written by the test,
against an independent NumPy decoder (models/hf_llama.py): GQA, MHA and MQA, tied
and untied embeddings, llama3 rope scaling, sharded files, windows, EOS."""
import json
import os

import numpy as np
import pytest

from models.hf_llama import numpy_logits_margins, tiny_config, write_random_llama
from tidal.frontend import compile_cache
from tidal.models import Llama
from tidal.models.llama import prompt_bucket

import tidal as td

CASES = {
    "gqa_untied_llama3": dict(),
    "mha_tied_no_scaling": dict(num_key_value_heads=4, tie_word_embeddings=True, rope_scaling=None),
    "mqa_untied": dict(num_key_value_heads=1, num_hidden_layers=3),
}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    out = {}
    for k, (name, overrides) in enumerate(CASES.items()):
        path = tmp_path_factory.mktemp(name)
        write_random_llama(str(path), tiny_config(**overrides), seed=k, shards=2 if k == 1 else 1)
        out[name] = str(path)
    return out


def _check_tokens(got, directory, prompt, n, **kw):
    """Tokens equal the reference's, except after a near-tie of the top two logits
    (float32 rounding may pick either): the sequences agree up to there."""
    want, _, margins = numpy_logits_margins(directory, prompt, n, compute_dtype=np.float64, **kw)
    assert got.shape == want.shape and got.dtype == np.int64
    P = prompt.shape[1]
    for b in range(got.shape[0]):
        diff = np.nonzero(got[b] != want[b])[0]
        if diff.size:
            step = diff[0] - P
            assert step >= 0 and margins[b, step] < 1e-4, f"row {b} differs at generated token {step}"


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("window", [None, 3])
def test_greedy_tokens_equal_the_numpy_reference(checkpoints, case, window):
    model = Llama.from_pretrained(checkpoints[case], dtype="float32")
    prompt = np.random.default_rng(1).integers(0, 97, size=(2, 5))
    _check_tokens(model.generate(prompt, 7, window=window), checkpoints[case], prompt, 7, window=window)


def test_eos_fills_the_rest_and_other_lengths_reuse_the_compilation(checkpoints):
    directory = checkpoints["gqa_untied_llama3"]
    model = Llama.from_pretrained(directory)
    rng = np.random.default_rng(2)
    prompt = rng.integers(0, 97, size=(3, 6))
    free = model.generate(prompt, 8)
    eos = int(free[1, 6 + 2])                             # row 1's third generated token
    got = model.generate(prompt, 8, eos_token_id=eos)
    _check_tokens(got, directory, prompt, 8, eos_token_id=eos)
    first = np.argmax(got[1, 6:] == eos)
    assert (got[1, 6 + first:] == eos).all()
    exe = model.executable(3)
    compilations = exe.stats()["xla_compilations"]
    # the same prompt bucket, and lengths to generate in the same power-of-two bucket as 8
    # (the decode's key/value stores are allocated at such capacities: one compilation each)
    for P, n in [(4, 8), (9, 5), (16, 7)]:
        assert prompt_bucket(P) == prompt_bucket(6)
        p2 = rng.integers(0, 97, size=(3, P))
        _check_tokens(model.generate(p2, n, eos_token_id=eos), directory, p2, n, eos_token_id=eos)
    assert exe.stats()["xla_compilations"] == compilations   # no new XLA compilation
    assert model.executable(3) is exe


def test_sampling_is_seeded_and_follows_the_temperature(checkpoints):
    model = Llama.from_pretrained(checkpoints["gqa_untied_llama3"])
    prompt = np.random.default_rng(3).integers(0, 97, size=(2, 4))
    a = model.generate(prompt, 12, temperature=1.0, seed=7)
    assert np.array_equal(a, model.generate(prompt, 12, temperature=1.0, seed=7))
    assert not np.array_equal(a, model.generate(prompt, 12, temperature=1.0, seed=8))
    cold = model.generate(prompt, 12, temperature=1e-4, seed=7)       # almost greedy
    assert np.array_equal(cold, model.generate(prompt, 12))


def test_a_checkpoint_of_the_same_shape_is_a_compile_cache_hit(tmp_path):
    compile_cache.clear()
    config = tiny_config()
    write_random_llama(str(tmp_path / "a"), config, seed=10)
    write_random_llama(str(tmp_path / "b"), config, seed=11)
    prompt = np.random.default_rng(4).integers(0, 97, size=(1, 5))
    a, b = Llama.from_pretrained(tmp_path / "a"), Llama.from_pretrained(tmp_path / "b")
    ta, tb = a.generate(prompt, 6), b.generate(prompt, 6)
    assert b.executable(1).cache_hit and b.executable(1).compiled is a.executable(1).compiled
    _check_tokens(ta, str(tmp_path / "a"), prompt, 6)
    _check_tokens(tb, str(tmp_path / "b"), prompt, 6)
    assert not np.array_equal(ta, tb)


def test_the_stage_dump_of_a_100_mb_model_is_small(tmp_path):
    """Weights are bound at run time, so the IR (and every stage) holds none."""
    cfg = tiny_config(hidden_size=1024, intermediate_size=2048, vocab_size=8192, num_attention_heads=8,
                      num_key_value_heads=2, head_dim=128, num_hidden_layers=2)
    from tidal.models import LlamaConfig
    config = LlamaConfig.from_dict(cfg)
    weights = {n: np.zeros(s, np.float32) for n, s in config.weight_shapes().items()}
    assert sum(w.nbytes for w in weights.values()) > 100e6
    Llama(config, weights).program(1).compile(backend="numpy", dump=str(tmp_path / "dump"))
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(tmp_path / "dump") for f in fs)
    assert 0 < total < 1e6


def test_bad_checkpoints_are_clear_errors_at_the_callers_line(tmp_path, checkpoints):
    def raises(match, fn, *args):
        with pytest.raises(td.TidalError, match=match) as e:
            fn(*args)
        assert e.value.location.file == __file__     # the caller's line, not the model's

    raises("no checkpoint directory", Llama.from_pretrained, tmp_path / "missing")
    os.makedirs(tmp_path / "empty")
    raises("has no config.json", Llama.from_pretrained, tmp_path / "empty")
    (tmp_path / "empty" / "config.json").write_text(json.dumps(tiny_config()))
    raises("neither model.safetensors nor", Llama.from_pretrained, tmp_path / "empty")
    (tmp_path / "empty" / "model.safetensors").write_bytes(b"\x10\x00")
    raises("not a valid safetensors file", Llama.from_pretrained, tmp_path / "empty")
    model = Llama.from_pretrained(checkpoints["gqa_untied_llama3"])
    raises("outside", model.generate, np.array([[5, 97]]), 3)
    raises("max_new_tokens", model.generate, np.array([[5, 6]]), 0)
    raises("window", model.generate, np.array([[5, 6]]), 2, None, 0)


def test_logits_equal_the_reference_and_bfloat16_stays_close(tmp_path):
    """A forward pass over the prompt: float32 logits equal the NumPy reference's;
    a bfloat16 copy of the checkpoint gives logits within bf16's precision of them."""
    config = tiny_config()
    write_random_llama(str(tmp_path / "f32"), config, seed=20)
    write_random_llama(str(tmp_path / "bf16"), config, dtype="bfloat16", seed=20)
    prompt = np.random.default_rng(5).integers(0, 97, size=(2, 6))
    f32 = Llama.from_pretrained(tmp_path / "f32").logits(prompt)
    bf16_model = Llama.from_pretrained(tmp_path / "bf16")
    assert str(bf16_model.dtype) == "bfloat16"
    bf16 = bf16_model.logits(prompt)
    # the reference's logits of the last prompt position (its first generated token)
    _, want, _ = numpy_logits_margins(str(tmp_path / "f32"), prompt, 1, compute_dtype=np.float64)
    np.testing.assert_allclose(f32[:, -1], want[:, 0], rtol=1e-4, atol=1e-4)
    scale = np.abs(f32).max()
    # bf16 weights (8 mantissa bits) and bf16 activations: relative error ~1e-2 of the logits' range
    assert np.abs(bf16 - f32).max() < 0.05 * scale
    assert (bf16.argmax(-1) == f32.argmax(-1)).mean() >= 0.75
    upcast = Llama.from_pretrained(tmp_path / "bf16", dtype="float32")   # bf16 file, float32 compute
    assert str(upcast.dtype) == "float32"
    tokens = upcast.generate(prompt, 4)
    _check_tokens(tokens, str(tmp_path / "bf16"), prompt, 4)


def test_the_benchmarks_jax_baseline_agrees(checkpoints):
    """bench/llama.py compares Tidal with bench/llama_jax.py: on a tiny checkpoint both
    produce the reference's tokens, with EOS and a window."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[3] / "bench" / "llama_jax.py"
    spec = importlib.util.spec_from_file_location("llama_jax", path)
    J = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(J)
    directory = checkpoints["mqa_untied"]
    prompt = np.random.default_rng(6).integers(0, 97, size=(2, 5))
    params, config = J.load(directory), J.read_config(directory)
    model = Llama.from_pretrained(directory)
    for window, eos in [(None, None), (3, 7)]:
        ours = model.generate(prompt, 6, eos_token_id=eos, window=window)
        _check_tokens(ours, directory, prompt, 6, eos_token_id=eos, window=window)
        np.testing.assert_array_equal(J.generate(params, config, prompt, 6, eos_token_id=eos, window=window), ours)


@pytest.mark.parametrize("dtype", [None, "float32"])
def test_weights_are_bound_without_a_copy(tmp_path, dtype):
    """from_pretrained keeps each weight read-only in a 64-byte aligned buffer (the
    file's mapping, or one aligned read of it, converted once), and the jax backend's
    device arrays alias those buffers: nothing is copied when binding."""
    write_random_llama(str(tmp_path), tiny_config(), dtype="bfloat16", seed=30)
    model = Llama.from_pretrained(tmp_path, dtype=dtype)
    assert all(not w.flags.writeable and w.ctypes.data % 64 == 0 for w in model.weights.values())
    bound = model.executable(1).state_dict()
    assert {n: bound[n].unsafe_buffer_pointer() for n in model.weights} == \
        {n: w.ctypes.data for n, w in model.weights.items()}
