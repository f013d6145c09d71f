"""Shared pytest setup: hypothesis profiles.

`default` is derandomized: every run draws the same examples, so `make test`
(and CI) pass or fail the same way on every machine. `fuzz` draws fresh
examples; `make fuzz` selects it (HYPOTHESIS_PROFILE=fuzz) with a random
`--hypothesis-seed` that it prints, so a finding reruns with that seed.
"""
import os
import sys

from hypothesis import HealthCheck, settings

settings.register_profile("default", deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fuzz", deadline=None, suppress_health_check=[HealthCheck.too_slow])
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "default")
settings.load_profile(PROFILE)


def pytest_report_header(config):
    seed = config.getoption("hypothesis_seed", default=None)
    return f"hypothesis profile: {PROFILE}" + (f", seed {seed}" if seed is not None else "")


# A loop whose trace JAX refuses falls back to the Python loop at run time
# (tidal.runtime.scheduled.traced); in the tests that is a bug to see, not hide.
os.environ.setdefault("TIDAL_XLA_LOOPS", "strict")

# The tests check results, not the speed of XLA's machine code: kernels are
# compiled with LLVM's cheapest settings (set before jax starts; a fuzz
# program's compile-and-run takes 28% less, most of it XLA compilation).
# Benchmarks set their own flags (bench/harness.py).
FAST_XLA = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {FAST_XLA}".strip()

# Shared program texts (sdg_fixtures.py) import as a plain module.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _no_compilations_shared_between_tests():
    """Each test starts with an empty compile cache (tidal.frontend.compile_cache):
    a test that counts a program's XLA compilations or frees its executable
    must not get, or leave, one another test compiled. The cache's own
    behaviour is tested in test_compile_cache.py."""
    from tidal.frontend import compile_cache
    compile_cache.clear()
    yield
    compile_cache.clear()
