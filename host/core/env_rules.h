/* One step of one environment, written once for both backends (PCG_HD):
 * reset, the edit of a step, the bookkeeping after the reward (returns,
 * episode end, auto-reset, observation), the rebuild after a checkpoint and
 * the observation split over warp lanes.  host/core/env.c calls these in an
 * OpenMP loop; the kernels of cuda/env.cu are thin loops around the same
 * functions, so the CPU tests exercise the device's rules.  The rules of
 * the Dungeon problem themselves are host/core/dungeon.h's. */
#ifndef PCG_ENV_RULES_H
#define PCG_ENV_RULES_H
#include <stddef.h>
#include "dungeon.h"
#if defined(__CUDACC__)
#include <curand_kernel.h> /* the device's random actions (batch_random_action) */
#endif

/* The arrays of one batch of n environments (the caller owns them: host
 * memory for host/core/env.c, device memory for cuda/env.cu). */
typedef struct {
    dungeon_cfg c;
    int n, cells, obs_size, pad_size;
    unsigned char *maps, *frozen, *prev, *pad, *obs, *dones;
    int *steps, *actions;
    unsigned long long *rng_pos;
    float *rewards, *returns;
    unsigned int *episodes, *changed; /* per-env log counters */
    double *episode_return;
} env_batch;

/* New episode for env i. */
PCG_HD void batch_reset(const env_batch *d, int i, int observe)
{
    unsigned char *pad = d->pad + (size_t)i * d->pad_size;
    size_t off = (size_t)i * d->cells;
    pcg_u64 pos = d->rng_pos[i];
    dungeon_reset(&d->c, i, &pos, d->maps + off, d->frozen + off, pad);
    d->rng_pos[i] = pos;
    d->steps[i] = 0;
    d->returns[i] = 0.0f;
    if (observe) dungeon_observe(&d->c, 0, pad, d->obs + (size_t)i * d->obs_size);
}

PCG_HD void batch_init(const env_batch *d, int i, int init_pad, int observe)
{
    if (init_pad) dungeon_init_pad(&d->c, d->pad + (size_t)i * d->pad_size);
    batch_reset(d, i, observe);
}

/* env_random_actions' action for env i at step t.  On the device through
 * cuRAND: curand_init(seed, 2^32 + i, t) then one curand() is draw t of
 * that subsequence, the same number as philox_block(seed, 2^32+i, t/4)[t%4]
 * (host/core/philox.h), which the host pass uses. */
PCG_HD int batch_random_action(pcg_u64 seed, int i, pcg_u64 t, int n_actions)
{
#if defined(__CUDA_ARCH__)
    curandStatePhilox4_32_10_t st;
    curand_init(seed, (1ull << 32) + (pcg_u64)i, t, &st);
    pcg_u32 r = curand(&st);
#else
    pcg_u32 r = philox_block(seed, (1ull << 32) + (pcg_u64)i, t >> 2).v[t & 3];
#endif
    return (int)philox_below(r, (pcg_u32)n_actions);
}

/* The edit of one step: the action (drawn and stored when random), the
 * previous level kept when keep_prev (a reward follows), the cell written. */
PCG_HD void batch_edit(const env_batch *d, int i, int random, pcg_u64 seed, pcg_u64 t, int keep_prev)
{
    int a;
    if (random) {
        a = batch_random_action(seed, i, t, d->c.n_actions);
        d->actions[i] = a;
    } else {
        a = d->actions[i];
    }
    if (a < 0 || a >= d->c.n_actions) a = 0;
    size_t off = (size_t)i * d->cells;
    unsigned char *map = d->maps + off;
    if (keep_prev) {
#if defined(__CUDA_ARCH__)
        if ((d->cells & 3) == 0) { /* 4-byte copies: the arena aligns every array */
            const unsigned int *src = (const unsigned int *)map;
            unsigned int *dst = (unsigned int *)(d->prev + off);
            for (int k = 0; k < d->cells / 4; k++) dst[k] = src[k];
        } else
#endif
            dungeon_copy(d->prev + off, map, d->cells);
    }
    d->changed[i] += (unsigned int)dungeon_apply(&d->c, d->steps[i], a, map, d->frozen + off,
                                                 d->pad + (size_t)i * d->pad_size);
}

/* 1 when the designed reward is given for env i's step about to finish:
 * every step, except the last of an episode under TERMINAL_REWARD_ENV
 * (the reference's wrapper returns the environment's own reward, 0, on it:
 * its map is already the next episode's there). */
PCG_HD int batch_reward_given(const env_batch *d, int i)
{
    return d->c.rules.terminal_reward == TERMINAL_REWARD_DESIGNED || d->steps[i] + 1 < d->c.episode_len;
}

/* After the reward: returns, step count, auto-reset, observation.  r is
 * the designed reward (replaced by 0 where batch_reward_given says so). */
PCG_HD void batch_finish(const env_batch *d, int i, float r, int observe)
{
    if (!batch_reward_given(d, i)) r = 0.0f;
    d->rewards[i] = r;
    d->returns[i] += r;
    int s = ++d->steps[i];
    if (s >= d->c.episode_len) {
        d->dones[i] = 1;
        d->episodes[i] += 1;
        d->episode_return[i] += d->returns[i];
        batch_reset(d, i, observe);
    } else {
        d->dones[i] = 0;
        if (observe) dungeon_observe(&d->c, s, d->pad + (size_t)i * d->pad_size, d->obs + (size_t)i * d->obs_size);
    }
}

/* Rebuild env i's padded map (and observation) from its maps, frozen mask
 * and step, after they were loaded from a checkpoint. */
PCG_HD void batch_rebuild(const env_batch *d, int i, int observe)
{
    size_t off = (size_t)i * d->cells;
    unsigned char *pad = d->pad + (size_t)i * d->pad_size;
    dungeon_init_pad(&d->c, pad);
    for (int k = 0; k < d->cells; k++)
        dungeon_set_cell(&d->c, d->maps + off, d->frozen + off, pad, k, d->maps[off + k], d->frozen[off + k]);
    if (observe) dungeon_observe(&d->c, d->steps[i], pad, d->obs + (size_t)i * d->obs_size);
}

/* dungeon_observe split over `lanes` lanes of a warp: lane writes bytes
 * lane, lane+lanes, ... of the crop, so a warp's stores are consecutive. */
PCG_HD void batch_observe_lane(const env_batch *d, int env, int lane, int lanes)
{
    int cell = dungeon_obs_cell(&d->c, d->steps[env]);
    int r = cell / d->c.w, col = cell % d->c.w;
    const unsigned char *src = d->pad + (size_t)env * d->pad_size + r * d->c.pad_w + col;
    unsigned char *dst = d->obs + (size_t)env * d->obs_size;
    int cw = d->c.crop_w;
    for (int j = lane; j < d->obs_size; j += lanes) {
        int row = j / cw;
        dst[j] = src[row * d->c.pad_w + (j - row * cw)];
    }
}

#endif /* PCG_ENV_RULES_H */
