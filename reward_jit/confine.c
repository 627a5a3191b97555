#define _GNU_SOURCE
#include "confine.h"
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

static void set_limit(int res, rlim_t soft, rlim_t hard)
{
    struct rlimit rl = {soft, hard};
    setrlimit(res, &rl);
}

void confine_limits(double cpu_s, size_t extra_bytes, int no_processes)
{
    set_limit(RLIMIT_CORE, 0, 0);
    set_limit(RLIMIT_FSIZE, 0, 0);
    if (no_processes) set_limit(RLIMIT_NPROC, 0, 0);
    if (cpu_s > 0) {
        rlim_t cpu = (rlim_t)ceil(cpu_s) + 1;
        set_limit(RLIMIT_CPU, cpu, cpu + 2);
    }
    if (extra_bytes == 0) return;
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1) pages = 0;
        fclose(f);
    }
    if (pages) {
        rlim_t as = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (rlim_t)extra_bytes;
        set_limit(RLIMIT_AS, as, as);
    }
}

/* Calls every stage allows unconditionally: computation, memory, time,
 * futexes and what a thread needs to start and end. */
static const int plain_calls[] = {
    SCMP_SYS(exit_group), SCMP_SYS(exit), SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise),
    SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask), SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday),
    SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep), SCMP_SYS(sched_yield), SCMP_SYS(futex), SCMP_SYS(getpid),
    SCMP_SYS(gettid), SCMP_SYS(set_robust_list), SCMP_SYS(rseq), SCMP_SYS(sched_getaffinity),
    /* NUMA placement of the process's own memory (OpenBLAS's buffers) */
    SCMP_SYS(mbind), SCMP_SYS(get_mempolicy), SCMP_SYS(set_mempolicy),
    /* a thread's own signal stack, which a sanitizer's runtime sets up and
     * takes down with every thread (the simulation's sanitizer build) */
    SCMP_SYS(sigaltstack),
};

static int add_rules(scmp_filter_ctx ctx, int stage, int out_fd)
{
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)out_fd));
    for (size_t i = 0; i < sizeof plain_calls / sizeof plain_calls[0] && rc == 0; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, plain_calls[i], 0);
    /* threads, never processes: clone only with CLONE_THREAD, and not at
     * all once the reward runs; clone3 hides its flags in memory the filter
     * cannot read, so it reports ENOSYS and the C library falls back to clone */
    if (rc == 0 && stage != CONFINE_RUN)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    if (rc == 0 && stage == CONFINE_RUN) {
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
        if (rc == 0)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
                                  SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
    } else if (rc == 0) {
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 0);
        if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 0);
    }
    if (rc == 0 && stage == CONFINE_NVRTC) {
        /* a compiler that looks for a file is told it cannot have it */
        static const int lookups[] = {SCMP_SYS(open),    SCMP_SYS(openat), SCMP_SYS(stat),     SCMP_SYS(lstat),
                                      SCMP_SYS(newfstatat), SCMP_SYS(statx), SCMP_SYS(access), SCMP_SYS(faccessat),
                                      SCMP_SYS(faccessat2), SCMP_SYS(readlink), SCMP_SYS(readlinkat)};
        for (size_t i = 0; i < sizeof lookups / sizeof lookups[0] && rc == 0; i++)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), lookups[i], 0);
        /* questions about itself the compiler asks while it works; getcwd
         * answers "/" (the worker moved there): when getcwd fails, NVRTC
         * runs strlen past the end of its buffer (seen with
         * AddressSanitizer, CUDA 13) */
        static const int queries[] = {SCMP_SYS(fstat),  SCMP_SYS(close),  SCMP_SYS(lseek),  SCMP_SYS(getrlimit),
                                      SCMP_SYS(getrusage), SCMP_SYS(uname), SCMP_SYS(getuid), SCMP_SYS(geteuid),
                                      SCMP_SYS(getcwd)};
        for (size_t i = 0; i < sizeof queries / sizeof queries[0] && rc == 0; i++)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, queries[i], 0);
        /* prlimit64 only to read a limit; raising one (NVRTC asks for an
         * unlimited stack) is refused with EPERM, which it survives */
        if (rc == 0)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 2, SCMP_A0(SCMP_CMP_EQ, 0),
                                  SCMP_A2(SCMP_CMP_EQ, 0));
        if (rc == 0)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prlimit64), 1, SCMP_A2(SCMP_CMP_NE, 0));
        if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setrlimit), 0);
    }
    return rc;
}

int confine_seccomp(int stage, int out_fd, int all_threads)
{
    /* once per process: the first filter forbids prctl */
    static int no_new_privs;
    if (!no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
    no_new_privs = 1;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
    if (!ctx) return -1;
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
    if (rc == 0) rc = add_rules(ctx, stage, out_fd);
    /* a later, stricter stage is loaded with seccomp(2) itself; filters
     * only ever add restrictions, so allowing it gives nothing away */
    if (rc == 0 && stage != CONFINE_RUN) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), 0);
    if (rc == 0 && all_threads) rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
    if (rc == 0) rc = seccomp_load(ctx);
    seccomp_release(ctx);
    return rc ? -1 : 0;
}
