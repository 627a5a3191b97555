/* The simulation library's own entries (cuda/sim/): what cuda/api.cu puts
 * in the table under PCG_SIM, and the work counters the launches, the
 * cuBLAS stand-in and the host synchronisations feed. */
#ifndef PCG_SIM_H
#define PCG_SIM_H
#include <atomic>
#include <stdint.h>
#include "backend.h"
#include "cuda_runtime.h"

int pcg_sim_set_host_reward(pcg_host_reward_fn fn, void *ctx);
const pcg_cuda_work *pcg_sim_work_counters(int *count);
void pcg_sim_work_reset(void);

/* The global-memory bytes one launch's blocks read and wrote
 * (cuda/sim/count.cpp), added up across CPU threads. */
struct pcg_sim_bytes {
    std::atomic<uint64_t> read{0}, written{0};
};
/* Device allocations, the only addresses counted (cuda/sim/runtime.cpp). */
void pcg_sim_count_alloc(void *p, size_t bytes);
void pcg_sim_count_free(void *p);
/* Around the blocks a CPU thread runs (cuda/sim/launch.cpp): count this
 * thread's accesses, then add them to the launch's. */
void pcg_sim_count_begin(void);
void pcg_sim_count_end(pcg_sim_bytes *launch);
/* NULL when this build counts kernel bytes, else the reason it does not. */
const char *pcg_sim_count_enabled(void);

/* One launch of kernel name over grid x block, after its blocks ran: the
 * bytes they moved and the FLOPs its arguments give (cuda/sim/work.cpp). */
void pcg_sim_work_launch(const char *name, dim3 grid, dim3 block, const pcg_sim_bytes &bytes,
                         const pcg_sim::launch_args &args);
/* Work of a call that is not a hand-written kernel (cuBLAS, host rewards). */
void pcg_sim_work_add(const char *name, uint64_t threads, uint64_t bytes_read, uint64_t bytes_written,
                      uint64_t flops);
/* One host synchronisation (a stream synchronise, a copy to the host). */
void pcg_sim_work_sync(void);
/* Whether this thread runs a graph's work (cuda/sim/graph.cpp): its
 * launches are counted as a graph's. */
bool pcg_sim_in_graph(void);
/* Before a host synchronisation or another capture-unsafe call
 * (allocating, freeing): cudaSuccess, or, during a capture, the error a
 * device gives (the capture is then invalidated). */
cudaError_t pcg_sim_capture_sync(void);

/* The threads blocks run on: made once (the first stream), then
 * fn(ctx, k) for every k < n across them and the calling thread. */
void pcg_sim_pool_start(void);
/* PCGRLLM_SIM_THREADS: 0 unset or empty (the default), 1..MAX as given,
 * -1 anything else.  PCGRLLM_SIM_ORDER: 0 unset, empty or forward,
 * 1 reverse, -1 anything else.  A -1 is refused where the device is
 * counted (cudaGetDeviceCount), so a mistyped value is one line, not a
 * silent default. */
enum { PCG_SIM_MAX_THREADS = 256 };
int pcg_sim_threads_env(void);
int pcg_sim_order_env(void);
/* PCGRLLM_SIM_CONV: the path conv 2 takes where the trainer leaves the
 * choice to the backend: PCG_CONV_AUTO (unset, empty or "auto": the
 * device's choice), PCG_CONV_IM2COL ("im2col"), PCG_CONV_IMPLICIT
 * ("implicit"), PCG_CONV_TENSOR ("tensor"), -1
 * anything else (refused as the two above are). */
int pcg_sim_conv_env(void);
/* PCGRLLM_SIM_SMS: the multiprocessors the device reports, 132 (an
 * H200's) unset or empty, 1..132 as given, -1 anything else (refused as
 * the others are); fewer let a small test take the launch plans a large
 * batch takes. */
enum { PCG_SIM_SMS = 132 };
int pcg_sim_sms_env(void);
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
