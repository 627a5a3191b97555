/* A training job as `pcgrllm train` runs it, once its flags are read: the
 * run directory's guard, the resume (settings from the checkpoint, the
 * reward the run was trained with), the backend probe (in a child: this
 * process never initialises CUDA), the reward's validation in the sandbox
 * (a refused reward never reaches training), the projected cost on the CPU,
 * the device's reward kernel, DIR/reward.c and DIR/train.json, and the
 * confined worker of train_worker.h with Ctrl-C passed on to it. */
#ifndef PCG_TRAIN_JOB_H
#define PCG_TRAIN_JOB_H
#include <stdint.h>
#include "ppo.h"

typedef struct {
    const char *out;         /* run directory */
    const char *reward_path; /* --reward; on a resume NULL means DIR/reward.c */
    ppo_config cfg;          /* a new run's settings (a resume takes the checkpoint's) */
    int resume, threads, scenario, quiet;
    int64_t steps;
    const char *backend; /* as asked: cpu, cuda or auto */
    int use_cuda;        /* as resolved by the probe */
    int math;            /* PCG_MATH_* (CUDA only) */
    double save_every;   /* seconds between checkpoints; 0 = every update; -1: the backend's default */
    double watchdog;     /* seconds without progress before the worker is ended */
    int yes;             /* a job of many hours on the CPU goes on without asking */
    int report;          /* progress frames for run on the inherited child pipe */
} train_job;

/* The settings of `pcgrllm train` without flags. */
void train_job_defaults(train_job *j);

/* Runs the job.  Every refusal is one line "train: ..." on stderr.
 * Returns the exit status: 0 done (or nothing left to do), 1 refused or
 * failed, 2 a usage error found on the way (a new run without --reward,
 * --scenario or --steps; a --reward that is not the one the run was
 * trained with), 130 interrupted (the last checkpoint stays). */
int train_job_run(train_job *j);

#endif
