#include "env.h"
#include <math.h>
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
    size_t bytes = (size_t)n * (3 * e->cells + pad + e->obs_size + 2 * sizeof(int) + sizeof(uint64_t) +
                                2 * sizeof(float) + 1 + 2 * sizeof(unsigned) + sizeof(double)) +
                   2 * (size_t)e->cells + 64 * 14;
    unsigned char *p = calloc(1, bytes);
    if (!p) return -1;
    e->block = p;
#define TAKE(ptr, count, type)                                               \
    do {                                                                     \
        ptr = (type *)p;                                                     \
        p += (((size_t)(count) * sizeof(type)) + 63) & ~(size_t)63;          \
    } while (0)
    env_batch *b = &e->b;
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
    TAKE(b->actions, n, int);
    TAKE(b->episodes, n, unsigned);
    TAKE(b->changed, n, unsigned);
    TAKE(b->episode_return, n, double);
    TAKE(e->nonfinite_prev, e->cells, unsigned char);
    TAKE(e->nonfinite_curr, e->cells, unsigned char);
#undef TAKE
    b->c = e->cfg;
    b->n = n;
    b->cells = e->cells;
    b->obs_size = e->obs_size;
    b->pad_size = (int)pad;
    b->maps = e->maps, b->frozen = e->frozen, b->prev = e->scratch, b->pad = e->pad, b->obs = e->obs;
    b->dones = e->dones, b->steps = e->steps, b->rewards = e->rewards, b->returns = e->returns;
    b->rng_pos = (unsigned long long *)e->rng_pos; /* the same 64-bit integers */
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) batch_init(b, i, 1, 1);
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

void env_set_rules(env_t *e, const env_rules *r)
{
    e->cfg.rules = *r;
    e->b.c.rules = *r;
    /* the observations follow the new centre at once */
#pragma omp parallel for schedule(static)
    for (int i = 0; i < e->n; i++)
        dungeon_observe(&e->cfg, e->steps[i], e->pad + (size_t)i * e->b.pad_size, e->obs + (size_t)i * e->obs_size);
}

level_t env_level(const env_t *e, int i)
{
    level_t l = {e->cfg.h, e->cfg.w, e->maps + (size_t)i * e->cells};
    return l;
}

void env_reset_all(env_t *e)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < e->n; i++) batch_reset(&e->b, i, 1);
}

/* log: the sums of the per-environment counters since env_log_clear */
static void sum_log(env_t *e)
{
    double episodes = 0, ret = 0, changed = 0;
    for (int i = 0; i < e->n; i++) {
        episodes += e->b.episodes[i];
        ret += e->b.episode_return[i];
        changed += e->b.changed[i];
    }
    e->log.episodes = episodes;
    e->log.episode_return = ret;
    e->log.changed = changed;
}

/* The first non-finite transition, copied by the one thread that claims it. */
static void keep_nonfinite(env_t *e, const level_t *prev, const level_t *curr, float r)
{
    if (__atomic_exchange_n(&e->nonfinite, 1, __ATOMIC_ACQ_REL)) return;
    memcpy(e->nonfinite_prev, prev->t, (size_t)e->cells);
    memcpy(e->nonfinite_curr, curr->t, (size_t)e->cells);
    e->nonfinite_value = r;
}

void env_nonfinite_clear(env_t *e) { __atomic_store_n(&e->nonfinite, 0, __ATOMIC_RELEASE); }

void env_step(env_t *e, const int *actions)
{
    const env_batch *b = &e->b;
    const dungeon_cfg *c = &e->cfg;
    int keep_prev = e->reward != NULL;
    memcpy(b->actions, actions, sizeof(int) * (size_t)e->n);
#pragma omp parallel for schedule(static)
    for (int i = 0; i < e->n; i++) {
        batch_edit(b, i, 0, 0, 0, keep_prev);
        if (e->final_maps && b->steps[i] + 1 >= c->episode_len)
            memcpy(e->final_maps + (size_t)i * e->cells, b->maps + (size_t)i * e->cells, (size_t)e->cells);
        float r = 0.0f;
        if (keep_prev && batch_reward_given(b, i)) {
            size_t off = (size_t)i * e->cells;
            level_t prev = {c->h, c->w, b->prev + off}, curr = {c->h, c->w, b->maps + off};
            r = e->reward(&prev, &curr, e->reward_ctx);
            if (!isfinite(r)) keep_nonfinite(e, &prev, &curr, r);
        }
        batch_finish(b, i, r, 1);
    }
    sum_log(e);
}

void env_rebuild(env_t *e)
{
#pragma omp parallel for schedule(static)
    for (int i = 0; i < e->n; i++) batch_rebuild(&e->b, i, 1);
}

void env_log_clear(env_t *e)
{
    memset(&e->log, 0, sizeof e->log);
    memset(e->b.episodes, 0, sizeof(unsigned) * (size_t)e->n);
    memset(e->b.changed, 0, sizeof(unsigned) * (size_t)e->n);
    memset(e->b.episode_return, 0, sizeof(double) * (size_t)e->n);
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

level_t env_start_level(uint64_t seed, int h, int w, unsigned char *tiles)
{
    dungeon_cfg c;
    dungeon_cfg_init(&c, h, w, VARIANT_DUNGEON, (pcg_u64)seed);
    unsigned char frozen[PCG_MAX_CELLS], *pad = malloc((size_t)c.pad_h * (size_t)c.pad_w);
    pcg_u64 pos = 0;
    if (pad) {
        dungeon_init_pad(&c, pad);
        dungeon_reset(&c, 0, &pos, tiles, frozen, pad);
    } else {
        memset(tiles, TILE_EMPTY, (size_t)h * (size_t)w); /* no memory: an empty map, never a crash */
    }
    free(pad);
    return (level_t){c.h, c.w, tiles};
}
