/* Run a function in a child process under a watchdog.  A crash, a hang or a
 * kill ends only the child; the caller gets a one-line reason.
 *
 * Process layout: the caller (the watcher) forks a small reaper process,
 * which marks itself a child subreaper and forks the child proper.  When
 * the child ends, or the watcher asks (timeout), the reaper kills every
 * process the child left behind -- also one that changed its session or
 * process group, since orphans are re-parented to the reaper -- and then
 * exits with the child's own exit status or signal.  Every process of the
 * chain dies with its parent (PR_SET_PDEATHSIG).
 *
 * The child sends messages back through a pipe: child_send() a result blob
 * (the last one wins), child_send_data() a frame of the caller's own
 * protocol (handed to opts.on_data as it arrives), child_fail() a reason,
 * child_heartbeat() to show it is alive.
 *
 * A child that runs untrusted code (opts.untrusted) is not believed: its
 * failure texts and result blobs are refused, so that the reason says only
 * how it ended; the caller's on_data decides what its frames mean, and its
 * heartbeats do not keep it alive (only frames on_data calls progress do).
 *
 * OpenMP: libgomp's thread pool does not survive fork.  If the parent has
 * run OpenMP parallel regions, set opts.single_thread so that the child runs
 * them on one thread, or exec a fresh process (host/sys/worker.h). */
#ifndef PCG_CHILD_H
#define PCG_CHILD_H
#include <stddef.h>

typedef struct {
    double timeout_s;      /* whole run; 0 = no limit */
    double idle_timeout_s; /* longest silence (no message, no heartbeat); 0 = no limit */
    int single_thread;     /* child: omp_set_num_threads(1) */
    /* Each child_send_data frame, as it arrives: CHILD_DATA_OK,
     * CHILD_DATA_PROGRESS (the frame shows real progress: for an untrusted
     * child only these reset the idle timeout) or CHILD_DATA_STOP (the
     * child is stopped; child_run_ex fails with the text written into why). */
    int (*on_data)(void *ctx, const unsigned char *data, size_t len, char *why, int whylen);
    void *data_ctx;
    /* Called about every 20 ms while the child runs: nonzero stops it,
     * with the text written into why (a deadline the caller keeps). */
    int (*on_tick)(void *ctx, char *why, int whylen);
    int untrusted;           /* see above */
    size_t max_frame;        /* largest frame accepted; 0 = 256 MiB */
    volatile int *interrupt; /* when it turns nonzero, SIGINT is passed on to the child once */
    double interrupt_grace_s;/* after that, how long it may take to stop; 0 = no limit */
} child_opts;

enum { CHILD_DATA_OK = 0, CHILD_DATA_STOP = 1, CHILD_DATA_PROGRESS = 2 };

/* fn returns the child's exit status (0 = success).  Returns 0 when the
 * child exited with status 0 and sent no failure; otherwise -1 with reason
 * ("crashed with SIGSEGV (invalid memory access)", "timed out after 5 s",
 * the child's child_fail text, ...).  blob/blob_len (may be NULL) receive a
 * malloc'ed copy of the last child_send payload, NULL/0 if none. */
int child_run_ex(int (*fn)(void *arg), void *arg, const child_opts *opts, void **blob, size_t *blob_len,
                 char *reason, int reason_len);
int child_run(int (*fn)(void *arg), void *arg, double timeout_s, char *reason, int reason_len);

/* In the child: send a result blob / a frame of the caller's protocol / a
 * failure reason / a heartbeat.  Async-signal-safe (usable from a signal
 * handler).  0 ok, -1 error. */
int child_send(const void *data, size_t len);
int child_send_data(const void *data, size_t len);
int child_fail(const char *reason);
int child_heartbeat(void);
/* The pipe descriptor the child writes to (-1 outside a child). */
int child_fd(void);
/* In a process exec'ed by a child: write to fd from now on. */
void child_attach(int fd);

/* In a child: replace the process with path, with exactly envp as its
 * environment and no open descriptor but 0-2, keep_fd (-1 for none) and,
 * if keep_pipe, the message pipe.  Returns only on failure (errno set). */
int child_exec(const char *path, char *const argv[], char *const envp[], int keep_fd, int keep_pipe);

/* "SIGSEGV (invalid memory access)" */
const char *child_signal_name(int sig);

#endif
