"""Random programs on every backend, against an independent float64 evaluation.

Each example is a program drawn by `program_gen.programs()`, run (in this one
process, one program after another, all named "fuzz" with the same input
and output names) on the reference interpreter, the scheduled NumPy runtime
and the scheduled JAX runtime at several bounds including the smallest valid
ones, and checked by `fuzz_check.check` against `program_eval` and across
backends. `--fuzz-n N` sets the number of programs (conftest.py).
"""
import collections
import os
import time

from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from tidal import config

from fuzz_budget import fuzz_n
from fuzz_check import Rejected, check
from program_gen import features, programs


@st.composite
def bounds_for(draw, desc):
    """The smallest valid bounds, one more, and a larger draw (I <= lo + 2, T <= lo + 6)."""
    lo = desc.min_bound
    big = {d: draw(st.integers(lo[d] + 1, lo[d] + (2 if d == "i" else 6))) for d in desc.dims}
    out = []
    for b in ({d: lo[d] for d in desc.dims}, {d: lo[d] + 1 for d in desc.dims}, big):
        bb = {d.upper(): v for d, v in b.items()}
        if bb not in out:
            out.append(bb)
    return out


def test_random_programs(request):
    stats = collections.Counter()

    @settings(max_examples=fuzz_n(request.config), deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                     HealthCheck.data_too_large])
    @given(data=st.data())
    def run(data):
        desc = data.draw(programs(), label="program")
        bounds = data.draw(bounds_for(desc), label="bounds")
        seed = data.draw(st.integers(0, 2 ** 16), label="input seed")
        note(desc.source())
        stats.update(features(desc))
        log, t0 = [], time.time()
        status = "ok"
        fuzz_log = config.fuzz_log.value
        if fuzz_log:  # what is running now (to see a hang)
            with open(fuzz_log + ".current.py", "w") as f:
                f.write(f"# bounds {bounds}, seed {seed}\n" + desc.repro())
        try:
            check(desc, bounds, seed, log=log)
        except Rejected:
            stats["(rejected)"] += 1
            status = "rejected"
            assume(False)
        except AssertionError as e:
            status = "FAIL " + str(e).splitlines()[0][:150]
            if fuzz_log:   # the first failure in full, before shrinking
                path = fuzz_log + ".fail.md"
                if not os.path.exists(path):
                    with open(path, "w") as f:
                        f.write(f"# bounds {bounds}, seed {seed}\n```\n{desc.repro()}```\n```\n{e}\n```\n")
            raise
        finally:
            if fuzz_log:  # one line per example, for long runs
                with open(fuzz_log, "a") as f:
                    f.write(f"{time.time() - t0:6.2f}s {len(desc.nodes):3d} nodes {bounds} {status}\n")
                if time.time() - t0 > 30:
                    with open(fuzz_log + ".slow.md", "a") as f:
                        f.write("\n".join([f"\n## {time.time() - t0:.1f}s", "```", desc.repro(), "```"]
                                          + [x for x in log if x.startswith("time")]) + "\n")
        stats["(programs)"] += 1
        stats["(bounds skipped: fragile)"] += sum(x.startswith("fragile") for x in log)
        stats["(gradients checked)"] += sum(x == "gradient checked" for x in log)
        stats["(gradients skipped: kinks)"] += sum(x.startswith("gradient not") and "tie" in x for x in log)
        stats["(gradients skipped: ill-conditioned)"] += sum(x.startswith("gradient not") and "ill-conditioned" in x
                                                             for x in log)
        stats["(bounds with ill-conditioned outputs)"] += sum(x.startswith("outputs not compared") for x in log)

    try:
        run()
    except AssertionError as e:  # the shrunk failure: keep it (TIDAL_FUZZ_FINDINGS=file.md)
        if config.fuzz_findings.value:
            with open(config.fuzz_findings.value, "a") as f:
                f.write(f"\n## {type(e).__name__}\n\n```\n{e}\n```\n")
        raise
    print("\nfuzz:", dict(sorted(stats.items())))
