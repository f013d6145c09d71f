"""The fuzz suite's budget: `--fuzz-n N` programs (default DEFAULT_N). A module of
its own, because `conftest` names several files of the test tree."""

DEFAULT_N = 60


def fuzz_n(config) -> int:
    n = config.getoption("--fuzz-n", default=None)
    return DEFAULT_N if n is None else n
