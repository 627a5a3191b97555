/* Shared by the offline author's tests: levels drawn as rows, the author's
 * code for a reward, compiled with the reward JIT and called. */
#ifndef PCG_AUTHOR_CHECK_H
#define PCG_AUTHOR_CHECK_H
#include "author_offline.h"
#include "level.h"
#include "reward_jit.h"

/* A level from rows of characters: . # P B S X K D T. */
typedef struct {
    level_t l;
    unsigned char t[PCG_MAX_CELLS];
} test_level;
void make_level(test_level *tl, const char *const *rows, int h);
void set_tile(test_level *tl, int r, int c, int tile);
void copy_level(test_level *dst, const test_level *src);
/* The author's code for r (malloc'd), checked for length. */
char *code_for(const author_reward *r);
/* Compiled with the CPU JIT; fails the test when it does not compile. */
reward_prog *compile(const char *code);
/* compute_reward(a, b). */
float reward(reward_prog *p, const test_level *a, const test_level *b);

#endif
