/* The reward API's memo (memo.h).  Per thread, a table of slots indexed by
 * the current level's address (one environment's map stays at one address),
 * each holding the cells of the last current level seen there and the
 * answers given on it.  At the next call the slot serves the previous
 * level when its cells are the slot's; the answers asked on the current
 * level go into the thread's `fresh` record and replace the slot's when
 * the call ends. */
#include "memo.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MEMO_CELLS 256  /* levels up to 16x16 are kept; larger ones are answered afresh */
#define MEMO_ANSWERS 16 /* answers per level (scenario 1's human reward asks about ten) */
#define MEMO_SLOTS 1024 /* per thread: environments a thread steps in turn */

typedef struct {
    memo_key key;
    int value;
} memo_answer;

typedef struct {
    const unsigned char *at; /* the current level's cells this slot was filled from; NULL: empty */
    int h, w, n;
    unsigned char cells[MEMO_CELLS];
    memo_answer answer[MEMO_ANSWERS];
} memo_slot;

typedef struct {
    memo_slot slot[MEMO_SLOTS];
    memo_slot fresh;
} memo_thread;

struct reward_memo {
    int threads;
    memo_thread *thread;
};

/* The call under way on this thread (t NULL: none, or no memo). */
typedef struct {
    memo_thread *t;
    memo_slot *slot, *old; /* old: the slot when it holds the previous level's cells */
    const level_t *prev, *curr;
    int same; /* prev and curr hold the same cells */
} memo_call;

static __thread memo_call call;
static __thread int thread_index = -1;
static atomic_int next_thread_index;

/* A forked child starts with one thread: numbering starts again there, so
 * the threads it starts find room in the table. */
static void renumber_in_child(void)
{
    atomic_store(&next_thread_index, 0);
    thread_index = -1;
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void install_atfork(void) { pthread_atfork(NULL, NULL, renumber_in_child); }

reward_memo *reward_memo_new(int threads)
{
    pthread_once(&atfork_once, install_atfork);
    reward_memo *m = calloc(1, sizeof *m);
    if (!m || threads < 1) return free(m), NULL;
    m->thread = calloc((size_t)threads, sizeof *m->thread);
    if (!m->thread) return free(m), NULL;
    m->threads = threads;
    return m;
}

void reward_memo_free(reward_memo *m)
{
    if (!m) return;
    free(m->thread);
    free(m);
}

void reward_memo_begin(reward_memo *m, const level_t *prev, const level_t *curr)
{
    call.t = NULL;
    if (!m) return;
    if (thread_index < 0) thread_index = atomic_fetch_add(&next_thread_index, 1);
    /* threads past the table's room (none with OpenMP's own) run without it */
    if (thread_index >= m->threads) return;
    int h = curr->h, w = curr->w, cells = h * w;
    if (h <= 0 || w <= 0 || cells > MEMO_CELLS || prev->h != h || prev->w != w) return;
    memo_thread *t = &m->thread[thread_index];
    memo_slot *s = &t->slot[((uintptr_t)curr->t / (unsigned)cells) % MEMO_SLOTS];
    call.old = s->at == curr->t && s->h == h && s->w == w && !memcmp(s->cells, prev->t, (size_t)cells) ? s : NULL;
    call.same = !memcmp(prev->t, curr->t, (size_t)cells);
    call.slot = s;
    call.prev = prev;
    call.curr = curr;
    t->fresh.n = 0;
    call.t = t;
}

void reward_memo_end(void)
{
    memo_thread *t = call.t;
    if (!t) return;
    memo_slot *s = call.slot;
    const level_t *c = call.curr;
    s->at = c->t;
    s->h = c->h;
    s->w = c->w;
    memcpy(s->cells, c->t, (size_t)(c->h * c->w));
    s->n = t->fresh.n;
    memcpy(s->answer, t->fresh.answer, sizeof(memo_answer) * (size_t)t->fresh.n);
    call.t = NULL;
}

static int find(const memo_slot *s, const memo_key *k, int *value)
{
    for (int i = 0; i < s->n; i++)
        if (!memcmp(&s->answer[i].key, k, sizeof *k)) return *value = s->answer[i].value, 1;
    return 0;
}

/* 1 when l holds the current level's cells in the call under way. */
static int holds_curr(const level_t *l) { return l == call.curr || (l == call.prev && call.same); }

void reward_memo_put(const level_t *l, const memo_key *k, int value)
{
    memo_slot *f = call.t ? &call.t->fresh : NULL;
    if (!f || !holds_curr(l) || f->n == MEMO_ANSWERS) return;
    f->answer[f->n].key = *k;
    f->answer[f->n].value = value;
    f->n++;
}

int reward_memo_get(const level_t *l, const memo_key *k, int *value)
{
    if (!call.t) return 0;
    int curr = holds_curr(l), prev = l == call.prev || (l == call.curr && call.same);
    if (curr && find(&call.t->fresh, k, value)) return 1;
    if (prev && call.old && find(call.old, k, value)) {
        reward_memo_put(l, k, *value); /* the next step asks it again */
        return 1;
    }
    return 0;
}
