/* Training checkpoints: one versioned binary file holding everything needed
 * to continue a run exactly (config, parameters, Adam state, counters, the
 * environments' maps and random-stream positions).
 *
 * Layout (little-endian):
 *   "PCGRLCKP"  magic, 8 bytes
 *   u32         format version (CHECKPOINT_VERSION)
 *   u32         0 (reserved)
 *   u64         total file size in bytes
 *   config      the ppo_config fields, one by one
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

#define CHECKPOINT_VERSION 1
#define CHECKPOINT_FILE "checkpoint.bin"

/* Write p to path atomically.  0, or -1 with one line in err. */
int checkpoint_save(const ppo_t *p, const char *path, char *err, int errlen);
/* Build a trainer from a checkpoint (same as ppo_init, then the stored
 * state).  reward/ctx as for ppo_init.  0, or -1 with one line in err
 * (missing, not a checkpoint, other version, truncated, corrupt). */
int checkpoint_load(ppo_t *p, const char *path, reward_fn reward, void *ctx, char *err, int errlen);
/* Only the config and the network (for generation).  nn is allocated. */
int checkpoint_load_policy(const char *path, ppo_config *cfg, nn_t *nn, int64_t *step, char *err, int errlen);

#endif
