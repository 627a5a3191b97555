"""Reward files in VecDungeon: checked by `pcgrllm check-reward`, run only
in the binary's confined worker (docs/python.md)."""
import ctypes
import os
import subprocess
import time

import numpy as np
import pytest

import pcgrllm
from pcgrllm._lib import errbuf

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.join(ROOT, "python", "tests", "rewards")
SCENARIO1 = os.path.join(ROOT, "rewards", "human", "scenario1.c")


@pytest.fixture
def cpu_check(monkeypatch):
    # check-reward's NVRTC compile beside the CPU check takes seconds and
    # decides nothing about the CPU's rewards these tests compare
    monkeypatch.setenv("PCGRLLM_NVRTC", "off")


@pytest.mark.parametrize("n", [1, 13, 600])  # 600: two chunks (reward_jit/batch_reward.h)
def test_reward_file_equals_the_engine_reward(n, cpu_check):
    native = pcgrllm.VecDungeon(n, seed=4, reward="scenario1")
    worker = pcgrllm.VecDungeon(n, seed=4, reward=SCENARIO1)
    native.reset()
    worker.reset()
    ended = 0
    # past the end of the first episodes (768 steps): auto-reset included
    for t in range(800):
        actions = native.random_actions(9, t)
        _, ra, _, ta, ia = native.step(actions)
        _, rb, _, tb, ib = worker.step(actions)
        assert np.array_equal(ra.view(np.uint32), rb.view(np.uint32)), "step %d" % t
        assert np.array_equal(native.obs, worker.obs) and np.array_equal(ta, tb)
        assert ia["log"] == ib["log"]
        if ta.any():
            ended += 1
            assert np.array_equal(ia["final_maps"], ib["final_maps"])
    assert ended == 1 and ia["log"]["episodes"] == n
    assert (ra != 0).any() or ia["log"]["episode_return"] != 0
    # a reset with a new seed keeps the worker
    native.reset(seed=11)
    worker.reset(seed=11)
    for t in range(50):
        actions = native.random_actions(3, t)
        assert np.array_equal(native.step(actions)[1].view(np.uint32), worker.step(actions)[1].view(np.uint32))
    # the C loop through the worker runs the same steps
    assert worker.bench_c(0.05) > 0
    worker.close()
    native.close()


def check_reward_line(pcgrllm_bin, path):
    done = subprocess.run([pcgrllm_bin, "check-reward", "--variant", "dungeon", path], capture_output=True, text=True)
    assert done.returncode == 1
    return done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("name", ["bad_include.c", "bad_fopen.c", "bad_system.c", "bad_null.c",
                                  "bad_infinite_loop.c", "bad_nan.c"])
def test_refused_reward_raises_check_rewards_line(name, pcgrllm_bin):
    path = os.path.join(ROOT, "rewards", "test", name)
    line = check_reward_line(pcgrllm_bin, path)
    with pytest.raises(pcgrllm.PcgError) as e:
        pcgrllm.VecDungeon(4, reward=path)
    assert str(e.value) == line


def test_reward_touching_files_never_runs_here(pcgrllm_bin, tmp_path, cpu_check):
    target = tmp_path / "touched"
    # refused by the checks: check-reward's own line, and no file
    hostile = tmp_path / "touch_file.c"
    hostile.write_text(open(os.path.join(HERE, "touch_file.c")).read().replace("TOUCHED_PATH", str(target)))
    line = check_reward_line(pcgrllm_bin, str(hostile))
    with pytest.raises(pcgrllm.PcgError) as e:
        pcgrllm.VecDungeon(4, reward=str(hostile))
    assert str(e.value) == line and "'fopen' is not available" in line
    # past the check, straight to the worker: it refuses to compile it, and
    # nothing in this process ever compiled or ran it
    env = pcgrllm.VecDungeon(4)
    err = errbuf()
    rc = env._lib.pcg_vec_set_reward_file(env._h, pcgrllm_bin.encode(), hostile.read_bytes(), 5.0, err, len(err))
    assert rc == -1 and err.value.decode() == "reward worker: could not compile the reward"
    env.step(np.zeros(4, dtype=np.int32))  # still a working environment, reward 0
    assert (env.rewards == 0).all()
    env.close()
    assert not target.exists()
    # accepted by the checks (it behaves on their levels), it then makes the
    # creat system call itself: the worker's seccomp filter stops it
    gadget = tmp_path / "creat_gadget.c"
    gadget.write_text(open(os.path.join(HERE, "creat_gadget.c")).read().replace("TOUCHED_PATH", str(target)))
    with pytest.warns(UserWarning, match="returned 0 on every one"):
        env = pcgrllm.VecDungeon(4, reward=str(gadget))
    with pytest.raises(pcgrllm.PcgError) as e:
        env.step(np.zeros(4, dtype=np.int32))
    assert str(e.value) == "reward worker: crashed with SIGSYS (forbidden system call)"
    env.close()
    assert not target.exists()


def run_until_failure(env, steps):
    """Steps until the worker fails; the maps of the last finished step."""
    kept = None
    for t in range(steps):
        try:
            env.step(env.random_actions(1, t))
        except pcgrllm.PcgError as e:
            return t, str(e), kept
        kept = env.maps.copy()
    return steps, None, kept


def test_crashing_reward_raises_one_line(cpu_check):
    # accepted by the check (16x16), it crashes on the 20x20 maps here
    env = pcgrllm.VecDungeon(8, size=20, seed=2, reward=os.path.join(HERE, "crash_wide.c"))
    t, msg, _ = run_until_failure(env, 5)
    assert t == 0 and msg == "reward worker: crashed with SIGSEGV (invalid memory access)"
    # the step was finished with rewards 0; the environment stays usable
    assert env.steps.tolist() == [1] * 8 and (env.rewards == 0).all()
    with pytest.raises(pcgrllm.PcgError, match="^reward worker: crashed with SIGSEGV"):
        env.step(env.random_actions(1, 1))
    env.close()
    # on 16x16 maps the same reward runs
    ok = pcgrllm.VecDungeon(8, seed=2, reward=os.path.join(HERE, "crash_wide.c"))
    for t in range(20):
        ok.step(ok.random_actions(1, t))
    ok.close()


def test_endless_reward_stopped_by_the_watchdog(cpu_check):
    env = pcgrllm.VecDungeon(4, size=20, reward=os.path.join(HERE, "loop_wide.c"), reward_timeout=1.0)
    t0 = time.monotonic()
    with pytest.raises(pcgrllm.PcgError) as e:
        env.step(np.zeros(4, dtype=np.int32))
    assert time.monotonic() - t0 < 10
    assert str(e.value) == "reward worker: the reward did not return within 1 s (an endless loop?); killed"
    env.close()


def test_nonfinite_reward_raises_and_keeps_the_step(cpu_check):
    env = pcgrllm.VecDungeon(4, size=20, reward=os.path.join(HERE, "nan_wide.c"))
    with pytest.raises(pcgrllm.PcgError, match="^the reward returned NaN for environment 0, which is not finite$"):
        env.step(np.zeros(4, dtype=np.int32))
    assert env.steps.tolist() == [1] * 4
    env.close()


def test_missing_binary_is_one_line(monkeypatch):
    monkeypatch.setenv("PCGRLLM_BIN", "/nonexistent/pcgrllm")
    with pytest.raises(pcgrllm.PcgError, match="^the pcgrllm binary, which runs reward files, was not found"):
        pcgrllm.VecDungeon(2, reward=SCENARIO1)
