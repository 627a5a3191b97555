/* Reward JIT: compiles untrusted reward source (reward_api.h) with libtcc
 * for the CPU and with NVRTC for the GPU, validates it in a sandboxed child
 * process and computes its self-alignment statistics (docs/method.md#reward-functions). */
#ifndef PCG_REWARD_JIT_H
#define PCG_REWARD_JIT_H
#include <stddef.h>
#include <stdint.h>
#include "level.h"

/* Largest reward source accepted, in bytes. */
#define REWARD_MAX_SOURCE 65536
/* Name the model's source carries in error messages ("reward.c:LINE"). */
#define REWARD_FILE_NAME "reward.c"

/* ---- source checks shared by both backends ---- */

/* Refuse what no backend may see: #include, #pragma, _Pragma, __attribute__,
 * inline assembly, token pasting, digraphs/trigraphs, names starting with
 * __ (reserved), memset/memcpy/memmove (linked for the compiler only),
 * oversized sources; and a declaration of compute_reward of another type
 * than float (const level_t *, const level_t *), which both compilers would
 * report against the engine's own declaration.  0 = fine, else -1 and
 * "line N: ..." in err. */
int reward_scan(const char *src, char *err, int errlen);

/* ---- CPU backend (libtcc) ---- */

typedef struct reward_prog reward_prog;
/* Compile in memory, in this process: only a confined worker (or a test
 * or benchmark of the engine's own rewards) may call it -- the compiled
 * reward runs with this process's rights.  NULL and a one-line error carrying the source's own
 * line numbers on failure.  The program image is read-only once compiled
 * (a reward cannot keep state between calls) and its data is not
 * executable.  Thread-safe; the returned program may be called from many
 * threads at once. */
reward_prog *reward_compile_cpu(const char *src, char *err, int errlen);
/* A helper of the reward API by name (reward_api.h) and a function of
 * its type. */
typedef struct {
    const char *name;
    const void *fn;
} reward_helper;
/* reward_compile_cpu with the API's helpers of those names replaced by the
 * n given (the device model's counting copies, api_count.h), the program
 * without a memo, as the device runs the helpers. */
reward_prog *reward_compile_cpu_helpers(const char *src, const reward_helper *helpers, int n, char *err, int errlen);
/* Calls compute_reward; matches env.h's reward_fn with ctx = the program. */
float reward_prog_call(const level_t *prev, const level_t *curr, void *prog);
void reward_prog_free(reward_prog *p);
/* The memo of the API's answers from step to step (memo.h), on by default;
 * off answers every question afresh (the same values, more slowly). */
void reward_prog_memo(reward_prog *p, int on);
/* Address range of the compiled image (for fault classification). */
void reward_prog_image(const reward_prog *p, const void **lo, size_t *len);

/* ---- GPU backend (NVRTC, loaded at run time) ---- */

/* The kernel every cubin exports (extern "C"):
 *   __global__ void pcg_reward_kernel(int n, int h, int w,
 *       const unsigned char *prev, const unsigned char *curr, float *out);
 * thread i < n scores prev + i*h*w -> curr + i*h*w into out[i]. */
#define REWARD_KERNEL_NAME "pcg_reward_kernel"
/* Its threads a block: the kernel is built for exactly this many
 * (__launch_bounds__, and a table of that many entries per block). */
#define REWARD_KERNEL_BLOCK 128
/* Architectures the GPU backend builds for. */
#define REWARD_GPU_ARCHS {"sm_75", "sm_86", "sm_89", "sm_90"}
/* Compile for arch ("sm_90") in a confined worker process (NVRTC runs
 * under seccomp once its libraries are loaded, with memory and CPU limits
 * and no include path).  0 ok (*cubin malloc'ed), -1 compile error (one
 * line in err, the source's line numbers), -2 NVRTC not available. */
int reward_compile_nvrtc(const char *src, const char *arch, char **cubin, size_t *cubin_len, char *err,
                         int errlen);
/* The same with the level core's largest side set to max_side (5..64; 0 =
 * PCG_MAX_SIDE): the path helpers' per-thread row arrays shrink with it.
 * Levels passed to the kernel must then be at most max_side x max_side. */
int reward_compile_nvrtc_ex(const char *src, const char *arch, int max_side, char **cubin, size_t *cubin_len,
                            char *err, int errlen);
/* 1 if libnvrtc can be loaded (err says why not otherwise). */
int reward_nvrtc_available(char *err, int errlen);
/* NVRTC version as "13.0", or "" if not available. */
const char *reward_nvrtc_version(void);
/* The file libnvrtc was loaded from, or "" if not available.  PCGRLLM_NVRTC
 * names it (off: none); else PCGRLLM_CUDA_LIB_PATH's folders or the
 * search of cuda_libs.h. */
const char *reward_nvrtc_path(void);

/* ---- validation and statistics ---- */

typedef struct {
    double mean, std, min, max, zero_share, us_per_call;
    long n;
} reward_stats;

/* The libtcc compile alone, in a confined worker process (the compiler
 * never runs in the caller).  0, or -1 with the compiler's one line. */
int reward_check_compile_cpu(const char *src, double timeout_s, char *err, int errlen);

/* Sandboxed check (confined worker processes, reward_jit/sandbox.c):
 * compiles src with libtcc and runs it on one episode of random play on
 * n_envs environments of the variant (VARIANT_DUNGEON / VARIANT_TREASURE);
 * timeout_s <= 0 means 30 s.  Everything the worker reports is checked
 * here, and the statistics and call times are computed here.
 * 0 = accepted and stats filled; -1 = rejected with a one-line reason fit
 * for the model. */
int reward_validate(const char *src, int variant, int n_envs, uint64_t seed, double timeout_s,
                    reward_stats *stats, char *reason, int reason_len);
/* The same, also giving every transition's reward: values[i*steps + t] for
 * environment i at step t of the episode (n_envs * 3*16*16 floats). */
int reward_validate_values(const char *src, int variant, int n_envs, uint64_t seed, double timeout_s,
                           reward_stats *stats, float *values, char *reason, int reason_len);
/* The same checks on given edits instead of random play: n episodes of
 * steps edits on h x w maps of the variant (episode i from maps[i*h*w..]
 * with frozen[i*h*w..], the actions actions[i*steps..], replayed by the
 * trusted environment in the worker); values[i*steps + t] is the reward of
 * episode i's edit t.  0, or -1 with the reason. */
int reward_values_edits(const char *src, int variant, int h, int w, int n, int steps, const unsigned char *maps,
                        const unsigned char *frozen, const unsigned char *actions, double timeout_s, float *values,
                        char *reason, int reason_len);
/* While a check runs, a line about where it is ("reward check: 5.0 s, 1024
 * of 61696 calls done") every every_s seconds goes to fn (NULL: this
 * process's stderr, the default, every 5 s); every_s <= 0: no lines.  A
 * first call that runs for 2 s (or half the timeout, if less), or any call
 * that runs that long, stops the check with its own reason. */
void reward_check_progress(void (*fn)(void *ctx, const char *line), void *ctx, double every_s);

/* Self-test of the sandbox: sets up the validation worker exactly as for a
 * reward, then makes one forbidden system call (or asks for executable
 * memory).  0 when the filter stopped it (reason: "made a forbidden system
 * call; ..."), -1 otherwise. */
enum {
    REWARD_PROBE_OPEN = 1, REWARD_PROBE_FORK, REWARD_PROBE_WRITE, REWARD_PROBE_EXEC, REWARD_PROBE_SOCKET,
    REWARD_PROBE_EXEC_MEMORY,
    REWARD_PROBE_FORGE_VERDICT /* no system call: sends a forged verdict, which must be refused */
};
int reward_sandbox_probe(int probe, char *reason, int reason_len);

/* Worker roles (host/sys/worker.h): libtcc compile, NVRTC compile, validation. */
int reward_worker_compile_c(const unsigned char *job, size_t job_len);
int reward_worker_compile_cuda(const unsigned char *job, size_t job_len);
int reward_worker_validate(const unsigned char *job, size_t job_len);
/* The device side of check-reward --backend cuda (host/gpu/reward_gpu.c). */
int reward_worker_gpu_rewards(const unsigned char *job, size_t job_len);

/* reward_validate on the CPU, then (when NVRTC is available and gpu != 0)
 * an NVRTC compile for sm_90 in a child with a timeout.  A source that one
 * backend accepts and the other refuses is rejected with both messages.
 * *gpu_checked says whether NVRTC ran. */
int reward_validate_both(const char *src, int variant, int n_envs, uint64_t seed, double timeout_s, int gpu,
                         reward_stats *stats, int *gpu_checked, char *reason, int reason_len);

/* Text for the prompt ("mean 0.0123, std ..."), JSON object.  Return the
 * length written (snprintf style). */
int reward_stats_text(const reward_stats *s, char *buf, int len);
int reward_stats_json(const reward_stats *s, char *buf, int len);
/* A warning about an accepted reward's statistics that no training can
 * learn from (the same value on every step; all zeros), one line for the
 * model and the user; "" and 0 when there is none, else its length. */
int reward_stats_warning(const reward_stats *s, char *buf, int len);
/* Accumulate values into stats (Welford); finish computes the derived
 * fields.  seconds = total time spent in the calls. */
typedef struct {
    long n, zeros;
    double mean, m2, min, max, seconds;
} reward_acc;
void reward_acc_init(reward_acc *a);
void reward_acc_add(reward_acc *a, double v);
void reward_acc_finish(const reward_acc *a, reward_stats *s);

/* `pcgrllm bench reward`: libtcc vs gcc -O2 calls per second, compile
 * times (bench/bench_reward.c). */
int bench_reward(int argc, char **argv);

#endif
