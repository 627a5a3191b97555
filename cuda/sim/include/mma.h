/* What the kernels of cuda/ use of CUDA's warp matrix functions
 * (nvcuda::wmma), for the simulation: m16n16k8 with TF32 operands and
 * m16n16k16 with bf16 operands, fp32 accumulators.  A fragment holds
 * its whole tile, and only lane 0 of
 * each warp loads, multiplies and stores it; the other lanes' calls do
 * nothing.  So the simulation does each warp's arithmetic once and asks
 * global or shared memory for each element once per warp, as a device
 * does.  The device's rules on where a fragment may be loaded from or
 * stored to (ldm a multiple of 16 bytes, 256-bit aligned pointers) are
 * checked, so a kernel that breaks them stops here rather than on a
 * device.  Products of TF32 or bf16 values are exact in fp32; the sums
 * over k are fp32 additions in k order. */
#ifndef PCG_SIM_MMA_H
#define PCG_SIM_MMA_H
#include "cuda_bf16.h"
#include "cuda_runtime.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
namespace precision {
struct tf32 {};
} // namespace precision
enum layout_t { mem_row_major, mem_col_major };

/* rows x columns of a fragment's tile: A is m x k, B k x n, C m x n */
template <class Use, int M, int N, int K> struct tile_dims;
template <int M, int N, int K> struct tile_dims<matrix_a, M, N, K> {
    enum { rows = M, cols = K };
};
template <int M, int N, int K> struct tile_dims<matrix_b, M, N, K> {
    enum { rows = K, cols = N };
};
template <int M, int N, int K> struct tile_dims<accumulator, M, N, K> {
    enum { rows = M, cols = N };
};

/* The fragments a device has of those the kernels use: TF32 operands
 * 16 x 16 x 8, bf16 operands 16 x 16 x 16, fp32 accumulators of either
 * shape; operands are never fp32 (TF32 is their precision type). */
template <class Use, class T, int M, int N, int K> struct shape_ok {
    enum { value = 0 };
};
template <class Use, int M, int N, int K> struct shape_ok<Use, precision::tf32, M, N, K> {
    enum { value = M == 16 && N == 16 && K == 8 };
};
template <class Use, int M, int N, int K> struct shape_ok<Use, __nv_bfloat16, M, N, K> {
    enum { value = M == 16 && N == 16 && K == 16 };
};
template <int M, int N, int K> struct shape_ok<accumulator, float, M, N, K> {
    enum { value = M == 16 && N == 16 && (K == 8 || K == 16) };
};

template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment {
    static_assert(shape_ok<Use, T, M, N, K>::value, "a device has no fragment of this shape for this type");
    enum { rows = tile_dims<Use, M, N, K>::rows, cols = tile_dims<Use, M, N, K>::cols };
    enum { num_elements = rows * cols };
    float x[num_elements]; /* x[r * cols + c]: the tile row-major */
};

namespace detail {

/* the lane of the calling thread: the block's threads numbered x first */
static inline unsigned lane(void)
{
    const pcg_sim::thread_place &h = pcg_sim::here;
    unsigned tid = h.thread.x + h.thread.y * h.block_dim.x + h.thread.z * h.block_dim.x * h.block_dim.y;
    return tid % 32;
}

static inline void require(bool ok, const char *what, unsigned ldm, const void *p)
{
    if (ok) return;
    fprintf(stderr, "wmma: %s (ldm %u, pointer %p): a device refuses this\n", what, ldm, p);
    abort();
}

/* ldm a multiple of 16 bytes, the pointer 256-bit aligned */
template <class E> static inline void check_place(const E *p, unsigned ldm)
{
    require(ldm * sizeof(E) % 16 == 0, "ldm is not a multiple of 16 bytes", ldm, p);
    require((uintptr_t)p % 32 == 0, "the pointer is not 256-bit aligned", ldm, p);
}

static inline float value_of(float x)
{
    return x;
}

static inline float value_of(__nv_bfloat16 x)
{
    return __bfloat162float(x);
}

/* element (r, c) of a rows x cols tile at p, stored by rows or columns */
static inline size_t at(int r, int c, unsigned ldm, bool by_rows)
{
    return by_rows ? (size_t)r * ldm + c : (size_t)c * ldm + r;
}

template <class L> struct by_rows;
template <> struct by_rows<row_major> {
    enum { value = 1 };
};
template <> struct by_rows<col_major> {
    enum { value = 0 };
};

template <class F, class E> static inline void load(F &f, const E *p, unsigned ldm, bool rows_first)
{
    check_place(p, ldm);
    for (int r = 0; r < F::rows; r++)
        for (int c = 0; c < F::cols; c++) f.x[r * F::cols + c] = value_of(p[at(r, c, ldm, rows_first)]);
}

} // namespace detail

template <class Use, int M, int N, int K, class T, class L>
static inline void fill_fragment(fragment<Use, M, N, K, T, L> &f, float v)
{
    for (int i = 0; i < f.num_elements; i++) f.x[i] = v;
}

/* operand fragments: the layout is the fragment's */
template <class Use, int M, int N, int K, class L>
static inline void load_matrix_sync(fragment<Use, M, N, K, precision::tf32, L> &f, const float *p, unsigned ldm)
{
    if (detail::lane()) return;
    detail::load(f, p, ldm, detail::by_rows<L>::value);
}

template <class Use, int M, int N, int K, class L>
static inline void load_matrix_sync(fragment<Use, M, N, K, __nv_bfloat16, L> &f, const __nv_bfloat16 *p,
                                    unsigned ldm)
{
    if (detail::lane()) return;
    detail::load(f, p, ldm, detail::by_rows<L>::value);
}

template <int M, int N, int K>
static inline void load_matrix_sync(fragment<accumulator, M, N, K, float> &f, const float *p, unsigned ldm,
                                    layout_t layout)
{
    if (detail::lane()) return;
    detail::load(f, p, ldm, layout == mem_row_major);
}

template <int M, int N, int K>
static inline void store_matrix_sync(float *p, const fragment<accumulator, M, N, K, float> &f, unsigned ldm,
                                     layout_t layout)
{
    if (detail::lane()) return;
    detail::check_place(p, ldm);
    for (int r = 0; r < M; r++)
        for (int c = 0; c < N; c++) p[detail::at(r, c, ldm, layout == mem_row_major)] = f.x[r * N + c];
}

/* d = a b + c, in fp32 with the operands (TF32 or bf16) as given */
template <int M, int N, int K, class T, class LA, class LB>
static inline void mma_sync(fragment<accumulator, M, N, K, float> &d,
                            const fragment<matrix_a, M, N, K, T, LA> &a,
                            const fragment<matrix_b, M, N, K, T, LB> &b,
                            const fragment<accumulator, M, N, K, float> &c)
{
    if (detail::lane()) return;
    float out[M * N];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = c.x[i * N + j];
            /* the product is exact, so a contracted multiply-add rounds the same */
            for (int k = 0; k < K; k++) s += a.x[i * K + k] * b.x[k * N + j];
            out[i * N + j] = s;
        }
    memcpy(d.x, out, sizeof out);
}

/* cvt.rna.tf32.f32: 10 mantissa bits, ties away from zero */
static inline float __float_to_tf32(float x)
{
    unsigned u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
    memcpy(&x, &u, 4);
    return x;
}

} // namespace wmma
} // namespace nvcuda

#endif
