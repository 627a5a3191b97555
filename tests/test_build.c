/* The deterministic builder and its certified pieces (host/levelgen/). */
#include "harness.h"
#include "build.h"
#include "dungeon.h"
#include "eval.h"
#include "feasible.h"
#include "pieces.h"
#include "target.h"
#include <jansson.h>
#include <stdio.h>
#include <string.h>

static build_result_t res; /* large: not on the stack */

/* The evaluator's own reading of a built level, not the builder's copy. */
static void measure(const target_t *t, const level_t *l, eval_level_t *m)
{
    eval_scenario_t s;
    target_to_scenario(t, "", &s);
    eval_level(&s, l, m);
}

/* Build t (16x16, seed) and check the level is perfect and valid. */
static void build_perfect(const target_t *t, uint64_t seed, int want_key, int want_door)
{
    char why[512];
    int rc = build_level(t, PCG_DEFAULT_SIDE, seed, &res, why, sizeof why);
    if (rc != BUILD_OK) fail_msg("legs %d + %d: %s", t->leg_key, t->leg_door, why);
    eval_level_t m;
    measure(t, &res.level, &m);
    assert_int_equal(m.perfect, 1);
    assert_int_equal(res.perfect, 1);
    assert_int_equal(m.route_key, want_key);
    assert_int_equal(m.route_door, want_door);
    assert_int_equal(target_level_valid(t, &res.level, why, sizeof why), 0);
}

static void build_pieces_certified(void **state)
{
    (void)state;
    char why[400];
    /* runs 1 and 2; per side a turn, detours 1..14, an alcove and a sealed cell per enemy */
    assert_int_equal(pieces_certify_all(PCG_DEFAULT_SIDE, why, sizeof why), 2 + 2 * (1 + 14 + 6));
    for (int kind = 0; kind < PIECE_KINDS; kind++)
        for (int side = SIDE_LEFT; side <= SIDE_RIGHT; side++) {
            piece_t p = {kind, kind == PIECE_SEALED ? 3 : 2, side, TILE_SCORPION};
            piece_claim_t k = piece_claim(&p);
            /* four headings, each laid near both ends of the map */
            assert_int_equal(piece_certify(&p, &k, PCG_DEFAULT_SIDE, why, sizeof why), 8);
        }
    /* the deepest detour fits only where its depth runs across the map */
    piece_t deep = {PIECE_DETOUR, 14, SIDE_LEFT, 0};
    piece_claim_t k = piece_claim(&deep);
    assert_int_equal(k.steps, 30);
    assert_true(piece_certify(&deep, &k, PCG_DEFAULT_SIDE, why, sizeof why) >= 4);
    assert_true(pieces_certify_all(8, why, sizeof why) > 0);
}

static void build_wrong_claims_caught(void **state)
{
    (void)state;
    char why[400];
    piece_t detour = {PIECE_DETOUR, 3, SIDE_RIGHT, 0};
    piece_claim_t k = {9, 0};
    assert_int_equal(piece_certify(&detour, &k, 16, why, sizeof why), -1);
    assert_non_null(strstr(why, "claims 9 steps, the evaluator measures 8"));
    /* two cells away is still within the evaluator's window: a wrong piece */
    piece_t near = {PIECE_SEALED, 2, SIDE_LEFT, TILE_BAT};
    k = piece_claim(&near);
    assert_int_equal(piece_certify(&near, &k, 16, why, sizeof why), -1);
    assert_non_null(strstr(why, "claims its enemy is not met, the evaluator meets it"));
    piece_t alcove = {PIECE_ALCOVE, 1, SIDE_LEFT, TILE_SPIDER};
    k = (piece_claim_t){0, 0};
    assert_int_equal(piece_certify(&alcove, &k, 16, why, sizeof why), -1);
    assert_non_null(strstr(why, "the evaluator meets it"));
    /* an alcove two deep is a corridor of its own: the rule catches it */
    piece_t far = {PIECE_SEALED, 1, SIDE_LEFT, TILE_BAT};
    k = (piece_claim_t){0, 1};
    assert_int_equal(piece_certify(&far, &k, 16, why, sizeof why), -1);
    assert_non_null(strstr(why, "placement rule"));
}

/* Every pair of leg lengths 10..40 the map allows, with three enemies and
 * with any number; the others refused with the feasibility reason. */
static void build_two_leg_sweep(void **state)
{
    (void)state;
    target_map_t map;
    target_map_default(&map, 16, 16);
    int feasible = 0, built = 0;
    char why[512], fwhy[512];
    for (int enemies = 0; enemies <= 3; enemies += 3)
        for (int a = 10; a <= 40; a++)
            for (int b = 10; b <= 40; b++) {
                target_t t;
                target_pathlegs(&t, a, b, 0);
                t.enemy_count = enemies;
                if (target_feasible(&t, &map, fwhy, sizeof fwhy)) {
                    assert_int_equal(build_level(&t, 16, (uint64_t)(a * 41 + b), &res, why, sizeof why),
                                     BUILD_REFUSED);
                    assert_string_equal(why, fwhy);
                    continue;
                }
                feasible++;
                build_perfect(&t, (uint64_t)(a * 41 + b), a, b);
                if (enemies) assert_int_equal(lv_count(&res.level, TILE_BAT) + lv_count(&res.level, TILE_SCORPION) +
                                                  lv_count(&res.level, TILE_SPIDER), 3);
                built++;
            }
    assert_int_equal(feasible, 2 * 472);
    assert_int_equal(built, feasible);
}

static void build_total_sweep(void **state)
{
    (void)state;
    char why[512];
    for (int len = 26; len <= 120; len += 2) {
        target_t t;
        target_pathlength(&t, len, 0);
        t.enemy_count = len % 3;
        build_perfect(&t, (uint64_t)len, len / 2, len - len / 2);
    }
    assert_int_equal(build_route_max(16), 122);
    /* a tolerance lets the builder take the nearest length it can lay */
    target_t t;
    target_pathlength(&t, 130, 10);
    assert_int_equal(build_level(&t, 16, 0, &res, why, sizeof why), BUILD_OK);
    assert_int_equal(res.eval.route, 122);
    assert_near(res.eval.score, 1.0, 0);
    assert_int_equal(res.perfect, 0);
    /* other sides: the straight route and the longest */
    for (int side = 5; side <= 40; side += 7) {
        target_pathlength(&t, build_route_max(side), 0);
        assert_int_equal(build_level(&t, side, 3, &res, why, sizeof why), BUILD_OK);
        assert_int_equal(res.perfect, 1);
        target_pathlength(&t, 2 * (side - 3), 0);
        assert_int_equal(build_level(&t, side, 3, &res, why, sizeof why), BUILD_OK);
        assert_int_equal(res.perfect, 1);
    }
}

static void build_encounter_sets(void **state)
{
    (void)state;
    char why[512];
    for (int g = 0; g < 8; g++) {
        target_t t;
        target_encounter(&t, g & 1, (g >> 1) & 1, (g >> 2) & 1);
        for (uint64_t seed = 0; seed < 4; seed++) {
            if (build_level(&t, 16, seed * 5, &res, why, sizeof why) != BUILD_OK) fail_msg("set %d: %s", g, why);
            eval_level_t m;
            measure(&t, &res.level, &m);
            assert_near(m.score, 1.0, 0);
            for (int e = 0; e < 3; e++) {
                assert_int_equal(m.met[e], (g >> e) & 1);
                assert_int_equal(lv_count(&res.level, TILE_BAT + e), 1); /* the others are there, sealed */
            }
        }
    }
    for (int gate = TILE_BAT; gate <= TILE_KEY; gate += TILE_KEY - TILE_BAT) {
        target_t t;
        target_keydoor(&t, gate);
        assert_int_equal(build_level(&t, 16, 1, &res, why, sizeof why), BUILD_OK);
        eval_level_t m;
        measure(&t, &res.level, &m);
        assert_near(m.score, 1.0, 0);
        assert_int_equal(lv_count(&res.level, TILE_TREASURE), 1);
    }
}

static void build_refusals(void **state)
{
    (void)state;
    char why[512];
    target_t t;
    target_pathlegs(&t, 10, 10, 0);
    assert_int_equal(build_level(&t, 16, 0, &res, why, sizeof why), BUILD_REFUSED);
    assert_non_null(strstr(why, "at least 26 steps"));
    target_pathlegs(&t, 10, 17, 0);
    assert_int_equal(build_level(&t, 16, 0, &res, why, sizeof why), BUILD_REFUSED);
    assert_non_null(strstr(why, "even length"));
    /* feasible, but longer than the builder's corridor */
    target_pathlegs(&t, 62, 62, 0);
    assert_int_equal(build_level(&t, 16, 0, &res, why, sizeof why), BUILD_REFUSED);
    assert_non_null(strstr(why, "unsupported: the builder's longest route on a 16x16 map is 122 steps"));
    /* more enemies than dead ends beside the straight route */
    target_pathlength(&t, 26, 0);
    t.enemy_count = 64;
    assert_int_equal(build_level(&t, 16, 0, &res, why, sizeof why), BUILD_REFUSED);
    assert_non_null(strstr(why, "unsupported: only"));
    assert_int_equal(build_level(&t, 4, 0, &res, why, sizeof why), BUILD_REFUSED);
    assert_non_null(strstr(why, "sides 5.."));
}

static void build_deterministic(void **state)
{
    (void)state;
    char why[512];
    static unsigned char first[PCG_MAX_CELLS];
    target_t t;
    target_pathlegs(&t, 23, 31, 0);
    t.enemy_count = 3;
    assert_int_equal(build_level(&t, 16, 7, &res, why, sizeof why), BUILD_OK);
    memcpy(first, res.tiles, 256);
    assert_int_equal(build_level(&t, 16, 7, &res, why, sizeof why), BUILD_OK);
    assert_memory_equal(first, res.tiles, 256);
    /* the seed's corner: 0 and 2 one diagonal, 1 and 3 the other */
    dungeon_cfg cfg = {0};
    cfg.h = cfg.w = 16;
    for (int seed = 0; seed < 4; seed++) {
        assert_int_equal(build_level(&t, 16, (uint64_t)seed, &res, why, sizeof why), BUILD_OK);
        assert_int_equal(res.corner, seed);
        assert_int_equal(lv_first(&res.level, TILE_PLAYER), dungeon_corner(&cfg, seed));
        assert_int_equal(lv_first(&res.level, TILE_DOOR), dungeon_corner(&cfg, (seed + 2) & 3));
        assert_int_equal(res.eval.perfect, 1);
    }
}

static int cli(char *out, size_t len, const char *args)
{
    return pcg_test_sh(out, len, "%s %s", pcg_test_binary(), args);
}

static void build_cli(void **state)
{
    (void)state;
    char out[8192], cmd[2048], path[512];
    const char *legs = "'{\"kind\":\"pathlength\",\"player_key\":17,\"key_door\":29,\"tolerance\":0,\"enemy_count\":3}'";
    snprintf(path, sizeof path, "%s/built.txt", pcg_test_tmpdir());
    snprintf(cmd, sizeof cmd, "build --target %s --seed 5 --out %s", legs, path);
    assert_int_equal(cli(out, sizeof out, cmd), 0);
    assert_non_null(strstr(out, "legs 17 + 29 (route 46)"));
    assert_non_null(strstr(out, "perfect yes"));
    assert_int_equal(pcg_test_count_lines(out), 1);
    snprintf(cmd, sizeof cmd, "eval --json --target %s %s", legs, path);
    assert_int_equal(cli(out, sizeof out, cmd), 0);
    json_error_t err;
    json_t *doc = json_loads(out, 0, &err);
    assert_non_null(doc);
    json_t *lv = json_array_get(json_object_get(doc, "levels"), 0);
    assert_true(json_is_true(json_object_get(lv, "perfect")));
    json_decref(doc);
    /* --json: one object */
    snprintf(cmd, sizeof cmd, "build --json --target '{\"kind\":\"encounter\",\"enemies\":[\"SPIDER\"]}' --out %s", path);
    assert_int_equal(cli(out, sizeof out, cmd), 0);
    doc = json_loads(out, 0, &err);
    assert_non_null(doc);
    assert_true(json_is_true(json_object_get(doc, "perfect")));
    assert_true(json_is_true(json_object_get(json_object_get(doc, "met"), "SPIDER")));
    json_decref(doc);
    /* the story reader's target */
    snprintf(cmd, sizeof cmd, "build --story 'The route to the key and the door is exactly 40 steps.' --out %s", path);
    assert_int_equal(cli(out, sizeof out, cmd), 0);
    assert_non_null(strstr(out, "route 40"));
    /* refusals: one line, exit 3; bad input, exit 2 */
    snprintf(cmd, sizeof cmd, "build --target '{\"kind\":\"pathlength\",\"length\":27,\"tolerance\":0}' --out %s", path);
    assert_int_equal(cli(out, sizeof out, cmd), 3);
    assert_non_null(strstr(out, "build: refused: every route on this map has an even length"));
    assert_int_equal(pcg_test_count_lines(out), 1);
    snprintf(cmd, sizeof cmd, "build --story 'Make the route long and winding.' --out %s", path);
    assert_int_equal(cli(out, sizeof out, cmd), 3);
    assert_non_null(strstr(out, "build: refused:"));
    snprintf(cmd, sizeof cmd, "build --target '{\"kind\":\"pathlength\"' --out %s", path);
    assert_int_equal(cli(out, sizeof out, cmd), 2);
    assert_int_equal(pcg_test_count_lines(out), 1);
    assert_int_equal(cli(out, sizeof out, "build --side 3 --target '{\"kind\":\"keydoor\",\"gate\":\"KEY\"}' --out x"), 2);
    assert_int_equal(cli(out, sizeof out, "build --target '{\"kind\":\"keydoor\",\"gate\":\"KEY\"}'"), 2);
    assert_int_equal(cli(out, sizeof out, "build --bogus --target '{\"kind\":\"keydoor\",\"gate\":\"KEY\"}' --out x"), 2);
    assert_int_equal(pcg_test_count_lines(out), 1);
    assert_int_equal(cli(out, sizeof out, "build --help"), 0);
    assert_non_null(strstr(out, "usage: pcgrllm build"));
}

PCG_TESTS(build, cmocka_unit_test(build_pieces_certified), cmocka_unit_test(build_wrong_claims_caught),
          cmocka_unit_test(build_two_leg_sweep), cmocka_unit_test(build_total_sweep),
          cmocka_unit_test(build_encounter_sets), cmocka_unit_test(build_refusals),
          cmocka_unit_test(build_deterministic), cmocka_unit_test(build_cli))
