"""EOS benchmark: a batch of 4 greedy decodes with and without `td.stop_when`.

The tiny Llama of bench/decode.py (dim 256, 4 layers, vocab 2048, batch 4, a
16-token prompt, causal attention), `examples/llm_decode.py`'s program with
`eos`: a sequence that generated the EOS token repeats it, and with
`td.stop_when(done.all())` the run ends at the first step where all four are
done. The EOS token is chosen (in the parent, from a float64 NumPy decode) as
the token that all four sequences generate, at different steps, whose last
first emission comes first (step 242 of the generated tokens with these
weights and prompt); the bound P + T is then set so that the stopped run
takes `--stop` (10% and 25% by default) of it.

Configurations (one process each, bench/harness.py, one thread): `stop` true
(`td.stop_when`) or false (the same program without it: every one of the P + T
steps runs), for each fraction. Metrics: `warm_ms` (the
best warm run), `steps` (exe.stats()["steps"]["t"]), `compile_s`; every run's
tokens are checked against the NumPy decode (`tokens_ok`: the stopped run
equals it exactly; the full run equals it on its rows and repeats EOS after).
After the runs: the time with stop_when over the time without, per T.

    python bench/eos.py                     # stops at 10% and 25% of the bound (a few minutes)
    python bench/eos.py --stop 0.1
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))

import llm_decode as L  # noqa: E402  (examples/llm_decode.py)
from decode import MODEL, PROMPT  # noqa: E402  (bench/decode.py's model)
from harness import main  # noqa: E402


def model_config() -> L.Config:
    return L.Config(**MODEL, pattern="causal")


def choose_eos(horizon: int = 300) -> tuple[int, list[int]]:
    """(eos, the generated step at which each sequence first emits it): among
    the tokens that every sequence emits within `horizon` steps of a float64
    NumPy decode, at distinct steps, the one whose last first emission comes
    first."""
    conf = model_config()
    weights = L.init_weights(conf, 0)
    prompt = L.make_prompt(conf, PROMPT, 1)
    toks, _ = L.numpy_decode(conf, weights, prompt, PROMPT + horizon)
    gen = toks[PROMPT:]
    best = None
    for tok in np.unique(gen):
        hits = [np.flatnonzero(gen[:, b] == tok) for b in range(conf.batch)]
        if not all(len(h) for h in hits):
            continue
        firsts = [int(h[0]) for h in hits]
        if len(set(firsts)) == conf.batch and (best is None or max(firsts) < max(best[1])):
            best = (int(tok), firsts)
    if best is None:
        raise SystemExit(f"no token that all sequences emit at distinct steps within {horizon} steps")
    return best


def measure(cfg: dict) -> dict:
    import tidal as td  # noqa: F401

    conf = model_config()
    weights = L.init_weights(conf, 0)
    P, T, eos = PROMPT, cfg["T"], cfg["eos"]
    prompt = L.make_prompt(conf, P, 1)
    p, _ = L.build(conf, weights, eos=eos, stop=cfg["stop"])
    start = time.perf_counter()
    exe = p.compile()
    compile_s = time.perf_counter() - start
    bounds, inputs = {"P": P, "T": P + T}, {"prompt": prompt}
    out = exe.run(bounds=bounds, inputs=inputs)
    warm = []
    for _ in range(cfg.get("warm", 3)):
        start = time.perf_counter()
        exe.run(bounds=bounds, inputs=inputs)
        warm.append(time.perf_counter() - start)
    tokens = out["tokens"]
    steps = exe.stats()["steps"]["t"]
    ref, _ = L.numpy_decode(conf, weights, prompt, P + T, eos=eos)
    if cfg["stop"]:
        ok = tokens.shape == ref.shape and np.array_equal(tokens, ref)
    else:
        n = len(ref)
        ok = tokens.shape == (P + T, conf.batch) and np.array_equal(tokens[:n], ref) and bool((tokens[n:] == eos).all())
    return {"warm_ms": 1e3 * min(warm), "steps": steps, "bound": P + T, "compile_s": compile_s,
            "tokens_ok": bool(ok), "rows": int(tokens.shape[0]), "stats": exe.stats()}


def after(rows: list[dict]) -> None:
    print()
    print("| T (generated) | bound P + T | steps run | without stop_when | with stop_when | ratio | tokens |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    by = {(r["T"], r["stop"]): r for r in rows}
    for T in sorted({r["T"] for r in rows}):
        full, stop = by.get((T, False), {}), by.get((T, True), {})
        if "warm_ms" not in full or "warm_ms" not in stop:
            print(f"| {T} | | | {full.get('warm_ms', 'n/a')} | {stop.get('warm_ms', 'n/a')} | | |")
            continue
        ratio = stop["warm_ms"] / full["warm_ms"]
        ok = "NumPy-exact" if full["tokens_ok"] and stop["tokens_ok"] else "MISMATCH"
        print(f"| {T} | {stop['bound']} | {stop['steps']} ({stop['steps'] / stop['bound']:.0%}) | "
              f"{full['warm_ms']:.1f} ms | {stop['warm_ms']:.1f} ms | {ratio:.2f} | {ok} |")


def configs(fractions) -> list[dict]:
    """For each fraction f: the bound P + T with the stop (the last sequence's
    EOS, at step P + last) at f of it."""
    eos, firsts = choose_eos()
    run = PROMPT + max(firsts) + 1        # the steps a stopped run takes
    print(f"EOS token {eos}: first generated at steps {firsts} of the four sequences; a stopped run takes "
          f"{run} steps", flush=True)
    out = []
    for f in fractions:
        T = int(round(run / f)) - PROMPT
        out += [{"system": "tidal", "T": T, "stop": s, "eos": eos, "warm": 2} for s in (False, True)]
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--stop", default="0.1,0.25", help="where the last sequence ends, as fractions of the bound")
    known, _ = ap.parse_known_args()
    child = "--child" in sys.argv
    main("eos", [] if child else configs(tuple(float(x) for x in known.stop.split(","))), measure,
         key=("T", "stop"), metrics=["warm_ms", "steps", "compile_s", "tokens_ok"], timeout=900.0, after=after)
