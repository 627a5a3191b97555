/* Conv 2 as implicit GEMMs: the three products of im2col + sgemm (forward,
 * weight gradient, input gradient) with the im2col matrix never stored.
 * Each kernel's operand loader computes the entry it needs from conv 1's
 * output or conv 2's output gradient as it fills the shared-memory tile,
 * so a 2048-sample chunk no longer writes and re-reads a matrix of
 * B*OH*OW x k*k*C floats (1.6 GB at the paper's shapes) five times.
 *
 * The tiling is the built-in sgemm's (cuda/tile.cuh): 64x64 tiles of
 * the product per block of 16x16 threads, fp32 FMA with fp32
 * accumulation, each operand rounded as the matmul mode would round it
 * (pcg_round_operand).  Each kernel has a tensor-core twin (NAME_tc_kernel)
 * with the same loaders and epilogue on cuda/tile_tc.cuh's WMMA product,
 * which TF32 and bf16 take on devices of compute capability 8 or more,
 * and a staged one (cuda/conv_staged.cu, cuda/conv_wgrad.cu) taken first
 * where the shape fits it, in fp32 too (as three TF32 products).
 *
 * The input gradient is cut by output phase: an input row iy receives
 * only the taps ky with ky = iy + pad (mod stride), so the pixels of one
 * phase (iy mod stride, ix mod stride) form one GEMM over those taps and
 * no product of a tap that misses the pixel is formed. */
#include "conv_parts.cuh"

/* im2col(in)[row][e], e = (ky*k + kx)*C + c, 0 in the padding. */
__device__ static float im2col_at(const float *in, const nn_conv_shape &s, int row, int e)
{
    int per = s.OH * s.OW, n = row / per, p = row % per;
    int tap = e / s.C, c = e % s.C;
    int iy = p / s.OW * s.stride - s.pad + tap / s.k, ix = p % s.OW * s.stride - s.pad + tap % s.k;
    if (iy < 0 || iy >= s.H || ix < 0 || ix >= s.W) return 0.0f;
    return in[(((size_t)n * s.H + iy) * s.W + ix) * s.C + c];
}

/* ---- forward: out[row][o] = im2col(in)[row] . W[][o] + b[o] ---- */

struct fwd_a {
    const float *in;
    nn_conv_shape s;
    __device__ float operator()(int row, int e) const { return im2col_at(in, s, row, e); }
};

struct fwd_b { /* W[e][o], by (o, e) */
    const float *W;
    int O;
    __device__ float operator()(int o, int e) const { return W[(size_t)e * O + o]; }
};

__global__ static void conv_fwd_kernel(float *out, const float *in, const float *W, const float *b, int B,
                                       nn_conv_shape s, int math, int relu)
{
    __shared__ tile_slice As, Bs;
    int M = B * s.OH * s.OW, kr = s.k * s.k * s.C;
    float acc[COMB][COMB];
    tile_product(acc, fwd_a{in, s}, fwd_b{W, s.O}, M, s.O, kr, true, false, math, As, Bs);
    fwd_store(out, acc, b, blockIdx.x * TILE, M, s, relu);
}

__global__ static void conv_fwd_tc_kernel(float *out, const float *in, const float *W, const float *b, int B,
                                          nn_conv_shape s, int math, int relu)
{
    __shared__ tc_tiles t;
    int M = B * s.OH * s.OW, kr = s.k * s.k * s.C;
    float acc[COMB][COMB];
    tc_tile_product(t, fwd_a{in, s}, fwd_b{W, s.O}, M, s.O, kr, true, false, math);
    tc_comb(acc, t.C);
    fwd_store(out, acc, b, blockIdx.x * TILE, M, s, relu);
}

/* ---- weight gradient: dW[e][o] = sum over rows of im2col(in)[row][e] dout[row][o] ---- */

struct wgrad_a { /* im2col(in)[r0 + row][e], by (e, row) */
    const float *in;
    nn_conv_shape s;
    int r0;
    __device__ float operator()(int e, int row) const { return im2col_at(in, s, r0 + row, e); }
};

struct wgrad_b { /* dout[r0 + row][o], by (o, row) */
    const float *dout;
    int O, r0;
    __device__ float operator()(int o, int row) const { return dout[(size_t)(r0 + row) * O + o]; }
};

/* Rows span*z .. of the reduction into dst + z*kr*O (grid z), added to
 * what dst holds when accumulate is set. */
__device__ static void wgrad_store(float *dst, const float (&acc)[COMB][COMB], int kr, const nn_conv_shape &s,
                                   int accumulate)
{
    float *d = dst + (size_t)blockIdx.z * kr * s.O;
    for (int a = 0; a < COMB; a++)
        for (int c = 0; c < COMB; c++) {
            int i = blockIdx.x * TILE + threadIdx.y + SIDE * a, j = blockIdx.y * TILE + threadIdx.x + SIDE * c;
            if (i >= kr || j >= s.O) continue;
            float *p = d + (size_t)i * s.O + j;
            *p = accumulate ? *p + acc[a][c] : acc[a][c];
        }
}

__global__ static void conv_wgrad_kernel(float *dst, const float *dout, const float *in, int B, nn_conv_shape s,
                                         int span, int math, int accumulate)
{
    __shared__ tile_slice As, Bs;
    int rows = B * s.OH * s.OW, kr = s.k * s.k * s.C, r0 = blockIdx.z * span;
    int len = min(span, rows - r0);
    float acc[COMB][COMB];
    tile_product(acc, wgrad_a{in, s, r0}, wgrad_b{dout, s.O, r0}, kr, s.O, len, false, false, math, As, Bs);
    wgrad_store(dst, acc, kr, s, accumulate);
}

__global__ static void conv_wgrad_tc_kernel(float *dst, const float *dout, const float *in, int B, nn_conv_shape s,
                                            int span, int math, int accumulate)
{
    __shared__ tc_tiles t;
    int rows = B * s.OH * s.OW, kr = s.k * s.k * s.C, r0 = blockIdx.z * span;
    int len = min(span, rows - r0);
    float acc[COMB][COMB];
    tc_tile_product(t, wgrad_a{in, s, r0}, wgrad_b{dout, s.O, r0}, kr, s.O, len, false, false, math);
    tc_comb(acc, t.C);
    wgrad_store(dst, acc, kr, s, accumulate);
}

/* ---- input gradient, one output phase per grid z ---- */

/* An inner index (tap of the phase, o): its tap and output channel. */
struct phase_tap {
    int ky, kx, o;
};

__device__ static phase_tap tap_at(const conv_phase &f, const nn_conv_shape &s, int q)
{
    int t = q / s.O;
    return phase_tap{f.ky0 + s.stride * (t / f.tx), f.kx0 + s.stride * (t % f.tx), q % s.O};
}

struct dgrad_a { /* dout at the output position tap (ky, kx) of the pixel reads */
    const float *dout;
    nn_conv_shape s;
    conv_phase f;
    __device__ float operator()(int pix, int q) const
    {
        phase_pixel x = pixel_at(f, s, pix);
        phase_tap t = tap_at(f, s, q);
        int dy = x.iy + s.pad - t.ky, dx = x.ix + s.pad - t.kx;
        if (dy < 0 || dx < 0) return 0.0f;
        int oy = dy / s.stride, ox = dx / s.stride;
        if (oy >= s.OH || ox >= s.OW) return 0.0f;
        return dout[(((size_t)x.n * s.OH + oy) * s.OW + ox) * s.O + t.o];
    }
};

struct dgrad_b { /* W[(ky*k + kx)*C + c][o], by (c, (tap of the phase, o)) */
    const float *W;
    nn_conv_shape s;
    conv_phase f;
    __device__ float operator()(int c, int q) const
    {
        phase_tap t = tap_at(f, s, q);
        return W[((size_t)(t.ky * s.k + t.kx) * s.C + c) * s.O + t.o];
    }
};

__global__ static void conv_dgrad_kernel(float *din, const float *dout, const float *W, int B, nn_conv_shape s,
                                         int math, const float *mask)
{
    __shared__ tile_slice As, Bs;
    conv_phase f = phase_of(s, blockIdx.z);
    int M = B * f.ny * f.nx, kr = f.ty * f.tx * s.O;
    if ((int)blockIdx.x * TILE >= M) return; /* the grid fits the largest phase */
    float acc[COMB][COMB];
    tile_product(acc, dgrad_a{dout, s, f}, dgrad_b{W, s, f}, M, s.C, kr, true, true, math, As, Bs);
    dgrad_store(din, acc, blockIdx.x * TILE, M, s, f, mask);
}

__global__ static void conv_dgrad_tc_kernel(float *din, const float *dout, const float *W, int B, nn_conv_shape s,
                                            int math, const float *mask)
{
    __shared__ tc_tiles t;
    conv_phase f = phase_of(s, blockIdx.z);
    int M = B * f.ny * f.nx, kr = f.ty * f.tx * s.O;
    if ((int)blockIdx.x * TILE >= M) return; /* the grid fits the largest phase */
    float acc[COMB][COMB];
    tc_tile_product(t, dgrad_a{dout, s, f}, dgrad_b{W, s, f}, M, s.C, kr, true, true, math);
    tc_comb(acc, t.C);
    dgrad_store(din, acc, blockIdx.x * TILE, M, s, f, mask);
}

/* ---- launches ---- */

static unsigned tiles(long n)
{
    return (unsigned)((n + TILE - 1) / TILE);
}

/* The grids' rows and the products' sizes in int (what the kernels index
 * by), and grid y within its limit. */
static int implicit_fits(int B, const nn_conv_shape &s)
{
    long long big = (long long)B * s.H * s.W * s.C, out = (long long)B * s.OH * s.OW * s.O;
    long long rows = (long long)B * s.OH * s.OW * (s.k * s.k * s.C);
    if (big < 0x7fffffff && out < 0x7fffffff && rows < 0x7fffffff && tiles(s.C) <= 65535 && tiles(s.O) <= 65535)
        return 0;
    pcg_cuda_set_error("conv: batch %d of %dx%dx%d inputs is past the implicit GEMM's 32-bit indices", B, s.H, s.W,
                       s.C);
    return -1;
}

/* 1 when the current device runs WMMA TF32 (compute capability 8 or
 * more: the kernels built for it have the tensor-core products), cached
 * per device. */
int pcg_conv_tensor_ready(void)
{
    static int known_dev = -1, ready = 0;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return 0;
    if (dev != known_dev) {
        /* an attribute, not cudaGetDeviceProperties: that reads the host's
         * memory size in the simulation, a system call the confined
         * training worker may not make */
        int major = 0;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) return 0;
        ready = major >= 8, known_dev = dev;
    }
    return ready;
}

int pcg_conv_implicit_forward(float *out, const float *in, const float *W, const float *b, int B,
                              const nn_conv_shape &s, int math, int relu, int tensor)
{
    if (implicit_fits(B, s)) return -1;
    if (tensor) {
        int r = pcg_conv_staged_forward(out, in, W, b, B, s, math, relu);
        if (r <= 0) return r;
    }
    dim3 g(tiles((long)B * s.OH * s.OW), tiles(s.O)), blk(SIDE, SIDE);
    if (tensor && math != PCG_MATH_FP32) PCG_LAUNCH(conv_fwd_tc_kernel, g, blk, 0, pcg_cuda_stream(), out, in, W, b, B, s, math, relu);
    else PCG_LAUNCH(conv_fwd_kernel, g, blk, 0, pcg_cuda_stream(), out, in, W, b, B, s, math, relu);
    PCG_CK(cudaGetLastError(), -1);
    return 0;
}

int pcg_conv_implicit_wgrad(float *dst, int splits, int span, const float *dout, const float *in, int B,
                            const nn_conv_shape &s, int math, int tensor, float *bias_dst, int *bias_done)
{
    *bias_done = 0;
    if (implicit_fits(B, s)) return -1;
    if (splits > 65535) {
        pcg_cuda_set_error("conv: %d row spans of the weight gradient, at most 65535", splits);
        return -1;
    }
    if (tensor) {
        int r = pcg_conv_staged_wgrad(dst, splits, span, dout, in, B, s, math, bias_dst, bias_done);
        if (r <= 0) return r;
    }
    dim3 g(tiles(s.k * s.k * s.C), tiles(s.O), (unsigned)splits), blk(SIDE, SIDE);
    if (tensor && math != PCG_MATH_FP32)
        PCG_LAUNCH(conv_wgrad_tc_kernel, g, blk, 0, pcg_cuda_stream(), dst, dout, in, B, s, span, math, splits == 1);
    else PCG_LAUNCH(conv_wgrad_kernel, g, blk, 0, pcg_cuda_stream(), dst, dout, in, B, s, span, math, splits == 1);
    PCG_CK(cudaGetLastError(), -1);
    return 0;
}

int pcg_conv_implicit_dgrad(float *din, const float *dout, const float *W, int B, const nn_conv_shape &s, int math,
                            const float *mask, int tensor)
{
    if (implicit_fits(B, s)) return -1;
    /* phase (0, 0) has the most pixels */
    long most = (long)B * ((s.H + s.stride - 1) / s.stride) * ((s.W + s.stride - 1) / s.stride);
    dim3 g(tiles(most), tiles(s.C), (unsigned)(s.stride * s.stride)), blk(SIDE, SIDE);
    if (tensor) {
        int r = pcg_conv_staged_dgrad(din, dout, W, B, s, math, mask);
        if (r <= 0) return r;
    }
    if (tensor && math != PCG_MATH_FP32) PCG_LAUNCH(conv_dgrad_tc_kernel, g, blk, 0, pcg_cuda_stream(), din, dout, W, B, s, math, mask);
    else PCG_LAUNCH(conv_dgrad_kernel, g, blk, 0, pcg_cuda_stream(), din, dout, W, B, s, math, mask);
    PCG_CK(cudaGetLastError(), -1);
    return 0;
}
