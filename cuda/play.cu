/* Level generation (docs/method.md#evaluation) on the device: ppo_play_episode of host/learn/ppo.c
 * with the environments, the policy forward and the action draws on the
 * device.  n environments start from the map seed exactly as env_alloc's
 * (cuda/env.cu keeps host/core/env.c's streams), each step forwards the policy on
 * the device observations, samples every action with ppo_action_draw's
 * uniform draw (action seed, subsequence 3*2^32+env, draw t) and steps the
 * batch.  Under FINAL_LEVEL_768 the last step applies the edit alone (no
 * reward, no auto-reset), so the maps after it are the levels; under
 * FINAL_LEVEL_767 the episode stops before it.  Nothing returns to the host
 * until the final maps. */
#include "common.cuh"
#include <curand_kernel.h>
#include "env_rules.h"
#include <string.h>

/* cuda/env.cu's internals, as the trainer uses them */
const env_batch *pcg_env_dev(const pcg_cuda_env *e);
int pcg_env_step_device(pcg_cuda_env *e, const int *dev_actions);

/* host/learn/ppo.c's action stream and sampling */
#include "ppo_streams.h"
#define PLAY_THREADS 128
/* observations per device forward: the CPU's chunk, about 250 MB of
 * activations with the paper preset (memory only: each observation's logits
 * are its own) */
#define PLAY_CHUNK 256

/* ppo_sample (host/learn/ppo_streams.h) with ppo_action_draw(seed, env, t). */
__global__ static void play_sample_kernel(const float *logits, int A, int n, unsigned long long seed,
                                          unsigned long long t, int *act)
{
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n) return;
    float logp;
    act[e] = ppo_stream_sample(logits + (size_t)e * A, A, ppo_stream_draw(seed, e, t), &logp);
}

/* The episode's last step as ppo_play_episode applies it: the edit at step
 * steps[i] (= episode_len - 1) and nothing else, so the map stays. */
__global__ static void play_last_kernel(env_batch d, const int *act)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.n) return;
    d.actions[i] = act[i];
    batch_edit(&d, i, 0, 0, 0, 0);
}

#define PLAY_KCK(what)                                                                                   \
    do {                                                                                                 \
        cudaError_t e_ = cudaGetLastError();                                                             \
        if (e_ != cudaSuccess) {                                                                         \
            pcg_cuda_set_error("play_episode: %s: %s", what, cudaGetErrorString(e_));                    \
            goto fail;                                                                                   \
        }                                                                                                \
    } while (0)

extern "C" int pcg_play_episode(const nn_config *nc, const size_t *off, size_t n_params, const float *params, int n,
                                int h, int w, int variant, uint64_t seed, uint64_t action_seed,
                                const env_rules *rules, unsigned char *final_maps)
{
    if (!nc || !off || !params || !final_maps || n_params == 0 || n <= 0) {
        pcg_cuda_set_error("play_episode: bad arguments (%d environments, %zu parameters)", n, n_params);
        return -1;
    }
    for (int t = 0; t < NN_NTENSORS; t++)
        if (off[t] >= n_params) {
            pcg_cuda_set_error("play_episode: parameter tensor %d at %zu outside the %zu parameters", t, off[t],
                               n_params);
            return -1;
        }
    int cap = n < PLAY_CHUNK ? n : PLAY_CHUNK, A = nc->n_actions;
    if (A < 1 || A > 64 || nc->in_ch > OBS_CHANNELS) {
        pcg_cuda_set_error("play_episode: unusable network (%d actions, %d channels)", A, nc->in_ch);
        return -1;
    }
    /* a first user gets an arena of the right size */
    if (h >= 5 && w >= 5 && h <= PCG_MAX_SIDE && w <= PCG_MAX_SIDE) {
        size_t need = pcg_env_bytes(n, h, w) + pcg_nn_acts_bytes(nc, cap) + n_params * sizeof(float) +
                      (size_t)n * ((size_t)A + 1) * sizeof(float) + 8 * 256;
        size_t used = 0, capacity = 0;
        pcg_arena_stats(&used, &capacity);
        if (used == 0 && need + ((size_t)64 << 20) > capacity) pcg_arena_reserve(need + need / 8 + ((size_t)64 << 20));
    }
    size_t mark = pcg_arena_mark();
    cudaStream_t s = pcg_cuda_stream();
    float *P = NULL, *logits = NULL;
    int *act = NULL;
    nn_acts a;
    memset(&a, 0, sizeof a);
    pcg_cuda_env *e = pcg_env_alloc(n, h, w, variant, seed, PCG_OBS_WARP);
    if (!e) return -1;
    if (rules && pcg_env_set_rules(e, rules)) goto fail;
    {
        const env_batch *d = pcg_env_dev(e);
        if (nc->crop_h != d->c.crop_h || nc->crop_w != d->c.crop_w || A != d->c.n_actions) {
            pcg_cuda_set_error("play_episode: the network sees %dx%d crops with %d actions, the environment %dx%d "
                               "with %d",
                               nc->crop_h, nc->crop_w, A, d->c.crop_h, d->c.crop_w, d->c.n_actions);
            goto fail;
        }
        P = (float *)pcg_arena_alloc(n_params * sizeof(float));
        logits = P ? (float *)pcg_arena_alloc((size_t)n * A * sizeof(float)) : NULL;
        act = logits ? (int *)pcg_arena_alloc((size_t)n * sizeof(int)) : NULL;
        if (!act || pcg_nn_acts_alloc(&a, nc, cap)) goto fail;
        cudaError_t ce = cudaMemcpyAsync(P, params, n_params * sizeof(float), cudaMemcpyHostToDevice, s);
        if (ce != cudaSuccess) {
            pcg_cuda_set_error("play_episode: parameters to the device: %s", cudaGetErrorString(ce));
            goto fail;
        }
        size_t os = (size_t)d->obs_size;
        int T = d->c.episode_len;
        /* under FINAL_LEVEL_767 the last step is never taken: its edit is not kept */
        int steps = d->c.rules.final_level == FINAL_LEVEL_768 ? T : T - 1;
        unsigned grid = (unsigned)((n + PLAY_THREADS - 1) / PLAY_THREADS);
        for (int t = 0; t < steps; t++) {
            for (int i = 0; i < n; i += cap) {
                int B = n - i < cap ? n - i : cap;
                if (pcg_nn_forward(nc, off, P, &a, d->obs + (size_t)i * os, B)) goto fail;
                ce = cudaMemcpyAsync(logits + (size_t)i * A, a.logits, sizeof(float) * (size_t)B * A,
                                     cudaMemcpyDeviceToDevice, s);
                if (ce != cudaSuccess) {
                    pcg_cuda_set_error("play_episode: logits copy: %s", cudaGetErrorString(ce));
                    goto fail;
                }
            }
            PCG_LAUNCH(play_sample_kernel, grid, PLAY_THREADS, 0, s, logits, A, n, (unsigned long long)action_seed,
                                                             (unsigned long long)t, act);
            PLAY_KCK("sample kernel");
            if (t < T - 1) {
                if (pcg_env_step_device(e, act)) goto fail;
            } else {
                PCG_LAUNCH(play_last_kernel, grid, PLAY_THREADS, 0, s, *d, act);
                PLAY_KCK("last step kernel");
            }
        }
        pcg_cuda_env_host out;
        memset(&out, 0, sizeof out);
        out.maps = final_maps;
        if (pcg_env_copy(e, &out)) goto fail; /* synchronises */
    }
    pcg_env_free(e);
    pcg_arena_release(mark);
    return 0;
fail:
    pcg_env_free(e);
    pcg_arena_release(mark);
    return -1;
}
