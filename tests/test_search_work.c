/* The reward API's counting helpers (reward_jit/api_count.h): on levels
 * where the searches' work follows by hand from bitrows.h, the counters
 * report exactly that work, and a reward compiled with them answers as it
 * does without them.  Also the model of one thread per environment
 * (device_model_threads). */
#include "harness.h"
#include "api_count.h"
#include "device_model.h"
#include "env.h"
#include "level.h"
#include "reward_jit.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A 16x16 level of EMPTY with one more tile at (0, col) when tile >= 0. */
static void empty_level(unsigned char *t, int tile, int col)
{
    memset(t, TILE_EMPTY, 256);
    if (tile >= 0) t[col] = (unsigned char)tile;
}

/* The counted work of one call of the reward body `expr` (of curr) on t,
 * and its value next to the uncounted program's. */
static search_work count_one(const char *expr, unsigned char *t, float *counted, float *plain)
{
    char src[512], err[512];
    snprintf(src, sizeof src, "float compute_reward(const level_t *prev, const level_t *curr)\n{ return %s; }\n",
             expr);
    int n = 0;
    const reward_helper *h = search_work_helpers(&n);
    reward_prog *with = reward_compile_cpu_helpers(src, h, n, err, sizeof err), *without;
    if (!with) fail_msg("%s", err);
    if (!(without = reward_compile_cpu(src, err, sizeof err))) fail_msg("%s", err);
    level_t l = {16, 16, t};
    search_work_reset();
    *counted = reward_prog_call(&l, &l, with);
    search_work w;
    search_work_get(&w);
    *plain = reward_prog_call(&l, &l, without);
    reward_prog_free(with);
    reward_prog_free(without);
    return w;
}

/* Levels where the work follows by hand from bitrows.h, and that work. */
typedef struct {
    const char *expr;
    int tile, col; /* the one tile on an EMPTY level (-1: none) and its column in row 0 */
    float value;
    uint64_t calls, n[BR_WORK_KINDS];
} hand_case;

static const hand_case hand_cases[] = {
    /* 256 cells are 32 words of eight bytes, each loaded and tested once
     * by a count */
    {"(float)count_tiles(curr, KEY)", TILE_KEY, 0, 1, 1, {32, 0, 32, 0, 0, 0}},
    /* a find that stops after the first cell counts the rest */
    {"(float)find_tiles(curr, KEY, 0, 0, 1)", TILE_KEY, 0, 1, 1, {32, 0, 32, 0, 0, 0}},
    /* a path along row 0, (0,0) to (0,5): five rounds, the layer in word 0
     * (rows 0..3) for four of them, so each visits words 0 and 1, and the
     * fifth, with row 4 reached, words 0..2.  The mask (one tile, EMPTY)
     * is built for word 0 in round 1 and for word 1 in round 4, when row 3
     * is first seen: two words of eight loads and tests */
    {"(float)path_length_through(curr, 0, 0, 0, 5, 1u << EMPTY)", -1, 0, 5, 1, {16, 0, 16, 5, 2 + 2 + 2 + 2 + 3, 0}},
    /* the nearest KEY three cells along row 0: layers 0..3 each scanned
     * (one word), three rounds of two words.  The target mask's word 0 is
     * built at the first scan (eight loads, one test each); the passable
     * mask's at the first round, non-walls being the complement of two
     * tiles plus the test of ids past 31: three tests a load */
    {"(float)nearest_tile_distance(curr, 0, 0, KEY)", TILE_KEY, 3, 3, 1, {16, 0, 8 + 3 * 8, 3, 6, 4}},
};

static void search_work_counts_by_hand(void **state)
{
    (void)state;
    _Alignas(8) unsigned char t[256 + 1]; /* the engine's levels start at multiples of 8 */
    for (size_t i = 0; i < sizeof hand_cases / sizeof hand_cases[0]; i++) {
        const hand_case *c = &hand_cases[i];
        float counted, plain;
        empty_level(t, c->tile, c->col);
        search_work w = count_one(c->expr, t, &counted, &plain);
        if (counted != c->value || plain != c->value)
            fail_msg("%s: %g counted, %g plain, want %g", c->expr, counted, plain, c->value);
        assert_int_equal(w.calls, c->calls);
        for (int k = 0; k < BR_WORK_KINDS; k++)
            if (w.n[k] != c->n[k])
                fail_msg("%s: work kind %d: counted %llu, want %llu", c->expr, k, (unsigned long long)w.n[k],
                         (unsigned long long)c->n[k]);
    }
    /* a level off a multiple of 8 reads every word in pieces */
    float counted, plain;
    empty_level(t + 1, TILE_KEY, 0);
    search_work w = count_one("(float)count_tiles(curr, KEY)", t + 1, &counted, &plain);
    assert_true(counted == 1 && plain == 1);
    assert_int_equal(w.n[BR_WORK_LOADS], 0);
    assert_int_equal(w.n[BR_WORK_SPLIT_LOADS], 32);
}

/* A helper of the counting set by name. */
static const void *helper_fn(const char *name)
{
    int n = 0;
    const reward_helper *h = search_work_helpers(&n);
    for (int i = 0; i < n; i++)
        if (!strcmp(h[i].name, name)) return h[i].fn;
    fail_msg("no helper %s", name);
    return NULL;
}

/* With the call's levels named (search_work_levels), questions from one
 * cell share one kept search, as on the device: on an open 16x16 level
 * the path from (0,0) to (0,5) takes five rounds, a nearer cell then none
 * and a farther one only the layers past the fifth; a question from
 * another cell starts again, and a level the call did not name (another
 * view) is searched afresh. */
static void search_work_kept_searches(void **state)
{
    (void)state;
    int (*path)(const level_t *, int, int, int, int) =
        (int (*)(const level_t *, int, int, int, int))helper_fn("path_length");
    int (*nearest)(const level_t *, int, int, int) = (int (*)(const level_t *, int, int, int))helper_fn(
        "nearest_tile_distance");
    static unsigned char t[256], u[256];
    empty_level(t, TILE_KEY, 2);
    empty_level(u, -1, 0);
    level_t l = {16, 16, t}, other = {16, 16, u};
    struct {
        const level_t *l;
        int r, c, a, b, want;
        uint64_t rounds;
    } q[] = {
        {&l, 0, 0, 0, 5, 5, 5},    /* path to (0,5) */
        {&l, 0, 0, 0, 3, 3, 0},    /* nearer: no round */
        {&l, 0, 0, 0, 9, 9, 4},    /* farther: four more */
        {&l, 0, 0, -1, TILE_KEY, 2, 0}, /* nearest KEY, (0,2): already reached */
        {&l, 1, 0, 1, 4, 4, 4},    /* another source: afresh */
        {&other, 0, 0, 0, 5, 5, 5}, /* a level the call did not name */
    };
    search_work_levels(&l, &l);
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        search_work_reset();
        int got = q[i].a < 0 ? nearest(q[i].l, q[i].r, q[i].c, q[i].b) : path(q[i].l, q[i].r, q[i].c, q[i].a, q[i].b);
        search_work w;
        search_work_get(&w);
        if (got != q[i].want || w.n[BR_WORK_ROUNDS] != q[i].rounds)
            fail_msg("question %zu: %d in %llu rounds, want %d in %llu", i, got, (unsigned long long)w.n[BR_WORK_ROUNDS],
                     q[i].want, (unsigned long long)q[i].rounds);
        if (i == 2) assert_true(w.n[BR_WORK_KEPT_WORDS] > 0); /* the distances into their planes */
    }
    search_work_levels(NULL, NULL);
    search_work_reset(); /* and without the levels named, afresh again */
    assert_int_equal(path(&l, 0, 0, 0, 3), 3);
    search_work w;
    search_work_get(&w);
    assert_int_equal(w.n[BR_WORK_ROUNDS], 3);
}

/* On levels of random play, a path search that reaches its target takes
 * one round per step of the distance it answers, and one that does not
 * takes one round more than the layers it grows (the last finds nothing
 * new): the distances of lv_bfs, the queue BFS, give both. */
static void search_work_counts_random_play(void **state)
{
    (void)state;
    int n = 0;
    const reward_helper *h = search_work_helpers(&n);
    int (*path)(const level_t *, int, int, int, int, unsigned) = NULL;
    for (int i = 0; i < n; i++)
        if (!strcmp(h[i].name, "path_length_through")) path = (int (*)(const level_t *, int, int, int, int, unsigned))h[i].fn;
    assert_non_null(path);
    env_t e;
    assert_int_equal(env_alloc(&e, 32, 16, 16, VARIANT_DUNGEON, 7), 0);
    int act[32], checked = 0;
    static short dist[256], queue[256];
    for (int t = 0; t < 40; t++) {
        env_random_actions(&e, 5, (uint64_t)t, act);
        env_step(&e, act);
        for (int k = 0; k < 32; k++) {
            level_t l = {16, 16, e.maps + (size_t)k * 256};
            int s = lv_first(&l, TILE_PLAYER), d = lv_first(&l, TILE_DOOR);
            if (s < 0 || d < 0 || s == d) continue;
            unsigned walk = (1u << TILE_EMPTY) | (1u << TILE_DOOR) | (1u << TILE_PLAYER);
            lv_bfs(&l, s, ~walk, -1, dist, queue);
            int far = 0;
            for (int c = 0; c < 256; c++)
                if (dist[c] > far) far = dist[c];
            search_work_reset();
            int got = path(&l, s / 16, s % 16, d / 16, d % 16, walk);
            search_work w;
            search_work_get(&w);
            assert_int_equal(got, dist[d]);
            assert_int_equal(w.n[BR_WORK_ROUNDS], got >= 0 ? (uint64_t)got : (uint64_t)far + 1);
            checked++;
        }
    }
    env_free(&e);
    assert_true(checked > 100);
}

/* The model's bounds are its formula's, for one wave and for two. */
static void search_work_thread_model(void **state)
{
    (void)state;
    const device_model *m = &device_model_h200;
    thread_work w = {1000, 3000, 100, 2};
    double chain = (3000 * m->int_dep_cycles + 100 * m->l1_cycles + 2 * m->l2_cycles) / m->clock_hz;
    double rate = (double)m->sms * m->int32_lanes_per_sm * m->clock_hz * m->int_share;
    double resident = (double)m->sms * m->threads_per_sm;
    double envs[3] = {600, 65536, resident + 1};
    for (int i = 0; i < 3; i++) {
        thread_time t = device_model_threads(m, &w, envs[i]);
        double waves = i == 2 ? 2 : 1;
        assert_true(t.waves == waves);
        assert_true(fabs(t.latency_s - waves * chain) < 1e-15);
        assert_true(fabs(t.throughput_s - envs[i] * 1000 / rate) < 1e-15);
        assert_true(fabs(t.seconds - (fmax(t.latency_s, t.throughput_s) + m->launch_s)) < 1e-15);
    }
    /* few threads wait for the chain, many for the rate */
    assert_true(device_model_threads(m, &w, 600).latency_s > device_model_threads(m, &w, 600).throughput_s);
    assert_true(device_model_threads(m, &w, 1e7).throughput_s > device_model_threads(m, &w, 1e7).latency_s);
}

PCG_TESTS(search_work, cmocka_unit_test(search_work_counts_by_hand), cmocka_unit_test(search_work_counts_random_play),
          cmocka_unit_test(search_work_thread_model), cmocka_unit_test(search_work_kept_searches))
