/* Batched Dungeon environment on the CPU (PufferLib style: flat arrays owned
 * by the caller, one call steps every environment, OpenMP across them). */
#ifndef PCG_ENV_H
#define PCG_ENV_H
#include <stdint.h>
#include "dungeon.h"
#include "env_rules.h"

/* A reward: r_t = R(level_t, level_t+1).  ctx is passed through. */
typedef float (*reward_fn)(const level_t *prev, const level_t *curr, void *ctx);

/* Episode statistics, reset by env_log_clear. */
typedef struct {
    double episodes;       /* finished episodes */
    double episode_return; /* sum of their returns */
    double changed;        /* edits that changed a cell */
} env_log;

typedef struct {
    dungeon_cfg cfg;
    int n;                 /* environments */
    int cells;             /* h*w */
    int obs_size;          /* crop_h*crop_w bytes per env */
    /* caller-owned arrays (env_alloc allocates them all in one block) */
    unsigned char *maps;   /* n*cells tile ids */
    unsigned char *frozen; /* n*cells */
    unsigned char *pad;    /* n*pad_h*pad_w */
    unsigned char *obs;    /* n*obs_size compact observation */
    int *steps;            /* step within the episode, per env */
    uint64_t *rng_pos;     /* stream position, per env */
    float *rewards;        /* n: reward of the last step */
    unsigned char *dones;  /* n: 1 if the last step ended the episode */
    float *returns;        /* n: running episode return */
    unsigned char *scratch;/* n*cells: previous level for the reward */
    /* the same arrays as the step rules of env_rules.h see them, with the
     * per-environment log counters that log sums */
    env_batch b;
    /* reward, NULL for none */
    reward_fn reward;
    void *reward_ctx;
    env_log log;
    /* NULL, or n*cells bytes the caller owns: env_step copies there the
     * last level of every episode it ends, before the auto-reset replaces
     * it (what a vector env reports as the final observation) */
    unsigned char *final_maps;
    /* The first transition whose reward was not finite since
     * env_nonfinite_clear: the levels the reward saw and what it returned
     * (kept before an auto-reset replaces the level). */
    int nonfinite;               /* 1 when kept */
    float nonfinite_value;
    unsigned char *nonfinite_prev, *nonfinite_curr; /* cells each */
    void *block;
} env_t;

/* Allocate arrays for n environments and reset them all.  Returns 0 or -1. */
int env_alloc(env_t *e, int n, int h, int w, int variant, uint64_t seed);
void env_free(env_t *e);
void env_set_reward(env_t *e, reward_fn fn, void *ctx);
/* The environment's details (dungeon.h's env_rules; env_alloc starts with
 * the reference's); the observations are redone under them. */
void env_set_rules(env_t *e, const env_rules *r);
/* Reset every environment (new episodes from the current stream position). */
void env_reset_all(env_t *e);
/* One step of every environment with actions[n]; writes rewards, dones, the
 * next observation, and auto-resets finished episodes. */
void env_step(env_t *e, const int *actions);
/* Rebuild the padded maps and observations from maps, frozen and steps
 * (after they were loaded from a checkpoint). */
void env_rebuild(env_t *e);
/* View of environment i's current level. */
level_t env_level(const env_t *e, int i);
/* The generator's starting map of environment 0 for seed (h x w, dungeon
 * variant) into tiles (PCG_MAX_CELLS bytes): what an episode of `train`
 * with that seed starts from. */
level_t env_start_level(uint64_t seed, int h, int w, unsigned char *tiles);
void env_log_clear(env_t *e);
/* Forget the kept non-finite transition. */
void env_nonfinite_clear(env_t *e);
/* Uniform random actions for step t from the per-env action stream
 * (subsequence 2^32 + env, so it never overlaps the map stream). */
void env_random_actions(const env_t *e, uint64_t seed, uint64_t t, int *actions);

/* "dungeon" or "treasure" -> VARIANT_*; -1 if neither. */
int parse_variant(const char *s, int *variant);

#endif
