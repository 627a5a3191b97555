/* The exported table of libpcgrllm_cuda.so (host/gpu/backend.h), device queries,
 * error reporting and the backend stream. */
#include "common.cuh"
#include "philox.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static thread_local char last_err[512];

void pcg_cuda_set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_err, sizeof last_err, fmt, ap);
    va_end(ap);
}

const char *pcg_cuda_last_error(void)
{
    return last_err;
}

static cudaStream_t stream;
static bool stream_made;

/* The backend's stream, made on first use.  Its creation failing means the
 * device is unusable (no memory, a dead context): the error is recorded
 * and the first call that checks it reports it, rather than every kernel
 * silently falling back to the legacy default stream, which synchronises
 * with everything. */
cudaStream_t pcg_cuda_stream(void)
{
    if (!stream_made) {
        cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
        if (e != cudaSuccess) {
            pcg_cuda_set_error("cudaStreamCreateWithFlags: %s", cudaGetErrorString(e));
            return (cudaStream_t)0;
        }
        stream_made = true;
    }
    return stream;
}

int pcg_device_sms(void)
{
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) !=
                                                  cudaSuccess) {
        (void)cudaGetLastError(); /* not the caller's error: plan as for one multiprocessor */
        sms = 1;
    }
    return sms < 1 ? 1 : sms;
}

int pcg_cuda_stream_check(void)
{
    pcg_cuda_stream();
    return stream_made ? 0 : -1;
}

static int device_count(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        pcg_cuda_set_error("no usable CUDA device: %s", cudaGetErrorString(e));
        return -1;
    }
    if (n <= 0) {
        pcg_cuda_set_error("no CUDA device");
        return -1;
    }
    return n;
}

static int device_info(int dev, pcg_cuda_device_info *out)
{
    cudaDeviceProp p;
    memset(out, 0, sizeof *out);
    PCG_CK(cudaGetDeviceProperties(&p, dev), -1);
    snprintf(out->name, sizeof out->name, "%s", p.name);
    out->major = p.major;
    out->minor = p.minor;
    out->sm_count = p.multiProcessorCount;
    out->total_mem = p.totalGlobalMem;
    int cur = 0;
    PCG_CK(cudaGetDevice(&cur), -1);
    if (cur == dev) PCG_CK(cudaMemGetInfo(&out->free_mem, &out->total_mem), -1);
    PCG_CK(cudaDriverGetVersion(&out->driver_version), -1);
    PCG_CK(cudaRuntimeGetVersion(&out->runtime_version), -1);
    return 0;
}

static int set_device(int dev)
{
    PCG_CK(cudaSetDevice(dev), -1);
    return 0;
}

static int sync_all(void)
{
    if (pcg_cuda_stream_check()) return -1;
    PCG_CK(cudaStreamSynchronize(pcg_cuda_stream()), -1);
    PCG_CK(cudaGetLastError(), -1);
    return 0;
}

static int sync_timeout(double seconds)
{
    struct timespec t0, now, nap = {0, 100000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        cudaError_t e = cudaStreamQuery(pcg_cuda_stream());
        if (e == cudaSuccess) break;
        if (e != cudaErrorNotReady) {
            pcg_cuda_set_error("device work failed: %s", cudaGetErrorString(e));
            return -1;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec) > seconds) {
            pcg_cuda_set_error("device work still running after %.1f s (a reward kernel that does not end?)",
                               seconds);
            return -1;
        }
        nanosleep(&nap, NULL);
    }
    PCG_CK(cudaGetLastError(), -1);
    return 0;
}

static int copy_to_device(void *dst, const void *src, size_t bytes)
{
    PCG_CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, pcg_cuda_stream()), -1);
    PCG_CK(cudaStreamSynchronize(pcg_cuda_stream()), -1);
    return 0;
}

static int copy_to_host(void *dst, const void *src, size_t bytes)
{
    PCG_CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, pcg_cuda_stream()), -1);
    PCG_CK(cudaStreamSynchronize(pcg_cuda_stream()), -1);
    return 0;
}

/* host/core/philox.h compiled by nvcc's host pass: must equal the gcc build. */
static void philox_host(uint64_t seed, uint64_t subseq, uint64_t block, uint32_t out[4])
{
    pcg_u32x4 b = philox_block(seed, subseq, block);
    for (int i = 0; i < 4; i++) out[i] = b.v[i];
}

#ifdef PCG_SIM
#include "sim.h"
#else
/* A device runs reward modules itself and counts no work. */
static int device_set_host_reward(pcg_host_reward_fn, void *)
{
    pcg_cuda_set_error("host rewards stand in for reward kernels only in the simulation library");
    return -1;
}

static const pcg_cuda_work *device_work_counters(int *count)
{
    *count = 0;
    return NULL;
}

static void device_work_reset(void) {}
#endif

static const pcg_cuda_api table = {
    PCG_CUDA_ABI_VERSION,
    (int)sizeof(pcg_cuda_api),
#ifdef PCG_SIM
    1,
#else
    0,
#endif
    pcg_cuda_last_error,
    device_count,
    device_info,
    set_device,
    sync_all,
    sync_timeout,
    pcg_arena_reserve,
    pcg_arena_alloc,
    pcg_arena_mark,
    pcg_arena_release,
    pcg_arena_stats,
    copy_to_device,
    copy_to_host,
    pcg_env_alloc,
    pcg_env_free,
    pcg_env_set_mapping,
    pcg_env_reset_all,
    pcg_env_step,
    pcg_env_step_random,
    pcg_env_copy,
    pcg_env_get_log,
    pcg_env_log_clear,
    pcg_env_load,
    pcg_env_set_reward,
    pcg_sgemm_nn,
    pcg_sgemm_nt,
    pcg_sgemm_tn,
    pcg_blas_set_math,
    pcg_nn_acts_alloc,
    pcg_nn_forward,
    pcg_nn_backward,
    pcg_nn_ppo_loss,
    pcg_ppo_init,
    pcg_ppo_free,
    pcg_ppo_rollout,
    pcg_ppo_update,
    pcg_ppo_train_update,
    pcg_ppo_get_state,
    pcg_ppo_set_state,
    pcg_ppo_get_rollout,
    pcg_ppo_env,
    philox_host,
    pcg_curand_draws,
    pcg_play_episode,
    pcg_env_set_rules,
#ifdef PCG_SIM
    pcg_blas_in_use,
    pcg_sim_set_host_reward,
    pcg_sim_work_counters,
    pcg_sim_work_reset,
#else
    pcg_blas_in_use,
    device_set_host_reward,
    device_work_counters,
    device_work_reset,
#endif
    pcg_conv_forward,
    pcg_conv_backward,
};

extern "C" __attribute__((visibility("default"))) const pcg_cuda_api *pcg_cuda_backend_v6(void)
{
    return &table;
}
