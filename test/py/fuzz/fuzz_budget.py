"""The fuzz suite's budget: `--fuzz-n N` programs (default DEFAULT_N). A module of
its own, because `conftest` names several files of the test tree."""

DEFAULT_N = 60


def fuzz_n(config) -> int:
    n = config.getoption("--fuzz-n", default=None)
    return DEFAULT_N if n is None else n


def pass_settings(config):
    """Hypothesis settings of a pass's random-program test: a quarter of the budget
    (at least 20 programs), no deadline."""
    from hypothesis import HealthCheck, settings

    return settings(max_examples=max(20, fuzz_n(config) // 4), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large])
