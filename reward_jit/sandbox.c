/* Validation of untrusted reward code in confined worker processes.
 *
 * Three workers (host/sys/worker.h: fresh processes started with exec, a
 * scrubbed environment, the job in a sealed memory file):
 *   compile-c     libtcc compiles the source and says yes or why not;
 *   compile-cuda  NVRTC does the same for one GPU architecture;
 *   validate      compiles the source again and scores one episode of
 *                 random play, sending back nothing but the raw rewards
 *                 (or the kind of fault that ended it).
 * Compilers are trusted code working on hostile input: their messages,
 * cleaned to printable text, go back to the model.  Once reward code has
 * run in a process, that process is believed in nothing: the caller
 * checks the number of values, their finiteness and repeatability,
 * computes the statistics and times the calls itself, and every reason it
 * gives is a fixed text with numbers it computed.  See docs/sandbox.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include "child.h"
#include "confine.h"
#include "env.h"
#include "jit_internal.h"
#include "reward_jit.h"
#include "worker.h"

/* Mean time per call above which a reward is refused. */
#define SLOW_LIMIT_US 1000.0
/* Every DOUBLE_EVERY-th transition is scored twice (hidden-state check). */
#define DOUBLE_EVERY 4
/* Transitions of environment 0 scored again at the end. */
#define RECHECK 256
/* Values per message from the validation worker, and the longest it waits
 * before sending what it has (so that a slow reward is seen as slow soon). */
#define VALUES_PER_FRAME 256
#define FRAME_EVERY_S 0.05
/* Address space a compiler or a validation may add to what it maps. */
#define CPU_EXTRA_BYTES (1ull << 30)
#define NVRTC_EXTRA_BYTES (1ull << 30)
/* Wall-clock and CPU seconds an NVRTC compile may take (usually under 1 s). */
#define NVRTC_TIMEOUT_S 60
/* The longest one call of the reward may run before the check stops it
 * (wall clock, on the caller's side: the limit per call is 1 ms of CPU). */
#define CALL_DEADLINE_S 2.0

/* Tags of the validation worker's messages (MSG_FAULT: jit_internal.h). */
enum { MSG_COMPILED = 'C', MSG_VALUES = 'V' };

/* Compiler messages go back to the model: printable text, one line. */
static void clean_text(char *s, size_t max)
{
    size_t i = 0;
    for (; s[i] && i < max; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e) s[i] = '?';
    s[i] = 0;
}

/* ---- the compile workers ---- */

static char *job_text(const unsigned char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

int reward_worker_compile_c(const unsigned char *job, size_t job_len)
{
    char *src = job_text(job, job_len), err[700];
    char top;
    jit_fault_map.stack_top = &top;
    confine_limits(30, CPU_EXTRA_BYTES, 1);
    if (!src || fault_install() || confine_seccomp(CONFINE_COMPILE, child_fd(), 0)) {
        child_fail("sandbox: the compiler process could not confine itself");
        return 1;
    }
    jit_fault_phase = 1;
    reward_prog *p = reward_compile_cpu(src, err, sizeof err);
    jit_fault_phase = 0;
    if (p) return child_send("", 0) ? 1 : 0;
    clean_text(err, 600);
    child_fail(err);
    return 1;
}

int reward_worker_compile_cuda(const unsigned char *job, size_t job_len)
{
    nvrtc_job j;
    char err[700];
    if (job_len < sizeof j) return 2;
    memcpy(&j, job, sizeof j);
    j.arch[sizeof j.arch - 1] = 0;
    char *src = job_text(job + sizeof j, job_len - sizeof j);
    if (!src) return 1;
    /* NVRTC loads its libraries and built-in headers on first use: one
     * trusted compile before the filter, so that the reward's compile
     * needs no file */
    char *warm = NULL;
    size_t warm_len = 0;
    int r = nvrtc_compile_here("float compute_reward(const level_t *p, const level_t *c) { return 0.0f; }", j.arch,
                               j.max_side, 1, &warm, &warm_len, err, sizeof err);
    free(warm);
    if (r == -2) {
        child_fail(err);
        return 2;
    }
    confine_limits(j.timeout_s, NVRTC_EXTRA_BYTES, 0);
    /* the one directory name the confined compiler may learn (confine.c) */
    if (chdir("/") || confine_seccomp(CONFINE_NVRTC, child_fd(), 1)) {
        child_fail("sandbox: the GPU compiler process could not confine itself");
        return 1;
    }
    char *cubin = NULL;
    size_t n = 0;
    r = nvrtc_compile_here(src, j.arch, j.max_side, !j.unscanned, &cubin, &n, err, sizeof err);
    if (r == 0) return child_send(cubin, n) ? 1 : 0;
    clean_text(err, 600);
    child_fail(err);
    return 1;
}

/* ---- the validation worker ---- */

#define VJOB_MAGIC 0x4a56u /* "VJ" */

/* The job: the source, every environment's starting map and frozen mask
 * (n * h * w each) and its actions ([env][step]); the worker replays the
 * edits with the trusted environment code, one environment at a time. */
typedef struct {
    uint32_t magic;
    int32_t h, w, variant, n, steps, probe;
    double timeout_s;
    uint64_t src_off, src_len, maps_off, frozen_off, actions_off;
} vjob;

/* Values, with the CPU seconds the reward's calls have taken so far (the
 * worker's thread clock: what the calls cost, however loaded the machine). */
typedef struct {
    unsigned char tag;
    unsigned char pad[7];
    double cpu_seconds;
    float v[VALUES_PER_FRAME];
} values_msg;
#define VALUES_HEADER offsetof(values_msg, v)

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    values_msg m;
    int count;
    int sent; /* a frame went out already */
    double last;
} value_sender;

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void send_value(value_sender *s, float v, double cpu)
{
    s->m.v[s->count++] = v;
    s->m.cpu_seconds += cpu;
    double now = s->count == VALUES_PER_FRAME ? 0 : mono();
    /* the first value at once: the caller then knows the first call returned */
    if (s->count == VALUES_PER_FRAME || !s->sent || now - s->last > FRAME_EVERY_S) {
        child_send_data(&s->m, VALUES_HEADER + sizeof(float) * (size_t)s->count);
        s->count = 0;
        s->sent = 1;
        s->last = now ? now : mono();
    }
}

static void flush_values(value_sender *s)
{
    if (s->count) child_send_data(&s->m, VALUES_HEADER + sizeof(float) * (size_t)s->count);
    s->count = 0;
}

/* One call of the reward, timed on this thread's CPU clock. */
static float timed_call(reward_prog *prog, const level_t *a, const level_t *b, double *cpu)
{
    double c0 = thread_cpu();
    float r = reward_prog_call(a, b, prog);
    *cpu = thread_cpu() - c0;
    return r;
}

/* The system calls reward_sandbox_probe tries, each of which must trap. */
static void try_probe(int probe)
{
    static char *const argv[] = {"/bin/true", NULL};
    switch (probe) {
    case REWARD_PROBE_OPEN: fopen("/etc/hostname", "r"); break;
    case REWARD_PROBE_FORK: fork(); break;
    case REWARD_PROBE_WRITE: write(2, "x", 1); break;
    case REWARD_PROBE_EXEC: execv(argv[0], argv); break;
    case REWARD_PROBE_SOCKET: socket(AF_INET, SOCK_STREAM, 0); break;
    case REWARD_PROBE_FORGE_VERDICT: {
        /* what a reward that found the engine's message sender could send */
        unsigned char compiled = MSG_COMPILED;
        float few[3] = {0, 0, 0};
        child_send_data(&compiled, 1);
        child_send_data(few, sizeof few);
        child_send("accepted", 8);
        child_fail("accepted; OPENAI_API_KEY=sk-forged");
        _exit(0);
    }
    case REWARD_PROBE_EXEC_MEMORY: {
        static char page[8192] __attribute__((aligned(4096)));
        mprotect(page, 4096, PROT_READ | PROT_EXEC);
        break;
    }
    }
}

/* Environment i's levels after each step (steps + 1 of them), replayed
 * from its starting map and actions, then made read-only with their
 * headers. */
static void replay_env(const vjob *j, const unsigned char *job, int i, unsigned char *seq, size_t seq_len,
                       level_t *hdr, size_t hdr_len, unsigned char *scratch)
{
    dungeon_cfg cfg;
    dungeon_cfg_init(&cfg, j->h, j->w, j->variant, 0);
    size_t cells = (size_t)j->h * j->w;
    unsigned char *map = scratch, *frozen = scratch + cells, *pad = scratch + 2 * cells;
    memcpy(map, job + j->maps_off + (size_t)i * cells, cells);
    memcpy(frozen, job + j->frozen_off + (size_t)i * cells, cells);
    dungeon_init_pad(&cfg, pad);
    for (size_t k = 0; k < cells; k++) dungeon_set_cell(&cfg, map, frozen, pad, (int)k, map[k], frozen[k]);
    mprotect(seq, seq_len, PROT_READ | PROT_WRITE);
    mprotect(hdr, hdr_len, PROT_READ | PROT_WRITE);
    memcpy(seq, map, cells);
    const unsigned char *acts = job + j->actions_off + (size_t)i * j->steps;
    for (int t = 0; t < j->steps; t++) {
        dungeon_apply(&cfg, t, acts[t], map, frozen, pad);
        memcpy(seq + (size_t)(t + 1) * cells, map, cells);
    }
    for (int t = 0; t <= j->steps; t++) hdr[t] = (level_t){j->h, j->w, seq + (size_t)t * cells};
    mprotect(seq, seq_len, PROT_READ);
    mprotect(hdr, hdr_len, PROT_READ);
}

/* Score every transition of the job's episode in the order the caller
 * expects: per environment, per step the value (and every DOUBLE_EVERY-th
 * step a second call), then environment 0's first RECHECK steps again. */
static void score_episode(const vjob *j, const unsigned char *job, reward_prog *prog, unsigned char *seq,
                          size_t seq_len, level_t *hdr, size_t hdr_len, unsigned char *scratch)
{
    value_sender s;
    memset(&s, 0, sizeof s);
    s.m.tag = MSG_VALUES;
    s.last = mono();
    int recheck = j->steps < RECHECK ? j->steps : RECHECK;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < (pass == 0 ? j->n : 1); i++) {
            replay_env(j, job, i, seq, seq_len, hdr, hdr_len, scratch);
            int steps = pass == 0 ? j->steps : recheck;
            for (int t = 0; t < steps; t++) {
                double cpu;
                jit_fault_phase = 2;
                float r = timed_call(prog, &hdr[t], &hdr[t + 1], &cpu);
                send_value(&s, r, cpu);
                if (pass == 0 && t % DOUBLE_EVERY == 0) {
                    r = timed_call(prog, &hdr[t], &hdr[t + 1], &cpu);
                    send_value(&s, r, cpu);
                }
                jit_fault_phase = 0;
            }
        }
    }
    flush_values(&s);
}

/* Pages for *len bytes (rounded up) between two inaccessible guard pages,
 * so that an access just outside them always faults and is recognised. */
static void *map_guarded(size_t *len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    *len = (*len + page - 1) & ~(page - 1);
    char *p = mmap(NULL, *len + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    if (mprotect(p + page, *len, PROT_READ | PROT_WRITE)) return NULL;
    return p + page;
}

int reward_worker_validate(const unsigned char *job, size_t job_len)
{
    vjob j;
    if (job_len < sizeof j) return 2;
    memcpy(&j, job, sizeof j);
    size_t cells = (size_t)j.h * j.w;
    if (j.magic != VJOB_MAGIC || j.n < 1 || j.steps < 1 || j.h < 5 || j.w < 5 || j.h > PCG_MAX_SIDE ||
        j.w > PCG_MAX_SIDE || j.src_off + j.src_len > job_len || j.maps_off + (size_t)j.n * cells > job_len ||
        j.frozen_off + (size_t)j.n * cells > job_len || j.actions_off + (size_t)j.n * j.steps > job_len)
        return 2;
    char top;
    fault_map *fm = &jit_fault_map;
    fm->stack_top = &top;
    char *src = job_text(job + j.src_off, j.src_len);
    size_t seq_len = (size_t)(j.steps + 1) * cells, hdr_len = (size_t)(j.steps + 1) * sizeof(level_t);
    unsigned char *seq = map_guarded(&seq_len), *scratch = malloc(2 * cells + (size_t)(3 * j.h) * (3 * j.w));
    level_t *hdr = map_guarded(&hdr_len);
    confine_limits(j.timeout_s, CPU_EXTRA_BYTES, 1);
    if (!src || !seq || !hdr || !scratch || fault_install() || confine_seccomp(CONFINE_COMPILE, child_fd(), 0)) {
        fault_send(FAULT_SETUP, 0, 0, 0);
        return 1;
    }
    fm->tiles_lo = (const char *)seq;
    fm->tiles_len = seq_len;
    fm->hdr_lo = (const char *)hdr;
    fm->hdr_len = hdr_len;
    char err[700];
    jit_fault_phase = 1;
    reward_prog *prog = j.probe ? NULL : reward_compile_cpu(src, err, sizeof err);
    jit_fault_phase = 0;
    if (!prog && !j.probe) {
        fault_send(FAULT_NO_COMPILE, 0, 0, 0);
        return 1;
    }
    if (prog) {
        const void *img;
        reward_prog_image(prog, &img, &fm->img_len);
        fm->img_lo = img;
    }
    /* the reward's code is in place: no more executable memory */
    if (confine_seccomp(CONFINE_RUN, child_fd(), 0)) {
        fault_send(FAULT_SETUP, 0, 0, 0);
        return 1;
    }
    if (j.probe) {
        try_probe(j.probe);
        return 4; /* the call went through */
    }
    unsigned char tag = MSG_COMPILED;
    child_send_data(&tag, 1);
    score_episode(&j, job, prog, seq, seq_len, hdr, hdr_len, scratch);
    return 0;
}

/* ---- the caller's side ---- */

/* Episodes of edits for the worker to replay: n maps of h x w with their
 * frozen masks, steps actions each ([env][step]). */
typedef struct {
    int variant, h, w, n, steps;
    const unsigned char *maps, *frozen, *actions;
} edit_episodes;

static unsigned char *pack_job(const char *src, const edit_episodes *e, double timeout_s, int probe,
                               size_t *job_len)
{
    size_t cells = (size_t)e->h * e->w, src_len = strlen(src), n = (size_t)e->n;
    vjob j = {VJOB_MAGIC, e->h, e->w, e->variant, e->n, e->steps, probe, timeout_s, sizeof(vjob), src_len,
              0, 0, 0};
    j.maps_off = sizeof(vjob) + src_len;
    j.frozen_off = j.maps_off + n * cells;
    j.actions_off = j.frozen_off + n * cells;
    *job_len = j.actions_off + n * (size_t)e->steps;
    unsigned char *job = malloc(*job_len);
    if (!job) return NULL;
    memcpy(job, &j, sizeof j);
    memcpy(job + j.src_off, src, src_len);
    memcpy(job + j.maps_off, e->maps, n * cells);
    memcpy(job + j.frozen_off, e->frozen, n * cells);
    memcpy(job + j.actions_off, e->actions, n * (size_t)e->steps);
    return job;
}

/* The episode of random play every validation replays: the trusted
 * environment's starting maps and env_random_actions' actions, in a job
 * for the worker. */
static unsigned char *episode_job(const char *src, int variant, int n, uint64_t seed, double timeout_s, int probe,
                                  size_t *job_len)
{
    env_t e;
    if (env_alloc(&e, n, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE, variant, seed)) return NULL;
    size_t steps = (size_t)e.cfg.episode_len;
    unsigned char *actions = malloc((size_t)n * steps);
    if (!actions) {
        env_free(&e);
        return NULL;
    }
    /* env_random_actions' draws, serially: hundreds of small OpenMP regions
     * are slow on a loaded machine */
    for (int i = 0; i < n; i++)
        for (size_t t = 0; t < steps; t += 4) {
            pcg_u32x4 b = philox_block(seed, (1ull << 32) + (pcg_u64)i, (pcg_u64)t >> 2);
            for (size_t k = 0; k < 4 && t + k < steps; k++)
                actions[(size_t)i * steps + t + k] = (unsigned char)philox_below(b.v[k], (pcg_u32)e.cfg.n_actions);
        }
    edit_episodes ep = {variant, e.cfg.h, e.cfg.w, n, (int)steps, e.maps, e.frozen, actions};
    unsigned char *job = pack_job(src, &ep, timeout_s, probe, job_len);
    free(actions);
    env_free(&e);
    return job;
}

/* ---- the call deadline and the values ---- */

typedef struct {
    float *values;
    size_t expected, got;
    int compiled;
    fault_msg fault; /* kind FAULT_NONE unless the worker reported one */
    int stopped;     /* on_values or the tick refused to go on; the reason is child_run_ex's */
    double t_compiled, t_last, timeout_s, call_deadline_s;
    double cpu_seconds; /* the calls' CPU time, as the worker last reported it */
    jit_progress *prog;
} vcollect;

static int stop_values(vcollect *c) { return c->stopped = 1; }

/* The worker sends its first value at once and then a frame at least every
 * FRAME_EVERY_S while calls return: a silence longer than the deadline is
 * one call that has not returned. */
static int on_validate_tick(void *ctx, char *why, int whylen)
{
    vcollect *c = ctx;
    double now = mono();
    if (c->compiled && c->got < c->expected && now - (c->got ? c->t_last : c->t_compiled) > c->call_deadline_s) {
        if (!c->got)
            snprintf(why, (size_t)whylen,
                     "the first call of compute_reward did not return within %.3g s (an infinite loop?); a call "
                     "must take well under a millisecond",
                     c->call_deadline_s);
        else
            snprintf(why, (size_t)whylen,
                     "a later call of compute_reward did not return within %.3g s (an infinite loop on some levels?); "
                     "every loop must end on every level",
                     c->call_deadline_s);
        return stop_values(c);
    }
    char where[96];
    if (!c->compiled) snprintf(where, sizeof where, "compiling");
    else if (!c->got) snprintf(where, sizeof where, "still running the first call");
    else snprintf(where, sizeof where, "%zu of %zu calls done", c->got, c->expected);
    jit_progress_tick(c->prog, where);
    return 0;
}

static int on_compile_tick(void *ctx, char *why, int whylen)
{
    (void)why, (void)whylen;
    jit_progress_tick(ctx, "compiling");
    return 0;
}

static int on_values(void *ctx, const unsigned char *data, size_t len, char *why, int whylen)
{
    vcollect *c = ctx;
    if (len == 0) return 0;
    double now = mono();
    if (data[0] == MSG_COMPILED && len == 1 && !c->compiled) {
        c->compiled = 1;
        c->t_compiled = now;
        return 0;
    }
    if (data[0] == MSG_FAULT && len == sizeof(fault_msg)) {
        memcpy(&c->fault, data, sizeof c->fault);
        if (c->fault.kind >= N_FAULTS) c->fault.kind = FAULT_SIGNAL;
        return 0;
    }
    double cpu = -1;
    if (len >= VALUES_HEADER) memcpy(&cpu, data + offsetof(values_msg, cpu_seconds), sizeof cpu);
    if (data[0] != MSG_VALUES || !c->compiled || len < VALUES_HEADER || (len - VALUES_HEADER) % sizeof(float) ||
        !(cpu >= c->cpu_seconds) || !(cpu < 1e9)) {
        snprintf(why, (size_t)whylen, "the validation process sent a malformed message");
        return stop_values(c);
    }
    size_t k = (len - VALUES_HEADER) / sizeof(float);
    if (k > c->expected - c->got) {
        snprintf(why, (size_t)whylen, "the validation process sent more values than there are transitions");
        return stop_values(c);
    }
    memcpy(c->values + c->got, data + VALUES_HEADER, k * sizeof(float));
    c->got += k;
    c->t_last = now;
    c->cpu_seconds = cpu;
    double us = cpu * 1e6 / (double)c->got;
    if (c->got >= 32 && us > SLOW_LIMIT_US) {
        snprintf(why, (size_t)whylen,
                 "too slow: %.2f ms per call on average over %zu calls (the limit is %.0f ms; training calls the "
                 "reward millions of times); do less path finding per call",
                 us / 1000.0, c->got, SLOW_LIMIT_US / 1000.0);
        return stop_values(c);
    }
    if (now - c->t_compiled > c->timeout_s * 0.85 && c->got < c->expected) {
        snprintf(why, (size_t)whylen,
                 "too slow: validation did not finish in %.0f s (%.3f ms per call on average over %zu calls)",
                 c->timeout_s, us / 1000.0, c->got);
        return stop_values(c);
    }
    return CHILD_DATA_PROGRESS;
}

static const char *fmt_float(char *buf, size_t len, float v)
{
    if (isnan(v)) snprintf(buf, len, "NaN");
    else if (isinf(v)) snprintf(buf, len, v > 0 ? "inf" : "-inf");
    else snprintf(buf, len, "%.9g", (double)v);
    return buf;
}

/* Check the values the worker sent, in its order, and compute the
 * statistics; per_env (n*steps, may be NULL) receives each transition's
 * first value.  0, or -1 with the reason. */
static int judge_values(const float *v, int n, int steps, double seconds, reward_stats *st, float *per_env,
                        char *reason, int len)
{
    reward_acc acc;
    reward_acc_init(&acc);
    float first[RECHECK];
    char b1[32], b2[32];
    size_t k = 0;
    for (int i = 0; i < n; i++)
        for (int t = 0; t < steps; t++) {
            float r = v[k++], r2 = t % DOUBLE_EVERY == 0 ? v[k++] : r;
            if (i == 0 && t < RECHECK) first[t] = r;
            if (per_env) per_env[(size_t)i * steps + t] = r;
            if (!isfinite(r)) {
                snprintf(reason, (size_t)len,
                         "returned %s (at step %d of random play): every term must stay finite; guard divisions, "
                         "logf/sqrtf arguments and expf/powf overflow",
                         fmt_float(b1, sizeof b1, r), t);
                return -1;
            }
            if (memcmp(&r, &r2, sizeof r)) {
                snprintf(reason, (size_t)len,
                         "returns different values for the same input (%s, then %s): the reward must be a pure "
                         "function of prev and curr",
                         fmt_float(b1, sizeof b1, r), fmt_float(b2, sizeof b2, r2));
                return -1;
            }
            reward_acc_add(&acc, r);
        }
    for (int t = 0; t < steps && t < RECHECK; t++, k++)
        if (memcmp(&v[k], &first[t], sizeof(float))) {
            snprintf(reason, (size_t)len,
                     "returns a different value for the same transition when called again later (%s, then %s): the "
                     "reward must depend only on prev and curr, not on earlier calls",
                     fmt_float(b1, sizeof b1, first[t]), fmt_float(b2, sizeof b2, v[k]));
            return -1;
        }
    acc.seconds = seconds * (double)acc.n / (double)k; /* the first calls' share of the time */
    reward_acc_finish(&acc, st);
    if (st->us_per_call > SLOW_LIMIT_US) {
        snprintf(reason, (size_t)len,
                 "too slow: %.2f ms per call on average over %ld calls (the limit is %.0f ms); do less path finding "
                 "per call",
                 st->us_per_call / 1000.0, acc.n, SLOW_LIMIT_US / 1000.0);
        return -1;
    }
    return 0;
}

/* Why a validation worker ended without all its values. */
static void explain_end(const vcollect *c, const char *why, char *reason, int len)
{
    if (c->fault.kind != FAULT_NONE) {
        fault_text(&c->fault, reason, len);
    } else if (!strncmp(why, "crashed with SIGSYS", 19)) {
        fault_msg f = {MSG_FAULT, FAULT_SYSCALL, 0, 0, 0, 0};
        fault_text(&f, reason, len);
    } else if (!strncmp(why, "sent ", 5)) {
        snprintf(reason, (size_t)len, "the validation process %s", why);
    } else if (why[0] && strncmp(why, "exited with status", 18)) {
        snprintf(reason, (size_t)len, "%s", why); /* the watcher's own words (timeout, signal, ...) */
    } else {
        snprintf(reason, (size_t)len, "stopped after %zu of %zu values (the validation process ended early)", c->got,
                 c->expected);
    }
}

static int compile_cpu(const char *src, double timeout_s, jit_progress *prog, char *err, int errlen)
{
    if (reward_scan(src, err, errlen)) return -1;
    child_opts o = {.timeout_s = timeout_s > 0 ? timeout_s : 30, .max_frame = 4096};
    if (prog) o.on_tick = on_compile_tick, o.data_ctx = prog;
    char why[800];
    if (worker_run("compile-c", src, strlen(src), &o, NULL, NULL, why, sizeof why) == 0) return 0;
    snprintf(err, (size_t)errlen, "%s", why);
    return -1;
}

int reward_check_compile_cpu(const char *src, double timeout_s, char *err, int errlen)
{
    return compile_cpu(src, timeout_s, NULL, err, errlen);
}

/* Replays the episode in the validate worker and collects its values into
 * c (c->expected of them).  0 when all arrived, else -1 with the reason. */
static int collect_values(const unsigned char *job, size_t job_len, vcollect *c, char *reason, int reason_len)
{
    /* a call that runs for seconds is a loop; with a short timeout the
     * deadline is half of it, so that it still speaks before the timeout */
    c->call_deadline_s = c->timeout_s / 2 < CALL_DEADLINE_S ? c->timeout_s / 2 : CALL_DEADLINE_S;
    child_opts o = {.timeout_s = c->timeout_s, .on_data = on_values, .on_tick = on_validate_tick, .data_ctx = c,
                    .max_frame = sizeof(values_msg)};
    char why[800];
    if (worker_run("validate", job, job_len, &o, NULL, NULL, why, sizeof why) == 0 && c->got == c->expected)
        return 0;
    if (c->stopped) snprintf(reason, (size_t)reason_len, "%s", why);
    else explain_end(c, why, reason, reason_len);
    return -1;
}

/* Replay job (n_envs episodes of steps edits) in the worker and judge
 * its values; per_env as for judge_values. */
static int judge_job(const unsigned char *job, size_t job_len, int n_envs, int steps, double timeout_s,
                     jit_progress *prog, reward_stats *stats, float *per_env, char *reason, int reason_len)
{
    vcollect c = {0};
    c.expected = (size_t)n_envs * steps + (size_t)n_envs * ((steps + DOUBLE_EVERY - 1) / DOUBLE_EVERY) +
                 (size_t)(steps < RECHECK ? steps : RECHECK);
    c.values = malloc(c.expected * sizeof(float));
    c.timeout_s = timeout_s;
    c.prog = prog;
    int rc = -1;
    if (!c.values) {
        snprintf(reason, (size_t)reason_len, "out of memory");
    } else if (collect_values(job, job_len, &c, reason, reason_len) == 0) {
        reward_stats st;
        rc = judge_values(c.values, n_envs, steps, c.cpu_seconds, &st, per_env, reason, reason_len);
        if (rc == 0 && stats) *stats = st;
    }
    free(c.values);
    return rc;
}

/* The whole CPU validation; per_env as for judge_values.  kind: 1 when the
 * compiler refused the source, 2 otherwise. */
static int sandbox_run(const char *src, int variant, int n_envs, uint64_t seed, double timeout_s, int probe,
                       reward_stats *stats, float *per_env, int *kind, char *reason, int reason_len)
{
    jit_progress prog;
    jit_progress_start(&prog);
    *kind = 1;
    if (!probe && compile_cpu(src, timeout_s, &prog, reason, reason_len)) return -1;
    *kind = 2;
    if (n_envs < 1 || n_envs > 65536) {
        snprintf(reason, (size_t)reason_len, "bad number of environments %d (1..65536)", n_envs);
        return -1;
    }
    if (!(timeout_s > 0)) timeout_s = 30;
    size_t job_len = 0;
    unsigned char *job = episode_job(src, variant, n_envs, seed, timeout_s, probe, &job_len);
    if (!job) {
        snprintf(reason, (size_t)reason_len, "out of memory for %d environments", n_envs);
        return -1;
    }
    int rc = judge_job(job, job_len, n_envs, ((const vjob *)job)->steps, timeout_s, &prog, stats, per_env, reason,
                       reason_len);
    free(job);
    return rc;
}

int reward_values_edits(const char *src, int variant, int h, int w, int n, int steps, const unsigned char *maps,
                        const unsigned char *frozen, const unsigned char *actions, double timeout_s, float *values,
                        char *reason, int reason_len)
{
    jit_progress prog;
    jit_progress_start(&prog);
    if (compile_cpu(src, timeout_s, &prog, reason, reason_len)) return -1;
    if (n < 1 || n > 4096 || steps < 1 || h < 5 || w < 5 || h > PCG_MAX_SIDE || w > PCG_MAX_SIDE ||
        (size_t)n * steps > (1u << 24)) {
        snprintf(reason, (size_t)reason_len, "bad edit episodes (%d of %d steps on %dx%d)", n, steps, h, w);
        return -1;
    }
    if (!(timeout_s > 0)) timeout_s = 30;
    edit_episodes ep = {variant, h, w, n, steps, maps, frozen, actions};
    size_t job_len = 0;
    unsigned char *job = pack_job(src, &ep, timeout_s, 0, &job_len);
    if (!job) {
        snprintf(reason, (size_t)reason_len, "out of memory");
        return -1;
    }
    int rc = judge_job(job, job_len, n, steps, timeout_s, &prog, NULL, values, reason, reason_len);
    free(job);
    return rc;
}

int reward_validate(const char *src, int variant, int n_envs, uint64_t seed, double timeout_s,
                    reward_stats *stats, char *reason, int reason_len)
{
    int kind;
    return sandbox_run(src, variant, n_envs, seed, timeout_s, 0, stats, NULL, &kind, reason, reason_len);
}

int reward_validate_values(const char *src, int variant, int n_envs, uint64_t seed, double timeout_s,
                           reward_stats *stats, float *values, char *reason, int reason_len)
{
    int kind;
    return sandbox_run(src, variant, n_envs, seed, timeout_s, 0, stats, values, &kind, reason, reason_len);
}

int reward_sandbox_probe(int probe, char *reason, int reason_len)
{
    reward_stats st;
    int kind;
    if (sandbox_run("", VARIANT_DUNGEON, 1, 0, 10, probe, &st, NULL, &kind, reason, reason_len) == 0) {
        snprintf(reason, (size_t)reason_len, "the probe ended without a verdict");
        return -1;
    }
    return strstr(reason, "forbidden system call") ? 0 : -1;
}

/* ---- NVRTC in its worker ---- */

int reward_compile_nvrtc_ex(const char *src, const char *arch, int max_side, char **cubin, size_t *cubin_len,
                            char *err, int errlen)
{
    if (cubin) *cubin = NULL;
    if (cubin_len) *cubin_len = 0;
    if (!reward_nvrtc_available(err, errlen)) return -2;
    if (reward_scan(src, err, errlen)) return -1;
    nvrtc_job j;
    memset(&j, 0, sizeof j);
    snprintf(j.arch, sizeof j.arch, "%s", arch ? arch : "");
    j.max_side = max_side;
    j.timeout_s = NVRTC_TIMEOUT_S;
    size_t n = strlen(src);
    unsigned char *job = malloc(sizeof j + n);
    if (!job) {
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
    }
    memcpy(job, &j, sizeof j);
    memcpy(job + sizeof j, src, n);
    child_opts o = {.timeout_s = j.timeout_s, .max_frame = 64u << 20};
    void *blob = NULL;
    size_t len = 0;
    char why[800];
    int rc = worker_run("compile-cuda", job, sizeof j + n, &o, &blob, &len, why, sizeof why);
    free(job);
    if (rc) {
        snprintf(err, (size_t)errlen, "%s", why);
        free(blob);
        return -1;
    }
    if (cubin) *cubin = blob;
    else free(blob);
    if (cubin_len) *cubin_len = len;
    return 0;
}

int reward_compile_nvrtc(const char *src, const char *arch, char **cubin, size_t *cubin_len, char *err,
                         int errlen)
{
    return reward_compile_nvrtc_ex(src, arch, 0, cubin, cubin_len, err, errlen);
}

int reward_validate_both(const char *src, int variant, int n_envs, uint64_t seed, double timeout_s, int gpu,
                         reward_stats *stats, int *gpu_checked, char *reason, int reason_len)
{
    int kind = 2;
    char cpu_err[800];
    int cpu = sandbox_run(src, variant, n_envs, seed, timeout_s, 0, stats, NULL, &kind, cpu_err, sizeof cpu_err);
    if (gpu_checked) *gpu_checked = 0;
    char nv_why[300];
    int run_gpu = gpu && (cpu == 0 || kind == 1) && reward_nvrtc_available(nv_why, sizeof nv_why);
    /* a scan error is the same for both backends */
    if (cpu != 0 && kind == 1 && reward_scan(src, nv_why, sizeof nv_why)) run_gpu = 0;
    if (!run_gpu) {
        if (cpu) snprintf(reason, (size_t)reason_len, "%s", cpu_err);
        return cpu;
    }
    if (gpu_checked) *gpu_checked = 1;
    char gpu_err[800];
    int g = reward_compile_nvrtc_ex(src, "sm_90", 0, NULL, NULL, gpu_err, sizeof gpu_err);
    if (cpu == 0 && g == 0) return 0;
    int cpu_line = 0, gpu_line = 0;
    sscanf(cpu_err, "line %d:", &cpu_line);
    sscanf(gpu_err, "line %d:", &gpu_line);
    /* the CPU's words say it all when the GPU's are the same, or only that
     * compute_reward is missing, which the CPU then says too */
    int same = !strcmp(cpu_err, gpu_err) ||
               (strstr(cpu_err, "define float compute_reward(") && !strncmp(gpu_err, "no compute_reward:", 18));
    if (cpu != 0 && g != 0 && same)
        snprintf(reason, (size_t)reason_len, "%s", cpu_err);
    else if (cpu != 0 && g != 0 && cpu_line > 0 && cpu_line == gpu_line)
        snprintf(reason, (size_t)reason_len, "%s (the GPU compiler also refuses line %d)", cpu_err, cpu_line);
    else if (cpu != 0 && g != 0)
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
