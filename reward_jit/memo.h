/* Answers of the reward API's searches and counts kept from one step to
 * the next.  A reward reads the previous level and the current one, and the
 * previous level of a step is the current level of the step before, so
 * half of what it asks was answered one step earlier.  Each answer is kept
 * with the cells of the level it was computed on and given again only on
 * a level with the very same cells and the same question: the reward sees
 * the same values with or without it. */
#ifndef PCG_REWARD_MEMO_H
#define PCG_REWARD_MEMO_H
#include "level.h"

typedef struct reward_memo reward_memo;

/* Room for `threads` threads (calloc'ed here, at compile time: nothing is
 * allocated while a reward runs).  NULL when out of memory: then every
 * question is answered afresh. */
reward_memo *reward_memo_new(int threads);
void reward_memo_free(reward_memo *m);

/* Around one call of a reward on this thread (m may be NULL: no memo). */
void reward_memo_begin(reward_memo *m, const level_t *prev, const level_t *curr);
void reward_memo_end(void);

/* The questions, each with up to five int arguments. */
enum { MEMO_PATH_THROUGH = 1, MEMO_PATH_LENGTH, MEMO_COUNT_TILES, MEMO_NEAREST, MEMO_REGIONS };
typedef struct {
    int kind, arg[5];
} memo_key;

/* 1 and *value when the answer to k on l is known in the call under way. */
int reward_memo_get(const level_t *l, const memo_key *k, int *value);
/* Keep the answer to k on l (computed by the caller). */
void reward_memo_put(const level_t *l, const memo_key *k, int value);

#endif
