/* The simulation library's work counters (backend.h, pcg_cuda_work; docs/cuda.md,
 * "Work counters and the H200 model"), the H200 model over them, and the
 * errors of `bench train|env --backend cuda-sim`. */
#include "harness.h"
#include "backend.h"
#include "device_model.h"
#include "dungeon.h"
#include "nn.h"
#include "ppo.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pcg_cuda_work *find(const pcg_cuda_api *api, const char *name)
{
    int n = 0;
    const pcg_cuda_work *w = api->work_counters(&n);
    for (int i = 0; i < n; i++)
        if (!strcmp(w[i].name, name)) return &w[i];
    return NULL;
}

static int n_entries(const pcg_cuda_api *api)
{
    int n = -1;
    api->work_counters(&n);
    return n;
}

/* "note: kernel bytes not counted: ..." in a build without the hooks */
static int bytes_counted(const pcg_cuda_api *api)
{
    int n = 0;
    const pcg_cuda_work *w = api->work_counters(&n);
    for (int i = 0; i < n; i++)
        if (strstr(w[i].name, "kernel bytes not counted")) return 0;
    return 1;
}

/* One step of n environments with random actions: the fused step kernel,
 * one thread per environment in blocks of 128, the observation (a crop of
 * the padded map) read and written per environment. */
static void check_env_step(const pcg_cuda_api *api)
{
    const int n = 37, side = 16;
    pcg_cuda_env *e = api->env_alloc(n, side, side, VARIANT_DUNGEON, 5, PCG_OBS_THREAD);
    assert_non_null(e);
    api->work_reset();
    assert_int_equal(n_entries(api), 0);
    assert_int_equal(api->env_step_random(e, 9, 0, 1), 0);
    const pcg_cuda_work *w = find(api, "(step_kernel<true, false, true>)");
    assert_non_null(w);
    assert_int_equal(w->launches, 1);
    assert_int_equal(w->threads, 128); /* one block covers the 37 */
    assert_int_equal(w->flops, n);     /* the declared add of the reward into the return */
    uint64_t obs = (uint64_t)(2 * side - 1) * (2 * side - 1), cells = (uint64_t)side * side;
    uint64_t pad = (uint64_t)(3 * side - 2) * (3 * side - 2);
    if (bytes_counted(api)) {
        assert_true(w->bytes_read >= n * obs && w->bytes_read >= n * cells);
        assert_true(w->bytes_written >= n * obs);
        /* no more than the whole state of each environment, and a little */
        assert_true(w->bytes_read <= n * (pad + 3 * cells + 256));
        assert_true(w->bytes_written <= n * (pad + 3 * cells + 256));
    } else {
        assert_int_equal(w->bytes_read, 0);
        assert_int_equal(w->bytes_written, 0);
    }
    api->env_free(e);
}

/* A row-major m x k by k x n product: cuBLAS's column-major n x m x k,
 * 2mnk FLOPs exactly. */
static void check_sgemm(const pcg_cuda_api *api)
{
    const int m = 48, n = 20, k = 36;
    size_t mark = api->arena_mark();
    float *A = api->arena_alloc(sizeof(float) * m * k), *B = api->arena_alloc(sizeof(float) * k * n),
          *C = api->arena_alloc(sizeof(float) * m * n);
    assert_true(A && B && C);
    api->work_reset();
    assert_int_equal(api->sgemm_nn(m, n, k, 1.0f, A, B, 0.0f, C), 0);
    char name[64];
    snprintf(name, sizeof name, PCG_WORK_BLAS "gemm nn %dx%dx%d", n, m, k);
    const pcg_cuda_work *w = find(api, name);
    assert_non_null(w);
    assert_int_equal(w->launches, 1);
    assert_int_equal(w->flops, 2ull * m * n * k);
    assert_int_equal(w->bytes_read, 4ull * (m * k + k * n));
    assert_int_equal(w->bytes_written, 4ull * m * n);
    api->arena_release(mark);
}

/* The FLOPs of the entries of a kernel family: named `name`, or
 * `name<H>` (a template's instantiations); how many entries in *n, each
 * of which the model must price as `kind`. */
static uint64_t family_flops(const pcg_cuda_api *api, const char *name, int kind, int *n)
{
    int count = 0;
    const pcg_cuda_work *w = api->work_counters(&count);
    size_t len = strlen(name);
    uint64_t flops = 0;
    *n = 0;
    for (int i = 0; i < count; i++) {
        if (strncmp(w[i].name, name, len) || (w[i].name[len] && w[i].name[len] != '<')) continue;
        assert_int_equal(device_model_kind(&w[i]), kind);
        flops += w[i].flops, ++*n;
    }
    return flops;
}

/* Conv 2's kernels in one update of trainer p in matmul mode `mode`
 * (the simulation reports an H200): TF32 and bf16 take the tensor-core
 * implicit GEMMs (plain or staged), which the model prices as tensor-core
 * kernels (the staged forward and input gradient in bf16 at the bf16
 * rate, on bf16 fragments) and which declare the FMA kernels' FLOPs (fma_flops, from an
 * fp32 update on the FMA kernels, PCGRLLM_SIM_CONV=implicit); fp32 takes
 * the staged kernels' split, which declares its three products (between
 * two and three times the FMA kernels' FLOPs: the epilogue's are not
 * tripled), or, where a shape does not fit them, the FMA kernels.
 * fma_mode: this update is the FMA one, which fills fma_flops. */
static void check_conv_kernels(const pcg_cuda_api *api, pcg_cuda_ppo *p, int mode, int fma_mode,
                               uint64_t fma_flops[3])
{
    static const char *const fma[] = {"conv_fwd_kernel", "conv_wgrad_kernel", "conv_dgrad_kernel"};
    static const char *const tc[] = {"conv_fwd_tc_kernel", "conv_wgrad_tc_kernel", "conv_dgrad_tc_kernel"};
    static const char *const staged[] = {"conv_fwd_staged_tc_kernel", "conv_wgrad_staged_tc_kernel",
                                         "conv_dgrad_staged_tc_kernel"};
    assert_int_equal(api->blas_set_math(mode), 0);
    api->work_reset();
    ppo_metrics m;
    assert_int_equal(api->ppo_train_update(p, &m), 0);
    for (int i = 0; i < 3; i++) {
        int nf, nt, ns;
        uint64_t f = family_flops(api, fma[i], WORK_KERNEL, &nf);
        uint64_t t = family_flops(api, tc[i], WORK_TENSOR_KERNEL, &nt);
        /* bf16 takes bf16 fragments in the staged forward and input gradient */
        int staged_kind = mode == PCG_MATH_BF16 && i != 1 ? WORK_BF16_KERNEL : WORK_TENSOR_KERNEL;
        uint64_t st = family_flops(api, staged[i], staged_kind, &ns);
        if (fma_mode) {
            if (nf != 1 || nt + ns)
                fail_msg("fp32 on the FMA kernels: %s ran %d times, tensor-core kernels %d", fma[i], nf, nt + ns);
            fma_flops[i] = f;
        } else if (mode == PCG_MATH_FP32) {
            if (nt || nf + ns != 1)
                fail_msg("fp32: %s ran %d times, %s %d, %s %d", fma[i], nf, tc[i], nt, staged[i], ns);
            if (nf) assert_int_equal(f, fma_flops[i]);
            else if (st <= 2 * fma_flops[i] || st > 3 * fma_flops[i])
                fail_msg("fp32: %s's split declares %llu FLOPs, the FMA kernels %llu", staged[i],
                         (unsigned long long)st, (unsigned long long)fma_flops[i]);
        } else {
            if (!(nt + ns) || nf)
                fail_msg("mode %d: %s and %s ran %d times, %s %d", mode, tc[i], staged[i], nt + ns, fma[i], nf);
            assert_int_equal(t + st, fma_flops[i]); /* the same update's shapes, the same rows */
        }
    }
    /* no im2col in any mode: the products stay implicit */
    assert_null(find(api, "im2col_kernel"));
    assert_int_equal(api->blas_set_math(PCG_MATH_FP32), 0);
}

/* A small trainer's rollout and update launch every kernel of the trainer
 * but the reward split: each has a FLOP row that fits its arguments. */
static void check_flop_rows(const pcg_cuda_api *api)
{
    ppo_config cfg;
    ppo_config_default(&cfg);
    cfg.n_envs = 4, cfg.n_steps = 8, cfg.n_epochs = 1, cfg.n_minibatches = 1;
    snprintf(cfg.preset, sizeof cfg.preset, "tiny");
    nn_config nc;
    nn_t nn;
    assert_int_equal(nn_preset_config("tiny", 2 * cfg.map_h - 1, 2 * cfg.map_w - 1, 6, &nc), 0);
    assert_int_equal(nn_alloc(&nn, &nc), 0);
    nn_init(&nn, 1, cfg.conv_init);
    pcg_cuda_ppo *p = api->ppo_init(&cfg, &nc, nn.off, nn.n_params, nn.params, NULL);
    assert_non_null(p);
    api->work_reset();
    ppo_metrics m;
    assert_int_equal(api->ppo_train_update(p, &m), 0);
    int n = 0, kernels = 0;
    const pcg_cuda_work *w = api->work_counters(&n);
    for (int i = 0; i < n; i++) {
        if (strstr(w[i].name, "FLOP row")) fail_msg("%s", w[i].name);
        kernels += device_model_kind(&w[i]) == WORK_KERNEL && w[i].flops > 0;
    }
    assert_true(kernels >= 10);
    /* the one-hot layers take the kernels that keep their re-read data in shared memory */
    assert_non_null(find(api, "conv_onehot_fwd_tiled_kernel"));
    assert_non_null(find(api, "conv_onehot_bwd_tiled_kernel"));
    assert_null(find(api, "conv_onehot_fwd_kernel"));
    assert_non_null(find(api, "dense_onehot_fwd_tiled_kernel<64>")); /* this trainer's small passes */
    assert_non_null(find(api, "dense_onehot_bwd_tiled_kernel"));
    const pcg_cuda_work *adam = find(api, "adam_kernel");
    assert_non_null(adam);
    assert_int_equal(adam->flops, 16 * nn.n_params);
    /* the sanitizer's run sends the trainer's conv 2 through im2col by name */
    const char *path = getenv("PCGRLLM_SIM_CONV");
    uint64_t conv_flops[3] = {0, 0, 0};
    if (!path || !*path || !strcmp(path, "auto")) {
        setenv("PCGRLLM_SIM_CONV", "implicit", 1);
        check_conv_kernels(api, p, PCG_MATH_FP32, 1, conv_flops);
        unsetenv("PCGRLLM_SIM_CONV");
        for (int mode = PCG_MATH_FP32; mode <= PCG_MATH_BF16; mode++) check_conv_kernels(api, p, mode, 0, conv_flops);
    }
    api->ppo_free(p);
    nn_free(&nn);
}

static void cuda_work_counters(void **state)
{
    (void)state;
    char why[600] = "", line[700];
    int devices = pcg_test_cuda_devices(why, sizeof why);
    const pcg_cuda_api *api = devices > 0 ? backend_cuda_load(why, sizeof why) : NULL;
    if (!api) {
        snprintf(line, sizeof line, devices > 0 ? "%s" : "no CUDA device (%s)", why);
        pcg_test_skip("cuda_work_counters", line);
    }
    if (!api->simulated) {
        /* a device counts nothing */
        int n = -1;
        assert_null(api->work_counters(&n));
        assert_int_equal(n, 0);
        return;
    }
    check_env_step(api);
    check_sgemm(api);
    check_flop_rows(api);
    api->work_reset();
    assert_int_equal(n_entries(api), 0);
}

/* The model's time of an entry from its counts and the table's constants. */
static void device_model_roofline(void **state)
{
    (void)state;
    const device_model *m = &device_model_h200;
    pcg_cuda_work k = {"some_kernel", 3, 1000, 1500000000ull, 500000000ull, 10, 0};
    double bw = m->copy_bytes_s * m->kernel_share;
    assert_true(fabs(device_model_seconds(m, &k, PCG_MATH_BF16) - (2e9 / bw + 3 * m->launch_s)) < 1e-12);
    /* a large product is bound by its mode's rate, the bytes by the copy rate */
    pcg_cuda_work g = {PCG_WORK_BLAS "gemm nn 4096x4096x4096", 1, 0, 0, 0, 2ull * 4096 * 4096 * 4096, 0};
    for (int math = 0; math < 3; math++) {
        double want = (double)g.flops / (m->gemm_flop_s[math] * m->blas_share) + m->launch_s;
        assert_true(fabs(device_model_seconds(m, &g, math) - want) < 1e-12);
    }
    pcg_cuda_work c = {PCG_WORK_COPY, 2, 0, 43000000000ull, 43000000000ull, 0, 0};
    assert_true(fabs(device_model_seconds(m, &c, 0) - (86e9 / m->copy_bytes_s + 2 * m->launch_s)) < 1e-12);
    /* a tensor-core kernel: the kernels' share of the TF32 rate in every mode */
    pcg_cuda_work tc = {"conv_fwd_tc_kernel", 2, 1000, 1000, 1000, 4000000000000ull, 0};
    assert_int_equal(device_model_kind(&tc), WORK_TENSOR_KERNEL);
    for (int math = 0; math < 3; math++) {
        double want = 4e12 / (m->gemm_flop_s[PCG_MATH_TF32] * m->kernel_share) + 2 * m->launch_s;
        assert_true(fabs(device_model_seconds(m, &tc, math) - want) < 1e-12);
    }
    /* one on bf16 fragments: the kernels' share of the bf16 rate */
    pcg_cuda_work bf = {"conv_fwd_staged_tc_kernel<8" PCG_WORK_BF16, 2, 1000, 1000, 1000, 4000000000000ull, 0};
    assert_int_equal(device_model_kind(&bf), WORK_BF16_KERNEL);
    double bf_want = 4e12 / (m->gemm_flop_s[PCG_MATH_BF16] * m->kernel_share) + 2 * m->launch_s;
    assert_true(fabs(device_model_seconds(m, &bf, PCG_MATH_BF16) - bf_want) < 1e-12);
    assert_true(device_model_seconds(m, &bf, PCG_MATH_BF16) < device_model_seconds(m, &tc, PCG_MATH_BF16));
    /* launches a graph made cost graph_launch_s each, the rest launch_s */
    pcg_cuda_work kg = k;
    kg.graph_launches = 2;
    assert_true(fabs(device_model_seconds(m, &kg, PCG_MATH_BF16) -
                     (2e9 / bw + m->launch_s + 2 * m->graph_launch_s)) < 1e-12);
    assert_true(device_model_launch_seconds(m, &kg) < device_model_launch_seconds(m, &k));
    pcg_cuda_work s = {PCG_WORK_SYNC, 7, 0, 0, 0, 0, 0}, note = {PCG_WORK_NOTE "no FLOP row for x", 5, 5, 5, 5, 5, 0};
    assert_true(fabs(device_model_seconds(m, &s, 0) - 7 * m->sync_s) < 1e-12);
    assert_true(device_model_seconds(m, &note, 0) == 0);
    pcg_cuda_work all[4] = {k, g, c, s};
    uint64_t launches = 0;
    double t = device_model_total(m, all, 4, PCG_MATH_TF32, &launches);
    assert_int_equal(launches, 6); /* kernels, products and copies; not synchronisations */
    double sum = 0;
    for (int i = 0; i < 4; i++) sum += device_model_seconds(m, &all[i], PCG_MATH_TF32);
    assert_true(fabs(t - sum) < 1e-12);
}

/* bench [train|env] --backend cuda-sim: only for train, env or all, the
 * trainer's model only with the counting library; each refusal is one
 * line and an exit status, before any CPU table. */
static void cuda_work_bench_errors(void **state)
{
    (void)state;
    const char *bin = pcg_test_binary();
    char out[4096];
    int rc = pcg_test_sh(out, sizeof out, "%s bench eval --backend cuda-sim", bin);
    assert_int_equal(rc, 2);
    assert_int_equal(pcg_test_count_lines(out), 1);
    assert_non_null(strstr(out, "models the trainer and the environment steps only"));
    const char *env_opts[] = {"--seconds 1", "--envs=600", "extra"};
    for (int i = 0; i < 3; i++) {
        rc = pcg_test_sh(out, sizeof out, "%s bench env --backend cuda-sim %s", bin, env_opts[i]);
        if (rc != 2 || pcg_test_count_lines(out) != 1 || !strstr(out, "takes no options"))
            fail_msg("bench env --backend cuda-sim %s: exit %d: %s", env_opts[i], rc, out);
    }
    rc = pcg_test_sh(out, sizeof out, "%s bench --backend cuda-sim --seconds 1", bin);
    assert_int_equal(rc, 2);
    assert_int_equal(pcg_test_count_lines(out), 1);
    assert_non_null(strstr(out, "takes no options"));
    rc = pcg_test_sh(out, sizeof out, "PCGRLLM_CUDA_LIB=%s/none.so %s bench train --backend cuda-sim",
                     pcg_test_tmpdir(), bin);
    assert_int_equal(rc, 1);
    assert_int_equal(pcg_test_count_lines(out), 1);
    assert_non_null(strstr(out, "does not exist"));
    /* the environment model goes on without the library's counts, and says
     * that it cannot judge the goal without them */
    static char env_out[16384];
    rc = pcg_test_sh(env_out, sizeof env_out, "PCGRLLM_CUDA_LIB=%s/none.so %s bench env --backend cuda-sim",
                     pcg_test_tmpdir(), bin);
    if (rc != 0 || !strstr(env_out, "env kernels: not counted") || !strstr(env_out, "does not exist") ||
        !strstr(env_out, "not judged") || !strstr(env_out, "model, not a measurement"))
        fail_msg("bench env --backend cuda-sim without the library: exit %d: %s", rc, env_out);
    /* the model counts the trainer's own passes: a cap on them is refused */
    rc = pcg_test_sh(out, sizeof out, "PCGRLLM_CUDA_PASS_MOST=64 %s bench train --backend cuda-sim", bin);
    assert_int_equal(rc, 2);
    assert_int_equal(pcg_test_count_lines(out), 1);
    if (!strstr(out, "unset PCGRLLM_CUDA_PASS_MOST")) fail_msg("got: %s", out);
    /* the simulation's own variables are checked here too (either build) */
    rc = pcg_test_sh(out, sizeof out, "PCGRLLM_SIM_THREADS=abc %s bench train --backend cuda-sim", bin);
    assert_int_equal(rc, 1);
    assert_int_equal(pcg_test_count_lines(out), 1);
    if (!strstr(out, "PCGRLLM_SIM_THREADS=abc: not a number of threads")) fail_msg("got: %s", out);
    /* the plain simulation library does not count kernel bytes */
    const char *lib = getenv("PCGRLLM_CUDA_LIB");
    if (!lib || !*lib || !strstr(lib, "/sim/")) return;
    const char *forms[] = {"bench train", "bench"};
    for (int i = 0; i < 2; i++) {
        rc = pcg_test_sh(out, sizeof out, "%s %s --backend cuda-sim", bin, forms[i]);
        if (rc != 1 || pcg_test_count_lines(out) != 1 || !strstr(out, "not counted") || !strstr(out, "COUNT=1"))
            fail_msg("%s --backend cuda-sim with %s: exit %d: %s", forms[i], lib, rc, out);
    }
}

/* The trainer's passes: the fewest equal ones of at most `most` samples
 * over the minibatch, or over the rollout's environments where more. */
static void device_pass_samples(void **state)
{
    (void)state;
    assert_int_equal(pcg_pass_samples(19200, 600, PCG_PASS_MOST), 6400); /* the paper's: three */
    assert_int_equal(pcg_pass_samples(19200, 600, PCG_PASS_LEAST), 1920); /* ten */
    assert_int_equal(pcg_pass_samples(16385, 8, 8192), 5462);             /* three, the last one short */
    assert_int_equal(pcg_pass_samples(256, 32, PCG_PASS_MOST), 256);
    assert_int_equal(pcg_pass_samples(64, 65536, PCG_PASS_MOST), 8192); /* the rollout's forward */
    assert_int_equal(pcg_pass_samples(8192, 1, 8192), 8192);
}

PCG_TESTS(cuda_work, cmocka_unit_test(cuda_work_counters), cmocka_unit_test(device_model_roofline),
          cmocka_unit_test(cuda_work_bench_errors), cmocka_unit_test(device_pass_samples))
