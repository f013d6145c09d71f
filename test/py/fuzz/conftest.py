"""The fuzz suite's option: `--fuzz-n N` random programs (default: DEFAULT_N).

    python -m pytest test/py/fuzz                      # the CI budget
    python -m pytest test/py/fuzz --fuzz-n 5000        # a long run
    python -m pytest test/py/fuzz --fuzz-n 500 --hypothesis-seed 7   # another stream

The CI hypothesis profile (selected when CI is set, see test/py/conftest.py)
is derandomized, so a CI run is reproducible; elsewhere every run draws fresh
programs. TIDAL_FUZZ_EXCLUDE=feat,feat switches generator features off (see
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
