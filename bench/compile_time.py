"""Compile-time benchmark: `p.compile()` against program size (issue: compile time).

    python bench/compile_time.py                       # every configuration
    python bench/compile_time.py --only '"layers": 4'  # a subset

Workloads (one process each, bench/harness.py, one thread):

* decode, unrolled layers L in {2, 4, 8, 16, 32}: `examples/llm_decode.py`'s
  program (dim 256, 4 heads, SwiGLU hidden 768, vocab 2048, batch 4, causal),
  once with the default passes (fusion on) and once with `passes=["sdg-dce"]`
  (fusion off, up to 16 layers: 32 unfused layers take many minutes);
* decode with its layers stacked as a temporal dim (`td.nn.Stack`, L in
  {2, 4, 8, 16, 32}); each decode with the default passes also runs 16 tokens,
  and the table says whether the stacked program's tokens equal the unrolled one's;
* REINFORCE, B = 64, T = 200 (`examples/reinforce.py`, Monte-Carlo returns).

Metrics: `compile_s` (`p.compile()`, tracing excluded: `trace_s`), the number
of sdg ops after the passes (`nodes`), and each compile stage's seconds
(`stages`, from `exe.stages`' timings). Targets (issue 11): 4 unrolled layers
<= 5 s, 16 layers <= 4.5x the 4-layer time, 32 stacked layers <= 1.2x 4 stacked
layers, REINFORCE <= 5 s. The table shows
`ratio_vs_L4` = compile_s / compile_s of the 4-layer row with the same passes.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))

from harness import main  # noqa: E402

MODEL = dict(dim=256, heads=4, hidden=768, vocab=2048, batch=4)


def _stage_seconds(exe) -> dict:
    stages = getattr(exe, "_stages", None)
    return {s.name: round(s.seconds, 4) for s in stages.stages} if stages is not None else {}


def measure(cfg: dict) -> dict:
    start = time.perf_counter()
    if cfg["workload"] == "decode":
        import llm_decode as L

        conf = L.Config(layers=cfg["layers"], pattern="causal", window=256,
                        stacked=cfg.get("stacked", False), **MODEL)
        p, _ = L.build(conf, L.init_weights(conf, 0))
    else:
        import reinforce

        p = reinforce.build(B=cfg["B"], hidden=64, returns="mc", n=8, gamma=0.99, lr=1e-2, model_seed=0)
    trace_s = time.perf_counter() - start
    passes = None if cfg["passes"] == "default" else cfg["passes"].split(",")
    start = time.perf_counter()
    exe = p.compile(passes=passes)
    compile_s = time.perf_counter() - start
    out = {"compile_s": compile_s, "trace_s": trace_s, "nodes": len(exe.compiled.graph.nodes),
           "stages": _stage_seconds(exe)}
    if cfg["workload"] == "decode" and cfg["passes"] == "default":
        # the tokens of a short decode: the stacked and the unrolled program must agree
        prompt = L.make_prompt(conf, 4, 1)
        tokens = exe.run(bounds={"P": 4, "T": 20}, inputs={"prompt": prompt})["tokens"]
        out["tokens"] = np.asarray(tokens).tolist()
    return out


CONFIGS = ([{"system": "tidal", "workload": "decode", "layers": n, "passes": "default"} for n in (2, 4, 8, 16, 32)]
           + [{"system": "tidal", "workload": "decode", "layers": n, "passes": "default", "stacked": True}
              for n in (2, 4, 8, 16, 32)]
           + [{"system": "tidal", "workload": "decode", "layers": n, "passes": "sdg-dce"} for n in (2, 4, 8, 16)]
           + [{"system": "tidal", "workload": "reinforce", "B": 64, "T": 200, "passes": "default"}])


def _variant(r: dict) -> tuple:
    return r["passes"], bool(r.get("stacked"))


def report(rows: list[dict]) -> None:
    base = {_variant(r): r.get("compile_s") for r in rows if r.get("layers") == 4}
    unrolled = {r["layers"]: r.get("tokens") for r in rows if r.get("layers") and not r.get("stacked")}
    print("\nworkload   passes    stacked layers  nodes  compile_s  ratio_vs_L4  tokens_vs_unrolled")
    for r in rows:
        b = base.get(_variant(r))
        ratio = f"{r['compile_s'] / b:.2f}" if b and r.get("layers") and r.get("compile_s") else "-"
        same = "-"
        if r.get("stacked") and r.get("tokens") is not None and unrolled.get(r["layers"]) is not None:
            same = "identical" if r["tokens"] == unrolled[r["layers"]] else "DIFFERENT"
        print(f"{r['workload']:<10} {r['passes']:<9} {str(bool(r.get('stacked'))):<7} "
              f"{str(r.get('layers', '-')):>6}  {str(r.get('nodes', '-')):>5}"
              f"  {r.get('compile_s', float('nan')):9.2f}  {ratio:>11}  {same}")
    four = [r for r in rows if r.get("layers") == 4 and r["passes"] == "default" and r.get("stages")]
    if four:
        print("\nstages of the 4-layer compile (s):")
        for name, s in four[0]["stages"].items():
            print(f"  {name:<20} {s:8.3f}")


if __name__ == "__main__":
    main("compile_time", CONFIGS, measure, key=("workload", "layers", "passes", "stacked"), metrics=["compile_s"],
         timeout=1200, after=report)
