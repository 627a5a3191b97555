/* `pcgrllm train --backend`: flag errors, the CPU fallback of auto, and
 * (with a GPU) the device trainer end to end through the command line:
 * checkpoints that resume on either backend, matmul modes, generation;
 * the levels of a reward that turns non-finite in training. */
#include "harness.h"
#include "backend.h"
#include "checkpoint.h"
#include "levelio.h"
#include "reward_jit.h"
#include "train_worker.h"
#include "util.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int one_line_text(const char *s)
{
    size_t n = strlen(s);
    while (n && s[n - 1] == '\n') n--;
    return n > 0 && memchr(s, '\n', n) == NULL;
}

static const char *walls_reward(void)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/tb_walls.c", pcg_test_tmpdir());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("float compute_reward(const level_t *prev, const level_t *curr)\n"
          "{ return (float)(count_tiles(curr, WALL) - count_tiles(prev, WALL)); }\n", f);
    fclose(f);
    return path;
}

#define TINY "--scenario 1 --envs 4 --rollout 16 --epochs 1 --preset small --threads 1 --quiet"

/* Bad flags are one line and exit 2; without a GPU --backend cuda is one
 * line, exit 1, before anything is written; auto trains on the CPU. */
static void train_backend_flags(void **state)
{
    (void)state;
    const char *bin = pcg_test_binary(), *tmp = pcg_test_tmpdir(), *reward = walls_reward();
    char out[4096];
    int rc = pcg_test_sh(out, sizeof out, "%s train --reward %s " TINY " --steps 64 --backend tpu --out %s/tb0", bin,
                         reward, tmp);
    assert_int_equal(rc, 2);
    assert_true(one_line_text(out));
    assert_non_null(strstr(out, "--backend must be cpu, cuda or auto"));
    rc = pcg_test_sh(out, sizeof out, "%s train --reward %s " TINY " --steps 64 --backend cpu --matmul tf32 --out %s/tb0",
                     bin, reward, tmp);
    assert_int_equal(rc, 2);
    assert_true(one_line_text(out));
    assert_non_null(strstr(out, "needs the CUDA trainer"));
    rc = pcg_test_sh(out, sizeof out, "%s train --reward %s " TINY " --steps 64 --backend cuda --matmul fp16 --out %s/tb0",
                     bin, reward, tmp);
    assert_int_equal(rc, 2);
    assert_true(one_line_text(out));
    rc = pcg_test_sh(out, sizeof out, "%s train --reward %s " TINY " --steps 64 --save-every -1 --out %s/tb0", bin,
                     reward, tmp);
    assert_int_equal(rc, 2);
    assert_true(one_line_text(out));
    char why[300];
    if (pcg_test_cuda_devices(why, sizeof why) > 0) return; /* the rest is for machines without a GPU */
    rc = pcg_test_sh(out, sizeof out, "%s train --reward %s " TINY " --steps 64 --backend cuda --out %s/tb1; "
                     "test -e %s/tb1 && echo DIR-CREATED", bin, reward, tmp, tmp);
    assert_true(one_line_text(out));
    assert_non_null(strstr(out, "no usable CUDA device"));
    assert_null(strstr(out, "DIR-CREATED"));
    rc = pcg_test_sh(out, sizeof out, "%s train --reward %s " TINY " --steps 64 --backend auto --matmul bf16 --out %s/tb2",
                     bin, reward, tmp);
    if (rc) print_error("%s\n", out);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "training on the CPU"));
    assert_int_equal(pcg_test_sh(out, sizeof out, "cat %s/tb2/train.json", tmp), 0);
    assert_non_null(strstr(out, "\"backend\": \"cpu\""));
    assert_non_null(strstr(out, "\"matmul\": \"fp32\""));
}

/* Parameters of a run directory's checkpoint. */
static float *checkpoint_params(const char *dir, size_t *n, int64_t *step)
{
    char path[2200], err[600];
    snprintf(path, sizeof path, "%s/%s", dir, CHECKPOINT_FILE);
    checkpoint_state st;
    if (checkpoint_read(&st, path, err, sizeof err)) fail_msg("%s", err);
    float *p = st.params;
    *n = st.n_params;
    *step = st.step;
    st.params = NULL;
    checkpoint_state_free(&st);
    return p;
}

/* With a GPU: train on the device through the command line in every
 * matmul mode; a device checkpoint resumes on the device and on the CPU,
 * each close to an uninterrupted device run (not required bit-equal: the
 * CPU adds in another order than the device, and cuBLAS may pick other
 * kernels in another process);
 * generate and eval read it. */
static void cuda_train_cli_nvrtc(void **state)
{
    (void)state;
    char why[300];
    if (pcg_test_cuda_devices(why, sizeof why) <= 0) {
        char line[400];
        snprintf(line, sizeof line, "no CUDA device (%s)", why);
        pcg_test_skip("cuda_train_cli_nvrtc", line);
    }
    const char *bin = pcg_test_binary(), *tmp = pcg_test_tmpdir(), *reward = walls_reward();
    char out[8192];
    static const char *const modes[] = {"fp32", "tf32", "bf16"};
    for (int m = 0; m < 3; m++) {
        int rc = pcg_test_sh(out, sizeof out,
                             "%s train --reward %s " TINY " --steps 192 --backend cuda --save-every 0 --matmul %s "
                             "--out %s/cu_%s && cat %s/cu_%s/train.json && echo && wc -l < %s/cu_%s/metrics.jsonl",
                             bin, reward, modes[m], tmp, modes[m], tmp, modes[m], tmp, modes[m]);
        if (rc) fail_msg("train --backend cuda --matmul %s: %s", modes[m], out);
        assert_non_null(strstr(out, "\"backend\": \"cuda\""));
        assert_non_null(strstr(out, modes[m]));
        assert_non_null(strstr(out, "\n3\n"));
    }
    /* 2 updates, then resume to 3 on the device and on the CPU */
    int rc = pcg_test_sh(out, sizeof out,
                         "%s train --reward %s " TINY " --steps 128 --backend cuda --save-every 0 --out %s/cu_part && "
                         "cp -r %s/cu_part %s/cu_cpu && cp -r %s/cu_part %s/cu_before && "
                         "%s train --resume --out %s/cu_part --steps 192 --backend cuda --quiet && "
                         "%s train --resume --out %s/cu_cpu --steps 192 --backend cpu --threads 1 --quiet",
                         bin, reward, tmp, tmp, tmp, tmp, tmp, bin, tmp, bin, tmp);
    if (rc) fail_msg("resume: %s", out);
    /* the third update of the uninterrupted run moved the parameters by
     * |full - before|; a resumed third update must land near it (float
     * order differences only), far closer than that move */
    const char *names[4] = {"cu_fp32", "cu_before", "cu_part", "cu_cpu"};
    size_t n[4];
    int64_t step[4];
    float *p[4];
    for (int i = 0; i < 4; i++) {
        char d[700];
        snprintf(d, sizeof d, "%s/%s", tmp, names[i]);
        p[i] = checkpoint_params(d, &n[i], &step[i]);
        assert_true(n[i] == n[0]);
    }
    assert_true(step[0] == 192 && step[1] == 128 && step[2] == 192 && step[3] == 192);
    double moved = 0;
    for (size_t k = 0; k < n[0]; k++) moved += ((double)p[0][k] - p[1][k]) * ((double)p[0][k] - p[1][k]);
    assert_true(moved > 0);
    for (int i = 2; i < 4; i++) {
        double off = 0;
        for (size_t k = 0; k < n[0]; k++) off += ((double)p[i][k] - p[0][k]) * ((double)p[i][k] - p[0][k]);
        if (sqrt(off) > 0.25 * sqrt(moved))
            fail_msg("%s: the resumed update lands %.3g from the uninterrupted one, which moved %.3g", names[i],
                     sqrt(off), sqrt(moved));
    }
    for (int i = 0; i < 4; i++) free(p[i]);
    rc = pcg_test_sh(out, sizeof out, "%s generate --policy %s/cu_part --n 3 --out %s/cu_levels && "
                     "%s eval --scenario 1 %s/cu_levels/level_*.txt", bin, tmp, tmp, bin, tmp);
    if (rc) fail_msg("generate/eval: %s", out);
    assert_non_null(strstr(out, "fitness"));
}

/* A reward that turns NaN only on some transitions (a key appears): the
 * CPU trainer stops, and the transition's levels are saved beside the
 * checkpoint and named in the error; the reward gives NaN on them. */
static void train_nonfinite_keeps_levels(void **state)
{
    (void)state;
    const char *src = "float compute_reward(const level_t *prev, const level_t *curr)\n"
                      "{\n"
                      "    float zero = 0.0f;\n"
                      "    return count_tiles(curr, KEY) > count_tiles(prev, KEY) ? zero / zero : 0.0f;\n"
                      "}\n";
    train_settings ts;
    memset(&ts, 0, sizeof ts);
    ppo_config_default(&ts.cfg);
    ts.cfg.n_envs = 4;
    ts.cfg.n_steps = 16;
    ts.cfg.n_epochs = 1;
    snprintf(ts.cfg.preset, sizeof ts.cfg.preset, "small");
    ts.steps = 256;
    ts.threads = 1;
    ts.quiet = 1;
    ts.watchdog = 60;
    char dir[600], err[2048];
    snprintf(dir, sizeof dir, "%s/nonfinite", pcg_test_tmpdir());
    assert_int_equal(make_dirs(dir), 0);
    assert_int_equal(train_in_worker(&ts, src, NULL, 0, dir, NULL, err, sizeof err), 1);
    if (!strstr(err, "a reward is not finite: compute_reward returned NaN for the levels saved as ") ||
        !strstr(err, "/nonfinite_prev.txt and nonfinite_curr.txt"))
        fail_msg("got: %s", err);
    level_t prev, curr;
    unsigned char tp[PCG_MAX_CELLS], tc[PCG_MAX_CELLS];
    char path[700];
    snprintf(path, sizeof path, "%s/nonfinite_prev.txt", dir);
    if (level_read(path, &prev, tp, err, sizeof err)) fail_msg("%s", err);
    snprintf(path, sizeof path, "%s/nonfinite_curr.txt", dir);
    if (level_read(path, &curr, tc, err, sizeof err)) fail_msg("%s", err);
    assert_true(prev.h == ts.cfg.map_h && prev.w == ts.cfg.map_w && curr.h == prev.h && curr.w == prev.w);
    assert_true(lv_count(&curr, TILE_KEY) > lv_count(&prev, TILE_KEY));
    reward_prog *p = reward_compile_cpu(src, err, sizeof err);
    assert_non_null(p);
    assert_true(isnan(reward_prog_call(&prev, &curr, p)));
    reward_prog_free(p);
}

PCG_TESTS(train_backend, cmocka_unit_test(train_backend_flags), cmocka_unit_test(cuda_train_cli_nvrtc),
          cmocka_unit_test(train_nonfinite_keeps_levels))
