"""REINFORCE on CartPole-v1 as one Tidal program (TEMPO Alg. 1).

Dims: iteration i and timestep t; B environments are a batch axis (every
tensor at a point (i, t) has a leading axis of size B).

* The environment is a recurrence over t: `s[i, t + 1]` is one Euler step of
  the CartPole equations (examples/cartpole.py) from `s[i, t]` and the action,
  auto-reset with `td.where` to a state drawn with `td.rand` (seeded,
  uniform(-0.05, 0.05)) when the pole falls, the cart leaves the track, or the
  episode reaches 500 steps. The environment state is carried across
  iterations: `s[i + 1, 0]` is the state after the last step of iteration i.
  With `--env udf` the same environment is a NumPy object with external state
  called through `td.udf` (reset and step).
* The policy is a 4-64-64-2 tanh MLP whose weights are recurrences over i
  (`td.nn.MLP(domain=(i,))`); actions are Bernoulli draws `u < p(right)`.
* Returns, cut at episode ends with the done mask: Monte-Carlo `r[i, t:T]`
  or n-step `r[i, t:min(t + n, T)]` (`--returns mc|nstep --n N`), both as a
  discounted sum over a window of the future. The loss is
  -mean(log pi(a|s) * A) over the iteration's (T, B) samples, A the returns
  normalised by their mean and standard deviation in the iteration;
  `td.optim.Adam` defines W[i + 1].
* Per iteration: the mean return of the episodes that ended in it (each
  reward is 1, so an episode's return is its length), printed after the run.

Defaults: B = 16, T = 32, I = 50, Adam lr 3e-3. On a 2-core machine the jax
backend takes about 20-60 s to compile and 0.3-0.6 s per iteration (XLA
kernel compilation included); `--backend reference` about 0.1 s per iteration
with no schedule to compute.

    python examples/reinforce.py                       # MC returns, defaults below
    python examples/reinforce.py --returns nstep --n 16
    python examples/reinforce.py --env udf
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tidal as td  # noqa: E402
from cartpole import ACTIONS, MAX_STEPS, OBS, define_env  # noqa: E402

# Seeds of the program's random draws (td.rand at point p draws from
# the counter-based rule of docs/semantics.md, random_draw).
SEED_INIT, SEED_ACTION, SEED_RESET = 11, 12, 13


def cut_discounted_sum(r, d, gamma):
    """sum_k gamma^k r[k] over a window (axis 0, shape (n, B)), stopping after the
    first k with d[k] = 1 (the step that ended the episode counts, later ones do not)."""
    ended_before = td.cumsum(d, 0) - d                  # episodes ended strictly before k
    return td.discounted_sum(td.where(ended_before < 0.5, r, 0.0), gamma, dim=0)


def observation_projection(obs_dim, seed):
    """The fixed (4, obs_dim) matrix P of the large observations tanh(s @ P)
    (`build(obs_dim=...)`; the baselines of bench/rl.py use the same)."""
    return np.random.default_rng(seed + 1).standard_normal((OBS, obs_dim)).astype(np.float32)


def build(B=16, hidden=64, returns="mc", n=16, gamma=0.99, lr=3e-3, env="td", baseline=True,
          model_seed=0, env_seed=0, max_steps=MAX_STEPS, debug=False, obs_dim=None):
    """The REINFORCE program. Outputs per iteration: ep_sum, ep_count (episodes that
    ended and the sum of their returns) and loss; with debug=True also the states,
    actions, dones, returns and the parameters at every iteration (for the tests).
    With obs_dim=K the policy sees a large observation instead of the 4 state
    variables: K features tanh(s @ P) of the state through a fixed random P
    (TEMPO section 7.4's large-observation setting, in miniature)."""
    with td.Program("reinforce") as p:
        (i, I), (t, T) = p.dims("i", "t")
        policy = td.nn.MLP([obs_dim or OBS, hidden, hidden, ACTIONS], activation="tanh", domain=(i,),
                           rng=np.random.default_rng(model_seed), name="policy")
        s = td.recurrent(shape=(B, OBS), domain=(i, t))          # environment state
        length = td.recurrent(shape=(B,), domain=(i, t))         # steps into the episode
        obs = s
        if obs_dim:
            proj = observation_projection(obs_dim, model_seed)
            obs = td.tanh(s @ td.param("observation_projection", proj))   # (B, obs_dim)
        logp = td.log_softmax(policy(obs), -1)                   # (B, 2)
        u = td.rand(B, domain=(i, t), seed=SEED_ACTION)
        a = u < td.exp(logp[..., 1])                             # Bernoulli(p(right)), bool
        done, ep_ret, _, p.env = define_env(s, length, a, (i, I), (t, T), B, env=env, max_steps=max_steps,
                                         env_seed=env_seed, seeds=(SEED_INIT, SEED_RESET))

        r = td.ones(B, domain=(i, t))                            # CartPole: +1 every step
        dn = done.astype("float32")
        if returns == "mc":   # per-step discounts gamma * (1 - done): the sum stops after the
            # episode's last step; sdg-lift makes these T suffix sums one reverse scan per iteration
            g = td.discounted_sum(r[i, t:T], gamma * (1.0 - dn[i, t:T]), dim=0)
        elif returns == "mc_recurrence":   # the same returns as a backward recurrence
            g = td.recurrent(shape=(B,), domain=(i, t))
            g[i, T - 1] = r[i, T - 1]
            g[i, t] = r + gamma * (1.0 - dn) * g[i, t + 1]
        elif returns == "nstep":
            g = cut_discounted_sum(r[i, t:td.min(t + n, T)], dn[i, t:td.min(t + n, T)], gamma)
        else:
            raise ValueError(f"returns must be 'mc', 'mc_recurrence' or 'nstep', got {returns!r}")
        if baseline:                                             # normalised returns
            gs = g[i, 0:T]                                       # (T, B), domain (i,)
            mu = gs.mean()
            sd = td.sqrt(((gs - mu) ** 2).mean() + 1e-8)
            adv = (g - mu) / sd
        else:
            adv = g
        lp_a = td.where(a, logp[..., 1], logp[..., 0])           # log pi(a | s)
        loss = -(lp_a * adv)[i, 0:T].mean()                      # domain (i,)
        params = policy.parameters()
        td.optim.Adam(params, lr=lr).step(td.grad(loss, params))
        p.output("loss", loss)
        p.output("ep_sum", ep_ret[i, 0:T].sum())
        p.output("ep_count", dn[i, 0:T].sum())
        p.output("alive", length[i, T - 1].mean())               # mean age of the running episodes
        if debug:
            p.output("s", s)
            p.output("a", a.astype("float32"))
            p.output("done", dn)
            p.output("g", g)
            p.output("adv", adv)
            for k, w in enumerate(params):
                p.output(f"w{k}", w)
    return p


def mean_returns(out):
    """Mean return of the episodes that ended in each iteration (nan if none did)."""
    s, c = np.asarray(out["ep_sum"], np.float64), np.asarray(out["ep_count"], np.float64)
    return np.where(c > 0, s / np.maximum(c, 1), np.nan)


def report(out, first=10):
    """Prints the learning curve; returns the mean return of the episodes that ended in
    the first and in the last `first` iterations."""
    rets = mean_returns(out)
    for k, ret in enumerate(rets):
        shown = f"{ret:7.1f}" if np.isfinite(ret) else "      -"
        print(f"iteration {k:3d}  mean episodic return {shown}  episodes {int(out['ep_count'][k]):4d}  "
              f"running episodes' mean age {float(out['alive'][k]):6.1f}  loss {float(out['loss'][k]):+.4f}")
    s, c = np.asarray(out["ep_sum"], np.float64), np.asarray(out["ep_count"], np.float64)
    q = min(first, max(1, len(rets) // 2))
    early, late = s[:q].sum() / max(c[:q].sum(), 1), s[-q:].sum() / max(c[-q:].sum(), 1)
    print(f"mean return of the episodes ended in the first {q} iterations: {early:.1f}, "
          f"in the last {q}: {late:.1f}")
    return early, late


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--returns", choices=["mc", "nstep"], default="mc")
    ap.add_argument("--n", type=int, default=16, help="n of the n-step returns")
    ap.add_argument("--env", choices=["td", "udf"], default="td")
    ap.add_argument("--B", type=int, default=16, help="parallel environments")
    ap.add_argument("--T", type=int, default=32, help="steps per iteration")
    ap.add_argument("--I", type=int, default=50, help="iterations")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--gamma", type=float, default=0.99)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=0, help="initial weights (and the UDF env's resets)")
    ap.add_argument("--backend", default="jax", choices=td.backends())
    args = ap.parse_args(argv)
    p = build(B=args.B, hidden=args.hidden, returns=args.returns, n=args.n, gamma=args.gamma,
              lr=args.lr, env=args.env, model_seed=args.seed, env_seed=args.seed)
    start = time.perf_counter()
    exe = p.compile(backend=args.backend)
    compiled = time.perf_counter()
    out = exe.run(bounds={"I": args.I, "T": args.T})
    ran = time.perf_counter()
    report(out)
    print(f"compile {compiled - start:.1f} s, run {ran - compiled:.1f} s "
          f"({1e3 * (ran - compiled) / args.I:.0f} ms/iteration"
          f"{', XLA kernel compilation included' if exe.backend_info.jit_kernels else ''}; "
          f"B={args.B}, T={args.T}, I={args.I}, {args.backend} backend)")
    if args.env == "udf":
        print(f"the UDF environment was stepped {p.env.calls} times (I * T = {args.I * args.T})")
    return out


if __name__ == "__main__":
    main()
