"""The RL examples (examples/reinforce.py, examples/ppo.py, examples/cartpole.py) and
the baselines of bench/rl.py at tiny sizes, against independent NumPy/JAX code.

The programs run on the reference interpreter (the oracle the scheduled backends
are tested against; compiling these programs for the scheduled runtime takes
minutes, which examples and bench/rl.py exercise). The references reproduce
Tidal's documented draw rule: td.rand at point p draws
the counter-based draw `random_draw(np, "uniform", seed, p, shape)` (docs/semantics.md), so
they take the same actions and resets.
"""
import math
import os
import re
import sys

import jax
import jax.numpy as jnp
import numpy as np
from tidal.runtime.counter_random import random_draw
import pytest

from program_helpers import close, value_and_grads

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
for sub in ("examples", "bench"):
    if os.path.join(ROOT, sub) not in sys.path:
        sys.path.insert(0, os.path.join(ROOT, sub))

import cartpole  # noqa: E402
import ppo  # noqa: E402
import reinforce  # noqa: E402
import tidal as td  # noqa: E402
from cartpole import rollout_numpy  # noqa: E402


# ------------------------------------------------------------------ independent references
def gym_step(state, action):
    """Gymnasium's CartPoleEnv.step (euler), one env, Python floats."""
    x, x_dot, theta, theta_dot = (float(v) for v in state)
    force = 10.0 if action == 1 else -10.0
    costheta, sintheta = math.cos(theta), math.sin(theta)
    temp = (force + 0.05 * theta_dot ** 2 * sintheta) / 1.1
    thetaacc = (9.8 * sintheta - costheta * temp) / (0.5 * (4.0 / 3.0 - 0.1 * costheta ** 2 / 1.1))
    xacc = temp - 0.05 * thetaacc * costheta / 1.1
    x, x_dot = x + 0.02 * x_dot, x_dot + 0.02 * xacc
    theta, theta_dot = theta + 0.02 * theta_dot, theta_dot + 0.02 * thetaacc
    done = x < -2.4 or x > 2.4 or theta < -12 * 2 * math.pi / 360 or theta > 12 * 2 * math.pi / 360
    return np.array([x, x_dot, theta, theta_dot]), done


def draws(seed, point, shape):
    return random_draw(np, "uniform", seed, point, shape).astype(np.float32)


def returns_np(rewards, dones, gamma, n=None):
    """sum_k gamma^k r[t + k] up to the end of the episode (and k < n), one env at a time."""
    T, B = rewards.shape
    out = np.zeros((T, B))
    for t in range(T):
        for b in range(B):
            g = 0.0
            for k in range(T - t if n is None else min(n, T - t)):
                g += gamma ** k * rewards[t + k, b]
                if dones[t + k, b]:
                    break
            out[t, b] = g
    return out


def gae_np(value, v_next, dones, gamma, lam):
    T, B = value.shape
    adv, nxt = np.zeros((T, B)), np.zeros(B)
    for t in reversed(range(T)):
        delta = 1.0 + gamma * (1 - dones[t]) * v_next[t] - value[t]
        nxt = delta + gamma * lam * (1 - dones[t]) * (nxt if t < T - 1 else 0.0)
        adv[t] = nxt
    return adv


def mlp_np(ws, x):
    for k in range(0, len(ws) - 2, 2):
        x = np.tanh(x @ ws[k] + ws[k + 1])
    return x @ ws[-2] + ws[-1]


def logp_np(ws, x):
    z = mlp_np(ws, x)
    return z - (np.log(np.exp(z - z.max(-1, keepdims=True)).sum(-1, keepdims=True)) + z.max(-1, keepdims=True))


def mlp_jnp(ws, x):
    for k in range(0, len(ws) - 2, 2):
        x = jnp.tanh(x @ ws[k] + ws[k + 1])
    return x @ ws[-2] + ws[-1]


def adam(params, grads, state, step, lr, b1=0.9, b2=0.999, eps=1e-8):
    """One Adam update; `step` is 1-based."""
    out = []
    for k, (w, g) in enumerate(zip(params, grads)):
        m, v = state.get(k, (0.0 * w, 0.0 * w))
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        state[k] = (m, v)
        out.append(w - lr * (m / (1 - b1 ** step)) / (np.sqrt(v / (1 - b2 ** step)) + eps))
    return out


def iteration_draws(it, T, B):
    u = np.stack([draws(reinforce.SEED_ACTION, (it, k), (B,)) for k in range(T)])
    fresh = cartpole.reset_state(np.stack([draws(reinforce.SEED_RESET, (it, k), (B, 4)) for k in range(T)]))
    return u, fresh


def initial_state(B):
    return cartpole.reset_state(draws(reinforce.SEED_INIT, (), (B, 4))), np.zeros(B, np.float32)


def reference_reinforce(params, B, T, I, gamma, lr, n=None, max_steps=cartpole.MAX_STEPS):
    """REINFORCE with Tidal's draws: NumPy CartPole, NumPy returns, jax.grad, Adam."""
    s, length = initial_state(B)
    params, state, rec = [np.asarray(w, np.float64) for w in params], {}, {}
    for it in range(I):
        u, fresh = iteration_draws(it, T, B)
        wf = [w.astype(np.float32) for w in params]
        S, A, D, s, length = rollout_numpy(s, length, lambda k, x: u[k] < np.exp(logp_np(wf, x)[:, 1]),
                                           fresh, max_steps)
        G = returns_np(np.ones((T, B)), D, gamma, n)
        adv = (G - G.mean()) / np.sqrt(G.var() + 1e-8)

        def loss_fn(*ws):
            lp = jax.nn.log_softmax(mlp_jnp(ws, S), -1)
            return -(jnp.where(A > 0.5, lp[..., 1], lp[..., 0]) * adv).mean()

        loss, grads = value_and_grads(loss_fn, *params)
        for key, v in (("s", S), ("a", A), ("done", D), ("g", G), ("adv", adv), ("loss", loss)):
            rec.setdefault(key, []).append(v)
        for k, w in enumerate(params):
            rec.setdefault(f"w{k}", []).append(w)
        params = adam(params, grads, state, it + 1, lr)
    return {k: np.array(v) for k, v in rec.items()}, params


def program_params(p, names):
    for node in p.nodes:
        if node.op == "param" and node.attrs["name"] in names:
            names[node.attrs["name"]] = node.attrs["value"]
    return list(names.values())


# ------------------------------------------------------------------------------- physics
def test_numpy_physics_matches_gym_step():
    rng = np.random.default_rng(0)
    states = rng.uniform(-0.3, 0.3, size=(64, 4)) * np.array([8.0, 4.0, 1.0, 4.0])
    actions = rng.integers(0, 2, size=64)
    nxt = np.stack(cartpole.physics(np, tuple(states.T), actions.astype(np.float64)), -1)
    term = cartpole.terminated(np, tuple(nxt.T))
    for k in range(64):
        ref, done = gym_step(states[k], actions[k])
        close(nxt[k], ref, rtol=1e-12, atol=1e-12)
        assert term[k] == done
    assert term.any() and not term.all()


def test_init_params_are_td_nn_mlp_init():
    p = reinforce.build(B=2, hidden=8, model_seed=3)
    names = {f"policy.{k}.{w}": None for k in range(3) for w in ("weight", "bias")}
    for got, want in zip(program_params(p, names), cartpole.init_params([4, 8, 8, 2], 3)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [None, 1, 3])
def test_cut_discounted_sum_matches_numpy(n):
    with td.Program("returns") as p:
        (t, T), = p.dims("t")
        r = td.input("r", shape=(3,), domain=(t,))
        d = td.input("d", shape=(3,), domain=(t,))
        stop = T if n is None else td.min(t + n, T)
        p.output("g", reinforce.cut_discounted_sum(r[t:stop], d[t:stop], 0.9))
    rng = np.random.default_rng(1)
    for T in (1, 2, 9):
        r = rng.normal(size=(T, 3)).astype(np.float32)
        dn = rng.random((T, 3)) < 0.3
        out = p.compile(backend="reference").run(bounds={"T": T}, inputs={"r": r, "d": dn.astype(np.float32)})
        close(out["g"], returns_np(r.astype(np.float64), dn, 0.9, n), rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------- REINFORCE
@pytest.mark.parametrize("returns,n,max_steps", [("mc", None, 500), ("nstep", 3, 500), ("mc", None, 5),
                                                 ("mc_recurrence", None, 500)])
def test_reinforce_program_matches_numpy_and_jax(returns, n, max_steps):
    B, T, I, hidden = 3, 12, 2, 8
    p = reinforce.build(B=B, hidden=hidden, returns=returns, n=n or 1, gamma=0.9, lr=0.05,
                        max_steps=max_steps, debug=True)
    out = p.compile(backend="reference").run(bounds={"I": I, "T": T})
    ref, _ = reference_reinforce(cartpole.init_params([4, hidden, hidden, 2], 0), B, T, I, 0.9, 0.05,
                                     n=n, max_steps=max_steps)
    assert ref["done"].sum() >= 2                      # the episode cuts are exercised
    close(out["s"], ref["s"], rtol=1e-5, atol=1e-6)    # physics, auto-reset, carried state
    np.testing.assert_array_equal(out["a"], ref["a"])
    np.testing.assert_array_equal(out["done"], ref["done"])
    close(out["g"], ref["g"], rtol=1e-5, atol=1e-5)
    close(out["adv"], ref["adv"], rtol=1e-4, atol=1e-4)
    close(out["loss"], ref["loss"], rtol=1e-4, atol=1e-5)
    for k in range(6):                                 # W[i] for every i: the Adam updates
        close(out[f"w{k}"], ref[f"w{k}"], rtol=1e-4, atol=2e-5)
    close(out["ep_count"], ref["done"].sum((1, 2)))
    # the Tidal states follow Gymnasium's equations wherever no reset happened
    s, a, d = out["s"].reshape(I * T, B, 4), out["a"].reshape(I * T, B), out["done"].reshape(I * T, B)
    for k in range(I * T - 1):
        for b in range(B):
            nxt, term = gym_step(s[k, b], a[k, b])
            if not d[k, b]:
                close(s[k + 1, b], nxt, rtol=1e-4, atol=1e-5)
            assert term == bool(d[k, b]) or (max_steps < 500 and d[k, b])


def test_the_returns_as_a_recurrence_equal_the_discounted_sum_on_jax():
    """bench/variants.py's spelling of Monte-Carlo returns as a backward recurrence."""
    B, T, I, hidden = 3, 12, 2, 8
    outs = [reinforce.build(B=B, hidden=hidden, returns=r, gamma=0.9, lr=0.05, debug=True)
            .compile(backend="jax").run(bounds={"I": I, "T": T}) for r in ("mc", "mc_recurrence")]
    assert outs[0]["done"].sum() >= 2
    close(outs[1]["g"], outs[0]["g"], rtol=1e-5, atol=1e-5)
    close(outs[1]["w0"], outs[0]["w0"], rtol=1e-4, atol=1e-5)


def test_reinforce_udf_environment_keeps_external_state():
    B, T, I = 2, 7, 3
    p = reinforce.build(B=B, hidden=8, env="udf", env_seed=5, debug=True)
    out = p.compile(backend="reference").run(bounds={"I": I, "T": T})
    assert p.env.calls == I * T                        # once per point, in order
    replay = cartpole.NumpyCartPole(B, seed=5)
    obs, ended = replay.reset(), 0
    for it in range(I):
        for k in range(T):
            close(out["s"][it, k], obs, rtol=0, atol=0)
            obs, _, done, _ = replay.step(out["a"][it, k])
            np.testing.assert_array_equal(out["done"][it, k], done)
            ended += done.sum()
    close(out["ep_count"].sum(), ended)
    # the actions are the policy's Bernoulli draws with Tidal's draw rule
    w = [out[f"w{k}"] for k in range(6)]
    for it in range(I):
        u, _ = iteration_draws(it, T, B)
        wi = [x[it] for x in w]
        expect = u < np.exp(logp_np(wi, out["s"][it])[..., 1])
        np.testing.assert_array_equal(out["a"][it], expect)


# ------------------------------------------------------------------------------------ PPO
@jax.jit
@jax.value_and_grad
def _ppo_loss_grad(ws, S, A, lpo, advn, ret, clip=0.2, vf=0.5):
    lp = jax.nn.log_softmax(mlp_jnp(ws[:6], S), -1)
    ratio = jnp.exp(jnp.where(A > 0.5, lp[..., 1], lp[..., 0]) - lpo)
    pg = -jnp.minimum(ratio * advn, jnp.clip(ratio, 1 - clip, 1 + clip) * advn).mean()
    return pg + vf * 0.5 * ((mlp_jnp(ws[6:], S)[..., 0] - ret) ** 2).mean()


def reference_ppo(B, T, I, K, hidden, lr, gamma=0.99, lam=0.95):
    init = cartpole.init_params([4, hidden, hidden, 2], 0) + cartpole.init_params([4, hidden, hidden, 1], 1)
    params, state, step, rec = [w.astype(np.float64) for w in init], {}, 1, {}
    s, length = initial_state(B)
    for it in range(I):
        u, fresh = iteration_draws(it, T, B)
        wf = [w.astype(np.float32) for w in params]
        S, A, D, s, length = rollout_numpy(s, length, lambda k, x: u[k] < np.exp(logp_np(wf[:6], x)[:, 1]),
                                           fresh, cartpole.MAX_STEPS)
        after = np.concatenate([S[1:], s[None]])           # the state after each step
        value, v_next = mlp_np(params[6:], S)[..., 0], mlp_np(params[6:], after)[..., 0]
        adv = gae_np(value, v_next, D, gamma, lam)
        ret = adv + value
        lpo = np.where(A > 0.5, logp_np(params[:6], S)[..., 1], logp_np(params[:6], S)[..., 0])
        advn = (adv - adv.mean()) / (adv.std() + 1e-8)

        for key, v in (("s", S), ("done", D), ("value", value), ("adv", adv)):
            rec.setdefault(key, []).append(v)
        for k in range(K):
            with jax.enable_x64(True):
                loss, grads = _ppo_loss_grad([jnp.asarray(w) for w in params],
                                             *(jnp.asarray(np.asarray(x, np.float64)) for x in (S, A, lpo, advn, ret)))
                loss, grads = float(loss), [np.asarray(g) for g in grads]
            rec.setdefault("loss", []).append(loss)
            rec.setdefault("w", []).append(params)
            params = adam(params, grads, state, step, lr)
            step += 1
    return {k: v for k, v in rec.items()}


def test_the_default_pipeline_runs_ppo_epochs_in_tiles_at_the_bench_sizes():
    """bench/rl.py's PPO (B = 64, hidden 64): each epoch's loss and backward
    pass over the (T, 64, 64) activations, 16 MiB at T = 1024, is tiled by
    the default pipeline's cost model (256 KiB a tile: 16 steps), one loop
    over the tiles inside the loop over the epochs; the weight gradients are
    summed over the tiles. At the small sizes of the test below (B = 2,
    hidden 8) the values fit in the cache whole and nothing is tiled."""
    p = ppo.build(B=64, hidden=64, epochs=4)
    exe = p.compile(backend="jax")
    stage = exe.stages["sdg-tile"]
    assert "n < N = (T + 15) floordiv 16" in stage, stage.splitlines()[1]
    assert any("sdg.matmul" in line and "domain [i, k, n]" in line and "[16, 64, 64]" in line
               for line in stage.splitlines())
    lines = exe.schedule().splitlines()
    epochs = [j for j, line in enumerate(lines) if line.strip() == "for c1 in range(K):"]
    tiles = [j for j, line in enumerate(lines) if line.strip() == "for c2 in range(N):"]
    assert epochs and tiles and all(any(e < j for e in epochs) for j in tiles), "\n".join(lines)
    small = ppo.build(B=2, hidden=8, epochs=2).compile(backend="jax")
    assert small.stages["sdg-tile"] == small.stages["sdg-accumulate"]


@pytest.mark.parametrize("epoch_dim,backend,tile", [(False, "reference", None), (True, "reference", None),
                                                    (True, "jax", None), (True, "jax", 3)])
def test_ppo_program_matches_numpy_gae_and_jax_updates(epoch_dim, backend, tile):
    """tile: the epochs computed `tile` steps at a time (what the default pipeline does at
    bench/rl.py's sizes, 16 steps a tile; these sizes fit in the cache untiled)."""
    B, T, I, K, hidden = 2, 10, 2, 2, 8
    p = ppo.build(B=B, hidden=hidden, epochs=K, epoch_dim=epoch_dim, lr=0.02, debug=True)
    passes = None if tile is None else td.default_passes(options={"sdg-tile": f"tile={tile} min-bytes=0"})
    exe = p.compile(backend=backend, passes=passes)
    if tile is not None:   # the epoch's loss and backward pass over tiles, inside the compiled loops
        assert f"n < N = (T + {tile - 1}) floordiv {tile}" in exe.stages["sdg-tile"]
        assert any("sdg.matmul" in line and "domain [i, k, n" in line for line in exe.stages["sdg-tile"].splitlines())
    out = exe.run(bounds={"I": I, "T": T, **({"K": K} if epoch_dim else {})})
    if backend != "reference":   # sdg-restrict-merges: acting reads W[i, 0], not the epoch loop
        assert not loops_over_t_inside_k(exe.stages["schedule"])
    # GAE (the backward recurrence) against NumPy, from the program's own values
    for it in range(I):
        close(out["adv"][it], gae_np(out["value"][it].astype(np.float64), out["v_next"][it], out["done"][it],
                                     0.99, 0.95), rtol=1e-5, atol=1e-5)
        close(out["ret"][it], out["adv"][it] + out["value"][it])
    ratio0 = out["ratio"][:, 0] if epoch_dim else out["ratio"]
    close(ratio0, np.ones((I, T, B)), rtol=0, atol=1e-6)   # first epoch: pi = pi_old
    ref = reference_ppo(B, T, I, K, hidden, 0.02)
    assert np.array(ref["done"]).sum() >= 1
    close(out["s"], np.array(ref["s"]), rtol=1e-5, atol=1e-6)
    close(out["value"], np.array(ref["value"]), rtol=1e-4, atol=1e-5)
    close(out["adv"], np.array(ref["adv"]), rtol=1e-4, atol=1e-4)
    # the loss at every epoch (epoch dim) or the last epoch's; the weights at every
    # (i, k) or at every i: Adam over the i * K updates
    steps = slice(None) if epoch_dim else slice(K - 1, None, K)
    close(np.reshape(out["loss"], -1), ref["loss"][steps], rtol=1e-4, atol=1e-5)
    for j in range(12):
        w = out[f"w{j}"].reshape(-1, *init_shape(out[f"w{j}"], epoch_dim))
        close(w, np.array([x[j] for x in ref["w"]])[slice(None) if epoch_dim else slice(0, None, K)],
              rtol=1e-4, atol=3e-5)


def loops_over_t_inside_k(schedule_text: str) -> list[str]:
    """The loops over T of a schedule's loop nest that run inside a loop over K."""
    stack, found = [], []
    for line in schedule_text.split("// loop nest", 1)[1].splitlines():
        depth = len(line) - len(line.lstrip())
        while stack and stack[-1][0] >= depth:
            stack.pop()
        m = re.match(r" *for \w+ in range\((.*)\):", line)
        if m:
            if "T" in m.group(1) and any("K" in r for _, r in stack):
                found.append(line)
            stack.append((depth, m.group(1)))
        elif line.strip().startswith(("if ", "else")):
            stack.append((depth, ""))
    return found


def init_shape(w, epoch_dim):
    return w.shape[2:] if epoch_dim else w.shape[1:]


# ------------------------------------------------------------------------------ baselines
def run_baseline(agent, B, T, I, to, get_params):
    s, length = (to(x) for x in initial_state(B))
    params = []
    for it in range(I):
        u, fresh = iteration_draws(it, T, B)
        s, length, _ = agent.iteration(s, length, to(u), to(fresh))
        params.append([np.asarray(w, np.float64) for w in get_params()])
    return params


@pytest.mark.parametrize("returns,n", [("mc", None), ("nstep", 3)])
def test_jax_baseline_matches_reference(returns, n):
    import rl

    B, T, I, hidden = 3, 12, 2, 8
    agent = rl.JaxReinforce(B, hidden, returns, n=n or 1, gamma=0.9, lr=0.05)
    got = run_baseline(agent, B, T, I, jnp.asarray, lambda: agent.params)
    _, final = reference_reinforce(cartpole.init_params([4, hidden, hidden, 2], 0), B, T, I, 0.9, 0.05, n=n)
    for a, b in zip(got[-1], final):
        close(a, b, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("returns,n", [("mc", None), ("nstep", 3)])
def test_torch_baseline_matches_jax_baseline(returns, n):
    torch = pytest.importorskip("torch")
    import rl

    B, T, I, hidden = 3, 12, 2, 8
    tagent = rl.TorchReinforce(B, hidden, returns, n=n or 1, gamma=0.9, lr=0.05)
    jagent = rl.JaxReinforce(B, hidden, returns, n=n or 1, gamma=0.9, lr=0.05)
    got_t = run_baseline(tagent, B, T, I, torch.from_numpy, tagent.params)
    got_j = run_baseline(jagent, B, T, I, jnp.asarray, lambda: jagent.params)
    for it in range(I):
        for a, b in zip(got_t[it], got_j[it]):
            close(a, b, rtol=1e-4, atol=2e-5)


def test_jax_ppo_baseline_matches_reference():
    import ppo_baselines

    B, T, I, K, hidden, lr = 3, 12, 2, 2, 8, 0.02
    agent = ppo_baselines.JaxPPO(B, hidden, epochs=K, lr=lr)
    got = run_baseline(agent, B, T, I, jnp.asarray, lambda: agent.params)
    ref = reference_ppo(B, T, I + 1, K, hidden, lr)        # ref["w"]: the weights before each update
    assert np.array(ref["done"][:I]).sum() >= 1
    for it in range(I):
        for a, b in zip(got[it], ref["w"][(it + 1) * K]):
            close(a, b, rtol=1e-4, atol=3e-5)


def test_torch_ppo_baseline_matches_jax_ppo_baseline():
    torch = pytest.importorskip("torch")
    import ppo_baselines

    B, T, I, K, hidden, lr = 3, 12, 2, 2, 8, 0.02
    tagent = ppo_baselines.TorchPPO(B, hidden, epochs=K, lr=lr)
    jagent = ppo_baselines.JaxPPO(B, hidden, epochs=K, lr=lr)
    got_t = run_baseline(tagent, B, T, I, torch.from_numpy, tagent.params)
    got_j = run_baseline(jagent, B, T, I, jnp.asarray, lambda: jagent.params)
    for it in range(I):
        for a, b in zip(got_t[it], got_j[it]):
            close(a, b, rtol=1e-4, atol=3e-5)
