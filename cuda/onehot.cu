/* The layers on the one-hot observation (or on the window of it that the
 * config names): the critic's first dense layer and conv 1, as gathers of
 * weight rows by each cell's byte class instead of products with a one-hot
 * matrix.  Each output (each gradient entry) adds in the CPU's order of
 * host/learn/nn_layers.h, so the results are bit-identical to the CPU's,
 * but the conv 1 weight gradient, summed in chunks of 64 samples.  The
 * tiled kernels keep what the plain ones re-read in shared memory; the
 * plain conv 1 kernels serve shapes past the tiled kernels' arrays. */
#include "common.cuh"
#include "dungeon.h"
#ifdef PCG_SIM
#include "sim.h"
#endif
#include "nn_shapes.h"

#define ONEHOT_THREADS 256

/* ---- dense on the one-hot observation ---- */

/* A block takes DENSE_GROUP outputs.  The forward pass keeps DENSE_CELLS
 * cells' weight rows of those outputs in shared memory for SAMPLES
 * samples at a time (a thread per output would read its own copy of every
 * row: 2.7 MB of weights a sample for the paper's critic); the backward
 * pass a tile of DENSE_BWD_SAMPLES samples' gradients of those outputs for
 * DENSE_LANES cells.  Each output adds in the CPU's order: the same bits.
 * The more samples a block, the fewer times the weights are read: 128
 * where the grid still gives every multiprocessor a block (the update's
 * passes of 6,400 samples: 200 blocks at the paper's 64 outputs), else 64
 * (the rollout's 600 environments). */
#define DENSE_GROUP 16
#define DENSE_CELLS 48
#define DENSE_SAMPLES_MOST 128
#define DENSE_SAMPLES_LEAST 64
#define DENSE_BWD_SAMPLES 128
#define DENSE_THREADS 256 /* DENSE_GROUP outputs x 16 lanes (samples, or cells) */
#define DENSE_LANES (DENSE_THREADS / DENSE_GROUP)

/* Cells c0..c0+cells-1 of samples n0..n0+samples-1 into x[sample][cell],
 * rows of ld; 0 past the batch. */
__device__ static void stage_cells(unsigned char *x, int ld, int samples, const unsigned char *obs,
                                   const nn_obs_view &vw, int B, int n0, int c0, int cells)
{
    for (int i = threadIdx.x; i < samples * cells; i += blockDim.x) {
        int s = i / cells, q = i % cells, n = n0 + s, cell = c0 + q;
        x[s * ld + q] = n < B ? obs[(size_t)n * vw.size + vw.off + (cell / vw.w) * vw.ld + cell % vw.w] : 0;
    }
}

/* Grid: (groups of SAMPLES samples, output groups); thread (lane,
 * output): samples lane, lane + DENSE_LANES, ... of the group. */
template <int SAMPLES>
__global__ static void dense_onehot_fwd_tiled_kernel(float *out, const unsigned char *obs, nn_obs_view vw,
                                                     const float *W, const float *b, int B, int C, int O)
{
    __shared__ float w[DENSE_CELLS * OBS_CHANNELS * DENSE_GROUP];
    __shared__ unsigned char x[SAMPLES * DENSE_CELLS];
    int j = threadIdx.x % DENSE_GROUP, lane = threadIdx.x / DENSE_GROUP, o0 = blockIdx.y * DENSE_GROUP, o = o0 + j;
    int n0 = blockIdx.x * SAMPLES, cells = vw.h * vw.w;
    float y[SAMPLES / DENSE_LANES];
    for (int k = 0; k < SAMPLES / DENSE_LANES; k++) y[k] = o < O ? b[o] : 0.0f;
    for (int c0 = 0; c0 < cells; c0 += DENSE_CELLS) {
        int nc = min(DENSE_CELLS, cells - c0);
        __syncthreads(); /* the last tile is read */
        for (int i = threadIdx.x; i < nc * C * DENSE_GROUP; i += blockDim.x) {
            int oo = o0 + i % DENSE_GROUP;
            w[i] = oo < O ? W[((size_t)c0 * C + i / DENSE_GROUP) * O + oo] : 0.0f;
        }
        stage_cells(x, DENSE_CELLS, SAMPLES, obs, vw, B, n0, c0, nc);
        __syncthreads();
        for (int k = 0; k < SAMPLES / DENSE_LANES; k++) {
            const unsigned char *xs = x + (lane + k * DENSE_LANES) * DENSE_CELLS;
            for (int q = 0; q < nc; q++) {
                unsigned char v = xs[q];
                y[k] += w[(q * C + (v & OBS_TILE_MASK)) * DENSE_GROUP + j];
                if (v & OBS_FROZEN_BIT) y[k] += w[(q * C + C - 1) * DENSE_GROUP + j];
            }
        }
    }
    if (o >= O) return;
    for (int k = 0; k < SAMPLES / DENSE_LANES; k++) {
        int n = n0 + lane + k * DENSE_LANES;
        if (n < B) out[(size_t)n * O + o] = y[k];
    }
}

/* Grid: (cell groups of DENSE_LANES, output groups); thread (cell lane,
 * output): its rows of dW, samples in order, a tile at a time. */
__global__ static void dense_onehot_bwd_tiled_kernel(float *dW, const float *dout, const unsigned char *obs,
                                                     nn_obs_view vw, int B, int C, int O)
{
    __shared__ float g[DENSE_BWD_SAMPLES * DENSE_GROUP];
    __shared__ unsigned char x[DENSE_BWD_SAMPLES * DENSE_LANES];
    int j = threadIdx.x % DENSE_GROUP, lane = threadIdx.x / DENSE_GROUP, o0 = blockIdx.y * DENSE_GROUP, o = o0 + j;
    int c0 = blockIdx.x * DENSE_LANES, cells = min(DENSE_LANES, vw.h * vw.w - c0), i = c0 + lane;
    bool mine = lane < cells && o < O;
    float acc[OBS_CHANNELS];
    for (int c = 0; c < C; c++) acc[c] = mine ? dW[((size_t)i * C + c) * O + o] : 0.0f;
    for (int n0 = 0; n0 < B; n0 += DENSE_BWD_SAMPLES) {
        __syncthreads(); /* the last tile is read */
        for (int t = threadIdx.x; t < DENSE_BWD_SAMPLES * DENSE_GROUP; t += blockDim.x) {
            int n = n0 + t / DENSE_GROUP, oo = o0 + t % DENSE_GROUP;
            g[t] = n < B && oo < O ? dout[(size_t)n * O + oo] : 0.0f;
        }
        stage_cells(x, DENSE_LANES, DENSE_BWD_SAMPLES, obs, vw, B, n0, c0, cells);
        __syncthreads();
        if (!mine) continue;
        for (int s = 0; s < min(DENSE_BWD_SAMPLES, B - n0); s++) {
            unsigned char v = x[s * DENSE_LANES + lane];
            float gv = g[s * DENSE_GROUP + j];
            acc[v & OBS_TILE_MASK] += gv;
            if (v & OBS_FROZEN_BIT) acc[C - 1] += gv;
        }
    }
    if (!mine) return;
    for (int c = 0; c < C; c++) dW[((size_t)i * C + c) * O + o] = acc[c];
}

/* The kernels' accumulators and shared rows hold at most OBS_CHANNELS
 * channels, as many as the observation has (nn_forward checks it too). */
static int dense_onehot_fits(const char *pass, int C)
{
    if (C <= OBS_CHANNELS) return 1;
    pcg_cuda_set_error("dense one-hot %s: %d input channels, at most %d", pass, C, OBS_CHANNELS);
    return 0;
}

int pcg_dense_onehot_forward(float *out, const unsigned char *obs, const nn_obs_view &vw, const float *W,
                             const float *b, int B, int C, int O)
{
    if (!dense_onehot_fits("forward", C)) return -1;
    unsigned outs = (unsigned)((O + DENSE_GROUP - 1) / DENSE_GROUP);
    unsigned most = (unsigned)((B + DENSE_SAMPLES_MOST - 1) / DENSE_SAMPLES_MOST);
    if ((long long)most * outs >= pcg_device_sms())
        PCG_LAUNCH_AS("dense_onehot_fwd_tiled_kernel<128>", dense_onehot_fwd_tiled_kernel<DENSE_SAMPLES_MOST>,
                      dim3(most, outs), DENSE_THREADS, 0, pcg_cuda_stream(), out, obs, vw, W, b, B, C, O);
    else
        PCG_LAUNCH_AS("dense_onehot_fwd_tiled_kernel<64>", dense_onehot_fwd_tiled_kernel<DENSE_SAMPLES_LEAST>,
                      dim3((unsigned)((B + DENSE_SAMPLES_LEAST - 1) / DENSE_SAMPLES_LEAST), outs), DENSE_THREADS, 0,
                      pcg_cuda_stream(), out, obs, vw, W, b, B, C, O);
    PCG_CK(cudaGetLastError(), -1);
    return 0;
}

int pcg_dense_onehot_backward(float *dW, const float *dout, const unsigned char *obs, const nn_obs_view &vw, int B,
                              int C, int O)
{
    if (!dense_onehot_fits("backward", C)) return -1;
    dim3 grid((unsigned)((vw.h * vw.w + DENSE_LANES - 1) / DENSE_LANES),
              (unsigned)((O + DENSE_GROUP - 1) / DENSE_GROUP));
    PCG_LAUNCH(dense_onehot_bwd_tiled_kernel, grid, DENSE_THREADS, 0, pcg_cuda_stream(), dW, dout, obs, vw, B, C, O);
    PCG_CK(cudaGetLastError(), -1);
    return 0;
}

/* ---- convolution on the one-hot observation (conv 1) ---- */

/* Fused rows per tap and byte class (see nn_layers.h): class t holds row t,
 * class t + C-1 holds row t + the frozen row. */
__global__ static void onehot_table_kernel(float *table, const float *W, int taps, int C, int O)
{
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= (size_t)taps * (C - 1) * O) return;
    int o = (int)(idx % O), t = (int)(idx / O % (C - 1)), tap = (int)(idx / O / (C - 1));
    int NC = 2 * (C - 1);
    float w = W[((size_t)tap * C + t) * O + o], wf = W[((size_t)tap * C + C - 1) * O + o];
    table[((size_t)tap * NC + t) * O + o] = w;
    table[((size_t)tap * NC + t + C - 1) * O + o] = w + wf;
}

__device__ static int onehot_class(unsigned char v, int C)
{
    return (v & OBS_TILE_MASK) + ((v & OBS_FROZEN_BIT) ? C - 1 : 0);
}

/* The taps of output position (oy, ox) that land inside the input, in
 * the CPU's order of adds: f(tap, iy, ix). */
template <class F>
__device__ static void for_window_taps(const nn_conv_shape &s, int oy, int ox, const F &f)
{
    for (int ky = 0; ky < s.k; ky++) {
        int iy = oy * s.stride - s.pad + ky;
        if (iy < 0 || iy >= s.H) continue;
        for (int kx = 0; kx < s.k; kx++) {
            int ix = ox * s.stride - s.pad + kx;
            if (ix < 0 || ix >= s.W) continue;
            f(ky * s.k + kx, iy, ix);
        }
    }
}

/* The output positions where tap (ky, kx) lands inside the input, in the
 * CPU's order of adds: f(position, iy, ix). */
template <class F>
__device__ static void for_tap_positions(const nn_conv_shape &s, int ky, int kx, const F &f)
{
    for (int oy = 0; oy < s.OH; oy++) {
        int iy = oy * s.stride - s.pad + ky;
        if (iy < 0 || iy >= s.H) continue;
        for (int ox = 0; ox < s.OW; ox++) {
            int ix = ox * s.stride - s.pad + kx;
            if (ix < 0 || ix >= s.W) continue;
            f(oy * s.OW + ox, iy, ix);
        }
    }
}

__global__ static void conv_onehot_fwd_kernel(float *out, const unsigned char *obs, nn_obs_view vw,
                                              const float *table, const float *b, int B, nn_conv_shape s, int relu)
{
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    size_t total = (size_t)B * s.OH * s.OW * s.O;
    if (idx >= total) return;
    int o = (int)(idx % s.O);
    size_t row = idx / s.O;
    int ox = (int)(row % s.OW), oy = (int)(row / s.OW % s.OH), n = (int)(row / s.OW / s.OH);
    int NC = 2 * (s.C - 1);
    const unsigned char *x = obs + (size_t)n * vw.size + vw.off;
    float y = b[o];
    for_window_taps(s, oy, ox, [&](int tap, int iy, int ix) {
        y += table[((size_t)tap * NC + onehot_class(x[iy * vw.ld + ix], s.C)) * s.O + o];
    });
    out[idx] = relu && y < 0 ? 0.0f : y;
}

/* Per (sample chunk, tap, output): class sums over the chunk's samples and
 * output positions, in the CPU's order. */
__global__ static void conv_onehot_bwd_kernel(float *part, float *bias_part, const float *dout,
                                              const unsigned char *obs, nn_obs_view vw, int B, nn_conv_shape s,
                                              int chunk)
{
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    int taps = s.k * s.k, NC = 2 * (s.C - 1);
    int chunks = (B + chunk - 1) / chunk;
    if (idx >= (size_t)chunks * taps * s.O) return;
    int o = (int)(idx % s.O), tap = (int)(idx / s.O % taps), c = (int)(idx / s.O / taps);
    int ky = tap / s.k, kx = tap % s.k;
    float acc[2 * (OBS_CHANNELS - 1)];
    for (int q = 0; q < NC; q++) acc[q] = 0;
    int n1 = min(B, (c + 1) * chunk);
    for (int n = c * chunk; n < n1; n++) {
        const unsigned char *x = obs + (size_t)n * vw.size + vw.off;
        const float *gn = dout + (size_t)n * s.OH * s.OW * s.O;
        for_tap_positions(s, ky, kx, [&](int p, int iy, int ix) {
            acc[onehot_class(x[iy * vw.ld + ix], s.C)] += gn[(size_t)p * s.O + o];
        });
    }
    float *p = part + (((size_t)c * taps + tap) * NC) * s.O + o;
    for (int q = 0; q < NC; q++) p[(size_t)q * s.O] = acc[q];
    if (tap) return;
    /* the bias's share of the chunk: every position of output o */
    float bias = 0;
    for (int n = c * chunk; n < n1; n++)
        for (int q = 0; q < s.OH * s.OW; q++) bias += dout[((size_t)n * s.OH * s.OW + q) * s.O + o];
    bias_part[(size_t)c * s.O + o] = bias;
}

/* The same two passes with their re-read data in shared memory: the
 * kernels above ask global memory (or, on a device, its caches) for a
 * table row per tap per output and for each output gradient once per tap,
 * about 3.5 MB a sample in the forward pass.  Here a block takes
 * ONEHOT_GROUP outputs: the forward pass keeps that slice of the fused
 * table (every tap and class) in shared memory for ONEHOT_SAMPLES samples,
 * the backward pass its samples' gradients of those outputs, as many
 * samples at a time as the arrays hold; the observation window is turned
 * into byte classes once per sample.  Each
 * output (each class sum) adds in the same order as above, so the bits are
 * the same.  Shapes past the arrays' sizes take the kernels above. */
#define ONEHOT_GROUP 8
#define ONEHOT_SAMPLES 16
#define ONEHOT_TABLE_MAX (ONEHOT_TAPS_MAX * 2 * (OBS_CHANNELS - 1) * ONEHOT_GROUP)
#define ONEHOT_CELLS_MAX 4096
#define ONEHOT_POSITIONS_MAX 1024
#define ONEHOT_TAPS_MAX 49
#define ONEHOT_FWD_THREADS 256

/* The classes of samples m0..m1-1's windows, one after another from cls,
 * by every thread of the block. */
__device__ static void stage_classes(unsigned char *cls, const unsigned char *obs, const nn_obs_view &vw, int m0,
                                     int m1, const nn_conv_shape &s)
{
    int cells = s.H * s.W;
    for (int i = threadIdx.x; i < (m1 - m0) * cells; i += blockDim.x) {
        int n = m0 + i / cells, q = i % cells;
        cls[i] = onehot_class(obs[(size_t)n * vw.size + vw.off + (q / s.W) * vw.ld + q % s.W], s.C);
    }
}

/* How many samples' windows (and, backward, gradients) the shared arrays
 * take at once: fewer barriers, the same order of adds. */
__device__ static int staged_samples(const nn_conv_shape &s, bool gradients)
{
    int n = ONEHOT_CELLS_MAX / (s.H * s.W);
    if (gradients) n = min(n, ONEHOT_POSITIONS_MAX / (s.OH * s.OW));
    return max(n, 1);
}

/* One sample's outputs of this thread's output j, from its classes. */
__device__ static void conv_onehot_sample(float *out, const float *tab, const unsigned char *cls, float bias, int n,
                                          int j, int o, int relu, const nn_conv_shape &s)
{
    int NC = 2 * (s.C - 1), positions = s.OH * s.OW, lanes = blockDim.x / ONEHOT_GROUP;
    for (int p = threadIdx.x / ONEHOT_GROUP; p < positions; p += lanes) {
        int oy = p / s.OW, ox = p % s.OW;
        float y = bias;
        for_window_taps(s, oy, ox, [&](int tap, int iy, int ix) {
            y += tab[(tap * NC + cls[iy * s.W + ix]) * ONEHOT_GROUP + j];
        });
        out[((size_t)n * positions + p) * s.O + o] = relu && y < 0 ? 0.0f : y;
    }
}

/* Grid: (sample groups, output groups); ONEHOT_FWD_THREADS threads, a
 * thread per (position lane, output of the group). */
__global__ static void conv_onehot_fwd_tiled_kernel(float *out, const unsigned char *obs, nn_obs_view vw,
                                                    const float *table, const float *b, int B, nn_conv_shape s,
                                                    int relu)
{
    __shared__ float tab[ONEHOT_TABLE_MAX];
    __shared__ unsigned char cls[ONEHOT_CELLS_MAX];
    int NC = 2 * (s.C - 1), rows = s.k * s.k * NC, o0 = blockIdx.y * ONEHOT_GROUP;
    for (int i = threadIdx.x; i < rows * ONEHOT_GROUP; i += blockDim.x) {
        int o = o0 + i % ONEHOT_GROUP;
        tab[i] = o < s.O ? table[(size_t)(i / ONEHOT_GROUP) * s.O + o] : 0.0f;
    }
    int j = threadIdx.x % ONEHOT_GROUP, o = o0 + j, cells = s.H * s.W, step = staged_samples(s, false);
    int n0 = blockIdx.x * ONEHOT_SAMPLES, n1 = min(B, n0 + ONEHOT_SAMPLES);
    float bias = o < s.O ? b[o] : 0.0f;
    for (int m0 = n0; m0 < n1; m0 += step) {
        int m1 = min(n1, m0 + step);
        __syncthreads(); /* the table is in; the last samples' classes are read */
        stage_classes(cls, obs, vw, m0, m1, s);
        __syncthreads();
        if (o >= s.O) continue;
        for (int n = m0; n < m1; n++) conv_onehot_sample(out, tab, cls + (n - m0) * cells, bias, n, j, o, relu, s);
    }
}

/* Grid: (sample chunks, output groups); a thread per (tap, output of the
 * group), its class sums over the chunk as conv_onehot_bwd_kernel's, and
 * the bias's share of the positions p = tap (mod taps) of the staged
 * gradients, summed over the taps at the end. */
__global__ static void conv_onehot_bwd_tiled_kernel(float *part, float *bias_part, const float *dout,
                                                    const unsigned char *obs, nn_obs_view vw, int B,
                                                    nn_conv_shape s, int chunk)
{
    __shared__ float g[ONEHOT_POSITIONS_MAX * ONEHOT_GROUP];
    __shared__ unsigned char cls[ONEHOT_CELLS_MAX];
    __shared__ float bias_taps[ONEHOT_TAPS_MAX * ONEHOT_GROUP];
    int taps = s.k * s.k, NC = 2 * (s.C - 1), positions = s.OH * s.OW, cells = s.H * s.W;
    int c = blockIdx.x, o0 = blockIdx.y * ONEHOT_GROUP, step = staged_samples(s, true);
    int tap = threadIdx.x / ONEHOT_GROUP, j = threadIdx.x % ONEHOT_GROUP, o = o0 + j;
    int ky = tap / s.k, kx = tap % s.k;
    float acc[2 * (OBS_CHANNELS - 1)], bias = 0;
    for (int q = 0; q < NC; q++) acc[q] = 0;
    int n1 = min(B, (c + 1) * chunk);
    for (int m0 = c * chunk; m0 < n1; m0 += step) {
        int m1 = min(n1, m0 + step), per = positions * ONEHOT_GROUP;
        __syncthreads(); /* the last samples' gradients and classes are read */
        stage_classes(cls, obs, vw, m0, m1, s);
        for (int i = threadIdx.x; i < (m1 - m0) * per; i += blockDim.x) {
            int n = m0 + i / per, oo = o0 + i % ONEHOT_GROUP;
            g[i] = oo < s.O ? dout[((size_t)n * positions + i % per / ONEHOT_GROUP) * s.O + oo] : 0.0f;
        }
        __syncthreads();
        if (o >= s.O) continue;
        for (int n = m0; n < m1; n++) {
            const unsigned char *cn = cls + (n - m0) * cells;
            const float *gn = g + (n - m0) * per;
            for_tap_positions(s, ky, kx, [&](int p, int iy, int ix) {
                acc[cn[iy * s.W + ix]] += gn[p * ONEHOT_GROUP + j];
            });
            for (int p = tap; p < positions; p += taps) bias += gn[p * ONEHOT_GROUP + j];
        }
    }
    bias_taps[threadIdx.x] = bias;
    __syncthreads();
    if (o >= s.O) return;
    float *p = part + (((size_t)c * taps + tap) * NC) * s.O + o;
    for (int q = 0; q < NC; q++) p[(size_t)q * s.O] = acc[q];
    if (tap) return;
    for (int t = 1; t < taps; t++) bias += bias_taps[t * ONEHOT_GROUP + j];
    bias_part[(size_t)c * s.O + o] = bias;
}

/* Whether the shape fits the tiled kernels' shared arrays and blocks. */
static bool onehot_tiled_fits(const nn_conv_shape &s)
{
    int taps = s.k * s.k;
    return s.C <= OBS_CHANNELS && taps <= ONEHOT_TAPS_MAX && s.H * s.W <= ONEHOT_CELLS_MAX &&
           s.OH * s.OW <= ONEHOT_POSITIONS_MAX;
}

/* Sum the chunks in order and fold the classes into the tile and frozen
 * rows of dW (as conv_onehot_backward does); tap 0's threads add the
 * chunks' bias sums into db. */
__global__ static void conv_onehot_fold_kernel(float *dW, float *db, const float *part, const float *bias_part,
                                               int chunks, nn_conv_shape s)
{
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    int taps = s.k * s.k, NC = 2 * (s.C - 1), C = s.C;
    if (idx >= (size_t)taps * s.O) return;
    int o = (int)(idx % s.O), tap = (int)(idx / s.O);
    if (!tap) {
        float bias = 0;
        for (int c = 0; c < chunks; c++) bias += bias_part[(size_t)c * s.O + o];
        db[o] += bias;
    }
    float *wt = dW + (size_t)tap * C * s.O, *wf = wt + (size_t)(C - 1) * s.O;
    for (int t = 0; t < C - 1; t++) {
        float plain = 0, frozen = 0;
        for (int c = 0; c < chunks; c++) {
            const float *p = part + (((size_t)c * taps + tap) * NC) * s.O + o;
            plain += p[(size_t)t * s.O];
            frozen += p[(size_t)(t + C - 1) * s.O];
        }
        wt[(size_t)t * s.O + o] += plain + frozen;
        wf[o] += frozen;
    }
}

int pcg_conv_onehot_forward(float *out, const unsigned char *obs, const nn_obs_view &vw, const float *W,
                            const float *b, int B, const nn_conv_shape &s, int relu)
{
    int taps = s.k * s.k, NC = 2 * (s.C - 1);
    size_t mark = pcg_arena_mark();
    float *table = (float *)pcg_arena_alloc((size_t)taps * NC * s.O * sizeof(float));
    if (!table) return -1;
    size_t nt = (size_t)taps * (s.C - 1) * s.O, no = (size_t)B * s.OH * s.OW * s.O;
    PCG_LAUNCH(onehot_table_kernel, pcg_grid_for(ONEHOT_THREADS, nt), ONEHOT_THREADS, 0, pcg_cuda_stream(), table, W,
               taps, s.C, s.O);
    if (onehot_tiled_fits(s)) {
        dim3 grid((unsigned)((B + ONEHOT_SAMPLES - 1) / ONEHOT_SAMPLES),
                  (unsigned)((s.O + ONEHOT_GROUP - 1) / ONEHOT_GROUP));
        PCG_LAUNCH(conv_onehot_fwd_tiled_kernel, grid, ONEHOT_FWD_THREADS, 0, pcg_cuda_stream(), out, obs, vw, table, b,
                   B, s, relu);
    } else {
        PCG_LAUNCH(conv_onehot_fwd_kernel, pcg_grid_for(ONEHOT_THREADS, no), ONEHOT_THREADS, 0, pcg_cuda_stream(), out,
                   obs, vw, table, b, B, s, relu);
    }
    pcg_arena_release(mark);
    PCG_CK(cudaGetLastError(), -1);
    return 0;
}

int pcg_conv_onehot_backward(float *dW, float *db, const float *dout, const unsigned char *obs,
                             const nn_obs_view &vw, int B, const nn_conv_shape &s)
{
    int taps = s.k * s.k, NC = 2 * (s.C - 1);
    int chunk = 64, chunks = (B + chunk - 1) / chunk;
    size_t mark = pcg_arena_mark(), n_part = (size_t)chunks * taps * NC * s.O;
    float *part = (float *)pcg_arena_alloc((n_part + (size_t)chunks * s.O) * sizeof(float));
    if (!part) return -1;
    float *bias_part = part + n_part;
    size_t nb = (size_t)chunks * taps * s.O, nf = (size_t)taps * s.O;
    if (onehot_tiled_fits(s)) {
        dim3 grid((unsigned)chunks, (unsigned)((s.O + ONEHOT_GROUP - 1) / ONEHOT_GROUP));
        PCG_LAUNCH(conv_onehot_bwd_tiled_kernel, grid, taps * ONEHOT_GROUP, 0, pcg_cuda_stream(), part, bias_part,
                   dout, obs, vw, B, s, chunk);
    } else {
        PCG_LAUNCH(conv_onehot_bwd_kernel, pcg_grid_for(ONEHOT_THREADS, nb), ONEHOT_THREADS, 0, pcg_cuda_stream(), part,
                   bias_part, dout, obs, vw, B, s, chunk);
    }
    PCG_LAUNCH(conv_onehot_fold_kernel, pcg_grid_for(ONEHOT_THREADS, nf), ONEHOT_THREADS, 0, pcg_cuda_stream(), dW, db,
               part, bias_part, chunks, s);
    pcg_arena_release(mark);
    PCG_CK(cudaGetLastError(), -1);
    return 0;
}

