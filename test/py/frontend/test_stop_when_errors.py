"""td.stop_when refuses, at the user's line, a condition that is not one boolean
per point, one over no dim, a dim that does not exist, an inner dim (not
supported yet), a second stop on a dim, and a condition whose value at t needs
the bound T or a later step (it must be known before the run stops)."""
import numpy as np
import pytest

import tidal as td


def error_at(line_of, marker, fn, *words):
    with pytest.raises(td.TidalError) as info:
        fn()
    err = info.value
    assert (err.filename, err.lineno) == (__file__, line_of(marker)), str(err)
    for w in words:
        assert w in str(err), (w, str(err))
    assert "hint:" in str(err)
    return err


def test_condition_is_one_boolean_per_point(line_of):
    def prog():
        with td.Program():
            (t, T), = td.current_program().dims("t")
            x = td.input("x", shape=(4,), domain=(t,))
            td.stop_when(x > 0)   # @shape
    error_at(line_of, "shape", prog, "one boolean per point", "shape (4,)", ".all()")

    def floats():
        with td.Program():
            (t, T), = td.current_program().dims("t")
            x = td.input("x", shape=(), domain=(t,))
            td.stop_when(x)   # @float
    error_at(line_of, "float", floats, "dtype float32")

    def python_bool():
        with td.Program():
            td.current_program().dims("t")
            td.stop_when(True)   # @pybool
    error_at(line_of, "pybool", python_bool, "boolean tensor over a temporal dim")


def test_condition_over_no_dim_or_a_missing_one(line_of):
    def no_dim():
        with td.Program():
            (t, T), = td.current_program().dims("t")
            w = td.input("w", shape=(), domain=())
            td.stop_when(w > 0)   # @nodim
    error_at(line_of, "nodim", no_dim, "over no dim")

    def missing():
        with td.Program():
            (t, T), = td.current_program().dims("t")
            x = td.input("x", shape=(), domain=(t,))
            td.stop_when(x > 0, dim="u")   # @missing
    error_at(line_of, "missing", missing, "no such dim", "its dims: t")

    def other():
        with td.Program() as p:
            (i, I), (t, T) = p.dims("i", "t")
            x = td.input("x", shape=(), domain=(t,))
            td.stop_when(x > 0, dim=i)   # @other
    error_at(line_of, "other", other, "not over i")


def test_inner_dim_is_not_supported_yet(line_of):
    def prog():
        with td.Program() as p:
            (i, I), (t, T) = p.dims("i", "t")
            x = td.input("x", shape=(), domain=(i, t))
            td.stop_when(x > 0)   # @inner
    error_at(line_of, "inner", prog, "inner dim is not supported yet", "ragged")


def test_one_stop_per_dim(line_of):
    def prog():
        with td.Program() as p:
            (t, T), = p.dims("t")
            x = td.input("x", shape=(), domain=(t,))
            td.stop_when(x > 0)
            td.stop_when(x < -1)   # @twice
    error_at(line_of, "twice", prog, "already given", "td.stop_when(a | b)")


def _compile_error(line_of, marker, build, *words):
    p = build()
    return error_at(line_of, marker, lambda: p.compile(backend="numpy"), *words)


def test_condition_may_not_read_the_bound(line_of):
    def suffix():
        with td.Program() as p:
            (t, T), = p.dims("t")
            r = td.input("r", shape=(), domain=(t,))
            g = r[t:T].sum(0)   # @suffix
            td.stop_when(g > 1)
            p.output("g", g)
        return p
    _compile_error(line_of, "suffix", suffix, "depends on the bound T", "[t:T]")

    def last():
        with td.Program() as p:
            (t, T), = p.dims("t")
            r = td.input("r", shape=(), domain=(t,))
            td.stop_when(r > r[T - 1])   # @last
            p.output("r", r)
        return p
    _compile_error(line_of, "last", last, "depends on the bound T")

    def case():
        with td.Program() as p:
            (t, T), = p.dims("t")
            r = td.input("r", shape=(), domain=(t,))
            g = td.recurrent(shape=(), domain=(t,))
            g[T - 1] = r[T - 1]   # @case
            g[t] = r[t] + 0.9 * g[t + 1]
            td.stop_when(g > 1)
            p.output("g", g)
        return p
    _compile_error(line_of, "case", case, "depends on the bound T")


def test_condition_may_not_read_a_later_step(line_of):
    def ahead():
        with td.Program() as p:
            (t, T), = p.dims("t")
            r = td.input("r", shape=(), domain=(t,))
            s = td.recurrent(shape=(), domain=(t,))
            s[0] = r[0]
            s[t + 1] = s[t] + r[t + 1]     # reads r[t + 1] for the point t + 1: fine
            nxt = r[td.min(t + 1, 3)]   # @ahead
            td.stop_when((s + nxt) > 1)
            p.output("s", s)
        return p
    _compile_error(line_of, "ahead", ahead, "reads a later step")

    def constant_point():
        with td.Program() as p:
            (t, T), = p.dims("t")
            r = td.input("r", shape=(), domain=(t,))
            td.stop_when(r > r[5])   # @const
            p.output("r", r)
        return p
    _compile_error(line_of, "const", constant_point, "reads a later step", "[5]")


def test_accepted_conditions_compile():
    """Past reads, prefixes, windows, recurrences forward and constant point 0."""
    with td.Program() as p:
        (t, T), = p.dims("t")
        r = td.input("r", shape=(), domain=(t,))
        s = td.recurrent(shape=(), domain=(t,))
        s[0] = r[0]
        s[t + 1] = 0.5 * s[t] + r[t + 1]
        c = (r[0:t + 1].sum(0) + r[td.max(0, t - 2):t + 1].mean(0) + s + r[td.max(0, t - 1)] + r[0]) > 3
        td.stop_when(c)
        p.output("s", s)
    out = p.compile(backend="reference").run(bounds={T: 8}, inputs={"r": np.ones(8, np.float32)})
    assert len(out["s"]) < 8
