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
#include <string.h>

#define TILE 64   /* rows and columns of C per block */
#define SLICE 16  /* k per trip through shared memory */
#define SIDE 16   /* threads per block side */
#define COMB 4    /* TILE / SIDE: outputs per thread per side */

struct tiled_args {
    int m, n, k, math;
    float alpha, beta;
    const float *A;
    size_t a_i, a_q; /* A(i, q) = A[i * a_i + q * a_q] */
    const float *B;
    size_t b_q, b_j; /* B(q, j) = B[q * b_q + j * b_j] */
    float *C;        /* row-major m x n */
};

__device__ static float round_operand(float x, int math)
{
    if (math == PCG_MATH_FP32) return x;
    unsigned u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return x; /* inf and NaN as they are */
    if (math == PCG_MATH_TF32) u = (u + 0x1000u) & 0xffffe000u;
    else u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    memcpy(&x, &u, 4);
    return x;
}

/* One operand's slice into shared memory: s[q][r] = X(r0 + r, k0 + q) for
 * r < TILE, q < SLICE, with X(r, q) at X[r * sr + q * sq] (0 outside
 * rows x k).  Consecutive threads walk the index whose stride is 1. */
__device__ static void load_slice(float (*s)[TILE + 1], const float *X, size_t sr, size_t sq, int rows, int k,
                                  int r0, int k0, int math, int t)
{
    for (int e = t; e < TILE * SLICE; e += SIDE * SIDE) {
        int r, q;
        if (sq == 1) r = e / SLICE, q = e % SLICE;
        else r = e % TILE, q = e / TILE;
        int gr = r0 + r, gq = k0 + q;
        float v = gr < rows && gq < k ? X[(size_t)gr * sr + (size_t)gq * sq] : 0.0f;
        s[q][r] = round_operand(v, math);
    }
}

__global__ static void sgemm_tiled_kernel(tiled_args g)
{
    __shared__ float As[SLICE][TILE + 1];
    __shared__ float Bs[SLICE][TILE + 1];
    int tx = threadIdx.x, ty = threadIdx.y, t = ty * SIDE + tx;
    /* m can be millions of rows (im2col of a minibatch): rows on grid x */
    int i0 = blockIdx.x * TILE, j0 = blockIdx.y * TILE;
    float acc[COMB][COMB];
    for (int a = 0; a < COMB; a++)
        for (int b = 0; b < COMB; b++) acc[a][b] = 0.0f;
    for (int k0 = 0; k0 < g.k; k0 += SLICE) {
        load_slice(As, g.A, g.a_i, g.a_q, g.m, g.k, i0, k0, g.math, t);
        load_slice(Bs, g.B, g.b_j, g.b_q, g.n, g.k, j0, k0, g.math, t);
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
