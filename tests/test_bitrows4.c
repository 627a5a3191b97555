/* The four-word searches (host/core/bitrows4.h) against the queue BFS of
 * the level core, on random levels of every shape that fits four words:
 * each layer of a search holds exactly the cells at that distance, the
 * layer that stays clear of a tile's cells holds the cells whose distance
 * is the same with that tile blocking, the paths rebuilt from layers are
 * lv_path's, and the masks and 5x5 windows are those of a byte loop. */
#include "harness.h"
#include "bitrows4.h"
#include "philox.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int below(philox_stream *s, int n) { return (int)philox_below(philox_next(s), (pcg_u32)n); }

typedef struct {
    br4_shape g;
    pcg_u64 pass[BR4_WORDS], stop[BR4_WORDS];
    pcg_u64 layer[BR4_CELLS][BR4_WORDS], free_[BR4_CELLS][BR4_WORDS], hit[BR4_CELLS][BR4_WORDS];
    short plain[PCG_MAX_CELLS], blocked[PCG_MAX_CELLS], one[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    short path[PCG_MAX_CELLS];
} scratch;

/* The cells of a lv_path answer as bits, to compare with br4_path's. */
static void path_bits(const br4_shape *g, const short *path, int n, pcg_u64 *out)
{
    for (int j = 0; j < BR4_WORDS; j++) out[j] = 0;
    for (int i = 0; i < n; i++) br4_set(g, out, path[i] / g->w, path[i] % g->w);
}

/* The search from src through pass, every layer kept, beside it the one
 * clear of stop; returns the number of layers. */
static int search(scratch *s, int src)
{
    const br4_shape *g = &s->g;
    pcg_u64 seen[BR4_WORDS] = {0}, fresh[BR4_WORDS] = {0};
    br4_set(g, fresh, src / g->w, src % g->w);
    memcpy(seen, fresh, sizeof seen);
    memcpy(s->layer[0], fresh, sizeof fresh);
    memcpy(s->free_[0], fresh, sizeof fresh);
    memset(s->hit[0], 0, sizeof s->hit[0]);
    int d = 1;
    for (; br4_step(g, s->pass, seen, fresh); d++) {
        memcpy(s->layer[d], fresh, sizeof fresh);
        br4_step_free(g, fresh, s->stop, s->free_[d - 1], s->free_[d], s->hit[d]);
    }
    return d;
}

/* Layers, clear layers and paths of one search against lv_bfs with the
 * same block mask (and stop's tile blocking too, and all but one cell of
 * it).  Returns the number of layers. */
static int compare_search(const level_t *l, scratch *s, int src, pcg_u32 block, int stop_tile, int target)
{
    const br4_shape *g = &s->g;
    const int cells = l->h * l->w;
    int layers = search(s, src);
    lv_bfs(l, src, block, -1, s->plain, s->queue);
    lv_bfs(l, src, block | (1u << stop_tile), -1, s->blocked, s->queue);
    for (int i = 0; i < cells; i++) {
        int r = i / l->w, c = i % l->w, d = s->plain[i];
        for (int k = 0; k < layers; k++)
            if (br4_has(g, s->layer[k], r, c) != (d == k))
                fail_msg("%dx%d src %d: cell %d in layer %d is %d, its distance %d", l->h, l->w, src, i, k,
                         br4_has(g, s->layer[k], r, c), d);
        if (d <= 0) continue;
        int in_free = br4_has(g, s->free_[d], r, c), in_hit = br4_has(g, s->hit[d], r, c);
        if (l->t[i] != stop_tile) {
            if (in_hit || in_free != (s->blocked[i] == d))
                fail_msg("%dx%d src %d stop %d: cell %d at %d, %d with the stop blocking, clear %d", l->h, l->w, src,
                         stop_tile, i, d, s->blocked[i], in_free);
            continue;
        }
        lv_bfs(l, src, block | (1u << stop_tile), i, s->one, s->queue);
        if (in_free || in_hit != (s->one[i] == d))
            fail_msg("%dx%d src %d stop %d: stop cell %d at %d, %d with the others blocking, hit %d", l->h, l->w,
                     src, stop_tile, i, d, s->one[i], in_hit);
        if (!in_hit) continue;
        /* the leg to a hit cell, rebuilt from the clear layers */
        pcg_u64 got[BR4_WORDS] = {0}, want[BR4_WORDS];
        int n = br4_path(g, (const pcg_u64(*)[BR4_WORDS])s->free_, d, r, c, got);
        path_bits(g, s->path, lv_path(l, s->one, i, s->path), want);
        if (n != d + 1 || memcmp(got, want, sizeof got))
            fail_msg("%dx%d src %d: the clear path to %d differs from lv_path's", l->h, l->w, src, i);
    }
    if (s->plain[target] < 0) return layers;
    pcg_u64 got[BR4_WORDS] = {0}, want[BR4_WORDS];
    int n = br4_path(g, (const pcg_u64(*)[BR4_WORDS])s->layer, s->plain[target], target / l->w, target % l->w, got);
    path_bits(g, s->path, lv_path(l, s->plain, target, s->path), want);
    if (n != s->plain[target] + 1 || memcmp(got, want, sizeof got))
        fail_msg("%dx%d src %d: the path to %d differs from lv_path's", l->h, l->w, src, target);
    return layers;
}

/* br4_masks and br4_window5 against the bytes. */
static void compare_masks(const level_t *l, scratch *s, philox_stream *rs)
{
    const br4_shape *g = &s->g;
    unsigned char tiles[8];
    pcg_u64 pass[BR4_WORDS], m[8][BR4_WORDS], win[BR4_WORDS];
    int n = 1 + below(rs, 8);
    for (int i = 0; i < n; i++) tiles[i] = (unsigned char)(below(rs, 2) ? below(rs, N_TILES) : below(rs, 256));
    br4_masks(g, l->t, pass, tiles, n, m);
    for (int i = 0; i < l->h * l->w; i++) {
        int r = i / l->w, c = i % l->w;
        if (br4_has(g, pass, r, c) != lv_tile_in(~PCG_BLOCK_DEFAULT, l->t[i]))
            fail_msg("%dx%d: cell %d (tile %d) passable %d", l->h, l->w, i, l->t[i], br4_has(g, pass, r, c));
        for (int k = 0; k < n; k++)
            if (br4_has(g, m[k], r, c) != (l->t[i] == tiles[k]))
                fail_msg("%dx%d: cell %d (tile %d) in the mask of %d: %d", l->h, l->w, i, l->t[i], tiles[k],
                         br4_has(g, m[k], r, c));
    }
    for (int j = 0; j < BR4_WORDS; j++)
        if (pass[j] & ~g->valid[j]) fail_msg("%dx%d: a passable bit past the cells in word %d", l->h, l->w, j);
    br4_window5(g, m[0], win);
    for (int i = 0; i < l->h * l->w; i++) {
        int r = i / l->w, c = i % l->w, near = 0;
        for (int rr = r - 2; rr <= r + 2; rr++)
            for (int cc = c - 2; cc <= c + 2; cc++) near |= lv_in(l, rr, cc) && l->t[rr * l->w + cc] == tiles[0];
        if (br4_has(g, win, r, c) != near)
            fail_msg("%dx%d: cell %d in the 5x5 windows of tile %d: %d, the bytes say %d", l->h, l->w, i, tiles[0],
                     br4_has(g, win, r, c), near);
    }
    for (int j = 0; j < BR4_WORDS; j++)
        if (win[j] & ~g->valid[j]) fail_msg("%dx%d: a window bit past the cells in word %d", l->h, l->w, j);
}

/* A shape that fits four words: the default map, rows of 16 (the SSE2
 * neighbours), one row a word, or any. */
static void draw_shape(philox_stream *rs, int *h, int *w)
{
    do {
        int kind = below(rs, 5);
        *w = kind == 0 || kind == 1 ? 16 : kind == 2 ? 33 + below(rs, 32) : 1 + below(rs, 64);
        *h = kind == 0 ? 16 : kind == 1 ? 1 + below(rs, 16) : 1 + below(rs, 64);
    } while (!br4_fits(*h, *w));
}

static void bitrows4_random_levels(void **state)
{
    (void)state;
    static scratch s;
    static unsigned char t[BR4_CELLS];
    philox_stream rs;
    philox_stream_init(&rs, 23, 4, 0);
    long hits = 0, clear = 0;
    enum { LEVELS = 20000 };
    for (int it = 0; it < LEVELS; it++) {
        int h, w;
        draw_shape(&rs, &h, &w);
        int walls = below(&rs, 60), cells = h * w;
        /* ids past 31 (every byte value) now and then: they block every
         * search, the queue BFS's too (lv_blocks) */
        int any_byte = it % 4 == 0;
        for (int i = 0; i < cells; i++)
            t[i] = (unsigned char)(below(&rs, 100) < walls ? TILE_WALL
                                   : below(&rs, 5)         ? (below(&rs, 3) ? TILE_EMPTY : TILE_KEY)
                                                           : below(&rs, any_byte ? 256 : 32));
        level_t l = {h, w, t};
        br4_shape_init(&s.g, h, w);
        compare_masks(&l, &s, &rs);
        /* the search's passable cells: the walls blocking, or a random mask */
        pcg_u32 block = PCG_BLOCK_DEFAULT;
        if (below(&rs, 3) == 0) {
            block = (pcg_u32)philox_next(&rs) & ((1u << N_TILES) - 1) & ~(1u << TILE_EMPTY);
            br_mask pm;
            br_mask_init(&pm, t, h, w, ~block, -1);
            for (int j = 0; j < BR4_WORDS; j++) s.pass[j] = j < pm.words ? br_mask_word(&pm, j) : 0;
        } else {
            br4_masks(&s.g, t, s.pass, 0, 0, 0);
        }
        int stop_tile = below(&rs, 2) ? TILE_KEY : below(&rs, N_TILES);
        const unsigned char st = (unsigned char)stop_tile;
        pcg_u64 one[1][BR4_WORDS];
        br4_masks(&s.g, t, 0, &st, 1, one);
        memcpy(s.stop, one[0], sizeof s.stop);
        int src = below(&rs, cells), target = below(&rs, cells);
        int layers = compare_search(&l, &s, src, block, stop_tile, target);
        for (int d = 1; d < layers; d++)
            for (int j = 0; j < BR4_WORDS; j++) hits += s.hit[d][j] != 0, clear += s.free_[d][j] != 0;
    }
    printf("bitrows4: %ld words of stop cells reached clear, %ld of clear cells\n", hits, clear);
    assert_true(hits > 10000 && clear > 100000); /* the clear layers and their stop cells are exercised */
    printf("bitrows4: %d random levels match the queue BFS\n", (int)LEVELS);
}

PCG_TESTS(bitrows4, cmocka_unit_test(bitrows4_random_levels))
