/* path_length_through: the level core against a plain search on random
 * levels and masks, and the JIT's against the level core. */
#include "harness.h"
#include <stdio.h>
#include "philox.h"
#include "reward_jit.h"

/* A draw in 0..n-1. */
static int below(philox_stream *s, int n) { return (int)philox_below(philox_next(s), (pcg_u32)n); }

/* Distances by relaxation until nothing changes: a different search from
 * the level core's queue. */
static int relaxed_distance(const level_t *l, int r0, int c0, int r1, int c1, unsigned mask)
{
    static int d[PCG_MAX_CELLS];
    int h = l->h, w = l->w;
    if (!lv_in(l, r0, c0) || !lv_in(l, r1, c1)) return -1;
    for (int i = 0; i < h * w; i++) d[i] = -1;
    if (!((mask >> l->t[r0 * w + c0]) & 1u) || !((mask >> l->t[r1 * w + c1]) & 1u)) return -1;
    d[r0 * w + c0] = 0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < h * w; i++) {
            if (!((mask >> l->t[i]) & 1u)) continue;
            int r = i / w, c = i % w, best = d[i];
            const int nb[4][2] = {{r - 1, c}, {r + 1, c}, {r, c - 1}, {r, c + 1}};
            for (int k = 0; k < 4; k++) {
                if (nb[k][0] < 0 || nb[k][1] < 0 || nb[k][0] >= h || nb[k][1] >= w) continue;
                int v = d[nb[k][0] * w + nb[k][1]];
                if (v >= 0 && (best < 0 || v + 1 < best)) best = v + 1;
            }
            if (best != d[i]) d[i] = best, changed = 1;
        }
    }
    return d[r1 * w + c1];
}

static void path_through_matches_bfs(void **state)
{
    (void)state;
    philox_stream s;
    philox_stream_init(&s, 19, 2, 0);
    static unsigned char t[PCG_MAX_CELLS];
    int found = 0, none = 0;
    for (int it = 0; it < 5000; it++) {
        int h = 1 + below(&s, 14), w = 1 + below(&s, 14);
        /* half the cells EMPTY, and EMPTY passable on half the levels, so that paths are found too */
        for (int i = 0; i < h * w; i++)
            t[i] = (unsigned char)(below(&s, 2) ? TILE_EMPTY : below(&s, N_TILES));
        unsigned mask = philox_next(&s) & ((1u << N_TILES) - 1);
        if (it % 2 == 0) mask |= 1u << TILE_EMPTY;
        level_t l = {h, w, t};
        /* ends one cell past the map now and then */
        int r0 = below(&s, h + 2) - 1, c0 = below(&s, w + 2) - 1;
        int r1 = below(&s, h + 2) - 1, c1 = below(&s, w + 2) - 1;
        if (it % 7 == 0) r1 = r0, c1 = c0;
        int want = relaxed_distance(&l, r0, c0, r1, c1, mask), got = lv_path_through(&l, r0, c0, r1, c1, mask);
        if (got != want)
            fail_msg("level %d (%dx%d) mask %#x (%d,%d)->(%d,%d): %d, plain search %d", it, h, w, mask, r0, c0, r1, c1,
                     got, want);
        found += want > 0;
        none += want < 0;
    }
    assert_true(found > 300 && none > 300);
}

/* The JIT's path_length_through is the level core's, for several masks. */
static void path_through_jit_matches_core(void **state)
{
    (void)state;
    static const char *masks[] = {"(1u << EMPTY) | (1u << DOOR) | (1u << PLAYER)", "~((1u << WALL) | (1u << BORDER))",
                                  "1u << EMPTY", "0u", "~0u"};
    const unsigned values[] = {1u << TILE_EMPTY | 1u << TILE_DOOR | 1u << TILE_PLAYER, ~PCG_BLOCK_DEFAULT,
                               1u << TILE_EMPTY, 0u, ~0u};
    philox_stream s;
    philox_stream_init(&s, 23, 3, 0);
    static unsigned char ta[256], tb[256];
    for (size_t m = 0; m < sizeof masks / sizeof masks[0]; m++) {
        char src[512], err[512];
        snprintf(src, sizeof src,
                 "float compute_reward(const level_t *prev, const level_t *curr)\n"
                 "{ int r = tile_at(prev, 0, 0), c = tile_at(prev, 0, 1);\n"
                 "  return (float)path_length_through(curr, r, c, 15 - r, 15 - c, %s); }\n",
                 masks[m]);
        reward_prog *p = reward_compile_cpu(src, err, sizeof err);
        if (!p) fail_msg("%s", err);
        for (int it = 0; it < 200; it++) {
            for (int i = 0; i < 256; i++) {
                ta[i] = (unsigned char)below(&s, 10); /* start: ta[0], ta[1] */
                tb[i] = (unsigned char)(below(&s, 3) ? TILE_EMPTY : below(&s, N_TILES));
            }
            level_t a = {16, 16, ta}, b = {16, 16, tb};
            int want = lv_path_through(&b, ta[0], ta[1], 15 - ta[0], 15 - ta[1], values[m]);
            float got = reward_prog_call(&a, &b, p);
            if (got != (float)want)
                fail_msg("mask %s level %d: JIT %g, level core %d", masks[m], it, (double)got, want);
        }
        reward_prog_free(p);
    }
}

PCG_TESTS(path_through, cmocka_unit_test(path_through_matches_bfs), cmocka_unit_test(path_through_jit_matches_core))
