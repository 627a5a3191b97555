/* What conv 2's implicit GEMMs (cuda/conv.cu) and their staged
 * tensor-core twins (cuda/conv_staged.cu) share: the epilogues, which
 * read a block's 64 x 64 outputs as the FMA kernels' threads hold them
 * (rows ty + 16a, columns tx + 16c), and the input gradient's output
 * phases. */
#ifndef PCG_CUDA_CONV_PARTS_CUH
#define PCG_CUDA_CONV_PARTS_CUH
#include "common.cuh"
#include "nn_shapes.h"
#include "tile_tc.cuh"

/* acc[a][c] = the tensor-core product's output (ty + 16a, tx + 16c): what
 * tile_product leaves in each thread, for the same epilogues. */
__device__ static inline void tc_comb(float (&acc)[COMB][COMB], const float (&C)[TILE][TC_LD])
{
    for (int a = 0; a < COMB; a++)
        for (int c = 0; c < COMB; c++) acc[a][c] = C[threadIdx.y + SIDE * a][threadIdx.x + SIDE * c];
}

/* The 64 x 64 outputs from row i0 and output channel blockIdx.y * TILE */
__device__ static inline void fwd_store(float *out, const float (&acc)[COMB][COMB], const float *b, int i0, int M,
                                        const nn_conv_shape &s, int relu)
{
    for (int a = 0; a < COMB; a++)
        for (int c = 0; c < COMB; c++) {
            int i = i0 + threadIdx.y + SIDE * a, j = blockIdx.y * TILE + threadIdx.x + SIDE * c;
            if (i >= M || j >= s.O) continue;
            float y = acc[a][c] + b[j];
            out[(size_t)i * s.O + j] = relu && y < 0 ? 0.0f : y;
        }
}

/* ---- the input gradient's output phases ---- */

/* The pixels iy = py + stride*y of one phase and the taps ky = ky0 +
 * stride*t that reach them (n of each; the same along x). */
struct conv_phase {
    int py, px, ny, nx, ky0, kx0, ty, tx;
};

__host__ __device__ static inline int phase_count(int first, int limit, int stride)
{
    return first < limit ? (limit - first + stride - 1) / stride : 0;
}

__host__ __device__ static inline conv_phase phase_of(const nn_conv_shape &s, int z)
{
    conv_phase f;
    f.py = z / s.stride, f.px = z % s.stride;
    f.ny = phase_count(f.py, s.H, s.stride), f.nx = phase_count(f.px, s.W, s.stride);
    f.ky0 = (f.py + s.pad) % s.stride, f.kx0 = (f.px + s.pad) % s.stride;
    f.ty = phase_count(f.ky0, s.k, s.stride), f.tx = phase_count(f.kx0, s.k, s.stride);
    return f;
}

/* A pixel of the phase: its sample and input position. */
struct phase_pixel {
    int n, iy, ix;
};

__device__ static inline phase_pixel pixel_at(const conv_phase &f, const nn_conv_shape &s, int pix)
{
    int per = f.ny * f.nx, p = pix % per;
    return phase_pixel{pix / per, f.py + s.stride * (p / f.nx), f.px + s.stride * (p % f.nx)};
}

/* The 64 x 64 outputs from pixel i0 and input channel blockIdx.y * TILE */
__device__ static inline void dgrad_store(float *din, const float (&acc)[COMB][COMB], int i0, int M,
                                          const nn_conv_shape &s, const conv_phase &f, const float *mask)
{
    for (int a = 0; a < COMB; a++)
        for (int c = 0; c < COMB; c++) {
            int i = i0 + threadIdx.y + SIDE * a, j = blockIdx.y * TILE + threadIdx.x + SIDE * c;
            if (i >= M || j >= s.C) continue;
            phase_pixel x = pixel_at(f, s, i);
            size_t at = (((size_t)x.n * s.H + x.iy) * s.W + x.ix) * s.C + j;
            din[at] = mask && !(mask[at] > 0) ? 0.0f : acc[a][c];
        }
}

#endif
