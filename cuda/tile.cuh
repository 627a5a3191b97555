/* The tiled product shared by the built-in sgemm (cuda/sgemm_tiled.cu)
 * and conv 2's implicit GEMMs (cuda/conv.cu): a block of 16x16 threads
 * computes a 64x64 tile of A B, each thread a 4x4 comb of it (rows ty +
 * 16i, columns tx + 16j, so that a warp reads shared memory without bank
 * conflicts), through shared-memory slices of 16 along the inner index.
 * The operands are functors X(row, inner) that the caller writes for its
 * layout; each is rounded as the matmul mode would round it, and the
 * products accumulate in fp32. */
#ifndef PCG_CUDA_TILE_CUH
#define PCG_CUDA_TILE_CUH
#include "common.cuh"

#define TILE 64  /* rows and columns of the product per block */
#define SLICE 16 /* inner index per trip through shared memory */
#define SIDE 16  /* threads per block side */
#define COMB 4   /* TILE / SIDE: outputs per thread per side */

typedef float tile_slice[SLICE][TILE + 1];

/* t[q][r] = X(r0 + r, k0 + q) for r < TILE, q < SLICE, 0 outside rows x kr,
 * with X(r, q) = get(r, q).  along_q: X is contiguous along q, so
 * consecutive threads take consecutive q and the loads coalesce.  Slice:
 * tile_slice, or the tensor-core product's padded slice (tile_tc.cuh). */
template <class Slice, class Get>
__device__ static void load_tile(Slice &t, const Get &get, int rows, int kr, int r0, int k0, bool along_q,
                                 int math, int tid)
{
    for (int e = tid; e < TILE * SLICE; e += SIDE * SIDE) {
        int r = along_q ? e / SLICE : e % TILE, q = along_q ? e % SLICE : e / TILE;
        int gr = r0 + r, gq = k0 + q;
        float v = gr < rows && gq < kr ? get(gr, gq) : 0.0f;
        t[q][r] = pcg_round_operand(v, math);
    }
}

/* acc = the block's tile (rows i0.., columns j0..) of A B, A(i, q) =
 * ga(i, q) of M x kr, B(q, j) = gb(j, q) of kr x N. */
template <class GA, class GB>
__device__ static void tile_product(float (&acc)[COMB][COMB], const GA &ga, const GB &gb, int M, int N, int kr,
                                    bool a_along_q, bool b_along_q, int math, tile_slice &As, tile_slice &Bs)
{
    int tx = threadIdx.x, ty = threadIdx.y, tid = ty * SIDE + tx;
    int i0 = blockIdx.x * TILE, j0 = blockIdx.y * TILE;
    for (int a = 0; a < COMB; a++)
        for (int b = 0; b < COMB; b++) acc[a][b] = 0.0f;
    for (int k0 = 0; k0 < kr; k0 += SLICE) {
        load_tile(As, ga, M, kr, i0, k0, a_along_q, math, tid);
        load_tile(Bs, gb, N, kr, j0, k0, b_along_q, math, tid);
        __syncthreads();
        for (int q = 0; q < SLICE; q++) {
            float av[COMB], bv[COMB];
            for (int a = 0; a < COMB; a++) av[a] = As[q][ty + SIDE * a];
            for (int b = 0; b < COMB; b++) bv[b] = Bs[q][tx + SIDE * b];
            for (int a = 0; a < COMB; a++)
                for (int b = 0; b < COMB; b++) acc[a][b] += av[a] * bv[b];
        }
        __syncthreads();
    }
}

#endif
