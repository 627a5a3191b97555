/* Conv 2's weight gradient on tensor cores with its operands staged:
 * dW[(ky*k + kx)*C + c][o] = the sum over output pixels (n, oy, ox) of
 * in(n, oy*stride - pad + ky, ox*stride - pad + kx, c) dout(n, oy, ox, o).
 *
 * conv_wgrad_tc_kernel (cuda/conv.cu) gives each block one 64-entry tile
 * of (tap, channel); at the paper's shapes (C 64) that is one tap, so the
 * blocks of a call read all of dout once per tap (49 times) and conv 1's
 * outputs once per tap that reaches them (about 12 times).  Here a block
 * takes a kernel row ky, all k taps kx along it, for one 64-channel tile
 * and one 64-output tile, and walks its span output row by output row,
 * TC_K pixels ox at a time.  For each step it stages in shared memory the
 * dout of those pixels (the B operand, shared by the k taps) and the
 * input row window they reach ((TC_K - 1)*stride + k pixels by 64
 * channels), each read from global memory once, and loads every tap's A
 * fragment straight from the window: A(c, q) = win[q*stride + kx][c] is a
 * column-major matrix with ldm stride*WG_LD.  Every warp holds the k
 * taps' accumulators for its 16 channels by 32 outputs.  Output rows
 * whose input row ky misses (the padding) add nothing and are skipped.
 *
 * Per tap the reduction still runs over the span's pixels in order; the
 * pixels past OW of a row's last step have dout 0.  In fp32 (SPLIT) the
 * staged operands are the fp32 values and each product is three TF32
 * products (tc_split, cuda/tile_tc.cuh). */
#include "common.cuh"
#include "nn_shapes.h"
#include "tile_tc.cuh"

#define WG_TAPS 8 /* the most taps along a kernel row one block holds */
/* a window pixel's channels, padded to 288 bytes: every pixel's fragment
 * starts 256-bit aligned and ldm stays a multiple of 4 floats */
#define WG_LD (TILE + 8)

struct wgrad_tiles {
    alignas(32) float B[TC_K][TC_LD];  /* B[q][j] = dout(pixel ox0 + q, o0 + j) */
    alignas(32) float C[TILE][TC_LD];  /* the window, then each tap's product tile */
};

/* The window's pixels for a step of TC_K output pixels */
static __host__ __device__ int window_pixels(const nn_conv_shape &s)
{
    return (TC_K - 1) * s.stride + s.k;
}

#if PCG_TC_DEVICE
/* The block's place: kernel row ky, channels c0.., outputs o0.. */
struct wgrad_place {
    int ky, c0, o0;
};

__device__ static wgrad_place place_of(const nn_conv_shape &s)
{
    int ctiles = (s.C + TILE - 1) / TILE;
    return wgrad_place{(int)blockIdx.x / ctiles, (int)blockIdx.x % ctiles * TILE, (int)blockIdx.y * TILE};
}

/* win[x*WG_LD + c] = in(n, iy, ox0*stride - pad + x, c0 + c) and
 * t.B[q][j] = dout(n, oy, ox0 + q, o0 + j), 0 outside in, past OW and past
 * C or O, rounded as the mode rounds; a block that sums the bias adds the
 * dout it loads, as it is, into bias (one column, o0 + tid % TILE, each
 * thread) */
__device__ static void wgrad_stage(wgrad_tiles &t, const float *in, const float *dout, const nn_conv_shape &s,
                                   const wgrad_place &pl, int n, int oy, int iy, int ox0, int math, int tid,
                                   bool sums_bias, float &bias)
{
    float *win = &t.C[0][0];
    const float *row = in + ((size_t)n * s.H + iy) * s.W * s.C;
    int x0 = ox0 * s.stride - s.pad, cells = window_pixels(s) * TILE;
    for (int e = tid; e < cells; e += SIDE * SIDE) {
        int c = e % TILE, x = e / TILE, ix = x0 + x;
        float v = ix >= 0 && ix < s.W && pl.c0 + c < s.C ? row[(size_t)ix * s.C + pl.c0 + c] : 0.0f;
        win[x * WG_LD + c] = pcg_round_operand(v, math);
    }
    const float *d = dout + ((size_t)n * s.OH + oy) * s.OW * s.O;
    for (int e = tid; e < TC_K * TILE; e += SIDE * SIDE) {
        int j = e % TILE, q = e / TILE, ox = ox0 + q;
        float v = ox < s.OW && pl.o0 + j < s.O ? d[(size_t)ox * s.O + pl.o0 + j] : 0.0f;
        t.B[q][j] = pcg_round_operand(v, math);
        if (sums_bias) bias += v;
    }
}

/* The block's bias sums (its threads' columns: SIDE*SIDE / TILE threads
 * each) added up in thread order, into bias_dst + z*O (added to what it
 * holds when accumulate is set); t.C is free */
__device__ static void wgrad_bias_store(float *bias_dst, wgrad_tiles &t, const nn_conv_shape &s,
                                        const wgrad_place &pl, float bias, int tid, int accumulate)
{
    float *part = &t.C[0][0];
    part[tid] = bias;
    __syncthreads();
    if (tid >= TILE || pl.o0 + tid >= s.O) return;
    float sum = 0;
    for (int k = tid; k < SIDE * SIDE; k += TILE) sum += part[k];
    float *p = bias_dst + (size_t)blockIdx.z * s.O + pl.o0 + tid;
    *p = accumulate ? *p + sum : sum;
}

/* The warp's 16 channels x 32 outputs of every tap: rows wr.., columns wc.. */
struct wgrad_warp {
    int wr, wc;
    nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, TC_K, float> acc[WG_TAPS][2];
};

__device__ static void wgrad_begin(wgrad_warp &w)
{
    tc_place(w.wr, w.wc);
    PCG_UNROLL
    for (int kx = 0; kx < WG_TAPS; kx++)
        for (int f = 0; f < 2; f++) nvcuda::wmma::fill_fragment(w.acc[kx][f], 0.0f);
}

/* acc += the staged step's products: the dout fragments loaded once, used
 * by every tap (loops unrolled to WG_TAPS so the accumulators stay in
 * registers); SPLIT: fp32 operands, in three TF32 products (tc_split) */
template <bool SPLIT> __device__ static void wgrad_multiply(wgrad_warp &w, const wgrad_tiles &t, const nn_conv_shape &s)
{
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_b, 16, 16, TC_K, wmma::precision::tf32, wmma::row_major> b[2], b_lo[SPLIT ? 2 : 1];
    for (int f = 0; f < 2; f++) {
        wmma::load_matrix_sync(b[f], &t.B[0][w.wc + 16 * f], TC_LD);
        if (SPLIT) tc_split(b[f], b_lo[SPLIT ? f : 0]);
    }
    const float *win = &t.C[0][0];
    PCG_UNROLL
    for (int kx = 0; kx < WG_TAPS; kx++) {
        if (kx >= s.k) break;
        wmma::fragment<wmma::matrix_a, 16, 16, TC_K, wmma::precision::tf32, wmma::col_major> a, a_lo;
        wmma::load_matrix_sync(a, win + kx * WG_LD + w.wr, s.stride * WG_LD);
        if (SPLIT) tc_split(a, a_lo);
        for (int f = 0; f < 2; f++) tc_mma<SPLIT>(w.acc[kx][f], a, a_lo, b[f], b_lo[SPLIT ? f : 0]);
    }
}

/* Tap (ky, kx)'s tile, in t.C, into dst + z*kr*O, added to what dst holds
 * when accumulate is set */
__device__ static void wgrad_tap_store(float *dst, const wgrad_tiles &t, const nn_conv_shape &s,
                                       const wgrad_place &pl, int kx, int accumulate)
{
    size_t kr = (size_t)s.k * s.k * s.C, e0 = (size_t)(pl.ky * s.k + kx) * s.C + pl.c0;
    float *d = dst + blockIdx.z * kr * s.O;
    for (int a = 0; a < COMB; a++)
        for (int c = 0; c < COMB; c++) {
            int i = threadIdx.y + SIDE * a, j = threadIdx.x + SIDE * c;
            if (pl.c0 + i >= s.C || pl.o0 + j >= s.O) continue;
            float *p = d + (e0 + i) * s.O + pl.o0 + j;
            *p = accumulate ? *p + t.C[i][j] : t.C[i][j];
        }
}
#endif

/* bias_ky: the kernel row whose blocks of the first channel tile also sum
 * the bias (one whose input row no output row misses), -1 for none */
template <bool SPLIT>
__global__ static void conv_wgrad_staged_tc_kernel(float *dst, const float *dout, const float *in, int B,
                                                   nn_conv_shape s, int span, int math, int accumulate,
                                                   float *bias_dst, int bias_ky)
{
#if PCG_TC_DEVICE
    __shared__ wgrad_tiles t;
    int tid = threadIdx.y * SIDE + threadIdx.x;
    wgrad_place pl = place_of(s);
    bool sums_bias = pl.ky == bias_ky && pl.c0 == 0;
    float bias = 0;
    long long rows = (long long)B * s.OH * s.OW, start = (long long)blockIdx.z * span;
    long long stop = start + span < rows ? start + span : rows;
    int first = (int)(start / s.OW), end = (int)(stop / s.OW); /* output rows n*OH + oy */
    wgrad_warp w;
    wgrad_begin(w);
    for (int r = first; r < end; r++) {
        int n = r / s.OH, oy = r % s.OH, iy = oy * s.stride - s.pad + pl.ky;
        if (iy < 0 || iy >= s.H) continue; /* the same for the whole block */
        for (int ox0 = 0; ox0 < s.OW; ox0 += TC_K) {
            wgrad_stage(t, in, dout, s, pl, n, oy, iy, ox0, math, tid, sums_bias, bias);
            __syncthreads();
            wgrad_multiply<SPLIT>(w, t, s);
            __syncthreads();
        }
    }
    PCG_UNROLL
    for (int kx = 0; kx < WG_TAPS; kx++) {
        if (kx >= s.k) break;
        for (int f = 0; f < 2; f++)
            nvcuda::wmma::store_matrix_sync(&t.C[w.wr][w.wc + 16 * f], w.acc[kx][f], TC_LD,
                                            nvcuda::wmma::mem_row_major);
        __syncthreads();
        wgrad_tap_store(dst, t, s, pl, kx, accumulate);
        __syncthreads(); /* before the next tap overwrites t.C */
    }
    if (sums_bias) wgrad_bias_store(bias_dst, t, s, pl, bias, tid, accumulate);
#else
    (void)dst, (void)dout, (void)in, (void)B, (void)s, (void)span, (void)math, (void)accumulate;
    (void)bias_dst, (void)bias_ky;
    __trap();
#endif
}

/* The first kernel row whose input row every output row reaches (its
 * blocks see every output pixel once), or -1 */
static int bias_row(const nn_conv_shape &s)
{
    for (int ky = 0; ky < s.k; ky++)
        if (ky - s.pad >= 0 && (s.OH - 1) * s.stride - s.pad + ky < s.H) return ky;
    return -1;
}

/* A span must hold whole output rows; a kernel row's taps, and the window,
 * must fit what a block holds. */
static int wgrad_fits(const nn_conv_shape &s, int span)
{
    return s.k <= WG_TAPS && span % s.OW == 0 && window_pixels(s) * WG_LD <= TILE * TC_LD;
}

int pcg_conv_staged_wgrad(float *dst, int splits, int span, const float *dout, const float *in, int B,
                          const nn_conv_shape &s, int math, float *bias_dst, int *bias_done)
{
    *bias_done = 0;
    if (!wgrad_fits(s, span)) return 1;
    int bias_ky = bias_dst ? bias_row(s) : -1;
    dim3 g((unsigned)(s.k * ((s.C + TILE - 1) / TILE)), (unsigned)((s.O + TILE - 1) / TILE), (unsigned)splits);
    dim3 blk(SIDE, SIDE);
    if (math == PCG_MATH_FP32)
        PCG_LAUNCH_AS("conv_wgrad_staged_tc_kernel<split>", conv_wgrad_staged_tc_kernel<true>, g, blk, 0,
                      pcg_cuda_stream(), dst, dout, in, B, s, span, math, splits == 1, bias_dst, bias_ky);
    else
        PCG_LAUNCH_AS("conv_wgrad_staged_tc_kernel", conv_wgrad_staged_tc_kernel<false>, g, blk, 0, pcg_cuda_stream(),
                      dst, dout, in, B, s, span, math, splits == 1, bias_dst, bias_ky);
    PCG_CK(cudaGetLastError(), -1);
    *bias_done = bias_ky >= 0;
    return 0;
}
