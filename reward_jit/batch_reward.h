/* A reward file scoring batches of transitions in a confined worker
 * process, for a caller that must never run reward code itself: the
 * Python package's environments (host/api/pcg_api.c, docs/python.md).
 *
 * The worker is the pcgrllm binary's "batch-reward" role
 * (host/sys/worker.h, started with worker_run_shared): a fresh process
 * with a scrubbed environment that compiles the reward with libtcc under
 * the COMPILE filter of confine.h, starts its thread pool, loads the RUN
 * filter on every thread and only then runs the reward -- the confinement
 * of `train`'s CPU worker.  A confined process can read no descriptor, so
 * the two sides share one memory file: the caller writes the levels of a
 * chunk of the batch and raises `request`; the worker scores them and
 * raises `done` (futexes on both words).  A batch goes in `chunks` parts
 * so that the two overlap: the worker scores one part while the caller
 * finishes the step of the part before.  The caller trusts nothing the worker writes:
 * it keeps its own copy of the layout, copies the rewards out and checks
 * them, and a watchdog ends a worker that does not answer. */
#ifndef PCG_BATCH_REWARD_H
#define PCG_BATCH_REWARD_H
#include <linux/futex.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BATCH_REWARD_ROLE "batch-reward"
#define BATCH_REWARD_MAGIC 0x42525744u

/* The head of the shared region; then the source (src_len bytes and a
 * NUL), the previous levels, the current levels (n*h*w tile ids each) and
 * the rewards (n floats), at the offsets of batch_reward_layout. */
typedef struct {
    uint32_t magic;
    int32_t n, h, w, threads, chunks;
    uint32_t src_len;
    uint32_t request; /* caller: chunks handed over so far (chunk q-1 mod chunks is the q-th) */
    uint32_t done;    /* worker: chunks scored so far */
    uint32_t ready;   /* worker: 1 once compiled and confined */
    uint32_t quit;    /* caller: 1 to end the worker */
} batch_reward_head;

typedef struct {
    size_t src, prev, curr, rewards, total;
} batch_reward_offsets;

/* The region's layout for n levels of cells tiles and a source of
 * src_len bytes (both sides compute it from their own numbers). */
static inline batch_reward_offsets batch_reward_layout(int n, int cells, size_t src_len)
{
    batch_reward_offsets o;
    size_t levels = (size_t)n * (size_t)cells;
    o.src = 64;
    o.prev = (o.src + src_len + 1 + 63) & ~(size_t)63;
    o.curr = (o.prev + levels + 63) & ~(size_t)63;
    o.rewards = (o.curr + levels + 63) & ~(size_t)63;
    o.total = o.rewards + sizeof(float) * (size_t)n;
    return o;
}

/* Chunk c of n levels cut into k: [*lo, *hi). */
static inline void batch_reward_chunk(int n, int k, int c, int *lo, int *hi)
{
    *lo = (int)((long)n * c / k);
    *hi = (int)((long)n * (c + 1) / k);
}

/* Futexes on a word of the shared region (not private: two processes).
 * wait returns when *word may differ from seen, or after timeout_s
 * (<= 0: no limit). */
static inline void batch_reward_wake(uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE, 1 << 30, NULL, NULL, 0);
}
static inline void batch_reward_wait(uint32_t *word, uint32_t seen, double timeout_s)
{
    struct timespec ts = {(time_t)timeout_s, (long)((timeout_s - (double)(time_t)timeout_s) * 1e9)};
    syscall(SYS_futex, word, FUTEX_WAIT, seen, timeout_s > 0 ? &ts : NULL, NULL, 0);
}

/* ---- the caller (linked into the library: no compiler here) ---- */

typedef struct batch_reward batch_reward;
/* Start the worker: the binary at exe, reward source src (checked
 * already: `pcgrllm check-reward` accepted it), n levels of h x w,
 * threads OpenMP threads (0: this process's count), watchdog_s seconds a
 * batch may take.  Returns once the worker is compiled and confined, or
 * NULL with one line in err. */
batch_reward *batch_reward_start(const char *exe, const char *src, int n, int h, int w, int threads,
                                 double watchdog_s, char *err, int errlen);
/* A batch in parts: the chunks (at most 8), and chunk c's levels
 * [*lo, *hi). */
int batch_reward_chunks(const batch_reward *b);
void batch_reward_range(const batch_reward *b, int c, int *lo, int *hi);
/* Hand chunk c of a batch to the worker: the transitions prev -> curr of
 * its levels (prev and curr hold all n*h*w tile ids); then take its
 * rewards into out[lo..hi).  Chunks go in order 0, 1, ..., and each is
 * taken after it was sent.  0, or -1 with one line in err: the worker
 * crashed, was stopped by the filter or the watchdog, or ended; every
 * later call fails the same way. */
int batch_reward_send(batch_reward *b, int c, const unsigned char *prev, const unsigned char *curr, char *err,
                      int errlen);
int batch_reward_take(batch_reward *b, int c, float *out, char *err, int errlen);
/* End the worker and free everything (NULL is fine). */
void batch_reward_stop(batch_reward *b);

/* ---- the worker ---- */

/* The role (host/train/worker_roles.c). */
int reward_worker_batch(unsigned char *region, size_t region_len);

#endif
