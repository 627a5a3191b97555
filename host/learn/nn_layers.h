/* Layer passes of the network and the PPO loss, written once for a real type.
 * host/learn/nn.c includes this with NN_REAL float; tests/test_nn.c includes it
 * again with double to check every backward pass against finite
 * differences.  Before including, define:
 *   NN_REAL       float or double
 *   NN_FN(name)   the name of a function for this type (name##_f, ...)
 *   NN_GEMM       cblas_sgemm or cblas_dgemm
 *   NN_ACTS       a struct with the fields of nn_acts (host/learn/nn.h) in NN_REAL
 * Every function is static.  Batched arrays are row-major, one sample per
 * row; images are HWC.  Backward passes add into parameter gradients. */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "dungeon.h"
#include "nn.h"
#include "nn_shapes.h"

/* ---- elementwise ---- */

/* Written as selects, not branches: about half the inputs are negative,
 * in no pattern, and a mispredicted branch per element cost the tiny
 * preset more than its matrix products.  The `parallel :` modifier keeps
 * the if clause from also switching off the simd loop. */
static inline void NN_FN(relu_forward)(NN_REAL *x, size_t n)
{
#pragma omp parallel for simd schedule(static) if (parallel : n > 65536)
    for (size_t i = 0; i < n; i++) x[i] = x[i] < 0 ? 0 : x[i];
}

/* dx *= [y > 0] where y is the relu's output. */
static inline void NN_FN(relu_backward)(NN_REAL *dx, const NN_REAL *y, size_t n)
{
#pragma omp parallel for simd schedule(static) if (parallel : n > 65536)
    for (size_t i = 0; i < n; i++) dx[i] = y[i] > 0 ? dx[i] : 0;
}

/* ---- matrix products ----
 * C[M][N] = alpha op(A) op(B) + beta C, row-major, with the M rows of C
 * split into NN_BLOCKS blocks shared out among the OpenMP threads, each
 * calling a single-threaded BLAS (see nn_set_threads): one thread pool for
 * the whole network.  The blocks do not depend on the thread count, so
 * neither do the results (a BLAS may sum an edge block's rows in another
 * order than a full block's). */
#define NN_BLOCKS 16

static inline void NN_FN(gemm)(int transA, int transB, int M, int N, int K, NN_REAL alpha, const NN_REAL *A, int lda,
                               const NN_REAL *B, int ldb, NN_REAL beta, NN_REAL *C, int ldc)
{
    CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans, tb = transB ? CblasTrans : CblasNoTrans;
    if ((double)M * N * K < 4e6 || M < 32) {
        NN_GEMM(CblasRowMajor, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    int per = ((M + NN_BLOCKS - 1) / NN_BLOCKS + 7) & ~7;
#pragma omp parallel for schedule(dynamic, 1)
    for (int blk = 0; blk < NN_BLOCKS; blk++) {
        int m0 = blk * per, m1 = m0 + per < M ? m0 + per : M;
        if (m0 < m1) {
            /* rows m0.. of op(A): row offset of A, or column offset of A^T */
            const NN_REAL *a = transA ? A + m0 : A + (size_t)m0 * lda;
            NN_GEMM(CblasRowMajor, ta, tb, m1 - m0, N, K, alpha, a, lda, B, ldb, beta, C + (size_t)m0 * ldc, ldc);
        }
    }
}

/* ---- dense: out[B][O] = in[B][I] W[I][O] + b ---- */

static inline void NN_FN(dense_forward)(NN_REAL *out, const NN_REAL *in, const NN_REAL *W, const NN_REAL *b, int B,
                                        int In, int O)
{
    for (int n = 0; n < B; n++) memcpy(out + (size_t)n * O, b, sizeof(NN_REAL) * (size_t)O);
    NN_FN(gemm)(0, 0, B, O, In, 1, in, In, W, O, 1, out, O);
}

/* din (may be NULL) = dout W^T; dW += in^T dout; db += sum of dout rows. */
static inline void NN_FN(dense_backward)(NN_REAL *din, NN_REAL *dW, NN_REAL *db, const NN_REAL *dout,
                                         const NN_REAL *in, const NN_REAL *W, int B, int In, int O)
{
    NN_FN(gemm)(1, 0, In, O, B, 1, in, In, dout, O, 1, dW, O);
    for (int n = 0; n < B; n++)
        for (int o = 0; o < O; o++) db[o] += dout[(size_t)n * O + o];
    if (din) NN_FN(gemm)(0, 1, B, In, O, 1, dout, O, W, O, 0, din, In);
}

/* ---- dense on the one-hot observation: a gather of weight rows ----
 * Input row of sample n is the one-hot of the cells of the window v of
 * obs[n] (row-major): for cell i with byte x, channel (x & OBS_TILE_MASK)
 * is 1, and channel in_ch-1 if frozen.  W is [cells*in_ch][O], cells =
 * v->h*v->w. */

static inline void NN_FN(dense_onehot_forward)(NN_REAL *out, const unsigned char *obs, const nn_obs_view *v,
                                               const NN_REAL *W, const NN_REAL *b, int B, int in_ch, int O)
{
#pragma omp parallel for schedule(static)
    for (int n = 0; n < B; n++) {
        NN_REAL *y = out + (size_t)n * O;
        const unsigned char *x = obs + (size_t)n * v->size + v->off;
        memcpy(y, b, sizeof(NN_REAL) * (size_t)O);
        for (int r = 0; r < v->h; r++)
            for (int c = 0; c < v->w; c++) {
                int i = r * v->w + c;
                unsigned char xi = x[r * v->ld + c];
                const NN_REAL *w = W + ((size_t)i * in_ch + (xi & OBS_TILE_MASK)) * O;
#pragma omp simd
                for (int o = 0; o < O; o++) y[o] += w[o];
                if (xi & OBS_FROZEN_BIT) {
                    const NN_REAL *wf = W + ((size_t)i * in_ch + in_ch - 1) * O;
#pragma omp simd
                    for (int o = 0; o < O; o++) y[o] += wf[o];
                }
            }
    }
}

/* Threads own cells (their rows of dW), so the sums run in sample order
 * whatever the thread count. */
static inline void NN_FN(dense_onehot_backward)(NN_REAL *dW, NN_REAL *db, const NN_REAL *dout,
                                                const unsigned char *obs, const nn_obs_view *v, int B, int in_ch,
                                                int O)
{
    const int cells = v->h * v->w;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < cells; i++) {
        NN_REAL *wf = dW + ((size_t)i * in_ch + in_ch - 1) * O;
        const unsigned char *x = obs + v->off + (i / v->w) * v->ld + i % v->w;
        for (int n = 0; n < B; n++) {
            unsigned char xi = x[(size_t)n * v->size];
            NN_REAL *w = dW + ((size_t)i * in_ch + (xi & OBS_TILE_MASK)) * O;
            const NN_REAL *g = dout + (size_t)n * O;
#pragma omp simd
            for (int o = 0; o < O; o++) w[o] += g[o];
            if (xi & OBS_FROZEN_BIT) {
#pragma omp simd
                for (int o = 0; o < O; o++) wf[o] += g[o];
            }
        }
    }
    for (int n = 0; n < B; n++)
        for (int o = 0; o < O; o++) db[o] += dout[(size_t)n * O + o];
}

/* ---- convolution geometry ---- */

/* the convolutions' shapes: nn_conv_shape of host/learn/nn_shapes.h */

/* ---- convolution on the one-hot observation (conv 1): gather ----
 * The input is the window v of each observation (s->H x s->W = v->h x
 * v->w).  out[n][oy][ox][o] = b[o] + sum over taps inside the window of the weight
 * rows of the tap's tile channel and, if frozen, of the frozen channel.
 * Both are read at once from a table of fused rows, one per tap and byte
 * class: class t (tile t) holds row t, class t + C-1 (tile t, frozen)
 * holds row t + row C-1. */

static inline int NN_FN(onehot_class)(unsigned char v, int C)
{
    return (v & OBS_TILE_MASK) + ((v & OBS_FROZEN_BIT) ? C - 1 : 0);
}

static inline void NN_FN(conv_onehot_forward)(NN_REAL *out, const unsigned char *obs, const nn_obs_view *v,
                                              const NN_REAL *W, const NN_REAL *b, int B, const nn_conv_shape *s)
{
    const int O = s->O, C = s->C, k = s->k, NC = 2 * (C - 1);
    NN_REAL *table = malloc(sizeof(NN_REAL) * (size_t)k * k * NC * O);
    if (!table) abort();
    for (int tap = 0; tap < k * k; tap++)
        for (int t = 0; t < C - 1; t++) {
            const NN_REAL *w = W + ((size_t)tap * C + t) * O, *wf = W + ((size_t)tap * C + C - 1) * O;
            NN_REAL *r = table + ((size_t)tap * NC + t) * O, *rf = table + ((size_t)tap * NC + t + C - 1) * O;
            for (int o = 0; o < O; o++) r[o] = w[o], rf[o] = w[o] + wf[o];
        }
#pragma omp parallel for schedule(static)
    for (int n = 0; n < B; n++) {
        const unsigned char *x = obs + (size_t)n * v->size + v->off;
        for (int oy = 0; oy < s->OH; oy++)
            for (int ox = 0; ox < s->OW; ox++) {
                NN_REAL *y = out + (((size_t)n * s->OH + oy) * s->OW + ox) * O;
                memcpy(y, b, sizeof(NN_REAL) * (size_t)O);
                for (int ky = 0; ky < k; ky++) {
                    int iy = oy * s->stride - s->pad + ky;
                    if (iy < 0 || iy >= s->H) continue;
                    for (int kx = 0; kx < k; kx++) {
                        int ix = ox * s->stride - s->pad + kx;
                        if (ix < 0 || ix >= s->W) continue;
                        const NN_REAL *w =
                            table + ((size_t)(ky * k + kx) * NC + NN_FN(onehot_class)(x[iy * v->ld + ix], C)) * O;
#pragma omp simd
                        for (int o = 0; o < O; o++) y[o] += w[o];
                    }
                }
            }
    }
    free(table);
}

/* The samples are cut into NN_BLOCKS parts (whatever the thread count),
 * each summed into its own table of fused rows (taps x byte classes), read
 * once through dout; the tables are then folded, in part order, into the
 * tile and frozen rows of dW.  So any thread count gives the same bits.
 * No input gradient: the input is the observation. */
static inline void NN_FN(conv_onehot_backward)(NN_REAL *dW, NN_REAL *db, const NN_REAL *dout,
                                               const unsigned char *obs, const nn_obs_view *v, int B,
                                               const nn_conv_shape *s)
{
    const int O = s->O, C = s->C, k = s->k, NC = 2 * (C - 1);
    const size_t tsz = (size_t)k * k * NC * O;
    const int parts = NN_BLOCKS;
    NN_REAL *acc = calloc((size_t)parts * tsz, sizeof(NN_REAL));
    if (!acc) abort();
#pragma omp parallel for schedule(dynamic, 1)
    for (int id = 0; id < parts; id++) {
        NN_REAL *tab = acc + (size_t)id * tsz;
        for (int n = (int)((long)B * id / parts); n < (int)((long)B * (id + 1) / parts); n++) {
            const unsigned char *x = obs + (size_t)n * v->size + v->off;
            for (int oy = 0; oy < s->OH; oy++)
                for (int ox = 0; ox < s->OW; ox++) {
                    const NN_REAL *g = dout + (((size_t)n * s->OH + oy) * s->OW + ox) * O;
                    for (int ky = 0; ky < k; ky++) {
                        int iy = oy * s->stride - s->pad + ky;
                        if (iy < 0 || iy >= s->H) continue;
                        for (int kx = 0; kx < k; kx++) {
                            int ix = ox * s->stride - s->pad + kx;
                            if (ix < 0 || ix >= s->W) continue;
                            NN_REAL *w =
                                tab + ((size_t)(ky * k + kx) * NC + NN_FN(onehot_class)(x[iy * v->ld + ix], C)) * O;
#pragma omp simd
                            for (int o = 0; o < O; o++) w[o] += g[o];
                        }
                    }
                }
        }
    }
#pragma omp parallel for schedule(static)
    for (int tap = 0; tap < k * k; tap++) {
        NN_REAL *wt = dW + (size_t)tap * C * O, *wf = wt + (size_t)(C - 1) * O;
        for (int id = 0; id < parts; id++) {
            const NN_REAL *t = acc + (size_t)id * tsz + (size_t)tap * NC * O;
            for (int c = 0; c < C - 1; c++)
                for (int o = 0; o < O; o++) {
                    NN_REAL plain = t[(size_t)c * O + o], frozen = t[(size_t)(c + C - 1) * O + o];
                    wt[(size_t)c * O + o] += plain + frozen;
                    wf[o] += frozen;
                }
        }
    }
    free(acc);
    for (size_t i = 0; i < (size_t)B * s->OH * s->OW; i++)
        for (int o = 0; o < O; o++) db[o] += dout[i * O + o];
}

/* ---- general convolution: im2col + GEMM ---- */

/* col[(n*OH+oy)*OW+ox][(ky*k+kx)*C + c] = in[n][iy][ix][c], 0 in the padding. */
static inline void NN_FN(im2col)(NN_REAL *col, const NN_REAL *in, int B, const nn_conv_shape *s)
{
    const int C = s->C, k = s->k, K = k * k * C;
#pragma omp parallel for schedule(static)
    for (int n = 0; n < B; n++)
        for (int oy = 0; oy < s->OH; oy++)
            for (int ox = 0; ox < s->OW; ox++) {
                NN_REAL *row = col + (((size_t)n * s->OH + oy) * s->OW + ox) * K;
                for (int ky = 0; ky < k; ky++) {
                    int iy = oy * s->stride - s->pad + ky;
                    for (int kx = 0; kx < k; kx++) {
                        int ix = ox * s->stride - s->pad + kx;
                        NN_REAL *dst = row + (ky * k + kx) * C;
                        if (iy < 0 || iy >= s->H || ix < 0 || ix >= s->W)
                            memset(dst, 0, sizeof(NN_REAL) * (size_t)C);
                        else
                            memcpy(dst, in + (((size_t)n * s->H + iy) * s->W + ix) * C, sizeof(NN_REAL) * (size_t)C);
                    }
                }
            }
}

/* din = the sum of col's entries back at their input positions. */
static inline void NN_FN(col2im)(NN_REAL *din, const NN_REAL *col, int B, const nn_conv_shape *s)
{
    const int C = s->C, k = s->k, K = k * k * C;
#pragma omp parallel for schedule(static)
    for (int n = 0; n < B; n++) {
        NN_REAL *d = din + (size_t)n * s->H * s->W * C;
        memset(d, 0, sizeof(NN_REAL) * (size_t)s->H * s->W * C);
        for (int oy = 0; oy < s->OH; oy++)
            for (int ox = 0; ox < s->OW; ox++) {
                const NN_REAL *row = col + (((size_t)n * s->OH + oy) * s->OW + ox) * K;
                for (int ky = 0; ky < k; ky++) {
                    int iy = oy * s->stride - s->pad + ky;
                    if (iy < 0 || iy >= s->H) continue;
                    for (int kx = 0; kx < k; kx++) {
                        int ix = ox * s->stride - s->pad + kx;
                        if (ix < 0 || ix >= s->W) continue;
                        NN_REAL *dst = d + ((size_t)iy * s->W + ix) * C;
                        const NN_REAL *src = row + (ky * k + kx) * C;
                        for (int c = 0; c < C; c++) dst[c] += src[c];
                    }
                }
            }
    }
}

/* out[B*OH*OW][O] = im2col(in) W[k*k*C][O] + b.  col is scratch of
 * B*OH*OW x k*k*C and keeps im2col(in) for the backward pass. */
static inline void NN_FN(conv_forward)(NN_REAL *out, NN_REAL *col, const NN_REAL *in, const NN_REAL *W,
                                       const NN_REAL *b, int B, const nn_conv_shape *s)
{
    NN_FN(im2col)(col, in, B, s);
    NN_FN(dense_forward)(out, col, W, b, B * s->OH * s->OW, s->k * s->k * s->C, s->O);
}

/* dW += col^T dout, db += column sums; then (if din) col is overwritten by
 * dout W^T and scattered into din. */
static inline void NN_FN(conv_backward)(NN_REAL *din, NN_REAL *dW, NN_REAL *db, const NN_REAL *dout, NN_REAL *col,
                                        const NN_REAL *W, int B, const nn_conv_shape *s)
{
    int rows = B * s->OH * s->OW, K = s->k * s->k * s->C;
    NN_FN(dense_backward)(NULL, dW, db, dout, col, W, rows, K, s->O);
    if (!din) return;
    NN_FN(gemm)(0, 1, rows, K, s->O, 1, dout, s->O, W, s->O, 0, col, K);
    NN_FN(col2im)(din, col, B, s);
}

/* ---- the network ---- */

static inline void NN_FN(net_forward)(const nn_config *c, const size_t *off, const NN_REAL *P, NN_ACTS *a,
                                      const unsigned char *obs, int B)
{
    nn_conv_shape s1, s2;
    nn_conv_shapes(c, &s1, &s2);
    nn_obs_view va = nn_actor_view(c), vc = nn_critic_view(c);
    int feat = c->h2 * c->w2 * c->c2;
    /* actor */
    NN_FN(conv_onehot_forward)(a->c1, obs, &va, P + off[NN_C1W], P + off[NN_C1B], B, &s1);
    NN_FN(relu_forward)(a->c1, (size_t)B * c->h1 * c->w1 * c->c1);
    NN_FN(conv_forward)(a->c2, a->col, a->c1, P + off[NN_C2W], P + off[NN_C2B], B, &s2);
    NN_FN(relu_forward)(a->c2, (size_t)B * feat);
    NN_FN(dense_forward)(a->a1, a->c2, P + off[NN_A1W], P + off[NN_A1B], B, feat, c->actor_hidden);
    NN_FN(relu_forward)(a->a1, (size_t)B * c->actor_hidden);
    NN_FN(dense_forward)(a->logits, a->a1, P + off[NN_A2W], P + off[NN_A2B], B, c->actor_hidden, c->n_actions);
    /* critic */
    NN_FN(dense_onehot_forward)(a->v1, obs, &vc, P + off[NN_V1W], P + off[NN_V1B], B, c->in_ch, c->critic_hidden);
    NN_FN(relu_forward)(a->v1, (size_t)B * c->critic_hidden);
    NN_FN(dense_forward)(a->v2, a->v1, P + off[NN_V2W], P + off[NN_V2B], B, c->critic_hidden, c->critic_hidden);
    NN_FN(relu_forward)(a->v2, (size_t)B * c->critic_hidden);
    NN_FN(dense_forward)(a->value, a->v2, P + off[NN_V3W], P + off[NN_V3B], B, c->critic_hidden, 1);
}

/* From a->dlogits and a->dvalue (B rows), add parameter gradients into G.
 * Overwrites the activation gradients and a->col. */
static inline void NN_FN(net_backward)(const nn_config *c, const size_t *off, const NN_REAL *P, NN_REAL *G,
                                       NN_ACTS *a, const unsigned char *obs, int B)
{
    nn_conv_shape s1, s2;
    nn_conv_shapes(c, &s1, &s2);
    nn_obs_view va = nn_actor_view(c), vc = nn_critic_view(c);
    int feat = c->h2 * c->w2 * c->c2;
    /* actor */
    NN_FN(dense_backward)(a->da1, G + off[NN_A2W], G + off[NN_A2B], a->dlogits, a->a1, P + off[NN_A2W], B,
                          c->actor_hidden, c->n_actions);
    NN_FN(relu_backward)(a->da1, a->a1, (size_t)B * c->actor_hidden);
    NN_FN(dense_backward)(a->dc2, G + off[NN_A1W], G + off[NN_A1B], a->da1, a->c2, P + off[NN_A1W], B, feat,
                          c->actor_hidden);
    NN_FN(relu_backward)(a->dc2, a->c2, (size_t)B * feat);
    NN_FN(conv_backward)(a->dc1, G + off[NN_C2W], G + off[NN_C2B], a->dc2, a->col, P + off[NN_C2W], B, &s2);
    NN_FN(relu_backward)(a->dc1, a->c1, (size_t)B * c->h1 * c->w1 * c->c1);
    NN_FN(conv_onehot_backward)(G + off[NN_C1W], G + off[NN_C1B], a->dc1, obs, &va, B, &s1);
    /* critic */
    NN_FN(dense_backward)(a->dv2, G + off[NN_V3W], G + off[NN_V3B], a->dvalue, a->v2, P + off[NN_V3W], B,
                          c->critic_hidden, 1);
    NN_FN(relu_backward)(a->dv2, a->v2, (size_t)B * c->critic_hidden);
    NN_FN(dense_backward)(a->dv1, G + off[NN_V2W], G + off[NN_V2B], a->dv2, a->v1, P + off[NN_V2W], B,
                          c->critic_hidden, c->critic_hidden);
    NN_FN(relu_backward)(a->dv1, a->v1, (size_t)B * c->critic_hidden);
    NN_FN(dense_onehot_backward)(G + off[NN_V1W], G + off[NN_V1B], a->dv1, obs, &vc, B, c->in_ch, c->critic_hidden);
}

/* ---- PPO loss ----
 * Per sample: log-softmax of the logits, ratio = exp(logp[a] - old_logp),
 * policy loss max(-A ratio, -A clip(ratio, 1-eps, 1+eps)), value loss
 * 0.5 max((v-R)^2, (old_v + clip(v-old_v, -eps, eps) - R)^2), entropy H.
 * Loss = scale * sum (policy + vf_coef value - ent_coef H), scale = 1 / the
 * minibatch size.  Writes dlogits and dvalue; adds the terms' sums (without
 * scale) to stats: policy, value, entropy, approx KL ((r-1) - log r),
 * clipped count.  Returns the loss. */

#define PPO_REAL NN_REAL
#define PPO_FN NN_FN
#include "ppo_loss.h"
#undef PPO_REAL
#undef PPO_FN

static inline double NN_FN(ppo_loss)(const NN_REAL *logits, const NN_REAL *value, const int *act,
                                     const NN_REAL *old_logp, const NN_REAL *adv, const NN_REAL *old_value,
                                     const NN_REAL *ret, int B, int A, double clip_eps, double vf_coef,
                                     double ent_coef, double scale, NN_REAL *dlogits, NN_REAL *dvalue,
                                     nn_loss_stats *st)
{
    double total = 0, t[6];
    for (int n = 0; n < B; n++) {
        NN_FN(ppo_loss_one)(logits + (size_t)n * A, A, act[n], old_logp[n], adv[n], value[n], old_value[n], ret[n],
                            clip_eps, vf_coef, ent_coef, scale, dlogits + (size_t)n * A, dvalue + n, t);
        total += t[0];
        if (st) {
            st->policy += t[1];
            st->value += t[2];
            st->entropy += t[3];
            st->approx_kl += t[4];
            st->clipped += t[5];
        }
    }
    return scale * total;
}
