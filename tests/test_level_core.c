/* The level core (host/core/level.h): BFS distances, the up/left/right/down path
 * rule of docs/method.md#evaluation, block masks, regions, nearest tiles, counts, any size. */
#include "harness.h"
#include "level.h"
#include <stdio.h>
#include <string.h>

/* A level drawn with the tile characters of `pcgrllm show`:
 * . EMPTY  # WALL  @ PLAYER  b BAT  s SCORPION  x SPIDER  k KEY  D DOOR  T TREASURE */
typedef struct {
    level_t l;
    unsigned char t[PCG_MAX_CELLS];
} grid_t;

static int tile_of(char ch)
{
    const char *chars = " .#@bsxkDT";
    const char *p = strchr(chars, ch);
    assert_non_null(p);
    return (int)(p - chars);
}

static void grid_from(grid_t *g, const char *const *rows)
{
    int h = 0, w = (int)strlen(rows[0]);
    for (; rows[h]; h++) {
        assert_int_equal((int)strlen(rows[h]), w);
        for (int c = 0; c < w; c++) g->t[h * w + c] = (unsigned char)tile_of(rows[h][c]);
    }
    g->l.h = h;
    g->l.w = w;
    g->l.t = g->t;
}
#define GRID(g, ...) grid_from(&(g), (const char *const[]){__VA_ARGS__, NULL})

static int cell(const level_t *l, int r, int c)
{
    return r * l->w + c;
}

/* The path from src to dst as "r,c r,c ..." for readable comparisons. */
static const char *path_str(const level_t *l, int src, int dst, pcg_u32 mask, int allow)
{
    static char buf[4096];
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS], path[PCG_MAX_CELLS];
    lv_bfs(l, src, mask, allow, dist, queue);
    int n = lv_path(l, dist, dst, path);
    int k = 0;
    buf[0] = 0;
    for (int i = 0; i < n; i++)
        k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%d,%d", i ? " " : "", path[i] / l->w, path[i] % l->w);
    return buf;
}

static void core_bfs_distances(void **state)
{
    (void)state;
    grid_t g;
    GRID(g, "..#..",
            ".##..",
            "...#.",
            "#.#..");
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    const level_t *l = &g.l;
    int reached = lv_bfs(l, cell(l, 0, 0), PCG_BLOCK_DEFAULT, -1, dist, queue);
    /* region of (0,0): (0,0) (0,1) (1,0) (2,0) (2,1) (2,2) (3,1) */
    assert_int_equal(reached, 7);
    assert_int_equal(dist[cell(l, 0, 0)], 0);
    assert_int_equal(dist[cell(l, 0, 1)], 1);
    assert_int_equal(dist[cell(l, 1, 0)], 1);
    assert_int_equal(dist[cell(l, 2, 0)], 2);
    assert_int_equal(dist[cell(l, 2, 2)], 4);
    assert_int_equal(dist[cell(l, 3, 1)], 4);
    /* walls and the other region */
    assert_int_equal(dist[cell(l, 0, 2)], -1);
    assert_int_equal(dist[cell(l, 0, 3)], -1);
    assert_int_equal(dist[cell(l, 3, 4)], -1);
    /* the queue holds the reached cells in BFS order: non-decreasing distance */
    for (int i = 1; i < reached; i++) assert_true(dist[queue[i - 1]] <= dist[queue[i]]);
    /* the other region: (0,3) (0,4) (1,3) (1,4) (2,4) (3,3) (3,4) */
    reached = lv_bfs(l, cell(l, 3, 3), PCG_BLOCK_DEFAULT, -1, dist, queue);
    assert_int_equal(reached, 7);
    assert_int_equal(dist[cell(l, 0, 3)], 5);
    assert_int_equal(dist[cell(l, 0, 0)], -1);
    /* the source is entered even when its tile blocks; a bad source reaches nothing */
    reached = lv_bfs(l, cell(l, 0, 2), PCG_BLOCK_DEFAULT, -1, dist, queue);
    assert_int_equal(dist[cell(l, 0, 2)], 0);
    assert_int_equal(dist[cell(l, 0, 3)], 1);
    assert_int_equal(dist[cell(l, 0, 1)], 1);
    assert_int_equal(reached, 15);
    assert_int_equal(lv_bfs(l, -1, PCG_BLOCK_DEFAULT, -1, dist, queue), 0);
    assert_int_equal(lv_bfs(l, 20, PCG_BLOCK_DEFAULT, -1, dist, queue), 0);
    assert_int_equal(dist[0], -1);
}

/* Open 3x3: each of the four preferences decides a path. */
static void core_path_tie_order_open(void **state)
{
    (void)state;
    grid_t g;
    GRID(g, "...", "...", "...");
    const level_t *l = &g.l;
    /* from (2,2) back to (0,0): up is closer and comes first */
    assert_string_equal(path_str(l, cell(l, 0, 0), cell(l, 2, 2), PCG_BLOCK_DEFAULT, -1), "0,0 0,1 0,2 1,2 2,2");
    /* target (0,0), source (2,2): right and down are both closer, right wins */
    assert_string_equal(path_str(l, cell(l, 2, 2), cell(l, 0, 0), PCG_BLOCK_DEFAULT, -1), "2,2 1,2 0,2 0,1 0,0");
    /* target (0,2), source (2,0): left and down are both closer, left wins */
    assert_string_equal(path_str(l, cell(l, 2, 0), cell(l, 0, 2), PCG_BLOCK_DEFAULT, -1), "2,0 1,0 0,0 0,1 0,2");
    /* target (2,0), source (0,2): up and right are both closer, up wins */
    assert_string_equal(path_str(l, cell(l, 0, 2), cell(l, 2, 0), PCG_BLOCK_DEFAULT, -1), "0,2 0,1 0,0 1,0 2,0");
    /* a path to itself is the one cell */
    assert_string_equal(path_str(l, cell(l, 1, 1), cell(l, 1, 1), PCG_BLOCK_DEFAULT, -1), "1,1");
}

/* Opposite neighbours both one step closer: up beats down, left beats right. */
static void core_path_tie_order_around_walls(void **state)
{
    (void)state;
    grid_t g;
    GRID(g, ".......",
            "...#...",
            "...#...",
            "...#...",
            "...#...",
            "...#...",
            ".......");
    const level_t *l = &g.l;
    /* (3,0) -> (3,6): over the top and under the bottom both take 12 steps;
     * from (3,6) up and down are both closer, up wins, then the path hugs
     * the top-left corner (left beats down at (0,2) and (0,1)) */
    assert_string_equal(path_str(l, cell(l, 3, 0), cell(l, 3, 6), PCG_BLOCK_DEFAULT, -1),
                        "3,0 2,0 1,0 0,0 0,1 0,2 0,3 0,4 0,5 0,6 1,6 2,6 3,6");
    grid_t h;
    GRID(h, ".......",
            ".......",
            ".......",
            ".#####.",
            ".......",
            ".......",
            ".......");
    l = &h.l;
    /* (0,3) -> (6,3): around the left or the right end of the wall, 12 steps
     * each; at (4,3) left and right are both closer, left wins */
    assert_string_equal(path_str(l, cell(l, 0, 3), cell(l, 6, 3), PCG_BLOCK_DEFAULT, -1),
                        "0,3 0,2 0,1 0,0 1,0 2,0 3,0 4,0 4,1 4,2 4,3 5,3 6,3");
}

/* An extra blocking tile set with one allowed cell: the key-avoiding search. */
static void core_bfs_block_mask_allow(void **state)
{
    (void)state;
    grid_t g;
    GRID(g, "@.k.k",
            "....#",
            "#####");
    const level_t *l = &g.l;
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    pcg_u32 keys = PCG_BLOCK_DEFAULT | (1u << TILE_KEY);
    /* keys pass normally */
    lv_bfs(l, 0, PCG_BLOCK_DEFAULT, -1, dist, queue);
    assert_int_equal(dist[cell(l, 0, 4)], 4);
    /* keys block: neither key is entered, (0,3) is reached from below */
    lv_bfs(l, 0, keys, -1, dist, queue);
    assert_int_equal(dist[cell(l, 0, 2)], -1);
    assert_int_equal(dist[cell(l, 0, 4)], -1);
    assert_int_equal(dist[cell(l, 0, 3)], 5);
    /* allowing the far key: reached around the near one, 6 steps */
    lv_bfs(l, 0, keys, cell(l, 0, 4), dist, queue);
    assert_int_equal(dist[cell(l, 0, 4)], 6);
    assert_int_equal(dist[cell(l, 0, 2)], -1);
    assert_string_equal(path_str(l, 0, cell(l, 0, 4), keys, cell(l, 0, 4)), "0,0 0,1 1,1 1,2 1,3 0,3 0,4");
    /* allowing the near key: entered and searched through */
    lv_bfs(l, 0, keys, cell(l, 0, 2), dist, queue);
    assert_int_equal(dist[cell(l, 0, 2)], 2);
    assert_int_equal(dist[cell(l, 0, 3)], 3);
    /* DOOR blocking for the key-door scenarios */
    grid_t d;
    GRID(d, "@.D.T");
    short dd[PCG_MAX_CELLS];
    lv_bfs(&d.l, 0, PCG_BLOCK_DEFAULT | (1u << TILE_DOOR), -1, dd, queue);
    assert_int_equal(dd[4], -1);
    assert_int_equal(dd[2], -1);
    lv_bfs(&d.l, 0, PCG_BLOCK_DEFAULT, -1, dd, queue);
    assert_int_equal(dd[4], 4);
}

static void core_path_unreachable(void **state)
{
    (void)state;
    grid_t g;
    GRID(g, ".#.", ".#.");
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS], path[PCG_MAX_CELLS];
    lv_bfs(&g.l, 0, PCG_BLOCK_DEFAULT, -1, dist, queue);
    assert_int_equal(lv_path(&g.l, dist, 2, path), 0);
    assert_int_equal(lv_path(&g.l, dist, -1, path), 0);
    assert_int_equal(lv_path(&g.l, dist, 6, path), 0);
    assert_int_equal(lv_path(&g.l, dist, 3, path), 2);
    assert_int_equal(lv_path_length(&g.l, 0, 0, 0, 2), -1);
    assert_int_equal(lv_path_length(&g.l, 0, 0, 1, 0), 1);
    assert_int_equal(lv_path_length(&g.l, 0, 0, 0, 0), 0);
    /* a wall or an outside cell at either end */
    assert_int_equal(lv_path_length(&g.l, 0, 1, 0, 0), -1);
    assert_int_equal(lv_path_length(&g.l, 0, 0, 1, 1), -1);
    assert_int_equal(lv_path_length(&g.l, 0, 0, 2, 0), -1);
    assert_int_equal(lv_path_length(&g.l, -1, 0, 0, 0), -1);
}

static void core_nearest(void **state)
{
    (void)state;
    grid_t g;
    GRID(g, "@..#k",
            ".#.#.",
            "k#...",
            "..b..");
    const level_t *l = &g.l;
    /* straight-line (0,4) is close but behind the wall: BFS steps count */
    assert_int_equal(lv_nearest(l, 0, 0, TILE_KEY), 2);
    assert_int_equal(lv_nearest(l, 0, 2, TILE_KEY), 4);
    assert_int_equal(lv_nearest(l, 0, 4, TILE_KEY), 0);
    assert_int_equal(lv_nearest(l, 0, 0, TILE_BAT), 5);
    assert_int_equal(lv_nearest(l, 0, 0, TILE_DOOR), -1);
    assert_int_equal(lv_nearest(l, 0, 3, TILE_KEY), -1); /* start on a wall */
    assert_int_equal(lv_nearest(l, 9, 0, TILE_KEY), -1); /* outside */
    grid_t s;
    GRID(s, "@#k");
    assert_int_equal(lv_nearest(&s.l, 0, 0, TILE_KEY), -1);
}

static void core_regions(void **state)
{
    (void)state;
    grid_t g;
    GRID(g, "..#..",
            "###.#",
            ".#...",
            ".#.##",
            "##.#.");
    /* {(0,0),(0,1)}, {(0,3),(0,4),(1,3),(2,2..4),(3,2),(4,2)}, {(2,0),(3,0)}, {(4,4)} */
    assert_int_equal(lv_regions(&g.l), 4);
    grid_t w;
    GRID(w, "###", "###");
    assert_int_equal(lv_regions(&w.l), 0);
    grid_t o;
    GRID(o, "@bsxkDT.");
    assert_int_equal(lv_regions(&o.l), 1); /* every tile but WALL passes */
    grid_t c;
    GRID(c, ".#.#.#.");
    assert_int_equal(lv_regions(&c.l), 4);
}

static void core_counts_and_positions(void **state)
{
    (void)state;
    grid_t g;
    GRID(g, "k.@",
            "#k.",
            "..k");
    const level_t *l = &g.l;
    int rows[8], cols[8];
    assert_int_equal(lv_count(l, TILE_KEY), 3);
    assert_int_equal(lv_count(l, TILE_EMPTY), 4);
    assert_int_equal(lv_count(l, TILE_DOOR), 0);
    assert_int_equal(lv_find(l, TILE_KEY, rows, cols, 8), 3);
    assert_int_equal(rows[0], 0), assert_int_equal(cols[0], 0);
    assert_int_equal(rows[1], 1), assert_int_equal(cols[1], 1);
    assert_int_equal(rows[2], 2), assert_int_equal(cols[2], 2);
    /* max caps the writes, not the count */
    rows[1] = cols[1] = 99;
    assert_int_equal(lv_find(l, TILE_KEY, rows, cols, 1), 3);
    assert_int_equal(rows[1], 99);
    assert_int_equal(lv_first(l, TILE_KEY), 0);
    assert_int_equal(lv_first(l, TILE_PLAYER), 2);
    assert_int_equal(lv_first(l, TILE_WALL), 3);
    assert_int_equal(lv_first(l, TILE_TREASURE), -1);
    /* outside the map reads as BORDER */
    assert_int_equal(lv_get(l, -1, 0), TILE_BORDER);
    assert_int_equal(lv_get(l, 0, 3), TILE_BORDER);
    assert_int_equal(lv_get(l, 3, 0), TILE_BORDER);
    assert_int_equal(lv_get(l, 2, 2), TILE_KEY);
}

/* Sizes other than 16: thin, tall, and the largest supported side. */
static void core_non_16_sizes(void **state)
{
    (void)state;
    grid_t row;
    GRID(row, "@..#...k");
    assert_int_equal(row.l.h, 1);
    assert_int_equal(lv_path_length(&row.l, 0, 0, 0, 2), 2);
    assert_int_equal(lv_path_length(&row.l, 0, 0, 0, 7), -1);
    assert_int_equal(lv_regions(&row.l), 2);
    grid_t col;
    GRID(col, ".", ".", "#", ".", ".", ".");
    assert_int_equal(lv_path_length(&col.l, 3, 0, 5, 0), 2);
    assert_int_equal(lv_path_length(&col.l, 0, 0, 5, 0), -1);
    assert_int_equal(lv_regions(&col.l), 2);
    /* a 9x2 level: the path rule at width 2 */
    grid_t n;
    GRID(n, "..", "..", "#.", "..", ".#", "..", "..", ".#", "..");
    assert_string_equal(path_str(&n.l, 0, cell(&n.l, 8, 1), PCG_BLOCK_DEFAULT, -1),
                        "0,0 0,1 1,1 2,1 3,1 3,0 4,0 5,0 6,0 7,0 8,0 8,1");

    static grid_t big;
    big.l.h = big.l.w = PCG_MAX_SIDE;
    big.l.t = big.t;
    memset(big.t, TILE_EMPTY, PCG_MAX_CELLS);
    int last = PCG_MAX_CELLS - 1;
    assert_int_equal(lv_path_length(&big.l, 0, 0, PCG_MAX_SIDE - 1, PCG_MAX_SIDE - 1), 2 * (PCG_MAX_SIDE - 1));
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS], path[PCG_MAX_CELLS];
    assert_int_equal(lv_bfs(&big.l, 0, PCG_BLOCK_DEFAULT, -1, dist, queue), PCG_MAX_CELLS);
    int len = lv_path(&big.l, dist, last, path);
    assert_int_equal(len, 2 * PCG_MAX_SIDE - 1);
    /* up first from the far corner: the whole last column, then the top row */
    assert_int_equal(path[PCG_MAX_SIDE - 1], PCG_MAX_SIDE - 1);
    assert_int_equal(path[0], 0);
    assert_int_equal(path[len - 1], last);
    /* a serpentine of the largest side: every step of a long path counts */
    for (int r = 1; r < PCG_MAX_SIDE; r += 2)
        for (int c = 0; c < PCG_MAX_SIDE; c++)
            if (c != ((r / 2) % 2 ? 0 : PCG_MAX_SIDE - 1)) big.t[r * PCG_MAX_SIDE + c] = TILE_WALL;
    /* rows 0, 2, ..., side-2 are open, each crossed end to end (side-1
     * steps) and joined by two steps through the gap of the row between */
    int open_rows = PCG_MAX_SIDE / 2, end_row = PCG_MAX_SIDE - 2;
    int end_col = (end_row / 2) % 2 ? 0 : PCG_MAX_SIDE - 1;
    int expect = open_rows * (PCG_MAX_SIDE - 1) + (open_rows - 1) * 2;
    assert_int_equal(lv_path_length(&big.l, 0, 0, end_row, end_col), expect);
    assert_int_equal(lv_path_length(&big.l, 0, 0, PCG_MAX_SIDE - 1, PCG_MAX_SIDE - 1), -1); /* a wall */
    assert_int_equal(lv_regions(&big.l), 1);
}

PCG_TESTS(core, cmocka_unit_test(core_bfs_distances), cmocka_unit_test(core_path_tie_order_open),
          cmocka_unit_test(core_path_tie_order_around_walls), cmocka_unit_test(core_bfs_block_mask_allow),
          cmocka_unit_test(core_path_unreachable), cmocka_unit_test(core_nearest), cmocka_unit_test(core_regions),
          cmocka_unit_test(core_counts_and_positions), cmocka_unit_test(core_non_16_sizes))
