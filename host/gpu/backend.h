/* Compute backend selection and the C ABI of the CUDA backend.
 *
 * The CUDA backend is a separate shared object, libpcgrllm_cuda.so, built by
 * `make cuda` from the sources in cuda/.  The pcgrllm binary never links CUDA: it loads
 * the driver (libcuda.so.1) only to probe for a device, and dlopens the
 * backend library only when `--backend cuda|auto` asks for it and a device
 * is usable.  So one binary runs on machines without a GPU, without the
 * driver and without the CUDA toolkit.
 *
 * The library exports one symbol, PCG_CUDA_ENTRY, a function returning the
 * table below.  Every entry returns 0 (or a count / pointer) on success and
 * -1 (or NULL) on failure; last_error() then holds one line saying what
 * failed.  This header is plain C and is also included by the .cu files. */
#ifndef PCG_BACKEND_H
#define PCG_BACKEND_H
#include <stddef.h>
#include <stdint.h>
#include "nn.h"
#include "nn_shapes.h"
#include "ppo.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { BACKEND_CPU = 0, BACKEND_CUDA = 1 };

/* name is "cpu", "cuda" or "auto".  Returns BACKEND_CPU or BACKEND_CUDA, or
 * -1 with one line in err (no device, no driver, library missing, bad name).
 * "auto" picks CUDA when a device is usable and the library loads, else CPU
 * (never an error).  After BACKEND_CUDA, backend_cuda() is the loaded table.
 * With the CUDA backend, PCGRLLM_GPU=k in the environment selects device k
 * (how independent jobs are spread over the GPUs of one machine); an index
 * that is not a device is an error. */
int backend_select(const char *name, char *err, int errlen);
/* The GPU index backend_select chose (PCGRLLM_GPU, else 0). */
int backend_gpu(void);

const char *backend_name(int backend);

/* Number of CUDA devices the driver reports, 0 when there is no driver or no
 * device; why (when 0) goes to why[] if given.  Does not load the library. */
int backend_cuda_devices(char *why, int whylen);

/* Load libpcgrllm_cuda.so (once) and return its table, or NULL with one line
 * in err.  Search order: $PCGRLLM_CUDA_LIB, the binary's directory, the
 * binary's directory + "/build", then the dynamic loader's path. */
const struct pcg_cuda_api *backend_cuda_load(char *err, int errlen);
/* The simulation library (`make cuda-sim`, docs/cuda.md) for the work
 * model: $PCGRLLM_CUDA_LIB, else the counting variant build/sim-count/
 * beside the binary (then sim-count/, the binary's directory, build/sim/,
 * sim/).  NULL with one line in err, also when what loads is the device
 * library. */
const struct pcg_cuda_api *backend_sim_load(char *err, int errlen);
/* The table loaded by backend_select / backend_cuda_load, or NULL. */
const struct pcg_cuda_api *backend_cuda(void);
/* Path the library was loaded from ("" before). */
const char *backend_cuda_path(void);

/* ---- the ABI of libpcgrllm_cuda.so ---- */

#define PCG_CUDA_ABI_VERSION 7
#define PCG_CUDA_ENTRY "pcg_cuda_backend_v6"
#define PCG_CUDA_LIB "libpcgrllm_cuda.so"
/* The same kernels built for the CPU (`make cuda-sim`, docs/cuda.md): the
 * same table, every launch checked against a device's limits. */
#define PCG_CUDA_SIM_LIB "libpcgrllm_cuda_sim.so"

/* Reward kernels.  A reward module (a cubin, fatbin or PTX image, e.g. the
 * NVRTC output of reward source + device prelude) must define
 *
 *   extern "C" __global__ void pcg_reward_kernel(int n, int h, int w,
 *       const unsigned char *prev, const unsigned char *curr, float *rewards);
 *
 * one thread per environment i < n: rewards[i] = compute_reward(prev level,
 * current level), each level h*w tile ids at prev + i*h*w, curr + i*h*w.
 * It is launched right after the edit of every step, before auto-reset. */
#define PCG_REWARD_KERNEL "pcg_reward_kernel"
#define PCG_REWARD_BLOCK 128 /* reward_jit.h's REWARD_KERNEL_BLOCK, which the kernel is built for */

/* Thread mappings of the observation copy (measured by `pcgrllm device
 * --bench`): one thread per environment inside the step kernel, or a
 * separate kernel with one warp per environment. */
enum { PCG_OBS_THREAD = 0, PCG_OBS_WARP = 1 };

/* Matmul modes of the device sgemm: fp32 (default), TF32 tensor cores
 * (10-bit mantissa products), bf16 tensor cores (8-bit mantissa products). */
enum { PCG_MATH_FP32 = 0, PCG_MATH_TF32 = 1, PCG_MATH_BF16 = 2 };
/* How conv 2 runs on the device: AUTO as the network does (in TF32 and
 * bf16 the implicit GEMMs on tensor cores where the device has them
 * (compute capability 8 or more), else im2col + cuBLAS's tensor cores; in
 * fp32 the implicit GEMMs on fp32 FMA), or one by name: IMPLICIT is the
 * FMA implicit GEMMs in every mode, TENSOR the tensor-core ones (in fp32,
 * or on an older device, the FMA ones: fp32 stays fp32). */
enum { PCG_CONV_AUTO = 0, PCG_CONV_IM2COL = 1, PCG_CONV_IMPLICIT = 2, PCG_CONV_TENSOR = 3 };

/* Samples per network pass of the device trainer (cuda/ppo.cu; the bench's
 * model counts the same passes): the minibatch of S samples, or the
 * rollout's E environments where more, in the fewest equal passes of at
 * most `most` samples.  Fewer passes are fewer launches; the gradient is
 * the minibatch's whatever the passes.  The trainer starts from
 * PCG_PASS_MOST and halves it, to no less than PCG_PASS_LEAST, while the
 * passes' activations would take more than a quarter of the device's free
 * memory. */
enum { PCG_PASS_MOST = 8192, PCG_PASS_LEAST = 2048 };
static inline int pcg_pass_samples(size_t S, int E, int most)
{
    size_t want = S > (size_t)E ? S : (size_t)E;
    size_t passes = (want + (size_t)most - 1) / (size_t)most;
    return (int)((want + passes - 1) / passes);
}

typedef struct pcg_cuda_env pcg_cuda_env; /* opaque, device-resident */
typedef struct pcg_cuda_ppo pcg_cuda_ppo; /* opaque, device-resident */

/* A device trainer's resumable state in host memory (what a checkpoint
 * holds, see host/learn/checkpoint.h); NULL arrays are skipped. */
typedef struct {
    float *params, *adam_m, *adam_v; /* n_params each */
    int64_t adam_t, step, update;
    unsigned char *maps, *frozen;    /* n_envs * cells */
    int *steps;                      /* n_envs */
    uint64_t *rng_pos;
    float *returns;
} pcg_cuda_ppo_state;

/* Host arrays of a device rollout, [n_steps][n_envs] as ppo_t's; NULL
 * fields are skipped. */
typedef struct {
    unsigned char *obs, *dones;
    int *actions;
    float *logp, *values, *rewards, *adv, *ret;
} pcg_cuda_rollout_host;

typedef struct {
    char name[256];
    int major, minor;          /* compute capability */
    int sm_count;
    size_t total_mem, free_mem;
    int driver_version, runtime_version; /* e.g. 12080 */
} pcg_cuda_device_info;

/* Host arrays to fill from a device environment, laid out exactly as env_t's
 * (host/core/env.h); NULL fields are skipped. */
typedef struct {
    unsigned char *maps, *frozen, *pad, *obs, *dones, *prev;
    int *steps, *actions;
    uint64_t *rng_pos;
    float *rewards, *returns;
} pcg_cuda_env_host;

/* Episode statistics as env_log: episodes, sum of their returns, edits that
 * changed a cell. */
typedef struct {
    double episodes, episode_return, changed;
} pcg_cuda_env_log;

/* What the simulation counted for one kernel, or one cuBLAS call shape
 * ("cublas gemm nt MxNxK": flops 2*M*N*K), copies and sets, host rewards,
 * and "host synchronisations" (launches = how many).  docs/cuda.md says
 * how each figure is counted. */
typedef struct {
    char name[64];
    uint64_t launches, threads, bytes_read, bytes_written, flops;
    uint64_t graph_launches; /* of the launches, those a CUDA graph's launch made (since ABI 7) */
} pcg_cuda_work;
/* The names of the entries that are not a hand-written kernel: a cuBLAS
 * call shape begins with PCG_WORK_BLAS; a note (all counts 0) says what
 * this build or a kernel's FLOP row leaves uncounted. */
#define PCG_WORK_BLAS "cublas "
#define PCG_WORK_COPY "cudaMemcpy device to device"
#define PCG_WORK_SET "cudaMemset"
#define PCG_WORK_SYNC "host synchronisations"
#define PCG_WORK_GRAPH "cudaGraphLaunch"
#define PCG_WORK_NOTE "note: "
/* A hand-written kernel whose name holds this runs its products on
 * tensor cores, WMMA TF32 fragments (bf16 operands too), or bf16
 * fragments where its name also holds PCG_WORK_BF16 */
#define PCG_WORK_TENSOR "_tc_kernel"
#define PCG_WORK_BF16 ", bf16>"

/* A reward computed on the host for the simulation (the reward source
 * compiled for the CPU in the confined worker that trains): rewards[i] for
 * environment i of n, levels h*w tile ids as the reward kernel's. */
typedef int (*pcg_host_reward_fn)(void *ctx, int n, int h, int w, const unsigned char *prev,
                                  const unsigned char *curr, float *rewards);

typedef struct pcg_cuda_api {
    int abi_version; /* PCG_CUDA_ABI_VERSION */
    int size;        /* sizeof(struct pcg_cuda_api) */
    /* 1 in the simulation library (no device: the kernels run on the CPU,
     * docs/cuda.md), 0 in the device library */
    int simulated;
    const char *(*last_error)(void);

    /* devices */
    int (*device_count)(void); /* -1 and last_error when none is usable */
    int (*device_info)(int dev, pcg_cuda_device_info *out);
    int (*set_device)(int dev); /* before anything is allocated */
    int (*sync)(void);
    /* sync that gives up after `seconds` (a runaway reward kernel): -1 and
     * last_error; the kernel keeps running until the process exits, so the
     * caller should end the process (the training child) */
    int (*sync_timeout)(double seconds);

    /* the device arena: one cudaMalloc serving every allocation.  reserve
     * sets its size before the first allocation (default 1 GiB). */
    int (*arena_reserve)(size_t bytes);
    void *(*arena_alloc)(size_t bytes); /* 256-byte aligned */
    size_t (*arena_mark)(void);
    void (*arena_release)(size_t mark); /* frees everything allocated after mark */
    void (*arena_stats)(size_t *used, size_t *capacity);
    int (*copy_to_device)(void *dst, const void *src, size_t bytes);
    int (*copy_to_host)(void *dst, const void *src, size_t bytes);

    /* batched environment, same rules and streams as host/core/env.c */
    pcg_cuda_env *(*env_alloc)(int n, int h, int w, int variant, uint64_t seed, int obs_mapping);
    void (*env_free)(pcg_cuda_env *e); /* releases its arena space if it is the newest */
    int (*env_set_mapping)(pcg_cuda_env *e, int obs_mapping);
    int (*env_reset_all)(pcg_cuda_env *e);
    /* one step with actions[n] from host memory (as env_step) */
    int (*env_step)(pcg_cuda_env *e, const int *actions);
    /* steps t, t+1, ..., t+count-1 with the random actions env_random_actions
     * draws for action seed `seed` (cuRAND Philox, subsequence 2^32+env);
     * nothing returns to the host in between */
    int (*env_step_random)(pcg_cuda_env *e, uint64_t seed, uint64_t t, int count);
    int (*env_copy)(pcg_cuda_env *e, pcg_cuda_env_host *out);
    int (*env_get_log)(pcg_cuda_env *e, pcg_cuda_env_log *out);
    int (*env_log_clear)(pcg_cuda_env *e);
    /* load environment state (host arrays as env_t's) and rebuild the
     * padded maps and observations, as after loading a checkpoint; rewards,
     * dones and the log are cleared */
    int (*env_load)(pcg_cuda_env *e, const unsigned char *maps, const unsigned char *frozen, const int *steps,
                    const uint64_t *rng_pos, const float *returns);
    /* load a reward module image (cubin/fatbin/PTX) and use its
     * PCG_REWARD_KERNEL from the next step on; NULL image removes it */
    int (*env_set_reward)(pcg_cuda_env *e, const void *image);

    /* row-major sgemm on device memory, C = alpha*op(A)*op(B) + beta*C with
     * C m x n and the inner size k:  nn: A m x k, B k x n;  nt: A m x k,
     * B n x k;  tn: A k x m, B k x n.  Matrices are dense (ld = columns). */
    int (*sgemm_nn)(int m, int n, int k, float alpha, const float *A, const float *B, float beta, float *C);
    int (*sgemm_nt)(int m, int n, int k, float alpha, const float *A, const float *B, float beta, float *C);
    int (*sgemm_tn)(int m, int n, int k, float alpha, const float *A, const float *B, float beta, float *C);
    /* matmul mode of every sgemm (PCG_MATH_*); storage stays fp32 */
    int (*blas_set_math)(int mode);

    /* The network of host/learn/nn.h on the device: the same config, parameter
     * layout (off[]) and activation layout; P, G, obs and every nn_acts
     * array are device pointers.  nn_acts_alloc takes the arrays for up to
     * cap samples from the arena.  Forward and backward follow nn_forward and
     * nn_backward layer by layer (the one-hot layers as gathers, conv 2 as
     * conv_forward/conv_backward's PCG_CONV_AUTO); backward adds into G and
     * overwrites a->col. */
    int (*nn_acts_alloc)(nn_acts *a, const nn_config *cfg, int cap);
    int (*nn_forward)(const nn_config *cfg, const size_t *off, const float *P, nn_acts *a,
                      const unsigned char *obs, int B);
    int (*nn_backward)(const nn_config *cfg, const size_t *off, const float *P, float *G, nn_acts *a,
                       const unsigned char *obs, int B);
    /* nn_ppo_loss on the device: writes a->dlogits and a->dvalue from
     * a->logits and a->value; act..ret are device arrays of B; out (device,
     * 6 doubles) receives the loss, then the sums of the policy, value and
     * entropy terms, the approximate KL and the clipped count. */
    int (*nn_ppo_loss)(nn_acts *a, int B, int n_actions, const int *act, const float *old_logp, const float *adv,
                       const float *old_value, const float *ret, double clip_eps, double vf_coef, double ent_coef,
                       double scale, double *out);

    /* PPO of host/learn/ppo.c on the device: the same config, streams (maps,
     * action draws, shuffles), GAE, per-minibatch advantage normalisation,
     * clipped losses, gradient-norm clipping and Adam; rollout storage,
     * network, gradients and Adam moments stay on the device, and nothing
     * returns to the host within a rollout or an update except the
     * minibatch permutations (drawn on the host, as on the CPU).  The
     * network comes in initialised (params: n_params floats laid out by
     * off[], e.g. from nn_init); reward is a reward module image or NULL.
     * Metrics as ppo_metrics, t_env and t_forward not measured (0). */
    pcg_cuda_ppo *(*ppo_init)(const ppo_config *cfg, const nn_config *nc, const size_t *off, size_t n_params,
                              const float *params, const void *reward);
    void (*ppo_free)(pcg_cuda_ppo *p);
    int (*ppo_rollout)(pcg_cuda_ppo *p, ppo_metrics *m);
    int (*ppo_update)(pcg_cuda_ppo *p, ppo_metrics *m);
    int (*ppo_train_update)(pcg_cuda_ppo *p, ppo_metrics *m);
    /* the resumable state to the host (for a checkpoint) and back (to
     * resume: every array must be given) */
    int (*ppo_get_state)(pcg_cuda_ppo *p, pcg_cuda_ppo_state *s);
    int (*ppo_set_state)(pcg_cuda_ppo *p, const pcg_cuda_ppo_state *s);
    /* the stored rollout to the host */
    int (*ppo_get_rollout)(pcg_cuda_ppo *p, pcg_cuda_rollout_host *out);
    pcg_cuda_env *(*ppo_env)(pcg_cuda_ppo *p);

    /* checks for the tests: host/core/philox.h as compiled by nvcc (host side),
     * and count cuRAND draws after curand_init(seed, subseq, offset) */
    void (*philox_host)(uint64_t seed, uint64_t subseq, uint64_t block, uint32_t out[4]);
    int (*curand_draws)(uint64_t seed, uint64_t subseq, uint64_t offset, int count, uint32_t *out);

    /* Level generation (docs/method.md#evaluation) on the device: ppo_play_episode (host/learn/ppo.c)
     * without a reward.  n environments reset from seed (as env_alloc) under
     * rules (NULL: the reference's), each action sampled from the policy
     * with ppo_action_draw(action_seed, env, t); the level kept is the map
     * after the second-to-last step (FINAL_LEVEL_767) or with the last edit
     * applied without the auto-reset (FINAL_LEVEL_768).  The network is nc,
     * off[] and params (host memory, n_params floats, e.g. nn_t's), run in
     * the current matmul mode; final_maps (host, n*h*w tile ids) receive the
     * levels.  Device memory comes from the arena and is released. */
    int (*play_episode)(const nn_config *nc, const size_t *off, size_t n_params, const float *params, int n, int h,
                        int w, int variant, uint64_t seed, uint64_t action_seed, const env_rules *rules,
                        unsigned char *final_maps);
    /* env_set_rules (host/core/env.h) on a device environment: the rules
     * from the next step on, the observations redone under them (env_alloc
     * starts with the reference's) */
    int (*env_set_rules)(pcg_cuda_env *e, const env_rules *rules);

    /* ---- since ABI 5 ---- */
    /* The sgemm in use, one line: "cuBLAS X.Y.Z", "built-in tiled sgemm
     * (cuBLAS not loaded: REASON)" (cuBLAS is loaded at run time; without
     * it, or with PCGRLLM_CUBLAS=off, the library's own kernel does every
     * sgemm), "cuBLAS (simulated: OpenBLAS, ...)" */
    const char *(*blas_in_use)(void);
    /* Simulation only (the device library returns -1): the host function
     * that stands for every reward module's kernel from now on (NULL: none;
     * a reward module set without one is an error at its first launch). */
    int (*set_host_reward)(pcg_host_reward_fn fn, void *ctx);
    /* Simulation only: the work counted since the last reset, one entry per
     * kernel; count is set to the number of entries (0 in the device
     * library, which returns NULL). */
    const pcg_cuda_work *(*work_counters)(int *count);
    void (*work_reset)(void);
    /* ---- since ABI 6 ---- */
    /* Conv 2's passes on device memory, by path (PCG_CONV_*), in the
     * current matmul mode: forward writes out = conv(in) + b; backward adds
     * the weight and bias gradients into dW and db and writes din (NULL:
     * not).  col is scratch of B*OH*OW x k*k*C floats; the im2col path
     * leaves im2col(in) there in forward for the backward (the same path
     * and mode must run both). */
    int (*conv_forward)(float *out, float *col, const float *in, const float *W, const float *b, int B,
                        const nn_conv_shape *s, int path);
    int (*conv_backward)(float *din, float *dW, float *db, const float *dout, const float *in, float *col,
                         const float *W, int B, const nn_conv_shape *s, int path);
} pcg_cuda_api;

typedef const pcg_cuda_api *(*pcg_cuda_entry_fn)(void);

#ifdef __cplusplus
}
#endif
/* backend_select in a short child process, so that the caller never
 * initialises CUDA (a process that forks must not): the backend, the GPU
 * and its description.  0, or -1 with one line in err. */
typedef struct {
    int backend;
    int gpu;
    pcg_cuda_device_info info;
} backend_probe_result;
int backend_probe(const char *name, backend_probe_result *r, char *err, int errlen);

/* The matmul modes by name, as the flags spell them: "fp32", "tf32",
 * "bf16" for PCG_MATH_*; backend_math_from_name gives -1 for another. */
const char *backend_math_name(int math);
int backend_math_from_name(const char *name);

#endif
