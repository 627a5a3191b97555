/* Run a function in a forked child process under a watchdog.  A crash, a
 * hang or a kill ends only the child; the caller gets a one-line reason.
 *
 * The child may send messages back through a pipe: child_send() a result
 * blob (the last one wins), child_fail() a reason, child_heartbeat() to show
 * it is alive.  The child runs in its own process group; on timeout the
 * whole group is killed, and the child dies with its parent.
 *
 * OpenMP: libgomp's thread pool does not survive fork.  If the parent has
 * run OpenMP parallel regions, set opts.single_thread so that the child runs
 * them on one thread (otherwise the child would hang and be killed by the
 * watchdog). */
#ifndef PCG_CHILD_H
#define PCG_CHILD_H
#include <stddef.h>

typedef struct {
    double timeout_s;      /* whole run; 0 = no limit */
    double idle_timeout_s; /* longest silence (no message, no heartbeat); 0 = no limit */
    int single_thread;     /* child: omp_set_num_threads(1) */
} child_opts;

/* fn returns the child's exit status (0 = success).  Returns 0 when the
 * child exited with status 0 and sent no failure; otherwise -1 with reason
 * ("crashed with SIGSEGV (invalid memory access)", "timed out after 5 s",
 * the child's child_fail text, ...).  blob/blob_len (may be NULL) receive a
 * malloc'ed copy of the last child_send payload, NULL/0 if none. */
int child_run_ex(int (*fn)(void *arg), void *arg, const child_opts *opts, void **blob, size_t *blob_len,
                 char *reason, int reason_len);
int child_run(int (*fn)(void *arg), void *arg, double timeout_s, char *reason, int reason_len);

/* In the child: send a result blob / a failure reason / a heartbeat.
 * Async-signal-safe (usable from a signal handler).  0 ok, -1 error. */
int child_send(const void *data, size_t len);
int child_fail(const char *reason);
int child_heartbeat(void);
/* The pipe descriptor the child writes to (-1 outside a child). */
int child_fd(void);

/* "SIGSEGV (invalid memory access)" */
const char *child_signal_name(int sig);

#endif
