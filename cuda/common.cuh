/* Shared by the CUDA backend's translation units: error reporting, the
 * device arena and the backend stream. */
#ifndef PCG_CUDA_COMMON_CUH
#define PCG_CUDA_COMMON_CUH
#include <cuda_runtime.h>
#include <stddef.h>
#include <string.h>
#include "backend.h"

/* One line describing the last failure (thread-local). */
void pcg_cuda_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *pcg_cuda_last_error(void);

/* Check a runtime call; on failure record it and return `fail`. */
#define PCG_CK(call, fail)                                                                    \
    do {                                                                                      \
        cudaError_t pcg_e_ = (call);                                                          \
        if (pcg_e_ != cudaSuccess) {                                                          \
            pcg_cuda_set_error("%s: %s (%s:%d)", #call, cudaGetErrorString(pcg_e_), __FILE__, \
                               __LINE__);                                                     \
            return fail;                                                                      \
        }                                                                                     \
    } while (0)

/* Every kernel launch of the backend: nvcc sees the real <<<>>> launch; the
 * simulation build (g++ -DPCG_SIM, cuda/sim/) runs the kernel's blocks on
 * the CPU, after checking the launch against a device's limits.  A
 * template kernel goes in parentheses: PCG_LAUNCH((k<true>), g, b, 0, s, x). */
#ifdef PCG_SIM
#define PCG_LAUNCH(kernel, grid, block, shmem, stream, ...) \
    pcg_sim::launch(#kernel, kernel, grid, block, shmem, stream, ##__VA_ARGS__)
#else
#define PCG_LAUNCH(kernel, grid, block, shmem, stream, ...) kernel<<<grid, block, shmem, stream>>>(__VA_ARGS__)
#endif
/* The same, named for the simulation's work counters where the kernel's
 * spelling is not its instantiation (a template launched inside a template:
 * reduce_kernel<F>, one kernel per functor on a device). */
#ifdef PCG_SIM
#define PCG_LAUNCH_AS(name, kernel, grid, block, shmem, stream, ...) \
    pcg_sim::launch(name, kernel, grid, block, shmem, stream, ##__VA_ARGS__)
#else
#define PCG_LAUNCH_AS(name, kernel, grid, block, shmem, stream, ...) \
    kernel<<<grid, block, shmem, stream>>>(__VA_ARGS__)
#endif

/* A loop nvcc unrolls fully, so that arrays of fragments it indexes stay
 * in registers; the simulation's compiler takes it as a plain loop. */
#ifdef PCG_SIM
#define PCG_UNROLL
#else
#define PCG_UNROLL _Pragma("unroll")
#endif

/* Blocks of `threads` for n threads of work. */
static inline unsigned pcg_grid_for(unsigned threads, size_t n)
{
    return (unsigned)((n + threads - 1) / threads);
}

/* The stream every kernel and copy of the backend runs on. */
cudaStream_t pcg_cuda_stream(void);
/* 0 if that stream exists, else -1 (the reason in last_error). */
int pcg_cuda_stream_check(void);

/* Arena (cuda/arena.cu). */
int pcg_arena_reserve(size_t bytes);
void *pcg_arena_alloc(size_t bytes);
size_t pcg_arena_mark(void);
void pcg_arena_release(size_t mark);
void pcg_arena_stats(size_t *used, size_t *capacity);
/* Watch the arena's highest point from now on; its end gives that point
 * as a mark (0), or -1 when an allocation took another block meanwhile.
 * pcg_arena_hold takes the current block up to such a mark (0), or -1
 * where the arena stands elsewhere. */
void pcg_arena_watch(void);
int pcg_arena_watch_end(size_t *peak_mark);
int pcg_arena_hold(size_t mark);

/* Work that is enqueued the same way again and again, captured once as a
 * CUDA graph (cuda/graph.cu).  pcg_graph_capture runs nothing: it records
 * what fn(ctx) enqueues and holds the arena scratch fn took (and gave
 * back) for the graph's life, so later allocations stay clear of where
 * its launches write.  0 when captured; 1 when the device would not (a
 * host synchronisation inside, scratch in another arena block, an error
 * of fn's): then nothing was enqueued and the caller runs fn itself. */
typedef struct {
    cudaGraphExec_t exec;
    size_t start, end; /* the arena's marks around the held scratch */
} pcg_graph;
int pcg_graph_capture(pcg_graph *g, int (*fn)(void *), void *ctx);
int pcg_graph_launch(const pcg_graph *g);
void pcg_graph_free(pcg_graph *g);
/* PCGRLLM_CUDA_GRAPHS: 1 unset, empty or "1"; 0 for "0" (every launch by
 * the host); -1 anything else. */
int pcg_graphs_env(void);
/* The fixed block for cuBLAS's workspace (allocates the arena if needed). */
void *pcg_arena_blas_workspace(size_t *bytes);

/* The built-in sgemm (cuda/sgemm_tiled.cu), used when cuBLAS is not
 * loaded: row-major C[m,n] = alpha op(A) op(B) + beta C, A m x k (trans_a:
 * stored k x m), B k x n (trans_b: stored n x k), operands rounded as
 * PCG_MATH_* mode math would round them.  0, or -1 (last_error). */
int pcg_sgemm_tiled(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *A, const float *B,
                    float beta, float *C, int math);

/* An fp32 operand as the matmul mode's tensor cores would take it (TF32:
 * 10 mantissa bits, to nearest with ties away from zero, as
 * cvt.rna.tf32.f32; bf16: 7 bits, to nearest even); inf and NaN as they
 * are. */
__device__ static inline float pcg_round_operand(float x, int math)
{
    if (math == PCG_MATH_FP32) return x;
    unsigned u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return x;
    if (math == PCG_MATH_TF32) u = (u + 0x1000u) & 0xffffe000u;
    else u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&x, &u, 4);
    return x;
}

/* An environment variable's value as a one-line message quotes it: its
 * first 40 bytes, control characters as '?' (a newline would break the
 * line).  buf holds 41 bytes. */
static inline const char *pcg_env_shown(const char *v, char *buf)
{
    int n = 0;
    for (; v && v[n] && n < 40; n++) buf[n] = (unsigned char)v[n] < 32 || v[n] == 127 ? '?' : v[n];
    buf[n] = 0;
    return buf;
}

/* A value pcg_round_operand rounded to bf16, as the 2 bytes of bf16 that
 * hold it: its upper half (exact, as the rounding cleared the lower); a
 * NaN as the quiet NaN, which a payload in the lower half would lose. */
__device__ static inline unsigned short pcg_bf16_bits(float rounded)
{
    unsigned u;
    memcpy(&u, &rounded, 4);
    return rounded != rounded ? (unsigned short)0x7fc0u : (unsigned short)(u >> 16);
}

/* The matmul mode (PCG_MATH_*); *cublas: 1 when cuBLAS does the sgemms. */
int pcg_blas_math(int *cublas);

/* Conv 2 as implicit GEMMs (cuda/conv.cu), operands rounded per math.
 * Forward writes out = conv(in) + b, through a ReLU when relu is set.
 * The weight gradient's rows are cut into `splits` spans of `span` (grid
 * z): one span adds into dst (dW); more write their partial sums to dst +
 * z*k*k*C*O for the caller to add in order.  The input gradient overwrites
 * din, with 0 wherever a non-NULL mask (the input's ReLU output) is not
 * positive.  0, or -1 (last_error).  Fusing the ReLUs saves a pass over
 * conv 2's output and conv 1's gradient.  tensor: the WMMA TF32 kernels
 * (math TF32 or bf16, and only where pcg_conv_tensor_ready), else fp32
 * FMA. */
int pcg_conv_tensor_ready(void);
int pcg_conv_implicit_forward(float *out, const float *in, const float *W, const float *b, int B,
                              const nn_conv_shape &s, int math, int relu, int tensor);
int pcg_conv_implicit_wgrad(float *dst, int splits, int span, const float *dout, const float *in, int B,
                            const nn_conv_shape &s, int math, int tensor, float *bias_dst, int *bias_done);
int pcg_conv_implicit_dgrad(float *din, const float *dout, const float *W, int B, const nn_conv_shape &s, int math,
                            const float *mask, int tensor);
/* The staged tensor-core twins of the three (cuda/conv_staged.cu: the
 * forward pass and the input gradient; cuda/conv_wgrad.cu: the weight
 * gradient), the same arguments: 0 on a launch, 1 where the shape (or
 * the span) does not fit them and nothing was launched, -1 on an error
 * (last_error).  The weight gradients take the bias's gradient too where
 * bias_dst is not NULL and they can (*bias_done then 1): the column sums
 * of dout, span z's into bias_dst + z * O (added to what it holds when there is
 * one span, as dst's are). */
int pcg_conv_staged_forward(float *out, const float *in, const float *W, const float *b, int B,
                            const nn_conv_shape &s, int math, int relu);
int pcg_conv_staged_dgrad(float *din, const float *dout, const float *W, int B, const nn_conv_shape &s, int math,
                          const float *mask);
int pcg_conv_staged_wgrad(float *dst, int splits, int span, const float *dout, const float *in, int B,
                          const nn_conv_shape &s, int math, float *bias_dst, int *bias_done);

/* The layers on the one-hot observation (cuda/onehot.cu): out = the
 * dense layer (conv 1, through a ReLU when relu is set) of the window vw;
 * the backward passes add into dW (and conv 1's into its bias's db, from
 * the output gradient it reads anyway). */
int pcg_dense_onehot_forward(float *out, const unsigned char *obs, const nn_obs_view &vw, const float *W,
                             const float *b, int B, int C, int O);
int pcg_dense_onehot_backward(float *dW, const float *dout, const unsigned char *obs, const nn_obs_view &vw, int B,
                              int C, int O);
int pcg_conv_onehot_forward(float *out, const unsigned char *obs, const nn_obs_view &vw, const float *W,
                            const float *b, int B, const nn_conv_shape &s, int relu);
int pcg_conv_onehot_backward(float *dW, float *db, const float *dout, const unsigned char *obs,
                             const nn_obs_view &vw, int B, const nn_conv_shape &s);

/* The device's multiprocessors (1 where it cannot say), which the staged
 * kernels' launch plans follow. */
int pcg_device_sms(void);
/* What the network's launches depend on beyond their arguments (the
 * matmul mode, the conv path the backend picks and the multiprocessors
 * the plans follow), so that a captured graph is known stale when one of
 * them changes (in the simulation each can, by variable). */
int pcg_nn_launch_key(void);
/* The cuBLAS handle made now where cuBLAS does the sgemms, since making
 * it allocates, which a capture refuses: 0, or -1 (last_error). */
int pcg_blas_prepare(void);

/* Sizes, for reserving the arena up front. */
size_t pcg_nn_acts_bytes(const nn_config *c, int cap);
size_t pcg_env_bytes(int n, int h, int w);

/* Table entries defined in the other units. */
extern "C" {
pcg_cuda_env *pcg_env_alloc(int n, int h, int w, int variant, uint64_t seed, int obs_mapping);
void pcg_env_free(pcg_cuda_env *e);
int pcg_env_set_mapping(pcg_cuda_env *e, int obs_mapping);
int pcg_env_reset_all(pcg_cuda_env *e);
int pcg_env_step(pcg_cuda_env *e, const int *actions);
int pcg_env_step_random(pcg_cuda_env *e, uint64_t seed, uint64_t t, int count);
int pcg_env_copy(pcg_cuda_env *e, pcg_cuda_env_host *out);
int pcg_env_get_log(pcg_cuda_env *e, pcg_cuda_env_log *out);
int pcg_env_log_clear(pcg_cuda_env *e);
int pcg_env_load(pcg_cuda_env *e, const unsigned char *maps, const unsigned char *frozen, const int *steps,
                 const uint64_t *rng_pos, const float *returns);
int pcg_env_set_reward(pcg_cuda_env *e, const void *image);
int pcg_curand_draws(uint64_t seed, uint64_t subseq, uint64_t offset, int count, uint32_t *out);
int pcg_sgemm_nn(int m, int n, int k, float alpha, const float *A, const float *B, float beta, float *C);
int pcg_sgemm_nt(int m, int n, int k, float alpha, const float *A, const float *B, float beta, float *C);
int pcg_sgemm_tn(int m, int n, int k, float alpha, const float *A, const float *B, float beta, float *C);
int pcg_blas_set_math(int mode);
const char *pcg_blas_in_use(void);
int pcg_nn_acts_alloc(nn_acts *a, const nn_config *cfg, int cap);
int pcg_nn_forward(const nn_config *cfg, const size_t *off, const float *P, nn_acts *a, const unsigned char *obs,
                   int B);
int pcg_nn_backward(const nn_config *cfg, const size_t *off, const float *P, float *G, nn_acts *a,
                    const unsigned char *obs, int B);
pcg_cuda_ppo *pcg_ppo_init(const ppo_config *cfg, const nn_config *nc, const size_t *off, size_t n_params,
                           const float *params, const void *reward);
void pcg_ppo_free(pcg_cuda_ppo *p);
int pcg_ppo_rollout(pcg_cuda_ppo *p, ppo_metrics *m);
int pcg_ppo_update(pcg_cuda_ppo *p, ppo_metrics *m);
int pcg_ppo_train_update(pcg_cuda_ppo *p, ppo_metrics *m);
int pcg_ppo_get_state(pcg_cuda_ppo *p, pcg_cuda_ppo_state *s);
int pcg_ppo_set_state(pcg_cuda_ppo *p, const pcg_cuda_ppo_state *s);
int pcg_ppo_get_rollout(pcg_cuda_ppo *p, pcg_cuda_rollout_host *out);
pcg_cuda_env *pcg_ppo_env(pcg_cuda_ppo *p);
int pcg_nn_ppo_loss(nn_acts *a, int B, int n_actions, const int *act, const float *old_logp, const float *adv,
                    const float *old_value, const float *ret, double clip_eps, double vf_coef, double ent_coef,
                    double scale, double *out);
int pcg_play_episode(const nn_config *nc, const size_t *off, size_t n_params, const float *params, int n, int h,
                     int w, int variant, uint64_t seed, uint64_t action_seed, const env_rules *rules,
                     unsigned char *final_maps);
int pcg_env_set_rules(pcg_cuda_env *e, const env_rules *rules);
int pcg_conv_forward(float *out, float *col, const float *in, const float *W, const float *b, int B,
                     const nn_conv_shape *s, int path);
int pcg_conv_backward(float *din, float *dW, float *db, const float *dout, const float *in, float *col,
                      const float *W, int B, const nn_conv_shape *s, int path);
}

#endif
