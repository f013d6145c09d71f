"""The fuzz suite's option: `--fuzz-n N` random programs (default: DEFAULT_N).

    python -m pytest test/py/fuzz                      # the suite's budget, the same programs every run
    make fuzz FUZZ_N=2000                              # fresh programs, a printed random seed
    HYPOTHESIS_PROFILE=fuzz python -m pytest test/py/fuzz --fuzz-n 500 --hypothesis-seed 7

The default hypothesis profile (test/py/conftest.py) is derandomized, so every
run of the suite draws the same programs; the `fuzz` profile draws fresh ones. TIDAL_FUZZ_EXCLUDE=feat,feat switches generator features off (see
program_gen.py).
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from fuzz_budget import DEFAULT_N  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--fuzz-n", type=int, default=None,
                     help=f"number of random programs the fuzz suite runs (default {DEFAULT_N})")
