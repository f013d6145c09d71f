"""CartPole-v1, shared by the RL examples, their tests and bench/rl.py.

* `physics(xp, state, action)`: one Euler step of the standard CartPole-v1
  equations (Gym/Gymnasium: gravity 9.8, masscart 1.0, masspole 0.1, half
  pole length 0.5, force_mag 10, tau 0.02), written once for any array
  namespace with `cos`/`sin`/`abs` and elementwise arithmetic: `tidal`
  (recurrent tensors), `numpy`, `jax.numpy`, `torch`. `state` is the tuple of
  the four components (x, x_dot, theta, theta_dot), each of shape (B,);
  `action` is 0.0/1.0 (push left/right) of shape (B,).
* `terminated(xp, state)`: |x| > 2.4 or |theta| > 12 degrees.
* `NumpyCartPole`: B environments on the host with external state (the
  `--env udf` variant): auto-reset on termination or after MAX_STEPS steps,
  reset states uniform(-0.05, 0.05) from its own NumPy generator.
* `rollout_numpy`: B CartPoles stepped with given actions and reset draws
  (the NumPy check of the Tidal programs in the tests); `rollout_scan`: the
  same in `jax.lax.scan` (the acting loop of bench/rl.py's JAX baselines).
* `define_env`: the environment inside a Tidal program (recurrences over an
  iteration dim i and a step dim t, auto-reset with `td.where`, state carried
  across iterations), or the NumPy environment behind `td.udf`.
* `init_params`: td.nn.MLP's initial weights, for the baselines; `torch_mlp`:
  a PyTorch network holding them.
"""
from __future__ import annotations

import math

import numpy as np

GRAVITY, MASSCART, MASSPOLE, LENGTH, FORCE_MAG, TAU = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
TOTAL_MASS = MASSCART + MASSPOLE
POLEMASS_LENGTH = MASSPOLE * LENGTH
X_THRESHOLD = 2.4
THETA_THRESHOLD = 12 * 2 * math.pi / 360
MAX_STEPS = 500          # CartPole-v1's time limit (truncation)
RESET_LOW, RESET_HIGH = -0.05, 0.05
OBS, ACTIONS = 4, 2


def physics(xp, state, action):
    """The next (x, x_dot, theta, theta_dot) after pushing with `action` (0 left, 1 right)."""
    x, x_dot, theta, theta_dot = state
    force = FORCE_MAG * (2.0 * action - 1.0)
    costheta, sintheta = xp.cos(theta), xp.sin(theta)
    temp = (force + POLEMASS_LENGTH * theta_dot * theta_dot * sintheta) / TOTAL_MASS
    thetaacc = (GRAVITY * sintheta - costheta * temp) / (
        LENGTH * (4.0 / 3.0 - MASSPOLE * costheta * costheta / TOTAL_MASS))
    xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
    return (x + TAU * x_dot, x_dot + TAU * xacc, theta + TAU * theta_dot, theta_dot + TAU * thetaacc)


def terminated(xp, state):
    x, _, theta, _ = state
    return (xp.abs(x) > X_THRESHOLD) | (xp.abs(theta) > THETA_THRESHOLD)


def reset_state(u):
    """uniform(-0.05, 0.05) from uniform [0, 1) draws (any namespace)."""
    return RESET_LOW + (RESET_HIGH - RESET_LOW) * u


class NumpyCartPole:
    """B CartPoles with external state, auto-reset (Gym's vector-env convention:
    the observation returned with done=True is already the reset state)."""

    def __init__(self, B: int, seed: int = 0, max_steps: int = MAX_STEPS):
        self.B, self.rng, self.max_steps = B, np.random.default_rng(seed), max_steps
        self.state = np.zeros((B, OBS), np.float32)
        self.length = np.zeros(B, np.float32)
        self.calls = 0

    def reset(self):
        self.state = reset_state(self.rng.random((self.B, OBS))).astype(np.float32)
        self.length[:] = 0
        return self.state.copy()

    def step(self, action):
        """(next obs, reward, done, length of the episode that ended or 0) for actions (B,)."""
        self.calls += 1
        s = physics(np, tuple(self.state.T), np.asarray(action, np.float32))
        s = np.stack(s, -1).astype(np.float32)
        length = self.length + 1
        done = terminated(np, tuple(s.T)) | (length >= self.max_steps)
        fresh = reset_state(self.rng.random((self.B, OBS))).astype(np.float32)
        self.state = np.where(done[:, None], fresh, s).astype(np.float32)
        self.length = np.where(done, 0, length).astype(np.float32)
        reward = np.ones(self.B, np.float32)
        return self.state.copy(), reward, done.astype(np.float32), np.where(done, length, 0).astype(np.float32)


def init_params(sizes, seed):
    """The initial weights of `td.nn.MLP(sizes, rng=np.random.default_rng(seed))`
    (PyTorch's uniform(±1/sqrt(fan_in)) for each layer's weight, then bias), as
    [W0, b0, W1, b1, ...] with W of shape (in, out): the baselines' initial values."""
    rng, out = np.random.default_rng(seed), []
    for a, b in zip(sizes[:-1], sizes[1:]):
        bound = 1.0 / math.sqrt(a)
        out.append(rng.uniform(-bound, bound, size=(a, b)).astype(np.float32))
        out.append(rng.uniform(-bound, bound, size=(b,)).astype(np.float32))
    return out


def torch_mlp(torch, ws):
    """A tanh `torch.nn.Sequential` of Linear layers holding the weights ws
    ([W0, b0, ...], W of shape (in, out), as `init_params` gives): the PyTorch
    baselines' networks."""
    layers = []
    for k in range(0, len(ws), 2):
        lin = torch.nn.Linear(*ws[k].shape)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(ws[k].T.copy()))
            lin.bias.copy_(torch.from_numpy(ws[k + 1]))
        layers += [lin, torch.nn.Tanh()]
    return torch.nn.Sequential(*layers[:-1])


def rollout_numpy(state0, length0, actions, resets, max_steps=MAX_STEPS):
    """Steps B CartPoles (float32, as the programs) for T steps: `actions` is (T, B)
    or a function (t, state) -> actions (B,); reset states (T, B, 4) replace the
    state where an episode ends at that step. Returns the states seen (T, B, 4),
    the actions (T, B), the done flags (T, B), the final state and episode lengths."""
    s, length = np.asarray(state0, np.float32), np.asarray(length0, np.float32)
    states, acts, dones = [], [], []
    for k, fresh in enumerate(resets):
        a = np.asarray(actions(k, s) if callable(actions) else actions[k], np.float32)
        states.append(s)
        acts.append(a)
        nxt = np.stack(physics(np, tuple(s.T), a), -1).astype(np.float32)
        length = length + 1
        done = terminated(np, tuple(nxt.T)) | (length >= max_steps)
        dones.append(done)
        s = np.where(done[:, None], fresh, nxt).astype(np.float32)
        length = np.where(done, 0, length).astype(np.float32)
    return np.array(states), np.array(acts), np.array(dones), s, length


def env_step(xp, s, length, a, fresh, max_steps=MAX_STEPS):
    """One step of B CartPoles (s (B, 4), episode lengths (B,), actions 0.0/1.0)
    for an array namespace with `where` and `stack` (jax.numpy, torch): the
    next state (fresh where an episode ends), the next lengths, the done
    flags and the return of the episode ending there (or 0)."""
    nxt = physics(xp, tuple(s.T), a)
    n_len = length + 1.0
    done = terminated(xp, nxt) | (n_len >= max_steps)
    return (xp.where(done[:, None], fresh, xp.stack(nxt, -1)), xp.where(done, 0.0, n_len), done,
            xp.where(done, n_len, 0.0))


def rollout_scan(jax, p_right, s, length, u, fresh, max_steps=MAX_STEPS):
    """B CartPoles stepped T times in `jax.lax.scan`: the action at a step is
    u[t] < p_right(state) (the probability of pushing right), reset states
    fresh (T, B, 4) replace the state where an episode ends. Returns the final
    (state, length) and, per step, (states seen, actions, done flags, the
    return of the episode ending there or 0, the state after the step)."""
    jnp = jax.numpy

    def step(carry, x):
        s, length = carry
        uk, fk = x
        a = (uk < p_right(s)).astype(jnp.float32)
        s2, length2, done, ep = env_step(jnp, s, length, a, fk, max_steps)
        return (s2, length2), (s, a, done.astype(jnp.float32), ep, s2)

    return jax.lax.scan(step, (s, length), (u, fresh))


# ------------------------------------------------------------------ the Tidal environment
def carry(x, init, nxt, outer, inner):
    """Cases of a state `x` over (outer o, inner n): x[0, 0] = init, x[o, n + 1] = nxt[o, n],
    and x[o + 1, 0] = nxt[o, N - 1] (the state after the last inner step carries over)."""
    (o, _), (n, N) = outer, inner
    x[0, 0] = init
    x[o + 1, 0] = nxt[o, N - 1]
    x[o, n + 1] = nxt[o, n]


def define_env(s, length, a, outer, inner, B, env="td", max_steps=MAX_STEPS, env_seed=0,
               seeds=(11, 13)):
    """Defines the CartPole state `s` (B, 4) and episode length `length` (B,), recurrences
    over (outer i, inner t), from the actions `a` (bool (B,) at (i, t)); the state carries
    over iterations. env="td": the physics in the program, resets drawn with td.rand
    (seeds = (initial state, resets)); env="udf": a NumpyCartPole with external state
    behind td.udf. Returns, at each (i, t): done (bool (B,)), the return of the episode
    ending there (or 0), the state after the step (the reset state where done), and the
    UDF environment (or None)."""
    import tidal as td

    (i, _), (t, _) = outer, inner
    af = a.astype("float32")
    if env == "td":
        nxt = physics(td, tuple(s[..., k] for k in range(OBS)), af)
        n_len = length + 1.0
        done = terminated(td, nxt) | (n_len >= max_steps)
        fresh = reset_state(td.rand(B, OBS, domain=(i, t), seed=seeds[1]))
        s_next = td.where(done[..., None], fresh, td.stack(list(nxt), -1))
        carry(s, reset_state(td.rand(B, OBS, seed=seeds[0])), s_next, outer, inner)
        carry(length, td.zeros(B), td.where(done, 0.0, n_len), outer, inner)
        return done, td.where(done, n_len, 0.0), s_next, None
    if env == "udf":
        cp = NumpyCartPole(B, seed=env_seed, max_steps=max_steps)
        init = td.udf(cp.reset, [], shape=(B, OBS), dtype="float32", name="cartpole.reset")
        s_next, _reward, donef, ep = td.udf(cp.step, [af], shapes=[(B, OBS), (B,), (B,), (B,)],
                                            dtypes=["float32"] * 4, name="cartpole.step")
        done = donef > 0.5
        carry(s, init, s_next, outer, inner)
        carry(length, td.zeros(B), td.where(done, 0.0, length + 1.0), outer, inner)
        return done, ep, s_next, cp
    raise ValueError(f"env must be 'td' or 'udf', got {env!r}")
