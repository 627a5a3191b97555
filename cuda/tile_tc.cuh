/* tile_product (cuda/tile.cuh) on tensor cores: the same 64x64 tile of
 * A B per block of 16x16 threads, the same operand loaders and rounding
 * into shared-memory slices of 16 along the inner index, but the products
 * are WMMA m16n16k8 TF32 fragments: the block's 8 warps each take 16 rows
 * by 32 columns of the tile (two accumulators), and the accumulators go
 * through shared memory so that each kernel's epilogue reads its outputs
 * as the FMA kernels' threads hold them (rows ty + 16a, columns tx +
 * 16c).
 *
 * bf16 runs on these TF32 fragments too: pcg_round_operand rounds each
 * operand to bf16 (8 significant bits) before it enters shared memory,
 * and TF32 (11) holds every bf16 value exactly, so the products are those
 * of bf16 operands, exact, summed in fp32.  For the same reason the
 * fragments are not passed through __float_to_tf32: their elements are
 * TF32 values already, which that conversion would leave as they are.
 * Conv 2's staged forward and input gradient (cuda/conv_staged.cu) take
 * real bf16 fragments in bf16 (tc_bf16 below), which multiply at twice
 * TF32's rate.
 *
 * WMMA TF32 needs sm_80: a device pass for an older architecture compiles
 * no WMMA (PCG_TC_DEVICE is 0 there, and the product traps); the host
 * runs these kernels only where the device reports compute capability 8
 * or more (pcg_conv_tensor_ready, cuda/conv.cu). */
#ifndef PCG_CUDA_TILE_TC_CUH
#define PCG_CUDA_TILE_TC_CUH
#include "tile.cuh"
#include <cuda_bf16.h>
#include <mma.h>

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define PCG_TC_DEVICE 1
#else
#define PCG_TC_DEVICE 0
#endif

/* A row of a slice or of the output tile: 4 floats of padding keep ldm a
 * multiple of 4 floats and shift successive rows across the banks; a
 * fragment starts at row 0 or 8 of a slice (8 x 68 floats, 68 x 32
 * bytes) or row 16w of the output tile, and at a column that is a
 * multiple of 16 floats: 32-byte aligned, as load_matrix_sync and
 * store_matrix_sync require. */
#define TC_LD (TILE + 4)
#define TC_K 8 /* inner index per fragment product */

typedef float tc_slice[SLICE][TC_LD];

/* The operands of the staged kernels' products: TF32 fragments, m16n16k8
 * from floats in shared memory (fp32's split and bf16's rounded operands
 * ride on them too), or bf16 fragments, m16n16k16 from 2-byte values.
 * K: the inner indices of one product; PAD: elements past a slice's row,
 * which keep ldm a multiple of 16 bytes and shift successive rows across
 * the banks; put: a value already rounded to the mode, as a slice holds
 * it. */
struct tc_tf32 {
    typedef float elem;
    enum { K = TC_K, PAD = 4 };
    __device__ static elem put(float rounded) { return rounded; }
};
struct tc_bf16 {
    typedef __nv_bfloat16 elem;
    enum { K = 16, PAD = 8 };
    __device__ static elem put(float rounded) { return __ushort_as_bfloat16(pcg_bf16_bits(rounded)); }
};

struct tc_tiles {
    alignas(32) tc_slice A;  /* A[q][i] = A(i0 + i, k0 + q) */
    alignas(32) tc_slice B;  /* B[q][j] = B(k0 + q, j0 + j) */
    alignas(32) float C[TILE][TC_LD]; /* the product tile, by rows */
};

#if PCG_TC_DEVICE
/* Op's fragments: A column-major, B row-major, the fp32 accumulator */
template <class Op> struct tc_precision {
    typedef nvcuda::wmma::precision::tf32 type;
};
template <> struct tc_precision<tc_bf16> {
    typedef __nv_bfloat16 type;
};
template <class Op>
using tc_frag_a = nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, Op::K, typename tc_precision<Op>::type,
                                         nvcuda::wmma::col_major>;
template <class Op>
using tc_frag_b = nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, Op::K, typename tc_precision<Op>::type,
                                         nvcuda::wmma::row_major>;
template <class Op> using tc_acc = nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, Op::K, float>;

/* The warp's 16 x 32 of the tile: rows wr.., columns wc.. */
struct tc_warp {
    int wr, wc;
    nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, TC_K, float> acc[2];
};

/* The calling warp's 16 x 32 of a 64 x 64 tile: rows wr.., columns wc.. */
__device__ static void tc_place(int &wr, int &wc)
{
    int warp = (threadIdx.y * SIDE + threadIdx.x) / 32;
    wr = (warp % 4) * 16, wc = (warp / 4) * 32;
}

__device__ static void tc_begin(tc_warp &w)
{
    tc_place(w.wr, w.wc);
    nvcuda::wmma::fill_fragment(w.acc[0], 0.0f);
    nvcuda::wmma::fill_fragment(w.acc[1], 0.0f);
}

/* acc += the product of the slices' first `depth` (a multiple of TC_K)
 * inner indices */
__device__ static void tc_multiply(tc_warp &w, const tc_tiles &t, int depth)
{
    using namespace nvcuda;
    for (int q = 0; q < depth; q += TC_K) {
        /* A's slice holds A transposed: A(i, q) at [q][i], a column-major 16 x 8 */
        wmma::fragment<wmma::matrix_a, 16, 16, TC_K, wmma::precision::tf32, wmma::col_major> a;
        wmma::load_matrix_sync(a, &t.A[q][w.wr], TC_LD);
        for (int f = 0; f < 2; f++) {
            wmma::fragment<wmma::matrix_b, 16, 16, TC_K, wmma::precision::tf32, wmma::row_major> b;
            wmma::load_matrix_sync(b, &t.B[q][w.wc + 16 * f], TC_LD);
            wmma::mma_sync(w.acc[f], a, b, w.acc[f]);
        }
    }
}

/* fp32 on the TF32 fragments, in three products (3xTF32): a fragment's
 * fp32 values as their TF32 rounding, hi, and the TF32 rounding of what
 * is left, lo (v - hi is exact in fp32).  a b = a_lo b_hi + a_hi b_lo +
 * a_hi b_hi leaves out a_lo b_lo and the remainders' remainders, about
 * 2^-22 of each product, the order of fp32's own rounding of the sums.
 * Element-wise, so it holds whatever the fragment's layout across the
 * warp's lanes. */
template <class F> __device__ static void tc_split(F &hi, F &lo)
{
    for (int i = 0; i < hi.num_elements; i++) {
        float v = hi.x[i];
        hi.x[i] = nvcuda::wmma::__float_to_tf32(v);
        lo.x[i] = nvcuda::wmma::__float_to_tf32(v - hi.x[i]);
    }
}

/* acc += a b: one product of TF32 operands, or, SPLIT, the three of
 * tc_split's parts (a_lo, b_lo: the remainders), the small ones first */
template <bool SPLIT, class C, class A, class B>
__device__ static void tc_mma(C &acc, const A &a, const A &a_lo, const B &b, const B &b_lo)
{
    if (SPLIT) {
        nvcuda::wmma::mma_sync(acc, a_lo, b, acc);
        nvcuda::wmma::mma_sync(acc, a, b_lo, acc);
    }
    nvcuda::wmma::mma_sync(acc, a, b, acc);
}

/* t.C = the accumulators, for every thread of the block after the barrier */
__device__ static void tc_finish(const tc_warp &w, tc_tiles &t)
{
    for (int f = 0; f < 2; f++)
        nvcuda::wmma::store_matrix_sync(&t.C[w.wr][w.wc + 16 * f], w.acc[f], TC_LD, nvcuda::wmma::mem_row_major);
    __syncthreads();
}
#endif

/* t.C = the block's tile (rows i0.., columns j0..) of A B, A(i, q) =
 * ga(i, q) of M x kr, B(q, j) = gb(j, q) of kr x N; the block's threads
 * then read t.C (after the barrier this ends with). */
template <class GA, class GB>
__device__ static void tc_tile_product(tc_tiles &t, const GA &ga, const GB &gb, int M, int N, int kr,
                                       bool a_along_q, bool b_along_q, int math)
{
#if PCG_TC_DEVICE
    int tid = threadIdx.y * SIDE + threadIdx.x;
    int i0 = blockIdx.x * TILE, j0 = blockIdx.y * TILE;
    tc_warp w;
    tc_begin(w);
    for (int k0 = 0; k0 < kr; k0 += SLICE) {
        load_tile(t.A, ga, M, kr, i0, k0, a_along_q, math, tid);
        load_tile(t.B, gb, N, kr, j0, k0, b_along_q, math, tid);
        __syncthreads();
        tc_multiply(w, t, SLICE);
        __syncthreads();
    }
    tc_finish(w, t);
#else
    (void)t, (void)ga, (void)gb, (void)M, (void)N, (void)kr, (void)a_along_q, (void)b_along_q, (void)math;
    __trap();
#endif
}

#endif
