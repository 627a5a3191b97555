/* Training in a confined worker (host/sys/worker.h), driven by the caller.
 *
 * The worker is a fresh process with a scrubbed environment.  On the CPU
 * it compiles the reward, then loads the seccomp filter of
 * reward_jit/confine.h on every thread (no files, no processes, no
 * executable memory from then on) before the reward ever runs; on a GPU it
 * runs the device trainer with a reward kernel compiled beforehand by the
 * confined NVRTC worker.  Either way it touches no file: it sends its
 * metrics, progress and checkpoints as messages, and the caller -- which
 * never runs reward code -- checks them (every number finite, counters in
 * order, a checkpoint that decodes and matches the settings) before it
 * writes DIR/metrics.jsonl and DIR/checkpoint.bin.  A non-finite reward,
 * return, loss, gradient or weight stops training with one line naming the
 * step and the cause, and the last good checkpoint stays. */
#ifndef PCG_TRAIN_WORKER_H
#define PCG_TRAIN_WORKER_H
#include <stddef.h>
#include <stdint.h>
#include "ppo.h"

typedef struct {
    ppo_config cfg;    /* a new run's settings (with resume: the checkpoint's) */
    int64_t steps;     /* train until this many environment steps */
    int resume;        /* continue DIR/checkpoint.bin */
    int threads;       /* OpenMP threads; 0 = all */
    int use_cuda;      /* the device trainer */
    int math;          /* PCG_MATH_* of the device trainer */
    int gpu;           /* device index */
    int quiet;         /* only the final line and errors */
    double save_every; /* seconds between checkpoints; 0 = every update */
    double watchdog;   /* seconds without progress before the worker is ended */
    int report;        /* send train_report frames on the child pipe (run relays them) */
} train_settings;

/* What train sends its caller (run) about its progress, at most once a
 * second, with --report-fd: a child_send_data frame of this layout. */
typedef struct {
    unsigned char tag; /* 'T' */
    unsigned char pad[7];
    int64_t step, target;
    double steps_per_s, episode_reward, entropy, eta_s;
} train_report;

/* Train with reward source src (validated already) into run directory
 * out.  cubin (cubin_len bytes) is the reward kernel when use_cuda.
 * *stop is raised by the caller's SIGINT handler.  Returns 0 when done,
 * 130 when interrupted (the last checkpoint kept), 1 on failure with one
 * line in err. */
int train_in_worker(const train_settings *s, const char *src, const void *cubin, size_t cubin_len, const char *out,
                    volatile int *stop, char *err, int errlen);

/* The worker role. */
int train_worker_main(const unsigned char *job, size_t job_len);

#endif
