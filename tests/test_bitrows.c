/* The bit-row searches (host/core/bitrows.h) against the queue BFS of the
 * level core: distances of every cell, the rebuilt paths, path lengths
 * through tile masks, nearest tiles and region counts, on the evaluator's
 * own random-play levels and on random levels of every size up to
 * PCG_MAX_SIDE.  PCGRLLM_BITROWS_LEVELS sets how many random levels. */
#include "harness.h"
#include "env.h"
#include "philox.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A draw in 0..n-1. */
static int below(philox_stream *s, int n) { return (int)philox_below(philox_next(s), (pcg_u32)n); }

typedef struct {
    short ref[PCG_MAX_CELLS], bits[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    short path_ref[PCG_MAX_CELLS], path_bits[PCG_MAX_CELLS];
} scratch;

/* Both searches from src with block/allow, then the path to target rebuilt
 * from each, whole and with the bit-row search stopped at target. */
static void compare_bfs(const level_t *l, int src, pcg_u32 block, int allow, int target, scratch *s, const char *what)
{
    const int cells = l->h * l->w;
    int n_ref = lv_bfs(l, src, block, allow, s->ref, s->queue);
    int n_bits = lv_bfs_rows(l, src, block, allow, -1, s->bits, s->queue);
    if (n_ref != n_bits) fail_msg("%s %dx%d src %d: %d cells reached, queue BFS %d", what, l->h, l->w, src, n_bits, n_ref);
    for (int i = 0; i < cells; i++)
        if (s->ref[i] != s->bits[i])
            fail_msg("%s %dx%d src %d block %#x allow %d: cell %d at %d, queue BFS %d", what, l->h, l->w, src, block,
                     allow, i, s->bits[i], s->ref[i]);
    for (int stop = 0; stop < 2; stop++) {
        if (stop) lv_bfs_rows(l, src, block, allow, target, s->bits, s->queue);
        int a = lv_path(l, s->ref, target, s->path_ref), b = lv_path(l, s->bits, target, s->path_bits);
        if (a != b || memcmp(s->path_ref, s->path_bits, sizeof(short) * (size_t)a))
            fail_msg("%s %dx%d src %d -> %d%s: the paths differ (lengths %d, queue BFS %d)", what, l->h, l->w, src,
                     target, stop ? " (stopped at the target)" : "", b, a);
    }
}

/* Every bit-row answer of the level core against the queue BFS's on one
 * level, from draws of ends, masks and tiles. */
static void compare_level(const level_t *l, philox_stream *rs, scratch *s, const char *what)
{
    const int cells = l->h * l->w;
    int src = below(rs, cells), target = below(rs, cells), allow = below(rs, 3) ? -1 : below(rs, cells);
    pcg_u32 block = below(rs, 2) ? PCG_BLOCK_DEFAULT : (pcg_u32)philox_next(rs) & ((1u << N_TILES) - 1);
    if (below(rs, 4) == 0) block |= 1u << (N_TILES + below(rs, 32 - N_TILES)); /* ids past the tiles */
    compare_bfs(l, src, block, allow, target, s, what);
    compare_bfs(l, src, PCG_BLOCK_DEFAULT, -1, target, s, what);

    pcg_u32 pass = (pcg_u32)philox_next(rs) | (1u << TILE_EMPTY);
    int r0 = src / l->w, c0 = src % l->w, r1 = target / l->w, c1 = target % l->w;
    int want = lv_tile_in(pass, l->t[src]) && lv_tile_in(pass, l->t[target]) ? lv_path_through_queue(l, src, target, pass)
                                                                              : -1;
    int got = lv_path_through(l, r0, c0, r1, c1, pass);
    if (got != want) fail_msg("%s %dx%d path_through %d -> %d mask %#x: %d, queue BFS %d", what, l->h, l->w, src, target, pass, got, want);

    int tile = below(rs, N_TILES);
    want = lv_blocks(PCG_BLOCK_DEFAULT, l->t[src]) ? -1 : lv_nearest_queue(l, src, tile);
    got = lv_nearest(l, r0, c0, tile);
    if (got != want) fail_msg("%s %dx%d nearest %d from %d: %d, queue BFS %d", what, l->h, l->w, tile, src, got, want);

    want = lv_regions_queue(l), got = lv_regions(l);
    if (got != want) fail_msg("%s %dx%d regions: %d, queue BFS %d", what, l->h, l->w, got, want);
}

/* The levels the evaluator is benchmarked and trained on: each step of one
 * episode of random play, both variants. */
static void bitrows_random_play(void **state)
{
    (void)state;
    static scratch s;
    philox_stream rs;
    philox_stream_init(&rs, 23, 1, 0);
    int checked = 0;
    for (int variant = VARIANT_DUNGEON; variant <= VARIANT_TREASURE; variant++) {
        env_t e;
        assert_int_equal(env_alloc(&e, 16, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE, variant, 5), 0);
        int act[16];
        for (int t = 0; t < e.cfg.episode_len - 1; t++) {
            env_random_actions(&e, 6, (uint64_t)t, act);
            env_step(&e, act);
            for (int i = 0; i < e.n; i++, checked++) {
                level_t l = env_level(&e, i);
                compare_level(&l, &rs, &s, "random play");
            }
        }
        env_free(&e);
    }
    assert_true(checked > 1000);
}

/* Random levels: sides 1..PCG_MAX_SIDE drawn apart, a wall share drawn
 * per level (from open fields to mazes of single cells), every tile id. */
static void bitrows_random_levels(void **state)
{
    (void)state;
    static scratch s;
    static unsigned char t[PCG_MAX_CELLS];
    const char *env = getenv("PCGRLLM_BITROWS_LEVELS");
    long n = env && *env ? strtol(env, NULL, 10) : 20000;
    assert_true(n > 0);
    philox_stream rs;
    philox_stream_init(&rs, 23, 2, 0);
    long regions = 0;
    for (long it = 0; it < n; it++) {
        int h = 1 + below(&rs, PCG_MAX_SIDE), w = 1 + below(&rs, PCG_MAX_SIDE);
        if (it % 3 == 0) h = 1 + below(&rs, 12), w = 1 + below(&rs, 12); /* small levels: edges everywhere */
        int walls = below(&rs, 70);
        for (int i = 0; i < h * w; i++)
            t[i] = (unsigned char)(below(&rs, 100) < walls ? TILE_WALL : below(&rs, 4) ? TILE_EMPTY : below(&rs, 32));
        level_t l = {h, w, t};
        compare_level(&l, &rs, &s, "random level");
        regions += lv_regions(&l) > 1;
    }
    if (n >= 1000) assert_true(regions > n / 10); /* split levels are among the draws */
    printf("bitrows: %ld random levels match the queue BFS\n", n);
}

/* Ids past 31, which no tile mask names, block the queue BFS as they
 * block the bit rows: levels holding bytes of any value, and a corridor
 * whose middle cell is 33 (BORDER's id plus 32, EMPTY's bit once a shift
 * by it wraps). */
static void bitrows_ids_past_31(void **state)
{
    (void)state;
    static scratch s;
    static unsigned char t[PCG_MAX_CELLS];
    unsigned char line[3] = {TILE_PLAYER, 33, TILE_DOOR};
    level_t l = {1, 3, line};
    lv_bfs(&l, 0, PCG_BLOCK_DEFAULT, -1, s.ref, s.queue);
    assert_int_equal(s.ref[2], -1);
    assert_int_equal(lv_regions_queue(&l), 2);
    assert_int_equal(lv_nearest(&l, 0, 1, TILE_DOOR), -1);
    assert_int_equal(lv_nearest_queue(&l, 0, TILE_DOOR), -1);
    philox_stream rs;
    philox_stream_init(&rs, 23, 4, 0);
    for (int it = 0; it < 3000; it++) {
        int h = 1 + below(&rs, 12), w = 1 + below(&rs, PCG_MAX_SIDE);
        for (int i = 0; i < h * w; i++) t[i] = (unsigned char)(below(&rs, 3) ? TILE_EMPTY : below(&rs, 256));
        level_t r = {h, w, t};
        compare_level(&r, &rs, &s, "bytes level");
    }
}

/* The word-at-a-time scans (lv_count, lv_find, lv_first) against a byte
 * loop: random levels of every cell count up to PCG_MAX_CELLS (tails of
 * 1-7 cells included), every max from 0 past the count, ids out of range. */
static void bitrows_scans(void **state)
{
    (void)state;
    static unsigned char t[PCG_MAX_CELLS];
    int rows[PCG_MAX_CELLS], cols[PCG_MAX_CELLS];
    philox_stream rs;
    philox_stream_init(&rs, 23, 3, 0);
    for (int it = 0; it < 20000; it++) {
        int w = 1 + below(&rs, PCG_MAX_SIDE), h = 1 + below(&rs, PCG_MAX_CELLS / w), cells = h * w;
        int kinds = 1 + below(&rs, 12);
        for (int i = 0; i < cells; i++) t[i] = (unsigned char)below(&rs, kinds);
        level_t l = {h, w, t};
        int tile = below(&rs, 14) - 1, want = 0, first = -1; /* -1 and 12 hold nothing */
        for (int i = 0; i < cells; i++)
            if (t[i] == tile) want++, first = first < 0 ? i : first;
        int max = below(&rs, want + 3), n = lv_find(&l, tile, rows, cols, max);
        if (n != want || lv_count(&l, tile) != want || lv_first(&l, tile) != first)
            fail_msg("%dx%d tile %d: find %d, count %d, first %d; the bytes hold %d, first %d", h, w, tile, n,
                     lv_count(&l, tile), lv_first(&l, tile), want, first);
        for (int k = 0, i = 0; k < (max < want ? max : want); k++, i++) {
            while (t[i] != tile) i++;
            if (rows[k] != i / w || cols[k] != i % w)
                fail_msg("%dx%d tile %d: position %d at (%d,%d), not (%d,%d)", h, w, tile, k, rows[k], cols[k], i / w, i % w);
        }
    }
}

/* A side past PCG_MAX_SIDE (cells still within PCG_MAX_CELLS) takes the
 * queue BFS: the same answers, no row array overrun. */
static void bitrows_tall_level(void **state)
{
    (void)state;
    static unsigned char t[PCG_MAX_CELLS];
    const int h = 2 * PCG_MAX_SIDE, w = PCG_MAX_SIDE / 2;
    for (int i = 0; i < h * w; i++) t[i] = (i / w) % 4 == 2 && i % w != (i / w) % w ? TILE_WALL : TILE_EMPTY;
    t[(h - 1) * w + w - 1] = TILE_DOOR;
    level_t l = {h, w, t};
    assert_int_equal(lv_rows_fit(&l), 0);
    assert_int_equal(lv_regions(&l), lv_regions_queue(&l));
    assert_int_equal(lv_nearest(&l, 0, 0, TILE_DOOR), lv_nearest_queue(&l, 0, TILE_DOOR));
    assert_true(lv_nearest(&l, 0, 0, TILE_DOOR) > h);
    assert_int_equal(lv_path_length(&l, 0, 0, h - 1, w - 1), lv_nearest(&l, 0, 0, TILE_DOOR));
}

/* The device's load of eight tile bytes (br_load_aligned8, run here as it
 * runs there) is the bytes one by one at every alignment, and so is the
 * host's load of any n <= 8 of them, whatever lies around them. */
static void bitrows_word_load(void **state)
{
    (void)state;
    _Alignas(8) unsigned char bytes[32];
    philox_stream rs;
    philox_stream_init(&rs, 11, 0, 0);
    for (int round = 0; round < 64; round++) {
        for (int i = 0; i < 32; i++) bytes[i] = (unsigned char)below(&rs, 256);
        for (int at = 0; at < 16; at++) {
            pcg_u64 want = 0;
            for (int i = 0; i < 8; i++) want |= (pcg_u64)bytes[at + i] << (8 * i);
            if (br_load_aligned8(bytes + at) != want) fail_msg("offset %d: device load differs", at);
            for (int n = 0; n <= 8; n++) {
                pcg_u64 cut = n == 8 ? want : want & ((((pcg_u64)1) << (8 * n)) - 1);
                if (br_load(bytes + at, n) != cut) fail_msg("offset %d, %d bytes: load differs", at, n);
            }
        }
    }
}

/* One question of a kept-search sequence and its answer without one. */
static void kept_question(lv_kept *e, const level_t *l, philox_stream *rs, const int *srcs, const pcg_u32 *masks,
                          long it, int q)
{
    const int cells = l->h * l->w;
    int src = below(rs, 4) ? srcs[below(rs, 2)] : below(rs, cells), dst = below(rs, cells);
    int r0 = src / l->w, c0 = src % l->w, r1 = dst / l->w, c1 = dst % l->w;
    if (below(rs, 40) == 0) r0 = below(rs, 2) ? -1 : l->h; /* an end outside the level */
    if (below(rs, 40) == 0) c1 = below(rs, 2) ? -1 : l->w;
    int kind = below(rs, 8);
    if (kind == 0) { /* a count, any id */
        int tile = below(rs, 4) ? below(rs, N_TILES) : below(rs, 300) - 20;
        int want = lv_count(l, tile), got = lv_count_kept(e, l, tile);
        if (got != want) fail_msg("level %ld question %d: count of %d kept %d, afresh %d", it, q, tile, got, want);
        return;
    }
    if (kind == 1) { /* a find of up to max */
        int tile = below(rs, 4) ? below(rs, N_TILES) : below(rs, 300) - 20, max = below(rs, 6);
        int r_want[8], c_want[8], r_got[8], c_got[8];
        int *rg = below(rs, 5) ? r_got : NULL, *cg = below(rs, 5) ? c_got : NULL;
        int want = lv_find(l, tile, rg ? r_want : NULL, cg ? c_want : NULL, max);
        int got = lv_find_kept(e, l, tile, rg, cg, max);
        int kept_n = want < max ? want : max;
        if (got != want || (rg && memcmp(r_want, r_got, sizeof(int) * (size_t)kept_n)) ||
            (cg && memcmp(c_want, c_got, sizeof(int) * (size_t)kept_n)))
            fail_msg("level %ld question %d: find of %d (max %d) kept %d, afresh %d, or other cells", it, q, tile,
                     max, got, want);
        return;
    }
    if (kind < 6) {
        pcg_u32 pass = masks[below(rs, 3)];
        int want = lv_path_through(l, r0, c0, r1, c1, pass), got = lv_path_through_kept(e, l, r0, c0, r1, c1, pass);
        if (got != want)
            fail_msg("level %ld %dx%d question %d: path_through %d -> %d mask %#x kept %d, afresh %d", it, l->h, l->w,
                     q, src, dst, pass, got, want);
    } else {
        int tile = below(rs, 6) ? below(rs, N_TILES) : below(rs, 300) - 20;
        int want = lv_nearest(l, r0, c0, tile), got = lv_nearest_kept(e, l, r0, c0, tile);
        if (got != want)
            fail_msg("level %ld %dx%d question %d: nearest %d from %d kept %d, afresh %d", it, l->h, l->w, q, tile,
                     src, got, want);
    }
}

/* A snake through an h x w level: every other row a wall but for one
 * gap, at alternate ends, so paths run the whole level (distances past
 * 255 on the largest levels a kept search holds). */
static void snake_level(unsigned char *t, int h, int w)
{
    for (int r = 0; r < h; r++)
        for (int c = 0; c < w; c++)
            t[r * w + c] = r % 2 == 0 || c == (r / 2 % 2 ? 0 : w - 1) ? TILE_EMPTY : TILE_WALL;
}

/* Kept searches and tile planes (a reward call's, level.h's lv_kept)
 * answer sequences of count, find, path and nearest questions as the
 * scans and searches afresh do, on levels holding ids of every byte:
 * sources mostly from a pair (the kept search reused, grown further or
 * started again), masks from three, ends now and then outside the level;
 * levels of every shape a kept search holds (16x16, the widest, the
 * tallest, 512 cells, snakes with distances past 255) and past it (no
 * entry serves those). */
static void bitrows_kept_searches(void **state)
{
    (void)state;
    static unsigned char t[PCG_MAX_CELLS];
    philox_stream rs;
    philox_stream_init(&rs, 23, 7, 0);
    long served = 0, n = 40000;
    int far = 0;
    for (long it = 0; it < n; it++) {
        int h = 1 + below(&rs, 24), w = 1 + below(&rs, 24), shape = (int)(it % 8);
        if (shape < 3) h = w = PCG_DEFAULT_SIDE;
        if (shape == 3 || shape == 4) w = 1 + below(&rs, 64), h = 1 + below(&rs, 512 / w); /* up to 512 cells */
        if (shape == 5) w = 1 + below(&rs, 64), h = 1 + below(&rs, 64);                     /* most too large */
        int walls = below(&rs, 60);
        if (shape == 4) {
            snake_level(t, h, w);
        } else {
            for (int i = 0; i < h * w; i++)
            t[i] = (unsigned char)(below(&rs, 100) < walls ? TILE_WALL
                                   : below(&rs, 3)        ? TILE_EMPTY
                                   : below(&rs, 8)        ? below(&rs, 12)
                                                          : below(&rs, 256)); /* ids past 31 too */
        }
        level_t l = {h, w, t};
        lv_kept entries[2];
        lv_kept_init(&entries[0], &l);
        level_t other = {h, w, t + 1};
        lv_kept_init(&entries[1], &other);
        lv_kept *e = lv_kept_of(entries, 2, &l);
        if (e) served++;
        if (e && (e != &entries[0] || lv_kept_of(entries, 1, &other))) fail_msg("level %ld: the wrong entry", it);
        if (!e && br_kept_fits(h, w)) fail_msg("level %ld %dx%d: no entry served a level that fits", it, h, w);
        int srcs[2] = {below(&rs, h * w), below(&rs, h * w)};
        pcg_u32 masks[3] = {~PCG_BLOCK_DEFAULT, (1u << TILE_EMPTY) | (1u << TILE_DOOR) | (1u << TILE_PLAYER),
                            (pcg_u32)philox_next(&rs) | (1u << TILE_EMPTY)};
        for (int q = 0; q < 24; q++) kept_question(e, &l, &rs, srcs, masks, it, q);
        if (shape == 4 && e) { /* the snake's two ends */
            int d = lv_path_through_kept(e, &l, 0, 0, h - 1, (h - 1) / 2 % 2 ? 0 : w - 1, ~PCG_BLOCK_DEFAULT);
            if (d != lv_path_through(&l, 0, 0, h - 1, (h - 1) / 2 % 2 ? 0 : w - 1, ~PCG_BLOCK_DEFAULT))
                fail_msg("level %ld %dx%d: the snake's length kept %d", it, h, w, d);
            far = d > far ? d : far;
        }
    }
    assert_true(served > n / 2 && served < n); /* both kinds of level were drawn */
    assert_true(far > 255);                     /* and distances past 8 of the planes' bits */
    printf("bitrows: %ld levels' question sequences answered alike by kept searches (%ld kept)\n", n, served);
}

PCG_TESTS(bitrows, cmocka_unit_test(bitrows_random_play), cmocka_unit_test(bitrows_random_levels),
          cmocka_unit_test(bitrows_tall_level), cmocka_unit_test(bitrows_scans),
          cmocka_unit_test(bitrows_ids_past_31), cmocka_unit_test(bitrows_word_load),
          cmocka_unit_test(bitrows_kept_searches))
