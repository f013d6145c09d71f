"""PPO on CartPole-v1 as one Tidal program.

Dims: iteration i, epoch k and timestep t; B environments are a batch axis. The
environment is examples/reinforce.py's (examples/cartpole.py: physics as a
recurrence over t, auto-reset, state carried across iterations, or `--env udf`).

* Actor 4-64-64-2 and critic 4-64-64-1 (the value head), tanh.
* GAE as a backward (anti-causal) recurrence over t:
      delta[t] = r[t] + gamma (1 - done[t]) V(s'[t]) - V(s[t])
      adv[T - 1] = delta[T - 1];  adv[t] = delta[t] + gamma lambda (1 - done[t]) adv[t + 1]
  and the value targets ret = adv + V(s).
* Learning reads the whole rollout of iteration i (s[i, 0:T], ...): K epochs of
  full-batch Adam steps on the clipped surrogate
  -mean(min(rho A, clip(rho, 1 - eps, 1 + eps) A)), rho = pi_k(a|s) / pi_0(a|s),
  A the normalised advantages, plus vf_coef * 0.5 * mean((V_k(s) - ret)^2).
  log pi_0 and V in the targets are constants of the loss: the acting weights
  are a tensor of their own, passed to td.grad as leaves, so no gradient flows
  through them. One Adam over all I * K steps, written out (td.optim steps along
  one dim): its moments and step count are recurrences like the weights.
* Epochs (default): a third dim k, with the weights, Adam's moments and step
  count recurrences over (i, k): W[i, k + 1] = Adam(W[i, k]) and
  W[i + 1, 0] = Adam(W[i, K - 1]); acting at iteration i uses W[i, 0]; K is a
  bound given at run time. `--unrolled`: the K epochs unrolled in Python
  instead (K Adam steps inside each iteration, two dims, 3x the ops).
* Backend: jax by default (the scheduled compiler, XLA kernels); `--backend
  numpy` runs the same schedule on NumPy, `--backend reference` the reference
  interpreter, which is for checking (measured on 2 cores: jax about 12 s to
  compile, then 35 ms per iteration at the defaults with I = 200; the reference
  interpreter 3 s, then 360 ms per iteration). The backends agree to float32 rounding,
  not bit for bit: at the defaults the printed losses are equal for 10
  iterations, then differ by about 1e-5 relative, and training amplifies that: an action sampled from a probability that
  differs in its last bits can flip, the episodes then differ, and so do the
  returns and losses from there on (test/py/programs/test_rl_examples.py checks
  two iterations of each backend against a JAX reference, within 1e-4).

    python examples/ppo.py                     # defaults below (about 20 s)
    python examples/ppo.py --env udf
    python examples/ppo.py --unrolled --epochs 2
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tidal as td  # noqa: E402
from cartpole import ACTIONS, MAX_STEPS, OBS, carry, define_env, init_params  # noqa: E402
from reinforce import SEED_ACTION, SEED_INIT, SEED_RESET, report  # noqa: E402


def mlp(ws, x):
    """tanh MLP with weights [W0, b0, W1, b1, ...] (W of shape (in, out))."""
    for k in range(0, len(ws) - 2, 2):
        x = td.tanh(x @ ws[k] + ws[k + 1])
    return x @ ws[-2] + ws[-1]


def adam_step(w, g, m, v, n, lr, b1, b2, eps):
    """Adam's moments and the updated weight (n: the 1-based step count, a tensor)."""
    m, v = b1 * m + (1.0 - b1) * g, b2 * v + (1.0 - b2) * g * g
    return m, v, w - lr * (m / (1.0 - b1 ** n)) / (td.sqrt(v / (1.0 - b2 ** n)) + eps)


def build(B=16, hidden=64, epochs=4, gamma=0.99, lam=0.95, clip=0.2, vf_coef=0.5, lr=3e-3,
          betas=(0.9, 0.999), eps=1e-8, env="td", epoch_dim=True, model_seed=0, env_seed=0,
          max_steps=MAX_STEPS, debug=False):
    """The PPO program: bounds I, T (and K with epoch_dim=True, else K = `epochs`).
    Outputs: ep_sum, ep_count, alive per iteration, loss per iteration (the last epoch's;
    per (i, k) with epoch_dim); with debug=True also the rollout, the advantages, value
    targets and ratios, and the weights at every iteration (every (i, k))."""
    b1, b2 = betas
    with td.Program("ppo") as p:
        if epoch_dim:
            (i, I), (k, K), (t, T) = p.dims("i", "k", "t")
            wdom = (i, k)
        else:
            (i, I), (t, T) = p.dims("i", "t")
            wdom = (i,)
        init = (init_params([OBS, hidden, hidden, ACTIONS], model_seed)
                + init_params([OBS, hidden, hidden, 1], model_seed + 1))
        names = [f"{net}.{j // 2}.{'weight' if j % 2 == 0 else 'bias'}"
                 for net in ("actor", "critic") for j in range(6)]
        ws = [td.recurrent(shape=w0.shape, domain=wdom, name=name) for name, w0 in zip(names, init)]
        if epoch_dim:
            acting = [w[i, 0] for w in ws]                      # W[i, 0], domain (i,)
        else:                                                   # a copy: a tensor of its own, so that
            acting = [w * 1.0 for w in ws]                      # td.grad can stop at it (see below)
        actor, critic = (lambda w, x: mlp(w[:6], x)), (lambda w, x: mlp(w[6:], x)[..., 0])

        # ---- acting: B envs over t, with the iteration's weights
        s = td.recurrent(shape=(B, OBS), domain=(i, t))
        length = td.recurrent(shape=(B,), domain=(i, t))
        logp = td.log_softmax(actor(acting, s), -1)
        a = td.rand(B, domain=(i, t), seed=SEED_ACTION) < td.exp(logp[..., 1])
        done, ep_ret, s_after, p.env = define_env(s, length, a, (i, I), (t, T), B, env=env,
                                                  max_steps=max_steps, env_seed=env_seed,
                                                  seeds=(SEED_INIT, SEED_RESET))
        dn = done.astype("float32")
        value = critic(acting, s)                                # (B,)
        lp_old = td.where(a, logp[..., 1], logp[..., 0])

        # ---- GAE: a backward (anti-causal) recurrence over t
        v_next = critic(acting, s_after)                         # V of the state after the step
        delta = 1.0 + gamma * (1.0 - dn) * v_next - value
        adv = td.recurrent(shape=(B,), domain=(i, t))
        adv[i, T - 1] = delta[i, T - 1]
        adv[i, t] = delta + gamma * lam * (1.0 - dn) * adv[i, t + 1]
        ret = adv + value

        # ---- learning from the whole rollout of iteration i
        S, A, LPO = s[i, 0:T], a[i, 0:T], lp_old[i, 0:T]         # (T, B, ...), domain (i,)
        ADV, RET = adv[i, 0:T], ret[i, 0:T]
        ADV = (ADV - ADV.mean()) / (td.sqrt(((ADV - ADV.mean()) ** 2).mean()) + 1e-8)

        def loss_and_grads(w):
            """The loss at weights w and its gradient; the acting weights are leaves of
            their own, so log pi_0 and V in the targets are constants."""
            lp = td.log_softmax(actor(w, S), -1)
            ratio = td.exp(td.where(A, lp[..., 1], lp[..., 0]) - LPO)
            pg = -td.minimum(ratio * ADV, td.clamp(ratio, 1.0 - clip, 1.0 + clip) * ADV).mean()
            loss = pg + vf_coef * 0.5 * ((critic(w, S) - RET) ** 2).mean()
            return loss, ratio, td.grad(loss, list(w) + acting)[:len(w)]

        zeros = [td.zeros(*w0.shape) for w0 in init]
        ms = [td.recurrent(shape=w0.shape, domain=wdom, name=f"{n}.adam.m") for n, w0 in zip(names, init)]
        vs = [td.recurrent(shape=w0.shape, domain=wdom, name=f"{n}.adam.v") for n, w0 in zip(names, init)]
        if epoch_dim:   # one Adam step per (i, k); everything carries from (i, K - 1) to (i + 1, 0)
            n = td.recurrent(shape=(), domain=(i, k), name="adam.step")
            carry(n, 1.0, n + 1.0, (i, I), (k, K))
            loss, ratio, grads = loss_and_grads(ws)
            for w, m, v, g, name, w0, z in zip(ws, ms, vs, grads, names, init, zeros):
                m2, v2, w2 = adam_step(w, g, m, v, n, lr, b1, b2, eps)
                carry(m, z, m2, (i, I), (k, K))
                carry(v, z, v2, (i, I), (k, K))
                carry(w, td.param(name, w0), w2, (i, I), (k, K))
        else:           # the K epochs unrolled: K Adam steps per iteration
            w, m, v = list(ws), list(ms), list(vs)
            for e in range(epochs):
                n = (td.symbol(i) * epochs + (e + 1)).astype("float32")
                loss, r, grads = loss_and_grads(w)
                ratio = r if e == 0 else ratio
                steps = [adam_step(wk, g, mk, vk, n, lr, b1, b2, eps) for wk, mk, vk, g in zip(w, m, v, grads)]
                m, v, w = ([st[j] for st in steps] for j in range(3))
            for x, x0, nxt in zip(ws + ms + vs, [td.param(nm, w0) for nm, w0 in zip(names, init)] + zeros + zeros,
                                  w + m + v):
                x[0] = x0
                x[i + 1] = nxt

        p.output("loss", loss)
        p.output("ep_sum", ep_ret[i, 0:T].sum())
        p.output("ep_count", dn[i, 0:T].sum())
        p.output("alive", length[i, T - 1].mean())
        if debug:
            for name, x in (("s", s), ("a", a.astype("float32")), ("done", dn), ("value", value),
                            ("v_next", v_next), ("adv", adv), ("ret", ret), ("ratio", ratio)):
                p.output(name, x)
            for j, w in enumerate(ws):
                p.output(f"w{j}", w)
    return p


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", choices=["td", "udf"], default="td")
    ap.add_argument("--B", type=int, default=16, help="parallel environments")
    ap.add_argument("--T", type=int, default=32, help="steps per iteration")
    ap.add_argument("--I", type=int, default=50, help="iterations")
    ap.add_argument("--epochs", type=int, default=4, help="full-batch updates per iteration (K)")
    ap.add_argument("--unrolled", action="store_true", help="epochs unrolled in Python (see above)")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backend", default="jax", choices=td.backends())
    args = ap.parse_args(argv)
    p = build(B=args.B, hidden=args.hidden, epochs=args.epochs, lr=args.lr, env=args.env,
              epoch_dim=not args.unrolled, model_seed=args.seed, env_seed=args.seed)
    start = time.perf_counter()
    exe = p.compile(backend=args.backend)
    compiled = time.perf_counter()
    out = exe.run(bounds={"I": args.I, "T": args.T, **({} if args.unrolled else {"K": args.epochs})})
    ran = time.perf_counter()
    if not args.unrolled:
        out = dict(out, loss=np.asarray(out["loss"])[:, -1])  # the last epoch's loss per iteration
    report(out)
    print(f"compile {compiled - start:.1f} s, run {ran - compiled:.1f} s "
          f"({1e3 * (ran - compiled) / args.I:.0f} ms/iteration"
          f"{', XLA kernel compilation included' if exe.backend_info.jit_kernels else ''}; "
          f"B={args.B}, T={args.T}, I={args.I}, K={args.epochs}, {args.backend} backend)")
    return out


if __name__ == "__main__":
    main()
