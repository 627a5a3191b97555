/* Batched Dungeon environment on the device: the rules of host/core/dungeon.h
 * (the same PCG_HD functions the CPU backend runs), state in flat device
 * arrays laid out exactly as host/core/env.c's, so that the same seed and the
 * same actions give bit-identical maps, observations and streams.
 *
 * A step is one kernel (one thread per environment: action, edit, reward,
 * auto-reset, observation) when there is no reward module.  With a reward
 * module the step splits around the reward kernel: edit (keeping the
 * previous level), reward kernel, finish (returns, auto-reset, observation).
 * The observation copy is either done by the environment's thread
 * (PCG_OBS_THREAD) or by a separate kernel with one warp per environment
 * (PCG_OBS_WARP). */
#include "common.cuh"
#include <cuda.h>
#include <curand_kernel.h>
#include "env_rules.h"
#include <stdlib.h>
#include <string.h>

#define THREADS 128
#define WARP_THREADS 256

struct pcg_cuda_env {
    env_batch d;
    int mapping;
    size_t mark, end; /* arena span */
    CUmodule module;
    CUfunction reward;
};

/* ---- kernels: one thread (or warp) per environment, the work itself in
 * host/core/env_rules.h ---- */

__global__ static void init_kernel(env_batch d, bool init_pad, bool observe)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < d.n) batch_init(&d, i, init_pad, observe);
}

/* One step.  SPLIT: edit keeping the previous level and stop (the reward
 * kernel and finish_kernel follow); otherwise finish with reward 0. */
template <bool RANDOM, bool SPLIT, bool OBSERVE>
__global__ static void step_kernel(env_batch d, unsigned long long seed, unsigned long long t)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    batch_edit(&d, i, RANDOM, seed, t, SPLIT);
    if (!SPLIT) batch_finish(&d, i, 0.0f, OBSERVE);
}

template <bool OBSERVE>
__global__ static void finish_kernel(env_batch d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < d.n) batch_finish(&d, i, d.rewards[i], OBSERVE);
}

__global__ static void rebuild_kernel(env_batch d, bool observe)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < d.n) batch_rebuild(&d, i, observe);
}

/* The observation with one warp per environment. */
__global__ static void observe_warp_kernel(env_batch d)
{
    int env = (int)((blockIdx.x * (unsigned)blockDim.x + threadIdx.x) >> 5);
    if (env < d.n) batch_observe_lane(&d, env, threadIdx.x & 31, 32);
}

__global__ static void curand_draws_kernel(unsigned long long seed, unsigned long long subseq, unsigned long long offset,
                                     int count, unsigned int *out)
{
    if (blockIdx.x || threadIdx.x) return;
    curandStatePhilox4_32_10_t st;
    curand_init(seed, subseq, offset, &st);
    for (int k = 0; k < count; k++) out[k] = curand(&st);
}

/* ---- driver API entry points (module loading), found through the runtime
 * so the library needs no link against libcuda ---- */

typedef CUresult (*pfn_load)(CUmodule *, const void *);
typedef CUresult (*pfn_getfn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*pfn_unload)(CUmodule);
typedef CUresult (*pfn_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               CUstream, void **, void **);
typedef CUresult (*pfn_errstr)(CUresult, const char **);

static struct {
    bool ok;
    pfn_load load;
    pfn_getfn getfn;
    pfn_unload unload;
    pfn_launch launch;
    pfn_errstr errstr;
} drv;

static int driver_api(void)
{
    if (drv.ok) return 0;
    struct {
        const char *name;
        void **fn;
    } want[] = {{"cuModuleLoadData", (void **)&drv.load},
                {"cuModuleGetFunction", (void **)&drv.getfn},
                {"cuModuleUnload", (void **)&drv.unload},
                {"cuLaunchKernel", (void **)&drv.launch},
                {"cuGetErrorString", (void **)&drv.errstr}};
    for (auto &w : want) {
        cudaDriverEntryPointQueryResult q;
        cudaError_t e = cudaGetDriverEntryPointByVersion(w.name, w.fn, 12000, cudaEnableDefault, &q);
        if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !*w.fn) {
            pcg_cuda_set_error("CUDA driver entry point %s unavailable: %s", w.name, cudaGetErrorString(e));
            return -1;
        }
    }
    drv.ok = true;
    return 0;
}

static const char *drv_err(CUresult r)
{
    const char *s = NULL;
    if (drv.errstr) drv.errstr(r, &s);
    return s ? s : "unknown driver error";
}

/* ---- table entries ---- */

static int blocks(int n, int per)
{
    return (n + per - 1) / per;
}

static int launch_reset(pcg_cuda_env *e, bool init_pad)
{
    env_batch &d = e->d;
    bool thread_obs = e->mapping == PCG_OBS_THREAD;
    PCG_LAUNCH(init_kernel, blocks(d.n, THREADS), THREADS, 0, pcg_cuda_stream(), d, init_pad, thread_obs);
    PCG_CK(cudaGetLastError(), -1);
    if (!thread_obs) {
        PCG_LAUNCH(observe_warp_kernel, blocks(d.n * 32, WARP_THREADS), WARP_THREADS, 0, pcg_cuda_stream(), d);
        PCG_CK(cudaGetLastError(), -1);
    }
    return 0;
}

extern "C" pcg_cuda_env *pcg_env_alloc(int n, int h, int w, int variant, uint64_t seed, int obs_mapping)
{
    if (n <= 0 || h < 5 || w < 5 || h > PCG_MAX_SIDE || w > PCG_MAX_SIDE ||
        (variant != VARIANT_DUNGEON && variant != VARIANT_TREASURE) ||
        (obs_mapping != PCG_OBS_THREAD && obs_mapping != PCG_OBS_WARP)) {
        pcg_cuda_set_error("env_alloc: bad arguments (n %d, size %dx%d, variant %d, mapping %d)", n, h, w, variant,
                           obs_mapping);
        return NULL;
    }
    if (pcg_cuda_stream_check()) return NULL; /* every device object starts here */
    pcg_cuda_env *e = (pcg_cuda_env *)calloc(1, sizeof *e);
    if (!e) {
        pcg_cuda_set_error("env_alloc: out of host memory");
        return NULL;
    }
    env_batch &d = e->d;
    dungeon_cfg_init(&d.c, h, w, variant, seed);
    d.n = n;
    d.cells = h * w;
    d.obs_size = d.c.crop_h * d.c.crop_w;
    d.pad_size = d.c.pad_h * d.c.pad_w;
    e->mapping = obs_mapping;
    e->mark = pcg_arena_mark();
    size_t N = (size_t)n;
#define TAKE(ptr, count, type)                                                \
    do {                                                                      \
        ptr = (type *)pcg_arena_alloc((size_t)(count) * sizeof(type));        \
        if (!ptr) goto fail;                                                  \
    } while (0)
    TAKE(d.rng_pos, N, unsigned long long);
    TAKE(d.steps, N, int);
    TAKE(d.actions, N, int);
    TAKE(d.rewards, N, float);
    TAKE(d.returns, N, float);
    TAKE(d.episodes, N, unsigned int);
    TAKE(d.changed, N, unsigned int);
    TAKE(d.episode_return, N, double);
    TAKE(d.maps, N * d.cells, unsigned char);
    TAKE(d.frozen, N * d.cells, unsigned char);
    TAKE(d.prev, N * d.cells, unsigned char);
    TAKE(d.pad, N * d.pad_size, unsigned char);
    TAKE(d.obs, N * d.obs_size, unsigned char);
    TAKE(d.dones, N, unsigned char);
#undef TAKE
    e->end = pcg_arena_mark();
    {
        cudaStream_t s = pcg_cuda_stream();
        /* zeroes: streams at position 0, log, dones, prev, actions */
        PCG_CK(cudaMemsetAsync(d.rng_pos, 0, N * sizeof *d.rng_pos, s), (pcg_env_free(e), nullptr));
        PCG_CK(cudaMemsetAsync(d.actions, 0, N * sizeof(int), s), (pcg_env_free(e), nullptr));
        PCG_CK(cudaMemsetAsync(d.rewards, 0, N * sizeof(float), s), (pcg_env_free(e), nullptr));
        PCG_CK(cudaMemsetAsync(d.dones, 0, N, s), (pcg_env_free(e), nullptr));
        PCG_CK(cudaMemsetAsync(d.prev, 0, N * d.cells, s), (pcg_env_free(e), nullptr));
    }
    if (pcg_env_log_clear(e) || launch_reset(e, true)) {
        pcg_env_free(e);
        return NULL;
    }
    {
        cudaError_t err = cudaStreamSynchronize(pcg_cuda_stream());
        if (err != cudaSuccess) {
            pcg_cuda_set_error("env_alloc: reset kernels: %s", cudaGetErrorString(err));
            pcg_env_free(e);
            return NULL;
        }
    }
    return e;
fail:
    pcg_arena_release(e->mark);
    free(e);
    return NULL;
}

extern "C" void pcg_env_free(pcg_cuda_env *e)
{
    if (!e) return;
    /* the batch's memory goes back to the arena: its kernels must be done */
    cudaError_t ce = cudaStreamSynchronize(pcg_cuda_stream());
    if (ce != cudaSuccess) pcg_cuda_set_error("env_free: cudaStreamSynchronize: %s", cudaGetErrorString(ce));
    if (e->module && drv.unload) drv.unload(e->module);
    if (e->end && pcg_arena_mark() == e->end) pcg_arena_release(e->mark);
    free(e);
}

extern "C" int pcg_env_set_mapping(pcg_cuda_env *e, int obs_mapping)
{
    if (obs_mapping != PCG_OBS_THREAD && obs_mapping != PCG_OBS_WARP) {
        pcg_cuda_set_error("unknown observation mapping %d", obs_mapping);
        return -1;
    }
    e->mapping = obs_mapping;
    return 0;
}

extern "C" int pcg_env_set_rules(pcg_cuda_env *e, const env_rules *rules)
{
    env_batch &d = e->d;
    d.c.rules = *rules;
    /* the observations follow the new centre at once (the warp kernel
     * writes what either mapping would) */
    PCG_LAUNCH(observe_warp_kernel, blocks(d.n * 32, WARP_THREADS), WARP_THREADS, 0, pcg_cuda_stream(), d);
    PCG_CK(cudaGetLastError(), -1);
    return 0;
}

extern "C" int pcg_env_reset_all(pcg_cuda_env *e)
{
    return launch_reset(e, false);
}

static int launch_step(pcg_cuda_env *e, bool random, unsigned long long seed, unsigned long long t)
{
    env_batch &d = e->d;
    cudaStream_t s = pcg_cuda_stream();
    int nb = blocks(d.n, THREADS);
    bool thread_obs = e->mapping == PCG_OBS_THREAD;
    if (!e->reward) {
        if (random && thread_obs) PCG_LAUNCH((step_kernel<true, false, true>), nb, THREADS, 0, s, d, seed, t);
        else if (random) PCG_LAUNCH((step_kernel<true, false, false>), nb, THREADS, 0, s, d, seed, t);
        else if (thread_obs) PCG_LAUNCH((step_kernel<false, false, true>), nb, THREADS, 0, s, d, seed, t);
        else PCG_LAUNCH((step_kernel<false, false, false>), nb, THREADS, 0, s, d, seed, t);
        PCG_CK(cudaGetLastError(), -1);
    } else {
        if (random) PCG_LAUNCH((step_kernel<true, true, false>), nb, THREADS, 0, s, d, seed, t);
        else PCG_LAUNCH((step_kernel<false, true, false>), nb, THREADS, 0, s, d, seed, t);
        PCG_CK(cudaGetLastError(), -1);
        int n = d.n, h = d.c.h, w = d.c.w;
        const unsigned char *prev = d.prev, *curr = d.maps;
        float *rewards = d.rewards;
        void *args[] = {&n, &h, &w, &prev, &curr, &rewards};
        CUresult r = drv.launch(e->reward, (unsigned)blocks(n, PCG_REWARD_BLOCK), 1, 1, PCG_REWARD_BLOCK, 1, 1, 0,
                                (CUstream)s, args, NULL);
        if (r != CUDA_SUCCESS) {
            pcg_cuda_set_error("reward kernel launch: %s", drv_err(r));
            return -1;
        }
        if (thread_obs) PCG_LAUNCH(finish_kernel<true>, nb, THREADS, 0, s, d);
        else PCG_LAUNCH(finish_kernel<false>, nb, THREADS, 0, s, d);
        PCG_CK(cudaGetLastError(), -1);
    }
    if (!thread_obs) {
        PCG_LAUNCH(observe_warp_kernel, blocks(d.n * 32, WARP_THREADS), WARP_THREADS, 0, s, d);
        PCG_CK(cudaGetLastError(), -1);
    }
    return 0;
}

extern "C" int pcg_env_step(pcg_cuda_env *e, const int *actions)
{
    PCG_CK(cudaMemcpyAsync(e->d.actions, actions, (size_t)e->d.n * sizeof(int), cudaMemcpyHostToDevice,
                           pcg_cuda_stream()),
           -1);
    return launch_step(e, false, 0, 0);
}

/* Arena bytes of a batch of n environments of h x w. */
size_t pcg_env_bytes(int n, int h, int w)
{
    size_t cells = (size_t)h * w, pad = (size_t)(3 * h - 2) * (3 * w - 2), obs = (size_t)(2 * h - 1) * (2 * w - 1);
    return (size_t)n * (8 + 4 * 6 + 8 + 3 * cells + pad + obs + 1) + 14 * 256;
}

/* For the device trainer: the batch's arrays, and a step whose actions are
 * already on the device. */
const env_batch *pcg_env_dev(const pcg_cuda_env *e)
{
    return &e->d;
}

int pcg_env_step_device(pcg_cuda_env *e, const int *dev_actions)
{
    PCG_CK(cudaMemcpyAsync(e->d.actions, dev_actions, (size_t)e->d.n * sizeof(int), cudaMemcpyDeviceToDevice,
                           pcg_cuda_stream()),
           -1);
    return launch_step(e, false, 0, 0);
}

extern "C" int pcg_env_step_random(pcg_cuda_env *e, uint64_t seed, uint64_t t, int count)
{
    for (int k = 0; k < count; k++)
        if (launch_step(e, true, seed, t + (uint64_t)k)) return -1;
    return 0;
}

extern "C" int pcg_env_copy(pcg_cuda_env *e, pcg_cuda_env_host *o)
{
    const env_batch &d = e->d;
    cudaStream_t s = pcg_cuda_stream();
    size_t N = (size_t)d.n;
    struct {
        void *dst;
        const void *src;
        size_t bytes;
    } c[] = {{o->maps, d.maps, N * d.cells},          {o->frozen, d.frozen, N * d.cells},
             {o->prev, d.prev, N * d.cells},          {o->pad, d.pad, N * d.pad_size},
             {o->obs, d.obs, N * d.obs_size},         {o->dones, d.dones, N},
             {o->steps, d.steps, N * sizeof(int)},    {o->actions, d.actions, N * sizeof(int)},
             {o->rng_pos, d.rng_pos, N * 8},          {o->rewards, d.rewards, N * sizeof(float)},
             {o->returns, d.returns, N * sizeof(float)}};
    for (auto &x : c)
        if (x.dst) PCG_CK(cudaMemcpyAsync(x.dst, x.src, x.bytes, cudaMemcpyDeviceToHost, s), -1);
    PCG_CK(cudaStreamSynchronize(s), -1);
    return 0;
}

extern "C" int pcg_env_get_log(pcg_cuda_env *e, pcg_cuda_env_log *out)
{
    const env_batch &d = e->d;
    size_t N = (size_t)d.n;
    unsigned int *cnt = (unsigned int *)malloc(N * 2 * sizeof(unsigned int));
    double *ret = (double *)malloc(N * sizeof(double));
    if (!cnt || !ret) {
        free(cnt);
        free(ret);
        pcg_cuda_set_error("env_get_log: out of host memory");
        return -1;
    }
    cudaStream_t s = pcg_cuda_stream();
    cudaError_t err = cudaMemcpyAsync(cnt, d.episodes, N * sizeof(unsigned int), cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(cnt + N, d.changed, N * sizeof(unsigned int), cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess) err = cudaMemcpyAsync(ret, d.episode_return, N * sizeof(double), cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess) err = cudaStreamSynchronize(s);
    if (err != cudaSuccess) {
        free(cnt);
        free(ret);
        pcg_cuda_set_error("env_get_log: %s", cudaGetErrorString(err));
        return -1;
    }
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < N; i++) {
        out->episodes += cnt[i];
        out->changed += cnt[N + i];
        out->episode_return += ret[i];
    }
    free(cnt);
    free(ret);
    return 0;
}

extern "C" int pcg_env_log_clear(pcg_cuda_env *e)
{
    const env_batch &d = e->d;
    cudaStream_t s = pcg_cuda_stream();
    size_t N = (size_t)d.n;
    PCG_CK(cudaMemsetAsync(d.episodes, 0, N * sizeof(unsigned int), s), -1);
    PCG_CK(cudaMemsetAsync(d.changed, 0, N * sizeof(unsigned int), s), -1);
    PCG_CK(cudaMemsetAsync(d.episode_return, 0, N * sizeof(double), s), -1);
    return 0;
}

extern "C" int pcg_env_load(pcg_cuda_env *e, const unsigned char *maps, const unsigned char *frozen, const int *steps,
                            const uint64_t *rng_pos, const float *returns)
{
    env_batch &d = e->d;
    cudaStream_t s = pcg_cuda_stream();
    size_t N = (size_t)d.n;
    PCG_CK(cudaMemcpyAsync(d.maps, maps, N * d.cells, cudaMemcpyHostToDevice, s), -1);
    PCG_CK(cudaMemcpyAsync(d.frozen, frozen, N * d.cells, cudaMemcpyHostToDevice, s), -1);
    PCG_CK(cudaMemcpyAsync(d.steps, steps, N * sizeof(int), cudaMemcpyHostToDevice, s), -1);
    PCG_CK(cudaMemcpyAsync(d.rng_pos, rng_pos, N * 8, cudaMemcpyHostToDevice, s), -1);
    PCG_CK(cudaMemcpyAsync(d.returns, returns, N * sizeof(float), cudaMemcpyHostToDevice, s), -1);
    PCG_CK(cudaMemsetAsync(d.rewards, 0, N * sizeof(float), s), -1);
    PCG_CK(cudaMemsetAsync(d.dones, 0, N, s), -1);
    if (pcg_env_log_clear(e)) return -1;
    bool thread_obs = e->mapping == PCG_OBS_THREAD;
    PCG_LAUNCH(rebuild_kernel, blocks(d.n, THREADS), THREADS, 0, s, d, thread_obs);
    PCG_CK(cudaGetLastError(), -1);
    if (!thread_obs) {
        PCG_LAUNCH(observe_warp_kernel, blocks(d.n * 32, WARP_THREADS), WARP_THREADS, 0, s, d);
        PCG_CK(cudaGetLastError(), -1);
    }
    PCG_CK(cudaStreamSynchronize(s), -1);
    return 0;
}

extern "C" int pcg_env_set_reward(pcg_cuda_env *e, const void *image)
{
    PCG_CK(cudaStreamSynchronize(pcg_cuda_stream()), -1);
    if (e->module) {
        drv.unload(e->module);
        e->module = NULL;
        e->reward = NULL;
    }
    if (!image) return 0;
    if (driver_api()) return -1;
    PCG_CK(cudaFree(0), -1); /* the runtime's primary context is current from here on */
    CUmodule m;
    CUresult r = drv.load(&m, image);
    if (r != CUDA_SUCCESS) {
        pcg_cuda_set_error("reward module could not be loaded: %s", drv_err(r));
        return -1;
    }
    CUfunction f;
    r = drv.getfn(&f, m, PCG_REWARD_KERNEL);
    if (r != CUDA_SUCCESS) {
        drv.unload(m);
        pcg_cuda_set_error("reward module has no kernel %s: %s", PCG_REWARD_KERNEL, drv_err(r));
        return -1;
    }
    e->module = m;
    e->reward = f;
    return 0;
}

extern "C" int pcg_curand_draws(uint64_t seed, uint64_t subseq, uint64_t offset, int count, uint32_t *out)
{
    if (count <= 0) return 0;
    size_t mark = pcg_arena_mark();
    unsigned int *buf = (unsigned int *)pcg_arena_alloc((size_t)count * sizeof(unsigned int));
    if (!buf) return -1;
    cudaStream_t s = pcg_cuda_stream();
    PCG_LAUNCH(curand_draws_kernel, 1, 1, 0, s, seed, subseq, offset, count, buf);
    cudaError_t err = cudaGetLastError();
    if (err == cudaSuccess) err = cudaMemcpyAsync(out, buf, (size_t)count * 4, cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess) err = cudaStreamSynchronize(s);
    pcg_arena_release(mark);
    if (err != cudaSuccess) {
        pcg_cuda_set_error("curand_draws: %s", cudaGetErrorString(err));
        return -1;
    }
    return 0;
}
