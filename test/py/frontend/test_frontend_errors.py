"""Every kind of user mistake is a td.TidalError (a ValueError) raised at the
user's line, saying what went wrong and what to change."""
import numpy as np
import pytest

import tidal as td


@pytest.fixture
def raises_at(line_of):
    """`with raises_at("marker", "words", ...):` -- a TidalError at the marked line."""
    class Ctx:
        def __init__(self, marker, *words):
            self.marker, self.words = marker, words

        def __enter__(self):
            self.cm = pytest.raises(td.TidalError)
            self.info = self.cm.__enter__()
            return self.info

        def __exit__(self, *exc):
            handled = self.cm.__exit__(*exc)
            err = self.info.value
            assert isinstance(err, ValueError)
            text = str(err)
            assert text.startswith(f"{__file__}:{line_of(self.marker)}: "), text
            assert (err.filename, err.lineno) == (__file__, line_of(self.marker))
            for w in self.words:
                assert w in text, (w, text)
            assert "hint:" in text
            return handled

    return Ctx


def test_error_is_a_value_error():
    assert issubclass(td.TidalError, ValueError)


def program_t():
    p = td.Program()
    p.__enter__()
    (t, T), = p.dims("t")
    x = td.input("x", shape=(4,), domain=(t,))
    return p, t, T, x


@pytest.fixture
def tx():
    p, t, T, x = program_t()
    yield p, t, T, x
    p.__exit__(None, None, None)


# -- shapes ---------------------------------------------------------------------
def test_shape_mismatch_in_broadcasting(tx, raises_at):
    p, t, T, x = tx
    y = td.input("y", shape=(3,), domain=(t,))
    with raises_at("bcast", "shape mismatch", "(4,)", "(3,)"):
        x + y  # @bcast


def test_shape_mismatch_with_symbolic_sizes(tx, raises_at):
    p, t, T, x = tx
    with raises_at("symb", "shape mismatch", "T - t", "t + 1"):
        x[t:T].sum(1) + x[0:t + 1].sum(1)  # @symb


def test_shape_mismatch_in_matmul(tx, raises_at):
    p, t, T, x = tx
    W = td.param("W", np.ones((3, 3), np.float32))
    with raises_at("mm", "matmul", "contracted"):
        x @ W  # @mm


def test_shape_mismatch_in_reshape_and_definitions(tx, raises_at):
    p, t, T, x = tx
    with raises_at("rs", "cannot reshape"):
        x.reshape(3, 2)  # @rs
    s = td.recurrent(shape=(4,), domain=(t,))
    with raises_at("def", "shape mismatch", "(3,)"):
        s[0] = td.zeros(3)  # @def


# -- dimensions -------------------------------------------------------------------
def test_a_negative_constant_temporal_index_is_named_at_the_read(tx, raises_at):
    # The read, not the op that consumes it or the output (where the scheduler and the
    # reference interpreter found it); negative indices do not count from the end.
    p, t, T, x = tx
    with raises_at("negidx", "temporal index -1", "before its first step", "T - 1"):
        y = x[-1]  # @negidx
    with raises_at("negidxslice", "temporal index -2", "before its first step"):
        y = x[-2:t + 1]  # @negidxslice
    y = x[T - 1] + x[0:t + 1].sum(0)    # the last step and a prefix from 0 are fine
    assert y.shape == (4,)


def test_unknown_dimension_in_an_index(tx, raises_at):
    p, t, T, x = tx
    i, I = td.Dim("i")
    with raises_at("unk", "unknown dimension i < I", "declared: t < T"):
        x[i]  # @unk


def test_unknown_dimension_in_a_domain_and_a_shape(raises_at):
    with td.Program() as p:
        (t, T), = p.dims("t")
        k, K = td.Dim("k")
        with raises_at("dom", "unknown dimension"):
            td.input("x", shape=(4,), domain=(k,))  # @dom
        with raises_at("shape", "unknown dimension"):
            td.zeros(K, 4)  # @shape
        with raises_at("stepshape", "not in its domain"):
            td.input("y", shape=(t + 1,), domain=())  # @stepshape


# -- dtypes -------------------------------------------------------------------------
def test_dtype_problems(tx, raises_at):
    p, t, T, x = tx
    with raises_at("uint", "uint8 is not supported"):
        td.input("u", shape=(4,), dtype="uint8")  # @uint
    with raises_at("and", "needs bool operands", "float32"):
        x & x  # @and
    with raises_at("where", "condition of where must be a bool"):
        td.where(x, x, 0.0)  # @where
    s = td.recurrent(shape=(), dtype="int32", domain=(t,))
    with raises_at("intdef", "cannot define a int32 tensor with the Python float"):
        s[0] = 0.5  # @intdef
    with raises_at("floatdef", "cannot define a int32 tensor with a float32 value"):
        s[0] = x[0].sum()  # @floatdef
    with raises_at("neg", "cannot negate a bool"):
        -(x > 0)  # @neg
    b = td.input("b", shape=(), dtype="int8", domain=(t,))
    with raises_at("fits", "does not fit in int8"):
        b + 1000  # @fits


# -- temporal indices --------------------------------------------------------------
def test_non_affine_temporal_index(tx, raises_at):
    p, t, T, x = tx
    with raises_at("sq", "not affine", "t * t"):
        x[t * t]  # @sq
    with raises_at("sel", "not affine"):
        x[td.select(t > 2, t, 0)]  # @sel
    with raises_at("prod", "not affine"):
        x[0:t * T]  # @prod


def test_invalid_temporal_slice_and_tensor_index(tx, raises_at):
    p, t, T, x = tx
    with raises_at("negslice", "not a valid slice", "t + 1:t"):
        x[t + 1:t]  # @negslice
    with raises_at("tens", "temporal indices must be symbolic"):
        x[x.sum().astype("int64")]  # @tens


def test_too_many_index_components(tx, raises_at):
    p, t, T, x = tx
    with raises_at("get", "too many indices", "1 temporal dims (t)", "1 spatial dims"):
        x[t, 0, 1]  # @get
    s = td.recurrent(shape=(4,), domain=(t,))
    with raises_at("set", "too many temporal components", "1 temporal dims"):
        s[0, 1] = td.zeros(4)  # @set


def test_spatial_index_that_may_be_out_of_range(tx, raises_at):
    p, t, T, x = tx
    with raises_at("tt", "`t` may be out of range for dim 0 of size 4", "temporal dims are indexed first"):
        x[t, t]  # @tt
    assert x[t, td.min(t, 3)].shape == ()


# -- recurrences ---------------------------------------------------------------------
def test_recurrence_reading_outside_its_domain_without_base_case(tx, raises_at):
    p, t, T, x = tx
    s = td.recurrent(shape=(4,), domain=(t,))
    with raises_at("nobase", "reads it at [t - 1]", "outside its domain", "t = 0", "base case"):
        s[t] = s[t - 1] + x  # @nobase


def test_recurrence_reading_the_future_without_final_case(tx, raises_at):
    p, t, T, x = tx
    v = td.recurrent(shape=(4,), domain=(t,))
    with raises_at("future", "reads it at [t + 1]", "outside its domain"):
        v[t] = x + 0.9 * v[t + 1]  # @future


def test_recurrence_reading_through_intermediate_ops(tx, raises_at):
    p, t, T, x = tx
    s = td.recurrent(shape=(4,), domain=(t,))
    prev = (s * 2).tanh()[t - 1]
    with raises_at("indirect", "reads it at [t - 1]"):
        s[t] = prev  # @indirect


def test_base_case_after_the_general_case_does_not_help(tx, raises_at):
    p, t, T, x = tx
    s = td.recurrent(shape=(4,), domain=(t,))
    with raises_at("late", "outside its domain"):
        s[t] = s[t - 1] * 2  # @late


def test_a_case_reading_the_point_it_defines(tx, raises_at):
    p, t, T, x = tx
    s = td.recurrent(shape=(4,), domain=(t,))
    with raises_at("self", "reads the very point it defines"):
        s[t] = s.tanh()  # @self


def test_reading_a_point_no_case_defines_is_reported_at_the_case(raises_at):
    with td.Program() as p:
        (t, T), = p.dims("t")
        s = td.recurrent(shape=(), domain=(t,))
        s[t + 1] = s[t] + 1  # @undef
        p.output("s", s)
    with raises_at("undef", "a point that no case defines"):
        p.mlir()


def test_recurrent_never_defined(raises_at):
    with td.Program() as p:
        (t, T), = p.dims("t")
        s = td.recurrent(shape=(), domain=(t,))  # @never
        p.output("s", s)
    with raises_at("never", "declared but never defined"):
        p.mlir()


def test_definition_index_forms(tx, raises_at):
    p, t, T, x = tx
    s = td.recurrent(shape=(4,), domain=(t,))
    with raises_at("twice", "must be `t + k`"):
        s[2 * t] = x  # @twice
    with raises_at("slice", "points, not slices"):
        s[0:3] = x  # @slice
    with raises_at("notrec", "only tensors created with td.recurrent"):
        x[0] = x[1]  # @notrec
    with raises_at("varies", "defines the single point t = 0", "varies with t"):
        s[0] = x  # @varies


def test_definition_value_domain_must_fit(raises_at):
    with td.Program() as p:
        (i, I), (t, T) = p.dims("i", "t")
        x = td.input("x", shape=(), domain=(i, t))
        s = td.recurrent(shape=(), domain=(t,))
        with raises_at("valdom", "varies with i", "domain (t)"):
            s[t] = x  # @valdom
        with raises_at("cond", "uses i", "not in the tensor's domain"):
            s[i > 0] = x[0]  # @cond


# -- programs ---------------------------------------------------------------------------
def test_tensor_from_another_program(raises_at):
    with td.Program("one") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), domain=(t,))
    with td.Program("two") as q:
        (t, T), = q.dims("t")
        y = td.input("y", shape=(4,), domain=(t,))
        with raises_at("mix", "two different Programs", "'one'", "'two'"):
            x + y  # @mix
        with raises_at("use", "tensor from another Program"):
            x.tanh()  # @use
        with raises_at("out", "another Program"):
            q.output("x", x)  # @out


def test_ops_outside_a_program(raises_at):
    with raises_at("noprog", "needs an active program"):
        td.input("x", shape=(4,))  # @noprog


def test_duplicate_names(tx, raises_at):
    p, t, T, x = tx
    with raises_at("dup", "'x' is already used"):
        td.input("x", shape=(4,))  # @dup
    p.output("o", x)
    with raises_at("dupout", "already used"):
        p.output("o", x)  # @dupout
    with raises_at("dupdim", "clashes"):
        p.dims("t")  # @dupdim


def test_output_condition_must_use_the_domain(raises_at):
    with td.Program() as p:
        (i, I), (t, T) = p.dims("i", "t")
        x = td.input("x", shape=(), domain=(t,))
        with raises_at("oc", "uses i"):
            p.output("x", x, when=i > 0)  # @oc


def test_conditional_view_is_not_a_value(tx, raises_at):
    p, t, T, x = tx
    with raises_at("masked", "conditional view"):
        x[t > 0] + 1  # @masked


def test_python_protocols_are_guarded(tx, raises_at):
    p, t, T, x = tx
    with raises_at("bool", "truth value"):
        if x > 0:  # @bool
            pass
    with raises_at("iter", "cannot be iterated"):
        list(x)  # @iter


# -- Python and NumPy protocols on steps, bounds and tensors (protocols.py) ---------------
def test_true_division_of_a_step(tx, raises_at):
    p, t, T, x = tx
    with raises_at("pr-div", "`t / 2` is a true division", "`t // 2`", "`t / 2.0`"):
        x[t / 2]  # @pr-div
    with raises_at("pr-rdiv", "`1 / (t + 1)`", "`1.0 / (t + 1)`"):
        1 / (t + 1)  # @pr-rdiv
    with raises_at("pr-divT", "`t / T`", "`1.0 * t / T`"):
        t / T  # @pr-divT
    assert x[t // 2].attrs["index"][0].same(t // 2)


def test_floor_division_and_powers_of_steps(tx, raises_at):
    p, t, T, x = tx
    with raises_at("pr-fdiv", "`t // T`: the divisor `T` is not a constant", "`td.symbol(t) // T`"):
        x[t // T]  # @pr-fdiv
    with raises_at("pr-mod", "`t % T`", "`td.symbol(t) % T`"):
        x[t % T]  # @pr-mod
    with raises_at("pr-zero", "positive", "`t // 2`"):
        x[t // 0]  # @pr-zero
    with raises_at("pr-pow", "powers of `t` are not supported", "`t ** 2.0`"):
        x[t ** 2]  # @pr-pow
    with raises_at("pr-rpow", "powers with exponent `t`", "`2.0 ** t`"):
        2 ** t  # @pr-rpow


def test_python_if_on_a_symbolic_condition(tx, raises_at):
    p, t, T, x = tx
    with raises_at("pr-if", "truth value of the symbolic condition `t > 0`", "td.where(t > 0, a, b)",
                   "s[t > 0] = a; s[t] = b"):
        if t > 0:  # @pr-if
            pass
    with raises_at("pr-eq", "`t == 1`", "td.where(t == 1, a, b)"):
        y = x[0] if t == 1 else x[1]  # @pr-eq
    with raises_at("pr-chain", "`t > 0`", "chained comparisons"):
        0 < t < T - 1  # @pr-chain
    with raises_at("pr-and", "&, | and ~"):
        s = td.recurrent(shape=(4,), domain=(t,))
        s[(t > 0) and (t < 3)] = x  # @pr-and
    with raises_at("pr-intbool", "the integer expression `t + 1` has no truth value", "`(t + 1) > 0`"):
        bool(t + 1)  # @pr-intbool
    # decidable conditions still have a truth value
    assert bool(t < T) and not bool(t >= T) and (x[min(t + 1, T)].attrs["index"][0].same(t + 1))


def test_python_max_and_min_of_steps_name_td_max(tx, raises_at):
    p, t, T, x = tx
    with raises_at("pr-max", "Python's max() compares its arguments", "`td.max(t, 1)`"):
        x[max(t, 1)]  # @pr-max
    with raises_at("pr-min", "`td.min(t + 2, T - 1)`"):
        x[min(t + 2, T - 1)]  # @pr-min
    with raises_at("pr-npmax", "`td.max(t - 3, 0)`"):
        np.maximum(t - 3, 0)  # @pr-npmax
    assert str(x[td.max(t, 1)].attrs["index"][0]) == "max(1, t)"


def test_python_max_of_tensors_names_td_maximum(tx, raises_at):
    p, t, T, x = tx
    with raises_at("pr-tmax", "Python's max() compares", "`td.maximum(x, 0.0)`"):
        max(x, 0.0)  # @pr-tmax
    with raises_at("pr-tand", "truth value of a recurrent tensor", "& | ~"):
        (x > 0) and (x < 1)  # @pr-tand


def test_steps_and_bounds_are_not_python_ints(tx, raises_at):
    p, t, T, x = tx
    with raises_at("pr-range", "`T` is the bound of the temporal dimension t < T", "bounds={T: 10}",
                   "x[0:t + 1].sum(0)", "s[t + 1] = f(s[t], x[t + 1])"):
        for _ in range(T):  # @pr-range
            pass
    with raises_at("pr-ranget", "`t` is the step of the temporal dimension t < T", "x[0:t + 1]"):
        [x[i] for i in range(t)]  # @pr-ranget
    with raises_at("pr-int", "`T` is the bound", "td.symbol(t)"):
        int(T)  # @pr-int
    with raises_at("pr-floatT", "`t - 1` is a symbolic expression, not a Python number"):
        float(t - 1)  # @pr-floatT
    with raises_at("pr-list", "`t` is the step"):
        [1, 2, 3][t]  # @pr-list
    with raises_at("pr-npzeros", "np.zeros cannot compute with the symbolic T", "`td.zeros((T, 4))`"):
        np.zeros((T, 4))  # @pr-npzeros
    with raises_at("pr-nparange", "np.arange cannot compute with the symbolic t", "`td.arange(0, t + 1)`"):
        np.arange(0, t + 1)  # @pr-nparange


def test_library_errors_keep_their_classes(tx):
    p, t, T, x = tx
    from tidal.symbolic import NonConstantDivisorError, SymbolicTypeError

    with pytest.raises(SymbolicTypeError) as info:
        if t > 0:
            pass
    assert isinstance(info.value, td.TidalError) and isinstance(info.value, TypeError)
    with pytest.raises(TypeError):
        range(T)
    with pytest.raises(NonConstantDivisorError) as info:
        t // T
    assert isinstance(info.value, td.TidalError)


def test_tidal_internal_symbolic_errors_stay_internal(tx):
    """Only user code gets TidalErrors: Tidal's own code (a module named tidal.*)
    sees the library's error, which it may catch and handle."""
    from tidal.symbolic import SymbolicTypeError

    p, t, T, x = tx
    inside = {"__name__": "tidal.fake_internal_module", "t": t}
    with pytest.raises(SymbolicTypeError) as info:
        exec("bool(t > 0)", inside)
    assert not isinstance(info.value, td.TidalError)
    assert "truth value" in str(info.value)


def test_float_steps_as_temporal_indices(tx, raises_at):
    p, t, T, x = tx
    with raises_at("pr-floatidx", "float32 tensor computed from steps or bounds", "t - 1 rather than t - 1.0"):
        x[t - 1.0]  # @pr-floatidx
    with raises_at("pr-scaled", "computed from steps or bounds", "T * 3 // 2 rather than T * 1.5"):
        x[T * 1.5]  # @pr-scaled


def test_numpy_functions_on_tensors_name_tidal_ops(tx, raises_at):
    p, t, T, x = tx
    with raises_at("pr-exp", "np.exp cannot compute on a recurrent tensor", "`td.exp(x)`"):
        np.exp(x)  # @pr-exp
    with raises_at("pr-sqrt", "np.sqrt", "`td.sqrt(x * 2)`"):
        np.sqrt(x * 2)  # @pr-sqrt
    with raises_at("pr-sum", "np.sum cannot compute", "`td.sum(x, dim=0)`"):
        np.sum(x, axis=0)  # @pr-sum
    with raises_at("pr-cat", "np.concatenate", "`td.cat([x, x])`"):
        np.concatenate([x, x])  # @pr-cat
    with raises_at("pr-reduce", "np.add.reduce", "td.sum(...)"):
        np.add.reduce(x)  # @pr-reduce
    with raises_at("pr-none", "np.arctan2", "td.udf("):
        np.arctan2(x, x)  # @pr-none
    with raises_at("pr-inplace", "cannot write a recurrent tensor into a NumPy array", "`y = arr + x`"):
        a = np.ones(4, np.float32)
        a += x  # @pr-inplace


def test_numpy_operator_ufuncs_act_as_the_operators(tx):
    p, t, T, x = tx
    a = np.ones(4, np.float32)
    for y, kind in [(np.add(x, 1), "add"), (a - x, "sub"), (np.multiply(a, x), "mul"),
                    (np.float32(2) / x, "div"), (a < x, "lt"), (np.equal(x, a), "eq")]:
        assert y.op == "binary" and y.attrs["kind"] == kind and y.domain == (t,)
    assert (a - x).inputs[0].op == "constant" and (a @ x).op == "matmul"


def test_tensors_have_no_value_while_tracing(tx, raises_at):
    p, t, T, x = tx
    with raises_at("pr-asarray", "NumPy cannot turn a recurrent tensor into an array",
                   "p.compile().run(...)['y']"):
        np.asarray(x)  # @pr-asarray
    with raises_at("pr-floatx", "float() of a recurrent tensor", "p.output('y', y)"):
        float(x.sum())  # @pr-floatx
    with raises_at("pr-numpy", "x.numpy()", "no value while tracing"):
        x.numpy()  # @pr-numpy
    with raises_at("pr-item", "x.item()"):
        x.sum().item()  # @pr-item


def test_other_index_mistakes_are_reported_at_the_line(tx, raises_at):
    p, t, T, x = tx
    with raises_at("pr-range5", "spatial index 5 is out of range for a dim of size 4", "[-4, 3]"):
        x[t, 5]  # @pr-range5
    with raises_at("pr-str", "'a' is not an integer or symbolic expression"):
        x["a"]  # @pr-str
    with raises_at("pr-len", "len() of a recurrent tensor", "x.shape[0]"):
        len(x)  # @pr-len
    assert [str(d) for d in x[None].shape] == ["1", "4"] and x[..., 0].shape == ()
    assert len({t: 1, T: 2, x: 3}) == 3
