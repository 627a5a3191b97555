/* The reference's human rewards ported to C (rewards/human/scenario1.c,
 * scenario2.c): hand-drawn level pairs with values worked out from the
 * reference's formula, a literal transcription of its flood kernel on random
 * pairs, and the marker lines of rewards/human and rewards/engine. */
#define _GNU_SOURCE
#include "harness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "env.h"
#include "philox.h"
#include "reward_jit.h"

static reward_prog *compile_file(const char *path)
{
    char err[1024];
    char *src = pcg_test_slurp(path);
    if (!src) fail_msg("cannot read %s (run from the source tree)", path);
    reward_prog *p = reward_compile_cpu(src, err, sizeof err);
    free(src);
    if (!p) fail_msg("%s: %s", path, err);
    return p;
}

/* A draw in 0..n-1. */
static int below(philox_stream *s, int n) { return (int)philox_below(philox_next(s), (pcg_u32)n); }

/* ---- hand-drawn pairs ---- */

/* The base level: the player's room (columns 1-3) opens on the door's room
 * (columns 5-6) through the one cell (3,4); (0,0) is a wall next to the
 * open cell (1,0), so opening it makes the (0,0) key slot reachable. */
#define B0 "########"
#define B1 ".@..#..#"
#define B2 "#...#..#"
#define B3 "#......#"
#define B4 "#...#.D#"
#define B5 "########"

/* Five keys in a row, the player at (1,1), the door at (4,8), all in one room. */
#define K0 "##########"
#define K2 "#.kkkkk..#"
#define K3 "#........#"
#define K4 "#.......D#"

typedef struct {
    const char *what;
    const char *prev[7], *curr[7]; /* rows, NULL-terminated */
    float want[2];                 /* scenario 1, scenario 2 */
} hand_pair;

/* Each value is the sum of the reference's terms, worked out by hand:
 * tl(t,n) = |prev count - n| - |curr count - n|; access from the player
 * to the first five KEY cells of curr, (0,0) filling the slots left over. */
static const hand_pair hand_pairs[] = {
    /* nothing changes: every term 0 */
    {"no change", {B0, B1, B2, B3, B4, B5}, {B0, B1, B2, B3, B4, B5}, {0.0f, 0.0f}},
    /* a wall in the player's room, off the only path: no term sees it */
    {"wall placed, no effect", {B0, B1, B2, B3, B4, B5}, {B0, B1, "#.#.#..#", B3, B4, B5}, {0.0f, 0.0f}},
    /* key placed on (2,2): tl(KEY,1) = 1 - 0 = +1; slot (2,2) is a KEY in
     * curr (never reached) but empty and 2 steps away in prev, the (0,0)
     * slots are walls: access 0 - 1 -> -0.5 */
    {"key placed", {B0, B1, B2, B3, B4, B5}, {B0, B1, "#.k.#..#", B3, B4, B5}, {0.5f, 0.5f}},
    /* the same with (0,0) open: the filler slot (0,0) is 2 steps away in
     * both levels, access 1 - 1 = 0: only tl(KEY,1) = +1 */
    {"key placed, (0,0) filler reachable", {".#######", B1, B2, B3, B4, B5},
     {".#######", B1, "#.k.#..#", B3, B4, B5}, {1.0f, 1.0f}},
    /* key removed: tl(KEY,1) = 0 - 1 = -1; every slot is the (0,0) wall */
    {"key removed", {B0, B1, "#.k.#..#", B3, B4, B5}, {B0, B1, B2, B3, B4, B5}, {-1.0f, -1.0f}},
    /* no key, (0,0) opened: the filler slots become reachable, access 1 - 0 -> +0.5 */
    {"(0,0) filler opened", {B0, B1, B2, B3, B4, B5}, {".#######", B1, B2, B3, B4, B5}, {0.5f, 0.5f}},
    /* BAT added off the path: tl(BAT,1) = 1 - 0 = +1 */
    {"bat added", {B0, B1, B2, B3, B4, B5}, {B0, ".@..#.b#", B2, B3, B4, B5}, {1.0f, 1.0f}},
    {"bat removed", {B0, ".@..#.b#", B2, B3, B4, B5}, {B0, B1, B2, B3, B4, B5}, {-1.0f, -1.0f}},
    /* a second BAT: tl(BAT,1) = 0 - 1 = -1 */
    {"second bat added", {B0, ".@..#.b#", B2, B3, B4, B5}, {B0, ".@..#.b#", "#...#.b#", B3, B4, B5},
     {-1.0f, -1.0f}},
    /* SCORPION added: scenario 1 0.5 * (0 - 1) = -0.5; scenario 2 1.0 * (1 - 0) = +1 */
    {"scorpion added", {B0, B1, B2, B3, B4, B5}, {B0, ".@..#.s#", B2, B3, B4, B5}, {-0.5f, 1.0f}},
    {"scorpion removed", {B0, ".@..#.s#", B2, B3, B4, B5}, {B0, B1, B2, B3, B4, B5}, {0.5f, -1.0f}},
    /* SPIDER added: 0.5 * (0 - 1) = -0.5 in both */
    {"spider added", {B0, B1, B2, B3, B4, B5}, {B0, ".@..#.x#", B2, B3, B4, B5}, {-0.5f, -0.5f}},
    /* the only opening walled up: the door path disappears, -3 */
    {"door path disappears", {B0, B1, B2, B3, B4, B5}, {B0, B1, B2, "#...#..#", B4, B5}, {-3.0f, -3.0f}},
    {"door path appears", {B0, B1, B2, "#...#..#", B4, B5}, {B0, B1, B2, B3, B4, B5}, {3.0f, 3.0f}},
    /* a BAT in the opening blocks like a wall: -3 + tl(BAT,1) = -3 + 1 */
    {"bat blocks the path", {B0, B1, B2, B3, B4, B5}, {B0, B1, B2, "#...b..#", B4, B5}, {-2.0f, -2.0f}},
    /* a SCORPION there: scenario 1 -3 - 0.5, scenario 2 -3 + 1 */
    {"scorpion blocks the path", {B0, B1, B2, B3, B4, B5}, {B0, B1, B2, "#...s..#", B4, B5}, {-3.5f, -2.0f}},
    /* a KEY there: tl(KEY,1) = +1; the slot (3,4) is 5 steps away in prev,
     * a KEY in curr: access 0 - 1 -> -0.5; the door path disappears, -3 */
    {"key blocks the path", {B0, B1, B2, B3, B4, B5}, {B0, B1, B2, "#...k..#", B4, B5}, {-2.5f, -2.5f}},
    /* a sixth key after the five (row-major): ignored; the five slots are
     * KEYs in both levels, access 0 - 0; tl(KEY,1) = 4 - 5 = -1 */
    {"sixth key ignored", {K0, "#@.......#", K2, K3, K4, K0}, {K0, "#@.......#", K2, "#....k...#", K4, K0},
     {-1.0f, -1.0f}},
    /* a key before the five: it takes a slot, 4 steps away in prev: access
     * 0 - 1 -> -0.5; tl(KEY,1) = -1 */
    {"key before the five", {K0, "#@.......#", K2, K3, K4, K0}, {K0, "#@...k...#", K2, K3, K4, K0},
     {-1.5f, -1.5f}},
    /* no player: the search starts on the (0,0) wall, which floods its open
     * neighbour (0,1) and stays dry: in prev the door is reached after 3
     * steps, length 3 - 1 = 2; with (0,1) walled nothing is flooded: -3.
     * The key slots are (0,0) itself, an unwalkable start and target:
     * length 0, no access in either */
    {"no player, unwalkable start", {"#..D", "####"}, {"##.D", "####"}, {-3.0f, -3.0f}},
    /* no player, (0,0) open: start and target (0,0) count 1 once it has an
     * open neighbour, so access 0 -> 1 (+0.5); the door path appears (+3) */
    {"no player, start is the target", {".#..D", "##..."}, {"....D", "##..."}, {3.5f, 3.5f}},
};

static void draw(pcg_test_grid *g, const char *const *rows) { pcg_test_grid_from(g, rows); }

static void human_ref_hand_pairs(void **state)
{
    (void)state;
    reward_prog *p[2] = {compile_file("rewards/human/scenario1.c"), compile_file("rewards/human/scenario2.c")};
    for (size_t i = 0; i < sizeof hand_pairs / sizeof hand_pairs[0]; i++) {
        static pcg_test_grid a, b;
        draw(&a, hand_pairs[i].prev);
        draw(&b, hand_pairs[i].curr);
        for (int s = 0; s < 2; s++) {
            float got = reward_prog_call(&a.l, &b.l, p[s]);
            if (got != hand_pairs[i].want[s])
                fail_msg("scenario %d, %s: got %g, expected %g", s + 1, hand_pairs[i].what, (double)got,
                         (double)hand_pairs[i].want[s]);
        }
    }
    reward_prog_free(p[0]);
    reward_prog_free(p[1]);
}

/* ---- the reference's flood kernel, transcribed ---- */

static int walk_tile(int t) { return t == TILE_EMPTY || t == TILE_DOOR || t == TILE_PLAYER; }

/* One flood per step as the reference's 3x3 convolution does it: a cell is
 * flooded when it or a 4-neighbour was (zero outside the map), and never
 * when it cannot be walked on (-5 against at most 5); the counts add up the
 * flood; stop once the target's count is positive or nothing changed, after
 * at least one step; the answer is the largest count less the smallest
 * positive one, -1 when the target was not reached. */
static int kernel_path(const level_t *l, int sr, int sc, int tr, int tc)
{
    int h = l->h, w = l->w, n = h * w;
    static int flood[PCG_MAX_CELLS], next[PCG_MAX_CELLS], count[PCG_MAX_CELLS];
    for (int i = 0; i < n; i++) flood[i] = count[i] = 0;
    flood[sr * w + sc] = count[sr * w + sc] = 1;
    int reached = 0, changed = 1;
    while (!reached && changed) {
        changed = 0;
        for (int r = 0; r < h; r++)
            for (int c = 0; c < w; c++) {
                int v = (walk_tile(l->t[r * w + c]) ? 0 : -5) + flood[r * w + c];
                v += (r > 0 ? flood[(r - 1) * w + c] : 0) + (r + 1 < h ? flood[(r + 1) * w + c] : 0);
                v += (c > 0 ? flood[r * w + c - 1] : 0) + (c + 1 < w ? flood[r * w + c + 1] : 0);
                next[r * w + c] = v < 0 ? 0 : v > 1 ? 1 : v;
            }
        for (int i = 0; i < n; i++) {
            changed |= next[i] != flood[i];
            flood[i] = next[i];
            count[i] += flood[i];
        }
        reached = count[tr * w + tc] > 0;
    }
    if (!reached) return -1;
    int hi = 0, lo = 1 << 30;
    for (int i = 0; i < n; i++) {
        if (count[i] > hi) hi = count[i];
        if (count[i] > 0 && count[i] < lo) lo = count[i];
    }
    return hi - lo > 0 ? hi - lo : 0;
}

static int first_or_zero(const level_t *l, int tile, int *r, int *c)
{
    int i = lv_first(l, tile);
    *r = i < 0 ? 0 : i / l->w;
    *c = i < 0 ? 0 : i % l->w;
    return i >= 0;
}

static int loss_delta(const level_t *a, const level_t *b, int tile, int n)
{
    return abs(lv_count(a, tile) - n) - abs(lv_count(b, tile) - n);
}

/* The reference's reward with its kernel; scorpion_target 0 (weight 0.5)
 * for scenario 1, 1 (weight 1.0) for scenario 2. */
static float kernel_reward(const level_t *prev, const level_t *curr, int scenario)
{
    int pr, pc, dr, dc, kr[5] = {0}, kc[5] = {0};
    first_or_zero(curr, TILE_PLAYER, &pr, &pc);
    first_or_zero(curr, TILE_DOOR, &dr, &dc);
    lv_find(curr, TILE_KEY, kr, kc, 5);
    int access[2] = {0, 0};
    const level_t *lv[2] = {prev, curr};
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < 5; k++) access[j] |= kernel_path(lv[j], pr, pc, kr[k], kc[k]) > 0;
    int dp = kernel_path(prev, pr, pc, dr, dc), dn = kernel_path(curr, pr, pc, dr, dc);
    float r = (float)loss_delta(prev, curr, TILE_KEY, 1) + 0.5f * (float)(access[1] - access[0]);
    r += dp == -1 && dn >= 0 ? 3.0f : dp >= 0 && dn == -1 ? -3.0f : 0.0f;
    r += (float)loss_delta(prev, curr, TILE_BAT, 1) + 0.5f * (float)loss_delta(prev, curr, TILE_SPIDER, 0);
    r += scenario == 1 ? 0.5f * (float)loss_delta(prev, curr, TILE_SCORPION, 0)
                       : (float)loss_delta(prev, curr, TILE_SCORPION, 1);
    return r;
}

/* The hand-drawn values are the kernel's too (the transcription is right
 * where it has been worked out by hand). */
static void human_ref_kernel_on_hand_pairs(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof hand_pairs / sizeof hand_pairs[0]; i++) {
        static pcg_test_grid a, b;
        draw(&a, hand_pairs[i].prev);
        draw(&b, hand_pairs[i].curr);
        for (int s = 0; s < 2; s++)
            if (kernel_reward(&a.l, &b.l, s + 1) != hand_pairs[i].want[s])
                fail_msg("kernel, scenario %d, %s: %g", s + 1, hand_pairs[i].what,
                         (double)kernel_reward(&a.l, &b.l, s + 1));
    }
}

/* Random small levels (players and doors anywhere, or missing, several
 * keys, every tile), each with a few cells changed, and transitions of the
 * engine's own episodes: the port equals the kernel on every one. */
static void human_ref_matches_kernel(void **state)
{
    (void)state;
    reward_prog *p[2] = {compile_file("rewards/human/scenario1.c"), compile_file("rewards/human/scenario2.c")};
    philox_stream s;
    philox_stream_init(&s, 77, 1, 0);
    static unsigned char ta[PCG_MAX_CELLS], tb[PCG_MAX_CELLS];
    long nonzero = 0;
    for (int it = 0; it < 3000; it++) {
        int h = 1 + below(&s, 9), w = 1 + below(&s, 9);
        int walls = below(&s, 5);
        for (int i = 0; i < h * w; i++) {
            int x = below(&s, 16);
            ta[i] = (unsigned char)(x < 7 ? TILE_EMPTY : x < 7 + walls ? TILE_WALL : below(&s, N_TILES));
        }
        memcpy(tb, ta, (size_t)(h * w));
        int edits = 1 + below(&s, 3);
        for (int e = 0; e < edits; e++)
            tb[below(&s, h * w)] = (unsigned char)below(&s, N_TILES);
        level_t a = {h, w, ta}, b = {h, w, tb};
        for (int sc = 0; sc < 2; sc++) {
            float want = kernel_reward(&a, &b, sc + 1), got = reward_prog_call(&a, &b, p[sc]);
            if (got != want) fail_msg("random pair %d (%dx%d), scenario %d: port %g, kernel %g", it, h, w, sc + 1,
                                      (double)got, (double)want);
            nonzero += want != 0.0f;
        }
    }
    assert_true(nonzero > 1000); /* the pairs do move the reward */
    env_t e;
    assert_int_equal(env_alloc(&e, 2, 16, 16, VARIANT_DUNGEON, 3), 0);
    int acts[2];
    unsigned char before[2][256];
    for (int t = 0; t < e.cfg.episode_len - 1; t++) {
        for (int i = 0; i < 2; i++) memcpy(before[i], env_level(&e, i).t, 256);
        env_random_actions(&e, 5, (uint64_t)t, acts);
        env_step(&e, acts);
        for (int i = 0; i < 2; i++) {
            level_t a = {16, 16, before[i]}, b = env_level(&e, i);
            for (int sc = 0; sc < 2; sc++)
                if (reward_prog_call(&a, &b, p[sc]) != kernel_reward(&a, &b, sc + 1))
                    fail_msg("episode step %d env %d scenario %d: port %g, kernel %g", t, i, sc + 1,
                             (double)reward_prog_call(&a, &b, p[sc]), (double)kernel_reward(&a, &b, sc + 1));
        }
    }
    env_free(&e);
    reward_prog_free(p[0]);
    reward_prog_free(p[1]);
}

/* ---- marker lines ---- */

static void human_ref_markers(void **state)
{
    (void)state;
    static const char *port = "/* pcgrllm-human: reference-port */\n", *own = "/* pcgrllm-human: engine-design */\n";
    for (int sc = 1; sc <= 4; sc++) {
        char path[64];
        snprintf(path, sizeof path, "rewards/human/scenario%d.c", sc);
        char *human = pcg_test_slurp(path);
        snprintf(path, sizeof path, "rewards/engine/scenario%d.c", sc);
        char *engine = pcg_test_slurp(path);
        assert_non_null(human);
        assert_non_null(engine);
        const char *marker = sc <= 2 ? port : own;
        assert_memory_equal(human, marker, strlen(marker));
        assert_memory_equal(engine, own, strlen(own));
        if (sc >= 3) { /* the copy's code is the engine's, under its own comment */
            const char *body = strstr(engine, "\n/* Human-written reward");
            assert_non_null(body);
            const char *copy = strstr(human, body);
            assert_non_null(copy);
            assert_string_equal(copy, body);
        }
        free(human);
        free(engine);
    }
}

PCG_TESTS(human_ref, cmocka_unit_test(human_ref_hand_pairs), cmocka_unit_test(human_ref_kernel_on_hand_pairs),
          cmocka_unit_test(human_ref_matches_kernel), cmocka_unit_test(human_ref_markers))
