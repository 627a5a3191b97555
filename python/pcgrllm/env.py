"""The batched Dungeon environment as a Gymnasium-style vector env."""
import ctypes
import os

import numpy as np

from ._lib import PcgError, errbuf, lib, raise_from
from ._reward import checked_source


def _view(ptr, shape, dtype):
    """A NumPy array over memory the engine owns (no copy)."""
    return np.ctypeslib.as_array(ptr, shape=shape).view(dtype)


class VecDungeon:
    """n Dungeon environments stepped together by the engine (OpenMP across
    them).  Observations and rewards live in the engine's arrays: the arrays
    reset() and step() return are views that the next call overwrites, and a
    reset with a new seed replaces them.

    Observations: uint8 (n, 2h-1, 2w-1), the compact crop centred on the
    cell edited next.  Actions: int (n,) in 0..n_actions-1.  Rewards:
    float32 (n,): with reward="scenario1".."scenario4" the human reward of
    that scenario (rewards/human/, compiled into the library); with the
    path of a reward file, that reward, checked by `pcgrllm check-reward`
    and run only in the binary's confined worker process; else 0.  An
    episode ends
    after episode_len steps (3*h*w), which is a truncation, never a
    termination; the environment then starts its next episode at once and
    info["final_maps"] holds the level it ended with.
    """

    REWARDS = ("scenario1", "scenario2", "scenario3", "scenario4")

    def __init__(self, n, variant="dungeon", seed=0, size=16, reward=None, reward_timeout=10.0):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError("n must be an int, not %s" % type(n).__name__)
        if not isinstance(variant, str):
            raise TypeError("variant must be a str")
        self._lib = lib()
        err = errbuf()
        self._h = self._lib.pcg_vec_new(int(n), int(size), variant.encode(), int(seed) & (2**64 - 1), err, len(err))
        if not self._h:
            raise_from(err)
        self.variant = variant
        self.seed = int(seed)
        self.reward = reward
        if reward is not None:
            try:
                self._set_reward(reward, float(reward_timeout), err)
            except BaseException:
                self.close()
                raise
        self._actions = None
        self._bind()

    def _set_reward(self, reward, timeout, err):
        if reward in self.REWARDS:
            if self._lib.pcg_vec_set_human_reward(self._h, self.REWARDS.index(reward) + 1, err, len(err)):
                raise_from(err)
            return
        if not isinstance(reward, (str, os.PathLike)):
            raise TypeError("reward must be None, one of %s or the path of a reward file, not %s"
                            % (", ".join(self.REWARDS), type(reward).__name__))
        if not os.path.isfile(reward):
            raise ValueError("reward must be None, one of %s or the path of a reward file; %s is neither"
                           % (", ".join(self.REWARDS), os.fspath(reward)))
        src, exe = checked_source(os.fspath(reward), self.variant)
        if self._lib.pcg_vec_set_reward_file(self._h, exe.encode(), src, timeout, err, len(err)):
            raise_from(err)

    def _bind(self):
        shape = (ctypes.c_int32 * 8)()
        self._lib.pcg_vec_shape(self._h, shape)
        n, h, w, oh, ow, na, ep, _ = list(shape)
        self.num_envs, self.height, self.width = n, h, w
        self.obs_shape, self.n_actions, self.episode_len = (oh, ow), na, ep
        L = self._lib
        self.obs = _view(L.pcg_vec_obs(self._h), (n, oh, ow), np.uint8)
        self.maps = _view(L.pcg_vec_maps(self._h), (n, h, w), np.uint8)
        self.final_maps = _view(L.pcg_vec_final_maps(self._h), (n, h, w), np.uint8)
        self.rewards = _view(L.pcg_vec_rewards(self._h), (n,), np.float32)
        self.steps = _view(L.pcg_vec_steps(self._h), (n,), np.int32)
        self.truncated = _view(L.pcg_vec_dones(self._h), (n,), np.bool_)
        self.terminated = np.zeros(n, dtype=bool)
        # the batch holds the seed's first episodes until the first step
        self._fresh = True

    def _check(self):
        if not self._h:
            raise PcgError("the environment is closed")

    def _info(self):
        log = (ctypes.c_double * 3)()
        self._lib.pcg_vec_log(self._h, log, 0)
        info = {"log": {"episodes": int(log[0]), "episode_return": log[1], "changed": int(log[2])},
                "steps": self.steps}
        if self.truncated.any():
            info["final_maps"] = self.final_maps
            info["_final_maps"] = self.truncated
        return info

    def reset(self, seed=None):
        """New episodes for every environment: from seed (the arrays are
        allocated anew), or else from the stream where it stands; before
        the first step, the seed's first episodes as they are.  (obs, info)."""
        self._check()
        err = errbuf()
        if seed is not None:
            self.seed = int(seed)
        elif self._fresh:
            return self.obs, self._info()
        if self._lib.pcg_vec_reset(self._h, seed is not None, 0 if seed is None else int(seed) & (2**64 - 1),
                                   err, len(err)):
            raise_from(err)
        if seed is not None:
            self._bind()
        self._lib.pcg_vec_log(self._h, (ctypes.c_double * 3)(), 1)
        return self.obs, self._info()

    def _action_array(self, actions):
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError("actions must have shape (%d,), not %s" % (self.num_envs, a.shape))
        if a.dtype.kind not in "iu":
            raise TypeError("actions must be integers, not %s" % a.dtype)
        if a.dtype == np.int32 and a.flags.c_contiguous:
            return a
        if a.size and (a.min() < -2**31 or a.max() >= 2**31):
            raise ValueError("actions must lie in 0..%d" % (self.n_actions - 1))
        if self._actions is None:
            self._actions = np.empty(self.num_envs, dtype=np.int32)
        self._actions[:] = a
        return self._actions

    def step(self, actions):
        """One step of every environment: (obs, reward, terminated,
        truncated, info), the engine's arrays without copies."""
        self._check()
        a = self._action_array(actions)
        err = errbuf()
        if self._lib.pcg_vec_step(self._h, a.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)), err, len(err)):
            raise_from(err)
        self._fresh = False
        return self.obs, self.rewards, self.terminated, self.truncated, self._info()

    def random_actions(self, seed, t):
        """The actions `pcgrllm levels --policy random` takes at step t."""
        self._check()
        out = np.empty(self.num_envs, dtype=np.int32)
        self._lib.pcg_vec_random_actions(self._h, int(seed), int(t), out.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)))
        return out

    def bench_c(self, seconds=1.0):
        """The engine's own loop on this batch: random-action steps per
        second over about `seconds` (the batch is reset afterwards)."""
        self._check()
        return self._lib.pcg_vec_bench(self._h, float(seconds))

    def close(self):
        if self._h:
            self._lib.pcg_vec_free(self._h)
            self._h = None
            for name in ("obs", "maps", "final_maps", "rewards", "steps", "truncated"):
                setattr(self, name, None)

    def __del__(self):
        if getattr(self, "_h", None):
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
