/* Conv 2's forward pass and input gradient on tensor cores, their large
 * operand staged in shared memory and their weights shared by several
 * 64-row tiles.
 *
 * Loaded by conv.cu's fwd_a or dgrad_a, each of conv 1's outputs
 * (forward) or of dout's entries (input gradient) is read from global
 * memory once per tap that reaches it (about 12 times for the forward at
 * k 7, stride 2, up to 16 for a phase of the input gradient), and each
 * 64-row block reads all the weights its taps need (0.8 MB for the
 * forward at the paper's shapes), most of what it reads.  These kernels
 * take H 64-row tiles a block (H of 2, 4 or 8), whose products share each
 * weight fragment (every warp holds the H tiles' accumulators), and stage
 * the part of the operand their rows read, ch channels at a time
 * (ch of 8, 4, 2 or 1: as many as fit the stage buffer, which holds
 * twice as many of bf16's 2-byte operands), building each
 * slice of Op::K inner indices from there: Op::K / ch taps of ch channels.
 * Channel chunks run outer and taps inner, so the reduction runs in that
 * order rather than the loaders' (tap, channel) order.  The host picks
 * the largest H whose grid still gives every multiprocessor a block.
 *
 * In TF32 the slices hold operands rounded to TF32 (TF32 fragments); in
 * bf16 they hold bf16 values and the products are bf16 fragments
 * (tc_bf16, cuda/tile_tc.cuh), Op::K inner indices a slice; in fp32
 * (SPLIT) they hold the fp32 values, and each product is three TF32
 * products of their high and low parts (tc_split). */
#include "conv_parts.cuh"
#include <type_traits>

/* the staged chunk's bytes: two of the paper's samples' 21 x 21 reach of
 * conv 1's output, 8 channels each as floats, rounded up to a whole
 * number of KB; bf16 stages its 2-byte operands, twice as many */
#define ROW_STAGE_BYTES (7168 * 4)
#define MOST_TILES 8

template <int H, class Op> struct row_tiles {
    typedef typename Op::elem elem;
    alignas(32) elem A[Op::K][H * TILE + Op::PAD]; /* A[q][i] = A(i0 + i, k0 + q), every tile */
    alignas(32) elem B[Op::K][TILE + Op::PAD];     /* B[q][j] = B(k0 + q, j0 + j) */
    union {                                        /* the staged chunk, then each tile's product */
        alignas(32) elem stage[ROW_STAGE_BYTES / sizeof(elem)];
        alignas(32) float C[TILE][TC_LD];
    };
};
static_assert(std::is_same<tc_bf16::elem, __nv_bfloat16>::value && tc_bf16::K == 16 && tc_tf32::K == 8,
              "bf16's slices are 2-byte bf16 values, 16 inner indices a product");
static_assert(sizeof(row_tiles<MOST_TILES, tc_bf16>) <= 48 * 1024 &&
                  sizeof(row_tiles<MOST_TILES, tc_tf32>) <= 48 * 1024,
              "a block's tiles exceed the 48 KB of static shared memory");

/* ---- the weights, as the slices read them ---- */

/* In bf16 every weight a slice takes is its bf16 rounding: packed as such
 * (2 bytes each) ahead of the launch, the weights, most of what a block
 * reads, are half the bytes. */
__global__ static void bf16_pack_kernel(unsigned short *dst, const float *src, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    dst[i] = pcg_bf16_bits(pcg_round_operand(src[i], PCG_MATH_BF16));
}

/* W's fp32 values, or (half non-NULL) their bf16 packing */
struct weights_view {
    const float *W;
    const unsigned short *half;
    /* entry i rounded to mode math, as a slice takes it */
    __device__ float at(size_t i, int math) const
    {
        if (!half) return pcg_round_operand(W[i], math);
        unsigned u = (unsigned)half[i] << 16;
        float x;
        memcpy(&x, &u, 4);
        return x;
    }
};

#if PCG_TC_DEVICE
static_assert(std::is_same<tc_precision<tc_bf16>::type, __nv_bfloat16>::value,
              "bf16's products are bf16 fragments (the model prices them at the bf16 rate)");
/* The warp's 16 x 32 of each tile: rows wr.. (and TILE h + wr..), columns wc.. */
template <int H, class Op> struct row_warp {
    int wr, wc;
    tc_acc<Op> acc[H][2]; /* [tile][column block] */
};

/* acc += the slices' product: each weight fragment loaded once, used by
 * every tile; SPLIT: fp32 slices, in three TF32 products (tc_split) */
template <int H, class Op, bool SPLIT>
__device__ static void rows_multiply(row_warp<H, Op> &w, const row_tiles<H, Op> &t)
{
    using namespace nvcuda;
    tc_frag_a<Op> a[H], a_lo[SPLIT ? H : 1];
    PCG_UNROLL
    for (int h = 0; h < H; h++) {
        wmma::load_matrix_sync(a[h], &t.A[0][w.wr + TILE * h], H * TILE + Op::PAD);
        if constexpr (SPLIT) tc_split(a[h], a_lo[h]);
    }
    PCG_UNROLL
    for (int f = 0; f < 2; f++) {
        tc_frag_b<Op> b, b_lo;
        wmma::load_matrix_sync(b, &t.B[0][w.wc + 16 * f], TILE + Op::PAD);
        if constexpr (SPLIT) tc_split(b, b_lo);
        PCG_UNROLL
        for (int h = 0; h < H; h++) {
            tc_mma<SPLIT>(w.acc[h][f], a[h], a_lo[SPLIT ? h : 0], b, b_lo);
        }
    }
}

/* w = the block's product over `depth` channels in chunks of ch, and
 * `taps` taps, Op::K / ch a slice: stage(c0) fills t.stage with a chunk,
 * slices(tap0, c0) t.A and t.B from it. */
template <int H, class Op, bool SPLIT, class Stage, class Slices>
__device__ static void rows_product(row_warp<H, Op> &w, row_tiles<H, Op> &t, int depth, int ch, int taps,
                                    const Stage &stage, const Slices &slices)
{
    tc_place(w.wr, w.wc);
    PCG_UNROLL
    for (int h = 0; h < H; h++)
        for (int f = 0; f < 2; f++) nvcuda::wmma::fill_fragment(w.acc[h][f], 0.0f);
    for (int c0 = 0; c0 < depth; c0 += ch) {
        stage(c0);
        __syncthreads();
        for (int tap0 = 0; tap0 < taps; tap0 += Op::K / ch) {
            slices(tap0, c0);
            __syncthreads();
            rows_multiply<H, Op, SPLIT>(w, t);
            __syncthreads();
        }
    }
}

/* store(acc, h) for each tile h, acc as tc_comb leaves it */
template <int H, class Op, class Store>
__device__ static void rows_store(const row_warp<H, Op> &w, row_tiles<H, Op> &t, const Store &store)
{
    PCG_UNROLL
    for (int h = 0; h < H; h++) {
        for (int f = 0; f < 2; f++)
            nvcuda::wmma::store_matrix_sync(&t.C[w.wr][w.wc + 16 * f], w.acc[h][f], TC_LD,
                                            nvcuda::wmma::mem_row_major);
        __syncthreads();
        float acc[COMB][COMB];
        tc_comb(acc, t.C);
        store(acc, h);
        __syncthreads(); /* before the next tile overwrites t.C */
    }
}

/* The slice entry q's tap and channel, of a chunk of ch channels from c0 */
struct slice_entry {
    int tap, c;
};

__device__ static slice_entry entry_of(int q, int tap0, int c0, int ch)
{
    return slice_entry{tap0 + q / ch, c0 + q % ch};
}

/* t.A[q][i] = at(i0 + i, tap, channel of the chunk) of slice entry q, 0
 * for rows past M and entries past the taps */
template <int H, class Op, class At>
__device__ static void fill_a(row_tiles<H, Op> &t, int M, int taps, int tap0, int c0, int ch, int tid, const At &at)
{
    int i0 = blockIdx.x * H * TILE;
    for (int e = tid; e < H * TILE * Op::K; e += SIDE * SIDE) {
        int q = e % Op::K, i = e / Op::K, row = i0 + i;
        slice_entry x = entry_of(q, tap0, c0, ch);
        t.A[q][i] = row < M && x.tap < taps ? at(row, x.tap, q % ch) : Op::put(0.0f);
    }
}

/* ---- the forward pass: conv 1's output staged ---- */

/* The block's rows cover samples n0 .. n0 + count - 1; of each, the
 * input rows and columns its windows reach, from -pad: PH x PW; ch
 * channels a chunk. */
struct fwd_stage {
    int n0, count, PH, PW, ch;
};

__device__ static fwd_stage stage_of(const nn_conv_shape &s, int M, int rows, int ch)
{
    int per = s.OH * s.OW, i0 = blockIdx.x * rows, last = min(i0 + rows, M) - 1;
    return fwd_stage{i0 / per, last / per - i0 / per + 1, (s.OH - 1) * s.stride + s.k, (s.OW - 1) * s.stride + s.k,
                     ch};
}

/* st[((n*PH + y)*PW + x)*ch + c] = in(n0 + n, y - pad, x - pad, c0 + c),
 * 0 in the padding and past C, rounded as the mode rounds */
template <class Op>
__device__ static void stage_chunk(typename Op::elem *st, const float *in, const nn_conv_shape &s, const fwd_stage &g,
                                   int c0, int math, int tid)
{
    int n = g.count * g.PH * g.PW * g.ch;
    for (int e = tid; e < n; e += SIDE * SIDE) {
        int c = c0 + e % g.ch, p = e / g.ch, x = p % g.PW - s.pad, y = p / g.PW % g.PH - s.pad;
        int smp = g.n0 + p / (g.PW * g.PH);
        bool inside = y >= 0 && y < s.H && x >= 0 && x < s.W && c < s.C;
        float v = inside ? in[(((size_t)smp * s.H + y) * s.W + x) * s.C + c] : 0.0f;
        st[e] = Op::put(pcg_round_operand(v, math));
    }
}

/* t.A[q][i] = the im2col entry of row i0 + i at slice entry q's tap and
 * channel, from the staged chunk; t.B[q][j] = W there, output j0 + j (0
 * past the taps, C and O). */
template <int H, class Op>
__device__ static void tap_slices(row_tiles<H, Op> &t, const weights_view &W, const nn_conv_shape &s,
                                  const fwd_stage &g, int M, int tap0, int c0, int math, int tid)
{
    int j0 = blockIdx.y * TILE, per = s.OH * s.OW, taps = s.k * s.k;
    fill_a(t, M, taps, tap0, c0, g.ch, tid, [&](int row, int tap, int cc) {
        int n = row / per - g.n0, p = row % per;
        int py = p / s.OW * s.stride + tap / s.k, px = p % s.OW * s.stride + tap % s.k;
        return t.stage[((n * g.PH + py) * g.PW + px) * g.ch + cc];
    });
    for (int e = tid; e < TILE * Op::K; e += SIDE * SIDE) {
        int j = e % TILE, q = e / TILE;
        slice_entry x = entry_of(q, tap0, c0, g.ch);
        bool inside = x.tap < taps && x.c < s.C && j0 + j < s.O;
        t.B[q][j] = Op::put(inside ? W.at(((size_t)x.tap * s.C + x.c) * s.O + j0 + j, math) : 0.0f);
    }
}
#endif

template <int H, class Op, bool SPLIT>
__global__ static void conv_fwd_staged_tc_kernel(float *out, const float *in, weights_view W, const float *b, int B,
                                                 nn_conv_shape s, int math, int relu, int ch)
{
#if PCG_TC_DEVICE
    __shared__ row_tiles<H, Op> t;
    int M = B * s.OH * s.OW, tid = threadIdx.y * SIDE + threadIdx.x;
    fwd_stage g = stage_of(s, M, H * TILE, ch);
    row_warp<H, Op> w;
    rows_product<H, Op, SPLIT>(
        w, t, s.C, ch, s.k * s.k, [&](int c0) { stage_chunk<Op>(t.stage, in, s, g, c0, math, tid); },
        [&](int tap0, int c0) { tap_slices(t, W, s, g, M, tap0, c0, math, tid); });
    rows_store(w, t, [&](const float (&acc)[COMB][COMB], int h) {
        fwd_store(out, acc, b, (blockIdx.x * H + h) * TILE, M, s, relu);
    });
#else
    (void)out, (void)in, (void)W, (void)b, (void)B, (void)s, (void)math, (void)relu, (void)ch;
    __trap();
#endif
}

/* ---- the input gradient: conv 2's output gradient staged ---- */

#if PCG_TC_DEVICE
/* The block's pixels cover samples n0 .. n0 + count - 1; of each, the
 * pixels y of the phase read dout row oy0 + y - t + ty - 1 at its tap t,
 * so rows oy0 .. oy0 + SY - 1 are staged (those outside dout as 0); the
 * same along x; ch channels a chunk. */
struct dgrad_stage {
    int n0, count, oy0, ox0, SY, SX, ch;
};

__device__ static dgrad_stage dgrad_stage_of(const nn_conv_shape &s, const conv_phase &f, int M, int rows, int ch)
{
    int per = f.ny * f.nx, i0 = blockIdx.x * rows, last = min(i0 + rows, M) - 1;
    /* pixel iy = py + stride y at tap ky = ky0 + stride t reads dout row
     * (py + pad - ky0) / stride + y - t: ky0 makes the division exact */
    return dgrad_stage{i0 / per,
                       last / per - i0 / per + 1,
                       (f.py + s.pad - f.ky0) / s.stride - (f.ty - 1),
                       (f.px + s.pad - f.kx0) / s.stride - (f.tx - 1),
                       f.ny + f.ty - 1,
                       f.nx + f.tx - 1,
                       ch};
}

/* st[((n*SY + y)*SX + x)*ch + q] = dout(n0 + n, oy0 + y, ox0 + x, o0 + q),
 * 0 outside dout and past O, rounded as the mode rounds */
template <class Op>
__device__ static void dgrad_stage_chunk(typename Op::elem *st, const float *dout, const nn_conv_shape &s,
                                         const dgrad_stage &g, int o0, int math, int tid)
{
    int n = g.count * g.SY * g.SX * g.ch;
    for (int e = tid; e < n; e += SIDE * SIDE) {
        int o = o0 + e % g.ch, p = e / g.ch, ox = g.ox0 + p % g.SX, oy = g.oy0 + p / g.SX % g.SY;
        int smp = g.n0 + p / (g.SX * g.SY);
        bool inside = oy >= 0 && oy < s.OH && ox >= 0 && ox < s.OW && o < s.O;
        float v = inside ? dout[(((size_t)smp * s.OH + oy) * s.OW + ox) * s.O + o] : 0.0f;
        st[e] = Op::put(pcg_round_operand(v, math));
    }
}

/* t.A[q][i] = what pixel i0 + i reads at slice entry q's tap of the phase
 * and output channel, from the staged chunk; t.B[q][j] = W at that tap,
 * input channel j0 + j and that output channel (0 past the taps, C and O:
 * the weights are read along o, where they lie one after another). */
template <int H, class Op>
__device__ static void dgrad_tap_slices(row_tiles<H, Op> &t, const weights_view &W, const nn_conv_shape &s,
                                        const conv_phase &f, const dgrad_stage &g, int M, int tap0, int o0, int math,
                                        int tid)
{
    int j0 = blockIdx.y * TILE, per = f.ny * f.nx, taps = f.ty * f.tx;
    fill_a(t, M, taps, tap0, o0, g.ch, tid, [&](int pix, int tap, int oo) {
        int tap_y = tap / f.tx, tap_x = tap % f.tx;
        int n = pix / per - g.n0, p = pix % per, y = p / f.nx - tap_y + f.ty - 1, x = p % f.nx - tap_x + f.tx - 1;
        return t.stage[((n * g.SY + y) * g.SX + x) * g.ch + oo];
    });
    for (int e = tid; e < TILE * Op::K; e += SIDE * SIDE) {
        int q = e % Op::K, j = e / Op::K, c = j0 + j;
        slice_entry x = entry_of(q, tap0, o0, g.ch);
        float w = 0.0f;
        if (x.tap < taps && x.c < s.O && c < s.C) {
            int ky = f.ky0 + s.stride * (x.tap / f.tx), kx = f.kx0 + s.stride * (x.tap % f.tx);
            w = W.at(((size_t)(ky * s.k + kx) * s.C + c) * s.O + x.c, math);
        }
        t.B[q][j] = Op::put(w);
    }
}
#endif

template <int H, class Op, bool SPLIT>
__global__ static void conv_dgrad_staged_tc_kernel(float *din, const float *dout, weights_view W, int B,
                                                   nn_conv_shape s, int math, const float *mask, int ch)
{
    conv_phase f = phase_of(s, blockIdx.z);
    int M = B * f.ny * f.nx;
    if ((int)blockIdx.x * H * TILE >= M) return; /* the grid fits the largest phase */
#if PCG_TC_DEVICE
    __shared__ row_tiles<H, Op> t;
    int tid = threadIdx.y * SIDE + threadIdx.x;
    dgrad_stage g = dgrad_stage_of(s, f, M, H * TILE, ch);
    row_warp<H, Op> w;
    rows_product<H, Op, SPLIT>(
        w, t, s.O, ch, f.ty * f.tx, [&](int o0) { dgrad_stage_chunk<Op>(t.stage, dout, s, g, o0, math, tid); },
        [&](int tap0, int o0) { dgrad_tap_slices(t, W, s, f, g, M, tap0, o0, math, tid); });
    rows_store(w, t, [&](const float (&acc)[COMB][COMB], int h) {
        dgrad_store(din, acc, (blockIdx.x * H + h) * TILE, M, s, f, mask);
    });
#else
    (void)din, (void)dout, (void)W, (void)math, (void)mask, (void)M, (void)ch;
    __trap();
#endif
}

/* ---- plans and launches ---- */

/* The samples a block's `rows` rows can span, per rows to a sample:
 * rows / per where per divides rows, else up to (rows - 1) / per + 2. */
static long long samples_per_block(long long rows, long long per)
{
    return rows % per == 0 ? rows / per : (rows - 1) / per + 2;
}

/* Entries a block of `rows` rows stages per channel: the forward's
 * samples' reach, or the most any phase of the input gradient stages. */
static long long fwd_stage_entries(const nn_conv_shape &s, long long rows)
{
    long long PH = (long long)(s.OH - 1) * s.stride + s.k, PW = (long long)(s.OW - 1) * s.stride + s.k;
    return samples_per_block(rows, (long long)s.OH * s.OW) * PH * PW;
}

static long long dgrad_stage_entries(const nn_conv_shape &s, long long rows)
{
    long long most = 0;
    for (int z = 0; z < s.stride * s.stride; z++) {
        conv_phase f = phase_of(s, z);
        long long per = (long long)f.ny * f.nx, SY = f.ny + f.ty - 1, SX = f.nx + f.tx - 1;
        if (per == 0 || SY <= 0 || SX <= 0) continue;
        long long need = samples_per_block(rows, per) * SY * SX;
        most = need > most ? need : most;
    }
    return most;
}

/* Tiles a block (8, 4 or 2) and channels a chunk (8, 4, 2 or 1): the most
 * tiles, up to `most`, whose grid of a launch's `rows` rows gives every
 * multiprocessor a block (2 tiles whatever the grid), with the most
 * channels whose entries fit the `capacity` the stage holds; tiles 0 when
 * not even one channel of 2 tiles fits. */
struct rows_plan {
    int tiles, ch;
};

typedef long long stage_entries(const nn_conv_shape &s, long long rows);

static rows_plan plan_rows(long long rows, const nn_conv_shape &s, stage_entries *entries, int most,
                           long long capacity)
{
    int sms = pcg_device_sms();
    for (int h = most; h >= 2; h /= 2) {
        long long blocks = (rows + h * TILE - 1) / (h * TILE);
        if (h > 2 && blocks < sms) continue;
        long long need = entries(s, (long long)h * TILE);
        for (int ch = TC_K; ch >= 1; ch /= 2)
            if (need * ch <= capacity) return rows_plan{h, ch};
    }
    return rows_plan{0, 0};
}

/* fp32 splits every operand (three products a slice, twice the fragments
 * a warp holds while it multiplies): at most 4 tiles, as many registers
 * as 8 tiles of TF32 take. */
static int most_tiles(int math)
{
    return math == PCG_MATH_FP32 ? MOST_TILES / 2 : MOST_TILES;
}

/* The stage's entries in mode math: bf16 stages 2-byte operands, so twice
 * as many channels fit and a slice of 16 takes fewer taps (fewer of the
 * last slice's padding taps, which the tensor cores multiply too). */
static long long stage_capacity(int math)
{
    return ROW_STAGE_BYTES / (math == PCG_MATH_BF16 ? sizeof(tc_bf16::elem) : sizeof(float));
}

/* A launch's name for the simulation's work counters, as a device's
 * profiler names an instantiation: names[TF32, split, bf16][0, 1, 2 for
 * 2, 4, 8 tiles]; the model prices a tensor-core kernel whose name ends
 * in ", bf16>" at the bf16 rate (host/gpu/device_model.c). */
template <int H, class Op, bool SPLIT> static const char *staged_name(const char *const (&names)[3][3])
{
    int kind = SPLIT ? 1 : std::is_same<Op, tc_bf16>::value ? 2 : 0;
    return names[kind][H == 8 ? 2 : H == 4 ? 1 : 0];
}

template <int H, class Op, bool SPLIT>
static void launch_forward(dim3 g, float *out, const float *in, const weights_view &W, const float *b, int B,
                           const nn_conv_shape &s, int math, int relu, int ch)
{
    static const char *const names[3][3] = {
        {"conv_fwd_staged_tc_kernel<2>", "conv_fwd_staged_tc_kernel<4>", "conv_fwd_staged_tc_kernel<8>"},
        {"conv_fwd_staged_tc_kernel<2, split>", "conv_fwd_staged_tc_kernel<4, split>", ""},
        {"conv_fwd_staged_tc_kernel<2, bf16>", "conv_fwd_staged_tc_kernel<4, bf16>",
         "conv_fwd_staged_tc_kernel<8, bf16>"}};
    const char *name = staged_name<H, Op, SPLIT>(names);
    PCG_LAUNCH_AS(name, (conv_fwd_staged_tc_kernel<H, Op, SPLIT>), g, dim3(SIDE, SIDE), 0, pcg_cuda_stream(), out,
                  in, W, b, B, s, math, relu, ch);
    (void)name; /* nvcc's launch does not name it */
}

template <int H, class Op, bool SPLIT>
static void launch_dgrad(dim3 g, float *din, const float *dout, const weights_view &W, int B, const nn_conv_shape &s,
                         int math, const float *mask, int ch)
{
    static const char *const names[3][3] = {
        {"conv_dgrad_staged_tc_kernel<2>", "conv_dgrad_staged_tc_kernel<4>", "conv_dgrad_staged_tc_kernel<8>"},
        {"conv_dgrad_staged_tc_kernel<2, split>", "conv_dgrad_staged_tc_kernel<4, split>", ""},
        {"conv_dgrad_staged_tc_kernel<2, bf16>", "conv_dgrad_staged_tc_kernel<4, bf16>",
         "conv_dgrad_staged_tc_kernel<8, bf16>"}};
    const char *name = staged_name<H, Op, SPLIT>(names);
    PCG_LAUNCH_AS(name, (conv_dgrad_staged_tc_kernel<H, Op, SPLIT>), g, dim3(SIDE, SIDE), 0, pcg_cuda_stream(), din,
                  dout, W, B, s, math, mask, ch);
    (void)name; /* nvcc's launch does not name it */
}

/* The instantiation for math and the plan's tiles: fp32 splits on TF32
 * fragments (2 or 4 tiles), TF32 and bf16 take their own fragments (2, 4
 * or 8).  launch(tiles, Op(), split) launches it, tiles and split as
 * std::integral_constant. */
template <int H, class Op, bool SPLIT, class Launch> static void run_as(const Launch &launch)
{
    launch(std::integral_constant<int, H>(), Op(), std::integral_constant<bool, SPLIT>());
}

template <class Launch> static void by_plan(int math, int tiles, const Launch &launch)
{
    if (math == PCG_MATH_FP32 && tiles == 4) run_as<4, tc_tf32, true>(launch);
    else if (math == PCG_MATH_FP32) run_as<2, tc_tf32, true>(launch);
    else if (math == PCG_MATH_BF16 && tiles == 8) run_as<8, tc_bf16, false>(launch);
    else if (math == PCG_MATH_BF16 && tiles == 4) run_as<4, tc_bf16, false>(launch);
    else if (math == PCG_MATH_BF16) run_as<2, tc_bf16, false>(launch);
    else if (tiles == 8) run_as<8, tc_tf32, false>(launch);
    else if (tiles == 4) run_as<4, tc_tf32, false>(launch);
    else run_as<2, tc_tf32, false>(launch);
}

/* The weights W (n of them) as the kernels read them in mode math: in bf16
 * packed into arena scratch, which the caller's mark gives back after the
 * launch.  0, or -1 (last_error). */
static int weights_for(weights_view *v, const float *W, size_t n, int math)
{
    v->W = W, v->half = NULL;
    if (math != PCG_MATH_BF16) return 0;
    unsigned short *half = (unsigned short *)pcg_arena_alloc(n * sizeof(unsigned short));
    if (!half) return -1;
    PCG_LAUNCH(bf16_pack_kernel, pcg_grid_for(256, n), 256, 0, pcg_cuda_stream(), half, W, n);
    v->half = half;
    return 0;
}

int pcg_conv_staged_forward(float *out, const float *in, const float *W, const float *b, int B,
                            const nn_conv_shape &s, int math, int relu)
{
    long long rows = (long long)B * s.OH * s.OW;
    rows_plan p = plan_rows(rows, s, fwd_stage_entries, most_tiles(math), stage_capacity(math));
    if (!p.tiles) return 1;
    size_t mark = pcg_arena_mark();
    weights_view w;
    if (weights_for(&w, W, (size_t)s.k * s.k * s.C * s.O, math)) return -1;
    dim3 g((unsigned)((rows + p.tiles * TILE - 1) / (p.tiles * TILE)), (unsigned)((s.O + TILE - 1) / TILE));
    by_plan(math, p.tiles, [&](auto tiles, auto op, auto split) {
        launch_forward<decltype(tiles)::value, decltype(op), decltype(split)::value>(g, out, in, w, b, B, s, math,
                                                                                      relu, p.ch);
    });
    pcg_arena_release(mark); /* later work on the stream runs after the launch */
    PCG_CK(cudaGetLastError(), -1);
    return 0;
}

int pcg_conv_staged_dgrad(float *din, const float *dout, const float *W, int B, const nn_conv_shape &s, int math,
                          const float *mask)
{
    /* phase (0, 0) has the most pixels */
    long long most = (long long)B * ((s.H + s.stride - 1) / s.stride) * ((s.W + s.stride - 1) / s.stride);
    rows_plan p = plan_rows(most, s, dgrad_stage_entries, most_tiles(math), stage_capacity(math));
    if (!p.tiles) return 1;
    size_t mark = pcg_arena_mark();
    weights_view w;
    if (weights_for(&w, W, (size_t)s.k * s.k * s.C * s.O, math)) return -1;
    dim3 g((unsigned)((most + p.tiles * TILE - 1) / (p.tiles * TILE)), (unsigned)((s.C + TILE - 1) / TILE),
           (unsigned)(s.stride * s.stride));
    by_plan(math, p.tiles, [&](auto tiles, auto op, auto split) {
        launch_dgrad<decltype(tiles)::value, decltype(op), decltype(split)::value>(g, din, dout, w, B, s, math, mask,
                                                                                    p.ch);
    });
    pcg_arena_release(mark);
    PCG_CK(cudaGetLastError(), -1);
    return 0;
}
