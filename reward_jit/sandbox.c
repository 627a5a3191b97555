/* Sandboxed validation of untrusted reward code.
 *
 * The parent plays one episode of random actions on n environments (the
 * trusted env code) and forks.  The child drops to a seccomp allow-list
 * (write to its result pipe, memory management, signal return, exit), with
 * rlimits on CPU time, address space, core and file size, then compiles the
 * reward with libtcc and replays the episode, calling the reward on every
 * transition with the levels mapped read-only.  Faults are classified by a
 * signal handler on an alternate stack and reported as one line; the parent
 * kills the child at the wall-clock timeout.  See docs/sandbox.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include "child.h"
#include "env.h"
#include "reward_jit.h"

/* Mean time per call above which a reward is refused. */
#define SLOW_LIMIT_US 1000.0
/* Every DOUBLE_EVERY-th transition is scored twice (hidden-state check). */
#define DOUBLE_EVERY 4
/* Transitions of environment 0 scored again at the end. */
#define RECHECK 256

typedef struct {
    const char *src;
    dungeon_cfg cfg;
    int n, steps, cells;
    const unsigned char *maps0, *frozen0; /* n*cells after reset */
    const unsigned char *actions;         /* steps*n */
    double timeout_s;
    int probe; /* reward_sandbox_probe: a system call to try instead */
} sb_job;

enum { SB_OK = 0, SB_COMPILE = 1, SB_RUNTIME = 2 };

typedef struct {
    int status;
    reward_stats stats;
    char msg[768];
} sb_result;

/* ---- fault classification (async-signal-safe) ---- */

static const char *g_img_lo;
static size_t g_img_len;
static const char *g_lvl_lo;
static size_t g_lvl_len;
static const char *g_stack_top;
static volatile sig_atomic_t g_phase; /* 0 setup, 1 compiling, 2 running the reward */
static char g_altstack[65536];

static size_t cat(char *buf, size_t at, size_t cap, const char *s)
{
    while (*s && at + 1 < cap) buf[at++] = *s++;
    buf[at] = 0;
    return at;
}

static size_t cat_hex(char *buf, size_t at, size_t cap, unsigned long v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    at = cat(buf, at, cap, "0x");
    while (n > 0 && at + 1 < cap) buf[at++] = tmp[--n];
    buf[at] = 0;
    return at;
}

static size_t cat_dec(char *buf, size_t at, size_t cap, long v)
{
    char tmp[24];
    int n = 0;
    if (v < 0) {
        at = cat(buf, at, cap, "-");
        v = -v;
    }
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n > 0 && at + 1 < cap) buf[at++] = tmp[--n];
    buf[at] = 0;
    return at;
}

static int in_range(const char *a, const char *lo, size_t len) { return lo && a >= lo && a < lo + len; }

static void on_fault(int sig, siginfo_t *si, void *uc_)
{
    char m[400];
    size_t k = 0;
    const char *addr = si->si_addr;
    int write_fault = 0, exec_fault = 0;
#if defined(__x86_64__)
    ucontext_t *uc = uc_;
    long errcode = uc->uc_mcontext.gregs[REG_ERR];
    write_fault = (errcode & 2) != 0;
    exec_fault = (errcode & 16) != 0;
#else
    (void)uc_;
#endif
    if (g_phase == 1) {
        k = cat(m, k, sizeof m, "the compiler failed on this source (");
        k = cat(m, k, sizeof m, child_signal_name(sig));
        k = cat(m, k, sizeof m, "); simplify the code");
    } else if (sig == SIGSYS) {
        k = cat(m, k, sizeof m, "made a forbidden system call (number ");
        k = cat_dec(m, k, sizeof m, si->si_syscall);
        k = cat(m, k, sizeof m, "); reward code may only compute");
    } else if (sig == SIGXCPU) {
        k = cat(m, k, sizeof m, "used up its CPU time limit (an infinite loop?)");
    } else if (sig == SIGFPE) {
        k = cat(m, k, sizeof m, "crashed with SIGFPE: ");
        k = cat(m, k, sizeof m,
                si->si_code == FPE_INTDIV   ? "integer division by zero; check divisors before dividing"
                : si->si_code == FPE_INTOVF ? "integer overflow in a division"
                                            : "arithmetic exception");
    } else if (sig == SIGSEGV && in_range(addr, g_lvl_lo, g_lvl_len)) {
        k = cat(m, k, sizeof m, "writes into the level: the levels passed to compute_reward are read-only");
    } else if (sig == SIGSEGV && in_range(addr, g_img_lo, g_img_len) && (write_fault || !exec_fault)) {
        k = cat(m, k, sizeof m,
                "writes to a static or global variable: a reward must not keep state between calls; use "
                "local variables");
    } else if (sig == SIGSEGV && exec_fault) {
        k = cat(m, k, sizeof m, "crashed with SIGSEGV: jumped to data that is not code (address ");
        k = cat_hex(m, k, sizeof m, (unsigned long)addr);
        k = cat(m, k, sizeof m, ")");
    } else if (sig == SIGSEGV && (unsigned long)addr < 65536) {
        k = cat(m, k, sizeof m, "crashed with SIGSEGV: null pointer dereference (address ");
        k = cat_hex(m, k, sizeof m, (unsigned long)addr);
        k = cat(m, k, sizeof m, ")");
    } else if (sig == SIGSEGV && g_stack_top && addr < g_stack_top && addr > g_stack_top - (256L << 20)) {
        k = cat(m, k, sizeof m, "crashed with SIGSEGV: stack overflow (unbounded recursion or a huge local array?)");
    } else if (sig == SIGSEGV) {
        k = cat(m, k, sizeof m, "crashed with SIGSEGV: invalid memory access at address ");
        k = cat_hex(m, k, sizeof m, (unsigned long)addr);
        k = cat(m, k, sizeof m, " (an index out of range or a bad pointer?)");
    } else {
        k = cat(m, k, sizeof m, "crashed with ");
        k = cat(m, k, sizeof m, child_signal_name(sig));
    }
    (void)k;
    child_fail(m);
    _exit(3);
}

static int install_handlers(void)
{
    stack_t ss = {.ss_sp = g_altstack, .ss_size = sizeof g_altstack, .ss_flags = 0};
    if (sigaltstack(&ss, NULL)) return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESETHAND;
    sigfillset(&sa.sa_mask);
    int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGXCPU, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (sigaction(sigs[i], &sa, NULL)) return -1;
    return 0;
}

static void set_limit(int res, rlim_t soft, rlim_t hard)
{
    struct rlimit rl = {soft, hard};
    setrlimit(res, &rl);
}

static void set_limits(double timeout_s)
{
    set_limit(RLIMIT_CORE, 0, 0);
    set_limit(RLIMIT_FSIZE, 0, 0);
    set_limit(RLIMIT_NPROC, 0, 0);
    rlim_t cpu = (rlim_t)ceil(timeout_s) + 1;
    set_limit(RLIMIT_CPU, cpu, cpu + 2);
    /* address space: what the process already maps plus 1 GiB */
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1) pages = 0;
        fclose(f);
    }
    if (pages) {
        rlim_t as = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (1ull << 30);
        set_limit(RLIMIT_AS, as, as);
    }
}

static int install_seccomp(int fd)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
    if (!ctx) return -1;
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)fd));
    int allow[] = {SCMP_SYS(exit_group), SCMP_SYS(exit),         SCMP_SYS(brk),           SCMP_SYS(mmap),
                   SCMP_SYS(munmap),     SCMP_SYS(mprotect),     SCMP_SYS(mremap),        SCMP_SYS(madvise),
                   SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask), SCMP_SYS(clock_gettime),
                   SCMP_SYS(gettimeofday), SCMP_SYS(futex)};
    for (size_t i = 0; i < sizeof allow / sizeof allow[0] && rc == 0; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allow[i], 0);
    if (rc == 0) rc = seccomp_load(ctx);
    seccomp_release(ctx);
    return rc;
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    level_t prev, curr;
    unsigned char tiles[];
} lvl_page;

static int fail_result(sb_result *res, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_result(sb_result *res, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    res->status = status;
    vsnprintf(res->msg, sizeof res->msg, fmt, ap);
    va_end(ap);
    return 0;
}

static const char *fmt_float(char *buf, size_t len, float v)
{
    if (isnan(v)) snprintf(buf, len, "NaN");
    else if (isinf(v)) snprintf(buf, len, v > 0 ? "inf" : "-inf");
    else snprintf(buf, len, "%.9g", (double)v);
    return buf;
}

static int run_checks(const sb_job *j, sb_result *res)
{
    char err[600];
    g_phase = 1;
    reward_prog *prog = reward_compile_cpu(j->src, err, sizeof err);
    g_phase = 0;
    if (!prog) return fail_result(res, SB_COMPILE, "%s", err);
    const void *img;
    reward_prog_image(prog, &img, &g_img_len);
    g_img_lo = img;

    int cells = j->cells;
    long page = sysconf(_SC_PAGESIZE);
    size_t lvl_len = (sizeof(lvl_page) + 2 * (size_t)cells + (size_t)page - 1) & ~((size_t)page - 1);
    lvl_page *lp = mmap(NULL, lvl_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    size_t pad_len = (size_t)j->cfg.pad_h * j->cfg.pad_w;
    unsigned char *map = malloc((size_t)cells), *frozen = malloc((size_t)cells), *pad = malloc(pad_len);
    float *first = malloc(sizeof(float) * RECHECK);
    if (lp == MAP_FAILED || !map || !frozen || !pad || !first)
        return fail_result(res, SB_RUNTIME, "out of memory in the sandbox");
    g_lvl_lo = (const char *)lp;
    g_lvl_len = lvl_len;
    lp->prev = (level_t){j->cfg.h, j->cfg.w, lp->tiles};
    lp->curr = (level_t){j->cfg.h, j->cfg.w, lp->tiles + cells};

    reward_acc acc;
    reward_acc_init(&acc);
    long calls = 0, next_check = 32;
    double t_start = mono(), budget = j->timeout_s * 0.85;
    char b1[32], b2[32];
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: every environment; pass 1: environment 0's first
         * transitions again, which must score exactly as before */
        int n_env = pass == 0 ? j->n : 1;
        for (int i = 0; i < n_env; i++) {
            memcpy(map, j->maps0 + (size_t)i * cells, (size_t)cells);
            memcpy(frozen, j->frozen0 + (size_t)i * cells, (size_t)cells);
            int steps = pass == 0 ? j->steps : (j->steps < RECHECK ? j->steps : RECHECK);
            for (int t = 0; t < steps; t++) {
                if (mprotect(lp, lvl_len, PROT_READ | PROT_WRITE))
                    return fail_result(res, SB_RUNTIME, "sandbox: mprotect failed");
                lp->prev = (level_t){j->cfg.h, j->cfg.w, lp->tiles};
                lp->curr = (level_t){j->cfg.h, j->cfg.w, lp->tiles + cells};
                memcpy(lp->tiles, map, (size_t)cells);
                dungeon_apply(&j->cfg, t, j->actions[(size_t)t * j->n + i], map, frozen, pad);
                memcpy(lp->tiles + cells, map, (size_t)cells);
                if (mprotect(lp, lvl_len, PROT_READ))
                    return fail_result(res, SB_RUNTIME, "sandbox: mprotect failed");
                g_phase = 2;
                double t0 = mono();
                float r = reward_prog_call(&lp->prev, &lp->curr, prog);
                double t1 = mono();
                float r2 = r;
                int twice = pass == 0 && t % DOUBLE_EVERY == 0;
                if (twice) r2 = reward_prog_call(&lp->prev, &lp->curr, prog);
                g_phase = 0;
                if (pass == 1) {
                    if (memcmp(&r, &first[t], sizeof r))
                        return fail_result(res, SB_RUNTIME,
                                           "returns a different value for the same transition when called again "
                                           "later (%s, then %s): the reward must depend only on prev and curr, "
                                           "not on earlier calls",
                                           fmt_float(b1, sizeof b1, first[t]), fmt_float(b2, sizeof b2, r));
                    continue;
                }
                if (i == 0 && t < RECHECK) first[t] = r;
                calls++;
                acc.seconds += t1 - t0;
                if (isnan(r) || isinf(r))
                    return fail_result(res, SB_RUNTIME,
                                       "returned %s (at step %d of random play): every term must stay finite; "
                                       "guard divisions, logf/sqrtf arguments and expf/powf overflow",
                                       fmt_float(b1, sizeof b1, r), t);
                if (twice && memcmp(&r, &r2, sizeof r))
                    return fail_result(res, SB_RUNTIME,
                                       "returns different values for the same input (%s, then %s): the reward "
                                       "must be a pure function of prev and curr",
                                       fmt_float(b1, sizeof b1, r), fmt_float(b2, sizeof b2, r2));
                reward_acc_add(&acc, r);
                if (calls >= next_check) {
                    next_check *= 2;
                    double us = acc.seconds * 1e6 / (double)calls;
                    if (us > SLOW_LIMIT_US)
                        return fail_result(res, SB_RUNTIME,
                                           "too slow: %.2f ms per call on average over %ld calls (the limit is "
                                           "%.0f ms; training calls the reward millions of times); do less "
                                           "path finding per call",
                                           us / 1000.0, calls, SLOW_LIMIT_US / 1000.0);
                    if (mono() - t_start > budget)
                        return fail_result(res, SB_RUNTIME,
                                           "too slow: validation did not finish in %.0f s (%.3f ms per call on "
                                           "average over %ld calls)",
                                           j->timeout_s, us / 1000.0, calls);
                }
            }
        }
    }
    reward_acc_finish(&acc, &res->stats);
    if (res->stats.us_per_call > SLOW_LIMIT_US)
        return fail_result(res, SB_RUNTIME,
                           "too slow: %.2f ms per call on average over %ld calls (the limit is %.0f ms); do less "
                           "path finding per call",
                           res->stats.us_per_call / 1000.0, calls, SLOW_LIMIT_US / 1000.0);
    res->status = SB_OK;
    return 0;
}

static int sandbox_child(void *arg)
{
    const sb_job *j = arg;
    char top;
    g_stack_top = &top;
    static sb_result res;
    memset(&res, 0, sizeof res);
    set_limits(j->timeout_s);
    tzset();
    if (install_handlers()) {
        child_fail("sandbox: cannot install signal handlers");
        return 1;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || install_seccomp(child_fd())) {
        child_fail("sandbox: cannot install the seccomp filter");
        return 1;
    }
    if (j->probe) {
        /* each of these must end in SIGSYS from the filter */
        static char *const argv[] = {"/bin/true", NULL};
        switch (j->probe) {
        case REWARD_PROBE_OPEN: fopen("/etc/hostname", "r"); break;
        case REWARD_PROBE_FORK: fork(); break;
        case REWARD_PROBE_WRITE: write(2, "x", 1); break;
        case REWARD_PROBE_EXEC: execv(argv[0], argv); break;
        case REWARD_PROBE_SOCKET: socket(AF_INET, SOCK_STREAM, 0); break;
        }
        child_fail("the system call was allowed");
        return 1;
    }
    run_checks(j, &res);
    if (child_send(&res, sizeof res)) return 1;
    return 0;
}

int reward_sandbox_probe(int probe, char *reason, int reason_len)
{
    sb_job j;
    memset(&j, 0, sizeof j);
    j.timeout_s = 10;
    j.probe = probe;
    child_opts o = {10, 0, 0};
    if (child_run_ex(sandbox_child, &j, &o, NULL, NULL, reason, reason_len) == 0) {
        snprintf(reason, (size_t)reason_len, "the probe ended without a result");
        return -1;
    }
    return strstr(reason, "forbidden system call") ? 0 : -1;
}

static int sandbox_run(const char *src, int variant, int n_envs, uint64_t seed, double timeout_s,
                       reward_stats *stats, int *kind, char *reason, int reason_len)
{
    *kind = SB_RUNTIME;
    if (reward_scan(src, reason, reason_len)) {
        *kind = SB_COMPILE;
        return -1;
    }
    if (n_envs < 1 || n_envs > 65536) {
        snprintf(reason, (size_t)reason_len, "bad number of environments %d (1..65536)", n_envs);
        return -1;
    }
    if (!(timeout_s > 0)) timeout_s = 30;
    env_t e;
    if (env_alloc(&e, n_envs, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE, variant, seed)) {
        snprintf(reason, (size_t)reason_len, "cannot allocate %d environments", n_envs);
        return -1;
    }
    sb_job j = {src, e.cfg, n_envs, e.cfg.episode_len, e.cells, NULL, NULL, NULL, timeout_s, 0};
    unsigned char *maps0 = malloc((size_t)n_envs * e.cells * 2);
    unsigned char *actions = malloc((size_t)j.steps * n_envs);
    int rc = -1;
    if (!maps0 || !actions) {
        snprintf(reason, (size_t)reason_len, "out of memory");
        goto out;
    }
    memcpy(maps0, e.maps, (size_t)n_envs * e.cells);
    memcpy(maps0 + (size_t)n_envs * e.cells, e.frozen, (size_t)n_envs * e.cells);
    /* the actions of env_random_actions, drawn serially: hundreds of small
     * OpenMP regions are slow on a loaded machine */
    for (int i = 0; i < n_envs; i++)
        for (int t = 0; t < j.steps; t += 4) {
            pcg_u32x4 b = philox_block(seed, (1ull << 32) + (pcg_u64)i, (pcg_u64)t >> 2);
            for (int k = 0; k < 4 && t + k < j.steps; k++)
                actions[(size_t)(t + k) * n_envs + i] = (unsigned char)philox_below(b.v[k], (pcg_u32)e.cfg.n_actions);
        }
    j.maps0 = maps0;
    j.frozen0 = maps0 + (size_t)n_envs * e.cells;
    j.actions = actions;
    child_opts o = {timeout_s, 0, 0};
    void *blob = NULL;
    size_t blob_len = 0;
    char why[600];
    if (child_run_ex(sandbox_child, &j, &o, &blob, &blob_len, why, sizeof why)) {
        snprintf(reason, (size_t)reason_len, "%s", why);
        goto out;
    }
    if (!blob || blob_len != sizeof(sb_result)) {
        snprintf(reason, (size_t)reason_len, "the sandbox returned no result");
        free(blob);
        goto out;
    }
    sb_result *res = blob;
    res->msg[sizeof res->msg - 1] = 0;
    if (res->status != SB_OK) {
        *kind = res->status;
        snprintf(reason, (size_t)reason_len, "%s", res->msg);
    } else {
        if (stats) *stats = res->stats;
        rc = 0;
    }
    free(blob);
out:
    free(maps0);
    free(actions);
    env_free(&e);
    return rc;
}

int reward_validate(const char *src, int variant, int n_envs, uint64_t seed, double timeout_s,
                    reward_stats *stats, char *reason, int reason_len)
{
    int kind;
    return sandbox_run(src, variant, n_envs, seed, timeout_s, stats, &kind, reason, reason_len);
}

/* ---- NVRTC check in a child with a timeout ---- */

typedef struct {
    const char *src;
} nv_job;

static int nvrtc_child(void *arg)
{
    const nv_job *j = arg;
    set_limit(RLIMIT_CORE, 0, 0);
    char err[600];
    size_t n = 0;
    int r = reward_compile_nvrtc(j->src, "sm_90", NULL, &n, err, sizeof err);
    if (r == 0) return 0;
    child_fail(err);
    return r == -2 ? 2 : 1;
}

int reward_validate_both(const char *src, int variant, int n_envs, uint64_t seed, double timeout_s, int gpu,
                         reward_stats *stats, int *gpu_checked, char *reason, int reason_len)
{
    int kind = SB_OK;
    char cpu_err[600];
    int cpu = sandbox_run(src, variant, n_envs, seed, timeout_s, stats, &kind, cpu_err, sizeof cpu_err);
    if (gpu_checked) *gpu_checked = 0;
    char nv_why[300];
    int run_gpu = gpu && (cpu == 0 || kind == SB_COMPILE) && reward_nvrtc_available(nv_why, sizeof nv_why);
    /* a scan error is the same for both backends */
    if (cpu != 0 && kind == SB_COMPILE && reward_scan(src, nv_why, sizeof nv_why)) run_gpu = 0;
    if (!run_gpu) {
        if (cpu) snprintf(reason, (size_t)reason_len, "%s", cpu_err);
        return cpu;
    }
    if (gpu_checked) *gpu_checked = 1;
    nv_job j = {src};
    char gpu_err[600];
    child_opts o = {timeout_s > 0 ? timeout_s : 30, 0, 0};
    int g = child_run_ex(nvrtc_child, &j, &o, NULL, NULL, gpu_err, sizeof gpu_err);
    if (cpu == 0 && g == 0) return 0;
    if (cpu != 0 && g != 0)
        snprintf(reason, (size_t)reason_len, "%s (the GPU compiler also refuses it: %s)", cpu_err, gpu_err);
    else if (cpu != 0)
        snprintf(reason, (size_t)reason_len,
                 "the CPU compiler (libtcc, C) refuses it: %s; the GPU compiler (NVRTC, CUDA C++) accepts it; "
                 "write plain C that both accept",
                 cpu_err);
    else
        snprintf(reason, (size_t)reason_len,
                 "the GPU compiler (NVRTC, CUDA C++) refuses it: %s; the CPU compiler (libtcc, C) accepts it; "
                 "write plain C that both accept",
                 gpu_err);
    return -1;
}
