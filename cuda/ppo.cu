/* PPO of host/learn/ppo.c on the device.  The same configuration, the same
 * streams (maps from the env, action draws from subsequence 3*2^32+env,
 * minibatch shuffles from 4*2^32+update*epochs+epoch, both drawn with
 * host/core/philox.h), GAE in double, advantages normalised per minibatch,
 * clipped losses (cuda/nn.cu), global gradient-norm clipping and Adam.
 * Rollout storage, network, gradients and moments live in the arena; the
 * host only enqueues work, uploads the minibatch permutations (drawn on the
 * host with the CPU trainer's Fisher-Yates; all of an update's epochs at
 * once unless they pass PERM_BYTES_MAX) and reads the metrics once per
 * rollout and once per update.  Sums are deterministic (fixed-order
 * reductions), so a run repeats bit for bit on the same GPU. */
#include "common.cuh"
#include <curand_kernel.h>
#include "env_rules.h"
#include "ppo_gae.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* cuda/env.cu's internals for the trainer */
const env_batch *pcg_env_dev(const pcg_cuda_env *e);
int pcg_env_step_device(pcg_cuda_env *e, const int *dev_actions);

/* host/learn/ppo.c's streams and action sampling */
#include "ppo_streams.h"

#define PPO_THREADS 256
#define RED_THREADS 256
#define RED_BLOCKS 512

/* device accumulators */
enum {
    ST_LOSS, ST_POLICY, ST_VALUE, ST_ENTROPY, ST_KL, ST_CLIPPED, /* as nn_ppo_loss's out[6], summed */
    ST_GNORM,     /* sum of global norms before clipping */
    ST_REWARD,    /* sum of the rollout's rewards */
    ST_MEAN,      /* minibatch advantage mean */
    ST_VAR,       /* minibatch advantage squared deviations / S */
    ST_INVSTD,    /* 1 / (std + 1e-8) */
    ST_SUMSQ,     /* squared gradient norm */
    ST_CHUNK,     /* 6 doubles: one chunk's loss terms */
    ST_COUNT = ST_CHUNK + 6
};

struct pcg_cuda_ppo {
    ppo_config cfg;
    nn_config nc;
    size_t off[NN_NTENSORS];
    size_t n_params;
    int cap;
    pcg_cuda_env *env;
    float *P, *G, *M, *V;
    int64_t adam_t, step, update;
    nn_acts acts;
    /* rollout, [T][E] */
    unsigned char *obs, *dones;
    int *actions;
    float *logp, *values, *rewards, *adv, *ret;
    float *logits, *last; /* E x A, E */
    /* minibatch: the permutations of perm_epochs epochs, N each */
    uint32_t *perm_h, *perm_d;
    int perm_epochs;
    /* a copy from perm_h, or from adam_scale_h (page-locked), not waited
     * for yet: each is rewritten only after a wait */
    int perm_copying, adam_copying;
    unsigned char *mb_obs;
    int *mb_act;
    float *mb_logp, *mb_adv, *mb_val, *mb_ret;
    double *stats, *partial;
    /* the minibatch's own inputs, copied in before its work: its sample
     * indices and Adam's two bias corrections (drawn from adam_scale_d,
     * two for each minibatch of the update, from adam_scale_h) */
    uint32_t *mb_idx;
    float *mb_scale, *adam_scale_h, *adam_scale_d;
    /* the minibatch's work as one CUDA graph: graph_state 0 until
     * captured, 1 with it (made under pcg_nn_launch_key graph_key), -1
     * launched by the host instead */
    pcg_graph graph;
    int graph_state, graph_key;
    size_t mark, top; /* the arena below the trainer, and above it after init */
};

static unsigned grid_for(size_t n, int threads)
{
    return (unsigned)((n + threads - 1) / threads);
}

#define KCK()                                                                                                \
    do {                                                                                                     \
        cudaError_t e_ = cudaGetLastError();                                                                 \
        if (e_ != cudaSuccess) {                                                                             \
            pcg_cuda_set_error("ppo kernel: %s (%s:%d)", cudaGetErrorString(e_), __FILE__, __LINE__);        \
            return -1;                                                                                       \
        }                                                                                                    \
    } while (0)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- fixed-order reductions in double ---- */

struct red_float {
    static constexpr const char *kernel = "reduce_kernel<red_float>";
    const float *x;
    __device__ double operator()(size_t i) const { return x[i]; }
};
struct red_square {
    static constexpr const char *kernel = "reduce_kernel<red_square>";
    const float *x;
    __device__ double operator()(size_t i) const
    {
        double v = x[i];
        return v * v;
    }
};
struct red_gather {
    static constexpr const char *kernel = "reduce_kernel<red_gather>";
    const float *x;
    const uint32_t *idx;
    __device__ double operator()(size_t i) const { return x[idx[i]]; }
};
struct red_deviation {
    static constexpr const char *kernel = "reduce_kernel<red_deviation>";
    const float *x;
    const uint32_t *idx;
    const double *mean;
    __device__ double operator()(size_t i) const
    {
        double d = x[idx[i]] - *mean;
        return d * d;
    }
};

template <class F>
__global__ static void reduce_kernel(F f, size_t n, double *partial)
{
    __shared__ double sh[RED_THREADS];
    double s = 0;
    for (size_t i = blockIdx.x * (size_t)RED_THREADS + threadIdx.x; i < n; i += (size_t)gridDim.x * RED_THREADS)
        s += f(i);
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int w = RED_THREADS / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}

/* out = sum / div, or out += sum / div */
__global__ static void reduce_final_kernel(const double *partial, int nb, double div, int accumulate, double *out)
{
    if (threadIdx.x || blockIdx.x) return;
    double s = 0;
    for (int b = 0; b < nb; b++) s += partial[b];
    *out = accumulate ? *out + s / div : s / div;
}

template <class F>
static int reduce(F f, size_t n, double div, int accumulate, double *out, double *partial)
{
    int nb = (int)((n + RED_THREADS - 1) / RED_THREADS);
    if (nb > RED_BLOCKS) nb = RED_BLOCKS;
    if (nb < 1) nb = 1;
    cudaStream_t s = pcg_cuda_stream();
    PCG_LAUNCH_AS(F::kernel, reduce_kernel<F>, nb, RED_THREADS, 0, s, f, n, partial);
    PCG_LAUNCH(reduce_final_kernel, 1, 32, 0, s, partial, nb, div, accumulate, out);
    KCK();
    return 0;
}

/* ---- rollout kernels ---- */

/* ppo_sample with ppo_action_draw's uniform draw (host/learn/ppo_streams.h). */
__global__ static void sample_kernel(const float *logits, int A, int E, unsigned long long seed,
                                     unsigned long long n, int *act, float *logp)
{
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= E) return;
    act[e] = ppo_stream_sample(logits + (size_t)e * A, A, ppo_stream_draw(seed, e, n), logp + e);
}

/* ppo_gae, one thread per environment. */
__global__ static void gae_kernel(int T, int E, const float *rewards, const float *values, const unsigned char *dones,
                                  const float *last_value, float gamma, float lambda, float *adv, float *ret)
{
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < E) ppo_gae_env(T, E, e, rewards, values, dones, last_value, gamma, lambda, adv, ret);
}

/* ---- update kernels ---- */

__global__ static void inv_std_kernel(double *st)
{
    if (threadIdx.x || blockIdx.x) return;
    st[ST_INVSTD] = 1.0 / (sqrt(st[ST_VAR]) + 1e-8);
}

/* The minibatch's scalars, advantages normalised (as ppo_update). */
__global__ static void gather_kernel(const uint32_t *idx, size_t S, const int *actions, const float *logp,
                                     const float *adv, const float *values, const float *ret, const double *st,
                                     int *mb_act, float *mb_logp, float *mb_adv, float *mb_val, float *mb_ret)
{
    size_t b = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (b >= S) return;
    uint32_t j = idx[b];
    mb_act[b] = actions[j];
    mb_logp[b] = logp[j];
    mb_adv[b] = (float)((adv[j] - st[ST_MEAN]) * st[ST_INVSTD]);
    mb_val[b] = values[j];
    mb_ret[b] = ret[j];
}

/* The minibatch's observations, one warp per sample. */
__global__ static void gather_obs_kernel(const uint32_t *idx, size_t S, const unsigned char *obs, int os,
                                         unsigned char *mb_obs)
{
    size_t b = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (b >= S) return;
    const unsigned char *src = obs + (size_t)idx[b] * os;
    unsigned char *dst = mb_obs + b * os;
    for (int k = lane; k < os; k += 32) dst[k] = src[k];
}

__global__ static void add_chunk_kernel(double *st)
{
    int k = threadIdx.x;
    if (k < 6) st[ST_LOSS + k] += st[ST_CHUNK + k];
}

/* norm = sqrt(sum of squares); accumulated for the metrics. */
__global__ static void norm_kernel(double *st)
{
    if (threadIdx.x || blockIdx.x) return;
    st[ST_GNORM] += sqrt(st[ST_SUMSQ]);
}

__global__ static void clip_kernel(float *g, size_t n, const double *st, double max_norm)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    double norm = sqrt(st[ST_SUMSQ]);
    if (i < n && norm > max_norm) g[i] *= (float)(max_norm / norm);
}

/* scale: the bias corrections 1 / (1 - b1^t) and 1 / (1 - b2^t) */
__global__ static void adam_kernel(float *w, const float *g, float *m, float *v, size_t n, float lr, float b1,
                                   float b2, float eps, const float *scale)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s1 = scale[0], s2 = scale[1];
    float mi = b1 * m[i] + (1 - b1) * g[i];
    float vi = b2 * v[i] + (1 - b2) * g[i] * g[i];
    m[i] = mi;
    v[i] = vi;
    w[i] -= lr * (mi * s1) / (sqrtf(vi * s2) + eps);
}

/* ---- host side ---- */

/* A group of epochs' permutations goes up in one copy from page-locked
 * memory, and only between groups does the host wait for the device (to
 * have read the buffer it rewrites): at the paper's sizes (76,800 samples,
 * 10 epochs: 3 MB) the update waits once, at its end, where it reads its
 * metrics. */
#define PERM_BYTES_MAX ((size_t)64 << 20)

static int perm_group(int epochs, size_t N)
{
    size_t g = PERM_BYTES_MAX / (N * sizeof(uint32_t));
    return g < 1 ? 1 : g < (size_t)epochs ? (int)g : epochs;
}

extern "C" void pcg_ppo_free(pcg_cuda_ppo *p)
{
    if (!p) return;
    cudaStreamSynchronize(pcg_cuda_stream());
    pcg_graph_free(&p->graph);
    if (p->env) pcg_env_free(p->env);
    pcg_arena_release(p->mark);
    cudaFreeHost(p->perm_h);
    cudaFreeHost(p->adam_scale_h);
    free(p);
}

/* PCGRLLM_CUDA_PASS_MOST: the most samples a pass may take, a whole
 * number from 1 to PCG_PASS_MOST (unset or empty: PCG_PASS_MOST); -1 for
 * anything else. */
static int pass_most_env(void)
{
    const char *v = getenv("PCGRLLM_CUDA_PASS_MOST");
    if (!v || !*v) return PCG_PASS_MOST;
    char *end = NULL;
    long n = strtol(v, &end, 10);
    return *v >= '1' && *v <= '9' && !*end && n <= PCG_PASS_MOST ? (int)n : -1;
}

/* Samples per network pass (backend.h, pcg_pass_samples): the largest
 * passes of at most `most` whose activations take at most a quarter of
 * the free memory (no fewer than PCG_PASS_LEAST, unless most is). */
static int pass_samples(const nn_config *nc, size_t S, int E, int most)
{
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
        (void)cudaGetLastError(); /* not the trainer's error: the smallest passes */
        free_bytes = 0;
    }
    while (most > PCG_PASS_LEAST && pcg_nn_acts_bytes(nc, pcg_pass_samples(S, E, most)) > free_bytes / 4)
        most = most / 2 > PCG_PASS_LEAST ? most / 2 : PCG_PASS_LEAST;
    return pcg_pass_samples(S, E, most);
}

extern "C" pcg_cuda_ppo *pcg_ppo_init(const ppo_config *cfg, const nn_config *nc, const size_t *off, size_t n_params,
                                      const float *params, const void *reward)
{
    int T = cfg->n_steps, E = cfg->n_envs;
    if (T < 1 || E < 1 || cfg->n_minibatches < 1 || (size_t)T * E % (size_t)cfg->n_minibatches ||
        nc->in_ch > OBS_CHANNELS || (size_t)T * E > 0xffffffffu) {
        pcg_cuda_set_error("ppo_init: unusable configuration (%d steps x %d envs, %d minibatches)", T, E,
                           cfg->n_minibatches);
        return NULL;
    }
    char shown[41];
    if (pcg_graphs_env() < 0) {
        pcg_cuda_set_error("ppo_init: PCGRLLM_CUDA_GRAPHS=%s: not 0 (the host launches every kernel) or 1 (CUDA "
                           "graphs, the default)",
                           pcg_env_shown(getenv("PCGRLLM_CUDA_GRAPHS"), shown));
        return NULL;
    }
    int pass_most = pass_most_env();
    if (pass_most < 0) {
        pcg_cuda_set_error("ppo_init: PCGRLLM_CUDA_PASS_MOST=%s: not a whole number of samples from 1 to %d",
                           pcg_env_shown(getenv("PCGRLLM_CUDA_PASS_MOST"), shown), (int)PCG_PASS_MOST);
        return NULL;
    }
    pcg_cuda_ppo *p = (pcg_cuda_ppo *)calloc(1, sizeof *p);
    if (!p) {
        pcg_cuda_set_error("ppo_init: out of host memory");
        return NULL;
    }
    p->cfg = *cfg;
    p->nc = *nc;
    memcpy(p->off, off, sizeof p->off);
    p->n_params = n_params;
    size_t N = (size_t)T * E, S = N / (size_t)cfg->n_minibatches;
    size_t os = (size_t)(2 * cfg->map_h - 1) * (2 * cfg->map_w - 1);
    int A = nc->n_actions;
    p->cap = pass_samples(nc, S, E, pass_most);
    /* everything below, so that a first user gets an arena of the right size */
    size_t need = pcg_env_bytes(E, cfg->map_h, cfg->map_w) + pcg_nn_acts_bytes(nc, p->cap) +
                  4 * n_params * sizeof(float) + N * (os + 1 + 7 * 4) + (size_t)E * (A + 1) * 4 + S * (os + 5 * 4) +
                  N * 4 * (size_t)perm_group(cfg->n_epochs, N) + (ST_COUNT + RED_BLOCKS) * 8 + S * 4 +
                  8 * ((size_t)cfg->n_epochs * cfg->n_minibatches + 1) + 64 * 256;
    size_t used = 0, capacity = 0;
    pcg_arena_stats(&used, &capacity);
    if (used == 0) pcg_arena_reserve(need + need / 8 + ((size_t)64 << 20));
    p->perm_epochs = perm_group(cfg->n_epochs, N);
    /* page-locked, so that its copy neither waits for the stream nor is
     * staged: it is rewritten only after the stream has been waited for */
    size_t n_mb = (size_t)cfg->n_epochs * cfg->n_minibatches;
    if (cudaMallocHost((void **)&p->perm_h, N * (size_t)p->perm_epochs * sizeof(uint32_t)) != cudaSuccess ||
        cudaMallocHost((void **)&p->adam_scale_h, 2 * n_mb * sizeof(float)) != cudaSuccess) {
        if (p->perm_h) cudaFreeHost(p->perm_h);
        free(p);
        pcg_cuda_set_error("ppo_init: out of host memory");
        return NULL;
    }
    p->mark = pcg_arena_mark();
    p->env = pcg_env_alloc(E, cfg->map_h, cfg->map_w, cfg->variant, cfg->seed, PCG_OBS_WARP);
    if (!p->env || pcg_env_set_rules(p->env, &cfg->rules)) goto fail;
    if (reward && pcg_env_set_reward(p->env, reward)) goto fail;
    if (pcg_nn_acts_alloc(&p->acts, nc, p->cap)) goto fail;
#define TAKE(ptr, count, type)                                                \
    do {                                                                      \
        ptr = (type *)pcg_arena_alloc((size_t)(count) * sizeof(type));        \
        if (!ptr) goto fail;                                                  \
    } while (0)
    TAKE(p->P, n_params, float);
    TAKE(p->G, n_params, float);
    TAKE(p->M, n_params, float);
    TAKE(p->V, n_params, float);
    TAKE(p->obs, N * os, unsigned char);
    TAKE(p->dones, N, unsigned char);
    TAKE(p->actions, N, int);
    TAKE(p->logp, N, float);
    TAKE(p->values, N, float);
    TAKE(p->rewards, N, float);
    TAKE(p->adv, N, float);
    TAKE(p->ret, N, float);
    TAKE(p->logits, (size_t)E * A, float);
    TAKE(p->last, E, float);
    TAKE(p->perm_d, N * (size_t)p->perm_epochs, uint32_t);
    TAKE(p->mb_obs, S * os, unsigned char);
    TAKE(p->mb_act, S, int);
    TAKE(p->mb_logp, S, float);
    TAKE(p->mb_adv, S, float);
    TAKE(p->mb_val, S, float);
    TAKE(p->mb_ret, S, float);
    TAKE(p->stats, ST_COUNT, double);
    TAKE(p->partial, RED_BLOCKS, double);
    TAKE(p->mb_idx, S, uint32_t);
    TAKE(p->mb_scale, 2, float);
    TAKE(p->adam_scale_d, 2 * n_mb, float);
#undef TAKE
    {
        cudaStream_t s = pcg_cuda_stream();
        cudaError_t ce = cudaMemcpyAsync(p->P, params, n_params * sizeof(float), cudaMemcpyHostToDevice, s);
        const char *what = "parameters to the device";
        if (ce == cudaSuccess) ce = cudaMemsetAsync(p->G, 0, n_params * sizeof(float), s), what = "clearing G";
        if (ce == cudaSuccess) ce = cudaMemsetAsync(p->M, 0, n_params * sizeof(float), s), what = "clearing M";
        if (ce == cudaSuccess) ce = cudaMemsetAsync(p->V, 0, n_params * sizeof(float), s), what = "clearing V";
        if (ce == cudaSuccess) ce = cudaMemsetAsync(p->stats, 0, ST_COUNT * sizeof(double), s), what = "clearing stats";
        if (ce == cudaSuccess) ce = cudaStreamSynchronize(s), what = "synchronising";
        if (ce != cudaSuccess) {
            pcg_cuda_set_error("ppo_init: %s: %s", what, cudaGetErrorString(ce));
            goto fail;
        }
    }
    p->top = pcg_arena_mark();
    p->graph_state = pcg_graphs_env() ? 0 : -1;
    return p;
fail:
    if (p->env) pcg_env_free(p->env);
    p->env = NULL;
    pcg_arena_release(p->mark);
    cudaFreeHost(p->perm_h);
    cudaFreeHost(p->adam_scale_h);
    free(p);
    return NULL;
}

/* Forward the policy on n observations in chunks; logits (may be NULL) and
 * values out. */
static int forward_all(pcg_cuda_ppo *p, const unsigned char *obs, int n, float *logits, float *values)
{
    int A = p->nc.n_actions;
    size_t os = (size_t)p->nc.crop_h * p->nc.crop_w;
    cudaStream_t s = pcg_cuda_stream();
    for (int i = 0; i < n; i += p->cap) {
        int B = n - i < p->cap ? n - i : p->cap;
        if (pcg_nn_forward(&p->nc, p->off, p->P, &p->acts, obs + (size_t)i * os, B)) return -1;
        if (logits)
            PCG_CK(cudaMemcpyAsync(logits + (size_t)i * A, p->acts.logits, sizeof(float) * (size_t)B * A,
                                   cudaMemcpyDeviceToDevice, s),
                   -1);
        PCG_CK(cudaMemcpyAsync(values + i, p->acts.value, sizeof(float) * (size_t)B, cudaMemcpyDeviceToDevice, s), -1);
    }
    return 0;
}

extern "C" int pcg_ppo_rollout(pcg_cuda_ppo *p, ppo_metrics *m)
{
    const ppo_config *c = &p->cfg;
    int T = c->n_steps, E = c->n_envs, A = p->nc.n_actions;
    size_t os = (size_t)p->nc.crop_h * p->nc.crop_w;
    const env_batch *d = pcg_env_dev(p->env);
    cudaStream_t s = pcg_cuda_stream();
    double t0 = now_s();
    if (pcg_env_log_clear(p->env)) return -1;
    for (int t = 0; t < T; t++) {
        size_t base = (size_t)t * E;
        PCG_CK(cudaMemcpyAsync(p->obs + base * os, d->obs, (size_t)E * os, cudaMemcpyDeviceToDevice, s), -1);
        if (forward_all(p, d->obs, E, p->logits, p->values + base)) return -1;
        unsigned long long n = (unsigned long long)p->step / (unsigned long long)E + (unsigned long long)t;
        PCG_LAUNCH(sample_kernel, grid_for((size_t)E, PPO_THREADS), PPO_THREADS, 0, s, p->logits, A, E, c->seed, n,
                                                                               p->actions + base, p->logp + base);
        KCK();
        if (pcg_env_step_device(p->env, p->actions + base)) return -1;
        PCG_CK(cudaMemcpyAsync(p->rewards + base, d->rewards, sizeof(float) * (size_t)E, cudaMemcpyDeviceToDevice, s),
               -1);
        PCG_CK(cudaMemcpyAsync(p->dones + base, d->dones, (size_t)E, cudaMemcpyDeviceToDevice, s), -1);
    }
    if (forward_all(p, d->obs, E, NULL, p->last)) return -1;
    PCG_LAUNCH(gae_kernel, grid_for((size_t)E, PPO_THREADS), PPO_THREADS, 0, s, T, E, p->rewards, p->values, p->dones, p->last,
                                                                        c->gamma, c->gae_lambda, p->adv, p->ret);
    KCK();
    size_t N = (size_t)T * E;
    if (reduce(red_float{p->rewards}, N, 1.0, 0, p->stats + ST_REWARD, p->partial)) return -1;
    double reward_sum = 0;
    PCG_CK(cudaMemcpyAsync(&reward_sum, p->stats + ST_REWARD, sizeof reward_sum, cudaMemcpyDeviceToHost, s), -1);
    pcg_cuda_env_log log;
    if (pcg_env_get_log(p->env, &log)) return -1; /* synchronises */
    p->step += (int64_t)N;
    m->step = p->step;
    m->episodes = log.episodes;
    m->episode_reward = log.episodes > 0 ? log.episode_return / log.episodes : NAN;
    m->step_reward = reward_sum / (double)N;
    m->t_env = 0;
    m->t_forward = 0;
    m->t_rollout = now_s() - t0;
    return 0;
}

/* The permutations of epochs ep.. of this update's next group into the
 * host buffer and up, once the last copy from it is known done: an update
 * ends by waiting for the stream, so its next one need not wait first. */
static int upload_perms(pcg_cuda_ppo *p, int ep)
{
    const ppo_config *c = &p->cfg;
    size_t N = (size_t)c->n_steps * c->n_envs;
    cudaStream_t s = pcg_cuda_stream();
    if (p->perm_copying) PCG_CK(cudaStreamSynchronize(s), -1);
    int n = c->n_epochs - ep < p->perm_epochs ? c->n_epochs - ep : p->perm_epochs;
    for (int k = 0; k < n; k++)
        ppo_stream_shuffle(p->perm_h + (size_t)k * N, N, c->seed,
                           PPO_STREAM_SHUFFLE + (uint64_t)p->update * (uint64_t)c->n_epochs + (uint64_t)(ep + k));
    PCG_CK(cudaMemcpyAsync(p->perm_d, p->perm_h, (size_t)n * N * sizeof(uint32_t), cudaMemcpyHostToDevice, s), -1);
    p->perm_copying = 1;
    return 0;
}

/* One minibatch's work on the inputs in mb_idx and mb_scale: the same
 * launches with the same arguments every time, so it can run as a graph. */
static int minibatch_work(pcg_cuda_ppo *p)
{
    const ppo_config *c = &p->cfg;
    size_t S = (size_t)c->n_steps * c->n_envs / (size_t)c->n_minibatches;
    size_t os = (size_t)p->nc.crop_h * p->nc.crop_w;
    int A = p->nc.n_actions;
    cudaStream_t s = pcg_cuda_stream();
    const uint32_t *idx = p->mb_idx;
    if (reduce(red_gather{p->adv, idx}, S, (double)S, 0, p->stats + ST_MEAN, p->partial)) return -1;
    if (reduce(red_deviation{p->adv, idx, p->stats + ST_MEAN}, S, (double)S, 0, p->stats + ST_VAR, p->partial))
        return -1;
    PCG_LAUNCH(inv_std_kernel, 1, 32, 0, s, p->stats);
    PCG_LAUNCH(gather_kernel, grid_for(S, PPO_THREADS), PPO_THREADS, 0, s, idx, S, p->actions, p->logp, p->adv,
               p->values, p->ret, p->stats, p->mb_act, p->mb_logp, p->mb_adv, p->mb_val, p->mb_ret);
    PCG_LAUNCH(gather_obs_kernel, grid_for(S * 32, PPO_THREADS), PPO_THREADS, 0, s, idx, S, p->obs, (int)os,
               p->mb_obs);
    KCK();
    PCG_CK(cudaMemsetAsync(p->G, 0, p->n_params * sizeof(float), s), -1);
    for (size_t i0 = 0; i0 < S; i0 += (size_t)p->cap) {
        int B = (int)(S - i0 < (size_t)p->cap ? S - i0 : (size_t)p->cap);
        const unsigned char *o = p->mb_obs + i0 * os;
        if (pcg_nn_forward(&p->nc, p->off, p->P, &p->acts, o, B)) return -1;
        if (pcg_nn_ppo_loss(&p->acts, B, A, p->mb_act + i0, p->mb_logp + i0, p->mb_adv + i0, p->mb_val + i0,
                            p->mb_ret + i0, c->clip_eps, c->vf_coef, c->ent_coef, 1.0 / (double)S,
                            p->stats + ST_CHUNK))
            return -1;
        PCG_LAUNCH(add_chunk_kernel, 1, 32, 0, s, p->stats);
        KCK();
        if (pcg_nn_backward(&p->nc, p->off, p->P, p->G, &p->acts, o, B)) return -1;
    }
    if (reduce(red_square{p->G}, p->n_params, 1.0, 0, p->stats + ST_SUMSQ, p->partial)) return -1;
    PCG_LAUNCH(norm_kernel, 1, 32, 0, s, p->stats);
    PCG_LAUNCH(clip_kernel, grid_for(p->n_params, PPO_THREADS), PPO_THREADS, 0, s, p->G, p->n_params, p->stats,
               c->max_grad_norm);
    PCG_LAUNCH(adam_kernel, grid_for(p->n_params, PPO_THREADS), PPO_THREADS, 0, s, p->P, p->G, p->M, p->V,
               p->n_params, c->lr, c->adam_b1, c->adam_b2, c->adam_eps, p->mb_scale);
    KCK();
    return 0;
}

static int minibatch_work_fn(void *p)
{
    return minibatch_work((pcg_cuda_ppo *)p);
}

/* The graph to launch for the minibatch, captured the first time (and
 * again after the matmul mode or conv 2's path changed, where its scratch
 * is still the arena's top); the host launches the work itself where the trainer's
 * memory is not the arena's top (something allocated after it) or the
 * device would not capture. */
static void minibatch_graph_ready(pcg_cuda_ppo *p)
{
    int key = pcg_nn_launch_key();
    if (p->graph_state == 1 && p->graph_key != key) {
        int top = pcg_arena_mark() == p->graph.end;
        pcg_graph_free(&p->graph);
        if (top) pcg_arena_release(p->top);
        p->graph_state = top ? 0 : -1;
    }
    if (p->graph_state != 0) return;
    if (pcg_arena_mark() != p->top || pcg_blas_prepare() || pcg_graph_capture(&p->graph, minibatch_work_fn, p)) {
        p->graph_state = -1;
        return;
    }
    p->graph_state = 1;
    p->graph_key = key;
}

/* Minibatch k of the update (epoch ep, minibatch mb): its inputs into
 * place, then its work. */
static int minibatch_run(pcg_cuda_ppo *p, int ep, int mb, int k)
{
    const ppo_config *c = &p->cfg;
    size_t N = (size_t)c->n_steps * c->n_envs, S = N / (size_t)c->n_minibatches;
    cudaStream_t s = pcg_cuda_stream();
    const uint32_t *idx = p->perm_d + (size_t)(ep % p->perm_epochs) * N + (size_t)mb * S;
    PCG_CK(cudaMemcpyAsync(p->mb_idx, idx, S * sizeof(uint32_t), cudaMemcpyDeviceToDevice, s), -1);
    PCG_CK(cudaMemcpyAsync(p->mb_scale, p->adam_scale_d + 2 * (size_t)k, 2 * sizeof(float),
                           cudaMemcpyDeviceToDevice, s),
           -1);
    minibatch_graph_ready(p);
    return p->graph_state == 1 ? pcg_graph_launch(&p->graph) : minibatch_work(p);
}

/* Adam's bias corrections for the update's minibatches, steps adam_t + 1
 * on, up to the device (after a wait where an update that failed left
 * its copy pending). */
static int upload_adam_scales(pcg_cuda_ppo *p)
{
    const ppo_config *c = &p->cfg;
    int n = c->n_epochs * c->n_minibatches;
    if (p->adam_copying) PCG_CK(cudaStreamSynchronize(pcg_cuda_stream()), -1);
    for (int k = 0; k < n; k++) {
        double t = (double)(p->adam_t + 1 + k);
        p->adam_scale_h[2 * k] = (float)(1.0 / (1.0 - pow(c->adam_b1, t)));
        p->adam_scale_h[2 * k + 1] = (float)(1.0 / (1.0 - pow(c->adam_b2, t)));
    }
    PCG_CK(cudaMemcpyAsync(p->adam_scale_d, p->adam_scale_h, 2 * (size_t)n * sizeof(float), cudaMemcpyHostToDevice,
                           pcg_cuda_stream()),
           -1);
    p->adam_copying = 1;
    return 0;
}

extern "C" int pcg_ppo_update(pcg_cuda_ppo *p, ppo_metrics *m)
{
    const ppo_config *c = &p->cfg;
    size_t N = (size_t)c->n_steps * c->n_envs;
    cudaStream_t s = pcg_cuda_stream();
    double t0 = now_s();
    PCG_CK(cudaMemsetAsync(p->stats, 0, ST_COUNT * sizeof(double), s), -1);
    if (upload_adam_scales(p)) return -1;
    int n_mb = 0;
    for (int ep = 0; ep < c->n_epochs; ep++) {
        if (ep % p->perm_epochs == 0 && upload_perms(p, ep)) return -1;
        for (int mb = 0; mb < c->n_minibatches; mb++) {
            if (minibatch_run(p, ep, mb, n_mb)) return -1;
            p->adam_t++;
            n_mb++;
        }
    }
    double st[ST_COUNT];
    PCG_CK(cudaMemcpyAsync(st, p->stats, sizeof st, cudaMemcpyDeviceToHost, s), -1);
    PCG_CK(cudaStreamSynchronize(s), -1);
    p->perm_copying = p->adam_copying = 0;
    double samples = (double)N * c->n_epochs;
    m->policy_loss = st[ST_POLICY] / samples;
    m->value_loss = st[ST_VALUE] / samples;
    m->entropy = st[ST_ENTROPY] / samples;
    m->approx_kl = st[ST_KL] / samples;
    m->clip_frac = st[ST_CLIPPED] / samples;
    m->loss = st[ST_LOSS] / n_mb;
    m->grad_norm = st[ST_GNORM] / n_mb;
    m->t_update = now_s() - t0;
    p->update++;
    m->update = p->update;
    return 0;
}

extern "C" int pcg_ppo_train_update(pcg_cuda_ppo *p, ppo_metrics *m)
{
    memset(m, 0, sizeof *m);
    if (pcg_ppo_rollout(p, m) || pcg_ppo_update(p, m)) return -1;
    m->sps = (double)p->cfg.n_steps * p->cfg.n_envs / (m->t_rollout + m->t_update);
    return 0;
}

extern "C" int pcg_ppo_get_state(pcg_cuda_ppo *p, pcg_cuda_ppo_state *o)
{
    cudaStream_t s = pcg_cuda_stream();
    size_t bytes = p->n_params * sizeof(float);
    if (o->params) PCG_CK(cudaMemcpyAsync(o->params, p->P, bytes, cudaMemcpyDeviceToHost, s), -1);
    if (o->adam_m) PCG_CK(cudaMemcpyAsync(o->adam_m, p->M, bytes, cudaMemcpyDeviceToHost, s), -1);
    if (o->adam_v) PCG_CK(cudaMemcpyAsync(o->adam_v, p->V, bytes, cudaMemcpyDeviceToHost, s), -1);
    PCG_CK(cudaStreamSynchronize(s), -1);
    pcg_cuda_env_host eh;
    memset(&eh, 0, sizeof eh);
    eh.maps = o->maps;
    eh.frozen = o->frozen;
    eh.steps = o->steps;
    eh.rng_pos = o->rng_pos;
    eh.returns = o->returns;
    if (pcg_env_copy(p->env, &eh)) return -1;
    o->adam_t = p->adam_t;
    o->step = p->step;
    o->update = p->update;
    return 0;
}

extern "C" int pcg_ppo_set_state(pcg_cuda_ppo *p, const pcg_cuda_ppo_state *o)
{
    if (!o->params || !o->adam_m || !o->adam_v || !o->maps || !o->frozen || !o->steps || !o->rng_pos || !o->returns) {
        pcg_cuda_set_error("ppo_set_state: every array of the state is needed");
        return -1;
    }
    cudaStream_t s = pcg_cuda_stream();
    size_t bytes = p->n_params * sizeof(float);
    PCG_CK(cudaMemcpyAsync(p->P, o->params, bytes, cudaMemcpyHostToDevice, s), -1);
    PCG_CK(cudaMemcpyAsync(p->M, o->adam_m, bytes, cudaMemcpyHostToDevice, s), -1);
    PCG_CK(cudaMemcpyAsync(p->V, o->adam_v, bytes, cudaMemcpyHostToDevice, s), -1);
    if (pcg_env_load(p->env, o->maps, o->frozen, o->steps, o->rng_pos, o->returns)) return -1;
    p->adam_t = o->adam_t;
    p->step = o->step;
    p->update = o->update;
    return 0;
}

extern "C" int pcg_ppo_get_rollout(pcg_cuda_ppo *p, pcg_cuda_rollout_host *o)
{
    cudaStream_t s = pcg_cuda_stream();
    size_t N = (size_t)p->cfg.n_steps * p->cfg.n_envs, os = (size_t)p->nc.crop_h * p->nc.crop_w;
    struct {
        void *dst;
        const void *src;
        size_t bytes;
    } c[] = {{o->obs, p->obs, N * os},          {o->dones, p->dones, N},
             {o->actions, p->actions, N * 4},   {o->logp, p->logp, N * 4},
             {o->values, p->values, N * 4},     {o->rewards, p->rewards, N * 4},
             {o->adv, p->adv, N * 4},           {o->ret, p->ret, N * 4}};
    for (auto &x : c)
        if (x.dst) PCG_CK(cudaMemcpyAsync(x.dst, x.src, x.bytes, cudaMemcpyDeviceToHost, s), -1);
    PCG_CK(cudaStreamSynchronize(s), -1);
    return 0;
}

extern "C" pcg_cuda_env *pcg_ppo_env(pcg_cuda_ppo *p)
{
    return p->env;
}
