"""REINFORCE and PPO on CartPole-v1: Tidal against a JAX actor-learner and a PyTorch eager baseline.

    python bench/rl.py                     # every configuration (one process each, bench/harness.py)
    python bench/rl.py --only nstep --only jax
    python bench/rl.py --only ppo

PPO (returns "ppo"): examples/ppo.py's program (epochs as a dim k, K = 4 full-batch
epochs per iteration, GAE(0.99, 0.95), clip 0.2, Adam lr 3e-3) against
bench/ppo_baselines.py's JaxPPO and TorchPPO, same B, T, I and initial weights.
The default pipeline's sdg-tile runs each epoch's loss and backward pass 16
steps (1024 rows, 256 KB a 64-wide activation, which stays in cache) at a
time, the weight gradients summed over the tiles (TEMPO's spatial -> temporal
tiling, used for speed); tidal-untiled (PPO only) is the same program without
sdg-tile, every epoch over all 12800 rows at once (3.3 MB a value).
The rest of this docstring describes REINFORCE; PPO is measured the same way.

Large observations ("obs": 4096, TEMPO section 7.4 in miniature): the policy sees
tanh(s @ P), 4096 features of the state through a fixed random P, B = 16, I = 5,
no return normalisation (TEMPO's Alg. 1). tidal-batched is the same program with
the learner batched whatever its blocks' size (sdg-vectorize{max-block-bytes=0},
no sdg-accumulate: Tidal's default before both): its (T, 4096, 64) weight-gradient
block is what the default now keeps per step and sums along t.

Workload (all systems): B = 64 CartPoles stepped T = 200 times per iteration,
environment state carried across iterations with auto-reset (examples/cartpole.py),
a 4-64-64-2 tanh policy with the same initial weights (td.nn.MLP's init),
Bernoulli actions, returns cut at episode ends (Monte-Carlo, or n-step with
n = 8), normalised over the iteration's (T, B) samples, loss
-mean(log pi(a|s) * adv), Adam(lr 1e-2), I = 20 iterations.

* tidal: examples/reinforce.py's program (acting, returns, gradient and Adam in
  one program over dims (i, t)), jax backend. compile_s = p.compile() plus a
  warm-up run with I = 3 (it compiles the XLA kernels and loops of every part
  of the schedule; `compiles_in_timed_run` checks none is left); ms_per_iter =
  the timed run of I iterations / I.
* jax: acting in `lax.scan` inside `jit` (one call per iteration), learner in
  `jit` (returns, jax.grad, Adam written out). compile_s = lowering and
  compiling both; ms_per_iter = I iterations / I.
* tidal-ref: the same program on Tidal's reference interpreter (no schedule:
  evaluation on demand, memoised; compile_s = p.compile()).
* torch: CleanRL-style eager loop (acting step by step under no_grad, then one
  batched forward/backward and torch.optim.Adam), one thread. compile_s = 0.

The systems draw their random numbers from different generators (Tidal:
the counter-based rule of docs/semantics.md at [seed, i, t]; JAX: jax.random; PyTorch: torch.Generator),
so mean returns agree only statistically; the tests (test/py/programs/test_rl_examples.py)
check the systems equal when fed the same draws. mean_return is the mean return
of the episodes that ended in the last 5 iterations.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))

from cartpole import (ACTIONS, OBS, env_step, init_params, reset_state, rollout_scan,  # noqa: E402
                      torch_mlp)
from reinforce import observation_projection as projection  # noqa: E402

B, T, I, HIDDEN, GAMMA, LR, NSTEP = 64, 200, 20, 64, 0.99, 1e-2, 8
LAST = 5  # mean_return over the episodes that ended in the last LAST iterations
OBS_LARGE, B_LARGE = 4096, 16   # the large-observation configurations ("obs")


# ---------------------------------------------------------------------------------- JAX
class JaxReinforce:
    """Actor-learner REINFORCE in JAX: `act` (lax.scan over t, jitted) and `learn` (jitted)."""

    def __init__(self, B, hidden, returns="mc", n=NSTEP, gamma=GAMMA, lr=LR, seed=0, obs_dim=None, baseline=True):
        import jax
        import jax.numpy as jnp

        self.jax, self.jnp, self.B = jax, jnp, B
        self.proj = None if not obs_dim else jnp.asarray(projection(obs_dim, seed))
        self.baseline = baseline
        self.params = [jnp.asarray(w) for w in init_params([obs_dim or OBS, hidden, hidden, ACTIONS], seed)]
        self.m = [jnp.zeros_like(w) for w in self.params]
        self.v = [jnp.zeros_like(w) for w in self.params]
        self.it = 0
        self.returns, self.n, self.gamma, self.lr = returns, n, gamma, lr
        self.act = jax.jit(self._act)
        self.learn = jax.jit(self._learn)

    def logp(self, params, obs):
        jnp = self.jnp
        h = obs if self.proj is None else jnp.tanh(obs @ self.proj)
        for k in range(0, len(params) - 2, 2):
            h = jnp.tanh(h @ params[k] + params[k + 1])
        return self.jax.nn.log_softmax(h @ params[-2] + params[-1], -1)

    def _act(self, params, s, length, u, fresh):
        """Steps the B envs with draws u (T, B) and reset states fresh (T, B, 4)."""
        p_right = lambda x: self.jnp.exp(self.logp(params, x)[:, 1])   # noqa: E731
        (s, length), (obs, acts, dones, ep, _) = rollout_scan(self.jax, p_right, s, length, u, fresh)
        return s, length, obs, acts, dones, ep

    def discounted(self, dones):
        """Returns (T, B) of unit rewards cut at episode ends (MC or n-step)."""
        jnp, g = self.jnp, self.gamma
        if self.returns == "mc":
            def back(G, d):
                G = 1.0 + g * (1.0 - d) * G
                return G, G
            _, Gs = self.jax.lax.scan(back, jnp.zeros(dones.shape[1]), dones, reverse=True)
            return Gs
        Tn = dones.shape[0]
        pad = jnp.concatenate([dones, jnp.ones((self.n, dones.shape[1]))])   # past T: cut
        G, keep = jnp.zeros_like(dones), jnp.ones_like(dones)
        for k in range(self.n):
            inside = (jnp.arange(Tn) + k < Tn)[:, None]
            G = G + jnp.where(inside, keep * g ** k, 0.0)
            keep = keep * (1.0 - pad[k:k + Tn])
        return G

    def _learn(self, params, m, v, it, obs, acts, dones):
        jnp = self.jnp
        G = self.discounted(dones)
        adv = (G - G.mean()) / jnp.sqrt(((G - G.mean()) ** 2).mean() + 1e-8) if self.baseline else G

        def loss_fn(params):
            lp = self.logp(params, obs)
            return -(jnp.where(acts > 0.5, lp[..., 1], lp[..., 0]) * adv).mean()

        loss, grads = self.jax.value_and_grad(loss_fn)(params)
        b1, b2, n = 0.9, 0.999, it + 1.0
        m = [b1 * a + (1 - b1) * g for a, g in zip(m, grads)]
        v = [b2 * a + (1 - b2) * g * g for a, g in zip(v, grads)]
        params = [w - self.lr * (a / (1 - b1 ** n)) / (jnp.sqrt(c / (1 - b2 ** n)) + 1e-8)
                  for w, a, c in zip(params, m, v)]
        return params, m, v, loss

    def iteration(self, s, length, u, fresh):
        s, length, obs, acts, dones, ep = self.act(self.params, s, length, u, fresh)
        self.params, self.m, self.v, loss = self.learn(self.params, self.m, self.v,
                                                       float(self.it), obs, acts, dones)
        self.it += 1
        return s, length, {"loss": loss, "ep_sum": ep.sum(), "ep_count": dones.sum(), "obs": obs,
                           "acts": acts, "dones": dones}


# ------------------------------------------------------------------------------ PyTorch
class TorchReinforce:
    """CleanRL-style REINFORCE: an eager acting loop, then one batched update."""

    def __init__(self, B, hidden, returns="mc", n=NSTEP, gamma=GAMMA, lr=LR, seed=0, obs_dim=None, baseline=True):
        import torch

        self.torch, self.B = torch, B
        self.proj = None if not obs_dim else torch.from_numpy(projection(obs_dim, seed))
        self.baseline = baseline
        self.net = torch_mlp(torch, init_params([obs_dim or OBS, hidden, hidden, ACTIONS], seed))
        self.opt = torch.optim.Adam(self.net.parameters(), lr=lr, eps=1e-8)
        self.returns, self.n, self.gamma = returns, n, gamma

    def policy(self, s):
        return self.net(s if self.proj is None else self.torch.tanh(s @ self.proj))

    def params(self):
        out = []
        for lin in self.net[::2]:
            out += [lin.weight.detach().numpy().T, lin.bias.detach().numpy()]
        return out

    def discounted(self, dones):
        torch, g = self.torch, self.gamma
        Tn = dones.shape[0]
        G = torch.zeros_like(dones)
        if self.returns == "mc":
            nxt = torch.zeros(dones.shape[1])
            for k in reversed(range(Tn)):
                nxt = 1.0 + g * (1.0 - dones[k]) * nxt
                G[k] = nxt
            return G
        for k in range(Tn):
            keep, acc = torch.ones(dones.shape[1]), torch.zeros(dones.shape[1])
            for j in range(min(self.n, Tn - k)):
                acc = acc + keep * g ** j
                keep = keep * (1.0 - dones[k + j])
            G[k] = acc
        return G

    def iteration(self, s, length, u, fresh):
        torch = self.torch
        obs, acts, dones, ep = [], [], [], []
        with torch.no_grad():
            for uk, fk in zip(u, fresh):
                p1 = torch.softmax(self.policy(s), -1)[:, 1]
                a = (uk < p1).float()
                obs.append(s)
                s, length, done, ep_k = env_step(torch, s, length, a, fk)
                acts.append(a)
                dones.append(done.float())
                ep.append(ep_k)
        obs, acts, dones = torch.stack(obs), torch.stack(acts), torch.stack(dones)
        G = self.discounted(dones)
        adv = (G - G.mean()) / torch.sqrt(((G - G.mean()) ** 2).mean() + 1e-8) if self.baseline else G
        lp = torch.log_softmax(self.policy(obs), -1)
        loss = -(torch.where(acts > 0.5, lp[..., 1], lp[..., 0]) * adv).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return s, length, {"loss": loss.item(), "ep_sum": torch.stack(ep).sum().item(),
                           "ep_count": dones.sum().item()}


# ----------------------------------------------------------------------------- measure
def _mean_return(ep_sum, ep_count):
    s, c = float(np.sum(ep_sum[-LAST:])), float(np.sum(ep_count[-LAST:]))
    return s / c if c else float("nan")


def measure_tidal(cfg):
    import reinforce
    import tidal as td

    backend = {"tidal": "jax", "tidal-batched": "jax", "tidal-untiled": "jax", "tidal-ref": "reference"}[cfg["system"]]
    passes = None
    if cfg["system"] == "tidal-untiled":   # each epoch computed over all its rows at once
        passes = td.default_passes(without=["sdg-tile"])
    if cfg["system"] == "tidal-batched":   # the learner batched whatever its blocks' size (before sdg-accumulate)
        passes = td.default_passes(without=["sdg-accumulate"], options={"sdg-vectorize": "max-block-bytes=0"})
    if cfg["returns"] == "ppo":
        import ppo
        import ppo_baselines as pb

        p = ppo.build(B=cfg["B"], hidden=HIDDEN, epochs=pb.EPOCHS, gamma=pb.GAMMA, lam=pb.LAM, clip=pb.CLIP,
                      vf_coef=pb.VF_COEF, lr=pb.LR, model_seed=cfg["seed"])
        bounds = {"I": cfg["I"], "T": cfg["T"], "K": pb.EPOCHS}
    else:
        p = reinforce.build(B=cfg["B"], hidden=HIDDEN, returns=cfg["returns"], n=NSTEP, gamma=GAMMA, lr=LR,
                            model_seed=cfg["seed"], obs_dim=cfg.get("obs"), baseline=not cfg.get("obs"))
        bounds = {"I": cfg["I"], "T": cfg["T"]}
    start = time.perf_counter()
    exe = p.compile(backend=backend, passes=passes)
    compile_s = time.perf_counter() - start
    first_run_s = None
    if backend == "jax":
        # warm-up at the timed bounds: XLA kernels and loops. The iteration loop runs
        # inside XLA with its stores packed at power-of-two capacities of I, so another
        # I of the same capacity (17..32 here) does not compile again, but a smaller
        # warm-up would (compiles_in_timed_run says so if it happens)
        start = time.perf_counter()
        exe.run(bounds=bounds)
        first_run_s = time.perf_counter() - start
    compiled = exe.compiled.compiles() if backend == "jax" else 0
    start = time.perf_counter()
    out = exe.run(bounds=bounds)
    run_s = time.perf_counter() - start
    res = {"ms_per_iter": 1e3 * run_s / cfg["I"], "compile_s": compile_s, "first_run_s": first_run_s,
           "mean_return": _mean_return(out["ep_sum"], out["ep_count"]),
           "curve": reinforce.mean_returns(out).round(2)}
    stats = getattr(exe, "stats", None)
    if stats is not None and backend == "jax":
        res["stats"] = stats()
        res["compiles_in_timed_run"] = exe.compiled.compiles() - compiled
        res["live_mb"] = exe.memory_report().peak_bytes / 2**20
    return res


def _jax_agent(cfg):
    if cfg["returns"] == "ppo":
        from ppo_baselines import JaxPPO
        return JaxPPO(cfg["B"], HIDDEN, seed=cfg["seed"])
    return JaxReinforce(cfg["B"], HIDDEN, cfg["returns"], seed=cfg["seed"], obs_dim=cfg.get("obs"),
                        baseline=not cfg.get("obs"))


def measure_jax(cfg):
    import jax
    import jax.numpy as jnp

    agent = _jax_agent(cfg)
    Bn, Tn = cfg["B"], cfg["T"]
    draw = jax.jit(lambda key: (jax.random.uniform(jax.random.fold_in(key, 0), (Tn, Bn)),
                                reset_state(jax.random.uniform(jax.random.fold_in(key, 1), (Tn, Bn, OBS)))))
    key = jax.random.PRNGKey(cfg["seed"])
    s = reset_state(jax.random.uniform(jax.random.fold_in(key, 2), (Bn, OBS)))
    length = jnp.zeros(Bn)
    start = time.perf_counter()                                  # compile act, learn, draw
    u, fresh = draw(key)
    shapes = agent.act.lower(agent.params, s, length, u, fresh).compile()
    _, _, obs, acts, dones, *rest = shapes(agent.params, s, length, u, fresh)
    learned = (obs, acts, dones) + ((rest[1],) if cfg["returns"] == "ppo" else ())   # PPO: the states after
    learn = agent.learn.lower(agent.params, agent.m, agent.v, 0.0, *learned).compile()
    compile_s = time.perf_counter() - start
    # what the larger of the two jitted steps holds: arguments, results, temporaries (XLA's analysis)
    live = max(m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
               for m in (shapes.memory_analysis(), learn.memory_analysis()))
    sums, counts = [], []
    start = time.perf_counter()
    for it in range(cfg["I"]):
        u, fresh = draw(jax.random.fold_in(key, 100 + it))
        s, length, m = agent.iteration(s, length, u, fresh)
        sums.append(m["ep_sum"])
        counts.append(m["ep_count"])
    sums, counts = np.array(jax.device_get(sums)), np.array(jax.device_get(counts))
    run_s = time.perf_counter() - start
    return {"ms_per_iter": 1e3 * run_s / cfg["I"], "compile_s": compile_s, "live_mb": live / 2**20,
            "mean_return": _mean_return(sums, counts),
            "curve": np.round(sums / np.maximum(counts, 1), 2)}


def measure_torch(cfg):
    from harness import single_thread_torch

    single_thread_torch()
    import torch

    if cfg["returns"] == "ppo":
        from ppo_baselines import TorchPPO
        agent = TorchPPO(cfg["B"], HIDDEN, seed=cfg["seed"])
    else:
        agent = TorchReinforce(cfg["B"], HIDDEN, cfg["returns"], seed=cfg["seed"], obs_dim=cfg.get("obs"),
                               baseline=not cfg.get("obs"))
    gen = torch.Generator().manual_seed(cfg["seed"])
    s = reset_state(torch.rand(cfg["B"], OBS, generator=gen))
    length = torch.zeros(cfg["B"])
    sums, counts = [], []
    start = time.perf_counter()
    for _ in range(cfg["I"]):
        u = torch.rand(cfg["T"], cfg["B"], generator=gen)
        fresh = reset_state(torch.rand(cfg["T"], cfg["B"], OBS, generator=gen))
        s, length, m = agent.iteration(s, length, u, fresh)
        sums.append(m["ep_sum"])
        counts.append(m["ep_count"])
    run_s = time.perf_counter() - start
    sums, counts = np.array(sums), np.array(counts)
    return {"ms_per_iter": 1e3 * run_s / cfg["I"], "compile_s": 0.0,
            "mean_return": _mean_return(sums, counts),
            "curve": np.round(sums / np.maximum(counts, 1), 2)}


def measure(cfg):
    return {"tidal": measure_tidal, "tidal-batched": measure_tidal, "tidal-untiled": measure_tidal,
            "tidal-ref": measure_tidal, "jax": measure_jax,
            "torch": measure_torch}[cfg["system"]](cfg)


CONFIGS = [{"system": s, "returns": r, "B": B, "T": T, "I": I, "seed": 0}
           for r in ("mc", "nstep", "ppo") for s in ("jax", "torch", "tidal", "tidal-ref")
           if not (r == "ppo" and s == "tidal-ref")]   # the interpreter: minutes per PPO iteration
CONFIGS += [{"system": "tidal-untiled", "returns": "ppo", "B": B, "T": T, "I": I, "seed": 0}]
CONFIGS += [{"system": s, "returns": r, "B": B_LARGE, "T": T, "I": 5, "seed": 0, "obs": OBS_LARGE}
            for r in ("mc", "nstep") for s in ("jax", "torch", "tidal", "tidal-batched")]

if __name__ == "__main__":
    from harness import main

    main("rl", CONFIGS, measure, key=("returns", "B", "T", "I", "obs"),
         metrics=["ms_per_iter", "compile_s", "mean_return", "live_mb"], timeout=1800.0)
