/* Training checkpoints: one versioned binary file holding everything needed
 * to continue a run exactly (config, parameters, Adam state, counters, the
 * environments' maps and random-stream positions).
 *
 * Layout (little-endian):
 *   "PCGRLCKP"  magic, 8 bytes
 *   u32         format version (CHECKPOINT_VERSION)
 *   u32         0 (reserved)
 *   u64         total file size in bytes
 *   config      the ppo_config fields, one by one (version 2 adds the four
 *               reference details as i32 after the seed; a version 1 file
 *               is read with the engine's first design for them)
 *   u64 n       number of parameters, then params[n], adam_m[n], adam_v[n] (f32)
 *   i64         adam step, environment steps, updates
 *   f64         latest mean episode return
 *   env         n_envs, cells, maps, frozen, steps, rng positions, returns
 *   u64         FNV-1a 64 of every byte before it
 * Written to a temporary file and renamed, so a reader never sees half a
 * checkpoint. */
#ifndef PCG_CHECKPOINT_H
#define PCG_CHECKPOINT_H
#include "ppo.h"

#define CHECKPOINT_VERSION 2
#define CHECKPOINT_FILE "checkpoint.bin"

/* A trainer's resumable state, whichever backend holds it (the CUDA
 * trainer copies its device state into one of these). */
typedef struct {
    ppo_config cfg;
    size_t n_params;
    float *params, *adam_m, *adam_v; /* n_params each */
    int64_t adam_t, step, update;
    double last_episode_reward;
    int n_envs, cells;
    unsigned char *maps, *frozen; /* n_envs * cells each */
    int *steps;
    uint64_t *rng_pos;
    float *returns;
} checkpoint_state;

/* The parameter count of cfg's network, 0 if cfg names no usable preset. */
size_t checkpoint_param_count(const ppo_config *cfg);

/* Write a state to path atomically.  0, or -1 with one line in err. */
int checkpoint_write(const checkpoint_state *s, const char *path, char *err, int errlen);
/* A checkpoint file's bytes (malloc'ed), read only once its header shows a
 * checkpoint of this version whose size is the file's; NULL with err. */
unsigned char *checkpoint_file_bytes(const char *path, size_t *len, char *err, int errlen);
/* The file's bytes for a state, malloc'ed.  0, or -1 (out of memory). */
int checkpoint_encode(const checkpoint_state *s, unsigned char **buf, size_t *len);
/* Parse and check a checkpoint held in memory, exactly as checkpoint_read
 * does a file (name: what messages call it). */
int checkpoint_decode(checkpoint_state *s, const unsigned char *buf, size_t len, const char *name, char *err,
                      int errlen);
/* A state whose arrays are p's own (nothing to free). */
checkpoint_state checkpoint_view(const ppo_t *p);
/* A trainer from a state (ppo_init, then the stored state).  0, or -1. */
int checkpoint_to_ppo(ppo_t *p, const checkpoint_state *s, reward_fn reward, void *ctx, char *err, int errlen);
/* Read and check a whole state (arrays malloc'ed; free with
 * checkpoint_state_free).  0, or -1 with one line in err (missing, not a
 * checkpoint, other version, truncated, corrupt, settings or sizes that do
 * not agree, tiles or counters out of range, weights or optimiser state
 * that are not finite). */
int checkpoint_read(checkpoint_state *s, const char *path, char *err, int errlen);
void checkpoint_state_free(checkpoint_state *s);
/* Allocate a state's arrays for cfg (zeroed; counters zero, no episode
 * return yet).  0, or -1 (unusable settings or out of memory). */
int checkpoint_state_alloc(checkpoint_state *s, const ppo_config *cfg);

/* Write p to path atomically.  0, or -1 with one line in err. */
int checkpoint_save(const ppo_t *p, const char *path, char *err, int errlen);
/* Build a trainer from a checkpoint (same as ppo_init, then the stored
 * state).  reward/ctx as for ppo_init.  0, or -1 with one line in err
 * (missing, not a checkpoint, other version, truncated, corrupt). */
int checkpoint_load(ppo_t *p, const char *path, reward_fn reward, void *ctx, char *err, int errlen);
/* Only the config and the network (for generation).  nn is allocated. */
int checkpoint_load_policy(const char *path, ppo_config *cfg, nn_t *nn, int64_t *step, char *err, int errlen);

#endif
