/* The reward API's memo (reward_jit/memo.h) against the same rewards with
 * it off: the same values bit for bit, on the environment's random play
 * (two threads, auto-resets) and on levels whose cells change, stay, and
 * change back between calls, at the addresses the environment keeps. */
#include "harness.h"
#include "env.h"
#include "philox.h"
#include "reward_jit.h"
#include "util.h"
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Asks every question the memo keeps, on both levels, more of them than a
 * level's answers have room for, and folds the answers into the value. */
static const char every_question[] =
    "float compute_reward(const level_t *prev, const level_t *curr)\n"
    "{\n"
    "    const level_t *both[2] = {prev, curr};\n"
    "    unsigned acc = 0;\n"
    "    for (int i = 0; i < 2; i++) {\n"
    "        const level_t *l = both[i];\n"
    "        int rr[4], cc[4], n = find_tiles(l, KEY, rr, cc, 4);\n"
    "        for (int t = 0; t < 10; t++) acc = acc * 7u + (unsigned)count_tiles(l, t);\n"
    "        for (int k = 0; k < n && k < 4; k++) {\n"
    "            acc = acc * 5u + (unsigned)path_length(l, 1, 1, rr[k], cc[k]);\n"
    "            acc = acc * 3u + (unsigned)path_length_through(l, 1, 1, rr[k], cc[k],\n"
    "                                                           (1u << EMPTY) | (1u << KEY) | (1u << PLAYER));\n"
    "            acc = acc * 3u + (unsigned)nearest_tile_distance(l, rr[k], cc[k], DOOR);\n"
    "        }\n"
    "        acc = acc * 11u + (unsigned)count_regions(l);\n"
    "        acc &= 0xFFFFFu;\n"
    "    }\n"
    "    return (float)acc;\n"
    "}\n";

static reward_prog *compile_source(const char *src)
{
    char err[1024];
    reward_prog *p = reward_compile_cpu(src, err, sizeof err);
    if (!p) fail_msg("compile: %s", err);
    return p;
}

static reward_prog *compile_file(const char *path)
{
    char err[1024];
    long len;
    char *src = read_file(path, REWARD_MAX_SOURCE, &len, err, sizeof err);
    if (!src) fail_msg("%s: %s", path, err);
    reward_prog *p = compile_source(src);
    free(src);
    return p;
}

/* Two environments stepped alike, one scored with the memo and one
 * without: the same reward at every step. */
static void compare_on_play(reward_prog *with, reward_prog *without)
{
    enum { N = 48 };
    env_t a, b;
    assert_int_equal(env_alloc(&a, N, 16, 16, VARIANT_DUNGEON, 9), 0);
    assert_int_equal(env_alloc(&b, N, 16, 16, VARIANT_DUNGEON, 9), 0);
    env_set_reward(&a, reward_prog_call, with);
    env_set_reward(&b, reward_prog_call, without);
    int act[N], nonzero = 0;
    for (int t = 0; t < 2 * a.cfg.episode_len + 50; t++) {
        env_random_actions(&a, 4, (uint64_t)t, act);
        env_step(&a, act);
        env_step(&b, act);
        for (int i = 0; i < N; i++) {
            if (memcmp(&a.rewards[i], &b.rewards[i], sizeof(float)))
                fail_msg("step %d env %d: %.9g with the memo, %.9g without", t, i, a.rewards[i], b.rewards[i]);
            nonzero += a.rewards[i] != 0.0f;
        }
    }
    assert_true(nonzero > 100); /* the play reaches transitions the reward scores */
    env_free(&a);
    env_free(&b);
}

static void memo_random_play(void **state)
{
    (void)state;
    int threads = omp_get_max_threads();
    omp_set_num_threads(2);
    const char *paths[] = {"rewards/human/scenario1.c", "rewards/human/scenario2.c"};
    for (int k = 0; k < 2; k++) {
        reward_prog *with = compile_file(paths[k]), *without = compile_file(paths[k]);
        reward_prog_memo(without, 0);
        compare_on_play(with, without);
        reward_prog_free(with);
        reward_prog_free(without);
    }
    reward_prog *with = compile_source(every_question), *without = compile_source(every_question);
    reward_prog_memo(without, 0);
    compare_on_play(with, without);
    reward_prog_free(with);
    reward_prog_free(without);
    omp_set_num_threads(threads);
}

/* One environment's two buffers, as env_step keeps them: curr is edited in
 * place, prev is its copy before the edit.  Each step writes a random tile,
 * puts the last edit back, or leaves the map as it is, and now and then the
 * map changes between calls; 20x20 levels (past the memo's size) are
 * answered afresh. */
static void memo_back_and_forth(void **state)
{
    (void)state;
    reward_prog *with = compile_source(every_question), *without = compile_source(every_question);
    reward_prog_memo(without, 0);
    philox_stream rs;
    philox_stream_init(&rs, 31, 2, 0);
    static const int sides[] = {16, 9, 20};
    for (int k = 0; k < 3; k++) {
        int side = sides[k], cells = side * side;
        unsigned char prev_t[400], curr_t[400];
        level_t start = env_start_level(5 + (uint64_t)k, side, side, curr_t);
        level_t prev = {start.h, start.w, prev_t}, curr = {start.h, start.w, curr_t};
        int last_cell = 0, last_tile = curr_t[0], changed = 0;
        for (int t = 0; t < 6000; t++) {
            if (t % 97 == 96) /* the map changes between calls, as at an episode's reset */
                for (int j = 0; j < 5; j++)
                    curr_t[philox_below(philox_next(&rs), (pcg_u32)cells)] =
                        (unsigned char)(TILE_EMPTY + philox_below(philox_next(&rs), 7));
            memcpy(prev_t, curr_t, (size_t)cells);
            int what = (int)philox_below(philox_next(&rs), 3);
            if (what == 0) { /* a new tile somewhere */
                last_cell = (int)philox_below(philox_next(&rs), (pcg_u32)cells);
                last_tile = curr_t[last_cell];
                curr_t[last_cell] = (unsigned char)(TILE_EMPTY + philox_below(philox_next(&rs), 7));
            } else if (what == 1) { /* the last edit undone */
                int back = curr_t[last_cell];
                curr_t[last_cell] = (unsigned char)last_tile;
                last_tile = back;
            }
            changed += memcmp(prev_t, curr_t, (size_t)cells) != 0;
            float a = reward_prog_call(&prev, &curr, with), b = reward_prog_call(&prev, &curr, without);
            if (memcmp(&a, &b, sizeof a))
                fail_msg("%dx%d step %d: %.9g with the memo, %.9g without", side, side, t, a, b);
        }
        assert_true(changed > 2000 && changed < 5000); /* every kind of step happened */
    }
    reward_prog_free(with);
    reward_prog_free(without);
}

PCG_TESTS(reward_memo, cmocka_unit_test(memo_random_play), cmocka_unit_test(memo_back_and_forth))
