/* The worker's half of batch_reward.h: compile, confine, then score the
 * chunks the caller hands over until it says quit.  Only the binary links
 * this file (it needs libtcc). */
#define _GNU_SOURCE
#include "batch_reward.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "child.h"
#include "confine.h"
#include "level.h"
#include "reward_jit.h"

/* What stopped the worker before it scored anything: one code byte after
 * the tag 'S' (the caller has the texts, batch_reward_client.c). */
static void send_setup(int code)
{
    unsigned char m[2] = {'S', (unsigned char)code};
    child_send_data(m, sizeof m);
}

/* The head, checked against the region's size.  0, or -1. */
static int read_head(const unsigned char *region, size_t len, batch_reward_head *h, batch_reward_offsets *o)
{
    if (len < sizeof *h) return -1;
    memcpy(h, region, sizeof *h);
    if (h->magic != BATCH_REWARD_MAGIC || h->n < 1 || h->n > 10000000 || h->h < 1 || h->h > PCG_MAX_SIDE ||
        h->w < 1 || h->w > PCG_MAX_SIDE || h->src_len > REWARD_MAX_SOURCE || h->threads < 1 || h->threads > 1024 ||
        h->chunks < 1 || h->chunks > 8)
        return -1;
    *o = batch_reward_layout(h->n, h->h * h->w, h->src_len);
    return o->total <= len ? 0 : -1;
}

/* The scoring threads.  Not OpenMP's pool: its idle threads spin before
 * they sleep, and the caller's own pool does the same on the same cores
 * while it waits for this one, so the two processes would take turns
 * spinning; these threads sleep on futexes between batches. */
typedef struct {
    unsigned char *region;
    batch_reward_head *live;
    batch_reward_head h;
    batch_reward_offsets o;
    reward_prog *prog;
    int threads;
    int lo, hi;    /* the levels of the chunk being scored */
    uint32_t go;   /* the chunk the threads are to score (its number) */
    uint32_t left; /* its slices not yet scored */
} scorer;

typedef struct {
    scorer *s;
    int k;
} slice_arg;

/* Slice k of chunk q; the last slice to end publishes the chunk. */
static void score_slice(scorer *s, int k, uint32_t req)
{
    const int cells = s->h.h * s->h.w;
    int lo, hi;
    batch_reward_chunk(s->hi - s->lo, s->threads, k, &lo, &hi);
    lo += s->lo, hi += s->lo;
    float *out = (float *)(s->region + s->o.rewards);
    for (int i = lo; i < hi; i++) {
        level_t prev = {s->h.h, s->h.w, s->region + s->o.prev + (size_t)i * cells};
        level_t curr = {s->h.h, s->h.w, s->region + s->o.curr + (size_t)i * cells};
        out[i] = reward_prog_call(&prev, &curr, s->prog);
    }
    if (__atomic_sub_fetch(&s->left, 1, __ATOMIC_ACQ_REL) == 0) {
        __atomic_store_n(&s->live->done, req, __ATOMIC_RELEASE);
        batch_reward_wake(&s->live->done);
        batch_reward_wake(&s->left);
    }
}

static void *slice_thread(void *arg)
{
    slice_arg *a = arg;
    scorer *s = a->s;
    uint32_t seen = 0;
    for (;;) {
        uint32_t go = __atomic_load_n(&s->go, __ATOMIC_ACQUIRE);
        if (go == seen) {
            batch_reward_wait(&s->go, seen, 0);
            continue;
        }
        seen = go;
        score_slice(s, a->k, go);
    }
    return NULL;
}

/* Compile under the COMPILE filter, start the scoring threads, then the
 * RUN filter on every thread: train's CPU worker's order
 * (train_worker.c).  0, or the setup code. */
static int compile_confined(scorer *s)
{
    char *src = malloc(s->h.src_len + 1);
    if (!src) return 1;
    memcpy(src, s->region + s->o.src, s->h.src_len);
    src[s->h.src_len] = 0;
    confine_limits(0, 0, 0);
    if (confine_seccomp(CONFINE_COMPILE, child_fd(), 1)) return free(src), 2;
    char err[700];
    s->prog = reward_compile_cpu(src, err, sizeof err);
    free(src);
    if (!s->prog) return 3;
    int smallest = s->h.n / s->h.chunks; /* levels in the smallest chunk */
    s->threads = s->h.threads < smallest ? s->h.threads : smallest < 1 ? 1 : smallest;
    static slice_arg args[1024];
    for (int k = 1; k < s->threads; k++) {
        pthread_t t;
        args[k] = (slice_arg){s, k};
        if (pthread_create(&t, NULL, slice_thread, &args[k])) return 2;
    }
    return confine_seccomp(CONFINE_RUN, child_fd(), 1) ? 2 : 0;
}

int reward_worker_batch(unsigned char *region, size_t region_len)
{
    static scorer s;
    s.region = region;
    s.live = (batch_reward_head *)region;
    if (read_head(region, region_len, &s.h, &s.o)) return send_setup(1), 1;
    int rc = compile_confined(&s);
    if (rc) return send_setup(rc), 1;
    __atomic_store_n(&s.live->ready, 1, __ATOMIC_RELEASE);
    batch_reward_wake(&s.live->ready);
    uint32_t seen = 0;
    for (;;) {
        uint32_t req = __atomic_load_n(&s.live->request, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&s.live->quit, __ATOMIC_ACQUIRE)) return 0;
        if (req == seen) {
            batch_reward_wait(&s.live->request, seen, 0);
            continue;
        }
        /* the chunks in order; each one's slices end before the next starts */
        uint32_t q = ++seen;
        batch_reward_chunk(s.h.n, s.h.chunks, (int)((q - 1) % (uint32_t)s.h.chunks), &s.lo, &s.hi);
        __atomic_store_n(&s.left, (uint32_t)s.threads, __ATOMIC_RELEASE);
        __atomic_store_n(&s.go, q, __ATOMIC_RELEASE);
        if (s.threads > 1) batch_reward_wake(&s.go);
        score_slice(&s, 0, q);
        for (uint32_t d; (d = __atomic_load_n(&s.left, __ATOMIC_ACQUIRE)) != 0;) batch_reward_wait(&s.left, d, 0);
    }
}
