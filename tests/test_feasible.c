/* Two-leg path-length targets, feasibility of path-length targets and the
 * validity rule of the level editor and builder (host/core/feasible.h). */
#include "harness.h"
#include "eval.h"
#include "feasible.h"
#include "target.h"
#include <jansson.h>
#include <string.h>

/* Each leg scores as the total form does; the two are averaged, and a
 * perfect match needs both legs exact (tolerance aside). */
static void two_leg_scoring(void **state)
{
    (void)state;
    pcg_test_grid g;
    target_t t;
    eval_scenario_t s;
    eval_level_t m;
    target_pathlegs(&t, 2, 3, 0);
    target_to_scenario(&t, "", &s);
    PCG_GRID(g, "@.k..D");
    eval_level(&s, &g.l, &m);
    assert_int_equal(m.route_key, 2);
    assert_int_equal(m.route_door, 3);
    assert_near(m.score, 1.0, 0);
    assert_true(m.perfect);
    /* the key one step late: leg 1 is 3 (1 - 1/2), leg 2 is 2 (1 - 1/3) */
    PCG_GRID(g, "@..k.D");
    eval_level(&s, &g.l, &m);
    assert_near(m.score, 0.5 * (0.5 + 2.0 / 3.0), 1e-12);
    assert_false(m.perfect);
    /* the same total can be off on both legs: the total form calls it perfect */
    target_t total;
    eval_scenario_t st;
    target_pathlength(&total, 5, 0);
    target_to_scenario(&total, "", &st);
    eval_level(&st, &g.l, &m);
    assert_true(m.perfect);
    /* the key-avoiding leg: the route to the key goes round the other key */
    PCG_GRID(g, "@k.kD", ".....");
    target_pathlegs(&t, 1, 3, 0);
    target_to_scenario(&t, "", &s);
    eval_level(&s, &g.l, &m);
    assert_int_equal(m.route_key, 1);
    assert_int_equal(m.route_door, 3);
    /* no solution: both legs missing, score 0 */
    PCG_GRID(g, "@#k.D");
    eval_level(&s, &g.l, &m);
    assert_int_equal(m.route_key, -1);
    assert_near(m.score, 0.0, 0);
    assert_false(m.perfect);
    /* an enemy count is part of a perfect match, not of the score */
    target_pathlegs(&t, 2, 3, 0);
    t.enemy_count = 1;
    target_to_scenario(&t, "", &s);
    PCG_GRID(g, "@.k..D", "......");
    eval_level(&s, &g.l, &m);
    assert_near(m.score, 1.0, 0);
    assert_false(m.perfect);
    PCG_GRID(g, "@.k..D", "..b...");
    eval_level(&s, &g.l, &m);
    assert_true(m.perfect);
}

static void two_leg_json(void **state)
{
    (void)state;
    target_t t, back;
    char why[256], buf[256];
    assert_int_equal(target_from_json("{\"kind\":\"pathlength\",\"player_key\":20,\"key_door\":30,\"tolerance\":0}", &t,
                                      why, sizeof why),
                     STORY_OK);
    assert_true(target_is_two_leg(&t));
    assert_int_equal(t.leg_key, 20);
    assert_int_equal(t.leg_door, 30);
    assert_int_equal(t.length, 50);
    assert_int_equal(t.tolerance, 0);
    assert_true(target_to_json(&t, buf, sizeof buf) > 0);
    assert_int_equal(target_from_json(buf, &back, why, sizeof why), STORY_OK);
    assert_true(target_equal(&t, &back));
    /* default tolerance: 10% of the shorter leg */
    assert_int_equal(target_from_json("{\"kind\":\"pathlength\",\"player_key\":20,\"key_door\":40,\"enemy_count\":3}",
                                      &t, why, sizeof why),
                     STORY_OK);
    assert_int_equal(t.tolerance, 2);
    assert_int_equal(t.enemy_count, 3);
    static const char *const bad[] = {
        "{\"kind\":\"pathlength\",\"player_key\":20}",
        "{\"kind\":\"pathlength\",\"player_key\":20,\"key_door\":30,\"length\":50}",
        "{\"kind\":\"pathlength\",\"player_key\":0,\"key_door\":30}",
        "{\"kind\":\"pathlength\",\"player_key\":20,\"key_door\":\"30\"}",
        "{\"kind\":\"pathlength\",\"player_key\":5,\"key_door\":30,\"tolerance\":5}",
        "{\"kind\":\"pathlength\",\"length\":30,\"enemy_count\":-1}",
        "{\"kind\":\"encounter\",\"enemies\":[],\"player_key\":3}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        why[0] = 0;
        assert_int_equal(target_from_json(bad[i], &t, why, sizeof why), STORY_INVALID);
        assert_true(strlen(why) > 10);
    }
}

static int feasible(const char *json, char *why, int len)
{
    target_t t;
    target_map_t map;
    assert_int_equal(target_from_json(json, &t, why, len), STORY_OK);
    target_map_default(&map, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE);
    return target_feasible(&t, &map, why, len);
}

/* The default map: player and door 26 steps apart, every route even. */
static void feasibility_default_map(void **state)
{
    (void)state;
    char why[400];
    assert_int_equal(feasible("{\"kind\":\"pathlength\",\"length\":26,\"tolerance\":0}", why, sizeof why), 0);
    assert_int_equal(feasible("{\"kind\":\"pathlength\",\"length\":20,\"tolerance\":2}", why, sizeof why), -1);
    assert_non_null(strstr(why, "at least 26"));
    assert_int_equal(feasible("{\"kind\":\"pathlength\",\"length\":27,\"tolerance\":0}", why, sizeof why), -1);
    assert_non_null(strstr(why, "even length"));
    assert_int_equal(feasible("{\"kind\":\"pathlength\",\"length\":27,\"tolerance\":1}", why, sizeof why), 0);
    assert_int_equal(feasible("{\"kind\":\"pathlength\",\"length\":900,\"tolerance\":10}", why, sizeof why), -1);
    assert_non_null(strstr(why, "longer than"));
    /* two legs: the sum obeys the same bounds, each leg its own */
    assert_int_equal(feasible("{\"kind\":\"pathlength\",\"player_key\":10,\"key_door\":40,\"tolerance\":0}", why,
                              sizeof why),
                     0);
    assert_int_equal(feasible("{\"kind\":\"pathlength\",\"player_key\":10,\"key_door\":10,\"tolerance\":0}", why,
                              sizeof why),
                     -1);
    assert_non_null(strstr(why, "at least 26"));
    assert_int_equal(feasible("{\"kind\":\"pathlength\",\"player_key\":10,\"key_door\":17,\"tolerance\":0}", why,
                              sizeof why),
                     -1);
    assert_non_null(strstr(why, "even length"));
    assert_int_equal(feasible("{\"kind\":\"pathlength\",\"player_key\":300,\"key_door\":17,\"tolerance\":0}", why,
                              sizeof why),
                     -1);
    assert_non_null(strstr(why, "no leg can be longer than 255"));
    /* other kinds have no bounds */
    assert_int_equal(feasible("{\"kind\":\"encounter\",\"enemies\":[\"BAT\"]}", why, sizeof why), 0);
}

/* Every pair of the harness's range, 10..40 per leg, is feasible exactly
 * when the sum reaches 26 with even parity; and a level's own corners
 * count, not the default's. */
static void feasibility_sweep_and_level_map(void **state)
{
    (void)state;
    target_map_t map;
    target_t t;
    char why[400];
    target_map_default(&map, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE);
    for (int a = 10; a <= 40; a++)
        for (int b = 10; b <= 40; b++) {
            target_pathlegs(&t, a, b, 0);
            int want = a + b >= 26 && (a + b) % 2 == 0 ? 0 : -1;
            assert_int_equal(target_feasible(&t, &map, why, sizeof why), want);
        }
    pcg_test_grid g;
    PCG_GRID(g, "@..D", "....");
    assert_int_equal(target_map_of_level(&g.l, &map, why, sizeof why), 0);
    target_pathlegs(&t, 1, 2, 0);
    assert_int_equal(target_feasible(&t, &map, why, sizeof why), 0);
    target_pathlength(&t, 4, 0);
    assert_int_equal(target_feasible(&t, &map, why, sizeof why), -1);
    assert_non_null(strstr(why, "odd length"));
    target_pathlegs(&t, 1, 2, 0);
    t.enemy_count = 6; /* 8 cells, three of them player, key and door */
    assert_int_equal(target_feasible(&t, &map, why, sizeof why), -1);
    assert_non_null(strstr(why, "do not fit"));
    PCG_GRID(g, "...D", "....");
    assert_int_equal(target_map_of_level(&g.l, &map, why, sizeof why), -1);
    assert_non_null(strstr(why, "PLAYER"));
}

static void level_validity(void **state)
{
    (void)state;
    pcg_test_grid g;
    target_t t;
    char why[200];
    target_pathlegs(&t, 2, 3, 0);
    t.enemy_count = 1;
    PCG_GRID(g, "@.k..D", "..b...");
    assert_int_equal(target_level_valid(&t, &g.l, why, sizeof why), 0);
    PCG_GRID(g, "@.k.kD", "..b...");
    assert_int_equal(target_level_valid(&t, &g.l, why, sizeof why), -1);
    assert_non_null(strstr(why, "2 KEY"));
    PCG_GRID(g, "@.k..D", "......");
    assert_int_equal(target_level_valid(&t, &g.l, why, sizeof why), -1);
    assert_non_null(strstr(why, "0 enemies"));
    PCG_GRID(g, "@.k..D", "####b#", "....#.");
    assert_int_equal(target_level_valid(&t, &g.l, why, sizeof why), -1);
    assert_non_null(strstr(why, "regions"));
    PCG_GRID(g, "..k..D", "..b...");
    assert_int_equal(target_level_valid(&t, &g.l, why, sizeof why), -1);
    assert_non_null(strstr(why, "0 PLAYER"));
}

PCG_TESTS(feasible, cmocka_unit_test(two_leg_scoring), cmocka_unit_test(two_leg_json),
          cmocka_unit_test(feasibility_default_map), cmocka_unit_test(feasibility_sweep_and_level_map),
          cmocka_unit_test(level_validity))
