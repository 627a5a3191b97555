/* check-reward --backend cuda on a machine with a GPU: the reward kernel
 * runs on device environments for one episode of random play -- the same
 * maps and actions the CPU validation replays -- in a worker process
 * (host/sys/worker.h: fresh, scrubbed environment; it spawns the confined NVRTC
 * worker for the device's architecture), and this process compares every
 * reward with the CPU's. */
#ifndef PCG_REWARD_GPU_H
#define PCG_REWARD_GPU_H
#include <stdint.h>
#include "reward_jit.h"

typedef struct {
    int ran;                  /* 0: no device (why says so) */
    char device[256], arch[16];
    reward_stats stats;       /* of the device's rewards; us_per_call per environment step */
    double max_diff;          /* largest relative difference from the CPU */
    long diff_step;           /* the step where it was */
    char why[512];
} reward_gpu_result;

/* Relative difference per reward above which the backends disagree. */
#define REWARD_GPU_TOLERANCE 1e-4

/* cpu[i*steps + t]: the CPU's reward of environment i at step t
 * (reward_validate_values with the same variant, n and seed).  0 when the
 * device ran or is absent (r->ran says which), -1 with reason on failure
 * (a device error, a non-finite device reward). */
int reward_gpu_check(const char *src, int variant, int n, uint64_t seed, double timeout_s, const float *cpu,
                     reward_gpu_result *r, char *reason, int reason_len);

#endif
