/* Work that must not share a process with anything worth stealing --
 * compiling and running untrusted reward code, training with it -- runs in
 * a worker: this same binary, started afresh with exec (a new address
 * space, not a fork of a process that holds the API key, prompts or run
 * state), with a scrubbed environment and no open descriptor but its job
 * and its message pipe.
 *
 * The job is a sealed memory file (memfd): the worker maps it read-only
 * and it cannot be changed by either side once sent.  Messages come back
 * through host/sys/child.h frames, under the same watchdog and reaper as any
 * child.  The binary's main() calls worker_dispatch() first. */
#ifndef PCG_WORKER_H
#define PCG_WORKER_H
#include <stddef.h>
#include "child.h"

/* A role's entry point in the worker: job is the mapped job (read-only,
 * page-aligned).  Returns the process exit status. */
typedef int (*worker_fn)(const unsigned char *job, size_t job_len);
/* A role started by worker_run_shared: region is the caller's shared
 * memory file, mapped read-write in both processes. */
typedef int (*worker_shared_fn)(unsigned char *region, size_t region_len);
typedef struct {
    const char *name;
    worker_fn fn;
    int untrusted; /* runs reward code: its messages are checked, never echoed */
    worker_shared_fn shared; /* set instead of fn for worker_run_shared's roles */
} worker_role;

/* The roles this binary's workers play, set once before worker_dispatch
 * and worker_run (the binary's main: the table is host/train/worker_roles.h's,
 * which knows every role's layer). */
void worker_set_roles(const worker_role *roles, int n);

/* Run role in a worker with job[0..job_len) under opts (as child_run_ex;
 * opts->untrusted is forced on for roles that run reward code). */
int worker_run(const char *role, const void *job, size_t job_len, const child_opts *opts, void **blob,
               size_t *blob_len, char *reason, int reason_len);

/* Run role in a worker of the binary at exe (a caller that is not this
 * binary: the Python package's library), as worker_run but untrusted
 * always and without a result blob, its job a shared region: region_fd is
 * a memory file (memfd, unsealed) that the caller keeps mapped and the
 * worker maps read-write too, so that the two exchange data through it
 * while the worker runs (a confined worker can read no descriptor).
 * Blocks until the worker ends: a caller that talks to it meanwhile runs
 * this on a thread of its own. */
int worker_run_shared(const char *exe, const char *role, int region_fd, const child_opts *opts, char *reason,
                      int reason_len);

/* The environment a worker or any other subprocess that needs no secret
 * gets: the variables on a short allow-list (CUDA, OpenMP/OpenBLAS, locale,
 * PCGRLLM_GPU ...), never one named by worker_env_deny.  NULL-terminated;
 * valid until the next call (build it before fork, use it in the child). */
char *const *worker_environment(void);
/* Never pass variable name on (the API key's, from --api-key-env). */
void worker_env_deny(const char *name);
/* Reduce this process's own environment to worker_environment()'s, the
 * dropped values overwritten in memory (for a command that must run
 * reward code in process: bench reward on files the user names). */
void worker_scrub_environment(void);

/* If argv is a worker call (`BINARY __worker ROLE JOBFD PIPEFD`), run the
 * role and return its exit status; otherwise -1. */
int worker_dispatch(int argc, char **argv);

#endif
