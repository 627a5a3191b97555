/* The caller's half of batch_reward.h: the shared region, a thread that
 * starts and watches the worker (worker_run_shared blocks while it runs),
 * and the exchange of one batch.  Linked into libpcgrllm.so, so it holds
 * no compiler: the reward only ever runs in the worker. */
#define _GNU_SOURCE
#include "batch_reward.h"
#include <errno.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "child.h"
#include "reward_jit.h"
#include "util.h"
#include "worker.h"

/* How long the worker may take to compile and confine itself. */
#define START_LIMIT_S 60.0

/* Levels per chunk, about, and the most chunks: enough to overlap the
 * two sides, few enough that each hand-off is a small share of a step. */
#define CHUNK_LEVELS 256
#define MAX_CHUNKS 4

struct batch_reward {
    int n, cells, chunks;
    batch_reward_offsets off;
    int fd;
    unsigned char *region;
    batch_reward_head *head;
    char exe[4096];
    double watchdog_s;
    pthread_t thread;
    int watching;          /* the thread was started */
    pid_t owner;           /* the process that started it (a fork's copy must not drive it) */
    uint32_t request;      /* chunks handed over so far */
    uint32_t base;         /* request before the batch's first chunk */
    double started;        /* when the worker was started */
    double asked_at;       /* when the batch in flight was asked for; 0 none (atomic) */
    int quit;              /* stop was asked for (atomic) */
    int dead;              /* the worker has ended: why says how (atomic) */
    int setup;             /* the worker's setup code, 0 none */
    char why[700];
};

static double load_time(double *p)
{
    double v;
    __atomic_load(p, &v, __ATOMIC_ACQUIRE);
    return v;
}

static void store_time(double *p, double v) { __atomic_store(p, &v, __ATOMIC_RELEASE); }

/* The worker's frames: only its setup code (anything else ends it). */
static int on_data(void *ctx, const unsigned char *data, size_t len, char *why, int whylen)
{
    batch_reward *b = ctx;
    if (len == 2 && data[0] == 'S' && data[1] >= 1 && data[1] <= 3 && !b->setup) {
        b->setup = data[1];
        return CHILD_DATA_OK;
    }
    snprintf(why, (size_t)whylen, "sent a malformed message");
    return CHILD_DATA_STOP;
}

/* The watchdog: a batch in flight past watchdog_s, a start past its limit,
 * a stop the worker does not obey within a second. */
static int on_tick(void *ctx, char *why, int whylen)
{
    batch_reward *b = ctx;
    double now = now_seconds(), asked = load_time(&b->asked_at);
    if (__atomic_load_n(&b->quit, __ATOMIC_ACQUIRE)) {
        if (asked == 0) store_time(&b->asked_at, now);
        else if (now - asked > 1.0) return snprintf(why, (size_t)whylen, "did not stop when asked (killed)"), 1;
        return 0;
    }
    if (asked > 0 && now - asked > b->watchdog_s)
        return snprintf(why, (size_t)whylen, "the reward did not return within %g s (an endless loop?); killed",
                        b->watchdog_s), 1;
    if (!__atomic_load_n(&b->head->ready, __ATOMIC_ACQUIRE) && now - b->started > START_LIMIT_S)
        return snprintf(why, (size_t)whylen, "did not compile the reward within %g s; killed", START_LIMIT_S), 1;
    return 0;
}

static void *watch(void *arg)
{
    batch_reward *b = arg;
    child_opts o = {.on_data = on_data, .on_tick = on_tick, .data_ctx = b, .max_frame = 64};
    char how[600];
    int rc = worker_run_shared(b->exe, BATCH_REWARD_ROLE, b->fd, &o, how, sizeof how);
    static const char *const setup[] = {"", "the job was malformed", "could not confine itself",
                                        "could not compile the reward"};
    if (b->setup) snprintf(b->why, sizeof b->why, "reward worker: %s", setup[b->setup]);
    else if (rc) snprintf(b->why, sizeof b->why, "reward worker: %s", how);
    else snprintf(b->why, sizeof b->why, "reward worker: ended");
    __atomic_store_n(&b->dead, 1, __ATOMIC_RELEASE);
    /* the caller may be waiting on either word */
    batch_reward_wake(&b->head->done);
    batch_reward_wake(&b->head->ready);
    return NULL;
}

/* The region: a memory file of the layout's size, mapped here, the head
 * and source written.  0, or -1 with err. */
static int make_region(batch_reward *b, const char *src, int h, int w, int threads, char *err, int errlen)
{
    size_t src_len = strlen(src);
    b->off = batch_reward_layout(b->n, b->cells, src_len);
    b->fd = memfd_create("pcgrllm-batch-reward", MFD_CLOEXEC);
    if (b->fd < 0 || ftruncate(b->fd, (off_t)b->off.total))
        return say_to(err, errlen, "reward worker: cannot make its shared memory: %s", strerror(errno)), -1;
    void *m = mmap(NULL, b->off.total, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
    if (m == MAP_FAILED)
        return say_to(err, errlen, "reward worker: cannot map its shared memory: %s", strerror(errno)), -1;
    b->region = m;
    b->head = m;
    batch_reward_head head = {BATCH_REWARD_MAGIC, b->n, h, w, threads > 0 ? threads : omp_get_max_threads(),
                              b->chunks, (uint32_t)src_len, 0, 0, 0, 0};
    memcpy(b->region, &head, sizeof head);
    memcpy(b->region + b->off.src, src, src_len + 1);
    return 0;
}

batch_reward *batch_reward_start(const char *exe, const char *src, int n, int h, int w, int threads,
                                 double watchdog_s, char *err, int errlen)
{
    if (strlen(src) > REWARD_MAX_SOURCE) return say_to(err, errlen, "reward worker: the source is too long"), NULL;
    if (strlen(exe) >= sizeof ((batch_reward *)0)->exe)
        return say_to(err, errlen, "reward worker: the binary's path is too long"), NULL;
    if (access(exe, X_OK))
        return say_to(err, errlen, "reward worker: cannot run %.3000s: %s", exe, strerror(errno)), NULL;
    batch_reward *b = calloc(1, sizeof *b);
    if (!b) return say_to(err, errlen, "out of memory"), NULL;
    b->n = n, b->cells = h * w, b->fd = -1, b->owner = getpid();
    b->chunks = n / CHUNK_LEVELS < 1 ? 1 : n / CHUNK_LEVELS > MAX_CHUNKS ? MAX_CHUNKS : n / CHUNK_LEVELS;
    b->watchdog_s = watchdog_s > 0 ? watchdog_s : 10.0;
    snprintf(b->exe, sizeof b->exe, "%s", exe);
    if (make_region(b, src, h, w, threads, err, errlen)) return batch_reward_stop(b), NULL;
    b->started = now_seconds();
    if (pthread_create(&b->thread, NULL, watch, b)) {
        say_to(err, errlen, "reward worker: cannot start its watch thread");
        return batch_reward_stop(b), NULL;
    }
    b->watching = 1;
    while (!__atomic_load_n(&b->head->ready, __ATOMIC_ACQUIRE) && !__atomic_load_n(&b->dead, __ATOMIC_ACQUIRE))
        batch_reward_wait(&b->head->ready, 0, 0.05);
    if (__atomic_load_n(&b->dead, __ATOMIC_ACQUIRE)) {
        say_to(err, errlen, "%s", b->why);
        batch_reward_stop(b);
        return NULL;
    }
    return b;
}

int batch_reward_chunks(const batch_reward *b) { return b->chunks; }

void batch_reward_range(const batch_reward *b, int c, int *lo, int *hi) { batch_reward_chunk(b->n, b->chunks, c, lo, hi); }

/* 0 while the worker can be asked, else -1 with the line why not. */
static int usable(const batch_reward *b, char *err, int errlen)
{
    if (__atomic_load_n(&b->dead, __ATOMIC_ACQUIRE)) return say_to(err, errlen, "%s", b->why), -1;
    if (getpid() != b->owner)
        return say_to(err, errlen, "reward worker: it belongs to the process that started it, not to this fork"), -1;
    return 0;
}

int batch_reward_send(batch_reward *b, int c, const unsigned char *prev, const unsigned char *curr, char *err,
                      int errlen)
{
    if (usable(b, err, errlen)) return -1;
    int lo, hi;
    batch_reward_range(b, c, &lo, &hi);
    size_t at = (size_t)lo * (size_t)b->cells, len = (size_t)(hi - lo) * (size_t)b->cells;
    memcpy(b->region + b->off.prev + at, prev + at, len);
    memcpy(b->region + b->off.curr + at, curr + at, len);
    if (c == 0) {
        b->base = b->request;
        store_time(&b->asked_at, now_seconds());
    }
    __atomic_store_n(&b->head->request, ++b->request, __ATOMIC_RELEASE);
    batch_reward_wake(&b->head->request);
    return 0;
}

int batch_reward_take(batch_reward *b, int c, float *out, char *err, int errlen)
{
    uint32_t want = b->base + (uint32_t)c + 1;
    for (;;) {
        if (usable(b, err, errlen)) return -1;
        uint32_t done = __atomic_load_n(&b->head->done, __ATOMIC_ACQUIRE);
        if ((int32_t)(done - want) >= 0) break;
        batch_reward_wait(&b->head->done, done, 0.05);
    }
    if (c == b->chunks - 1) store_time(&b->asked_at, 0);
    int lo, hi;
    batch_reward_range(b, c, &lo, &hi);
    /* copied out: the worker cannot change them afterwards */
    memcpy(out + lo, b->region + b->off.rewards + sizeof(float) * (size_t)lo, sizeof(float) * (size_t)(hi - lo));
    return 0;
}

void batch_reward_stop(batch_reward *b)
{
    if (!b) return;
    /* a fork's copy leaves the worker and the watch to their owner */
    if (b->watching && getpid() == b->owner) {
        __atomic_store_n(&b->quit, 1, __ATOMIC_RELEASE);
        store_time(&b->asked_at, 0);
        __atomic_store_n(&b->head->quit, 1, __ATOMIC_RELEASE);
        /* a new request number too: a worker about to wait sees it */
        __atomic_store_n(&b->head->request, b->request + 1, __ATOMIC_RELEASE);
        batch_reward_wake(&b->head->request);
        pthread_join(b->thread, NULL);
    }
    if (b->region) munmap(b->region, b->off.total);
    if (b->fd >= 0) close(b->fd);
    free(b);
}
