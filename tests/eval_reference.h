/* The evaluator's rules spelt out one search per key and per gate, and
 * the random levels the evaluator's tests compare on (tests/test_eval.c,
 * tests/test_eval_score.c). */
#ifndef PCG_TEST_EVAL_REFERENCE_H
#define PCG_TEST_EVAL_REFERENCE_H
#include "harness.h"
#include "eval.h"

/* --- the rules of docs/evaluator.md spelled out step by step, one search per
 * key and per gate, to check the evaluator's shortcuts on many levels --- */

static double ref_encounter(const eval_scenario_t *s, const level_t *l, int *solutions, int met[3])
{
    static short dp[PCG_MAX_CELLS], dk[PCG_MAX_CELLS], dkd[PCG_MAX_CELLS], queue[PCG_MAX_CELLS], path[PCG_MAX_CELLS];
    int h = l->h, w = l->w, cells = h * w;
    int player = lv_first(l, TILE_PLAYER), door = lv_first(l, TILE_DOOR);
    *solutions = 0;
    met[0] = met[1] = met[2] = 0;
    if (player < 0 || door < 0) return 0;
    lv_bfs(l, player, PCG_BLOCK_DEFAULT, -1, dp, queue);
    for (int k = 0; k < cells; k++) {
        if (l->t[k] != TILE_KEY) continue;
        int d1 = dp[k];
        lv_bfs(l, player, PCG_BLOCK_DEFAULT | (1u << TILE_KEY), k, dk, queue);
        lv_bfs(l, k, PCG_BLOCK_DEFAULT, -1, dkd, queue);
        int d1p = dk[k], d2 = dkd[door];
        if (!(d1 > 0 && d2 > 0 && d1p == d1)) continue;
        ++*solutions;
        for (int leg = 0; leg < 2; leg++) {
            int n = leg ? lv_path(l, dkd, door, path) : lv_path(l, dk, k, path);
            assert_int_equal(n, (leg ? d2 : d1) + 1);
            for (int i = 0; i < n; i++)
                for (int dr = -2; dr <= 2; dr++)
                    for (int dc = -2; dc <= 2; dc++) {
                        int t = lv_get(l, path[i] / w + dr, path[i] % w + dc);
                        if (t >= TILE_BAT && t <= TILE_SPIDER) met[t - TILE_BAT] = 1;
                    }
        }
    }
    if (!*solutions) return 0;
    int match = 0;
    for (int e = 0; e < 3; e++) match += met[e] == s->enemies[e];
    return match / 3.0;
}

static double ref_keydoor(const eval_scenario_t *s, const level_t *l, int *solutions)
{
    static short sealed[PCG_MAX_CELLS], open[PCG_MAX_CELLS], dg[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    int h = l->h, w = l->w, cells = h * w;
    const pcg_u32 doors = PCG_BLOCK_DEFAULT | (1u << TILE_DOOR);
    int player = lv_first(l, TILE_PLAYER), treasure = lv_first(l, TILE_TREASURE);
    *solutions = 0;
    if (player < 0 || treasure < 0) return 0;
    lv_bfs(l, player, doors, -1, sealed, queue);
    lv_bfs(l, player, PCG_BLOCK_DEFAULT, -1, open, queue);
    int gates = 0;
    for (int g = 0; g < cells; g++) {
        if (l->t[g] != s->gate || sealed[g] < 0) continue;
        /* a DOOR reachable from G: with doors blocking, a door next to a cell G reaches */
        lv_bfs(l, g, doors, -1, dg, queue);
        int found = 0;
        for (int d = 0; d < cells && !found; d++) {
            if (l->t[d] != TILE_DOOR) continue;
            for (int q = 0; q < 4; q++) {
                int r = d / w + PCG_DR(q), c = d % w + PCG_DC(q);
                if (r >= 0 && c >= 0 && r < h && c < w && dg[r * w + c] >= 0) found = 1;
            }
        }
        gates += found;
    }
    int playable = sealed[treasure] < 0 && gates > 0 && open[treasure] >= 0;
    *solutions = playable ? gates : 0;
    return playable;
}

/* Random levels of many densities, with duplicated and missing fixed tiles
 * now and then. */
static void random_level(unsigned *x, unsigned char *t, int h, int w)
{
#define NEXT() (*x = *x * 1664525u + 1013904223u, *x >> 8)
    unsigned walls = NEXT() % 60, keys = 1 + NEXT() % 12, enemies = 1 + NEXT() % 12, doors = NEXT() % 4;
    for (int i = 0; i < h * w; i++) {
        unsigned v = NEXT() % 100;
        t[i] = v < walls ? TILE_WALL
             : v < walls + keys ? TILE_KEY
             : v < walls + keys + enemies ? (unsigned char)(TILE_BAT + NEXT() % 3)
             : v < walls + keys + enemies + doors ? TILE_DOOR : TILE_EMPTY;
    }
    int fixed[3] = {TILE_PLAYER, TILE_DOOR, TILE_TREASURE};
    for (int f = 0; f < 3; f++) {
        unsigned copies = NEXT() % 16;
        copies = copies == 0 ? 0 : copies < 13 ? 1 : 2;
        for (unsigned c = 0; c < copies; c++) t[NEXT() % (unsigned)(h * w)] = (unsigned char)fixed[f];
    }
    if (NEXT() % 2 && h >= 5 && w >= 5) {
        /* a walled treasure room with one or two doors and maybe a gap */
        int r0 = (int)(NEXT() % (unsigned)(h - 3)), c0 = (int)(NEXT() % (unsigned)(w - 3));
        int r1 = r0 + 2 + (int)(NEXT() % (unsigned)(h - r0 - 2)), c1 = c0 + 2 + (int)(NEXT() % (unsigned)(w - c0 - 2));
        int edge[4 * PCG_MAX_SIDE], n = 0;
        for (int i = 0; i < h * w; i++)
            if (t[i] == TILE_TREASURE) t[i] = TILE_EMPTY;
        for (int r = r0; r <= r1; r++)
            for (int c = c0; c <= c1; c++)
                if (r == r0 || r == r1 || c == c0 || c == c1) {
                    t[r * w + c] = TILE_WALL;
                    edge[n++] = r * w + c;
                }
        int in_r = r0 + 1 + (int)(NEXT() % (unsigned)(r1 - r0 - 1)), in_c = c0 + 1 + (int)(NEXT() % (unsigned)(c1 - c0 - 1));
        t[in_r * w + in_c] = TILE_TREASURE;
        int doors_in_wall = 1 + (int)(NEXT() % 2);
        for (int d = 0; d < doors_in_wall; d++) t[edge[NEXT() % (unsigned)n]] = TILE_DOOR;
        if (NEXT() % 4 == 0) t[edge[NEXT() % (unsigned)n]] = TILE_EMPTY;
    }
#undef NEXT
}

#endif
