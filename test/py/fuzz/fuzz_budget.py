"""The fuzz suite's budget: `--fuzz-n N` programs (default DEFAULT_N). A module of
its own, because `conftest` names several files of the test tree.

`make test` runs the default: the same programs on every run, few enough that the
whole suite stays under 10 minutes on 2 cores. Longer budgets and fresh draws are
`make fuzz`'s (FUZZ_N=2000: 500 programs per pass)."""

DEFAULT_N = 40
# A pass's own test runs a quarter of the budget, and at least this many programs.
PASS_MIN = 12


def fuzz_n(config) -> int:
    n = config.getoption("--fuzz-n", default=None)
    return DEFAULT_N if n is None else n


def pass_settings(config):
    """Hypothesis settings of a pass's random-program test: a quarter of the budget
    (at least PASS_MIN programs), no deadline."""
    from hypothesis import HealthCheck, settings

    return settings(max_examples=max(PASS_MIN, fuzz_n(config) // 4), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large])
