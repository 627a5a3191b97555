/* The simulation library's own entries (cuda/sim/): what cuda/api.cu puts
 * in the table under PCG_SIM, and the work counters the launches, the
 * cuBLAS stand-in and the host synchronisations feed. */
#ifndef PCG_SIM_H
#define PCG_SIM_H
#include <stdint.h>
#include "backend.h"

int pcg_sim_set_host_reward(pcg_host_reward_fn fn, void *ctx);
const pcg_cuda_work *pcg_sim_work_counters(int *count);
void pcg_sim_work_reset(void);

/* One launch of kernel name with this many threads (cuda/sim/launch.cpp). */
void pcg_sim_work_launch(const char *name, uint64_t threads);
/* Work of a call that is not a hand-written kernel (cuBLAS, host rewards). */
void pcg_sim_work_add(const char *name, uint64_t threads, uint64_t bytes_read, uint64_t bytes_written,
                      uint64_t flops);
/* One host synchronisation (a stream synchronise, a copy to the host). */
void pcg_sim_work_sync(void);

/* The threads blocks run on: made once (the first stream), then
 * fn(ctx, k) for every k < n across them and the calling thread. */
void pcg_sim_pool_start(void);
void pcg_sim_pool_run(long long n, void (*fn)(void *ctx, long long k), void *ctx);

/* The device's limits every launch is checked against (an H200's). */
typedef struct {
    unsigned max_threads_per_block, max_block[3], max_grid[3];
    size_t max_shared_per_block;
} pcg_sim_limits;
extern const pcg_sim_limits pcg_sim_device_limits;

/* The detail of the last launch error on this thread ("" when none). */
const char *pcg_sim_launch_detail(void);
void pcg_sim_set_launch_error(int cuda_error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
