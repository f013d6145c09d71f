"""bench/harness.py: configurations in their own processes (peak RSS per
configuration), timeouts and errors reported, the ratio table."""
import json
import os
import sys
import textwrap

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import harness  # noqa: E402

SCRIPT = textwrap.dedent('''
    import os, sys, time
    sys.path.insert(0, {bench!r})
    from harness import main

    def measure(cfg):
        import numpy as np
        if cfg["n"] < 0:
            raise ValueError("negative size")
        if cfg["n"] > 1000:
            time.sleep(60)
        a = np.ones(cfg["n"] * 1_000_000 // 8)     # n MB, touched
        return {{"ms": float(cfg["n"]) * (2 if cfg["system"] == "tidal" else 1),
                "threads": os.environ.get("OMP_NUM_THREADS"), "xla_flags": os.environ.get("XLA_FLAGS"),
                "cores": len(os.sched_getaffinity(0))}}

    main("harness_test", [], measure, key=("n",), metrics=("ms",))   # the child side: --child JSON
''')


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    path = tmp_path_factory.mktemp("bench") / "bench_script.py"
    path.write_text(SCRIPT.format(bench=os.path.dirname(harness.__file__)))
    import numpy as np
    ballast = np.ones(300_000_000 // 8)   # a big parent (as pytest is) must not show in the children
    out = {}
    for cfg in ({"system": "tidal", "n": 8}, {"system": "jax", "n": 200}, {"system": "tidal", "n": -1}):
        out[(cfg["system"], cfg["n"])] = harness.run_config(str(path), cfg, timeout=60)
    out[("tidal", 5000)] = harness.run_config(str(path), {"system": "tidal", "n": 5000}, timeout=3)
    del ballast
    return out


def test_each_configuration_has_its_own_peak_rss_and_one_thread(rows):
    small, big = rows[("tidal", 8)], rows[("jax", 200)]
    assert small["ms"] == 16.0 and big["ms"] == 200.0
    assert small["threads"] == "1" and small["cores"] == 1     # pinned to one core
    # every word of XLA_FLAGS is a --flag (XLA ignores them all otherwise)
    assert small["xla_flags"].split() and all(w.startswith("--") for w in small["xla_flags"].split())
    assert big["peak_rss_mb"] - small["peak_rss_mb"] > 150    # the 200 MB array, in its own child
    assert small["peak_rss_mb"] < 250                          # not the parent's 300 MB ballast


def test_errors_and_timeouts_are_reported_not_dropped(rows):
    assert "negative size" in rows[("tidal", -1)]["error"]
    assert rows[("tidal", 5000)]["timed_out"] == 3


def test_table_ratios_against_jax_and_torch():
    rows = [{"system": "tidal", "n": 1, "ms": 6.0}, {"system": "jax", "n": 1, "ms": 3.0},
            {"system": "torch", "n": 1, "ms": 12.0}, {"system": "tidal", "n": 2, "timed_out": 9.0}]
    text = harness.table(rows, ("n",), ("ms",))
    tidal = next(line for line in text.splitlines() if line.startswith("tidal") and " 6 " in line)
    assert "2.00x" in tidal and "0.50x" in tidal
    assert "timed out (9 s)" in text
    json.dumps(rows)


def test_rounds_report_the_median_run_and_every_value():
    runs = [{"system": "tidal", "ms": 5.0, "k": "a"}, {"system": "tidal", "ms": 3.0, "k": "b"},
            {"system": "tidal", "ms": 9.0, "k": "c"}]
    row = harness.median_round(runs, "ms")
    assert row["k"] == "a" and row["ms"] == 5.0 and row["rounds"] == [5.0, 3.0, 9.0]
    assert harness.median_round(runs[:2], "ms")["ms"] == 3.0          # an even count: the lower middle
    failed = harness.median_round(runs + [{"system": "tidal", "timed_out": 9.0}], "ms")
    assert failed["timed_out"] == 9.0 and failed["rounds"] == [5.0, 3.0, 9.0, None]
