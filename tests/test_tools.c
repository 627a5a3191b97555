/* Level tools and tool calls (host/levelgen/tools.h): each tool on a small
 * level, and every refusal with its reason. */
#include "harness.h"
#include "levelio.h"
#include "tools.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Apply reply to g's level; the result in out/tiles.  Returns tools_apply's code. */
static int apply(const pcg_test_grid *g, const char *reply, level_t *out, unsigned char *tiles, tools_result *res)
{
    char err[300];
    return tools_apply(reply, &g->l, out, tiles, 7, res, err, sizeof err);
}

static int open_regions(const level_t *l)
{
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    unsigned char seen[PCG_MAX_CELLS] = {0};
    int n = 0;
    for (int i = 0; i < l->h * l->w; i++) {
        if (l->t[i] == TILE_WALL || seen[i]) continue;
        n++;
        lv_bfs(l, i, PCG_BLOCK_DEFAULT, -1, dist, queue);
        for (int j = 0; j < l->h * l->w; j++)
            if (dist[j] >= 0) seen[j] = 1;
    }
    return n;
}

static void tools_primitives(void **state)
{
    (void)state;
    pcg_test_grid g;
    PCG_GRID(g, "@.....", "......", "......", "......", ".....D");
    unsigned char before[PCG_MAX_CELLS];
    memcpy(before, g.t, 30);
    level_t out;
    unsigned char tiles[PCG_MAX_CELLS];
    tools_result res;
    const char *reply = "Here are my edits:\n```json\n[{\"tool\":\"set\",\"row\":0,\"col\":3,\"tile\":\"KEY\"},"
                        "{\"tool\":\"line\",\"row\":1,\"col\":1,\"row2\":1,\"col2\":4,\"tile\":\"wall\"},"
                        "{\"tool\":\"rect\",\"row\":3,\"col\":0,\"height\":2,\"width\":2,\"tile\":4}]\n```";
    assert_int_equal(apply(&g, reply, &out, tiles, &res), 0);
    assert_int_equal(res.n_calls, 3);
    assert_int_equal(res.applied, 3);
    assert_int_equal(res.n_refused, 0);
    assert_int_equal(lv_get(&out, 0, 3), TILE_KEY);
    for (int c = 1; c <= 4; c++) assert_int_equal(lv_get(&out, 1, c), TILE_WALL);
    assert_int_equal(lv_get(&out, 4, 1), TILE_BAT);
    assert_int_equal(res.changed, 1 + 4 + 4);
    assert_memory_equal(g.t, before, 30); /* the input is never written */
}

static void tools_room_and_maze(void **state)
{
    (void)state;
    pcg_test_grid g;
    PCG_GRID(g, "@#######", "########", "########", "###k####", "########", "########", "########", "#######D");
    level_t out;
    unsigned char tiles[PCG_MAX_CELLS];
    tools_result res;
    assert_int_equal(apply(&g, "[{\"tool\":\"room\",\"row\":1,\"col\":1,\"height\":5,\"width\":5}]", &out, tiles, &res), 0);
    assert_int_equal(res.applied, 1);
    assert_int_equal(lv_get(&out, 2, 2), TILE_EMPTY); /* inside */
    assert_int_equal(lv_get(&out, 1, 1), TILE_WALL);  /* the ring's corner */
    assert_int_equal(lv_get(&out, 1, 3), TILE_EMPTY); /* the gap in the middle of a side */
    assert_int_equal(lv_get(&out, 3, 3), TILE_KEY);   /* the key stays */
    assert_int_equal(lv_get(&out, 0, 0), TILE_PLAYER);
    /* a maze: open cells of its lattice joined into one region, entities kept */
    PCG_GRID(g, "@.........", "..........", "..........", "..........", "..........", "...k......", "..........",
             "..........", ".........D");
    assert_int_equal(apply(&g, "[{\"tool\":\"maze\",\"row\":0,\"col\":0,\"height\":9,\"width\":9,\"seed\":3}]", &out,
                           tiles, &res), 0);
    assert_int_equal(res.applied, 1);
    assert_int_equal(lv_get(&out, 0, 0), TILE_PLAYER);
    assert_int_equal(lv_get(&out, 5, 3), TILE_KEY);
    assert_int_equal(lv_get(&out, 1, 1), TILE_EMPTY);
    assert_int_equal(lv_get(&out, 2, 2), TILE_WALL); /* between lattice cells diagonally: always wall */
    int walls = lv_count(&out, TILE_WALL);
    assert_true(walls > 30);
    /* every lattice cell reached from (1,1) through the maze */
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    lv_bfs(&out, 1 * out.w + 1, PCG_BLOCK_DEFAULT, -1, dist, queue);
    for (int r = 1; r < 9; r += 2)
        for (int c = 1; c < 9; c += 2) assert_true(dist[r * out.w + c] >= 0);
    /* the same seed gives the same maze */
    level_t again;
    unsigned char tiles2[PCG_MAX_CELLS];
    apply(&g, "[{\"tool\":\"maze\",\"row\":0,\"col\":0,\"height\":9,\"width\":9,\"seed\":3}]", &again, tiles2, &res);
    assert_memory_equal(tiles, tiles2, 90);
}

static void tools_cave_automata_repair(void **state)
{
    (void)state;
    pcg_test_grid g;
    PCG_GRID(g, "@#########", "##########", "##########", "##########", "#########D");
    level_t out;
    unsigned char tiles[PCG_MAX_CELLS];
    tools_result res;
    assert_int_equal(apply(&g, "[{\"tool\":\"cave\",\"row\":2,\"col\":5,\"steps\":12}]", &out, tiles, &res), 0);
    assert_int_equal(res.applied, 1);
    assert_int_equal(res.changed, 12); /* exactly the bounded number of walls carved */
    assert_int_equal(lv_get(&out, 2, 5), TILE_EMPTY);
    /* the carved cells form one tunnel */
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    assert_int_equal(lv_count(&out, TILE_EMPTY), 12);
    assert_true(lv_bfs(&out, 2 * out.w + 5, PCG_BLOCK_DEFAULT, -1, dist, queue) >= 12);
    /* automata: a lone wall in open ground goes, a lone hole in rock fills */
    PCG_GRID(g, "@.....####", "......####", "..#...#.##", "......####", ".....D####");
    assert_int_equal(apply(&g, "[{\"tool\":\"automata\",\"row\":0,\"col\":0,\"height\":5,\"width\":10,\"steps\":1}]",
                           &out, tiles, &res), 0);
    assert_int_equal(lv_get(&out, 2, 2), TILE_EMPTY);
    assert_int_equal(lv_get(&out, 2, 7), TILE_WALL);
    assert_int_equal(lv_get(&out, 4, 5), TILE_DOOR);
    /* repair joins three regions to the player's with the fewest walls */
    PCG_GRID(g, "@.#..#k", "..#..##", "###.###", "b.#..#D");
    assert_int_equal(open_regions(&g.l), 5);
    assert_int_equal(apply(&g, "[{\"tool\":\"repair\"}]", &out, tiles, &res), 0);
    assert_int_equal(open_regions(&out), 1);
    assert_int_equal(res.changed, 4);
    assert_int_equal(lv_count(&out, TILE_KEY), 1);
    assert_int_equal(lv_count(&out, TILE_BAT), 1);
}

/* The first refusal of a one-call reply contains want. */
static void refused_with(const pcg_test_grid *g, const char *reply, const char *want)
{
    level_t out;
    unsigned char tiles[PCG_MAX_CELLS];
    tools_result res;
    assert_int_equal(apply(g, reply, &out, tiles, &res), 0);
    if (res.n_refused < 1 || !strstr(res.refused[0].reason, want))
        fail_msg("%s: got '%s', wanted '%s'", reply, res.n_refused ? res.refused[0].reason : "(none)", want);
    assert_int_equal(res.applied, 0);
    assert_int_equal(res.changed, 0);
}

static void tools_refusals(void **state)
{
    (void)state;
    pcg_test_grid g;
    PCG_GRID(g, "@.....", "......", "......", "......", ".....D");
    static const char *const cases[][2] = {
        {"[{\"tool\":\"set\",\"row\":17,\"col\":0,\"tile\":\"WALL\"}]", "call 1: row 17 is outside 0..4"},
        {"[{\"tool\":\"set\",\"row\":1,\"col\":-1,\"tile\":\"WALL\"}]", "call 1: col -1 is outside 0..5"},
        {"[{\"tool\":\"teleport\"}]", "call 1: unknown tool 'teleport' (set, line, rect, room, cave, automata, maze, repair)"},
        {"[{\"tool\":\"set\",\"row\":0,\"col\":0,\"tile\":\"WALL\"}]", "call 1: would overwrite the PLAYER at (0,0)"},
        {"[{\"tool\":\"rect\",\"row\":3,\"col\":4,\"height\":2,\"width\":2,\"tile\":\"EMPTY\"}]", "would overwrite the DOOR at (4,5)"},
        {"[{\"tool\":\"set\",\"row\":1,\"col\":1,\"tile\":\"PLAYER\"}]", "tile PLAYER cannot be written"},
        {"[{\"tool\":\"set\",\"row\":1,\"col\":1,\"tile\":\"LAVA\"}]", "unknown tile"},
        {"[{\"tool\":\"set\",\"row\":1,\"col\":1}]", "set needs 'tile' (row, col, tile)"},
        {"[{\"tool\":\"set\",\"row\":\"1\",\"col\":1,\"tile\":\"WALL\"}]", "'row' must be an integer"},
        {"[{\"tool\":\"set\",\"row\":1,\"col\":1,\"tile\":\"WALL\",\"x\":2}]", "unknown field 'x' for set (row, col, tile)"},
        {"[{\"tool\":\"line\",\"row\":1,\"col\":1,\"row2\":2,\"col2\":2,\"tile\":\"WALL\"}]", "is neither"},
        {"[{\"tool\":\"rect\",\"row\":3,\"col\":0,\"height\":4,\"width\":2,\"tile\":\"WALL\"}]", "rows 3..6 reach outside 0..4"},
        {"[{\"tool\":\"room\",\"row\":0,\"col\":0,\"height\":2,\"width\":4}]", "at least 3"},
        {"[{\"tool\":\"cave\",\"row\":1,\"col\":1,\"steps\":100000}]", "steps 100000 is outside 1..256"},
        {"[{\"tool\":\"automata\",\"row\":0,\"col\":0,\"height\":2,\"width\":2,\"steps\":0}]", "steps 0 is outside 1..8"},
        {"[7]", "call 1: not an object"},
        {"[{\"row\":1}]", "no \"tool\" name"},
        {"[{\"tool\":\"maze\",\"row\":0,\"col\":0,\"height\":3,\"width\":3,\"seed\":-4}]", "'seed'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) refused_with(&g, cases[i][0], cases[i][1]);

    /* one by one: the good calls run, each bad one has its own reason */
    level_t out;
    unsigned char tiles[PCG_MAX_CELLS];
    tools_result res;
    assert_int_equal(apply(&g,
                           "[{\"tool\":\"set\",\"row\":1,\"col\":1,\"tile\":\"WALL\"},{\"tool\":\"fly\"},"
                           "{\"tool\":\"set\",\"row\":9,\"col\":1,\"tile\":\"WALL\"},"
                           "{\"tool\":\"set\",\"row\":2,\"col\":2,\"tile\":\"KEY\"}]",
                           &out, tiles, &res),
                     0);
    assert_int_equal(res.applied, 2);
    assert_int_equal(res.n_refused, 2);
    assert_int_equal(res.refused[0].call, 2);
    assert_int_equal(res.refused[1].call, 3);
    assert_non_null(strstr(res.refused[1].reason, "call 3: row 9"));
    assert_int_equal(res.changed, 2);

    /* replies that are not a list of calls */
    char err[300];
    assert_int_equal(tools_apply("I would add a wall.", &g.l, &out, tiles, 1, &res, err, sizeof err), -1);
    assert_non_null(strstr(err, "no JSON list"));
    assert_int_equal(tools_apply("[{\"tool\":\"set\",\"row\":1", &g.l, &out, tiles, 1, &res, err, sizeof err), -1);
    assert_non_null(strstr(err, "cut off"));
    assert_int_equal(tools_apply("[{\"tool\":\"set\" \"row\":1}]", &g.l, &out, tiles, 1, &res, err, sizeof err), -1);
    assert_non_null(strstr(err, "not valid JSON"));
    char *big = malloc(TOOLS_MAX_REPLY + 10);
    memset(big, ' ', TOOLS_MAX_REPLY + 9);
    big[0] = '[';
    big[TOOLS_MAX_REPLY + 8] = ']';
    big[TOOLS_MAX_REPLY + 9] = 0;
    assert_int_equal(tools_apply(big, &g.l, &out, tiles, 1, &res, err, sizeof err), -1);
    assert_non_null(strstr(err, "byte limit"));
    free(big);
}

static void tools_limits_and_recovery(void **state)
{
    (void)state;
    pcg_test_grid g;
    PCG_GRID(g, "@.....", "......", "......", "......", ".....D");
    /* 10,000 calls: 64 run, the rest are one refusal */
    const char *one = "{\"tool\":\"set\",\"row\":2,\"col\":2,\"tile\":\"WALL\"},";
    size_t n = 10000, len = strlen(one);
    char *reply = malloc(n * len + 3);
    reply[0] = '[';
    for (size_t i = 0; i < n; i++) memcpy(reply + 1 + i * len, one, len);
    reply[n * len] = ']';
    reply[n * len + 1] = 0;
    level_t out;
    unsigned char tiles[PCG_MAX_CELLS];
    tools_result res;
    json_error_t je;
    json_t *list = json_loads(reply, 0, &je);
    assert_non_null(list);
    tools_apply_list(list, &g.l, &out, tiles, 1, &res);
    json_decref(list);
    free(reply);
    assert_int_equal(res.n_calls, 10000);
    assert_int_equal(res.applied, TOOLS_MAX_CALLS);
    assert_int_equal(res.n_refused, 1);
    assert_non_null(strstr(res.refused[0].reason, "calls 65..10000: refused, a reply holds at most 64 calls"));

    /* a cut list keeps its complete calls */
    int kept;
    char *fixed = tools_recover("[{\"tool\":\"set\",\"row\":1,\"col\":1,\"tile\":\"WALL\"}, {\"tool\":\"set\",\"row\":2,"
                                "\"col\":{\"x\":1},\"tile\":\"]\"}, {\"tool\":\"rect\",\"row\":3,\"co",
                                &kept);
    assert_non_null(fixed);
    assert_int_equal(kept, 2);
    char err[200];
    assert_int_equal(tools_apply(fixed, &g.l, &out, tiles, 1, &res, err, sizeof err), 0);
    assert_int_equal(res.n_calls, 2);
    assert_int_equal(res.applied, 1);
    free(fixed);
    assert_null(tools_recover("[{\"tool\":\"set\",\"ro", &kept));
    assert_int_equal(kept, 0);
    assert_null(tools_recover("no list here", &kept));
}

PCG_TESTS(tools, cmocka_unit_test(tools_primitives), cmocka_unit_test(tools_room_and_maze),
          cmocka_unit_test(tools_cave_automata_repair), cmocka_unit_test(tools_refusals),
          cmocka_unit_test(tools_limits_and_recovery))
