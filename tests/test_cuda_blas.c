/* The sgemm wrappers of the CUDA backend against a double-precision
 * product, with cuBLAS and with the built-in tiled kernel that stands in
 * where cuBLAS cannot be loaded. */
#define _GNU_SOURCE
#include "harness.h"
#include "backend.h"
#include "cuda_check.h"
#include "philox.h"
#include <limits.h>
#include <link.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* dl_iterate_phdr: stops (1) at a libcublas mapped into the process */
static int mapped_cublas(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    return base && !strncmp(base + 1, "libcublas", 9);
}

static double max_rel_err(const float *got, const double *want, size_t n)
{
    double scale = 0, worst = 0;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(want[i]));
    for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(got[i] - want[i]) / (scale > 0 ? scale : 1));
    return worst;
}

/* Which sgemm ran, as the library says and as this process shows: the
 * built-in kernel exactly when cuBLAS was turned off or could not be
 * loaded, and then no libcublas mapped into the process; in the
 * simulation the work is counted under the kernel that did it.  1 if the
 * built-in kernel is in use. */
static int tiled_in_use(const pcg_cuda_api *api)
{
    const char *use = api->blas_in_use();
    printf("cuda_sgemm_matches_cpu: sgemm: %s\n", use);
    const char *env = getenv("PCGRLLM_CUBLAS");
    int tiled = !strncmp(use, "built-in tiled sgemm (cuBLAS not loaded: ", 41);
    if (env && !strcmp(env, "off") && !strstr(use, "(cuBLAS not loaded: turned off by PCGRLLM_CUBLAS=off)"))
        fail_msg("PCGRLLM_CUBLAS=off, yet the sgemm in use is: %s", use);
    if (!tiled && strncmp(use, "cuBLAS ", 7)) fail_msg("neither cuBLAS nor the built-in sgemm: %s", use);
    if (tiled && dl_iterate_phdr(mapped_cublas, NULL)) fail_msg("the built-in sgemm is in use, yet libcublas is mapped");
    int n = 0, tiled_work = 0, cublas_work = 0;
    const pcg_cuda_work *w = api->work_counters(&n);
    for (int i = 0; w && i < n; i++) {
        tiled_work += strstr(w[i].name, "sgemm_tiled_kernel") && w[i].launches;
        cublas_work += !strncmp(w[i].name, "cublas", 6) && w[i].launches;
    }
    if (api->simulated && (tiled ? !tiled_work || cublas_work : tiled_work))
        fail_msg("%s in use, yet the work counted %s the built-in kernel", tiled ? "the built-in sgemm" : "cuBLAS",
                 tiled_work ? "includes" : "lacks");
    return tiled;
}

/* Random operands in [-1, 1) from stream s. */
static void fill_random(float *x, size_t n, uint64_t s, uint64_t offset)
{
    philox_stream r;
    philox_stream_init(&r, 5, s, offset);
    for (size_t i = 0; i < n; i++) x[i] = philox_unit(philox_next(&r)) * 2 - 1;
}

/* W = alpha op(A) op(B) + beta C in double, op per layout (0: A m x k, B
 * k x n; 1: B stored n x k; 2: A stored k x m): the same buffers are
 * reinterpreted, so the reference reads them the same way. */
static void reference(int layout, int m, int n, int k, double alpha, const float *A, const float *B, double beta,
                      const float *C, double *W)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0;
            for (int q = 0; q < k; q++) {
                double a = layout == 2 ? A[(size_t)q * m + i] : A[(size_t)i * k + q];
                double b = layout == 1 ? B[(size_t)j * k + q] : B[(size_t)q * n + j];
                acc += a * b;
            }
            W[(size_t)i * n + j] = alpha * acc + (beta != 0 ? beta * C[(size_t)i * n + j] : 0);
        }
}

/* One call of the layout's wrapper on device buffers of C's initial
 * values host_c; the result's largest relative error against W. */
static double run_layout(const pcg_cuda_api *api, int layout, int m, int n, int k, float alpha, const float *dA,
                         const float *dB, float beta, float *dC, const float *host_c, const double *W)
{
    size_t sc = (size_t)m * n;
    assert_int_equal(api->copy_to_device(dC, host_c, sc * 4), 0);
    int rc = layout == 0   ? api->sgemm_nn(m, n, k, alpha, dA, dB, beta, dC)
             : layout == 1 ? api->sgemm_nt(m, n, k, alpha, dA, dB, beta, dC)
                           : api->sgemm_tn(m, n, k, alpha, dA, dB, beta, dC);
    if (rc) fail_msg("sgemm: %s", api->last_error());
    float *G = malloc(sc * 4);
    assert_non_null(G);
    assert_int_equal(api->copy_to_host(G, dC, sc * 4), 0);
    double e = max_rel_err(G, W, sc);
    free(G);
    return e;
}

/* One shape, the three row-major layouts in every matmul mode with alpha
 * 0.5 and beta -2, and beta 0 over a C of NaNs (which must never be read);
 * the largest relative error of each mode into err[PCG_MATH_*]. */
static void check_shape(const pcg_cuda_api *api, int s, int m, int n, int k, double err[3])
{
    static const char *const layouts[] = {"nn", "nt", "tn"};
    size_t sa = (size_t)m * k, sb = (size_t)k * n, sc = (size_t)m * n;
    float *A = malloc(sa * 4), *B = malloc(sb * 4), *C = malloc(sc * 4), *nan_c = malloc(sc * 4);
    double *W = malloc(sc * 8);
    assert_true(A && B && C && nan_c && W);
    fill_random(A, sa, (uint64_t)s, 0);
    fill_random(B, sb, (uint64_t)s, 1 << 30);
    fill_random(C, sc, (uint64_t)s, 2u << 30);
    memset(nan_c, 0xff, sc * 4);
    size_t mark = api->arena_mark();
    float *dA = api->arena_alloc(sa * 4), *dB = api->arena_alloc(sb * 4), *dC = api->arena_alloc(sc * 4);
    assert_true(dA && dB && dC);
    assert_int_equal(api->copy_to_device(dA, A, sa * 4), 0);
    assert_int_equal(api->copy_to_device(dB, B, sb * 4), 0);
    for (int layout = 0; layout < 3; layout++) {
        reference(layout, m, n, k, 0.5, A, B, -2.0, C, W);
        for (int mode = PCG_MATH_FP32; mode <= PCG_MATH_BF16; mode++) {
            assert_int_equal(api->blas_set_math(mode), 0);
            /* products rounded to 10 (TF32) or 7 (bf16) mantissa bits */
            double e = run_layout(api, layout, m, n, k, 0.5f, dA, dB, -2.0f, dC, C, W);
            double tol = mode == PCG_MATH_BF16 ? 5e-2 : mode == PCG_MATH_TF32 ? 1e-2 : 1e-4;
            if (e > tol)
                fail_msg("sgemm %s %dx%dx%d %s: relative error %.3g > %.0g", layouts[layout], m, n, k,
                         backend_math_name(mode), e, tol);
            err[mode] = fmax(err[mode], e);
        }
        assert_int_equal(api->blas_set_math(PCG_MATH_FP32), 0);
        reference(layout, m, n, k, 0.5, A, B, 0.0, NULL, W);
        double e = run_layout(api, layout, m, n, k, 0.5f, dA, dB, 0.0f, dC, nan_c, W);
        if (!(e <= 1e-4)) fail_msg("sgemm %s %dx%dx%d, beta 0 over NaN: relative error %.3g", layouts[layout], m, n, k, e);
    }
    api->arena_release(mark);
    free(A);
    free(B);
    free(C);
    free(nan_c);
    free(W);
}

/* The three row-major wrappers against a double-precision loop, in fp32,
 * TF32 and bf16, alpha and beta applied, with whichever sgemm is in use;
 * the built-in kernel must lose precision in TF32 and bf16 as those modes
 * do, not compute them in fp32. */
static void cuda_sgemm_matches_cpu(void **state)
{
    (void)state;
    const pcg_cuda_api *api = cuda_device_or_skip("cuda_sgemm_matches_cpu");
    api->work_reset();
    int shapes[][3] = {{1, 1, 1}, {37, 53, 129}, {64, 600, 4096}, {128, 9, 31}};
    double big[3] = {0, 0, 0};
    for (int s = 0; s < 4; s++) {
        double err[3] = {0, 0, 0};
        check_shape(api, s, shapes[s][0], shapes[s][1], shapes[s][2], err);
        if (s == 2) memcpy(big, err, sizeof big);
    }
    api->blas_set_math(PCG_MATH_FP32);
    if (tiled_in_use(api) && !(big[PCG_MATH_TF32] > 10 * big[PCG_MATH_FP32] && big[PCG_MATH_BF16] > big[PCG_MATH_TF32]))
        fail_msg("built-in sgemm at 64x600x4096: relative error fp32 %.3g, tf32 %.3g, bf16 %.3g: the operands are not "
                 "rounded as TF32 and bf16 round them", big[0], big[1], big[2]);
}

/* With cuBLAS turned off (PCGRLLM_CUBLAS=off, as on a machine that lacks
 * it) the built-in tiled kernel is selected and does every sgemm: the
 * check above run in a process of its own, and the device command saying
 * which sgemm it uses. */
static void cuda_sgemm_tiled_without_cublas(void **state)
{
    (void)state;
    cuda_device_or_skip("cuda_sgemm_tiled_without_cublas");
    char self[PATH_MAX], out[16384];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = 0;
    int rc = pcg_test_sh(out, sizeof out, "PCGRLLM_CUBLAS=off '%s' cuda_sgemm_matches_cpu", self);
    if (rc) fail_msg("cuda_sgemm_matches_cpu with PCGRLLM_CUBLAS=off: %s", out);
    if (!strstr(out, "cuda_sgemm_matches_cpu: sgemm: built-in tiled sgemm (cuBLAS not loaded: turned off by "
                     "PCGRLLM_CUBLAS=off)") || !strstr(out, "[       OK ] cuda_sgemm_matches_cpu"))
        fail_msg("cuda_sgemm_matches_cpu did not run on the built-in sgemm: %s", out);
    rc = pcg_test_sh(out, sizeof out, "PCGRLLM_CUBLAS=off %s device --backend cuda", pcg_test_binary());
    if (rc || !strstr(out, "\nsgemm: built-in tiled sgemm (cuBLAS not loaded: turned off by PCGRLLM_CUBLAS=off)\n"))
        fail_msg("device --backend cuda with PCGRLLM_CUBLAS=off: %s", out);
}

PCG_TESTS(cuda_blas, cmocka_unit_test(cuda_sgemm_matches_cpu), cmocka_unit_test(cuda_sgemm_tiled_without_cublas))

