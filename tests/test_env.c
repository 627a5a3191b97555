/* The batched CPU environment and the Philox streams (docs/method.md#environment). */
#include "harness.h"
#include "env.h"
#include <omp.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

/* Known-answer vectors of Philox4x32-10 (Salmon et al., Random123). */
static void env_philox_known_answers(void **state)
{
    (void)state;
    pcg_u32x4 c = {{0, 0, 0, 0}};
    pcg_u32x4 r = philox4x32_10(c, 0, 0);
    assert_int_equal(r.v[0], 0x6627e8d5u);
    assert_int_equal(r.v[1], 0xe169c58du);
    assert_int_equal(r.v[2], 0xbc57ac4cu);
    assert_int_equal(r.v[3], 0x9b00dbd8u);
    pcg_u32x4 c2 = {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}};
    r = philox4x32_10(c2, 0xffffffffu, 0xffffffffu);
    assert_int_equal(r.v[0], 0x408f276du);
    assert_int_equal(r.v[1], 0x41c83b0eu);
    assert_int_equal(r.v[2], 0xa20bc7c6u);
    assert_int_equal(r.v[3], 0x6d5451fdu);
    pcg_u32x4 c3 = {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}};
    r = philox4x32_10(c3, 0xa4093822u, 0x299f31d0u);
    assert_int_equal(r.v[0], 0xd16cfe09u);
    assert_int_equal(r.v[1], 0x94fdccebu);
    assert_int_equal(r.v[2], 0x5001e420u);
    assert_int_equal(r.v[3], 0x24126ea1u);
}

/* The sequential reader gives draw k of the block layout, from any start. */
static void env_philox_stream_positions(void **state)
{
    (void)state;
    philox_stream s;
    philox_stream_init(&s, 42, 7, 0);
    pcg_u32 seq[23];
    for (int k = 0; k < 23; k++) seq[k] = philox_next(&s);
    for (int start = 0; start < 23; start++) {
        philox_stream t;
        philox_stream_init(&t, 42, 7, (pcg_u64)start);
        assert_int_equal(philox_next(&t), seq[start]);
        pcg_u32x4 b = philox_block(42, 7, (pcg_u64)start / 4);
        assert_int_equal(b.v[start % 4], seq[start]);
    }
    assert_int_equal(philox_below(0xffffffffu, 4), 3);
    assert_int_equal(philox_below(0, 4), 0);
}

static void check_reset(const env_t *e, int i)
{
    const dungeon_cfg *c = &e->cfg;
    level_t l = env_level(e, i);
    const unsigned char *fz = e->frozen + (size_t)i * e->cells;
    int p = lv_first(&l, TILE_PLAYER);
    int second = c->variant == VARIANT_TREASURE ? TILE_TREASURE : TILE_DOOR;
    assert_int_equal(lv_count(&l, TILE_PLAYER), 1);
    assert_int_equal(lv_count(&l, second), 1);
    int k = -1;
    for (int j = 0; j < 4; j++)
        if (dungeon_corner(c, j) == p) k = j;
    assert_true(k >= 0);
    assert_int_equal(lv_first(&l, second), dungeon_corner(c, (k + 2) & 3));
    int nfrozen = 0;
    for (int cell = 0; cell < e->cells; cell++) nfrozen += fz[cell];
    assert_int_equal(nfrozen, 18);
    int fixed[2] = {p, lv_first(&l, second)};
    for (int f = 0; f < 2; f++)
        for (int dr = -1; dr <= 1; dr++)
            for (int dc = -1; dc <= 1; dc++) {
                int cell = fixed[f] + dr * c->w + dc;
                assert_int_equal(fz[cell], 1);
                if (dr || dc) assert_int_equal(l.t[cell], TILE_EMPTY);
            }
    /* nothing else is a fixed tile, and no tile of the other variant */
    assert_int_equal(lv_count(&l, c->variant == VARIANT_TREASURE ? TILE_DOOR : TILE_TREASURE), 0);
    for (int cell = 0; cell < e->cells; cell++) assert_true(l.t[cell] >= TILE_EMPTY && l.t[cell] <= TILE_TREASURE);
    assert_int_equal(e->steps[i], 0);
}

static void env_reset_places_fixed_tiles(void **state)
{
    (void)state;
    int sizes[3][2] = {{16, 16}, {8, 12}, {21, 9}};
    for (int v = 0; v < 2; v++)
        for (int s = 0; s < 3; s++) {
            env_t e;
            assert_int_equal(env_alloc(&e, 200, sizes[s][0], sizes[s][1], v, 99 + s), 0);
            int corners[4] = {0};
            for (int i = 0; i < e.n; i++) {
                check_reset(&e, i);
                level_t l = env_level(&e, i);
                for (int j = 0; j < 4; j++) corners[j] += lv_first(&l, TILE_PLAYER) == dungeon_corner(&e.cfg, j);
            }
            for (int j = 0; j < 4; j++) assert_true(corners[j] > 20); /* all four corners occur */
            env_free(&e);
        }
}

/* The initial draw follows the weights 58:50:2:1:1:1. */
static void env_initial_tile_frequencies(void **state)
{
    (void)state;
    env_t e;
    assert_int_equal(env_alloc(&e, 4000, 16, 16, VARIANT_DUNGEON, 5), 0);
    long count[N_TILES] = {0}, total = 0;
    for (int i = 0; i < e.n; i++)
        for (int cell = 0; cell < e.cells; cell++) {
            if (e.frozen[(size_t)i * e.cells + cell]) continue;
            count[e.maps[(size_t)i * e.cells + cell]]++;
            total++;
        }
    double expect[N_TILES] = {0, 58, 50, 0, 1, 1, 1, 2, 0, 0};
    for (int t = 0; t < N_TILES; t++) {
        double p = expect[t] / 113.0, got = (double)count[t] / (double)total;
        double sd = sqrt(p * (1 - p) / (double)total);
        assert_true(fabs(got - p) <= 5 * sd + 1e-12);
    }
    env_free(&e);
}

static void env_visit_order_and_frozen_edits(void **state)
{
    (void)state;
    env_t e;
    assert_int_equal(env_alloc(&e, 3, 16, 16, VARIANT_DUNGEON, 11), 0);
    int act[3];
    unsigned char before[3][256];
    for (int i = 0; i < 3; i++) memcpy(before[i], e.maps + i * 256, 256);
    for (int t = 0; t < 256; t++) {
        for (int i = 0; i < 3; i++) act[i] = (i + t) % 6;
        env_step(&e, act);
        for (int i = 0; i < 3; i++) {
            int a = (i + t) % 6;
            unsigned char *m = e.maps + i * 256;
            /* step t wrote cell t (row-major), unless frozen */
            int expect = e.frozen[i * 256 + t] ? before[i][t] : dungeon_action_tile(a);
            assert_int_equal(m[t], expect);
            /* cells not yet visited are untouched */
            if (t + 1 < 256) assert_memory_equal(m + t + 1, before[i] + t + 1, (size_t)(255 - t));
            assert_int_equal(e.steps[i], t + 1);
            assert_int_equal(e.dones[i], 0);
        }
    }
    /* the fixed tiles survived every attempt to overwrite them */
    for (int i = 0; i < 3; i++) {
        level_t l = env_level(&e, i);
        assert_int_equal(lv_count(&l, TILE_PLAYER), 1);
        assert_int_equal(lv_count(&l, TILE_DOOR), 1);
    }
    env_free(&e);
}

static float reward_walls(const level_t *prev, const level_t *curr, void *ctx)
{
    (void)ctx;
    return (float)(lv_count(curr, TILE_WALL) - lv_count(prev, TILE_WALL));
}

static void env_episode_length_and_auto_reset(void **state)
{
    (void)state;
    env_t e;
    assert_int_equal(env_alloc(&e, 4, 16, 16, VARIANT_TREASURE, 3), 0);
    env_set_reward(&e, reward_walls, NULL);
    assert_int_equal(e.cfg.episode_len, 768);
    assert_int_equal(e.cfg.n_actions, 7);
    int act[4];
    unsigned char first[4][256];
    int walls0[4];
    for (int i = 0; i < 4; i++) {
        memcpy(first[i], e.maps + i * 256, 256);
        level_t l = env_level(&e, i);
        walls0[i] = lv_count(&l, TILE_WALL);
    }
    double sum[4] = {0};
    int walls_end[4] = {0};
    for (int t = 0; t < 768; t++) {
        env_random_actions(&e, 17, (uint64_t)t, act);
        if (t == 767) /* the level before the last step, whose reward is 0 (the reference's terminal reward) */
            for (int i = 0; i < 4; i++) {
                level_t l = env_level(&e, i);
                walls_end[i] = lv_count(&l, TILE_WALL);
            }
        env_step(&e, act);
        for (int i = 0; i < 4; i++) {
            sum[i] += e.rewards[i];
            assert_int_equal(e.dones[i], t == 767);
        }
    }
    assert_int_equal((int)e.log.episodes, 4);
    for (int i = 0; i < 4; i++) {
        /* a telescoping reward sums to the change over the rewarded steps */
        assert_true(fabs(sum[i] - (walls_end[i] - walls0[i])) < 1e-3);
        assert_int_equal(e.steps[i], 0);
        check_reset(&e, i);
        assert_true(memcmp(first[i], e.maps + i * 256, 256) != 0); /* a new map */
        assert_int_equal(e.rng_pos[i], 2 * dungeon_reset_draws(&e.cfg));
    }
    env_free(&e);
}

static void run_trajectory(int threads, unsigned char *maps_out, unsigned char *obs_out, float *rew_out)
{
    omp_set_num_threads(threads);
    env_t e;
    assert_int_equal(env_alloc(&e, 37, 16, 16, VARIANT_DUNGEON, 123456789ull), 0);
    env_set_reward(&e, reward_walls, NULL);
    int act[37];
    for (int t = 0; t < 1000; t++) {
        env_random_actions(&e, 5, (uint64_t)t, act);
        env_step(&e, act);
        for (int i = 0; i < 37; i++) rew_out[t * 37 + i] = e.rewards[i];
    }
    memcpy(maps_out, e.maps, (size_t)37 * 256);
    memcpy(obs_out, e.obs, (size_t)37 * e.obs_size);
    env_free(&e);
}

static void env_same_seed_any_thread_count(void **state)
{
    (void)state;
    int saved = omp_get_max_threads();
    static unsigned char m1[37 * 256], m2[37 * 256], o1[37 * 961], o2[37 * 961];
    static float r1[37000], r2[37000];
    run_trajectory(1, m1, o1, r1);
    run_trajectory(2, m2, o2, r2);
    run_trajectory(3, m2, o2, r2); /* more threads than cores */
    omp_set_num_threads(saved);
    assert_memory_equal(m1, m2, sizeof m1);
    assert_memory_equal(o1, o2, sizeof o1);
    assert_memory_equal(r1, r2, sizeof r1);
    /* a different seed gives different maps */
    env_t a, b;
    assert_int_equal(env_alloc(&a, 8, 16, 16, 0, 1), 0);
    assert_int_equal(env_alloc(&b, 8, 16, 16, 0, 2), 0);
    assert_true(memcmp(a.maps, b.maps, 8 * 256) != 0);
    /* environment i's map does not depend on how many environments run */
    env_t c;
    assert_int_equal(env_alloc(&c, 3, 16, 16, 0, 1), 0);
    assert_memory_equal(a.maps, c.maps, 3 * 256);
    env_free(&a);
    env_free(&b);
    env_free(&c);
}

/* The observation the policy sees before the edit of step t is the crop
 * centred on cell t - 1 (the cell just edited; cell 0 at t = 0) under
 * OBS_CENTRE_LAST, the default, and on cell t under OBS_CENTRE_NEXT:
 * corners, edges, the passes' seams and the next episode's start. */
static void env_observation_crop(void **state)
{
    (void)state;
    int hs[2] = {16, 7}, ws[2] = {16, 10};
    for (int k = 0; k < 4; k++) {
        int h = hs[k & 1], w = ws[k & 1], next = k >> 1;
        env_t e;
        assert_int_equal(env_alloc(&e, 2, h, w, VARIANT_DUNGEON, 8), 0);
        assert_int_equal(e.cfg.rules.obs_centre, OBS_CENTRE_LAST);
        env_rules rules = e.cfg.rules;
        rules.obs_centre = next ? OBS_CENTRE_NEXT : OBS_CENTRE_LAST;
        env_set_rules(&e, &rules);
        int ch = 2 * h - 1, cw = 2 * w - 1, cells = h * w, T = 3 * cells;
        assert_int_equal(e.obs_size, ch * cw);
        int act[2] = {1, 1};
        for (int u = 0; u < T + 3; u++) {
            int t = u % T; /* the step within the episode: past T the next one starts */
            int centre = next || t == 0 ? t % cells : (t - 1) % cells;
            int r = centre / w, c = centre % w;
            for (int i = 0; i < 2; i++) {
                const unsigned char *o = e.obs + (size_t)i * e.obs_size;
                const unsigned char *m = e.maps + (size_t)i * e.cells, *fz = e.frozen + (size_t)i * e.cells;
                for (int y = 0; y < ch; y++)
                    for (int x = 0; x < cw; x++) {
                        int mr = r - (h - 1) + y, mc = c - (w - 1) + x;
                        int expect = (mr < 0 || mc < 0 || mr >= h || mc >= w)
                                         ? (TILE_BORDER | OBS_FROZEN_BIT)
                                         : (m[mr * w + mc] | (fz[mr * w + mc] ? OBS_FROZEN_BIT : 0));
                        assert_int_equal(o[y * cw + x], expect);
                    }
                assert_int_equal(o[(h - 1) * cw + (w - 1)] & OBS_TILE_MASK, m[centre]);
            }
            env_step(&e, act);
        }
        env_free(&e);
    }
}

static float reward_one(const level_t *prev, const level_t *curr, void *ctx)
{
    (void)prev, (void)curr;
    __atomic_add_fetch((int *)ctx, 1, __ATOMIC_RELAXED);
    return 1.0f;
}

/* The last step of an episode gets the environment's reward, 0, under
 * TERMINAL_REWARD_ENV (the default; the designed reward is not even
 * computed there), and the designed reward under TERMINAL_REWARD_DESIGNED;
 * every other step gets the designed reward either way. */
static void env_terminal_reward(void **state)
{
    (void)state;
    for (int designed = 0; designed < 2; designed++) {
        env_t e;
        assert_int_equal(env_alloc(&e, 3, 5, 6, VARIANT_DUNGEON, 4), 0);
        int calls = 0, act[3] = {0, 1, 2}, T = e.cfg.episode_len;
        env_rules rules = e.cfg.rules;
        assert_int_equal(rules.terminal_reward, TERMINAL_REWARD_ENV);
        rules.terminal_reward = designed ? TERMINAL_REWARD_DESIGNED : TERMINAL_REWARD_ENV;
        env_set_rules(&e, &rules);
        env_set_reward(&e, reward_one, &calls);
        for (int t = 0; t < 2 * T; t++) {
            env_step(&e, act);
            int last = t % T == T - 1;
            for (int i = 0; i < 3; i++) {
                assert_int_equal(e.dones[i], last);
                assert_true(e.rewards[i] == (last && !designed ? 0.0f : 1.0f));
            }
        }
        assert_int_equal(calls, 3 * 2 * (designed ? T : T - 1));
        assert_true(e.log.episode_return == 3 * 2 * (designed ? T : T - 1));
        env_free(&e);
    }
}

static void env_rejects_bad_sizes(void **state)
{
    (void)state;
    env_t e;
    assert_int_equal(env_alloc(&e, 0, 16, 16, 0, 1), -1);
    assert_int_equal(env_alloc(&e, 4, 3, 16, 0, 1), -1);
    assert_int_equal(env_alloc(&e, 4, 16, PCG_MAX_SIDE + 1, 0, 1), -1);
    int v = -1;
    assert_int_equal(parse_variant("treasure", &v), 0);
    assert_int_equal(v, VARIANT_TREASURE);
    assert_int_equal(parse_variant("castle", &v), -1);
}

/* The levels command writes parseable files; random play changes them. */
static void env_levels_command(void **state)
{
    (void)state;
    char out[4096];
    const char *dir = pcg_test_tmpdir();
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s levels --n 4 --seed 9 --out %s/start", pcg_test_binary(), dir), 0);
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s levels --n 4 --seed 9 --policy random --out %s/rand",
                                 pcg_test_binary(), dir), 0);
    assert_int_not_equal(pcg_test_sh(out, sizeof out, "cmp -s %s/start/level_003.txt %s/rand/level_003.txt", dir, dir), 0);
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s levels --n 4 --seed x --out %s/bad", pcg_test_binary(), dir), 2);
    assert_non_null(strstr(out, "--seed"));
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s levels --seed 1 --out %s/bad", pcg_test_binary(), dir), 2);
}

/* final_maps: the level each episode ended with, which the auto-reset then
 * replaced; the last step's edit applied by hand (as `levels --policy
 * random` does) to a twin batch that stops short of it gives the same. */
static void env_final_maps_keep_last_level(void **state)
{
    (void)state;
    env_t e, twin;
    assert_int_equal(env_alloc(&e, 3, 8, 8, VARIANT_DUNGEON, 5), 0);
    assert_int_equal(env_alloc(&twin, 3, 8, 8, VARIANT_DUNGEON, 5), 0);
    unsigned char final[3 * 64];
    memset(final, 0, sizeof final);
    e.final_maps = final;
    int act[3], len = e.cfg.episode_len;
    for (int t = 0; t < len; t++) {
        env_random_actions(&e, 11, (uint64_t)t, act);
        if (t < len - 1) env_step(&twin, act);
        else
            for (int i = 0; i < 3; i++)
                dungeon_apply(&twin.cfg, t, act[i], twin.maps + i * 64, twin.frozen + i * 64,
                              twin.pad + (size_t)i * twin.cfg.pad_h * twin.cfg.pad_w);
        env_step(&e, act);
    }
    assert_memory_equal(final, twin.maps, sizeof final);
    assert_memory_not_equal(final, e.maps, sizeof final); /* the next episodes began */
    env_free(&e);
    env_free(&twin);
}

PCG_TESTS(env, cmocka_unit_test(env_philox_known_answers), cmocka_unit_test(env_philox_stream_positions),
          cmocka_unit_test(env_reset_places_fixed_tiles), cmocka_unit_test(env_initial_tile_frequencies),
          cmocka_unit_test(env_visit_order_and_frozen_edits), cmocka_unit_test(env_episode_length_and_auto_reset),
          cmocka_unit_test(env_same_seed_any_thread_count), cmocka_unit_test(env_observation_crop),
          cmocka_unit_test(env_terminal_reward),
          cmocka_unit_test(env_rejects_bad_sizes), cmocka_unit_test(env_levels_command),
          cmocka_unit_test(env_final_maps_keep_last_level))
