/* Level core: tiles, the level view, and the path and count helpers shared by
 * the environment, the evaluator, the reward API and the CUDA kernels.
 * Plain C, no allocation, no libc: every function is PCG_HD. */
#ifndef PCG_LEVEL_H
#define PCG_LEVEL_H
#include "hd.h"

/* Tile ids (docs/method.md#environment).  The reward API names them without the prefix. */
enum {
    TILE_BORDER = 0,
    TILE_EMPTY = 1,
    TILE_WALL = 2,
    TILE_PLAYER = 3,
    TILE_BAT = 4,
    TILE_SCORPION = 5,
    TILE_SPIDER = 6,
    TILE_KEY = 7,
    TILE_DOOR = 8,
    TILE_TREASURE = 9,
    N_TILES = 10
};

/* Largest supported side.  Map sizes are run-time parameters up to this. */
#ifndef PCG_MAX_SIDE
#define PCG_MAX_SIDE 64
#endif
#define PCG_MAX_CELLS (PCG_MAX_SIDE * PCG_MAX_SIDE)
#define PCG_DEFAULT_SIDE 16
#include "bitrows.h" /* after PCG_MAX_SIDE: its row arrays take that size */

/* Tiles that block movement: WALL and BORDER. */
#define PCG_BLOCK_DEFAULT ((1u << TILE_WALL) | (1u << TILE_BORDER))

/* A view of one level: h rows of w tile ids, row-major, owned elsewhere. */
typedef struct level {
    int h, w;
    unsigned char *t;
} level_t;

PCG_HD int lv_in(const level_t *l, int r, int c)
{
    return r >= 0 && c >= 0 && r < l->h && c < l->w;
}

PCG_HD int lv_get(const level_t *l, int r, int c)
{
    return lv_in(l, r, c) ? l->t[r * l->w + c] : TILE_BORDER;
}

PCG_HD int lv_count(const level_t *l, int tile)
{
    return br_count(l->t, l->h * l->w, tile);
}

/* The cells of t[i..i+n) (n <= 8) that hold tile, one top bit per byte.
 * Whole words take the plain load; only the level's last word is cut. */
PCG_HD pcg_u64 lv_hits(const unsigned char *t, int i, int n, int tile)
{
    return n >= 8 ? br_bytes_eq(br_load(t + i, 8), (unsigned)tile) : br_bytes_eq_at(t + i, n, (unsigned)tile);
}

/* Row-major positions of a tile: returns the total count, fills up to max.
 * Eight cells are tested at once; once max are kept the rest are counted. */
PCG_HD int lv_find(const level_t *l, int tile, int *rows, int *cols, int max)
{
    int n = 0, cells = l->h * l->w, i = 0;
    if (tile < 0 || tile > 255) return 0; /* no byte holds it */
    for (; i < cells && n < max; i += 8)
        for (pcg_u64 hit = lv_hits(l->t, i, cells - i, tile); hit; hit &= hit - 1, n++) {
            int cell = i + br_low_bit(hit) / 8;
            if (n < max) {
                if (rows) rows[n] = cell / l->w;
                if (cols) cols[n] = cell % l->w;
            }
        }
    return n + (i < cells ? br_count(l->t + i, cells - i, tile) : 0);
}

/* Cell index of the first tile in row-major order, -1 if none. */
PCG_HD int lv_first(const level_t *l, int tile)
{
    int cells = l->h * l->w;
    if (tile < 0 || tile > 255) return -1;
    for (int i = 0; i < cells; i += 8) {
        pcg_u64 hit = lv_hits(l->t, i, cells - i, tile);
        if (hit) return i + br_low_bit(hit) / 8;
    }
    return -1;
}

/* 1 if tile's bit is set in a tile mask (bit t = 1u << t); ids past 31 have none. */
PCG_HD int lv_tile_in(pcg_u32 mask, int tile)
{
    return tile >= 0 && tile < 32 && ((mask >> tile) & 1u);
}

/* 1 if tile blocks a search whose block mask is block_mask: its bit is
 * set, or it is an id past 31, which no mask names (as the bit rows read
 * them, whose open set ~block_mask holds no such id). */
PCG_HD int lv_blocks(pcg_u32 block_mask, int tile)
{
    return !lv_tile_in(~block_mask, tile);
}

/* Neighbour order of the evaluator's paths (docs/evaluator.md#rules): up, left, right, down. */
#define PCG_DR(k) ((k) == 0 ? -1 : (k) == 3 ? 1 : 0)
#define PCG_DC(k) ((k) == 1 ? -1 : (k) == 2 ? 1 : 0)

/* 4-connected BFS from cell src.  A cell is blocked when its tile blocks
 * with block_mask (lv_blocks), except cell `allow` (pass -1 for none); the source is
 * always entered.  dist[i] = steps from src, -1 if unreachable.  queue is
 * scratch of h*w entries.  Returns the number of cells reached. */
PCG_HD int lv_bfs(const level_t *l, int src, pcg_u32 block_mask, int allow, short *dist, short *queue)
{
    int h = l->h, w = l->w, cells = h * w;
    for (int i = 0; i < cells; i++) dist[i] = -1;
    if (src < 0 || src >= cells) return 0;
    int head = 0, tail = 0;
    dist[src] = 0;
    queue[tail++] = (short)src;
    while (head < tail) {
        int cur = queue[head++];
        int r = cur / w, c = cur % w;
        for (int k = 0; k < 4; k++) {
            int nr = r + PCG_DR(k), nc = c + PCG_DC(k);
            if (nr < 0 || nc < 0 || nr >= h || nc >= w) continue;
            int n = nr * w + nc;
            if (dist[n] >= 0) continue;
            if (n != allow && lv_blocks(block_mask, l->t[n])) continue;
            dist[n] = (short)(dist[cur] + 1);
            queue[tail++] = (short)n;
        }
    }
    return tail;
}

/* Rebuild the path from dist (a BFS from the source) back from target:
 * at each step the first neighbour one step closer, in the order up, left,
 * right, down.  Writes cells target..source reversed into out so that out[0]
 * is the source and out[len-1] the target; returns len = dist+1, or 0 if the
 * target is unreachable. */
PCG_HD int lv_path(const level_t *l, const short *dist, int target, short *out)
{
    int w = l->w, h = l->h;
    if (target < 0 || target >= h * w || dist[target] < 0) return 0;
    int len = dist[target] + 1, cur = target, r = target / w, c = target % w;
    out[len - 1] = (short)cur;
    for (int i = len - 2; i >= 0; i--) {
        int d = dist[cur];
        for (int k = 0; k < 4; k++) {
            int nr = r + PCG_DR(k), nc = c + PCG_DC(k);
            if (nr < 0 || nc < 0 || nr >= h || nc >= w || dist[nr * w + nc] != d - 1) continue;
            r = nr, c = nc; /* always found: BFS distances are consistent */
            break;
        }
        cur = r * w + c;
        out[i] = (short)cur;
    }
    return len;
}

/* ---- The queue BFS's answers: the reference the bit-row versions below
 * match (tests/test_bitrows.c), and their answer for levels past
 * PCG_MAX_SIDE. ---- */

/* lv_path_through's answer for src -> dst, both ends passable. */
PCG_HD int lv_path_through_queue(const level_t *l, int src, int dst, pcg_u32 passable)
{
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    lv_bfs(l, src, ~passable, -1, dist, queue);
    return dist[dst];
}

/* lv_nearest's answer from cell src, a passable cell. */
PCG_HD int lv_nearest_queue(const level_t *l, int src, int tile)
{
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    int n = lv_bfs(l, src, PCG_BLOCK_DEFAULT, -1, dist, queue);
    for (int i = 0; i < n; i++) /* queue is in BFS order: the first hit is nearest */
        if (l->t[queue[i]] == tile) return dist[queue[i]];
    return -1;
}

/* lv_regions's answer. */
PCG_HD int lv_regions_queue(const level_t *l)
{
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    unsigned char seen[PCG_MAX_CELLS];
    int cells = l->h * l->w, regions = 0;
    for (int i = 0; i < cells; i++) seen[i] = 0;
    for (int i = 0; i < cells; i++) {
        if (seen[i] || lv_blocks(PCG_BLOCK_DEFAULT, l->t[i])) continue;
        int n = lv_bfs(l, i, PCG_BLOCK_DEFAULT, -1, dist, queue);
        for (int j = 0; j < n; j++) seen[queue[j]] = 1;
        regions++;
    }
    return regions;
}

/* ---- The searches on bit rows (bitrows.h) ---- */

/* 1 when the bit-row searches hold the level (every side up to
 * PCG_MAX_SIDE); a larger side with few enough cells takes the queue BFS. */
PCG_HD int lv_rows_fit(const level_t *l)
{
#if defined(__CUDA_ARCH__)
    /* kernels take levels of at most PCG_MAX_SIDE a side (reward_jit.h):
     * without the queue BFS their frames drop its arrays */
    return 1;
#else
    return l->h <= PCG_MAX_SIDE && l->w <= PCG_MAX_SIDE;
#endif
}

/* lv_bfs's dist by bit rows: the same value for every cell, but no queue
 * order (queue is scratch for levels past PCG_MAX_SIDE only).  stop >= 0
 * ends the search once cell stop is reached, the farther cells left at -1
 * (enough for lv_path to stop).  Returns the number of cells reached. */
PCG_HD int lv_bfs_rows(const level_t *l, int src, pcg_u32 block_mask, int allow, int stop, short *dist, short *queue)
{
    br_mask pass;
    if (!lv_rows_fit(l)) return lv_bfs(l, src, block_mask, allow, dist, queue);
    br_mask_init(&pass, l->t, l->h, l->w, ~block_mask, allow);
    return br_bfs(&pass, src, stop, 0, dist);
}

/* lv_bfs_rows's dist (no stop, no allowed cell) read only at the cells
 * holding a tile of keep (bit t = tile t): the other cells may hold -1
 * where they are reached.  Returns the number of cells written. */
PCG_HD int lv_bfs_rows_at(const level_t *l, int src, pcg_u32 block_mask, pcg_u32 keep, short *dist, short *queue)
{
    br_mask pass, at;
    if (!lv_rows_fit(l)) return lv_bfs(l, src, block_mask, -1, dist, queue);
    br_mask_init(&pass, l->t, l->h, l->w, ~block_mask, -1);
    br_mask_init(&at, l->t, l->h, l->w, keep, -1);
    return br_bfs(&pass, src, -1, &at, dist);
}

/* Steps of a shortest 4-connected path between two cells through the
 * cells whose tile's bit is set in passable (bit t = 1u << t); 0 from a
 * passable cell to itself, -1 if there is none or if either end is outside
 * or not passable. */
PCG_HD int lv_path_through(const level_t *l, int r0, int c0, int r1, int c1, pcg_u32 passable)
{
    if (!lv_in(l, r0, c0) || !lv_in(l, r1, c1)) return -1;
    int s = r0 * l->w + c0, t = r1 * l->w + c1;
    if (!lv_tile_in(passable, l->t[s]) || !lv_tile_in(passable, l->t[t])) return -1;
    if (!lv_rows_fit(l)) return lv_path_through_queue(l, s, t, passable);
    br_mask pass;
    br_mask_init(&pass, l->t, l->h, l->w, passable, -1);
    return br_distance(&pass, s, t);
}

/* Steps of a shortest 4-connected path (WALL/BORDER blocking) between two
 * cells, -1 if none or if either end is outside or a wall. */
PCG_HD int lv_path_length(const level_t *l, int r0, int c0, int r1, int c1)
{
    return lv_path_through(l, r0, c0, r1, c1, ~PCG_BLOCK_DEFAULT);
}

/* BFS steps from (r,c) to the nearest cell holding tile, -1 if none is
 * reachable or the start is outside or a wall. */
PCG_HD int lv_nearest(const level_t *l, int r, int c, int tile)
{
    if (!lv_in(l, r, c) || lv_blocks(PCG_BLOCK_DEFAULT, l->t[r * l->w + c])) return -1;
    if (!lv_rows_fit(l)) return lv_nearest_queue(l, r * l->w + c, tile);
    br_mask pass, target;
    br_mask_init(&pass, l->t, l->h, l->w, ~PCG_BLOCK_DEFAULT, -1);
    br_mask_tile(&target, l->t, l->h, l->w, tile);
    return br_nearest(&pass, r * l->w + c, &target);
}

/* Number of 4-connected regions of passable (non-wall) cells. */
PCG_HD int lv_regions(const level_t *l)
{
    if (!lv_rows_fit(l)) return lv_regions_queue(l);
    br_mask pass;
    if (l->h <= 0 || l->w <= 0) return 0;
    br_mask_init(&pass, l->t, l->h, l->w, ~PCG_BLOCK_DEFAULT, -1);
    return br_regions(&pass);
}

/* ---- A reward call's kept searches (bitrows.h's br_kept) ----
 *
 * The device's reward kernel keeps one search per level it passes to
 * compute_reward, for the call; so do the counting helpers that model it
 * (reward_jit/api_count.c).  The levels a reward is given are read-only
 * (reward_jit/fault.c refuses a reward that writes into one), so a kept
 * search's answers hold for the whole call.  An entry serves a level
 * view with its tiles, height and width; a question with another source
 * or passable set starts the entry's search afresh. */
typedef struct {
    const unsigned char *t;
    int h, w;
    int planes_built;
    br_planes planes; /* the level's tile planes, built at the first count, find or search */
    br_kept k;
} lv_kept;

PCG_HD void lv_kept_init(lv_kept *e, const level_t *l)
{
    e->t = l->t, e->h = l->h, e->w = l->w;
    e->planes_built = 0;
    e->k.live = 0;
}

PCG_HD const br_planes *lv_kept_planes(lv_kept *e)
{
    if (!e->planes_built) br_planes_build(&e->planes, e->t, e->h, e->w), e->planes_built = 1;
    return &e->planes;
}

/* The entry of n that serves l, or NULL (another level, or one too large
 * for a kept search). */
PCG_HD lv_kept *lv_kept_of(lv_kept *e, int n, const level_t *l)
{
    if (!e || !br_kept_fits(l->h, l->w)) return 0;
    for (int i = 0; i < n; i++)
        if (e[i].t == l->t && e[i].h == l->h && e[i].w == l->w) return &e[i];
    return 0;
}

/* e's search from cell src through open, started afresh unless it is the
 * one kept. */
PCG_HD br_kept *lv_kept_search(lv_kept *e, int src, pcg_u32 open)
{
    if (!e->k.live || e->k.src != src || e->k.open != open)
        br_kept_start(&e->k, e->t, e->h, e->w, open, src, lv_kept_planes(e));
    return &e->k;
}

/* lv_count's answer, off e's tile planes where e is not NULL and the
 * tile is one a plane names (0..31). */
PCG_HD int lv_count_kept(lv_kept *e, const level_t *l, int tile)
{
    if (!e || tile < 0 || tile >= 32) return lv_count(l, tile);
    return br_planes_count(lv_kept_planes(e), tile);
}

/* lv_find's answer, likewise: the tile's cells in row-major order (a
 * word's bits are its cells in order, words one after another). */
PCG_HD int lv_find_kept(lv_kept *e, const level_t *l, int tile, int *rows, int *cols, int max)
{
    if (!e || tile < 0 || tile >= 32) return lv_find(l, tile, rows, cols, max);
    const br_planes *pl = lv_kept_planes(e);
    int n = 0;
    for (int j = 0; j < pl->words; j++) {
        pcg_u64 hit = br_planes_tile(pl, j, tile);
        for (; hit && n < max; hit &= hit - 1, n++) {
            int cell = j * pl->span + br_low_bit(hit);
            if (rows) rows[n] = cell / l->w;
            if (cols) cols[n] = cell % l->w;
        }
        n += br_bit_count64(hit); /* once max are kept the rest are counted */
    }
    return n;
}

/* lv_path_through's answer, from e's kept search where e is not NULL. */
PCG_HD int lv_path_through_kept(lv_kept *e, const level_t *l, int r0, int c0, int r1, int c1, pcg_u32 passable)
{
    if (!e) return lv_path_through(l, r0, c0, r1, c1, passable);
    if (!lv_in(l, r0, c0) || !lv_in(l, r1, c1)) return -1;
    int s = r0 * l->w + c0, t = r1 * l->w + c1;
    if (!lv_tile_in(passable, l->t[s]) || !lv_tile_in(passable, l->t[t])) return -1;
    return br_kept_distance(lv_kept_search(e, s, passable), t);
}

/* lv_nearest's answer, from e's kept search where e is not NULL. */
PCG_HD int lv_nearest_kept(lv_kept *e, const level_t *l, int r, int c, int tile)
{
    if (!e) return lv_nearest(l, r, c, tile);
    if (!lv_in(l, r, c) || lv_blocks(PCG_BLOCK_DEFAULT, l->t[r * l->w + c])) return -1;
    br_mask target;
    br_mask_tile(&target, l->t, l->h, l->w, tile);
    if (tile >= 0 && tile < 32) br_planes_mask(&target, lv_kept_planes(e));
    return br_kept_nearest(lv_kept_search(e, r * l->w + c, ~PCG_BLOCK_DEFAULT), &target);
}

#endif
