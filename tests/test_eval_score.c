/* The score-only pass (host/core/eval_score.c) against eval_level and the
 * rules spelt out one search per key and per gate (eval_reference.h): on
 * random levels of every shape that fits four bit-row words, on levels of
 * random play, for the presets and other enemy sets and gates. */
#include "harness.h"
#include "bitrows4.h"
#include "env.h"
#include "eval.h"
#include "eval_reference.h"
#include <stdio.h>
#include <string.h>

/* The score of eval_score_small, which must take the level. */
static double small_score(const eval_scenario_t *s, const level_t *l)
{
    double score = -1;
    if (!eval_score_small(s, l, &score)) fail_msg("%dx%d: eval_score_small does not take the level", l->h, l->w);
    return score;
}

/* One level, every target of the list: the score equals eval_level's, and
 * the reference's when reference is set. */
static void compare_targets(const eval_scenario_t *targets, int n, const level_t *l, int reference, int *outcomes)
{
    for (int i = 0; i < n; i++) {
        const eval_scenario_t *s = &targets[i];
        eval_level_t m;
        eval_level(s, l, &m);
        double got = small_score(s, l);
        if (got != m.score)
            fail_msg("%dx%d target %d (kind %d gate %d): %g, eval_level %g", l->h, l->w, i, s->kind, s->gate, got,
                     m.score);
        if (reference && !(s->kind == EVAL_KEYDOOR && s->gate == TILE_PLAYER)) { /* the reference counts the player's cell as G */
            int sol, met[3];
            double want = s->kind == EVAL_ENCOUNTER ? ref_encounter(s, l, &sol, met) : ref_keydoor(s, l, &sol);
            if (fabs(got - want) > 1e-12)
                fail_msg("%dx%d target %d: %g, the reference %g", l->h, l->w, i, got, want);
        }
        outcomes[(int)(got * 3 + 0.5)]++;
    }
}

/* The presets, every other enemy set, and gates past the presets' (a DOOR
 * or a wall as G, the player's own tile, ids that no cell holds). */
static int all_targets(eval_scenario_t *t)
{
    int n = 0;
    for (int sc = 1; sc <= 4; sc++) t[n++] = *eval_scenario(sc);
    for (int set = 0; set < 8; set++) {
        t[n] = *eval_scenario(1);
        for (int e = 0; e < EVAL_N_ENEMIES; e++) t[n].enemies[e] = (set >> e) & 1;
        n++;
    }
    static const int gates[] = {TILE_DOOR, TILE_WALL, TILE_PLAYER, TILE_TREASURE, TILE_EMPTY, TILE_SPIDER, 300, -1};
    for (int g = 0; g < (int)(sizeof gates / sizeof gates[0]); g++) {
        t[n] = *eval_scenario(3);
        t[n++].gate = gates[g];
    }
    return n;
}

static void eval_score_small_random(void **state)
{
    (void)state;
    static unsigned char t[BR4_CELLS];
    eval_scenario_t targets[32];
    int nt = all_targets(targets), outcomes[4] = {0}, odd = 0;
    unsigned x = 4242;
    for (int it = 0; it < 12000; it++) {
        int h = 16, w = 16;
        while (it % 2) { /* odd levels: any shape that fits */
            x = x * 1664525u + 1013904223u;
            h = 1 + (int)(x >> 8) % 64, w = 1 + (int)(x >> 16) % 64;
            if (br4_fits(h, w)) break;
        }
        random_level(&x, t, h, w);
        if (it % 5 == 0) /* a few cells of any byte value */
            for (int k = 0; k < 4; k++, x = x * 1664525u + 1013904223u) t[(x >> 8) % (unsigned)(h * w)] = (unsigned char)(x >> 24);
        level_t l = {h, w, t};
        compare_targets(targets, nt, &l, 1, outcomes);
        odd += h != 16 || w != 16;
    }
    printf("eval_score: scores 0, 1/3, 2/3, 1: %d %d %d %d\n", outcomes[0], outcomes[1], outcomes[2], outcomes[3]);
    for (int k = 0; k < 4; k++) assert_true(outcomes[k] > 2000);
    assert_true(odd > 5000);
}

/* The levels eval_score_batch is benchmarked on: each step of an episode
 * of random play, both variants. */
static void eval_score_small_random_play(void **state)
{
    (void)state;
    eval_scenario_t targets[32];
    int nt = all_targets(targets), outcomes[4] = {0};
    for (int variant = VARIANT_DUNGEON; variant <= VARIANT_TREASURE; variant++) {
        env_t e;
        assert_int_equal(env_alloc(&e, 16, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE, variant, 9), 0);
        int act[16];
        for (int step = 0; step < e.cfg.episode_len - 1; step++) {
            env_random_actions(&e, 10, (uint64_t)step, act);
            env_step(&e, act);
            for (int i = 0; i < e.n; i += 3) {
                level_t l = env_level(&e, i);
                compare_targets(targets, nt, &l, step % 8 == 0, outcomes);
            }
        }
        env_free(&e);
    }
    assert_true(outcomes[0] > 1000 && outcomes[1] + outcomes[2] + outcomes[3] > 1000);
}

/* What the pass leaves to eval_level: levels past four words, past
 * PCG_MAX_SIDE or empty, and path-length targets. */
static void eval_score_small_declines(void **state)
{
    (void)state;
    static unsigned char t[PCG_MAX_CELLS];
    memset(t, TILE_EMPTY, sizeof t);
    double score = 7;
    static const int shapes[][2] = {{21, 12}, {5, 64}, {65, 1}, {3, 100}, {0, 16}, {16, 0}, {64, 64}};
    for (int i = 0; i < (int)(sizeof shapes / sizeof shapes[0]); i++) {
        level_t l = {shapes[i][0], shapes[i][1], t};
        assert_int_equal(eval_score_small(eval_scenario(1), &l, &score), 0);
    }
    level_t l = {16, 16, t};
    eval_scenario_t path = *eval_scenario(1);
    path.kind = EVAL_PATHLENGTH;
    assert_int_equal(eval_score_small(&path, &l, &score), 0);
    assert_true(score == 7);
    assert_int_equal(eval_score_small(eval_scenario(1), &l, &score), 1);
    assert_true(score == 0); /* no player */
}

/* eval_routes' callback on a level that has no leg to report. */
static int no_leg(void *ctx, const eval_leg_t *leg)
{
    fail_msg("%s: eval_routes reports a leg %s", (const char *)ctx, eval_leg_name(leg->kind));
    return 1;
}

/* Sides the evaluator cannot take, whose product the level's tiles could
 * not hold: negative, or past int once multiplied (641 x 6700417 is 2^32
 * + 1 cells, 65536 x 65536 is 2^32).  Every entry scores them 0 without
 * reading a tile: the level's one byte is the player's and its first
 * neighbours lie far past it. */
static void eval_score_sizes_past_int(void **state)
{
    (void)state;
    static unsigned char player[1] = {TILE_PLAYER};
    static const int shapes[][2] = {{-1, -1}, {-3, 5}, {641, 6700417}, {6700417, 641}, {65536, 65536}, {65537, 65535}};
    for (int i = 0; i < (int)(sizeof shapes / sizeof shapes[0]); i++) {
        level_t l = {shapes[i][0], shapes[i][1], i < 2 ? NULL : player};
        for (int sc = 1; sc <= eval_n_scenarios(); sc++) {
            const eval_scenario_t *s = eval_scenario(sc);
            eval_level_t m;
            eval_level(s, &l, &m);
            float score = -1;
            assert_near(eval_score_batch(s, &l, 1, &score), 0.0, 0);
            int solvable = -1;
            double reachable = -1;
            eval_reference_level(s, &l, &solvable, &reachable);
            char what[64];
            snprintf(what, sizeof what, "%dx%d scenario %d", l.h, l.w, sc);
            assert_int_equal(eval_routes(s, &l, no_leg, what), 0);
            eval_summary_t sum;
            assert_near(eval_levels(s, &l, 1, NULL, &sum), 0.0, 0);
            if (m.score != 0 || score != 0 || m.player_door != -1 || m.missing || solvable || sum.n_valid)
                fail_msg("%s: score %g (batch %g), player_door %d, missing %d, solvable %d", what, m.score, score,
                         m.player_door, m.missing, solvable);
        }
    }
}

PCG_TESTS(eval_score, cmocka_unit_test(eval_score_small_random), cmocka_unit_test(eval_score_small_random_play),
          cmocka_unit_test(eval_score_small_declines), cmocka_unit_test(eval_score_sizes_past_int))
