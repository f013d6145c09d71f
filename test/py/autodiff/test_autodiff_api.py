"""The autodiff API and its edge cases: errors, zero gradients, non-differentiable
ops, leaves, backward()/.grad, the gradient program as rt/sdg, and the errors of
td.nn and td.optim."""
import numpy as np
import pytest

import tidal as td
from ad_helpers import close, normal


def run(p, bounds=None, **inputs):
    return p.compile(backend="reference").run(bounds=bounds or {}, inputs=inputs)


def test_non_scalar_loss_is_an_error():
    with td.Program():
        x = td.input("x", shape=(3,))
        with pytest.raises(td.TidalError, match=r"scalar loss .*shape \(3\)") as e:
            td.grad(x * 2.0, [x])
    assert e.value.lineno > 0 and "loss.sum()" in e.value.hint


def test_integer_loss_and_integer_wrt_are_errors():
    with td.Program():
        x = td.input("x", shape=(3,))
        i = td.input("i", shape=(), dtype="int64")
        with pytest.raises(td.TidalError, match="floating-point loss"):
            td.grad(i * 2, [x])
        with pytest.raises(td.TidalError, match="int64 tensor"):
            td.grad(x.sum(), [i])
        with pytest.raises(td.TidalError, match="not a tensor"):
            td.grad(x.sum(), [3.0])


def test_tensors_of_another_program_are_an_error():
    with td.Program():
        other = td.input("x", shape=())
    with td.Program():
        x = td.input("x", shape=())
        with pytest.raises(td.TidalError, match="another Program"):
            td.grad(x * 2.0, [other])


def test_unrelated_wrt_gets_zeros_of_its_shape_and_domain():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), domain=(t,))
        y = td.input("y", shape=(3,), domain=(t,))
        W = td.param("W", np.ones((2, 2), np.float32))
        loss = x[0:T].sum()
        dy, dW, dx = td.grad(loss, [y, W, x])
        assert dy.domain == (t,) and dW.domain == () and dx.domain == (t,)
        p.output("dy", dy)
        p.output("dW", dW)
        p.output("dx", dx)
    out = run(p, {"T": 3}, x=normal(0, 3, 2), y=normal(1, 3, 3))
    assert out["dy"].shape == (3, 3) and not out["dy"].any()
    assert out["dW"].shape == (2, 2) and not out["dW"].any()
    close(out["dx"], np.ones((3, 2)))


def test_single_tensor_wrt_returns_a_tensor_and_grad_works_outside_with():
    with td.Program() as p:
        x = td.input("x", shape=(2,))
        loss = (x * x).sum()
    g = td.grad(loss, x)                       # the program comes from the loss
    assert isinstance(g, td.RecurrentTensor)
    p.output("g", g)
    close(run(p, x=np.array([1.0, -2.0], np.float32))["g"], [2.0, -4.0])


def test_non_differentiable_ops_give_zero_gradients():
    """Comparisons, casts to ints, iota, floor and UDFs pass no gradient: the loss is
    treated as constant along those paths."""
    with td.Program() as p:
        x = td.input("x", shape=(3,))
        mask = (x > 0).astype("float32")                   # a comparison
        idx = td.arange(3).astype("float32")               # iota
        rounded = td.floor(x)
        host = td.udf(lambda a: a * 10, [x], shape=(3,), dtype="float32", name="times10")
        k = x.astype("int32").astype("float32")
        loss = (mask * 5.0 + idx * rounded + host + k).sum() + (x * idx).sum()
        (dx,) = td.grad(loss, [x])
        p.output("dx", dx)
    out = run(p, x=np.array([0.5, -1.5, 2.5], np.float32))
    close(out["dx"], [0.0, 1.0, 2.0])                       # only the last term


def test_grad_of_a_loss_with_a_domain_is_the_gradient_of_its_sum():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        W = td.param("W", np.float32(2.0))
        loss = x * W * x                                   # domain (t,)
        dx, dW = td.grad(loss, [x, W])
        p.output("dx", dx)
        p.output("dW", dW)
    x = normal(3, 4)
    out = run(p, {"T": 4}, x=x)
    close(out["dx"], 4.0 * x)
    close(out["dW"], (x * x).sum())


def test_wrt_an_intermediate_tensor():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(2,), domain=(t,))
        h = td.tanh(x)
        loss = (h * h)[0:T].sum()
        dh, dx = td.grad(loss, [h, x])
        p.output("dh", dh)
        p.output("h", h)
        p.output("dx", dx)
    out = run(p, {"T": 3}, x=normal(4, 3, 2))
    close(out["dh"], 2 * out["h"])
    assert not out["dx"].any()                              # x reaches the loss only through h


def test_gradient_program_is_rt_and_sdg_with_locations_at_the_grad_call():
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        s = td.recurrent(shape=(), domain=(t,))
        s[0] = x[0]
        s[t + 1] = s[t] * 0.5 + x[t + 1]
        loss = s[0:T].sum()
        (dx,) = td.grad(loss, [x])  # @grad-line
        p.output("dx", dx)
    text = p.mlir()
    assert text.count("rt.recurrent") >= 2 and "rt.define" in text
    line = [n for n, src in enumerate(open(__file__), 1) if src.rstrip().endswith("# @grad-line")][0]
    grad_nodes = [n for n in p.nodes if n.id > loss.node.id]
    assert grad_nodes and all(n.loc.line == line and n.loc.file == __file__ for n in grad_nodes)
    sdg = p.sdg()
    assert "sdg.merge" in sdg and "t + 1" in sdg        # the backward recurrence reads ∇s[t + 1]
    out = run(p, {"T": 4}, x=np.ones(4, np.float32))
    close(out["dx"], [1.875, 1.75, 1.5, 1.0])


def test_backward_records_grad_on_parameters():
    with td.Program() as p:
        x = td.input("x", shape=(2,))
        lin = td.nn.Linear(2, 1, rng=np.random.default_rng(0))
        loss = (lin(x) ** 2).sum()
        assert lin.weight.grad is None
        grads = loss.backward()
        assert len(grads) == 2 and lin.weight.grad is grads[0] and lin.bias.grad is grads[1]
        assert x.grad is None
        (gx,) = loss.backward(x)
        assert x.grad is gx
        p.output("gw", lin.weight.grad)
    w = p.nodes[[n.attrs.get("name") for n in p.nodes].index("linear.weight")].attrs["value"]
    b = p.nodes[[n.attrs.get("name") for n in p.nodes].index("linear.bias")].attrs["value"]
    xv = np.array([1.0, 2.0], np.float32)
    close(run(p, x=xv)["gw"], np.outer(xv, 2 * (xv @ w + b)))


def test_parameter_names_are_unique_and_modules_list_parameters():
    with td.Program():
        (i, I), = td.current_program().dims("i")
        a = td.nn.Linear(2, 3, domain=(i,))
        b = td.nn.Linear(3, 1, bias=False)
        mlp = td.nn.MLP([2, 4, 1], domain=(i,))
        assert [n for n, _ in a.named_parameters()] == ["weight", "bias"]
        assert a.weight.op == "recurrent" and a.weight.domain == (i,) and a.weight.cases
        assert b.weight.op == "param" and b.bias is None
        assert len(mlp.parameters()) == 4
        assert [x.name for x in td.autodiff.parameters_of(td.current_program())
                if x.op == "param"] == ["linear.weight", "linear.bias", "linear_1.weight",
                                        "mlp.0.weight", "mlp.0.bias", "mlp.1.weight", "mlp.1.bias"]


def test_optimizer_errors():
    with td.Program() as p:
        (i, I), (t, T) = p.dims("i", "t")
        fixed = td.nn.Linear(2, 1)                              # domain (): not steppable
        with pytest.raises(td.TidalError, match="not a recurrent tensor over the iteration dim"):
            td.optim.SGD(fixed.parameters(), dim=i)
        with pytest.raises(td.TidalError, match="iteration dim"):
            td.optim.SGD(fixed.parameters())
        both = td.nn.parameter("both", np.ones(2, np.float32), domain=(i, t), dim=i)
        with pytest.raises(td.TidalError, match="cannot tell the optimizer's iteration dim"):
            td.optim.Adam([both])
        W = td.nn.parameter("W", np.ones(2, np.float32), domain=(i,))
        opt = td.optim.Adam([W], lr=0.1)
        with pytest.raises(td.TidalError, match="no gradient"):
            opt.step()
        with pytest.raises(td.TidalError, match="2 gradients for 1 parameters"):
            opt.step([W, W])
        with pytest.raises(td.TidalError, match="differs from the parameter"):
            opt.step([td.zeros(3)])
        x = td.input("x", shape=(2,), domain=(t,))
        with pytest.raises(td.TidalError, match="varies with t"):
            opt.step([x])
        opt.step([W * 2.0])
        with pytest.raises(td.TidalError, match="already stepped"):
            opt.step([W])
        with pytest.raises(td.TidalError, match="lr must be"):
            td.optim.SGD([W], lr="fast")
        with pytest.raises(td.TidalError, match="betas"):
            td.optim.Adam([W], betas=(1.5, 0.9))


def test_nn_errors():
    with td.Program() as p:
        (t, T), = p.dims("t")
        with pytest.raises(td.TidalError, match="not divisible"):
            td.nn.MultiHeadAttention(6, 4, dim=t)
        with pytest.raises(td.TidalError, match="unknown attention pattern"):
            td.nn.MultiHeadAttention(4, 2, dim=t, pattern="sparse")
        with pytest.raises(td.TidalError, match="even size"):
            td.nn.RoPE(3)
        with pytest.raises(td.TidalError, match="unknown activation"):
            td.nn.MLP([2, 2], activation="swishy")
        mha = td.nn.MultiHeadAttention(4, 2, dim=t, pattern="window", window=0)
        with pytest.raises(td.TidalError, match="window size"):
            mha(td.input("x", shape=(4,), domain=(t,)))
        with pytest.raises(td.TidalError, match="do not vary with t"):
            td.nn.attend(td.zeros(4), td.zeros(4), td.zeros(4), dim=t)


def test_attend_single_head_window():
    with td.Program() as p:
        (t, T), = p.dims("t")
        k = td.input("k", shape=(2,), domain=(t,))
        y = td.nn.attend(k, k, k * 2.0, dim=t, pattern="window", window=2)
        p.output("y", y)
    kv = normal(5, 3, 2)
    out = run(p, {"T": 3}, k=kv)
    for s in range(3):
        K = kv[max(0, s - 1):s + 1]
        w = np.exp(K @ kv[s] / np.sqrt(2))
        close(out["y"][s], (w / w.sum()) @ (2 * K))


@pytest.mark.parametrize("kind", ["sgd", "sgd_wd", "adam_wd"])
def test_optimizers_follow_their_update_rules(kind):
    """loss[i] = |W[i] - c|²: the parameter trajectory against the update rule written out."""
    c = np.array([1.0, -2.0], np.float32)
    with td.Program() as p:
        (i, I), = p.dims("i")
        W = td.nn.parameter("W", np.zeros(2, np.float32), domain=(i,))
        loss = ((W - td.constant(c)) ** 2).sum()
        (g,) = td.grad(loss, [W])
        if kind == "sgd":
            td.optim.SGD([W], lr=0.1).step([g])
        elif kind == "sgd_wd":
            td.optim.SGD([W], lr=0.1, weight_decay=0.5).step([g])
        else:
            td.optim.Adam([W], lr=0.3, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1).step([g])
        p.output("W", W)
    out = run(p, {"I": 5})
    w, m, v, traj = np.zeros(2), np.zeros(2), np.zeros(2), []
    for it in range(5):
        traj.append(w)
        g = 2 * (w - c)
        if kind == "sgd":
            w = w - 0.1 * g
        elif kind == "sgd_wd":
            w = w - 0.1 * (g + 0.5 * w)
        else:
            g = g + 0.1 * w
            m, v = 0.8 * m + 0.2 * g, 0.9 * v + 0.1 * g * g
            w = w - 0.3 * (m / (1 - 0.8 ** (it + 1))) / (np.sqrt(v / (1 - 0.9 ** (it + 1))) + 1e-6)
    close(out["W"], np.stack(traj))


def test_rope_with_tensor_positions():
    with td.Program() as p:
        x = td.input("x", shape=(3, 4))
        y = td.nn.RoPE(4, base=10.0)(x, td.arange(3) + 2)
        p.output("y", y)
    xv = normal(1, 3, 4)
    out = run(p, x=xv)
    inv = 10.0 ** (-np.arange(0, 4, 2) / 4)
    for r in range(3):
        ang = (r + 2) * inv
        cos, sin = np.concatenate([np.cos(ang)] * 2), np.concatenate([np.sin(ang)] * 2)
        rot = np.concatenate([-xv[r, 2:], xv[r, :2]])
        close(out["y"][r], xv[r] * cos + rot * sin)


def test_copy_forward_recurrence_accumulates_into_its_base():
    """s[0] = x[0]; s[t + 1] = s[t]: every s[t] is x[0], so ∇x[0] = T (the value of a
    case is s itself, a self-contribution through the placeholder)."""
    with td.Program() as p:
        (t, T), = p.dims("t")
        x = td.input("x", shape=(), domain=(t,))
        s = td.recurrent(shape=(), domain=(t,))
        s[0] = x[0]
        s[t + 1] = s[t]
        (dx,) = td.grad(s[0:T].sum(), [x])
        p.output("dx", dx)
    for T in (1, 4):
        close(run(p, {"T": T}, x=normal(0, T))["dx"], [T] + [0] * (T - 1))
