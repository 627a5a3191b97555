"""Environment steps per second from Python (VecDungeon.step in a Python
loop) against the engine's own C loop on the same batch (VecDungeon.bench_c),
at 64, 1024 and 4096 environments.  With --reward FILE both loops score
every step with the reward file in the binary's confined worker.

    make bench-python            (or: python3 python/bench.py [--seconds S] [--rounds R] [--reward scenario1|FILE])
"""
import argparse
import os
import platform
import time

import numpy as np

import pcgrllm


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    threads = os.environ.get("OMP_NUM_THREADS", "all")
    return "%s, %d CPUs (%s threads), Python %s" % (model, len(os.sched_getaffinity(0)), threads,
                                                    platform.python_version())


def python_rate(env, seconds):
    # actions drawn ahead of the clock, as a policy's would arrive as arrays
    rng = np.random.default_rng(0)
    actions = rng.integers(0, env.n_actions, size=(64, env.num_envs)).astype(np.int32)
    env.reset(seed=1)
    for k in range(20):  # warm-up
        env.step(actions[k % 64])
    steps, t0, el = 0, time.perf_counter(), 0.0
    while el < seconds:
        for k in range(64):
            env.step(actions[k])
        steps += 64 * env.num_envs
        el = time.perf_counter() - t0
    return steps / el


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement (default 2)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="measure the C and the Python loop in turn this many times and print the medians "
                    "(default 1; on a shared machine more rounds see the same load)")
    ap.add_argument("--reward", help="score every step with a human reward (%s) or a reward file, run in the "
                    "binary's confined worker" % ", ".join(pcgrllm.VecDungeon.REWARDS))
    args = ap.parse_args()
    if not args.reward:
        what = "no reward"
    elif args.reward in pcgrllm.VecDungeon.REWARDS:
        what = args.reward + " human reward"
    else:
        what = "reward file %s in the confined worker" % args.reward
    print("environment steps/s, dungeon 16x16, 31x31 compact observation each step, %s" % what)
    print("machine: %s" % machine())
    print("%8s %14s %14s %8s" % ("envs", "Python loop", "C loop", "Python/C"))
    for n in (64, 1024, 4096):
        env = pcgrllm.VecDungeon(n, seed=1, reward=args.reward)
        env.bench_c(0.2)  # warm-up
        cs, ps = [], []
        for _ in range(max(1, args.rounds)):
            cs.append(env.bench_c(args.seconds))
            ps.append(python_rate(env, args.seconds))
        c, p = float(np.median(cs)), float(np.median(ps))
        print("%8d %14.0f %14.0f %7.2fx" % (n, p, c, p / c))
        env.close()


if __name__ == "__main__":
    main()
