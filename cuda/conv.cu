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
 * which TF32 and bf16 take on devices of compute capability 8 or more.
 *
 * The input gradient is cut by output phase: an input row iy receives
 * only the taps ky with ky = iy + pad (mod stride), so the pixels of one
 * phase (iy mod stride, ix mod stride) form one GEMM over those taps and
 * no product of a tap that misses the pixel is formed. */
#include "common.cuh"
#include "nn_shapes.h"
#include "tile_tc.cuh"

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

/* acc[a][c] = the tensor-core product's output (ty + 16a, tx + 16c): what
 * tile_product leaves in each thread, for the same epilogues. */
__device__ static void tc_comb(float (&acc)[COMB][COMB], const float (&C)[TILE][TC_LD])
{
    for (int a = 0; a < COMB; a++)
        for (int c = 0; c < COMB; c++) acc[a][c] = C[threadIdx.y + SIDE * a][threadIdx.x + SIDE * c];
}

/* The 64 x 64 outputs from row i0 and output channel blockIdx.y * TILE */
__device__ static void fwd_store(float *out, const float (&acc)[COMB][COMB], const float *b, int i0, int M,
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

/* The pixels iy = py + stride*y of one phase and the taps ky = ky0 +
 * stride*t that reach them (n of each; the same along x). */
struct conv_phase {
    int py, px, ny, nx, ky0, kx0, ty, tx;
};

__host__ __device__ static int phase_count(int first, int limit, int stride)
{
    return first < limit ? (limit - first + stride - 1) / stride : 0;
}

__host__ __device__ static conv_phase phase_of(const nn_conv_shape &s, int z)
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

__device__ static phase_pixel pixel_at(const conv_phase &f, const nn_conv_shape &s, int pix)
{
    int per = f.ny * f.nx, p = pix % per;
    return phase_pixel{pix / per, f.py + s.stride * (p / f.nx), f.px + s.stride * (p % f.nx)};
}

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

/* The 64 x 64 outputs from pixel i0 and input channel blockIdx.y * TILE */
__device__ static void dgrad_store(float *din, const float (&acc)[COMB][COMB], int i0, int M, const nn_conv_shape &s,
                                   const conv_phase &f, const float *mask)
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

/* ---- tensor-core blocks of two 64-row halves, an operand staged ----
 *
 * Loaded by fwd_a or dgrad_a, each of conv 1's outputs (forward) or of
 * dout's entries (input gradient) is read from global memory once per tap
 * that reaches it (about 12 times for the forward at k 7, stride 2, up to
 * 16 for a phase of the input gradient), and each 64-row block reads all
 * the weights its taps need (0.8 MB for the forward at the paper's
 * shapes).  The staged kernels take PAIR_ROWS rows a block, two 64-row
 * halves whose products share each weight slice (every warp holds both
 * halves' accumulators), and stage the part of the operand their rows
 * read, TC_K channels at a time, in shared memory, building each tap's
 * slices from there: channel chunks outer, taps inner, so the reduction
 * runs in that order rather than the loaders' (tap, channel) order. */
#define PAIR_ROWS (2 * TILE)
#define PAIR_LD (PAIR_ROWS + 4) /* a multiple of 4 floats, as a fragment's ldm must be */
/* floats staged per chunk: two of the paper's samples' 21 x 21 reach of
 * conv 1's output, 8 channels each, rounded up to a whole number of KB */
#define PAIR_STAGE 7168

struct pair_tiles {
    alignas(32) float A[TC_K][PAIR_LD]; /* A[q][i] = A(i0 + i, k0 + q), both halves */
    alignas(32) float B[TC_K][TC_LD];   /* B[q][j] = B(k0 + q, j0 + j) */
    union {                             /* the staged chunk, then each half's product tile */
        alignas(32) float stage[PAIR_STAGE];
        alignas(32) float C[TILE][TC_LD];
    };
};

/* The samples a block's `rows` rows can span, per rows to a sample:
 * rows / per where per divides rows, else up to (rows - 1) / per + 2. */
static long long samples_per_block(long long rows, long long per)
{
    return rows % per == 0 ? rows / per : (rows - 1) / per + 2;
}

#if PCG_TC_DEVICE
/* The warp's 16 x 32 of each half: rows wr.. (and TILE + wr..), columns wc.. */
struct pair_warp {
    int wr, wc;
    nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, TC_K, float> acc[2][2]; /* [half][column block] */
};

/* acc += the slices' product: each weight fragment loaded once, used by both halves */
__device__ static void pair_multiply(pair_warp &w, const pair_tiles &t)
{
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, TC_K, wmma::precision::tf32, wmma::col_major> a[2];
    for (int h = 0; h < 2; h++) wmma::load_matrix_sync(a[h], &t.A[0][w.wr + TILE * h], PAIR_LD);
    for (int f = 0; f < 2; f++) {
        wmma::fragment<wmma::matrix_b, 16, 16, TC_K, wmma::precision::tf32, wmma::row_major> b;
        wmma::load_matrix_sync(b, &t.B[0][w.wc + 16 * f], TC_LD);
        for (int h = 0; h < 2; h++) wmma::mma_sync(w.acc[h][f], a[h], b, w.acc[h][f]);
    }
}

/* w = the block's product over `depth` channels in chunks of TC_K and
 * `taps` taps: stage(c0) fills t.stage with a chunk, slices(tap, c0) t.A
 * and t.B from it. */
template <class Stage, class Slices>
__device__ static void pair_product(pair_warp &w, pair_tiles &t, int depth, int taps, const Stage &stage,
                                    const Slices &slices)
{
    int warp = (threadIdx.y * SIDE + threadIdx.x) / 32;
    w.wr = (warp % 4) * 16, w.wc = (warp / 4) * 32;
    for (int h = 0; h < 2; h++)
        for (int f = 0; f < 2; f++) nvcuda::wmma::fill_fragment(w.acc[h][f], 0.0f);
    for (int c0 = 0; c0 < depth; c0 += TC_K) {
        stage(c0);
        __syncthreads();
        for (int tap = 0; tap < taps; tap++) {
            slices(tap, c0);
            __syncthreads();
            pair_multiply(w, t);
            __syncthreads();
        }
    }
}

/* store(acc, h) for each half h, acc as tc_comb leaves it */
template <class Store>
__device__ static void pair_halves(const pair_warp &w, pair_tiles &t, const Store &store)
{
    PCG_UNROLL
    for (int h = 0; h < 2; h++) {
        for (int f = 0; f < 2; f++)
            nvcuda::wmma::store_matrix_sync(&t.C[w.wr][w.wc + 16 * f], w.acc[h][f], TC_LD,
                                            nvcuda::wmma::mem_row_major);
        __syncthreads();
        float acc[COMB][COMB];
        tc_comb(acc, t.C);
        store(acc, h);
        __syncthreads(); /* before the next half overwrites t.C */
    }
}

/* ---- the forward pass: conv 1's output staged ---- */

/* The block's rows cover samples n0 .. n0 + count - 1; of each, the
 * input rows and columns its windows reach, from -pad: PH x PW. */
struct fwd_stage {
    int n0, count, PH, PW;
};

__device__ static fwd_stage stage_of(const nn_conv_shape &s, int M)
{
    int per = s.OH * s.OW, i0 = blockIdx.x * PAIR_ROWS, last = min(i0 + PAIR_ROWS, M) - 1;
    return fwd_stage{i0 / per, last / per - i0 / per + 1, (s.OH - 1) * s.stride + s.k, (s.OW - 1) * s.stride + s.k};
}

/* st[((n*PH + y)*PW + x)*TC_K + c] = in(n0 + n, y - pad, x - pad, c0 + c),
 * 0 in the padding and past C, rounded as the mode rounds */
__device__ static void stage_chunk(float *st, const float *in, const nn_conv_shape &s, const fwd_stage &g, int c0,
                                   int math, int tid)
{
    int n = g.count * g.PH * g.PW * TC_K;
    for (int e = tid; e < n; e += SIDE * SIDE) {
        int c = c0 + e % TC_K, p = e / TC_K, x = p % g.PW - s.pad, y = p / g.PW % g.PH - s.pad;
        int smp = g.n0 + p / (g.PW * g.PH);
        bool inside = y >= 0 && y < s.H && x >= 0 && x < s.W && c < s.C;
        float v = inside ? in[(((size_t)smp * s.H + y) * s.W + x) * s.C + c] : 0.0f;
        st[e] = pcg_round_operand(v, math);
    }
}

/* t.A[q][i] = the im2col entry of row i0 + i at tap and channel c0 + q,
 * from the staged chunk; t.B[q][j] = W at that tap and channel, output
 * j0 + j (0 past C and O). */
__device__ static void tap_slices(pair_tiles &t, const float *W, const nn_conv_shape &s, const fwd_stage &g, int M,
                                  int tap, int c0, int math, int tid)
{
    int i0 = blockIdx.x * PAIR_ROWS, j0 = blockIdx.y * TILE, per = s.OH * s.OW, ky = tap / s.k, kx = tap % s.k;
    for (int e = tid; e < PAIR_ROWS * TC_K; e += SIDE * SIDE) {
        int q = e % TC_K, i = e / TC_K, row = i0 + i;
        float v = 0.0f;
        if (row < M) {
            int n = row / per - g.n0, p = row % per;
            int y = p / s.OW * s.stride + ky, x = p % s.OW * s.stride + kx;
            v = t.stage[((n * g.PH + y) * g.PW + x) * TC_K + q];
        }
        t.A[q][i] = v;
    }
    for (int e = tid; e < TILE * TC_K; e += SIDE * SIDE) {
        int j = e % TILE, q = e / TILE, c = c0 + q;
        float w = c < s.C && j0 + j < s.O ? W[((size_t)tap * s.C + c) * s.O + j0 + j] : 0.0f;
        t.B[q][j] = pcg_round_operand(w, math);
    }
}
#endif

__global__ static void conv_fwd_staged_tc_kernel(float *out, const float *in, const float *W, const float *b, int B,
                                                 nn_conv_shape s, int math, int relu)
{
#if PCG_TC_DEVICE
    __shared__ pair_tiles t;
    int M = B * s.OH * s.OW, tid = threadIdx.y * SIDE + threadIdx.x;
    fwd_stage g = stage_of(s, M);
    pair_warp w;
    pair_product(
        w, t, s.C, s.k * s.k, [&](int c0) { stage_chunk(t.stage, in, s, g, c0, math, tid); },
        [&](int tap, int c0) { tap_slices(t, W, s, g, M, tap, c0, math, tid); });
    pair_halves(w, t, [&](const float (&acc)[COMB][COMB], int h) {
        fwd_store(out, acc, b, blockIdx.x * PAIR_ROWS + TILE * h, M, s, relu);
    });
#else
    (void)out, (void)in, (void)W, (void)b, (void)B, (void)s, (void)math, (void)relu;
    __trap();
#endif
}

/* Whether the staged samples of any block fit. */
static int staged_fits(const nn_conv_shape &s)
{
    long long spb = samples_per_block(PAIR_ROWS, (long long)s.OH * s.OW);
    long long PH = (long long)(s.OH - 1) * s.stride + s.k, PW = (long long)(s.OW - 1) * s.stride + s.k;
    return spb * PH * PW * TC_K <= PAIR_STAGE;
}

/* ---- the input gradient: conv 2's output gradient staged ---- */

#if PCG_TC_DEVICE
/* The block's pixels cover samples n0 .. n0 + count - 1; of each, the
 * pixels y of the phase read dout row oy0 + y - t + ty - 1 at its tap t,
 * so rows oy0 .. oy0 + SY - 1 are staged (those outside dout as 0); the
 * same along x. */
struct dgrad_stage {
    int n0, count, oy0, ox0, SY, SX;
};

__device__ static dgrad_stage dgrad_stage_of(const nn_conv_shape &s, const conv_phase &f, int M)
{
    int per = f.ny * f.nx, i0 = blockIdx.x * PAIR_ROWS, last = min(i0 + PAIR_ROWS, M) - 1;
    /* pixel iy = py + stride y at tap ky = ky0 + stride t reads dout row
     * (py + pad - ky0) / stride + y - t: ky0 makes the division exact */
    return dgrad_stage{i0 / per,
                       last / per - i0 / per + 1,
                       (f.py + s.pad - f.ky0) / s.stride - (f.ty - 1),
                       (f.px + s.pad - f.kx0) / s.stride - (f.tx - 1),
                       f.ny + f.ty - 1,
                       f.nx + f.tx - 1};
}

/* st[((n*SY + y)*SX + x)*TC_K + q] = dout(n0 + n, oy0 + y, ox0 + x, o0 + q),
 * 0 outside dout and past O, rounded as the mode rounds */
__device__ static void dgrad_stage_chunk(float *st, const float *dout, const nn_conv_shape &s, const dgrad_stage &g,
                                         int o0, int math, int tid)
{
    int n = g.count * g.SY * g.SX * TC_K;
    for (int e = tid; e < n; e += SIDE * SIDE) {
        int o = o0 + e % TC_K, p = e / TC_K, ox = g.ox0 + p % g.SX, oy = g.oy0 + p / g.SX % g.SY;
        int smp = g.n0 + p / (g.SX * g.SY);
        bool inside = oy >= 0 && oy < s.OH && ox >= 0 && ox < s.OW && o < s.O;
        float v = inside ? dout[(((size_t)smp * s.OH + oy) * s.OW + ox) * s.O + o] : 0.0f;
        st[e] = pcg_round_operand(v, math);
    }
}

/* t.A[q][i] = what pixel i0 + i reads at the phase's tap `tap` and output
 * channel o0 + q, from the staged chunk; t.B[q][j] = W at that tap, input
 * channel j0 + j and output channel o0 + q (0 past C and O: the weights
 * are read along o, where they lie one after another). */
__device__ static void dgrad_tap_slices(pair_tiles &t, const float *W, const nn_conv_shape &s, const conv_phase &f,
                                        const dgrad_stage &g, int M, int tap, int o0, int math, int tid)
{
    int i0 = blockIdx.x * PAIR_ROWS, j0 = blockIdx.y * TILE, per = f.ny * f.nx;
    int tap_y = tap / f.tx, tap_x = tap % f.tx, ky = f.ky0 + s.stride * tap_y, kx = f.kx0 + s.stride * tap_x;
    for (int e = tid; e < PAIR_ROWS * TC_K; e += SIDE * SIDE) {
        int q = e % TC_K, i = e / TC_K, pix = i0 + i;
        float v = 0.0f;
        if (pix < M) {
            int n = pix / per - g.n0, p = pix % per, y = p / f.nx - tap_y + f.ty - 1, x = p % f.nx - tap_x + f.tx - 1;
            v = t.stage[((n * g.SY + y) * g.SX + x) * TC_K + q];
        }
        t.A[q][i] = v;
    }
    for (int e = tid; e < TILE * TC_K; e += SIDE * SIDE) {
        int q = e % TC_K, j = e / TC_K, o = o0 + q, c = j0 + j;
        float w = o < s.O && c < s.C ? W[((size_t)(ky * s.k + kx) * s.C + c) * s.O + o] : 0.0f;
        t.B[q][j] = pcg_round_operand(w, math);
    }
}
#endif

__global__ static void conv_dgrad_staged_tc_kernel(float *din, const float *dout, const float *W, int B,
                                                   nn_conv_shape s, int math, const float *mask)
{
    conv_phase f = phase_of(s, blockIdx.z);
    int M = B * f.ny * f.nx;
    if ((int)blockIdx.x * PAIR_ROWS >= M) return; /* the grid fits the largest phase */
#if PCG_TC_DEVICE
    __shared__ pair_tiles t;
    int tid = threadIdx.y * SIDE + threadIdx.x;
    dgrad_stage g = dgrad_stage_of(s, f, M);
    pair_warp w;
    pair_product(
        w, t, s.O, f.ty * f.tx, [&](int o0) { dgrad_stage_chunk(t.stage, dout, s, g, o0, math, tid); },
        [&](int tap, int o0) { dgrad_tap_slices(t, W, s, f, g, M, tap, o0, math, tid); });
    pair_halves(w, t, [&](const float (&acc)[COMB][COMB], int h) {
        dgrad_store(din, acc, blockIdx.x * PAIR_ROWS + TILE * h, M, s, f, mask);
    });
#else
    (void)din, (void)dout, (void)W, (void)math, (void)mask, (void)M;
    __trap();
#endif
}

/* Whether every phase's staged dout fits. */
static int dgrad_staged_fits(const nn_conv_shape &s)
{
    for (int z = 0; z < s.stride * s.stride; z++) {
        conv_phase f = phase_of(s, z);
        long long per = (long long)f.ny * f.nx, SY = f.ny + f.ty - 1, SX = f.nx + f.tx - 1;
        if (per == 0 || SY <= 0 || SX <= 0) continue;
        if (samples_per_block(PAIR_ROWS, per) * SY * SX * TC_K > PAIR_STAGE) return 0;
    }
    return 1;
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
    long rows = (long)B * s.OH * s.OW;
    dim3 g(tiles(rows), tiles(s.O)), blk(SIDE, SIDE);
    if (tensor && staged_fits(s)) {
        dim3 g2((unsigned)((rows + PAIR_ROWS - 1) / PAIR_ROWS), tiles(s.O));
        PCG_LAUNCH(conv_fwd_staged_tc_kernel, g2, blk, 0, pcg_cuda_stream(), out, in, W, b, B, s, math, relu);
    }
    else if (tensor) PCG_LAUNCH(conv_fwd_tc_kernel, g, blk, 0, pcg_cuda_stream(), out, in, W, b, B, s, math, relu);
    else PCG_LAUNCH(conv_fwd_kernel, g, blk, 0, pcg_cuda_stream(), out, in, W, b, B, s, math, relu);
    PCG_CK(cudaGetLastError(), -1);
    return 0;
}

int pcg_conv_implicit_wgrad(float *dst, int splits, int span, const float *dout, const float *in, int B,
                            const nn_conv_shape &s, int math, int tensor)
{
    if (implicit_fits(B, s)) return -1;
    if (splits > 65535) {
        pcg_cuda_set_error("conv: %d row spans of the weight gradient, at most 65535", splits);
        return -1;
    }
    if (tensor && pcg_conv_wgrad_staged_fits(s, span))
        return pcg_conv_wgrad_staged(dst, splits, span, dout, in, B, s, math);
    dim3 g(tiles(s.k * s.k * s.C), tiles(s.O), (unsigned)splits), blk(SIDE, SIDE);
    if (tensor)
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
    if (tensor && dgrad_staged_fits(s)) {
        dim3 g2((unsigned)((most + PAIR_ROWS - 1) / PAIR_ROWS), tiles(s.C), (unsigned)(s.stride * s.stride));
        PCG_LAUNCH(conv_dgrad_staged_tc_kernel, g2, blk, 0, pcg_cuda_stream(), din, dout, W, B, s, math, mask);
    }
    else if (tensor) PCG_LAUNCH(conv_dgrad_tc_kernel, g, blk, 0, pcg_cuda_stream(), din, dout, W, B, s, math, mask);
    else PCG_LAUNCH(conv_dgrad_kernel, g, blk, 0, pcg_cuda_stream(), din, dout, W, B, s, math, mask);
    PCG_CK(cudaGetLastError(), -1);
    return 0;
}
