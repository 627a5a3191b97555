/* The batched environment behind the C ABI (pcg_api.h): env_t of
 * host/core/env.h with the arrays a vector env hands out, the human
 * rewards compiled into the library (human_native.h), and a reward file
 * scored in the binary's confined worker (batch_reward.h). */
#include "pcg_api.h"
#include "batch_reward.h"
#include "env.h"
#include "human_native.h"
#include "util.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pcg_vec {
    env_t e;
    int n, size, variant;
    unsigned char *final_maps; /* n*cells, env_t's final_maps */
    reward_fn reward;          /* NULL: every reward 0 */
    batch_reward *worker;      /* a reward file's worker, or NULL */
    float *scores;             /* n: the worker's rewards of the last step */
};

int pcg_api_version(void) { return PCG_API_VERSION; }

int pcg_max_side(void) { return PCG_MAX_SIDE; }

void pcg_free(void *p) { free(p); }

/* env_alloc with the final maps beside it.  0 or -1 with err. */
static int vec_alloc(pcg_vec *v, uint64_t seed, char *err, int errlen)
{
    if (env_alloc(&v->e, v->n, v->size, v->size, v->variant, seed))
        return say_to(err, errlen, "out of memory for %d environments", v->n), -1;
    v->final_maps = calloc((size_t)v->n, (size_t)v->e.cells);
    if (!v->final_maps) {
        env_free(&v->e);
        return say_to(err, errlen, "out of memory for %d environments", v->n), -1;
    }
    v->e.final_maps = v->final_maps;
    env_set_reward(&v->e, v->reward, NULL);
    return 0;
}

pcg_vec *pcg_vec_new(int n, int size, const char *variant, uint64_t seed, char *err, int errlen)
{
    int var;
    if (n < 1 || n > 10000000) return say_to(err, errlen, "n must be in 1..10000000, not %d", n), NULL;
    if (size < 5 || size > PCG_MAX_SIDE)
        return say_to(err, errlen, "size must be in 5..%d, not %d", PCG_MAX_SIDE, size), NULL;
    if (!variant || parse_variant(variant, &var))
        return say_to(err, errlen, "variant must be \"dungeon\" or \"treasure\""), NULL;
    pcg_vec *v = calloc(1, sizeof *v);
    if (!v) return say_to(err, errlen, "out of memory"), NULL;
    v->n = n, v->size = size, v->variant = var;
    if (vec_alloc(v, seed, err, errlen)) return free(v), NULL;
    return v;
}

void pcg_vec_free(pcg_vec *v)
{
    if (!v) return;
    env_free(&v->e);
    free(v->final_maps);
    batch_reward_stop(v->worker);
    free(v->scores);
    free(v);
}

void pcg_vec_shape(const pcg_vec *v, int *out)
{
    const dungeon_cfg *c = &v->e.cfg;
    int shape[8] = {v->n, c->h, c->w, c->crop_h, c->crop_w, c->n_actions, c->episode_len, v->variant};
    memcpy(out, shape, sizeof shape);
}

unsigned char *pcg_vec_obs(pcg_vec *v) { return v->e.obs; }
unsigned char *pcg_vec_maps(pcg_vec *v) { return v->e.maps; }
unsigned char *pcg_vec_final_maps(pcg_vec *v) { return v->final_maps; }
float *pcg_vec_rewards(pcg_vec *v) { return v->e.rewards; }
unsigned char *pcg_vec_dones(pcg_vec *v) { return v->e.dones; }
int *pcg_vec_steps(pcg_vec *v) { return v->e.steps; }

int pcg_vec_reset(pcg_vec *v, int has_seed, uint64_t seed, char *err, int errlen)
{
    if (!has_seed) {
        env_reset_all(&v->e);
        memset(v->e.rewards, 0, sizeof(float) * (size_t)v->n);
        memset(v->e.dones, 0, (size_t)v->n);
        return 0;
    }
    env_free(&v->e);
    free(v->final_maps);
    v->final_maps = NULL;
    return vec_alloc(v, seed, err, errlen);
}

/* env_step with the reward scored in the worker between the edit and the
 * bookkeeping: the same step rules (env_rules.h), the batch in the
 * worker's chunks so that the two sides overlap -- every chunk edited and
 * handed over, then each one's rewards taken and its step finished while
 * the worker scores the next.  These passes run on this thread alone: the
 * worker scores on every core meanwhile, and OpenMP's idle threads here
 * would spin on those cores after each pass (docs/python.md).  A failed
 * exchange still finishes the step (rewards 0), so that the batch stays
 * whole for the caller. */
static int step_with_worker(pcg_vec *v, const int32_t *actions, char *err, int errlen)
{
    env_t *e = &v->e;
    const env_batch *b = &e->b;
    int chunks = batch_reward_chunks(v->worker), rc = 0, bad = -1, lo, hi;
    memcpy(b->actions, actions, sizeof(int) * (size_t)v->n);
    for (int c = 0; c < chunks; c++) {
        batch_reward_range(v->worker, c, &lo, &hi);
        for (int i = lo; i < hi; i++) {
            batch_edit(b, i, 0, 0, 0, 1);
            if (b->steps[i] + 1 >= e->cfg.episode_len)
                memcpy(v->final_maps + (size_t)i * e->cells, b->maps + (size_t)i * e->cells, (size_t)e->cells);
        }
        if (rc == 0) rc = batch_reward_send(v->worker, c, b->prev, b->maps, err, errlen);
    }
    for (int c = 0; c < chunks; c++) {
        batch_reward_range(v->worker, c, &lo, &hi);
        if (rc == 0) rc = batch_reward_take(v->worker, c, v->scores, err, errlen);
        for (int i = lo; i < hi; i++) {
            float r = rc ? 0.0f : v->scores[i];
            if (bad < 0 && batch_reward_given(b, i) && !isfinite(r)) bad = i;
            batch_finish(b, i, r, 1);
        }
    }
    /* the log as env_step sums it */
    double episodes = 0, ret = 0, changed = 0;
    for (int i = 0; i < v->n; i++)
        episodes += b->episodes[i], ret += b->episode_return[i], changed += b->changed[i];
    e->log.episodes = episodes, e->log.episode_return = ret, e->log.changed = changed;
    if (rc) return -1;
    if (bad >= 0)
        return say_to(err, errlen, "the reward returned %s for environment %d, which is not finite",
                      isnan(v->scores[bad]) ? "NaN" : v->scores[bad] > 0 ? "inf" : "-inf", bad), -1;
    return 0;
}

int pcg_vec_step(pcg_vec *v, const int32_t *actions, char *err, int errlen)
{
    int na = v->e.cfg.n_actions;
    for (int i = 0; i < v->n; i++)
        if (actions[i] < 0 || actions[i] >= na)
            return say_to(err, errlen, "action %d of environment %d is outside 0..%d", (int)actions[i], i, na - 1), -1;
    if (v->worker) return step_with_worker(v, actions, err, errlen);
    /* int32_t is int on every target the engine builds for */
    env_step(&v->e, (const int *)actions);
    if (v->e.nonfinite) {
        env_nonfinite_clear(&v->e);
        return say_to(err, errlen, "the reward returned %g, which is not finite", (double)v->e.nonfinite_value), -1;
    }
    return 0;
}

void pcg_vec_random_actions(const pcg_vec *v, uint64_t seed, uint64_t t, int32_t *actions)
{
    env_random_actions(&v->e, seed, t, (int *)actions);
}

void pcg_vec_log(pcg_vec *v, double *out, int clear)
{
    out[0] = v->e.log.episodes, out[1] = v->e.log.episode_return, out[2] = v->e.log.changed;
    if (clear) env_log_clear(&v->e);
}

int pcg_vec_set_reward_file(pcg_vec *v, const char *binary, const char *src, double watchdog_s, char *err,
                            int errlen)
{
    if (!binary || !src) return say_to(err, errlen, "the reward worker needs the binary and the source"), -1;
    float *scores = malloc(sizeof(float) * (size_t)v->n);
    if (!scores) return say_to(err, errlen, "out of memory for %d rewards", v->n), -1;
    batch_reward *w = batch_reward_start(binary, src, v->n, v->e.cfg.h, v->e.cfg.w, 0, watchdog_s, err, errlen);
    if (!w) return free(scores), -1;
    batch_reward_stop(v->worker);
    free(v->scores);
    v->worker = w, v->scores = scores;
    v->reward = NULL;
    env_set_reward(&v->e, NULL, NULL);
    return 0;
}

int pcg_vec_set_human_reward(pcg_vec *v, int scenario, char *err, int errlen)
{
    batch_reward_stop(v->worker);
    free(v->scores);
    v->worker = NULL, v->scores = NULL;
    if (scenario == 0) {
        v->reward = NULL;
    } else {
        v->reward = human_native_reward(scenario);
        if (!v->reward)
            return say_to(err, errlen, "human rewards are scenario 1..%d, not %d", HUMAN_NATIVE_SCENARIOS, scenario), -1;
    }
    env_set_reward(&v->e, v->reward, NULL);
    return 0;
}

double pcg_vec_bench(pcg_vec *v, double seconds)
{
    int *act = malloc(sizeof(int) * (size_t)v->n);
    if (!act) return -1;
    long steps = 0;
    uint64_t t = 0;
    double t0 = now_seconds(), el = 0;
    char err[8];
    int failed = 0;
    do {
        for (int k = 0; k < 16 && !failed; k++, t++) {
            if (!v->worker) {
                env_random_actions(&v->e, 3, t, act);
                env_step(&v->e, act);
                continue;
            }
            /* env_random_actions' numbers, on this thread (see step_with_worker) */
            for (int i = 0; i < v->n; i++) act[i] = batch_random_action(3, i, t, v->e.cfg.n_actions);
            failed = step_with_worker(v, act, err, sizeof err) != 0;
        }
        steps += 16L * v->n;
        el = now_seconds() - t0;
    } while (el < seconds && !failed);
    free(act);
    env_reset_all(&v->e);
    return failed ? -1 : (double)steps / el;
}
