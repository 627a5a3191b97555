/* The offline author on two-leg path targets: the reward compiles, scores
 * each leg as the evaluator does, survives its own header, and its
 * feedback names the leg that is off. */
#include "harness.h"
#include "author_check.h"
#include "eval.h"
#include "target.h"
#include <stdlib.h>
#include <string.h>

/* A corridor along row 0 of an 8-wide map, walls below: @ at (0,0), the
 * key at column k, the door at (0,7). */
static void corridor(test_level *tl, int k)
{
    static const char *const rows[2] = {"P......D", "########"};
    make_level(tl, rows, 2);
    set_tile(tl, 0, k, TILE_KEY);
}

static void author_two_legs_reward(void **state)
{
    (void)state;
    target_t t;
    target_pathlegs(&t, 3, 4, 0);
    t.enemy_count = 2;
    for (int shaped = 0; shaped < 2; shaped++) {
        author_reward r, back;
        author_initial(&t, &r);
        for (int k = 0; k < r.n; k++)
            if (shaped) r.term[k].form = AF_SHAPED;
        char *code = code_for(&r);
        assert_non_null(strstr(code, "Player -> Key 3 steps and Key -> Door 4"));
        assert_non_null(strstr(code, "legs=3,4 enemy_count=2"));
        char err[300];
        if (author_parse(code, &back, err, sizeof err)) fail_msg("%s", err);
        assert_true(target_equal(&back.target, &t));
        reward_prog *p = compile(code);
        /* the key at 3: both legs right; at 2: the same total, both legs off */
        test_level right, wrong;
        corridor(&right, 3);
        corridor(&wrong, 2);
        eval_scenario_t s;
        target_to_scenario(&t, "", &s);
        eval_level_t m;
        eval_level(&s, &right.l, &m);
        assert_near(m.score, 1.0, 0);
        eval_level(&s, &wrong.l, &m);
        assert_true(m.score < 1.0);
        assert_true(reward(p, &wrong, &right) > 0);
        reward_prog_free(p);
        free(code);
    }
}

static void author_two_legs_feedback(void **state)
{
    (void)state;
    target_t t;
    target_pathlegs(&t, 3, 4, 0);
    author_reward r;
    author_initial(&t, &r);
    /* every level: the key one step early, so the first leg is short and
     * the second long; the first leg is named */
    test_level lv[4];
    level_t levels[4];
    for (int i = 0; i < 4; i++) {
        corridor(&lv[i], 2);
        levels[i] = lv[i].l;
    }
    author_metrics m;
    author_metrics_compute(&t, levels, 4, &m);
    assert_int_equal(m.key_short, 4);
    assert_int_equal(m.door_long, 4);
    char buf[2048];
    author_feedback(&r, &m, buf, sizeof buf);
    assert_non_null(strstr(buf, "Player -> Key leg is not 3 +- 0 steps"));
    assert_non_null(strstr(buf, "route_length"));
}

PCG_TESTS(author_legs, cmocka_unit_test(author_two_legs_reward), cmocka_unit_test(author_two_legs_feedback))
