"""Shared benchmark harness: one process per configuration, one thread each.

A benchmark script defines its configurations (dicts with at least "system",
one of "tidal", "jax", "torch", and the workload's parameters) and a function
that measures one configuration in the current process:

    from harness import Config, main

    def measure(cfg: dict) -> dict:         # runs in a fresh child process
        ...                                 # build, compile, run; return metrics
        return {"ms_per_token": 4.1, "compile_s": 2.0, "tokens": [...]}

    main("decode", configs, measure, key=("pattern", "T"), metrics=[...])

`main` runs every configuration as `python SCRIPT --child JSON` (so peak RSS is
the configuration's own: the child's VmHWM), with the intra-op
thread count set to 1 for XLA, PyTorch and BLAS before they are imported, and a
wall-clock limit per configuration (a configuration over it is reported as
timed out with the limit, never dropped). It prints one JSON line per
configuration, then a table in which every row of system S is compared with the
"jax" and "torch" rows of the same key (`ratio_vs_jax` = S / jax of the first
metric, lower is better for Tidal), and writes the JSON lines to
`bench/results/NAME.jsonl`.

`--rounds R` runs the chosen configurations R times, round-robin (every
configuration once per round, so that a machine that speeds up or slows down
over minutes weighs on every system alike), and reports for each the round
with the median of the first metric, every round's value in `rounds`.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Sequence

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
MARK = "BENCH-RESULT "

# One intra-op thread everywhere; set before jax/torch/numpy start their pools.
# (XLA ignores the whole of XLA_FLAGS when it holds a word that is not a
# `--flag`, such as the often-quoted `intra_op_parallelism_threads=1`.) The
# child is also pinned to one core (`_pin`): XLA CPU keeps worker threads.
THREAD_ENV = {
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false",
    "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
    "TF_NUM_INTEROP_THREADS": "1", "TF_NUM_INTRAOP_THREADS": "1",
    "JAX_PLATFORMS": "cpu",
}


def single_thread_torch() -> None:
    """Call in a child before using torch."""
    import torch
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)


def _pin() -> None:
    """Runs this process (and the threads it starts) on one core, the first it may use."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def _child(measure: Callable[[dict], dict], cfg: dict) -> None:
    _pin()
    start = time.perf_counter()
    metrics = measure(cfg)
    metrics.setdefault("wall_s", time.perf_counter() - start)
    peak = _peak_rss_mb()
    if peak is not None:
        metrics["peak_rss_mb"] = peak
    print(MARK + json.dumps({**cfg, **metrics}, default=_jsonable), flush=True)


def _peak_rss_mb() -> float | None:
    """This process's peak resident set (VmHWM): per address space, so reset by
    exec, unlike getrusage's ru_maxrss, which keeps the forking parent's peak."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _jsonable(x: Any) -> Any:
    if hasattr(x, "tolist"):
        return x.tolist()
    return str(x)


def run_config(script: str, cfg: dict, timeout: float) -> dict:
    """Runs one configuration in a child; its metrics plus peak_rss_mb (the
    child's own peak resident set), or {"error": ...} /
    {"timed_out": limit}."""
    env = {**os.environ, **THREAD_ENV}
    proc = subprocess.Popen([sys.executable, script, "--child", json.dumps(cfg)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    streams = {"out": [], "err": []}
    readers = [threading.Thread(target=lambda f=f, k=k: streams[k].append(f.read()))
               for f, k in ((proc.stdout, "out"), (proc.stderr, "err"))]
    for r in readers:
        r.start()
    timed_out = []

    def kill():
        timed_out.append(True)
        os.killpg(proc.pid, signal.SIGKILL)

    timer = threading.Timer(timeout, kill)
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)   # reaps the child: its own rusage
    timer.cancel()
    for r in readers:
        r.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    out, err = "".join(streams["out"]), "".join(streams["err"])
    result = dict(cfg)
    if timed_out:
        result["timed_out"] = timeout
        return result
    lines = [line[len(MARK):] for line in out.splitlines() if line.startswith(MARK)]
    if proc.returncode != 0 or not lines:
        result["error"] = (err.strip().splitlines() or ["no output"])[-1][:300]
        return result
    result.update(json.loads(lines[-1]))
    result.setdefault("peak_rss_mb", usage.ru_maxrss / 1024)   # where /proc is missing
    return result


def table(rows: list[dict], key: Sequence[str], metrics: Sequence[str]) -> str:
    """Rows grouped by `key`; ratios of metrics[0] against jax and torch."""
    head = ["system", *key, *metrics, "peak_rss_mb", "vs_jax", "vs_torch"]
    lines = []
    by_key: dict = {}
    for r in rows:
        by_key.setdefault(tuple(r.get(k) for k in key), {})[r["system"]] = r
    for r in rows:
        group = by_key[tuple(r.get(k) for k in key)]
        cells = [r["system"], *(str(r.get(k)) for k in key)]
        if "timed_out" in r or "error" in r:
            note = f"timed out ({r['timed_out']:.0f} s)" if "timed_out" in r else f"error: {r['error']}"
            lines.append(cells + [note] + [""] * (len(head) - len(cells) - 1))
            continue
        cells += [_fmt(r.get(m)) for m in metrics] + [_fmt(r.get("peak_rss_mb"))]
        for other in ("jax", "torch"):
            base = group.get(other, {}).get(metrics[0])
            mine = r.get(metrics[0])
            cells.append(f"{mine / base:.2f}x" if base and mine is not None else "")
        lines.append(cells)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines)]
    fmt = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([fmt(head), fmt(["-" * w for w in widths])] + [fmt(c) for c in lines])


def median_round(runs: list[dict], metric: str) -> dict:
    """The run with the median `metric` of a configuration's rounds (the lower
    middle one of an even count), with every round's value as `rounds`; a
    configuration that failed or timed out in any round is reported as that
    failure."""
    failed = [r for r in runs if "error" in r or "timed_out" in r or r.get(metric) is None]
    if failed:
        return dict(failed[0], rounds=[r.get(metric) for r in runs])
    ordered = sorted(runs, key=lambda r: r[metric])
    return dict(ordered[(len(ordered) - 1) // 2], rounds=[r[metric] for r in runs])


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
    return "" if v is None else str(v)


def main(name: str, configs: list[dict], measure: Callable[[dict], dict], *, key: Sequence[str],
         metrics: Sequence[str], timeout: float = 1800.0,
         after: Callable[[list[dict]], None] | None = None) -> list[dict]:
    """The benchmark's entry point (see the module docstring). `--child JSON`
    measures one configuration in this process; `--only SUBSTRING` keeps the
    configurations whose JSON contains it; `--timeout S` changes the limit."""
    ap = argparse.ArgumentParser(description=f"{name} benchmark")
    ap.add_argument("--child")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=timeout)
    ap.add_argument("--rounds", type=int, default=1, help="runs of every configuration, round-robin (median)")
    args, _ = ap.parse_known_args()
    if args.child:
        _child(measure, json.loads(args.child))
        return []
    if args.rounds < 1:
        ap.error(f"--rounds must be at least 1, not {args.rounds}")
    chosen = [c for c in configs if all(s in json.dumps(c) for s in args.only)]
    script = os.path.abspath(sys.argv[0])
    os.makedirs(RESULTS, exist_ok=True)
    runs: list[list[dict]] = [[] for _ in chosen]
    for _ in range(args.rounds):
        for j, cfg in enumerate(chosen):
            runs[j].append(run_config(script, cfg, args.timeout))
            print(json.dumps(runs[j][-1], default=_jsonable), flush=True)
    rows = [median_round(r, metrics[0]) if args.rounds > 1 else r[0] for r in runs]
    with open(os.path.join(RESULTS, f"{name}.jsonl"), "w") as log:
        for row in rows:
            log.write(json.dumps(row, default=_jsonable) + "\n")
    print()
    print(table(rows, key, metrics))
    if after is not None:
        after(rows)
    return rows


def plot(rows: list[dict], path: str, *, x: str, ys: Sequence[str], group: Sequence[str]) -> str | None:
    """A PNG with one panel per metric in `ys`, a line per `group` value
    (e.g. system and pattern), `x` on a log axis. None without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install -e .[bench]): no plot", file=sys.stderr)
        return None
    fig, axes = plt.subplots(1, len(ys), figsize=(6 * len(ys), 4.5))
    axes = [axes] if len(ys) == 1 else axes
    for ax, y in zip(axes, ys):
        lines: dict = {}
        for r in rows:
            if r.get(y) is not None:
                lines.setdefault(" ".join(str(r.get(g)) for g in group), []).append((r[x], r[y]))
        for label, pts in sorted(lines.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
