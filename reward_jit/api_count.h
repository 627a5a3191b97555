/* The reward API's helpers with their work counted, for the device model
 * of a reward kernel (bench/bench_env_model.c): copies of the level core's
 * searches and scans built with bitrows.h's work hooks on, the same
 * answers as the API's own, and no memo (the device has none); the
 * device kernel's kept searches where search_work_levels names the call's
 * levels.  The
 * counters are the process's: count on one thread. */
#ifndef PCG_API_COUNT_H
#define PCG_API_COUNT_H
#include "bitrows.h"
#include "reward_jit.h"
#include <stdint.h>

typedef struct {
    uint64_t calls;            /* helper calls */
    uint64_t n[BR_WORK_KINDS]; /* bitrows.h's BR_WORK_* */
} search_work;

/* The levels of the next calls (NULL, NULL: none): the counting helpers
 * then keep one search per level for the call, as the device's reward
 * kernel does (level.h, lv_kept); the caller names them before each call. */
void search_work_levels(const level_t *prev, const level_t *curr);

/* The counts since the last reset into *out. */
void search_work_get(search_work *out);
void search_work_reset(void);

/* The helpers to give reward_compile_cpu_helpers; *n set. */
const reward_helper *search_work_helpers(int *n);

/* Integer instructions (32-bit lanes) a device thread spends on counted
 * work w: each kind's count times its instructions (api_count.c says how
 * they were read off the code). */
double search_work_ops(const search_work *w);
/* Of those, the tile loads (each one memory access). */
double search_work_loads(const search_work *w);

#endif
