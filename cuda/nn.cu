/* The network of host/learn/nn.h on the device, one function per layer pass as in
 * host/learn/nn_layers.h, with the same layouts: weights [fan_in][fan_out],
 * activations HWC, one sample per row.  Dense layers go through the
 * row-major sgemm wrappers, conv 2 through the implicit GEMMs of
 * cuda/conv.cu (on tensor cores where the device has them, fp32 as
 * three-product splits; else, in TF32 and bf16 where cuBLAS's tensor
 * cores multiply, im2col + sgemm); the
 * layers on the one-hot observation are the gathers of
 * cuda/onehot.cu.  Where a kernel adds in the CPU's
 * order (the gathers, col2im, the one-hot dense backward) the result is
 * bit-identical to the CPU's; the sgemms, the implicit GEMMs and the
 * chunked sums agree within float rounding. */
#include "common.cuh"
#include "dungeon.h"
#ifdef PCG_SIM
#include "sim.h"
#endif
#include "nn_shapes.h"
#include <string.h>

#define NN_THREADS 256


static unsigned grid_for(size_t n)
{
    return pcg_grid_for(NN_THREADS, n);
}

#define LAUNCH_CK()                                                                      \
    do {                                                                                 \
        cudaError_t e_ = cudaGetLastError();                                             \
        if (e_ != cudaSuccess) {                                                         \
            pcg_cuda_set_error("nn kernel launch: %s (%s:%d)", cudaGetErrorString(e_), __FILE__, __LINE__); \
            return -1;                                                                   \
        }                                                                                \
    } while (0)

/* ---- elementwise ---- */

__global__ static void relu_fwd_kernel(float *x, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n && x[i] < 0) x[i] = 0;
}

__global__ static void relu_bwd_kernel(float *dx, const float *y, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n && !(y[i] > 0)) dx[i] = 0;
}

__global__ static void bias_rows_kernel(float *out, const float *b, size_t rows, int O)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < rows * O) out[i] = b[i % O];
}

/* Column sums in chunks of rows: part[chunk][o].  The chunks run along
 * gridDim.x: a large batch has more than gridDim.y's 65535. */
__global__ static void col_sums_kernel(float *part, const float *x, int rows, int O, int chunk)
{
    int o = blockIdx.y * blockDim.x + threadIdx.x, c = blockIdx.x;
    if (o >= O) return;
    int r0 = c * chunk, r1 = min(rows, r0 + chunk);
    float s = 0;
    for (int r = r0; r < r1; r++) s += x[(size_t)r * O + o];
    part[(size_t)c * O + o] = s;
}

/* db[o] += the chunk sums, in chunk order. */
__global__ static void add_sums_kernel(float *db, const float *part, int chunks, int O)
{
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= O) return;
    float s = db[o];
    for (int c = 0; c < chunks; c++) s += part[(size_t)c * O + o];
    db[o] = s;
}

static int relu_forward(float *x, size_t n)
{
    if (!n) return 0;
    PCG_LAUNCH(relu_fwd_kernel, grid_for(n), NN_THREADS, 0, pcg_cuda_stream(), x, n);
    LAUNCH_CK();
    return 0;
}

static int relu_backward(float *dx, const float *y, size_t n)
{
    if (!n) return 0;
    PCG_LAUNCH(relu_bwd_kernel, grid_for(n), NN_THREADS, 0, pcg_cuda_stream(), dx, y, n);
    LAUNCH_CK();
    return 0;
}

/* The same sums for at most COL_CHUNKS chunks, in one launch: block y of
 * the grid takes 64 columns, thread (o, c) chunk c of column o, and the
 * chunks' sums are added in order as add_sums_kernel adds them, so the
 * bits are the two kernels'. */
#define COL_CHUNK 256
#define COL_CHUNKS 8
__global__ static void col_sums_short_kernel(float *db, const float *x, int rows, int O)
{
    __shared__ float part[COL_CHUNKS][64];
    int j = threadIdx.x % 64, c = threadIdx.x / 64, o = blockIdx.y * 64 + j;
    int r0 = c * COL_CHUNK, r1 = min(rows, r0 + COL_CHUNK);
    float s = 0;
    for (int r = r0; o < O && r < r1; r++) s += x[(size_t)r * O + o];
    part[c][j] = s;
    __syncthreads();
    if (c || o >= O) return;
    float sum = db[o];
    for (int k = 0; k * COL_CHUNK < rows; k++) sum += part[k][j];
    db[o] = sum;
}

/* db[o] += sum over rows of x[r][o] (chunks of 256 rows, summed in order). */
static int add_col_sums(float *db, const float *x, int rows, int O)
{
    const int chunk = COL_CHUNK;
    int chunks = (rows + chunk - 1) / chunk;
    if (chunks <= COL_CHUNKS) {
        dim3 g(1, (unsigned)((O + 63) / 64));
        PCG_LAUNCH(col_sums_short_kernel, g, 64 * COL_CHUNKS, 0, pcg_cuda_stream(), db, x, rows, O);
        LAUNCH_CK();
        return 0;
    }
    size_t mark = pcg_arena_mark();
    float *part = (float *)pcg_arena_alloc((size_t)chunks * O * sizeof(float));
    if (!part) return -1;
    dim3 g((unsigned)chunks, (unsigned)((O + 63) / 64));
    PCG_LAUNCH(col_sums_kernel, g, 64, 0, pcg_cuda_stream(), part, x, rows, O, chunk);
    PCG_LAUNCH(add_sums_kernel, (O + 63) / 64, 64, 0, pcg_cuda_stream(), db, part, chunks, O);
    pcg_arena_release(mark); /* later work on this stream runs after both kernels */
    LAUNCH_CK();
    return 0;
}

/* ---- dense: out[B][O] = in[B][I] W[I][O] + b ---- */

static int dense_forward(float *out, const float *in, const float *W, const float *b, int B, int In, int O)
{
    size_t n = (size_t)B * O;
    PCG_LAUNCH(bias_rows_kernel, grid_for(n), NN_THREADS, 0, pcg_cuda_stream(), out, b, (size_t)B, O);
    LAUNCH_CK();
    return pcg_sgemm_nn(B, O, In, 1.0f, in, W, 1.0f, out);
}

/* din (may be NULL) = dout W^T; dW += in^T dout; db += column sums of dout. */
static int dense_backward(float *din, float *dW, float *db, const float *dout, const float *in, const float *W, int B,
                          int In, int O)
{
    if (pcg_sgemm_tn(In, O, B, 1.0f, in, dout, 1.0f, dW)) return -1;
    if (add_col_sums(db, dout, B, O)) return -1;
    if (din && pcg_sgemm_nt(B, In, O, 1.0f, dout, W, 0.0f, din)) return -1;
    return 0;
}

/* ---- general convolution: im2col + sgemm ---- */

/* One thread per (output position, channel) of one tap (grid y): 32-bit
 * index arithmetic, and consecutive threads copy consecutive channels. */
__global__ static void im2col_kernel(float *col, const float *in, int B, nn_conv_shape s)
{
    int K = s.k * s.k * s.C, tap = blockIdx.y;
    unsigned idx = blockIdx.x * blockDim.x + threadIdx.x, rows = (unsigned)B * s.OH * s.OW;
    if (idx >= rows * s.C) return;
    unsigned row = idx / s.C, c = idx % s.C, per = (unsigned)s.OH * s.OW;
    unsigned n = row / per, p = row % per;
    int oy = (int)(p / s.OW), ox = (int)(p % s.OW);
    int iy = oy * s.stride - s.pad + tap / s.k, ix = ox * s.stride - s.pad + tap % s.k;
    float *dst = col + (size_t)row * K + tap * s.C + c;
    *dst = (iy < 0 || iy >= s.H || ix < 0 || ix >= s.W) ? 0.0f : in[(((size_t)n * s.H + iy) * s.W + ix) * s.C + c];
}

/* First output index o >= 0 whose window o*stride - pad + [0, k) holds i. */
__device__ static int first_window(int i, const nn_conv_shape &s)
{
    int t = i + s.pad - s.k + 1;
    return t <= 0 ? 0 : (t + s.stride - 1) / s.stride;
}

/* din[n][iy][ix][c] = the col entries of that input, in the CPU's order
 * (output positions row-major), visiting only the windows that hold it. */
__global__ static void col2im_kernel(float *din, const float *col, int B, nn_conv_shape s)
{
    int K = s.k * s.k * s.C;
    unsigned idx = blockIdx.x * blockDim.x + threadIdx.x, per = (unsigned)s.H * s.W;
    if (idx >= (unsigned)B * per * s.C) return;
    unsigned pix = idx / s.C, c = idx % s.C, n = pix / per, p = pix % per;
    int iy = (int)(p / s.W), ix = (int)(p % s.W);
    int oy1 = min(s.OH - 1, (iy + s.pad) / s.stride), ox1 = min(s.OW - 1, (ix + s.pad) / s.stride);
    int ox0 = first_window(ix, s);
    float acc = 0;
    for (int oy = first_window(iy, s); oy <= oy1; oy++) {
        int ky = iy - oy * s.stride + s.pad;
        const float *r = col + ((size_t)n * s.OH + oy) * s.OW * K + c;
        for (int ox = ox0; ox <= ox1; ox++) acc += r[(size_t)ox * K + (ky * s.k + ix - ox * s.stride + s.pad) * s.C];
    }
    din[idx] = acc;
}

/* The im2col and col2im kernels index in 32 bits. */
static int conv_fits_32(int B, const nn_conv_shape &s)
{
    size_t big = (size_t)B * s.C * (s.H * s.W > s.OH * s.OW ? s.H * s.W : s.OH * s.OW);
    if (big <= 0xffffffffu) return 0;
    pcg_cuda_set_error("conv: batch %d of %dx%dx%d inputs is past the kernels' 32-bit indices", B, s.H, s.W, s.C);
    return -1;
}

/* The tensor-core implicit GEMMs where the device runs them (in fp32 the
 * staged kernels' three-product split where a shape fits them, else the
 * FMA kernels: fp32 stays fp32); else, in TF32 and bf16, im2col + cuBLAS
 * where its tensor cores do the products (their rate outruns the implicit
 * kernels' fp32 FMA by more than im2col's traffic costs); else the FMA
 * implicit GEMMs.  A TENSOR the device cannot take is IMPLICIT. */
static int conv_path(int path, int *math)
{
    int cublas = 0;
    *math = pcg_blas_math(&cublas);
#ifdef PCG_SIM
    /* the simulated kernels run thread by thread, im2col's products in
     * OpenBLAS: a test of the trainer may take the faster path */
    if (path == PCG_CONV_AUTO && pcg_sim_conv_env() > 0) path = pcg_sim_conv_env();
#endif
    int tensor = pcg_conv_tensor_ready();
    if (path == PCG_CONV_TENSOR && !tensor) return PCG_CONV_IMPLICIT;
    if (path != PCG_CONV_AUTO) return path;
    if (tensor) return PCG_CONV_TENSOR;
    return cublas && *math != PCG_MATH_FP32 ? PCG_CONV_IM2COL : PCG_CONV_IMPLICIT;
}

int pcg_nn_launch_key(void)
{
    int math, path = conv_path(PCG_CONV_AUTO, &math);
    return (pcg_device_sms() * 4 + math) * 4 + path;
}

/* out = conv(in) + b, through a ReLU when relu is set (fused into the
 * implicit GEMM's epilogue; after cuBLAS's product otherwise). */
static int conv_forward(float *out, float *col, const float *in, const float *W, const float *b, int B,
                        const nn_conv_shape &s, int path = PCG_CONV_AUTO, int relu = 0)
{
    int math, p = conv_path(path, &math);
    if (p != PCG_CONV_IM2COL) return pcg_conv_implicit_forward(out, in, W, b, B, s, math, relu, p == PCG_CONV_TENSOR);
    if (conv_fits_32(B, s)) return -1;
    dim3 g(grid_for((size_t)B * s.OH * s.OW * s.C), (unsigned)(s.k * s.k));
    PCG_LAUNCH(im2col_kernel, g, NN_THREADS, 0, pcg_cuda_stream(), col, in, B, s);
    LAUNCH_CK();
    if (dense_forward(out, col, W, b, B * s.OH * s.OW, s.k * s.k * s.C, s.O)) return -1;
    return relu ? relu_forward(out, (size_t)B * s.OH * s.OW * s.O) : 0;
}

/* Rows of the reduction per span of the implicit weight gradient: spans
 * enough for the device's blocks, partial sums (spans x k*k*C x O) a small
 * part of the products' traffic. */
#define WGRAD_SPAN 4096

/* The implicit weight gradient: one span adds into dW; more put their
 * partial sums in col (which holds spans x k*k*C x O when spans*O <= rows)
 * and add them into dW in span order. */
static int conv_wgrad(float *dW, float *db, float *col, const float *dout, const float *in, int B,
                      const nn_conv_shape &s, int math, int tensor)
{
    int rows = B * s.OH * s.OW, K = s.k * s.k * s.C, bias_done = 0;
    int spans = (rows + WGRAD_SPAN - 1) / WGRAD_SPAN;
    if (spans == 1 || (size_t)spans * s.O > (size_t)rows) {
        if (pcg_conv_implicit_wgrad(dW, 1, rows, dout, in, B, s, math, tensor, db, &bias_done)) return -1;
        return bias_done ? 0 : add_col_sums(db, dout, rows, s.O);
    }
    /* the bias's span sums after the weights' where col holds both */
    size_t n = (size_t)K * s.O, parts = (size_t)spans * n;
    float *bias_parts = parts + (size_t)spans * s.O <= (size_t)rows * K ? col + parts : NULL;
    if (pcg_conv_implicit_wgrad(col, spans, WGRAD_SPAN, dout, in, B, s, math, tensor, bias_parts, &bias_done))
        return -1;
    PCG_LAUNCH(add_sums_kernel, (unsigned)((n + 63) / 64), 64, 0, pcg_cuda_stream(), dW, col, spans, (int)n);
    if (bias_done)
        PCG_LAUNCH(add_sums_kernel, (unsigned)((s.O + 63) / 64), 64, 0, pcg_cuda_stream(), db, bias_parts, spans, s.O);
    LAUNCH_CK();
    return bias_done ? 0 : add_col_sums(db, dout, rows, s.O);
}

/* din (may be NULL), zeroed wherever a non-NULL din_mask (the input's ReLU
 * output) is not positive; dW and db added into. */
static int conv_backward(float *din, float *dW, float *db, const float *dout, const float *in, float *col,
                         const float *W, int B, const nn_conv_shape &s, int path = PCG_CONV_AUTO,
                         const float *din_mask = NULL)
{
    int rows = B * s.OH * s.OW, K = s.k * s.k * s.C, math, p = conv_path(path, &math);
    if (p != PCG_CONV_IM2COL) {
        int tensor = p == PCG_CONV_TENSOR;
        if (conv_wgrad(dW, db, col, dout, in, B, s, math, tensor)) return -1;
        return din ? pcg_conv_implicit_dgrad(din, dout, W, B, s, math, din_mask, tensor) : 0;
    }
    if (dense_backward(NULL, dW, db, dout, col, W, rows, K, s.O)) return -1;
    if (!din) return 0;
    if (conv_fits_32(B, s)) return -1;
    if (pcg_sgemm_nt(rows, K, s.O, 1.0f, dout, W, 0.0f, col)) return -1;
    size_t n = (size_t)B * s.H * s.W * s.C;
    PCG_LAUNCH(col2im_kernel, grid_for(n), NN_THREADS, 0, pcg_cuda_stream(), din, col, B, s);
    LAUNCH_CK();
    return din_mask ? relu_backward(din, din_mask, n) : 0;
}

static int conv_path_known(int path)
{
    if (path >= PCG_CONV_AUTO && path <= PCG_CONV_TENSOR) return 0;
    pcg_cuda_set_error("conv: unknown path %d", path);
    return -1;
}

extern "C" int pcg_conv_forward(float *out, float *col, const float *in, const float *W, const float *b, int B,
                                const nn_conv_shape *s, int path)
{
    if (conv_path_known(path)) return -1;
    return B > 0 ? conv_forward(out, col, in, W, b, B, *s, path) : 0;
}

extern "C" int pcg_conv_backward(float *din, float *dW, float *db, const float *dout, const float *in, float *col,
                                 const float *W, int B, const nn_conv_shape *s, int path)
{
    if (conv_path_known(path)) return -1;
    return B > 0 ? conv_backward(din, dW, db, dout, in, col, W, B, *s, path) : 0;
}

/* ---- the network ---- */

/* Arena bytes pcg_nn_acts_alloc takes for cap samples, plus the largest
 * per-call scratch of forward and backward. */
size_t pcg_nn_acts_bytes(const nn_config *c, int cap)
{
    size_t n1 = (size_t)c->h1 * c->w1 * c->c1, ncol = (size_t)c->h2 * c->w2 * c->k * c->k * c->c1;
    size_t n2 = (size_t)c->h2 * c->w2 * c->c2;
    size_t per = 2 * (n1 + n2 + c->actor_hidden + c->n_actions + 2 * (size_t)c->critic_hidden + 1) + ncol;
    size_t taps = (size_t)c->k * c->k, nc = 2 * (size_t)(c->in_ch - 1);
    size_t scratch = ((size_t)cap / 64 + 1) * (taps * nc + 1) * c->c1 + ((size_t)cap * c->h1 * c->w1 / 256 + 1) * c->c1;
    return (per * (size_t)cap + scratch) * sizeof(float) + 32 * 256;
}

extern "C" int pcg_nn_acts_alloc(nn_acts *a, const nn_config *c, int cap)
{
    memset(a, 0, sizeof *a);
    size_t per[NN_N_ACTS];
    float **ptr[NN_N_ACTS];
    nn_acts_table(c, a, per, ptr);
    size_t mark = pcg_arena_mark();
    for (size_t i = 0; i < NN_N_ACTS; i++) {
        *ptr[i] = (float *)pcg_arena_alloc(per[i] * (size_t)cap * sizeof(float));
        if (!*ptr[i]) {
            pcg_arena_release(mark);
            memset(a, 0, sizeof *a);
            return -1;
        }
    }
    a->block = a->c1;
    a->cap = cap;
    return 0;
}

#define NN_CK(call)                                                                                                 \
    do {                                                                                                            \
        if (call) return -1;                                                                                        \
    } while (0)

/* The batch within the activations' capacity, and at most as many input
 * channels as the one-hot kernels' accumulators hold. */
static int nn_call_fits(const char *pass, const nn_config *c, const nn_acts *a, int B)
{
    if (B <= 0 || B > a->cap) {
        pcg_cuda_set_error("%s: batch %d outside 1..%d", pass, B, a->cap);
        return 0;
    }
    if (c->in_ch > OBS_CHANNELS) {
        pcg_cuda_set_error("%s: %d input channels, at most %d", pass, c->in_ch, OBS_CHANNELS);
        return 0;
    }
    return 1;
}

extern "C" int pcg_nn_forward(const nn_config *c, const size_t *off, const float *P, nn_acts *a,
                              const unsigned char *obs, int B)
{
    if (!nn_call_fits("nn_forward", c, a, B)) return -1;
    nn_conv_shape s1, s2;
    nn_conv_shapes(c, &s1, &s2);
    nn_obs_view va = nn_actor_view(c), vc = nn_critic_view(c);
    int feat = c->h2 * c->w2 * c->c2;
    /* actor */
    NN_CK(pcg_conv_onehot_forward(a->c1, obs, va, P + off[NN_C1W], P + off[NN_C1B], B, s1, 1));
    NN_CK(conv_forward(a->c2, a->col, a->c1, P + off[NN_C2W], P + off[NN_C2B], B, s2, PCG_CONV_AUTO, 1));
    NN_CK(dense_forward(a->a1, a->c2, P + off[NN_A1W], P + off[NN_A1B], B, feat, c->actor_hidden));
    NN_CK(relu_forward(a->a1, (size_t)B * c->actor_hidden));
    NN_CK(dense_forward(a->logits, a->a1, P + off[NN_A2W], P + off[NN_A2B], B, c->actor_hidden, c->n_actions));
    /* critic */
    size_t nv = (size_t)B * c->critic_hidden;
    NN_CK(pcg_dense_onehot_forward(a->v1, obs, vc, P + off[NN_V1W], P + off[NN_V1B], B, c->in_ch, c->critic_hidden));
    NN_CK(relu_forward(a->v1, nv));
    NN_CK(dense_forward(a->v2, a->v1, P + off[NN_V2W], P + off[NN_V2B], B, c->critic_hidden, c->critic_hidden));
    NN_CK(relu_forward(a->v2, nv));
    NN_CK(dense_forward(a->value, a->v2, P + off[NN_V3W], P + off[NN_V3B], B, c->critic_hidden, 1));
    return 0;
}

extern "C" int pcg_nn_backward(const nn_config *c, const size_t *off, const float *P, float *G, nn_acts *a,
                               const unsigned char *obs, int B)
{
    if (!nn_call_fits("nn_backward", c, a, B)) return -1;
    nn_conv_shape s1, s2;
    nn_conv_shapes(c, &s1, &s2);
    nn_obs_view va = nn_actor_view(c), vc = nn_critic_view(c);
    int feat = c->h2 * c->w2 * c->c2;
    /* actor */
    NN_CK(dense_backward(a->da1, G + off[NN_A2W], G + off[NN_A2B], a->dlogits, a->a1, P + off[NN_A2W], B,
                         c->actor_hidden, c->n_actions));
    NN_CK(relu_backward(a->da1, a->a1, (size_t)B * c->actor_hidden));
    NN_CK(dense_backward(a->dc2, G + off[NN_A1W], G + off[NN_A1B], a->da1, a->c2, P + off[NN_A1W], B, feat,
                         c->actor_hidden));
    NN_CK(relu_backward(a->dc2, a->c2, (size_t)B * feat));
    NN_CK(conv_backward(a->dc1, G + off[NN_C2W], G + off[NN_C2B], a->dc2, a->c1, a->col, P + off[NN_C2W], B, s2,
                        PCG_CONV_AUTO, a->c1));
    NN_CK(pcg_conv_onehot_backward(G + off[NN_C1W], G + off[NN_C1B], a->dc1, obs, va, B, s1));
    /* critic */
    size_t nv = (size_t)B * c->critic_hidden;
    NN_CK(dense_backward(a->dv2, G + off[NN_V3W], G + off[NN_V3B], a->dvalue, a->v2, P + off[NN_V3W], B,
                         c->critic_hidden, 1));
    NN_CK(relu_backward(a->dv2, a->v2, nv));
    NN_CK(dense_backward(a->dv1, G + off[NN_V2W], G + off[NN_V2B], a->dv2, a->v1, P + off[NN_V2W], B,
                         c->critic_hidden, c->critic_hidden));
    NN_CK(relu_backward(a->dv1, a->v1, nv));
    NN_CK(pcg_dense_onehot_backward(G + off[NN_V1W], a->dv1, obs, vc, B, c->in_ch, c->critic_hidden));
    return add_col_sums(G + off[NN_V1B], a->dv1, B, c->critic_hidden);
}

/* ---- PPO loss (host/learn/ppo_loss.h, one thread per sample, in double) ---- */

#define PPO_REAL float
#define PPO_FN(name) name##_dev
#include "ppo_loss.h"
#undef PPO_REAL
#undef PPO_FN

__global__ static void ppo_loss_kernel(const float *logits, const float *value, const int *act,
                                       const float *old_logp, const float *adv, const float *old_value,
                                       const float *ret, int B, int A, double clip_eps, double vf_coef,
                                       double ent_coef, double scale, float *dlogits, float *dvalue, double *terms)
{
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= B) return;
    ppo_loss_one_dev(logits + (size_t)n * A, A, act[n], old_logp[n], adv[n], value[n], old_value[n], ret[n], clip_eps,
                     vf_coef, ent_coef, scale, dlogits + (size_t)n * A, dvalue + n, terms + (size_t)n * 6);
}

/* out[k] = sum over samples of terms[n][k] in sample order (out[0] scaled). */
__global__ static void ppo_sum_kernel(const double *terms, int B, double scale, double *out)
{
    int k = threadIdx.x;
    if (k >= 6) return;
    double s = 0;
    for (int n = 0; n < B; n++) s += terms[(size_t)n * 6 + k];
    out[k] = k == 0 ? scale * s : s;
}

extern "C" int pcg_nn_ppo_loss(nn_acts *a, int B, int n_actions, const int *act, const float *old_logp,
                               const float *adv, const float *old_value, const float *ret, double clip_eps,
                               double vf_coef, double ent_coef, double scale, double *out)
{
    if (B <= 0 || B > a->cap) {
        pcg_cuda_set_error("nn_ppo_loss: batch %d outside 1..%d", B, a->cap);
        return -1;
    }
    size_t mark = pcg_arena_mark();
    double *terms = (double *)pcg_arena_alloc((size_t)B * 6 * sizeof(double));
    if (!terms) return -1;
    cudaStream_t s = pcg_cuda_stream();
    PCG_LAUNCH(ppo_loss_kernel, grid_for((size_t)B), NN_THREADS, 0, s, a->logits, a->value, act, old_logp, adv, old_value,
                                                                ret, B, n_actions, clip_eps, vf_coef, ent_coef,
                                                                scale, a->dlogits, a->dvalue, terms);
    PCG_LAUNCH(ppo_sum_kernel, 1, 32, 0, s, terms, B, scale, out);
    pcg_arena_release(mark);
    LAUNCH_CK();
    return 0;
}
