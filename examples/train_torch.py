"""A small advantage actor-critic on pcgrllm.VecDungeon with PyTorch: the
engine steps the batch, PyTorch learns from its arrays.  An example of the
Python package, not the engine's trainer (that is `pcgrllm train`,
docs/training.md); it needs torch, which the package does not depend on.

    make lib && pip install ./python torch
    python3 examples/train_torch.py --envs 256 --updates 200 --reward scenario1
"""
import argparse
import time

import numpy as np
import torch
import torch.nn as nn

import pcgrllm

N_TILES = 10  # tile ids 0..9 in an observation (0: border)
FROZEN_BIT = 0x10  # added to a cell's tile id where the cell is frozen (docs/python.md)


class Policy(nn.Module):
    """One-hot tiles, two convolutions, then policy logits and a value."""

    def __init__(self, obs_shape, n_actions):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(N_TILES + 1, 32, 3, stride=2), nn.ReLU(),
            nn.Conv2d(32, 64, 3, stride=2), nn.ReLU(), nn.Flatten())
        with torch.no_grad():
            width = self.body(torch.zeros(1, N_TILES + 1, *obs_shape)).shape[1]
        self.pi = nn.Linear(width, n_actions)
        self.v = nn.Linear(width, 1)

    def forward(self, obs):
        # obs: uint8 (n, h, w) -> one-hot tiles and the frozen plane (n, N_TILES + 1, h, w)
        cells = obs.long()
        tiles = nn.functional.one_hot(cells & (FROZEN_BIT - 1), N_TILES).permute(0, 3, 1, 2).float()
        frozen = ((cells & FROZEN_BIT) != 0).float().unsqueeze(1)
        x = torch.cat([tiles, frozen], dim=1)
        z = self.body(x)
        return self.pi(z), self.v(z).squeeze(-1)


def advantages(rewards, values, dones, last_value, gamma, lam):
    """GAE over a rollout (T, n); an auto-reset cuts the bootstrap."""
    adv = torch.zeros_like(rewards)
    running = torch.zeros_like(last_value)
    for t in reversed(range(rewards.shape[0])):
        nxt = last_value if t == rewards.shape[0] - 1 else values[t + 1]
        keep = 1.0 - dones[t]
        delta = rewards[t] + gamma * nxt * keep - values[t]
        running = delta + gamma * lam * keep * running
        adv[t] = running
    return adv


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--envs", type=int, default=256)
    ap.add_argument("--updates", type=int, default=200)
    ap.add_argument("--rollout", type=int, default=32, help="steps per update")
    ap.add_argument("--reward", default="scenario1", choices=pcgrllm.VecDungeon.REWARDS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=3e-4)
    args = ap.parse_args()
    torch.manual_seed(args.seed)

    scenario = int(args.reward[-1])
    # a key-door scenario is played on the treasure variant (docs/method.md#scenarios)
    kind = pcgrllm.evaluate([np.ones((5, 5), np.uint8)], scenario)["target"]["kind"]
    variant = "treasure" if kind == "key-door" else "dungeon"
    env = pcgrllm.VecDungeon(args.envs, variant=variant, seed=args.seed, reward=args.reward)
    net = Policy(env.obs_shape, env.n_actions)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    obs, _ = env.reset()
    t0 = time.time()
    for update in range(args.updates):
        o_buf, a_buf, r_buf, d_buf, v_buf, lp_buf = [], [], [], [], [], []
        for _ in range(args.rollout):
            ob = torch.from_numpy(obs.copy())  # the engine overwrites obs on the next step
            with torch.no_grad():
                logits, value = net(ob)
            dist = torch.distributions.Categorical(logits=logits)
            action = dist.sample()
            obs, reward, terminated, truncated, info = env.step(action.numpy())
            o_buf.append(ob)
            a_buf.append(action)
            lp_buf.append(dist.log_prob(action))
            v_buf.append(value)
            r_buf.append(torch.from_numpy(reward.copy()))
            d_buf.append(torch.from_numpy((terminated | truncated).astype(np.float32)))
        with torch.no_grad():
            _, last_value = net(torch.from_numpy(obs.copy()))
        values, rewards, dones = torch.stack(v_buf), torch.stack(r_buf), torch.stack(d_buf)
        adv = advantages(rewards, values, dones, last_value, gamma=0.99, lam=0.95)
        returns = adv + values
        logits, value = net(torch.cat(o_buf))
        dist = torch.distributions.Categorical(logits=logits)
        adv_flat = adv.flatten()
        adv_flat = (adv_flat - adv_flat.mean()) / (adv_flat.std() + 1e-8)
        loss = (-(dist.log_prob(torch.cat(a_buf)) * adv_flat).mean()
                + 0.5 * (value - returns.flatten()).pow(2).mean()
                - 0.01 * dist.entropy().mean())
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 0.5)
        opt.step()
        if update % 10 == 0 or update == args.updates - 1:
            log = info["log"]
            mean_ret = log["episode_return"] / log["episodes"] if log["episodes"] else float("nan")
            steps = (update + 1) * args.rollout * args.envs
            print("update %4d  steps %9d  episodes %6d  mean return %8.3f  loss %7.3f  %6.0f steps/s"
                  % (update, steps, log["episodes"], mean_ret, loss.item(), steps / (time.time() - t0)))
    # score the levels of the episodes in progress against the reward's scenario
    doc = pcgrllm.evaluate(env.maps, scenario)
    print("fitness of the current maps against scenario %d: %.3f" % (scenario, doc["fitness"]))


if __name__ == "__main__":
    main()
