/* The built-in sgemm: what every matmul of the backend runs when cuBLAS
 * cannot be loaded (a GPU machine with only the driver).  One block of
 * 16x16 threads computes a 64x64 tile of C, each thread a 4x4 comb of it
 * (rows ty + 16i, columns tx + 16j, so that a warp reads shared memory
 * without bank conflicts); the operands go through shared memory in
 * slices of 16 along k.  The operands are addressed by strides, so one
 * kernel serves the three row-major layouts of cuda/blas.cu; a tile is
 * loaded along whichever index is contiguous in memory, so the global
 * loads coalesce in every layout.
 *
 * Storage and accumulation are fp32 in every matmul mode.  In TF32 and
 * bf16 modes each operand is rounded as the tensor cores would take it
 * (TF32: 10 mantissa bits, to nearest with ties away from zero, as
 * cvt.rna.tf32.f32; bf16: 7 bits, to nearest even), so a run without
 * cuBLAS sees the same precision as one with it, not better. */
#include "common.cuh"
#include "tile.cuh"

struct tiled_args {
    int m, n, k, math;
    float alpha, beta;
    const float *A;
    size_t a_i, a_q; /* A(i, q) = A[i * a_i + q * a_q] */
    const float *B;
    size_t b_q, b_j; /* B(q, j) = B[q * b_q + j * b_j] */
    float *C;        /* row-major m x n */
};

/* X(r, q) = X[r * sr + q * sq] */
struct strided {
    const float *X;
    size_t sr, sq;
    __device__ float operator()(int r, int q) const { return X[(size_t)r * sr + (size_t)q * sq]; }
};

__global__ static void sgemm_tiled_kernel(tiled_args g)
{
    __shared__ tile_slice As, Bs;
    /* m can be millions of rows (im2col of a minibatch): rows on grid x */
    float acc[COMB][COMB];
    tile_product(acc, strided{g.A, g.a_i, g.a_q}, strided{g.B, g.b_j, g.b_q}, g.m, g.n, g.k, g.a_q == 1, g.b_q == 1,
                 g.math, As, Bs);
    int i0 = blockIdx.x * TILE, j0 = blockIdx.y * TILE, tx = threadIdx.x, ty = threadIdx.y;
    for (int a = 0; a < COMB; a++)
        for (int b = 0; b < COMB; b++) {
            int i = i0 + ty + SIDE * a, j = j0 + tx + SIDE * b;
            if (i >= g.m || j >= g.n) continue;
            float *c = g.C + (size_t)i * g.n + j;
            /* beta 0 never reads C, which may hold anything (as in BLAS) */
            *c = g.beta == 0.0f ? g.alpha * acc[a][b] : g.alpha * acc[a][b] + g.beta * *c;
        }
}

int pcg_sgemm_tiled(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *A, const float *B,
                    float beta, float *C, int math)
{
    if (m <= 0 || n <= 0) return 0;
    if (pcg_cuda_stream_check()) return -1;
    tiled_args g;
    g.m = m, g.n = n, g.k = k < 0 ? 0 : k, g.math = math;
    g.alpha = alpha, g.beta = beta;
    /* A is m x k, or stored k x m; B is k x n, or stored n x k */
    g.A = A, g.a_i = trans_a ? 1 : (size_t)k, g.a_q = trans_a ? (size_t)m : 1;
    g.B = B, g.b_q = trans_b ? 1 : (size_t)n, g.b_j = trans_b ? (size_t)k : 1;
    g.C = C;
    dim3 grid((unsigned)((m + TILE - 1) / TILE), (unsigned)((n + TILE - 1) / TILE)), block(SIDE, SIDE);
    if (grid.y > 65535) {
        pcg_cuda_set_error("built-in sgemm: %d columns is more than its grid holds (%d)", n, 65535 * TILE);
        return -1;
    }
    PCG_LAUNCH(sgemm_tiled_kernel, grid, block, 0, pcg_cuda_stream(), g);
    PCG_CK(cudaGetLastError(), -1);
    return 0;
}
