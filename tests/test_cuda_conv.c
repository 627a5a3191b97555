/* Conv 2 on the device, all of its paths (im2col + sgemm, the implicit
 * GEMMs of cuda/conv.cu on fp32 FMA and on tensor cores) in every matmul
 * mode, against the CPU network's convolution (host/learn/nn_layers.h):
 * forward, input gradient, weight and bias gradients, at the presets'
 * shapes, at odd ones and at random ones. */
#include "harness.h"
#include "backend.h"
#include "cuda_check.h"
#include "philox.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NN_REAL float
#define NN_FN(name) name##_cpu
#define NN_GEMM cblas_sgemm
#define NN_ACTS nn_acts
#include "nn_layers.h"

/* One case's host arrays: inputs, and the CPU's results. */
typedef struct {
    int B;
    nn_conv_shape s;
    size_t n_in, n_w, n_out, n_col;
    float *in, *W, *b, *dout, *dW0, *db0; /* dW0, db0: what the gradients start from */
    float *out, *din, *dW, *db, *col;     /* the CPU's */
} conv_case;

/* Device results of one path and mode, copied back. */
typedef struct {
    float *out, *din, *dW, *db;
} conv_result;

static float *random_array(philox_stream *r, size_t n, float scale)
{
    float *x = malloc(n * sizeof(float));
    assert_non_null(x);
    for (size_t i = 0; i < n; i++) x[i] = (philox_unit(philox_next(r)) * 2 - 1) * scale;
    return x;
}

static float *copy_array(const float *x, size_t n)
{
    float *y = malloc(n * sizeof(float));
    assert_non_null(y);
    memcpy(y, x, n * sizeof(float));
    return y;
}

static void case_init(conv_case *c, int B, nn_conv_shape s, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->B = B, c->s = s;
    int K = s.k * s.k * s.C;
    c->n_in = (size_t)B * s.H * s.W * s.C, c->n_w = (size_t)K * s.O, c->n_out = (size_t)B * s.OH * s.OW * s.O;
    c->n_col = (size_t)B * s.OH * s.OW * K;
    philox_stream r;
    philox_stream_init(&r, 23, seed, 0);
    /* conv 1's output is a ReLU's: non-negative, about a third zero */
    c->in = random_array(&r, c->n_in, 1.0f);
    for (size_t i = 0; i < c->n_in; i++) c->in[i] = c->in[i] < -0.3f ? 0.0f : c->in[i] + 0.3f;
    c->W = random_array(&r, c->n_w, 1.0f / sqrtf((float)K));
    c->b = random_array(&r, (size_t)s.O, 0.1f);
    c->dout = random_array(&r, c->n_out, 1.0f);
    c->dW0 = random_array(&r, c->n_w, 0.5f);
    c->db0 = random_array(&r, (size_t)s.O, 0.5f);
    c->out = malloc(c->n_out * sizeof(float));
    c->din = malloc(c->n_in * sizeof(float));
    c->col = malloc(c->n_col * sizeof(float));
    assert_true(c->out && c->din && c->col);
    c->dW = copy_array(c->dW0, c->n_w);
    c->db = copy_array(c->db0, (size_t)s.O);
    conv_forward_cpu(c->out, c->col, c->in, c->W, c->b, B, &c->s);
    conv_backward_cpu(c->din, c->dW, c->db, c->dout, c->col, c->W, B, &c->s);
}

static void case_free(conv_case *c)
{
    float *all[] = {c->in, c->W, c->b, c->dout, c->dW0, c->db0, c->out, c->din, c->dW, c->db, c->col};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) free(all[i]);
}

static float *to_host(const pcg_cuda_api *api, const float *dev, size_t n)
{
    float *x = malloc(n * sizeof(float));
    assert_non_null(x);
    assert_int_equal(api->copy_to_host(x, dev, n * sizeof(float)), 0);
    return x;
}

/* Forward and backward of one path in the current mode; din starts as
 * NaNs (it must be overwritten), dW and db as dW0 and db0 (added into). */
static conv_result run_path(const pcg_cuda_api *api, const conv_case *c, int path)
{
    size_t mark = api->arena_mark();
    float *in = cuda_to_device(api, c->in, c->n_in * 4), *W = cuda_to_device(api, c->W, c->n_w * 4);
    float *b = cuda_to_device(api, c->b, (size_t)c->s.O * 4), *dout = cuda_to_device(api, c->dout, c->n_out * 4);
    float *dW = cuda_to_device(api, c->dW0, c->n_w * 4), *db = cuda_to_device(api, c->db0, (size_t)c->s.O * 4);
    float *out = api->arena_alloc(c->n_out * 4), *din = api->arena_alloc(c->n_in * 4);
    float *col = api->arena_alloc(c->n_col * 4);
    assert_true(out && din && col);
    float *nan = malloc(c->n_in * 4);
    assert_non_null(nan);
    memset(nan, 0xff, c->n_in * 4);
    assert_int_equal(api->copy_to_device(din, nan, c->n_in * 4), 0);
    free(nan);
    if (api->conv_forward(out, col, in, W, b, c->B, &c->s, path)) fail_msg("conv_forward: %s", api->last_error());
    if (api->conv_backward(din, dW, db, dout, in, col, W, c->B, &c->s, path))
        fail_msg("conv_backward: %s", api->last_error());
    conv_result r = {to_host(api, out, c->n_out), to_host(api, din, c->n_in), to_host(api, dW, c->n_w),
                     to_host(api, db, (size_t)c->s.O)};
    api->arena_release(mark);
    return r;
}

static void result_free(conv_result *r)
{
    free(r->out), free(r->din), free(r->dW), free(r->db);
}

/* Each tensor of got against want; the largest error. */
static double compare(const conv_result *got, const float *out, const float *din, const float *dW, const float *db,
                      const conv_case *c, double tol, const char *what)
{
    const char *names[] = {"forward", "input gradient", "weight gradient", "bias gradient"};
    const float *g[] = {got->out, got->din, got->dW, got->db}, *w[] = {out, din, dW, db};
    size_t n[] = {c->n_out, c->n_in, c->n_w, (size_t)c->s.O};
    double worst = 0;
    for (int t = 0; t < 4; t++) {
        double e = cuda_tensor_err(g[t], w[t], n[t]);
        if (!(e <= tol))
            fail_msg("conv B=%d %dx%dx%d k%d s%d p%d -> %dx%dx%d, %s, %s: relative error %.3g > %.0g", c->B, c->s.H,
                     c->s.W, c->s.C, c->s.k, c->s.stride, c->s.pad, c->s.OH, c->s.OW, c->s.O, what, names[t], e, tol);
        worst = fmax(worst, e);
    }
    return worst;
}

/* x as the mode's tensor cores take it, written independently of the
 * kernels' bit operations: TF32 keeps 11 significant bits, ties away from
 * zero (cvt.rna); bf16 8, ties to even (the default rounding of
 * nearbyintf). */
static float mode_round(float x, int mode)
{
    if (mode == PCG_MATH_FP32 || !isfinite(x) || x == 0) return x;
    int e, bits = mode == PCG_MATH_TF32 ? 11 : 8;
    float m = ldexpf(frexpf(x, &e), bits);
    return ldexpf(mode == PCG_MATH_TF32 ? roundf(m) : nearbyintf(m), e - bits);
}

/* The CPU's convolution on operands rounded as the mode rounds them: what
 * the implicit kernels compute, but for the order of fp32 additions.  The
 * bias gradient sums dout unrounded (no product), so it is the fp32
 * one. */
static conv_result rounded_reference(const conv_case *c, int mode)
{
    float *in = copy_array(c->in, c->n_in), *W = copy_array(c->W, c->n_w), *dout = copy_array(c->dout, c->n_out);
    for (size_t i = 0; i < c->n_in; i++) in[i] = mode_round(in[i], mode);
    for (size_t i = 0; i < c->n_w; i++) W[i] = mode_round(W[i], mode);
    for (size_t i = 0; i < c->n_out; i++) dout[i] = mode_round(dout[i], mode);
    conv_result r = {malloc(c->n_out * 4), malloc(c->n_in * 4), copy_array(c->dW0, c->n_w),
                     copy_array(c->db0, (size_t)c->s.O)};
    float *col = malloc(c->n_col * 4);
    assert_true(r.out && r.din && col);
    conv_forward_cpu(r.out, col, in, W, c->b, c->B, &c->s);
    conv_backward_cpu(r.din, r.dW, r.db, dout, col, W, c->B, &c->s);
    memcpy(r.db, c->db, (size_t)c->s.O * 4);
    free(in), free(W), free(dout), free(col);
    return r;
}

/* Conv errors of the implicit GEMMs, per kernel family (FMA, tensor
 * cores) and mode: against the fp32 CPU (err) and against the CPU on the
 * mode's rounded operands (gap). */
typedef struct {
    double err[2][3], gap[2][3];
    int staged[2];       /* tensor-core forward launches without and with the input staged */
    int dgrad_staged[2]; /* the same for the input gradient, its output gradient staged */
    int wgrad_staged[2]; /* the same for the weight gradient, both operands staged */
    int fwd_tiles, dgrad_tiles; /* the staged kernels' 64-row tiles a block that ran, as bits (2 | 4 | 8) */
} conv_errors;

/* The tiles a block of a staged kernel's launch name (NAME<H>), 0 when
 * the name is not prefix's */
static int staged_tiles(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    int h = 0;
    if (strncmp(name, prefix, n) || sscanf(name + n, "<%d>", &h) != 1) return 0;
    return h;
}

/* In the simulation (which reports an H200): whether the last work
 * counted under PCG_CONV_TENSOR launched the kernels the mode must take:
 * TF32 and bf16 one tensor-core kernel for each of the three products,
 * plain or staged (NAME_staged_tc_kernel, or its instantiations
 * NAME<...>); fp32 the staged kernels' split (names ending in "split>")
 * where they ran, never the plain tensor-core ones; the staged forward
 * and input gradient on bf16 fragments (", bf16>") in bf16 and in no
 * other mode.  The staged counts in
 * e: [1] the launches with their operand staged, [0] the others. */
static void check_tensor_launches(const pcg_cuda_api *api, int mode, conv_errors *e)
{
    if (!api->simulated) return;
    static const char *const plain[] = {"conv_fwd_tc_kernel", "conv_dgrad_tc_kernel", "conv_wgrad_tc_kernel"};
    static const char *const staged[] = {"conv_fwd_staged_tc_kernel", "conv_dgrad_staged_tc_kernel",
                                         "conv_wgrad_staged_tc_kernel"};
    static const char *const what[] = {"forward", "input-gradient", "weight-gradient"};
    int *counts[] = {e->staged, e->dgrad_staged, e->wgrad_staged};
    int n = 0, tensor = mode != PCG_MATH_FP32;
    const pcg_cuda_work *w = api->work_counters(&n);
    for (int k = 0; k < 3; k++) {
        int found_plain = 0, found_staged = 0;
        size_t len = strlen(staged[k]);
        for (int i = 0; i < n; i++) {
            const char *name = w[i].name;
            found_plain |= !strcmp(name, plain[k]);
            if (strncmp(name, staged[k], len) || (name[len] && name[len] != '<')) continue;
            found_staged = 1;
            int split = strlen(name) > 6 && !strcmp(name + strlen(name) - 6, "split>");
            if (split == tensor) fail_msg("mode %d, path PCG_CONV_TENSOR: %s ran", mode, name);
            /* bf16 fragments in bf16 for the forward and the input gradient, nowhere else */
            int bf16 = strstr(name, PCG_WORK_BF16) != NULL;
            if (bf16 != (mode == PCG_MATH_BF16 && k < 2)) fail_msg("mode %d, path PCG_CONV_TENSOR: %s ran", mode, name);
            int h = staged_tiles(name, staged[k]);
            if (k == 0) e->fwd_tiles |= h;
            if (k == 1) e->dgrad_tiles |= h;
        }
        if (tensor ? found_plain + found_staged != 1 : found_plain)
            fail_msg("mode %d, path PCG_CONV_TENSOR: %d tensor-core %s kernels ran", mode, found_plain + found_staged,
                     what[k]);
        counts[k][0] += found_plain, counts[k][1] += found_staged;
    }
}

/* The paths in the three modes against the CPU's fp32 convolution (the
 * sgemm test's tolerances per mode), and the implicit GEMMs (FMA and
 * tensor-core kernels: PCG_CONV_TENSOR, the FMA ones in fp32) against the
 * CPU's on the mode's rounded operands within fp32 rounding: that the
 * kernels round every operand, and as the mode does, and that the tensor
 * cores' products are those of the rounded operands. */
static void check_case(const pcg_cuda_api *api, const conv_case *c, conv_errors *e)
{
    static const char *const modes[] = {"fp32", "tf32", "bf16"};
    static const char *const kinds[] = {"implicit GEMM", "tensor-core implicit GEMM"};
    for (int mode = PCG_MATH_FP32; mode <= PCG_MATH_BF16; mode++) {
        assert_int_equal(api->blas_set_math(mode), 0);
        double tol = mode == PCG_MATH_BF16 ? 5e-2 : mode == PCG_MATH_TF32 ? 1e-2 : 1e-4;
        conv_result im = run_path(api, c, PCG_CONV_IM2COL);
        conv_result ref = rounded_reference(c, mode);
        char what[80];
        snprintf(what, sizeof what, "im2col path, %s", modes[mode]);
        compare(&im, c->out, c->din, c->dW, c->db, c, tol, what);
        for (int k = 0; k < 2; k++) {
            api->work_reset();
            conv_result ig = run_path(api, c, k ? PCG_CONV_TENSOR : PCG_CONV_IMPLICIT);
            if (k) check_tensor_launches(api, mode, e);
            snprintf(what, sizeof what, "%s, %s", kinds[k], modes[mode]);
            e->err[k][mode] = fmax(e->err[k][mode], compare(&ig, c->out, c->din, c->dW, c->db, c, tol, what));
            snprintf(what, sizeof what, "%s against rounded operands, %s", kinds[k], modes[mode]);
            e->gap[k][mode] = fmax(e->gap[k][mode], compare(&ig, ref.out, ref.din, ref.dW, ref.db, c, 1e-5, what));
            result_free(&ig);
        }
        result_free(&im);
        result_free(&ref);
    }
    assert_int_equal(api->blas_set_math(PCG_MATH_FP32), 0);
}

/* A shape like the trainer's conv 2 (odd sizes, strides 1 to 3, kernels
 * 1 to 7, padding below the kernel), its batch, from stream r. */
static nn_conv_shape random_shape(philox_stream *r, int *B)
{
    static const int ks[] = {1, 2, 3, 5, 7};
    nn_conv_shape s;
    do {
        s.k = ks[philox_next(r) % 5];
        s.stride = 1 + (int)(philox_next(r) % 3);
        s.pad = (int)(philox_next(r) % (unsigned)s.k);
        s.H = 2 + (int)(philox_next(r) % 11), s.W = 2 + (int)(philox_next(r) % 11);
        s.C = 1 + (int)(philox_next(r) % 40), s.O = 1 + (int)(philox_next(r) % 70);
        s.OH = (s.H + 2 * s.pad - s.k) / s.stride + 1, s.OW = (s.W + 2 * s.pad - s.k) / s.stride + 1;
    } while (s.H + 2 * s.pad < s.k || s.W + 2 * s.pad < s.k);
    *B = 1 + (int)(philox_next(r) % 6);
    return s;
}

/* The paper preset's conv 2 at batch 2, which every staged kernel takes
 * in all three modes (fp32 as its split) */
static void check_paper(const pcg_cuda_api *api, conv_errors *e)
{
    nn_config cfg;
    assert_int_equal(nn_preset_config("paper", 31, 31, 6, &cfg), 0);
    nn_conv_shape s1, s2;
    nn_conv_shapes(&cfg, &s1, &s2);
    conv_case c;
    case_init(&c, 2, s2, 0);
    int before = e->staged[1], dgrad_before = e->dgrad_staged[1], wgrad_before = e->wgrad_staged[1];
    check_case(api, &c, e);
    if (api->simulated && e->staged[1] != before + 3) fail_msg("paper preset: the forward pass was not staged");
    if (api->simulated && e->dgrad_staged[1] != dgrad_before + 3)
        fail_msg("paper preset: the input gradient was not staged");
    if (api->simulated && e->wgrad_staged[1] != wgrad_before + 3)
        fail_msg("paper preset: the weight gradient was not staged");
    case_free(&c);
}

/* Rows past one span of the weight gradient: its partial sums */
static void check_many(const pcg_cuda_api *api, conv_errors *e)
{
    nn_conv_shape many = {8, 8, 4, 3, 1, 1, 8, 8, 8};
    conv_case c;
    case_init(&c, 130, many, 7);
    check_case(api, &c, e);
    case_free(&c);
}

/* Channels that are not multiples of a fragment's 16 (or 8), batches
 * whose rows leave the last 64-row tile part full: k 3 and 7, strides 1
 * and 2; rows wider than one staged step of the weight gradient (OW 11);
 * a kernel row longer than that kernel holds (k 9); a reach past what the
 * staged forward and input gradient hold (60 x 60 at stride 1); the
 * weight gradient's full kernel row (k 8); phases no tap reaches (k 2,
 * stride 3); then,
 * where `random` is set, random shapes. */
static void check_shapes(const pcg_cuda_api *api, conv_errors *e, int random)
{
    const nn_conv_shape odd[] = {{9, 7, 20, 3, 1, 1, 9, 7, 37},   {11, 11, 13, 7, 2, 3, 6, 6, 70},
                                 {16, 16, 24, 7, 2, 3, 8, 8, 50},  {6, 10, 5, 3, 2, 1, 3, 5, 19},
                                 {9, 11, 70, 3, 1, 1, 9, 11, 66}, {10, 10, 6, 9, 1, 4, 10, 10, 12},
                                 {60, 60, 2, 3, 1, 1, 60, 60, 3},  {10, 10, 5, 8, 1, 3, 9, 9, 7},
                                 {9, 9, 4, 2, 3, 0, 3, 3, 5}};
    const int odd_batch[] = {3, 5, 3, 67, 2, 2, 1, 2, 3};
    conv_case c;
    for (int t = 0; t < 9; t++) {
        case_init(&c, odd_batch[t], odd[t], 50 + (uint64_t)t);
        check_case(api, &c, e);
        case_free(&c);
    }
    philox_stream r;
    philox_stream_init(&r, 29, 0, 0);
    for (int t = 0; random && t < 12; t++) {
        int B;
        nn_conv_shape s = random_shape(&r, &B);
        case_init(&c, B, s, 100 + (uint64_t)t);
        check_case(api, &c, e);
        case_free(&c);
    }
}

static void cuda_conv_matches_cpu(void **state)
{
    (void)state;
    const pcg_cuda_api *api = cuda_device_or_skip("cuda_conv_matches_cpu");
    const char *presets[] = {"small", "tiny"};
    const int batch[] = {5, 7};
    conv_errors e;
    memset(&e, 0, sizeof e);
    check_paper(api, &e);
    for (int p = 0; p < 2; p++) {
        nn_config cfg;
        assert_int_equal(nn_preset_config(presets[p], 31, 31, 6, &cfg), 0);
        nn_conv_shape s1, s2;
        nn_conv_shapes(&cfg, &s1, &s2);
        conv_case c;
        case_init(&c, batch[p], s2, 1 + (uint64_t)p);
        check_case(api, &c, &e);
        case_free(&c);
    }
    check_many(api, &e);
    check_shapes(api, &e, 1);
    if (api->simulated) {
        /* a device of fewer multiprocessors, whose grids the staged
         * kernels' larger blocks fill with small batches: 8 tiles a block
         * on one, 4 for the 130 samples of check_many on twenty */
        setenv("PCGRLLM_SIM_SMS", "1", 1);
        check_paper(api, &e);
        check_shapes(api, &e, 0);
        setenv("PCGRLLM_SIM_SMS", "20", 1);
        check_many(api, &e);
        unsetenv("PCGRLLM_SIM_SMS");
        if (e.fwd_tiles != (2 | 4 | 8) || e.dgrad_tiles != (2 | 4 | 8))
            fail_msg("staged blocks of 2, 4 and 8 tiles: the forward ran %s%s%s, the input gradient %s%s%s",
                     e.fwd_tiles & 2 ? "2 " : "", e.fwd_tiles & 4 ? "4 " : "", e.fwd_tiles & 8 ? "8" : "",
                     e.dgrad_tiles & 2 ? "2 " : "", e.dgrad_tiles & 4 ? "4 " : "", e.dgrad_tiles & 8 ? "8" : "");
    }
    /* the paper's shape stages its input, its output gradient and the
     * weight gradient's operands; some shapes do not fit (60 x 60, k 9) */
    if (api->simulated) assert_true(e.staged[0] > 0 && e.staged[1] > 0);
    if (api->simulated) assert_true(e.dgrad_staged[0] > 0 && e.dgrad_staged[1] > 0);
    if (api->simulated) assert_true(e.wgrad_staged[0] > 0 && e.wgrad_staged[1] > 0);
    for (int k = 0; k < 2; k++)
        printf("cuda_conv_matches_cpu: %s's largest relative error against the CPU: fp32 %.2g, tf32 %.2g, bf16 "
               "%.2g; against the CPU on rounded operands: fp32 %.2g, tf32 %.2g, bf16 %.2g\n",
               k ? "the tensor-core implicit GEMM" : "the FMA implicit GEMM", e.err[k][0], e.err[k][1], e.err[k][2],
               e.gap[k][0], e.gap[k][1], e.gap[k][2]);
}

PCG_TESTS(cuda_conv, cmocka_unit_test(cuda_conv_matches_cpu))
