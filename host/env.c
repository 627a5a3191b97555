#include "env.h"
#include <stdlib.h>
#include <string.h>

int env_alloc(env_t *e, int n, int h, int w, int variant, uint64_t seed)
{
    memset(e, 0, sizeof *e);
    if (n <= 0 || h < 5 || w < 5 || h > PCG_MAX_SIDE || w > PCG_MAX_SIDE) return -1;
    dungeon_cfg_init(&e->cfg, h, w, variant, seed);
    e->n = n;
    e->cells = h * w;
    e->obs_size = e->cfg.crop_h * e->cfg.crop_w;
    size_t pad = (size_t)e->cfg.pad_h * e->cfg.pad_w;
    size_t bytes = (size_t)n * (3 * e->cells + pad + e->obs_size + sizeof(int) + sizeof(uint64_t) +
                                2 * sizeof(float) + 1) + 64 * 8;
    unsigned char *p = calloc(1, bytes);
    if (!p) return -1;
    e->block = p;
#define TAKE(ptr, count, type)                                               \
    do {                                                                     \
        ptr = (type *)p;                                                     \
        p += (((size_t)(count) * sizeof(type)) + 63) & ~(size_t)63;          \
    } while (0)
    TAKE(e->rng_pos, n, uint64_t);
    TAKE(e->steps, n, int);
    TAKE(e->rewards, n, float);
    TAKE(e->returns, n, float);
    TAKE(e->maps, (size_t)n * e->cells, unsigned char);
    TAKE(e->frozen, (size_t)n * e->cells, unsigned char);
    TAKE(e->scratch, (size_t)n * e->cells, unsigned char);
    TAKE(e->pad, (size_t)n * pad, unsigned char);
    TAKE(e->obs, (size_t)n * e->obs_size, unsigned char);
    TAKE(e->dones, n, unsigned char);
#undef TAKE
    for (int i = 0; i < n; i++) dungeon_init_pad(&e->cfg, e->pad + (size_t)i * pad);
    env_reset_all(e);
    return 0;
}

void env_free(env_t *e)
{
    free(e->block);
    memset(e, 0, sizeof *e);
}

void env_set_reward(env_t *e, reward_fn fn, void *ctx)
{
    e->reward = fn;
    e->reward_ctx = ctx;
}

level_t env_level(const env_t *e, int i)
{
    level_t l = {e->cfg.h, e->cfg.w, e->maps + (size_t)i * e->cells};
    return l;
}

static void reset_one(env_t *e, int i)
{
    size_t pad = (size_t)e->cfg.pad_h * e->cfg.pad_w;
    size_t off = (size_t)i * e->cells;
    pcg_u64 pos = e->rng_pos[i];
    dungeon_reset(&e->cfg, i, &pos, e->maps + off, e->frozen + off, e->pad + (size_t)i * pad);
    e->rng_pos[i] = pos;
    e->steps[i] = 0;
    e->returns[i] = 0.0f;
    dungeon_observe(&e->cfg, 0, e->pad + (size_t)i * pad, e->obs + (size_t)i * e->obs_size);
}

void env_reset_all(env_t *e)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < e->n; i++) reset_one(e, i);
}

void env_step(env_t *e, const int *actions)
{
    const dungeon_cfg *c = &e->cfg;
    size_t pad = (size_t)c->pad_h * c->pad_w;
    double episodes = 0, ret = 0, changed = 0;
#pragma omp parallel for schedule(static) reduction(+ : episodes, ret, changed)
    for (int i = 0; i < e->n; i++) {
        size_t off = (size_t)i * e->cells;
        unsigned char *map = e->maps + off;
        int a = actions[i];
        if (a < 0 || a >= c->n_actions) a = 0;
        float r = 0.0f;
        if (e->reward) {
            memcpy(e->scratch + off, map, (size_t)e->cells);
            changed += dungeon_apply(c, e->steps[i], a, map, e->frozen + off, e->pad + i * pad);
            level_t prev = {c->h, c->w, e->scratch + off}, curr = {c->h, c->w, map};
            r = e->reward(&prev, &curr, e->reward_ctx);
        } else {
            changed += dungeon_apply(c, e->steps[i], a, map, e->frozen + off, e->pad + i * pad);
        }
        e->rewards[i] = r;
        e->returns[i] += r;
        int s = ++e->steps[i];
        if (s >= c->episode_len) {
            e->dones[i] = 1;
            episodes += 1;
            ret += e->returns[i];
            reset_one(e, i);
        } else {
            e->dones[i] = 0;
            dungeon_observe(c, s, e->pad + i * pad, e->obs + (size_t)i * e->obs_size);
        }
    }
    e->log.episodes += episodes;
    e->log.episode_return += ret;
    e->log.changed += changed;
}

void env_log_clear(env_t *e)
{
    memset(&e->log, 0, sizeof e->log);
}

void env_random_actions(const env_t *e, uint64_t seed, uint64_t t, int *actions)
{
    int na = e->cfg.n_actions;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < e->n; i++) {
        pcg_u32x4 b = philox_block(seed, (1ull << 32) + (pcg_u64)i, t >> 2);
        actions[i] = (int)philox_below(b.v[t & 3], (pcg_u32)na);
    }
}

int parse_variant(const char *s, int *variant)
{
    if (!strcmp(s, "dungeon")) *variant = VARIANT_DUNGEON;
    else if (!strcmp(s, "treasure")) *variant = VARIANT_TREASURE;
    else return -1;
    return 0;
}
