"""Model-shaped programs traced to rt: an RNN, a backward recurrence,
conditional definitions, several dimensions, causal and windowed attention,
discounted returns and a UDF. Each asserts the emitted ops, domains, index
expressions and symbolic result types, that the module verifies, and that the
locations point here."""
import numpy as np

import tidal as td

F4 = "!tidal.tensor<[4], f32>"
F = "!tidal.tensor<[], f32>"


def assert_located_here(p, locs, line_of, markers):
    """Every op line of the module has a location in this file at one of the marked lines."""
    lines = {line_of(m) for m in markers}
    found = [(text, loc) for text, loc in locs(p.mlir()) if "rt." in text and "rt.program" not in text]
    assert found
    for text, (file, line, _) in found:
        assert file == __file__ and line in lines, (text, line)


def test_rnn(filecheck, parse, locs, line_of):
    with td.Program("rnn") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(3,), domain=(t,))  # @rnn-x
        W = td.param("W", np.arange(9, dtype=np.float32).reshape(3, 3) / 10)  # @rnn-W
        h = td.recurrent(shape=(3,), domain=(t,))  # @rnn-h
        h[0] = td.tanh(x[0] @ W)  # @rnn-base
        h[t + 1] = td.tanh(x[t + 1] @ W + h[t])  # @rnn-step
        p.output("h", h)  # @rnn-out
    text = p.mlir(locations=False)
    parse(p.mlir())
    T3, M = "!tidal.tensor<[3], f32>", "!tidal.tensor<[3, 3], f32>"
    filecheck(text, f"""
    CHECK: rt.program @rnn dims [t < T]
    CHECK-NEXT: [[X:%[0-9]+]] = rt.input "x" domain [t] : {T3}
    CHECK-NEXT: [[W:%[0-9]+]] = rt.param "W" domain [] : {M}
    CHECK-NEXT: [[H:%[0-9]+]] = rt.recurrent domain [t] : {T3}
    CHECK-NEXT: [[X0:%[0-9]+]] = rt.index [[X]][0] domain [] : ({T3}) -> {T3}
    CHECK-NEXT: [[A:%[0-9]+]] = rt.matmul [[X0]], [[W]] domain [] : ({T3}, {M}) -> {T3}
    CHECK-NEXT: [[B:%[0-9]+]] = rt.unary tanh [[A]] domain [] : ({T3}) -> {T3}
    CHECK-NEXT: rt.define [[H]][0] = [[B]] : {T3}, {T3}
    CHECK-NEXT: [[XN:%[0-9]+]] = rt.index [[X]][t + 1] domain [t] : ({T3}) -> {T3}
    CHECK-NEXT: [[C:%[0-9]+]] = rt.matmul [[XN]], [[W]] domain [t] : ({T3}, {M}) -> {T3}
    CHECK-NEXT: [[D:%[0-9]+]] = rt.binary add [[C]], [[H]] domain [t] : ({T3}, {T3}) -> {T3}
    CHECK-NEXT: [[E:%[0-9]+]] = rt.unary tanh [[D]] domain [t] : ({T3}) -> {T3}
    CHECK-NEXT: rt.define [[H]][t + 1] = [[E]] : {T3}, {T3}
    CHECK-NEXT: rt.output "h" [[H]] : {T3}
    """)
    module = parse(p.mlir())
    param = [op for op in module.body.operations[0].regions[0].blocks[0].operations if op.operation.name == "rt.param"][0]
    assert "value" not in param.attributes   # weights are bound at run time, not held by the IR
    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    h = np.tanh(x[0] @ W.attrs["value"])
    expected = [h]
    for k in range(1, 4):
        h = np.tanh(x[k] @ W.attrs["value"] + h)
        expected.append(h)
    np.testing.assert_allclose(p.compile(backend="reference").run(bounds={"T": 4}, inputs={"x": x})["h"],
                               np.stack(expected), rtol=1e-5)
    assert_located_here(p, locs, line_of, ["rnn-x", "rnn-W", "rnn-h", "rnn-base", "rnn-step", "rnn-out"])


def test_backward_recurrence(filecheck, parse, locs, line_of):
    with td.Program("returns") as p:
        (t, T), = p.dims("t")
        r = td.input("r", shape=(), domain=(t,))  # @br-r
        v = td.recurrent(shape=(), domain=(t,))  # @br-v
        v[T - 1] = r[T - 1]  # @br-last
        v[t] = r[t] + 0.9 * v[t + 1]  # @br-step
        p.output("v", v)  # @br-out
    parse(p.mlir())
    filecheck(p.mlir(locations=False), f"""
    CHECK: [[R:%[0-9]+]] = rt.input "r" domain [t] : {F}
    CHECK-NEXT: [[V:%[0-9]+]] = rt.recurrent domain [t] : {F}
    CHECK-NEXT: [[RL:%[0-9]+]] = rt.index [[R]][T - 1] domain [] : ({F}) -> {F}
    CHECK-NEXT: rt.define [[V]][T - 1] = [[RL]] : {F}, {F}
    CHECK-NEXT: [[VN:%[0-9]+]] = rt.index [[V]][t + 1] domain [t] : ({F}) -> {F}
    CHECK-NEXT: [[G:%[0-9]+]] = rt.constant dense<0.899999976> : tensor<f32> domain [] : {F}
    CHECK-NEXT: [[M:%[0-9]+]] = rt.binary mul [[G]], [[VN]] domain [t] : ({F}, {F}) -> {F}
    CHECK-NEXT: [[A:%[0-9]+]] = rt.binary add [[R]], [[M]] domain [t] : ({F}, {F}) -> {F}
    CHECK-NEXT: rt.define [[V]][t] = [[A]] : {F}, {F}
    CHECK-NEXT: rt.output "v" [[V]] : {F}
    """)
    assert_located_here(p, locs, line_of, ["br-r", "br-v", "br-last", "br-step", "br-out"])


def test_conditional_definitions_and_outputs(filecheck, parse, locs, line_of):
    with td.Program("cond") as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(4,), domain=(t,))  # @c-x
        y = td.recurrent(shape=(4,), domain=(t,))  # @c-y
        y[t % 5 == 0] = x * 2.0  # @c-every5
        y[t + 1, t > 2] = y[t] + x[t + 1]  # @c-late
        y[t] = x  # @c-rest
        p.output("y", y, when=(t > 0) & (t < T - 1))  # @c-out
        p.output("x5", x[t % 5 == 0])  # @c-out5
    parse(p.mlir())
    filecheck(p.mlir(locations=False), f"""
    CHECK: [[X:%[0-9]+]] = rt.input "x" domain [t] : {F4}
    CHECK-NEXT: [[Y:%[0-9]+]] = rt.recurrent domain [t] : {F4}
    CHECK-NEXT: [[TWO:%[0-9]+]] = rt.constant dense<2.000000e+00>
    CHECK-NEXT: [[X2:%[0-9]+]] = rt.binary mul [[X]], [[TWO]] domain [t]
    CHECK-NEXT: rt.define [[Y]][t] if <t mod 5 eq 0> = [[X2]] : {F4}, {F4}
    CHECK-NEXT: [[XN:%[0-9]+]] = rt.index [[X]][t + 1] domain [t]
    CHECK-NEXT: [[S:%[0-9]+]] = rt.binary add [[Y]], [[XN]] domain [t]
    CHECK-NEXT: rt.define [[Y]][t + 1] if <t gt 2> = [[S]] : {F4}, {F4}
    CHECK-NEXT: rt.define [[Y]][t] = [[X]] : {F4}, {F4}
    CHECK-NEXT: rt.output "y" [[Y]] if <t gt 0 and t lt T - 1> : {F4}
    CHECK-NEXT: rt.output "x5" [[X]] if <t mod 5 eq 0> : {F4}
    """)
    assert [str(c.cond) for c in y.cases] == ["t % 5 == 0", "t > 2", "None"]
    assert_located_here(p, locs, line_of, ["c-x", "c-y", "c-every5", "c-late", "c-rest", "c-out", "c-out5"])


def test_several_dimensions(filecheck, parse, locs, line_of):
    with td.Program("multi") as p:
        (b, B), (i, I), (t, T) = p.dims("b", "i", "t")
        x = td.input("x", shape=(2,), domain=(b, i, t))  # @m-x
        y = x[b, i, t - 1] + x[:, :, t - 1]  # @m-y
        z = x[0] * x[b, 0]  # @m-z
        lr = 1e-3 * 0.99 ** td.symbol(i)  # @m-lr
        k = td.input("k", shape=(3, 5), domain=(b, t))  # @m-k
        kw = k[:, 0:t + 1, :, 2]  # @m-kw
        o = td.recurrent(shape=(2,), domain=(b, i, t))  # @m-o
        o[b, i, 0] = x[b, i, 0]  # @m-o0
        o[b, i, t + 1] = o[b, i, t] + lr.astype("float32")  # @m-o1
        p.output("y", y); p.output("z", z); p.output("kw", kw); p.output("o", o)  # @m-out
    assert y.domain == (b, i, t) and z.domain == (b, i, t) and lr.domain == (i,)
    assert kw.domain == (b, t) and [str(d) for d in kw.shape] == ["t + 1", "5"]
    parse(p.mlir())
    filecheck(p.mlir(locations=False), """
    CHECK: rt.program @multi dims [b < B, i < I, t < T]
    CHECK-NEXT: [[X:%[0-9]+]] = rt.input "x" domain [b, i, t] : !tidal.tensor<[2], f32>
    CHECK-NEXT: [[A:%[0-9]+]] = rt.index [[X]][b, i, t - 1] domain [b, i, t]
    CHECK-NEXT: [[B:%[0-9]+]] = rt.index [[X]][b, i, t - 1] domain [b, i, t]
    CHECK-NEXT: rt.binary add [[A]], [[B]] domain [b, i, t]
    CHECK-NEXT: [[Z0:%[0-9]+]] = rt.index [[X]][0, i, t] domain [i, t]
    CHECK-NEXT: [[Z1:%[0-9]+]] = rt.index [[X]][b, 0, t] domain [b, t]
    CHECK-NEXT: rt.binary mul [[Z0]], [[Z1]] domain [b, i, t]
    CHECK-NEXT: [[IV:%[0-9]+]] = rt.symbol_value <i> domain [i] : !tidal.tensor<[], i64>
    CHECK-NEXT: rt.constant dense<9.900000e-01> : tensor<f32>
    CHECK-NEXT: [[IF:%[0-9]+]] = rt.cast [[IV]] domain [i] : (!tidal.tensor<[], i64>) -> !tidal.tensor<[], f32>
    CHECK-NEXT: [[P:%[0-9]+]] = rt.binary pow {{%[0-9]+}}, [[IF]] domain [i]
    CHECK-NEXT: rt.constant dense<1.000000e-03> : tensor<f32>
    CHECK-NEXT: [[LR:%[0-9]+]] = rt.binary mul {{%[0-9]+}}, [[P]] domain [i] : (!tidal.tensor<[], f32>, !tidal.tensor<[], f32>) -> !tidal.tensor<[], f32>
    CHECK-NEXT: [[K:%[0-9]+]] = rt.input "k" domain [b, t] : !tidal.tensor<[3, 5], f32>
    CHECK-NEXT: [[KS:%[0-9]+]] = rt.index [[K]][b, 0:t + 1] domain [b, t] : (!tidal.tensor<[3, 5], f32>) -> !tidal.tensor<[t + 1, 3, 5], f32>
    CHECK-NEXT: rt.take 1 at <2> [[KS]] domain [b, t] : (!tidal.tensor<[t + 1, 3, 5], f32>) -> !tidal.tensor<[t + 1, 5], f32>
    CHECK-NEXT: [[O:%[0-9]+]] = rt.recurrent domain [b, i, t] : !tidal.tensor<[2], f32>
    CHECK-NEXT: [[X0:%[0-9]+]] = rt.index [[X]][b, i, 0] domain [b, i]
    CHECK-NEXT: rt.define [[O]][b, i, 0] = [[X0]]
    CHECK-NEXT: [[NXT:%[0-9]+]] = rt.binary add [[O]], [[LR]] domain [b, i, t]
    CHECK-NEXT: rt.define [[O]][b, i, t + 1] = [[NXT]]
    """)
    assert_located_here(p, locs, line_of, ["m-x", "m-y", "m-z", "m-lr", "m-k", "m-kw", "m-o", "m-o0",
                                           "m-o1", "m-out"])


def test_causal_and_windowed_attention_scores(filecheck, parse, locs, line_of):
    with td.Program("attn") as p:
        (t, T), = p.dims("t")
        q = td.input("q", shape=(4,), domain=(t,))  # @a-q
        k = td.input("k", shape=(4,), domain=(t,))  # @a-k
        causal = (q[t] @ k[0:t + 1].T).softmax(0)  # @a-causal
        window = td.softmax(q @ k[td.max(0, t - 2):t + 1].T, dim=0)  # @a-window
        p.output("causal", causal); p.output("window", window)  # @a-out
    assert [str(d) for d in causal.shape] == ["t + 1"] and causal.domain == (t,)
    assert [str(d) for d in window.shape] == ["min(t, 2) + 1"]
    parse(p.mlir())
    C, W = "!tidal.tensor<[t + 1], f32>", "!tidal.tensor<[min(t, 2) + 1], f32>"
    filecheck(p.mlir(locations=False), f"""
    CHECK: [[Q:%[0-9]+]] = rt.input "q" domain [t] : {F4}
    CHECK-NEXT: [[K:%[0-9]+]] = rt.input "k" domain [t] : {F4}
    CHECK-NEXT: [[KP:%[0-9]+]] = rt.index [[K]][0:t + 1] domain [t] : ({F4}) -> !tidal.tensor<[t + 1, 4], f32>
    CHECK-NEXT: [[KT:%[0-9]+]] = rt.permute [1, 0] [[KP]] domain [t] : (!tidal.tensor<[t + 1, 4], f32>) -> !tidal.tensor<[4, t + 1], f32>
    CHECK-NEXT: [[S:%[0-9]+]] = rt.matmul [[Q]], [[KT]] domain [t] : ({F4}, !tidal.tensor<[4, t + 1], f32>) -> {C}
    CHECK-NEXT: [[MX:%[0-9]+]] = rt.reduce max [0] keepdim [[S]] domain [t] : ({C}) -> !tidal.tensor<[1], f32>
    CHECK-NEXT: [[D:%[0-9]+]] = rt.binary sub [[S]], [[MX]] domain [t] : ({C}, !tidal.tensor<[1], f32>) -> {C}
    CHECK-NEXT: [[E:%[0-9]+]] = rt.unary exp [[D]] domain [t] : ({C}) -> {C}
    CHECK-NEXT: [[Z:%[0-9]+]] = rt.reduce sum [0] keepdim [[E]] domain [t] : ({C}) -> !tidal.tensor<[1], f32>
    CHECK-NEXT: [[CA:%[0-9]+]] = rt.binary div [[E]], [[Z]] domain [t] : ({C}, !tidal.tensor<[1], f32>) -> {C}
    CHECK-NEXT: [[KW:%[0-9]+]] = rt.index [[K]][max(0, t - 2):t + 1] domain [t] : ({F4}) -> !tidal.tensor<[min(t, 2) + 1, 4], f32>
    CHECK-NEXT: rt.permute [1, 0] [[KW]] domain [t] : (!tidal.tensor<[min(t, 2) + 1, 4], f32>) -> !tidal.tensor<[4, min(t, 2) + 1], f32>
    CHECK-NEXT: rt.matmul [[Q]], {{{{%[0-9]+}}}} domain [t] : ({F4}, !tidal.tensor<[4, min(t, 2) + 1], f32>) -> {W}
    CHECK: [[WI:%[0-9]+]] = rt.binary div {{{{.*}}}} -> {W}
    CHECK-NEXT: rt.output "causal" [[CA]] : {C}
    CHECK-NEXT: rt.output "window" [[WI]] : {W}
    """)
    assert_located_here(p, locs, line_of, ["a-q", "a-k", "a-causal", "a-window", "a-out"])


def test_discounted_returns(filecheck, parse, locs, line_of):
    with td.Program("disc") as p:
        (t, T), = p.dims("t")
        r = td.input("r", shape=(), domain=(t,))  # @d-r
        g = r[t:T].discounted_sum(0.9)  # @d-full
        n = r[t:td.min(t + 3, T)].discounted_sum(0.9)  # @d-nstep
        p.output("g", g); p.output("n", n)  # @d-out
    assert g.shape == () and g.domain == (t,)
    parse(p.mlir())
    S, N = "!tidal.tensor<[T - t], f32>", "!tidal.tensor<[min(T - t, 3)], f32>"
    filecheck(p.mlir(locations=False), f"""
    CHECK: [[R:%[0-9]+]] = rt.input "r" domain [t] : {F}
    CHECK-NEXT: [[SUF:%[0-9]+]] = rt.index [[R]][t:T] domain [t] : ({F}) -> {S}
    CHECK-NEXT: [[K:%[0-9]+]] = rt.iota 0 domain [t] : !tidal.tensor<[T - t], i64>
    CHECK-NEXT: [[KF:%[0-9]+]] = rt.cast [[K]] domain [t] : (!tidal.tensor<[T - t], i64>) -> {S}
    CHECK-NEXT: [[G:%[0-9]+]] = rt.constant dense<0.899999976> : tensor<f32>
    CHECK-NEXT: [[W:%[0-9]+]] = rt.binary pow [[G]], [[KF]] domain [t] : ({F}, {S}) -> {S}
    CHECK-NEXT: [[P:%[0-9]+]] = rt.binary mul [[SUF]], [[W]] domain [t] : ({S}, {S}) -> {S}
    CHECK-NEXT: [[GS:%[0-9]+]] = rt.reduce sum [0] [[P]] domain [t] : ({S}) -> {F}
    CHECK-NEXT: [[WIN:%[0-9]+]] = rt.index [[R]][t:min(t + 3, T)] domain [t] : ({F}) -> {N}
    CHECK-NEXT: rt.iota 0 domain [t] : !tidal.tensor<[min(T - t, 3)], i64>
    CHECK-NEXT: rt.cast
    CHECK-NEXT: rt.binary pow [[G]]
    CHECK-NEXT: rt.binary mul [[WIN]]
    CHECK-NEXT: [[NS:%[0-9]+]] = rt.reduce sum [0] {{{{%[0-9]+}}}} domain [t] : ({N}) -> {F}
    CHECK-NEXT: rt.output "g" [[GS]] : {F}
    CHECK-NEXT: rt.output "n" [[NS]] : {F}
    """)
    assert_located_here(p, locs, line_of, ["d-r", "d-full", "d-nstep", "d-out"])


class Env:
    """Host code with external state: counts its calls."""

    def __init__(self):
        self.calls = 0

    def step(self, action):
        self.calls += 1
        return np.asarray(action, np.float32) * 2, np.float32(self.calls)


def test_udf_registers_host_code_and_infers_its_domain(filecheck, parse, locs, line_of):
    env = Env()
    with td.Program("env") as p:
        (i, I), (t, T) = p.dims("i", "t")
        a = td.input("a", shape=(4,), domain=(i, t))  # @u-a
        obs, rew = td.udf(env.step, [a], shapes=[(4,), ()], dtypes=["float32", "float32"])  # @u-step
        seed = td.udf(lambda: np.zeros(4, np.float32), shape=(4,), dtype="float32", domain=(i,),  # @u-src
                      name="reset")
        td.udf(print, [rew])  # @u-sink
        p.output("obs", obs + seed); p.output("rew", rew)  # @u-out
    assert obs.domain == (i, t) and seed.domain == (i,) and rew.shape == ()
    assert set(p.udfs) == {"Env.step", "reset", "print"} and p.udfs["Env.step"] == env.step
    parse(p.mlir())
    filecheck(p.mlir(locations=False), f"""
    CHECK: [[A:%[0-9]+]] = rt.input "a" domain [i, t] : {F4}
    CHECK-NEXT: [[O:%[0-9]+]]:2 = rt.udf "Env.step"([[A]]) domain [i, t] : ({F4}) -> ({F4}, {F})
    CHECK-NEXT: [[S:%[0-9]+]] = rt.udf "reset"() domain [i] : () -> {F4}
    CHECK-NEXT: rt.udf "print"([[O]]#1) domain [i, t] : ({F}) -> ()
    CHECK-NEXT: rt.binary add [[O]]#0, [[S]] domain [i, t]
    """)
    assert_located_here(p, locs, line_of, ["u-a", "u-step", "u-src", "u-sink", "u-out"])
