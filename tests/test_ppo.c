/* PPO trainer: GAE by hand, action sampling, checkpoints (round trip,
 * resume equality, damaged files refused) and a learning run. */
#include "harness.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "checkpoint.h"
#include "ppo.h"
#include "util.h"

/* GAE with gamma = lambda = 0.5, worked by hand:
 * env 0: r = 1 2 3, V = 0.5 1 1.5, done after step 1, V(last) = 2
 *   t2: delta = 3 + 0.5*2 - 1.5 = 2.5                  adv 2.5   ret 4
 *   t1: episode ends: delta = 2 - 1 = 1                 adv 1     ret 2
 *   t0: delta = 1 + 0.5*1 - 0.5 = 1, + 0.25*1           adv 1.25  ret 1.75
 * env 1: r = 0 0 1, V = 0, done after step 2 (V(last) = 10 is ignored)
 *   adv 0.0625 0.25 1 */
static void ppo_gae_hand_example(void **state)
{
    (void)state;
    float r[6] = {1, 0, 2, 0, 3, 1}, v[6] = {0.5f, 0, 1, 0, 1.5f, 0}, last[2] = {2, 10}, adv[6], ret[6];
    unsigned char d[6] = {0, 0, 1, 0, 0, 1};
    ppo_gae(3, 2, r, v, d, last, 0.5f, 0.5f, adv, ret);
    float want_adv[6] = {1.25f, 0.0625f, 1, 0.25f, 2.5f, 1}, want_ret[6] = {1.75f, 0.0625f, 2, 0.25f, 4, 1};
    for (int i = 0; i < 6; i++) {
        assert_true(fabsf(adv[i] - want_adv[i]) < 1e-6f);
        assert_true(fabsf(ret[i] - want_ret[i]) < 1e-6f);
    }
    /* lambda = 1, gamma = 1 and no ends: advantage = sum of future rewards + V(last) - V */
    unsigned char nd[3] = {0, 0, 0};
    float r1[3] = {1, 1, 1}, v1[3] = {0, 0, 0}, l1[1] = {5};
    ppo_gae(3, 1, r1, v1, nd, l1, 1, 1, adv, ret);
    assert_true(fabsf(adv[0] - 8) < 1e-6f && fabsf(adv[1] - 7) < 1e-6f && fabsf(adv[2] - 6) < 1e-6f);
}

static void ppo_sample_inverse_cdf(void **state)
{
    (void)state;
    float logits[3] = {0, logf(2), logf(1)}; /* p = 1/4 1/2 1/4 */
    float lp;
    assert_int_equal(ppo_sample(logits, 3, 0.0f, &lp), 0);
    assert_true(fabsf(lp - logf(0.25f)) < 1e-6f);
    assert_int_equal(ppo_sample(logits, 3, 0.26f, &lp), 1);
    assert_true(fabsf(lp - logf(0.5f)) < 1e-6f);
    assert_int_equal(ppo_sample(logits, 3, 0.74f, &lp), 1);
    assert_int_equal(ppo_sample(logits, 3, 0.76f, &lp), 2);
    assert_int_equal(ppo_sample(logits, 3, 0.9999999f, &lp), 2);
    /* draws are uniform-ish and reproducible */
    int counts[3] = {0};
    for (int i = 0; i < 4000; i++) counts[ppo_sample(logits, 3, ppo_action_draw(7, i % 5, (uint64_t)i), &lp)]++;
    assert_true(counts[1] > 1800 && counts[1] < 2200 && counts[0] > 850 && counts[2] > 850);
    assert_true(ppo_action_draw(7, 1, 3) == ppo_action_draw(7, 1, 3));
    assert_true(ppo_action_draw(7, 1, 3) != ppo_action_draw(7, 2, 3));
}

/* r = change in the number of walls: the return of an episode is the final
 * wall count minus the starting one, so writing WALL everywhere pays. */
static float wall_delta(const level_t *prev, const level_t *curr, void *ctx)
{
    (void)ctx;
    return (float)(lv_count(curr, TILE_WALL) - lv_count(prev, TILE_WALL));
}

static void tiny_config(ppo_config *c, uint64_t seed)
{
    ppo_config_default(c);
    snprintf(c->preset, sizeof c->preset, "small");
    c->n_envs = 4;
    c->n_steps = 16;
    c->n_epochs = 2;
    c->n_minibatches = 2;
    c->chunk = 12; /* minibatches of 32 in chunks of 12, 12, 8 */
    c->seed = seed;
}

static void train(ppo_t *p, int updates)
{
    ppo_metrics m;
    for (int i = 0; i < updates; i++) assert_int_equal(ppo_train_update(p, &m), 0);
}

static void assert_same_state(const ppo_t *a, const ppo_t *b)
{
    assert_int_equal((int)a->nn.n_params, (int)b->nn.n_params);
    assert_memory_equal(a->nn.params, b->nn.params, a->nn.n_params * sizeof(float));
    assert_memory_equal(a->adam_m, b->adam_m, a->nn.n_params * sizeof(float));
    assert_memory_equal(a->adam_v, b->adam_v, a->nn.n_params * sizeof(float));
    assert_true(a->adam_t == b->adam_t && a->step == b->step && a->update == b->update);
    assert_memory_equal(a->env.maps, b->env.maps, (size_t)a->env.n * a->env.cells);
    assert_memory_equal(a->env.frozen, b->env.frozen, (size_t)a->env.n * a->env.cells);
    assert_memory_equal(a->env.obs, b->env.obs, (size_t)a->env.n * a->env.obs_size);
    assert_memory_equal(a->env.steps, b->env.steps, sizeof(int) * (size_t)a->env.n);
    assert_memory_equal(a->env.rng_pos, b->env.rng_pos, sizeof(uint64_t) * (size_t)a->env.n);
}

static void ppo_checkpoint_round_trip(void **state)
{
    (void)state;
    ppo_config c;
    tiny_config(&c, 5);
    /* the details other than the defaults, so that the file must hold them */
    for (int k = 0; k < PPO_N_DETAILS; k++) ppo_detail_set(&c, k, 1);
    ppo_t a, b;
    char err[512], path[512];
    assert_int_equal(ppo_init(&a, &c, wall_delta, NULL, err, sizeof err), 0);
    train(&a, 1);
    snprintf(path, sizeof path, "%s/round.ckpt", pcg_test_tmpdir());
    assert_int_equal(checkpoint_save(&a, path, err, sizeof err), 0);
    assert_int_equal(checkpoint_load(&b, path, wall_delta, NULL, err, sizeof err), 0);
    assert_memory_equal(&a.cfg, &b.cfg, sizeof a.cfg);
    assert_same_state(&a, &b);
    assert_int_equal((int)b.update, 1);
    ppo_config pc;
    nn_t nn;
    int64_t step;
    assert_int_equal(checkpoint_load_policy(path, &pc, &nn, &step, err, sizeof err), 0);
    assert_memory_equal(nn.params, a.nn.params, nn.n_params * sizeof(float));
    assert_true(step == a.step && step == 16 * 4);
    assert_true(pc.rules.obs_centre == OBS_CENTRE_NEXT && pc.rules.terminal_reward == TERMINAL_REWARD_DESIGNED &&
                pc.rules.final_level == FINAL_LEVEL_768 && pc.conv_init == CONV_INIT_ORTHOGONAL);
    nn_free(&nn);
    /* the backend-neutral state (what the CUDA trainer writes through):
     * read, it holds the trainer's arrays; written again, the same bytes */
    checkpoint_state st;
    assert_int_equal(checkpoint_read(&st, path, err, sizeof err), 0);
    assert_true(st.n_params == a.nn.n_params && st.n_envs == a.env.n && st.cells == a.env.cells);
    assert_memory_equal(st.adam_v, a.adam_v, st.n_params * sizeof(float));
    assert_memory_equal(st.maps, a.env.maps, (size_t)st.n_envs * st.cells);
    assert_memory_equal(st.rng_pos, a.env.rng_pos, (size_t)st.n_envs * sizeof(uint64_t));
    assert_true(st.step == a.step && st.update == a.update && st.adam_t == a.adam_t);
    char path2[600], out[256];
    snprintf(path2, sizeof path2, "%s.again", path);
    assert_int_equal(checkpoint_write(&st, path2, err, sizeof err), 0);
    assert_int_equal(pcg_test_sh(out, sizeof out, "cmp %s %s", path, path2), 0);
    /* settings that do not match the arrays written with them: refused */
    st.cfg.n_envs += 1;
    assert_int_equal(checkpoint_write(&st, path2, err, sizeof err), 0);
    checkpoint_state bad;
    assert_int_equal(checkpoint_read(&bad, path2, err, sizeof err), -1);
    assert_non_null(strstr(err, "corrupt checkpoint"));
    assert_null(bad.params);
    checkpoint_state_free(&st);
    ppo_free(&a);
    ppo_free(&b);
}

/* k updates, save, load, n-k more == n updates without a stop. */
static void resume_equals_uninterrupted(const char *preset)
{
    ppo_config c;
    tiny_config(&c, 9);
    snprintf(c.preset, sizeof c.preset, "%s", preset);
    if (!strcmp(preset, "tiny")) /* the engine's first observation centre and last-step reward resume too */
        c.rules.obs_centre = OBS_CENTRE_NEXT, c.rules.terminal_reward = TERMINAL_REWARD_DESIGNED;
    c.n_steps = 200; /* episodes of 768 steps end (and reset) inside the run */
    c.n_envs = 2;
    c.n_epochs = 1;
    c.chunk = 100;
    ppo_t full, part, resumed;
    char err[512], path[512];
    assert_int_equal(ppo_init(&full, &c, wall_delta, NULL, err, sizeof err), 0);
    train(&full, 5);
    assert_int_equal(ppo_init(&part, &c, wall_delta, NULL, err, sizeof err), 0);
    train(&part, 3);
    snprintf(path, sizeof path, "%s/resume.ckpt", pcg_test_tmpdir());
    assert_int_equal(checkpoint_save(&part, path, err, sizeof err), 0);
    ppo_free(&part);
    assert_int_equal(checkpoint_load(&resumed, path, wall_delta, NULL, err, sizeof err), 0);
    train(&resumed, 2);
    assert_same_state(&full, &resumed);
    assert_true(full.last_episode_reward == resumed.last_episode_reward); /* an episode ended at step 768 */
    assert_false(isnan(full.last_episode_reward));
    /* and training did move the parameters */
    ppo_t fresh;
    assert_int_equal(ppo_init(&fresh, &c, wall_delta, NULL, err, sizeof err), 0);
    assert_true(memcmp(fresh.nn.params, full.nn.params, full.nn.n_params * sizeof(float)) != 0);
    ppo_free(&fresh);
    ppo_free(&full);
    ppo_free(&resumed);
}

static void ppo_resume_equals_uninterrupted(void **state)
{
    (void)state;
    resume_equals_uninterrupted("small");
    resume_equals_uninterrupted("tiny");
}

static void write_bytes(const char *path, const unsigned char *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal((int)fwrite(p, 1, n, f), (int)n);
    fclose(f);
}

static void expect_refused(const char *path, const char *needle)
{
    ppo_t p;
    char err[512] = "";
    assert_int_equal(checkpoint_load(&p, path, wall_delta, NULL, err, sizeof err), -1);
    if (!strstr(err, needle)) {
        print_error("error '%s' does not say '%s'\n", err, needle);
        fail();
    }
    assert_null(strchr(err, '\n'));
    nn_t nn;
    ppo_config c;
    assert_int_equal(checkpoint_load_policy(path, &c, &nn, NULL, err, sizeof err), -1);
}

static void ppo_checkpoint_damaged_refused(void **state)
{
    (void)state;
    ppo_config c;
    tiny_config(&c, 3);
    ppo_t a;
    char err[512], path[512], bad[512];
    assert_int_equal(ppo_init(&a, &c, wall_delta, NULL, err, sizeof err), 0);
    train(&a, 1);
    snprintf(path, sizeof path, "%s/good.ckpt", pcg_test_tmpdir());
    snprintf(bad, sizeof bad, "%s/bad.ckpt", pcg_test_tmpdir());
    assert_int_equal(checkpoint_save(&a, path, err, sizeof err), 0);
    ppo_free(&a);
    long len;
    unsigned char *raw = (unsigned char *)read_file(path, 1l << 30, &len, err, sizeof err);
    assert_non_null(raw);
    /* truncated anywhere */
    long cuts[] = {0, 5, 23, 100, len / 2, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        write_bytes(bad, raw, (size_t)cuts[i]);
        expect_refused(bad, cuts[i] < 24 ? "not a pcgrllm checkpoint" : "truncated");
    }
    /* one flipped bit in the parameters, the config, the env block */
    long flips[] = {30, 200, len / 2, len - 20};
    for (size_t i = 0; i < sizeof flips / sizeof flips[0]; i++) {
        raw[flips[i]] ^= 0x04;
        write_bytes(bad, raw, (size_t)len);
        expect_refused(bad, "checksum");
        raw[flips[i]] ^= 0x04;
    }
    /* another format version */
    raw[8] = CHECKPOINT_VERSION + 1;
    write_bytes(bad, raw, (size_t)len);
    expect_refused(bad, "version");
    raw[8] = CHECKPOINT_VERSION;
    /* not a checkpoint, missing file, trailing garbage */
    write_bytes(bad, (const unsigned char *)"hello world, this is not a checkpoint", 37);
    expect_refused(bad, "not a pcgrllm checkpoint");
    expect_refused("/nonexistent/x.ckpt", "cannot open");
    unsigned char *longer = malloc((size_t)len + 4);
    memcpy(longer, raw, (size_t)len);
    memset(longer + len, 0, 4);
    write_bytes(bad, longer, (size_t)len + 4);
    expect_refused(bad, "corrupt");
    /* the untouched bytes still load */
    write_bytes(bad, raw, (size_t)len);
    assert_int_equal(checkpoint_load(&a, bad, wall_delta, NULL, err, sizeof err), 0);
    ppo_free(&a);
    free(longer);
    free(raw);
}

/* Learning: the small preset on the wall reward beats the random policy by
 * a wide margin after a short run.  The random policy ends with about a
 * sixth of the cells as walls (return about -65 on 16x16 maps); a policy
 * that writes WALL everywhere gets about +130. */
static void ppo_learns_wall_reward(void **state)
{
    (void)state;
    const int n_eval = 16;
    float rnd[16], pol[16];
    uint64_t seeds[2] = {1, 2};
    for (int s = 0; s < 2; s++) {
        ppo_config c;
        ppo_config_default(&c);
        snprintf(c.preset, sizeof c.preset, "small");
        c.n_envs = 8;
        c.n_epochs = 4;
        c.lr = 1e-3f;
        c.seed = seeds[s];
        ppo_t p;
        char err[256];
        assert_int_equal(ppo_init(&p, &c, wall_delta, NULL, err, sizeof err), 0);
        double t0 = now_seconds();
        train(&p, 8);
        double secs = now_seconds() - t0;
        assert_int_equal(ppo_play_episode(&p.nn, n_eval, 16, 16, VARIANT_DUNGEON, 1000 + s, 77, &c.rules, wall_delta,
                                          NULL, NULL, pol),
                         0);
        assert_int_equal(ppo_play_episode(NULL, n_eval, 16, 16, VARIANT_DUNGEON, 1000 + s, 77, &c.rules, wall_delta,
                                          NULL, NULL, rnd),
                         0);
        double mr = 0, mp = 0;
        for (int i = 0; i < n_eval; i++) mr += rnd[i] / n_eval, mp += pol[i] / n_eval;
        print_message("seed %llu: %lld steps in %.1f s; mean episode return random %.1f, trained %.1f\n",
                      (unsigned long long)c.seed, (long long)p.step, secs, mr, mp);
        assert_true(mr < -40);       /* the random policy loses walls */
        assert_true(mp > mr + 80);   /* the trained one gains them */
        ppo_free(&p);
    }
}

/* The CLI end to end: train a tiny run, resume it, generate levels from
 * it, refuse a damaged checkpoint with one line. */
static void ppo_cli_train_resume_generate(void **state)
{
    (void)state;
    const char *bin = pcg_test_binary(), *tmp = pcg_test_tmpdir();
    char out[8192], path[1024];
    snprintf(path, sizeof path, "%s/walls.c", tmp);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("float compute_reward(const level_t *prev, const level_t *curr)\n"
          "{ return (float)(count_tiles(curr, WALL) - count_tiles(prev, WALL)); }\n", f);
    fclose(f);
    int rc = pcg_test_sh(out, sizeof out,
                         "%s train --reward %s/walls.c --scenario 1 --steps 64 --envs 2 --rollout 16 --epochs 1 "
                         "--preset small --threads 1 --out %s/run",
                         bin, tmp, tmp);
    if (rc) print_error("%s\n", out);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "trained 64 steps"));
    assert_int_equal(pcg_test_sh(out, sizeof out, "wc -l < %s/run/metrics.jsonl", tmp), 0);
    assert_int_equal(atoi(out), 2);
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s train --resume --out %s/run --steps 96 --threads 1", bin, tmp), 0);
    assert_int_equal(pcg_test_sh(out, sizeof out, "tail -n 1 %s/run/metrics.jsonl", tmp), 0);
    assert_non_null(strstr(out, "{\"update\":3,\"step\":96,"));
    assert_non_null(strstr(out, "\"approx_kl\":"));
    assert_non_null(strstr(out, "\"clip_frac\":"));
    rc = pcg_test_sh(out, sizeof out, "%s generate --policy %s/run --n 3 --out %s/levels && ls %s/levels", bin, tmp,
                     tmp, tmp);
    if (rc) print_error("%s\n", out);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "level_002.txt"));
    assert_non_null(strstr(out, "level_002.png"));
    assert_non_null(strstr(out, "levels.png"));
    /* the same maps and actions give the same levels */
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s generate --policy %s/run --n 3 --out %s/levels2 && "
                                 "cmp %s/levels/level_001.txt %s/levels2/level_001.txt", bin, tmp, tmp, tmp, tmp), 0);
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s eval --scenario 1 %s/levels/level_*.txt", bin, tmp), 0);
    assert_non_null(strstr(out, "fitness"));
    /* Ctrl-C (SIGINT to the process group) during a run: exit 130, a
     * checkpoint that resumes */
    rc = pcg_test_sh(out, sizeof out,
                     "setsid %s train --reward %s/walls.c --scenario 1 --steps 1000000 --envs 2 --rollout 16 "
                     "--epochs 1 --preset small --threads 1 --quiet --out %s/intr > %s/intr.log 2>&1 & pid=$!; "
                     "i=0; while [ ! -s %s/intr/metrics.jsonl ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; "
                     "kill -INT -$pid; "
                     "i=0; while kill -0 $pid 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; "
                     "kill -KILL -$pid 2>/dev/null; wait $pid; echo rc=$?; tail -n 2 %s/intr.log",
                     bin, tmp, tmp, tmp, tmp, tmp);
    assert_int_equal(rc, 0);
    if (!strstr(out, "rc=130")) print_error("%s\n", out);
    assert_non_null(strstr(out, "rc=130"));
    assert_non_null(strstr(out, "interrupted: the checkpoint at step"));
    rc = pcg_test_sh(out, sizeof out, "%s train --resume --out %s/intr --steps 640 --threads 1 --quiet", bin, tmp);
    if (rc) print_error("%s\n", out);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "trained 640 steps"));
    /* a damaged checkpoint: one line, exit 1 */
    assert_int_equal(pcg_test_sh(out, sizeof out, "printf 'x' | dd of=%s/run/checkpoint.bin bs=1 seek=100 "
                                 "conv=notrunc 2>/dev/null", tmp), 0);
    rc = pcg_test_sh(out, sizeof out, "%s generate --policy %s/run --n 3 --out %s/levels3", bin, tmp, tmp);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "checksum"));
    assert_true(strchr(out, '\n') == out + strlen(out) - 1); /* exactly one line */
    rc = pcg_test_sh(out, sizeof out, "%s train --resume --out %s/run --steps 200", bin, tmp);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "checksum"));
    /* usage errors */
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s train --reward %s/walls.c --scenario 9 --steps 5 --out %s/x",
                                 bin, tmp, tmp), 2);
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s train --reward %s/walls.c --scenario 1 --steps 5 --envs 3 "
                                 "--minibatches 7 --out %s/x", bin, tmp, tmp), 2);
    assert_non_null(strstr(out, "minibatches must divide"));
}

/* The tiny preset through the commands: train, resume, generate (the
 * checkpoint names the preset, and generation rebuilds its network from
 * it); an unknown preset is refused with the names of the known ones. */
static void ppo_cli_tiny_preset(void **state)
{
    (void)state;
    const char *bin = pcg_test_binary(), *tmp = pcg_test_tmpdir();
    char out[8192];
    int rc = pcg_test_sh(out, sizeof out,
                         "%s train --reward rewards/human/scenario1.c --scenario 1 --steps 64 --envs 2 --rollout 16 "
                         "--epochs 1 --preset tiny --threads 1 --quiet --out %s/tiny",
                         bin, tmp);
    if (rc) print_error("%s\n", out);
    assert_int_equal(rc, 0);
    assert_int_equal(pcg_test_sh(out, sizeof out, "cat %s/tiny/train.json", tmp), 0);
    assert_non_null(strstr(out, "\"preset\": \"tiny\""));
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s train --resume --out %s/tiny --steps 96 --threads 1 --quiet", bin,
                                 tmp),
                     0);
    assert_non_null(strstr(out, "trained 96 steps"));
    ppo_config c;
    nn_t nn;
    int64_t step;
    char err[512], path[1024];
    snprintf(path, sizeof path, "%s/tiny/checkpoint.bin", tmp);
    assert_int_equal(checkpoint_load_policy(path, &c, &nn, &step, err, sizeof err), 0);
    assert_string_equal(c.preset, "tiny");
    assert_true(step == 96 && nn.cfg.view_h == 5 && nn.cfg.crop_h == 31);
    nn_free(&nn);
    rc = pcg_test_sh(out, sizeof out, "%s generate --policy %s/tiny --n 3 --out %s/tiny_levels && ls %s/tiny_levels",
                     bin, tmp, tmp, tmp);
    if (rc) print_error("%s\n", out);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "level_002.txt"));
    rc = pcg_test_sh(out, sizeof out, "%s train --reward rewards/human/scenario1.c --scenario 1 --steps 64 "
                     "--preset huge --out %s/huge", bin, tmp);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(out, "--preset must be paper, small or tiny"));
}

/* train.json's text names every detail as value v (0 the reference's). */
static void assert_details_named(const char *json, int v)
{
    for (int k = 0; k < PPO_N_DETAILS; k++) {
        char want[64];
        snprintf(want, sizeof want, "\"%s\": \"%s\"", ppo_details[k].key, ppo_details[k].names[v]);
        if (!strstr(json, want)) fail_msg("train.json lacks %s: %s", want, json);
    }
}

/* train's reference details: the defaults and the options in train.json
 * and in the checkpoint, kept by --resume (flags given with it are
 * ignored), followed by generate (and its --final-level); a bad name is
 * one line, exit 2. */
static void ppo_cli_reference_details(void **state)
{
    (void)state;
    const char *bin = pcg_test_binary(), *tmp = pcg_test_tmpdir();
    char out[8192], path[1024], err[512];
    const char *common = "--reward rewards/human/scenario1.c --scenario 1 --steps 32 --envs 2 --rollout 16 --epochs 1 "
                         "--preset tiny --threads 1 --quiet";
    int rc = pcg_test_sh(out, sizeof out, "%s train %s --out %s/ref && cat %s/ref/train.json", bin, common, tmp, tmp);
    if (rc) print_error("%s\n", out);
    assert_int_equal(rc, 0);
    assert_details_named(out, 0);
    rc = pcg_test_sh(out, sizeof out,
                     "%s train %s --obs-centre next --terminal-reward designed --final-level edits768 "
                     "--conv-init orthogonal --out %s/eng && %s train --resume --out %s/eng --steps 64 --threads 1 "
                     "--quiet --obs-centre last && cat %s/eng/train.json",
                     bin, common, tmp, bin, tmp, tmp);
    if (rc) print_error("%s\n", out);
    assert_int_equal(rc, 0);
    assert_details_named(out, 1);
    ppo_config c;
    nn_t nn;
    int64_t step;
    snprintf(path, sizeof path, "%s/eng/checkpoint.bin", tmp);
    assert_int_equal(checkpoint_load_policy(path, &c, &nn, &step, err, sizeof err), 0);
    assert_true(step == 64 && c.rules.obs_centre == OBS_CENTRE_NEXT && c.rules.final_level == FINAL_LEVEL_768 &&
                c.rules.terminal_reward == TERMINAL_REWARD_DESIGNED && c.conv_init == CONV_INIT_ORTHOGONAL);
    nn_free(&nn);
    /* generate keeps the level the policy was trained for, unless told */
    struct {
        const char *run, *flag, *want;
    } gen[] = {{"ref", "", "the map after 767 of 768 edits"},
               {"eng", "", "the map after 768 of 768 edits"},
               {"eng", "--final-level edits767", "the map after 767 of 768 edits"}};
    for (int k = 0; k < 3; k++) {
        rc = pcg_test_sh(out, sizeof out, "%s generate --policy %s/%s %s --n 1 --threads 1 --out %s/gen%d && "
                         "head -n 1 %s/gen%d/level_000.txt", bin, tmp, gen[k].run, gen[k].flag, tmp, k, tmp, k);
        if (rc) print_error("%s\n", out);
        assert_int_equal(rc, 0);
        assert_non_null(strstr(out, gen[k].want));
    }
    rc = pcg_test_sh(out, sizeof out, "%s train %s --obs-centre middle --out %s/bad", bin, common, tmp);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(out, "--obs-centre must be last or next"));
    assert_true(strchr(out, '\n') == out + strlen(out) - 1);
    rc = pcg_test_sh(out, sizeof out, "%s generate --policy %s/ref --final-level all --out %s/bad2", bin, tmp, tmp);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(out, "--final-level must be edits767 or edits768"));
}

/* Generation keeps the map after 767 of the 768 edits by default (the
 * reference's level) and after all of them with FINAL_LEVEL_768: the two
 * levels of an environment differ only in the last step's cell (row-major
 * cell 255 on the third pass), and there in the levels whose last action
 * changes it; the same holds for random play.  The returns count the
 * steps applied: the 768th step adds its reward only with the designed
 * terminal reward. */
static void ppo_final_level_keeps_767_edits(void **state)
{
    (void)state;
    enum { N = 12, CELLS = 256 };
    nn_config nc;
    assert_int_equal(nn_preset_config("small", 31, 31, 6, &nc), 0);
    nn_t nn;
    assert_int_equal(nn_alloc(&nn, &nc), 0);
    nn_init(&nn, 13, CONV_INIT_LECUN);
    for (int policy = 0; policy < 2; policy++) {
        const nn_t *pol = policy ? &nn : NULL;
        unsigned char l767[N * CELLS], l768[N * CELLS];
        float r767[N], r768[N], rdes[N];
        env_rules rules = {OBS_CENTRE_LAST, TERMINAL_REWARD_ENV, FINAL_LEVEL_767};
        assert_int_equal(ppo_play_episode(pol, N, 16, 16, VARIANT_DUNGEON, 31, 5, NULL, wall_delta, NULL, l767, r767), 0);
        rules.final_level = FINAL_LEVEL_768;
        assert_int_equal(ppo_play_episode(pol, N, 16, 16, VARIANT_DUNGEON, 31, 5, &rules, wall_delta, NULL, l768, r768), 0);
        int changed = 0;
        for (int i = 0; i < N; i++) {
            for (int c = 0; c < CELLS - 1; c++) assert_int_equal(l767[i * CELLS + c], l768[i * CELLS + c]);
            changed += l767[i * CELLS + CELLS - 1] != l768[i * CELLS + CELLS - 1];
            assert_true(r767[i] == r768[i]); /* the last step's reward is 0 */
        }
        assert_true(changed > 0);
        rules.terminal_reward = TERMINAL_REWARD_DESIGNED;
        unsigned char ldes[N * CELLS];
        assert_int_equal(ppo_play_episode(pol, N, 16, 16, VARIANT_DUNGEON, 31, 5, &rules, wall_delta, NULL, ldes, rdes), 0);
        assert_memory_equal(ldes, l768, sizeof ldes);
        for (int i = 0; i < N; i++) {
            level_t a = {16, 16, l767 + i * CELLS}, b = {16, 16, l768 + i * CELLS};
            assert_true(fabsf(rdes[i] - r767[i] - (float)(lv_count(&b, TILE_WALL) - lv_count(&a, TILE_WALL))) < 1e-4f);
        }
    }
    nn_free(&nn);
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* A checkpoint of format version 1 (written before the details existed: no
 * 16 bytes of them after the seed) is read as trained the engine's first
 * way: centred on the next cell, the designed reward on the last step, all
 * 768 edits kept, orthogonal convolutions. */
static void ppo_checkpoint_version1_reads(void **state)
{
    (void)state;
    ppo_config c;
    tiny_config(&c, 3);
    ppo_t a;
    char err[512], path[512];
    assert_int_equal(ppo_init(&a, &c, wall_delta, NULL, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/v2.ckpt", pcg_test_tmpdir());
    assert_int_equal(checkpoint_save(&a, path, err, sizeof err), 0);
    size_t len;
    unsigned char *raw = checkpoint_file_bytes(path, &len, err, sizeof err);
    assert_non_null(raw);
    /* header 24 bytes, then the config up to the seed (96 bytes), then the details */
    const size_t details = 24 + 96, dlen = 4 * PPO_N_DETAILS;
    uint64_t seed;
    memcpy(&seed, raw + details - 8, 8);
    assert_true(seed == 3);
    unsigned char *v1 = malloc(len - dlen);
    assert_non_null(v1);
    memcpy(v1, raw, details);
    memcpy(v1 + details, raw + details + dlen, len - details - dlen);
    uint32_t version = 1;
    uint64_t size = len - dlen, sum;
    memcpy(v1 + 8, &version, 4);
    memcpy(v1 + 16, &size, 8);
    sum = fnv1a(v1, size - 8);
    memcpy(v1 + size - 8, &sum, 8);
    snprintf(path, sizeof path, "%s/v1.ckpt", pcg_test_tmpdir());
    write_bytes(path, v1, size);
    checkpoint_state st;
    assert_int_equal(checkpoint_read(&st, path, err, sizeof err), 0);
    assert_true(st.cfg.rules.obs_centre == OBS_CENTRE_NEXT && st.cfg.rules.terminal_reward == TERMINAL_REWARD_DESIGNED &&
                st.cfg.rules.final_level == FINAL_LEVEL_768 && st.cfg.conv_init == CONV_INIT_ORTHOGONAL);
    assert_memory_equal(st.params, a.nn.params, st.n_params * sizeof(float));
    assert_true(st.cfg.seed == 3 && st.cfg.n_envs == 4);
    checkpoint_state_free(&st);
    free(v1);
    free(raw);
    ppo_free(&a);
}

PCG_TESTS(ppo, cmocka_unit_test(ppo_gae_hand_example), cmocka_unit_test(ppo_sample_inverse_cdf),
          cmocka_unit_test(ppo_checkpoint_round_trip), cmocka_unit_test(ppo_resume_equals_uninterrupted),
          cmocka_unit_test(ppo_checkpoint_damaged_refused), cmocka_unit_test(ppo_cli_train_resume_generate),
          cmocka_unit_test(ppo_cli_tiny_preset), cmocka_unit_test(ppo_learns_wall_reward),
          cmocka_unit_test(ppo_final_level_keeps_767_edits), cmocka_unit_test(ppo_checkpoint_version1_reads),
          cmocka_unit_test(ppo_cli_reference_details))
