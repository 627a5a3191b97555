#include "nn.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>
#include <gsl/gsl_cdf.h>
#include "philox.h"

#define NN_REAL float
#define NN_FN(name) name##_f
#define NN_GEMM cblas_sgemm
#define NN_ACTS nn_acts
#include "nn_layers.h"

void openblas_set_num_threads(int num_threads);

/* A window of side v (0: the whole crop) of a crop of side n: centred,
 * so n - v must be even. */
static int view_side(int *v, int n)
{
    if (*v == 0) *v = n;
    return *v > 0 && *v <= n && (n - *v) % 2 == 0 ? 0 : -1;
}

int nn_config_finish(nn_config *c)
{
    if (c->crop_h <= 0 || c->crop_w <= 0 || c->in_ch < 2 || c->n_actions < 2 || c->c1 <= 0 || c->c2 <= 0 ||
        c->k <= 0 || c->stride <= 0 || c->pad < 0 || c->actor_hidden <= 0 || c->critic_hidden <= 0)
        return -1;
    if (view_side(&c->view_h, c->crop_h) || view_side(&c->view_w, c->crop_w) ||
        view_side(&c->critic_view_h, c->crop_h) || view_side(&c->critic_view_w, c->crop_w))
        return -1;
    c->h1 = (c->view_h + 2 * c->pad - c->k) / c->stride + 1;
    c->w1 = (c->view_w + 2 * c->pad - c->k) / c->stride + 1;
    c->h2 = (c->h1 + 2 * c->pad - c->k) / c->stride + 1;
    c->w2 = (c->w1 + 2 * c->pad - c->k) / c->stride + 1;
    return c->h1 > 0 && c->w1 > 0 && c->h2 > 0 && c->w2 > 0 ? 0 : -1;
}

int nn_preset_config(const char *preset, int crop_h, int crop_w, int n_actions, nn_config *c)
{
    memset(c, 0, sizeof *c);
    c->crop_h = crop_h;
    c->crop_w = crop_w;
    c->in_ch = OBS_CHANNELS;
    c->n_actions = n_actions;
    c->k = 7;
    c->stride = 2;
    c->pad = 3;
    if (!strcmp(preset, "paper")) {
        c->c1 = 64, c->c2 = 64, c->actor_hidden = 64, c->critic_hidden = 64;
    } else if (!strcmp(preset, "small")) {
        c->c1 = 16, c->c2 = 16, c->actor_hidden = 64, c->critic_hidden = 64;
    } else if (!strcmp(preset, "tiny")) {
        c->c1 = 16, c->c2 = 16, c->actor_hidden = 32, c->critic_hidden = 32;
        c->k = 3, c->pad = 1;
        c->view_h = crop_h < 5 ? crop_h : 5;
        c->view_w = crop_w < 5 ? crop_w : 5;
        c->critic_view_h = c->view_h, c->critic_view_w = c->view_w;
    } else {
        return -1;
    }
    return nn_config_finish(c);
}

int nn_preset_known(const char *preset)
{
    nn_config c;
    return nn_preset_config(preset, 31, 31, 6, &c) == 0;
}

size_t nn_param_layout(const nn_config *c, size_t *size, size_t *off)
{
    size_t feat = (size_t)c->h2 * c->w2 * c->c2, in = (size_t)c->critic_view_h * c->critic_view_w * c->in_ch;
    size[NN_C1W] = (size_t)c->k * c->k * c->in_ch * c->c1;
    size[NN_C1B] = (size_t)c->c1;
    size[NN_C2W] = (size_t)c->k * c->k * c->c1 * c->c2;
    size[NN_C2B] = (size_t)c->c2;
    size[NN_A1W] = feat * c->actor_hidden;
    size[NN_A1B] = (size_t)c->actor_hidden;
    size[NN_A2W] = (size_t)c->actor_hidden * c->n_actions;
    size[NN_A2B] = (size_t)c->n_actions;
    size[NN_V1W] = in * c->critic_hidden;
    size[NN_V1B] = (size_t)c->critic_hidden;
    size[NN_V2W] = (size_t)c->critic_hidden * c->critic_hidden;
    size[NN_V2B] = (size_t)c->critic_hidden;
    size[NN_V3W] = (size_t)c->critic_hidden;
    size[NN_V3B] = 1;
    size_t total = 0;
    for (int i = 0; i < NN_NTENSORS; i++) {
        off[i] = total;
        total += size[i];
    }
    return total;
}

/* The network's OpenMP regions split every matrix product across threads,
 * each calling OpenBLAS single-threaded; OpenBLAS's own pool would
 * otherwise compete with OpenMP's for the same cores. */
static void blas_single_thread(void)
{
    static int done;
    if (!done) openblas_set_num_threads(1), done = 1;
}

int nn_alloc(nn_t *nn, const nn_config *cfg)
{
    blas_single_thread();
    memset(nn, 0, sizeof *nn);
    nn->cfg = *cfg;
    nn->n_params = nn_param_layout(cfg, nn->size, nn->off);
    nn->params = calloc(nn->n_params, sizeof(float));
    nn->grads = calloc(nn->n_params, sizeof(float));
    if (!nn->params || !nn->grads) {
        nn_free(nn);
        return -1;
    }
    return 0;
}

void nn_free(nn_t *nn)
{
    free(nn->params);
    free(nn->grads);
    memset(nn, 0, sizeof *nn);
}

/* Standard normal from two 32-bit draws (Box-Muller). */
static double gauss(philox_stream *s)
{
    double u1 = ((philox_next(s) >> 8) + 1.0) / 16777217.0, u2 = (philox_next(s) >> 8) / 16777216.0;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* W[rows][cols] = gain * a random matrix with orthonormal columns (rows >=
 * cols) or rows: Gram-Schmidt on a Gaussian matrix, in double. */
static void orthogonal(float *W, int rows, int cols, double gain, philox_stream *s)
{
    int n = rows >= cols ? cols : rows, len = rows >= cols ? rows : cols;
    double *v = malloc(sizeof(double) * (size_t)n * len);
    if (!v) abort();
    for (size_t i = 0; i < (size_t)n * len; i++) v[i] = gauss(s);
    for (int i = 0; i < n; i++) {
        double *vi = v + (size_t)i * len;
        for (int pass = 0; pass < 2; pass++) /* twice for numerical orthogonality */
            for (int j = 0; j < i; j++) {
                double *vj = v + (size_t)j * len, d = 0;
                for (int t = 0; t < len; t++) d += vi[t] * vj[t];
                for (int t = 0; t < len; t++) vi[t] -= d * vj[t];
            }
        double norm = 0;
        for (int t = 0; t < len; t++) norm += vi[t] * vi[t];
        norm = sqrt(norm);
        for (int t = 0; t < len; t++) vi[t] /= norm;
    }
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            W[(size_t)r * cols + c] = (float)(gain * (rows >= cols ? v[(size_t)c * len + r] : v[(size_t)r * len + c]));
    free(v);
}

/* W[n] = a truncated normal scaled to std sqrt(1/fan_in) after the
 * truncation: standard normal draws beyond 2 are drawn again, then scaled
 * by sqrt(1/fan_in) over the truncated law's own std (LeCun normal as
 * Flax's convolutions default to it). */
static void lecun_normal(float *W, size_t n, int fan_in, philox_stream *s)
{
    /* std of N(0,1) restricted to [-2, 2]: its variance is 1 - 2*2*phi(2) / (Phi(2) - Phi(-2)) */
    double mass = gsl_cdf_ugaussian_P(2.0) - gsl_cdf_ugaussian_P(-2.0), phi2 = exp(-2.0) / sqrt(2.0 * M_PI);
    double trunc_std = sqrt(1.0 - 4.0 * phi2 / mass);
    double scale = sqrt(1.0 / fan_in) / trunc_std;
    for (size_t i = 0; i < n; i++) {
        double x;
        do x = gauss(s);
        while (fabs(x) > 2.0);
        W[i] = (float)(scale * x);
    }
}

void nn_init(nn_t *nn, uint64_t seed, int conv_init)
{
    const nn_config *c = &nn->cfg;
    memset(nn->params, 0, sizeof(float) * nn->n_params);
    struct {
        int tensor, fan_out;
        double gain;
    } w[] = {{NN_C1W, c->c1, sqrt(2.0)},         {NN_C2W, c->c2, sqrt(2.0)},
             {NN_A1W, c->actor_hidden, sqrt(2.0)}, {NN_A2W, c->n_actions, 0.01},
             {NN_V1W, c->critic_hidden, sqrt(2.0)}, {NN_V2W, c->critic_hidden, sqrt(2.0)},
             {NN_V3W, 1, 1.0}};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        philox_stream s;
        philox_stream_init(&s, seed, 0x6e6e0000ull + (uint64_t)w[i].tensor, 0);
        size_t size = nn->size[w[i].tensor];
        int fan_in = (int)(size / (size_t)w[i].fan_out);
        int conv = w[i].tensor == NN_C1W || w[i].tensor == NN_C2W;
        if (conv && conv_init == CONV_INIT_LECUN) lecun_normal(nn->params + nn->off[w[i].tensor], size, fan_in, &s);
        else orthogonal(nn->params + nn->off[w[i].tensor], fan_in, w[i].fan_out, w[i].gain, &s);
    }
}

int nn_acts_alloc(nn_acts *a, const nn_config *c, int cap)
{
    memset(a, 0, sizeof *a);
    size_t per[NN_N_ACTS];
    float **ptr[NN_N_ACTS];
    nn_acts_table(c, a, per, ptr);
    size_t total = 0;
    for (size_t i = 0; i < NN_N_ACTS; i++) total += (per[i] * (size_t)cap + 15) & ~(size_t)15;
    a->block = aligned_alloc(64, ((total * sizeof(float)) + 63) & ~(size_t)63);
    if (!a->block) return -1;
    float *p = a->block;
    for (size_t i = 0; i < NN_N_ACTS; i++) {
        *ptr[i] = p;
        p += (per[i] * (size_t)cap + 15) & ~(size_t)15;
    }
    a->cap = cap;
    return 0;
}

void nn_acts_free(nn_acts *a)
{
    free(a->block);
    memset(a, 0, sizeof *a);
}

void nn_forward(const nn_t *nn, nn_acts *a, const unsigned char *obs, int B)
{
    net_forward_f(&nn->cfg, nn->off, nn->params, a, obs, B);
}

void nn_backward(nn_t *nn, nn_acts *a, const unsigned char *obs, int B)
{
    net_backward_f(&nn->cfg, nn->off, nn->params, nn->grads, a, obs, B);
}

double nn_ppo_loss(nn_acts *a, int B, int n_actions, const int *act, const float *old_logp, const float *adv,
                   const float *old_value, const float *ret, double clip_eps, double vf_coef, double ent_coef,
                   double scale, nn_loss_stats *st)
{
    return ppo_loss_f(a->logits, a->value, act, old_logp, adv, old_value, ret, B, n_actions, clip_eps, vf_coef,
                      ent_coef, scale, a->dlogits, a->dvalue, st);
}

void nn_zero_grad(nn_t *nn)
{
    memset(nn->grads, 0, sizeof(float) * nn->n_params);
}

double nn_macs_dense(const nn_config *c)
{
    double in = (double)c->critic_view_h * c->critic_view_w * c->in_ch;
    return (double)c->h1 * c->w1 * c->k * c->k * c->in_ch * c->c1 + (double)c->h2 * c->w2 * c->k * c->k * c->c1 * c->c2 +
           (double)c->h2 * c->w2 * c->c2 * c->actor_hidden + (double)c->actor_hidden * c->n_actions +
           in * c->critic_hidden + (double)c->critic_hidden * c->critic_hidden + c->critic_hidden;
}

double nn_macs_executed(const nn_config *c, double nz)
{
    /* conv 1 gathers nz rows per tap inside its window; conv 2 multiplies its
     * whole im2col matrix, padding included, as the GEMM does */
    double taps = 0;
    for (int oy = 0; oy < c->h1; oy++)
        for (int ky = 0; ky < c->k; ky++) {
            int iy = oy * c->stride - c->pad + ky;
            if (iy >= 0 && iy < c->view_h) taps += 1;
        }
    double taps_x = 0;
    for (int ox = 0; ox < c->w1; ox++)
        for (int kx = 0; kx < c->k; kx++) {
            int ix = ox * c->stride - c->pad + kx;
            if (ix >= 0 && ix < c->view_w) taps_x += 1;
        }
    return taps * taps_x * nz * c->c1 + (double)c->h2 * c->w2 * c->k * c->k * c->c1 * c->c2 +
           (double)c->h2 * c->w2 * c->c2 * c->actor_hidden + (double)c->actor_hidden * c->n_actions +
           (double)c->critic_view_h * c->critic_view_w * nz * c->critic_hidden +
           (double)c->critic_hidden * c->critic_hidden +
           c->critic_hidden;
}

void nn_set_threads(int threads)
{
    blas_single_thread();
    if (threads > 0) omp_set_num_threads(threads);
}
