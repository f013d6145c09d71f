"""PPO on CartPole-v1: the JAX and PyTorch baselines of bench/rl.py.

The workload is examples/ppo.py's (same initial weights, draws fed in):
actor 4-H-H-2 and critic 4-H-H-1 (tanh), Bernoulli actions, GAE(gamma, lambda)
with value targets adv + V(s), advantages normalised over the iteration's
(T, B) samples, then K full-batch epochs of the clipped surrogate plus
vf_coef * 0.5 * mean((V - ret)^2), one Adam over all I * K updates (no
gradient clipping, as in the Tidal program). log pi_old, V(s) and V(s')
come from the iteration's acting weights.

* JaxPPO: acting in `lax.scan` inside `jit`; the learner (values, GAE as a
  reverse scan, K epochs of jax.value_and_grad + Adam) one more `jit`.
* TorchPPO: CleanRL-style: an eager acting loop under no_grad that records
  log pi_old and V(s) per step, GAE as a reversed Python loop, K full-batch
  updates with torch.optim.Adam.

`iteration(s, length, u, fresh)` steps the B environments T times with the
uniform draws u (T, B) and reset states fresh (T, B, 4), learns, and returns
(s, length, metrics), as bench/rl.py's REINFORCE baselines.
"""
from __future__ import annotations

from cartpole import ACTIONS, OBS, env_step, init_params, rollout_scan, torch_mlp

GAMMA, LAM, CLIP, VF_COEF, LR, EPOCHS = 0.99, 0.95, 0.2, 0.5, 3e-3, 4


def initial_weights(hidden, seed):
    """examples/ppo.py's: the actor's six arrays, then the critic's."""
    return (init_params([OBS, hidden, hidden, ACTIONS], seed)
            + init_params([OBS, hidden, hidden, 1], seed + 1))


def mlp(xp, ws, x):
    for k in range(0, len(ws) - 2, 2):
        x = xp.tanh(x @ ws[k] + ws[k + 1])
    return x @ ws[-2] + ws[-1]


class JaxPPO:
    def __init__(self, B, hidden, epochs=EPOCHS, gamma=GAMMA, lam=LAM, clip=CLIP, vf_coef=VF_COEF,
                 lr=LR, seed=0):
        import jax
        import jax.numpy as jnp

        self.jax, self.jnp, self.B = jax, jnp, B
        self.params = [jnp.asarray(w) for w in initial_weights(hidden, seed)]
        self.m = [jnp.zeros_like(w) for w in self.params]
        self.v = [jnp.zeros_like(w) for w in self.params]
        self.updates = 0
        self.epochs, self.gamma, self.lam, self.clip, self.vf, self.lr = epochs, gamma, lam, clip, vf_coef, lr
        self.act = jax.jit(self._act)
        self.learn = jax.jit(self._learn)

    def logp(self, params, obs):
        return self.jax.nn.log_softmax(mlp(self.jnp, params[:6], obs), -1)

    def _act(self, params, s, length, u, fresh):
        p_right = lambda x: self.jnp.exp(self.logp(params, x)[:, 1])   # noqa: E731
        (s, length), (obs, acts, dones, ep, after) = rollout_scan(self.jax, p_right, s, length, u, fresh)
        return s, length, obs, acts, dones, ep, after

    def _learn(self, params, m, v, updates, obs, acts, dones, after):
        jax, jnp, g, lam = self.jax, self.jnp, self.gamma, self.lam
        value = mlp(jnp, params[6:], obs)[..., 0]
        v_next = mlp(jnp, params[6:], after)[..., 0]
        delta = 1.0 + g * (1.0 - dones) * v_next - value

        def back(adv, x):
            d, dn = x
            adv = d + g * lam * (1.0 - dn) * adv
            return adv, adv

        _, adv = jax.lax.scan(back, jnp.zeros(dones.shape[1]), (delta, dones), reverse=True)
        ret = adv + value
        lp = self.logp(params, obs)
        lpo = jnp.where(acts > 0.5, lp[..., 1], lp[..., 0])
        advn = (adv - adv.mean()) / (jnp.sqrt(((adv - adv.mean()) ** 2).mean()) + 1e-8)

        def loss_fn(w):
            lp = self.logp(w, obs)
            ratio = jnp.exp(jnp.where(acts > 0.5, lp[..., 1], lp[..., 0]) - lpo)
            pg = -jnp.minimum(ratio * advn, jnp.clip(ratio, 1 - self.clip, 1 + self.clip) * advn).mean()
            return pg + self.vf * 0.5 * ((mlp(jnp, w[6:], obs)[..., 0] - ret) ** 2).mean()

        def epoch(carry, k):
            params, m, v = carry
            loss, grads = jax.value_and_grad(loss_fn)(params)
            b1, b2, n = 0.9, 0.999, updates + k + 1.0
            m = [b1 * a + (1 - b1) * gr for a, gr in zip(m, grads)]
            v = [b2 * a + (1 - b2) * gr * gr for a, gr in zip(v, grads)]
            params = [w - self.lr * (a / (1 - b1 ** n)) / (jnp.sqrt(c / (1 - b2 ** n)) + 1e-8)
                      for w, a, c in zip(params, m, v)]
            return (params, m, v), loss

        (params, m, v), losses = jax.lax.scan(epoch, (params, m, v), jnp.arange(self.epochs, dtype=jnp.float32))
        return params, m, v, losses

    def iteration(self, s, length, u, fresh):
        s, length, obs, acts, dones, ep, after = self.act(self.params, s, length, u, fresh)
        self.params, self.m, self.v, losses = self.learn(self.params, self.m, self.v, float(self.updates),
                                                         obs, acts, dones, after)
        self.updates += self.epochs
        return s, length, {"loss": losses, "ep_sum": ep.sum(), "ep_count": dones.sum()}


class TorchPPO:
    def __init__(self, B, hidden, epochs=EPOCHS, gamma=GAMMA, lam=LAM, clip=CLIP, vf_coef=VF_COEF,
                 lr=LR, seed=0):
        import torch

        self.torch, self.B = torch, B
        ws = initial_weights(hidden, seed)
        self.actor, self.critic = (torch_mlp(torch, ws[j:j + 6]) for j in (0, 6))
        params = list(self.actor.parameters()) + list(self.critic.parameters())
        self.opt = torch.optim.Adam(params, lr=lr, eps=1e-8)
        self.epochs, self.gamma, self.lam, self.clip, self.vf = epochs, gamma, lam, clip, vf_coef

    def params(self):
        out = []
        for net in (self.actor, self.critic):
            for lin in net[::2]:
                out += [lin.weight.detach().numpy().T, lin.bias.detach().numpy()]
        return out

    def iteration(self, s, length, u, fresh):
        torch, g, lam = self.torch, self.gamma, self.lam
        obs, acts, dones, ep, lpos, values = [], [], [], [], [], []
        with torch.no_grad():
            for uk, fk in zip(u, fresh):
                lp = torch.log_softmax(self.actor(s), -1)
                a = (uk < lp[:, 1].exp()).float()
                obs.append(s)
                values.append(self.critic(s)[:, 0])
                s, length, done, ep_k = env_step(torch, s, length, a, fk)
                acts.append(a)
                dones.append(done.float())
                ep.append(ep_k)
                lpos.append(torch.where(a > 0.5, lp[:, 1], lp[:, 0]))
            obs, acts, dones = torch.stack(obs), torch.stack(acts), torch.stack(dones)
            lpo, value = torch.stack(lpos), torch.stack(values)
            v_next = torch.cat([value[1:], self.critic(s)[None, :, 0]])   # V of the state after each step
            adv, nxt_adv = torch.zeros_like(value), torch.zeros(self.B)
            for k in reversed(range(len(value))):
                delta = 1.0 + g * (1.0 - dones[k]) * v_next[k] - value[k]
                nxt_adv = delta + g * lam * (1.0 - dones[k]) * nxt_adv
                adv[k] = nxt_adv
            ret = adv + value
            advn = (adv - adv.mean()) / (((adv - adv.mean()) ** 2).mean().sqrt() + 1e-8)
        losses = []
        for _ in range(self.epochs):
            lp = torch.log_softmax(self.actor(obs), -1)
            ratio = (torch.where(acts > 0.5, lp[..., 1], lp[..., 0]) - lpo).exp()
            pg = -torch.minimum(ratio * advn, ratio.clamp(1 - self.clip, 1 + self.clip) * advn).mean()
            loss = pg + self.vf * 0.5 * ((self.critic(obs)[..., 0] - ret) ** 2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            losses.append(loss.item())
        return s, length, {"loss": losses, "ep_sum": torch.stack(ep).sum().item(),
                           "ep_count": dones.sum().item()}
