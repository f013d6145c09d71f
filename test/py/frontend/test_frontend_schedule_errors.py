"""Programs that trace but cannot be scheduled fail at compile() with the
operators, dependences and the user's lines, and say what to change."""
import inspect

import pytest

import tidal as td


def test_a_cycle_between_two_recurrences_names_the_user_lines():
    with td.Program() as p:
        (t, T), = p.dims("t")
        r = td.input("r", shape=(), domain=(t,))
        a = td.recurrent(shape=(), domain=(t,))
        b = td.recurrent(shape=(), domain=(t,))
        a[T - 1] = r[T - 1]
        a[t] = b[t + 1] * 0.5; line_a = inspect.currentframe().f_lineno  # noqa: E702
        b[0] = r[0]
        b[t + 1] = a[t] + r[t + 1]; line_b = inspect.currentframe().f_lineno  # noqa: E702
        p.output("a", a)
    # Each case alone is fine (the reference interpreter would find the cycle
    # only when it meets it); the scheduler sees it at compile time.
    with pytest.raises(ValueError) as info:
        p.compile()
    message = str(info.value)
    assert "its dependences form a cycle" in message
    assert f"{__file__}:{line_a}:" in message and f"{__file__}:{line_b}:" in message
    assert "reads %" in message and "[t + 1]" in message
    assert "hint: " in message
