/* Confinement of a process that compiles or runs untrusted reward code:
 * resource limits and a seccomp allow-list (libseccomp).  Used by the
 * workers of reward_jit/sandbox.c and host/train/train_worker.c.
 *
 * Filters stack: a process first loads the COMPILE filter (a compiler may
 * map executable memory: libtcc relocates the reward into pages it then
 * makes executable), then, once its code is in place, the RUN filter,
 * which refuses every mapping or protection change that asks for
 * executable memory.  The kernel applies the strictest verdict of all the
 * filters loaded.  A process loads RUN once its thread pools exist: from
 * then on no thread can be started either (a reward could otherwise start
 * one of its own to act later, beside the trainer). */
#ifndef PCG_CONFINE_H
#define PCG_CONFINE_H
#include <stddef.h>

enum {
    CONFINE_COMPILE,   /* computation, memory (executable too), write to out_fd, threads */
    CONFINE_RUN,       /* the same without executable memory and without new threads */
    CONFINE_NVRTC,     /* COMPILE, and file lookups fail with EACCES instead of trapping */
};

/* Resource limits: no core file, no file writes, CPU seconds (0 = none),
 * address space: what is mapped now plus extra_bytes (0 = unchanged);
 * no_processes: RLIMIT_NPROC 0 as well (only for single-threaded workers:
 * the limit counts threads).  Always succeeds as far as the kernel lets it. */
void confine_limits(double cpu_s, size_t extra_bytes, int no_processes);

/* Load filter stage; out_fd is the only descriptor that may be written.
 * all_threads: apply it to every thread of the process (needed once a
 * thread pool exists).  Any other system call raises SIGSYS.
 * 0, or -1 (the kernel or libseccomp refused). */
int confine_seccomp(int stage, int out_fd, int all_threads);

#endif
