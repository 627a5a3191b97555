import subprocess

import numpy as np
import pytest

import pcgrllm


def levels_random(pcgrllm_bin, tmp_path, n, seed, variant):
    out = tmp_path / ("%s_%d" % (variant, seed))
    subprocess.run([pcgrllm_bin, "levels", "--n", str(n), "--seed", str(seed), "--variant", variant,
                    "--policy", "random", "--out", str(out)], check=True, capture_output=True)
    return [pcgrllm.read_level(out / ("level_%03d.txt" % i)) for i in range(n)]


@pytest.mark.parametrize("variant", ["dungeon", "treasure"])
def test_episode_equals_levels_command(pcgrllm_bin, tmp_path, variant):
    n, seed = 5, 42
    env = pcgrllm.VecDungeon(n, variant=variant, seed=seed)
    env.reset()
    for t in range(env.episode_len):
        _, reward, term, trunc, info = env.step(env.random_actions(seed, t))
        assert not term.any()
        assert trunc.all() == (t == env.episode_len - 1)
    assert info["log"]["episodes"] == n
    want = levels_random(pcgrllm_bin, tmp_path, n, seed, variant)
    for i in range(n):
        assert info["final_maps"][i].tobytes() == want[i].tobytes()
    # the next episodes began from the stream where it stood
    assert (env.steps == 0).all()
    assert env.maps.tobytes() != info["final_maps"].tobytes()


def test_start_maps_equal_levels_command(pcgrllm_bin, tmp_path):
    subprocess.run([pcgrllm_bin, "levels", "--n", "3", "--seed", "7", "--out", str(tmp_path)], check=True,
                   capture_output=True)
    env = pcgrllm.VecDungeon(3, seed=7)
    for i in range(3):
        assert env.maps[i].tobytes() == pcgrllm.read_level(tmp_path / ("level_%03d.txt" % i)).tobytes()


def trajectory(seed, actions):
    env = pcgrllm.VecDungeon(4, seed=seed)
    obs, _ = env.reset()
    seen = [obs.copy()]
    for a in actions:
        obs, *_ = env.step(a)
        seen.append(obs.copy())
    return np.stack(seen)


def test_same_seed_same_actions_same_bytes():
    rng = np.random.default_rng(0)
    actions = rng.integers(0, 6, size=(100, 4))
    a, b = trajectory(3, actions), trajectory(3, actions.astype(np.uint8))
    assert a.tobytes() == b.tobytes()
    assert a.tobytes() != trajectory(4, actions).tobytes()


def test_arrays_are_the_engines_without_copies():
    env = pcgrllm.VecDungeon(2, seed=1)
    obs, _ = env.reset()
    obs2, reward, _, trunc, _ = env.step([0, 1])
    assert obs2 is obs and reward is env.rewards and trunc is env.truncated
    assert not obs.flags.owndata and obs.dtype == np.uint8 and obs.shape == (2, 31, 31)
    assert reward.dtype == np.float32 and (reward == 0).all()


def test_reset_with_seed_restarts_the_stream():
    env = pcgrllm.VecDungeon(3, seed=9)
    first = env.maps.copy()
    env.reset()  # before any step: the seed's first episodes
    assert env.maps.tobytes() == first.tobytes()
    env.step([1, 2, 3])
    env.reset(seed=9)
    assert env.maps.tobytes() == first.tobytes()
    env.step([1, 2, 3])
    env.reset()
    assert env.maps.tobytes() != first.tobytes() and (env.steps == 0).all()


def test_bad_arguments_raise_one_line():
    with pytest.raises(pcgrllm.PcgError, match="variant"):
        pcgrllm.VecDungeon(2, variant="castle")
    with pytest.raises(pcgrllm.PcgError, match="size"):
        pcgrllm.VecDungeon(2, size=3)
    with pytest.raises(pcgrllm.PcgError, match="n must be"):
        pcgrllm.VecDungeon(0)
    env = pcgrllm.VecDungeon(2)
    with pytest.raises(pcgrllm.PcgError, match="action 6 of environment 1 is outside 0..5") as e:
        env.step(np.array([0, 6], dtype=np.int32))
    assert "\n" not in str(e.value)
    with pytest.raises(pcgrllm.PcgError, match="outside"):
        env.step([-1, 0])
    with pytest.raises(ValueError, match="shape"):
        env.step([0, 1, 2])
    with pytest.raises(TypeError, match="integers"):
        env.step([0.5, 1.0])
    env.close()
    with pytest.raises(pcgrllm.PcgError, match="closed"):
        env.step([0, 0])


def test_human_reward_scores_steps():
    env = pcgrllm.VecDungeon(16, seed=3, reward="scenario1")
    env.reset()
    total = np.zeros(16)
    for t in range(env.episode_len):
        _, reward, _, trunc, info = env.step(env.random_actions(3, t))
        total += reward
    assert trunc.all() and (total != 0).any()
    assert info["log"]["episode_return"] == pytest.approx(total.sum(), rel=1e-5)
    plain = pcgrllm.VecDungeon(16, seed=3)
    _, reward, *_ = plain.step(plain.random_actions(3, 0))
    assert (reward == 0).all()
    with pytest.raises(ValueError, match="reward must be"):
        pcgrllm.VecDungeon(2, reward="rewards/my_reward.c")
