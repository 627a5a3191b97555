/* Network layers: every backward pass against central finite differences in
 * double precision (the layers compiled for double from host/learn/nn_layers.h),
 * the one-hot gathers against the dense computation, the full PPO loss, and
 * the float network of host/learn/nn.c against the double one. */
#include "harness.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "nn.h"
#include "philox.h"

typedef struct {
    int cap;
    double *c1, *col, *c2, *a1, *logits, *v1, *v2, *value;
    double *dc1, *dc2, *da1, *dlogits, *dv1, *dv2, *dvalue;
} acts_d;

#define NN_REAL double
#define NN_FN(name) name##_d
#define NN_GEMM cblas_dgemm
#define NN_ACTS acts_d
#include "nn_layers.h"
#undef NN_REAL
#undef NN_FN
#undef NN_GEMM
#undef NN_ACTS
#define NN_REAL float
#define NN_FN(name) name##_tf
#define NN_GEMM cblas_sgemm
#define NN_ACTS nn_acts
#include "nn_layers.h"

static philox_stream rng;

static double urand(void) /* [-1, 1) */
{
    return philox_unit(philox_next(&rng)) * 2.0 - 1.0;
}

static double *rand_vec(size_t n)
{
    double *v = malloc(n * sizeof(double));
    assert_non_null(v);
    for (size_t i = 0; i < n; i++) v[i] = urand();
    return v;
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* Random compact observations: tiles 0..9, some frozen. */
static unsigned char *rand_obs(int B, int cells)
{
    unsigned char *o = malloc((size_t)B * cells);
    assert_non_null(o);
    for (int i = 0; i < B * cells; i++) {
        pcg_u32 r = philox_next(&rng);
        o[i] = (unsigned char)(philox_below(r, N_TILES) | ((r & 0xff) < 80 ? OBS_FROZEN_BIT : 0));
    }
    return o;
}

static double *onehot(const unsigned char *obs, int B, int cells, int C)
{
    double *x = calloc((size_t)B * cells * C, sizeof(double));
    assert_non_null(x);
    for (int i = 0; i < B * cells; i++) {
        x[(size_t)i * C + (obs[i] & OBS_TILE_MASK)] = 1;
        if (obs[i] & OBS_FROZEN_BIT) x[(size_t)i * C + C - 1] = 1;
    }
    return x;
}

/* Check analytic gradient g of f over the n entries of x with central
 * differences; f is a closure over x. */
typedef double (*scalar_fn)(void *ctx);
static void check_grad(const char *what, double *x, const double *g, size_t n, scalar_fn f, void *ctx)
{
    const double h = 1e-6;
    double worst = 0;
    size_t step = n > 400 ? n / 400 : 1; /* at most ~400 probes per tensor */
    for (size_t i = 0; i < n; i += step) {
        double keep = x[i];
        x[i] = keep + h;
        double fp = f(ctx);
        x[i] = keep - h;
        double fm = f(ctx);
        x[i] = keep;
        double fd = (fp - fm) / (2 * h);
        double err = fabs(fd - g[i]) / fmax(1e-4, fabs(fd) + fabs(g[i]));
        if (err > worst) worst = err;
        if (err > 1e-5) {
            print_error("%s[%zu]: analytic %.9g, finite difference %.9g\n", what, i, g[i], fd);
            fail();
        }
    }
    (void)worst;
}

/* ---- dense ---- */

typedef struct {
    int B, In, O;
    double *in, *W, *b, *out, *gout;
} dense_ctx;

static double dense_loss(void *p)
{
    dense_ctx *c = p;
    dense_forward_d(c->out, c->in, c->W, c->b, c->B, c->In, c->O);
    return dot(c->out, c->gout, (size_t)c->B * c->O);
}

static void nn_dense_grad(void **state)
{
    (void)state;
    philox_stream_init(&rng, 1, 0, 0);
    dense_ctx c = {5, 7, 3, NULL, NULL, NULL, NULL, NULL};
    c.in = rand_vec(35), c.W = rand_vec(21), c.b = rand_vec(3), c.out = rand_vec(15), c.gout = rand_vec(15);
    double *din = calloc(35, sizeof(double)), *dW = calloc(21, sizeof(double)), *db = calloc(3, sizeof(double));
    dense_forward_d(c.out, c.in, c.W, c.b, c.B, c.In, c.O);
    dense_backward_d(din, dW, db, c.gout, c.in, c.W, c.B, c.In, c.O);
    check_grad("dense din", c.in, din, 35, dense_loss, &c);
    check_grad("dense dW", c.W, dW, 21, dense_loss, &c);
    check_grad("dense db", c.b, db, 3, dense_loss, &c);
    free(c.in), free(c.W), free(c.b), free(c.out), free(c.gout), free(din), free(dW), free(db);
}

/* ---- relu ---- */

typedef struct {
    size_t n;
    double *x, *y, *g;
} relu_ctx;

static double relu_loss(void *p)
{
    relu_ctx *c = p;
    memcpy(c->y, c->x, c->n * sizeof(double));
    relu_forward_d(c->y, c->n);
    return dot(c->y, c->g, c->n);
}

static void nn_relu_grad(void **state)
{
    (void)state;
    philox_stream_init(&rng, 2, 0, 0);
    relu_ctx c = {64, rand_vec(64), rand_vec(64), rand_vec(64)};
    double *dx = malloc(64 * sizeof(double));
    relu_loss(&c);
    memcpy(dx, c.g, 64 * sizeof(double));
    relu_backward_d(dx, c.y, 64);
    int zeros = 0;
    for (int i = 0; i < 64; i++) zeros += dx[i] == 0;
    assert_true(zeros > 10 && zeros < 54); /* both sides of the kink probed */
    check_grad("relu dx", c.x, dx, 64, relu_loss, &c);
    free(c.x), free(c.y), free(c.g), free(dx);
}

/* ---- im2col convolution ---- */

typedef struct {
    int B;
    nn_conv_shape s;
    double *in, *W, *b, *out, *col, *gout;
} conv_ctx;

static double conv_loss(void *p)
{
    conv_ctx *c = p;
    conv_forward_d(c->out, c->col, c->in, c->W, c->b, c->B, &c->s);
    return dot(c->out, c->gout, (size_t)c->B * c->s.OH * c->s.OW * c->s.O);
}

static void nn_conv_grad(void **state)
{
    (void)state;
    philox_stream_init(&rng, 3, 0, 0);
    /* 7x7x3 input, 3x3 kernel, stride 2, pad 1 -> 4x4x4 */
    conv_ctx c = {2, {7, 7, 3, 3, 2, 1, 4, 4, 4}, NULL, NULL, NULL, NULL, NULL, NULL};
    size_t nin = 2 * 7 * 7 * 3, nw = 9 * 3 * 4, nout = 2 * 16 * 4;
    c.in = rand_vec(nin), c.W = rand_vec(nw), c.b = rand_vec(4), c.out = rand_vec(nout), c.gout = rand_vec(nout);
    c.col = malloc(sizeof(double) * 2 * 16 * 27);
    double *din = calloc(nin, sizeof(double)), *dW = calloc(nw, sizeof(double)), *db = calloc(4, sizeof(double));
    conv_loss(&c);
    conv_backward_d(din, dW, db, c.gout, c.col, c.W, c.B, &c.s);
    check_grad("conv din", c.in, din, nin, conv_loss, &c);
    check_grad("conv dW", c.W, dW, nw, conv_loss, &c);
    check_grad("conv db", c.b, db, 4, conv_loss, &c);
    /* the direct definition at one output: sum over taps inside the input */
    conv_loss(&c);
    int n = 1, oy = 0, ox = 3, o = 2;
    double want = c.b[o];
    for (int ky = 0; ky < 3; ky++)
        for (int kx = 0; kx < 3; kx++) {
            int iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
            if (iy < 0 || ix < 0 || iy >= 7 || ix >= 7) continue;
            for (int ch = 0; ch < 3; ch++)
                want += c.in[((n * 7 + iy) * 7 + ix) * 3 + ch] * c.W[((ky * 3 + kx) * 3 + ch) * 4 + o];
        }
    assert_true(fabs(c.out[((n * 4 + oy) * 4 + ox) * 4 + o] - want) < 1e-12);
    free(c.in), free(c.W), free(c.b), free(c.out), free(c.gout), free(c.col), free(din), free(dW), free(db);
}

/* ---- one-hot gathers ---- */

typedef struct {
    int B;
    nn_conv_shape s; /* s.H x s.W: the window */
    nn_obs_view v;
    const unsigned char *obs;
    double *W, *b, *out, *gout;
    int dense; /* 1: dense_onehot, 0: conv_onehot */
} oh_ctx;

static double oh_loss(void *p)
{
    oh_ctx *c = p;
    size_t nout;
    if (c->dense) {
        dense_onehot_forward_d(c->out, c->obs, &c->v, c->W, c->b, c->B, c->s.C, c->s.O);
        nout = (size_t)c->B * c->s.O;
    } else {
        conv_onehot_forward_d(c->out, c->obs, &c->v, c->W, c->b, c->B, &c->s);
        nout = (size_t)c->B * c->s.OH * c->s.OW * c->s.O;
    }
    return dot(c->out, c->gout, nout);
}

/* The centred h x w window of B observations of side n x n (a view of
 * the whole observation when h = w = n), and those windows copied out. */
static nn_obs_view centred(int n, int h, int w)
{
    nn_config c = {0};
    c.crop_h = c.crop_w = n;
    return nn_centred_view(&c, h, w);
}

static unsigned char *window_copy(const unsigned char *obs, int B, const nn_obs_view *v)
{
    unsigned char *o = malloc((size_t)B * v->h * v->w);
    assert_non_null(o);
    for (int n = 0; n < B; n++)
        for (int r = 0; r < v->h; r++)
            memcpy(o + ((size_t)n * v->h + r) * v->w, obs + (size_t)n * v->size + v->off + r * v->ld, (size_t)v->w);
    return o;
}

/* conv_onehot on the 9x9 window of observations of side n (9: the whole
 * observation): finite differences, and the dense convolution of the
 * window's one-hot tensor. */
static void conv_onehot_case(int n, const nn_conv_shape *shape)
{
    const int C = OBS_CHANNELS, B = 3;
    oh_ctx c = {B, *shape, centred(n, shape->H, shape->W), NULL, NULL, NULL, NULL, NULL, 0};
    unsigned char *obs = rand_obs(B, n * n);
    c.obs = obs;
    int cells = c.s.H * c.s.W, O = c.s.O, taps = c.s.k * c.s.k, pos = c.s.OH * c.s.OW;
    size_t nw = (size_t)taps * C * O, nout = (size_t)B * pos * O;
    c.W = rand_vec(nw), c.b = rand_vec(O), c.out = rand_vec(nout), c.gout = rand_vec(nout);
    double *dW = calloc(nw, sizeof(double)), *db = calloc(O, sizeof(double));
    oh_loss(&c);
    /* equal to the dense convolution of the window's one-hot tensor */
    unsigned char *win = window_copy(obs, B, &c.v);
    double *x = onehot(win, B, cells, C), *ref = malloc(nout * sizeof(double));
    double *col = malloc(sizeof(double) * (size_t)B * pos * taps * C);
    conv_forward_d(ref, col, x, c.W, c.b, B, &c.s);
    for (size_t i = 0; i < nout; i++) assert_true(fabs(ref[i] - c.out[i]) < 1e-12);
    conv_onehot_backward_d(dW, db, c.gout, obs, &c.v, B, &c.s);
    check_grad("conv_onehot dW", c.W, dW, nw, oh_loss, &c);
    check_grad("conv_onehot db", c.b, db, (size_t)O, oh_loss, &c);
    /* and its weight gradient equals the dense backward's */
    double *dW2 = calloc(nw, sizeof(double)), *db2 = calloc((size_t)O, sizeof(double));
    conv_backward_d(NULL, dW2, db2, c.gout, col, c.W, B, &c.s);
    for (size_t i = 0; i < nw; i++) assert_true(fabs(dW2[i] - dW[i]) < 1e-12);
    free(obs), free(win), free(c.W), free(c.b), free(c.out), free(c.gout), free(dW), free(db), free(x), free(ref);
    free(col), free(dW2), free(db2);
}

static void nn_conv_onehot_grad_and_dense_equal(void **state)
{
    (void)state;
    philox_stream_init(&rng, 4, 0, 0);
    /* the paper's kernel (7x7, stride 2, pad 3), and the tiny preset's
     * (3x3, stride 2, pad 1), each on a whole 9x9 observation and on the
     * 9x9 window of a 15x15 one */
    nn_conv_shape k7 = {9, 9, OBS_CHANNELS, 7, 2, 3, 5, 5, 6}, k3 = {9, 9, OBS_CHANNELS, 3, 2, 1, 5, 5, 6};
    conv_onehot_case(9, &k7);
    conv_onehot_case(15, &k7);
    conv_onehot_case(9, &k3);
    conv_onehot_case(15, &k3);
}

/* dense_onehot on the 5x5 window of observations of side n. */
static void dense_onehot_case(int n)
{
    const int C = OBS_CHANNELS, cells = 25, O = 5, B = 4;
    oh_ctx c = {B, {5, 5, C, 0, 0, 0, 0, 0, O}, centred(n, 5, 5), NULL, NULL, NULL, NULL, NULL, 1};
    unsigned char *obs = rand_obs(B, n * n);
    c.obs = obs;
    size_t nw = (size_t)cells * C * O;
    c.W = rand_vec(nw), c.b = rand_vec(O), c.out = rand_vec(B * O), c.gout = rand_vec(B * O);
    double *dW = calloc(nw, sizeof(double)), *db = calloc(O, sizeof(double));
    oh_loss(&c);
    unsigned char *win = window_copy(obs, B, &c.v);
    double *x = onehot(win, B, cells, C), ref[20];
    dense_forward_d(ref, x, c.W, c.b, B, cells * C, O);
    for (int i = 0; i < B * O; i++) assert_true(fabs(ref[i] - c.out[i]) < 1e-12);
    dense_onehot_backward_d(dW, db, c.gout, obs, &c.v, B, C, O);
    check_grad("dense_onehot dW", c.W, dW, nw, oh_loss, &c);
    check_grad("dense_onehot db", c.b, db, O, oh_loss, &c);
    /* and its weight gradient equals the dense backward's */
    double *dW2 = calloc(nw, sizeof(double)), db2[5] = {0};
    dense_backward_d(NULL, dW2, db2, c.gout, x, c.W, B, cells * C, O);
    for (size_t i = 0; i < nw; i++) assert_true(fabs(dW2[i] - dW[i]) < 1e-12);
    free(obs), free(win), free(c.W), free(c.b), free(c.out), free(c.gout), free(dW), free(db), free(x), free(dW2);
}

static void nn_dense_onehot_grad_and_dense_equal(void **state)
{
    (void)state;
    philox_stream_init(&rng, 5, 0, 0);
    dense_onehot_case(5); /* the whole observation */
    dense_onehot_case(9); /* its centre */
    dense_onehot_case(11);
}

/* The float gathers on a preset's real shapes (16x16 maps) equal the float
 * dense computation on the one-hot tensor of the window each reads. */
static void gather_equals_dense(const char *preset)
{
    nn_config nc;
    assert_int_equal(nn_preset_config(preset, 31, 31, 6, &nc), 0);
    nn_t nn;
    assert_int_equal(nn_alloc(&nn, &nc), 0);
    nn_init(&nn, 11, CONV_INIT_LECUN);
    philox_stream_init(&rng, 6, 0, 0);
    int B = 2, C = nc.in_ch, O = nc.critic_hidden;
    unsigned char *obs = rand_obs(B, 31 * 31);
    nn_obs_view va = nn_actor_view(&nc), vc = nn_critic_view(&nc);
    nn_conv_shape s1, s2;
    nn_conv_shapes(&nc, &s1, &s2);
    /* conv 1 */
    int cells = va.h * va.w;
    unsigned char *win = window_copy(obs, B, &va);
    double *xd = onehot(win, B, cells, C);
    float *x = malloc(sizeof(float) * (size_t)B * cells * C);
    for (size_t i = 0; i < (size_t)B * cells * C; i++) x[i] = (float)xd[i];
    size_t n1 = (size_t)B * s1.OH * s1.OW * s1.O;
    float *g = malloc(sizeof(float) * n1), *r = malloc(sizeof(float) * n1);
    float *col = malloc(sizeof(float) * (size_t)B * s1.OH * s1.OW * s1.k * s1.k * C);
    conv_onehot_forward_tf(g, obs, &va, nn.params + nn.off[NN_C1W], nn.params + nn.off[NN_C1B], B, &s1);
    conv_forward_tf(r, col, x, nn.params + nn.off[NN_C1W], nn.params + nn.off[NN_C1B], B, &s1);
    for (size_t i = 0; i < n1; i++) assert_true(fabsf(g[i] - r[i]) <= 1e-5f * (1 + fabsf(r[i])));
    free(win), free(xd), free(x);
    /* the critic's first layer */
    cells = vc.h * vc.w;
    win = window_copy(obs, B, &vc);
    xd = onehot(win, B, cells, C);
    x = malloc(sizeof(float) * (size_t)B * cells * C);
    for (size_t i = 0; i < (size_t)B * cells * C; i++) x[i] = (float)xd[i];
    float *gv = malloc(sizeof(float) * (size_t)B * O), *rv = malloc(sizeof(float) * (size_t)B * O);
    dense_onehot_forward_tf(gv, obs, &vc, nn.params + nn.off[NN_V1W], nn.params + nn.off[NN_V1B], B, C, O);
    dense_forward_tf(rv, x, nn.params + nn.off[NN_V1W], nn.params + nn.off[NN_V1B], B, cells * C, O);
    for (int i = 0; i < B * O; i++) assert_true(fabsf(gv[i] - rv[i]) <= 1e-5f * (1 + fabsf(rv[i])));
    free(obs), free(win), free(xd), free(x), free(g), free(r), free(col), free(gv), free(rv);
    nn_free(&nn);
}

static void nn_onehot_gather_equals_dense_paper(void **state)
{
    (void)state;
    gather_equals_dense("paper");
}

static void nn_onehot_gather_equals_dense_tiny(void **state)
{
    (void)state;
    gather_equals_dense("tiny");
}

/* ---- the whole network and the PPO loss ---- */

/* A small network on 7x7 observations; windowed: on 11x11 observations,
 * conv 1 reading the centre 7x7 and the critic the centre 5x3 (as the
 * tiny preset reads a window of the crop). */
static nn_config net_config(int windowed)
{
    nn_config c = {0};
    c.crop_h = 7, c.crop_w = 7, c.in_ch = OBS_CHANNELS, c.n_actions = 4;
    c.c1 = 3, c.c2 = 4, c.k = 3, c.stride = 2, c.pad = 1, c.actor_hidden = 5, c.critic_hidden = 6;
    if (windowed) {
        c.crop_h = 11, c.crop_w = 11;
        c.view_h = 7, c.view_w = 7, c.critic_view_h = 5, c.critic_view_w = 3;
    }
    assert_int_equal(nn_config_finish(&c), 0);
    return c;
}

static void acts_d_alloc(acts_d *a, const nn_config *c, int B)
{
    size_t n1 = (size_t)B * c->h1 * c->w1 * c->c1, n2 = (size_t)B * c->h2 * c->w2 * c->c2;
    a->cap = B;
    a->c1 = calloc(n1, sizeof(double)), a->dc1 = calloc(n1, sizeof(double));
    a->col = calloc((size_t)B * c->h2 * c->w2 * c->k * c->k * c->c1, sizeof(double));
    a->c2 = calloc(n2, sizeof(double)), a->dc2 = calloc(n2, sizeof(double));
    a->a1 = calloc((size_t)B * c->actor_hidden, sizeof(double));
    a->da1 = calloc((size_t)B * c->actor_hidden, sizeof(double));
    a->logits = calloc((size_t)B * c->n_actions, sizeof(double));
    a->dlogits = calloc((size_t)B * c->n_actions, sizeof(double));
    a->v1 = calloc((size_t)B * c->critic_hidden, sizeof(double));
    a->dv1 = calloc((size_t)B * c->critic_hidden, sizeof(double));
    a->v2 = calloc((size_t)B * c->critic_hidden, sizeof(double));
    a->dv2 = calloc((size_t)B * c->critic_hidden, sizeof(double));
    a->value = calloc((size_t)B, sizeof(double)), a->dvalue = calloc((size_t)B, sizeof(double));
}

static void acts_d_free(acts_d *a)
{
    double *p[] = {a->c1, a->dc1, a->col, a->c2, a->dc2, a->a1, a->da1, a->logits, a->dlogits, a->v1, a->dv1,
                   a->v2, a->dv2, a->value, a->dvalue};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
}

typedef struct {
    nn_config cfg;
    size_t size[NN_NTENSORS], off[NN_NTENSORS], n;
    double *P;
    acts_d a;
    const unsigned char *obs;
    int B;
    /* PPO batch */
    int act[8];
    double old_logp[8], adv[8], old_value[8], ret[8];
    double *dlog_scratch, *dval_scratch;
} net_ctx;

static double net_ppo_loss(void *p)
{
    net_ctx *c = p;
    net_forward_d(&c->cfg, c->off, c->P, &c->a, c->obs, c->B);
    return ppo_loss_d(c->a.logits, c->a.value, c->act, c->old_logp, c->adv, c->old_value, c->ret, c->B,
                      c->cfg.n_actions, 0.2, 0.5, 0.01, 1.0 / c->B, c->dlog_scratch, c->dval_scratch, NULL);
}

static void net_setup(net_ctx *c, int B, uint64_t seed, int windowed)
{
    philox_stream_init(&rng, seed, 0, 0);
    c->cfg = net_config(windowed);
    c->n = nn_param_layout(&c->cfg, c->size, c->off);
    c->P = rand_vec(c->n);
    for (size_t i = 0; i < c->n; i++) c->P[i] *= 0.5;
    c->B = B;
    c->obs = rand_obs(B, c->cfg.crop_h * c->cfg.crop_w);
    acts_d_alloc(&c->a, &c->cfg, B);
    c->dlog_scratch = calloc((size_t)B * c->cfg.n_actions, sizeof(double));
    c->dval_scratch = calloc((size_t)B, sizeof(double));
}

static void net_teardown(net_ctx *c)
{
    free(c->P), free((void *)c->obs), free(c->dlog_scratch), free(c->dval_scratch);
    acts_d_free(&c->a);
}

/* The full PPO loss (policy, value, entropy) through the whole network,
 * for every parameter tensor; the batch mixes clipped and unclipped
 * ratios and value updates.  On the whole observation, and on windows of
 * it as the tiny preset reads. */
static void full_ppo_loss_grad(int windowed)
{
    net_ctx c;
    int B = 8;
    net_setup(&c, B, 7, windowed);
    net_forward_d(&c.cfg, c.off, c.P, &c.a, c.obs, B);
    int clipped = 0, vclipped = 0;
    for (int n = 0; n < B; n++) {
        c.act[n] = n % c.cfg.n_actions;
        double *z = c.a.logits + n * c.cfg.n_actions, mx = z[0], s = 0;
        for (int j = 1; j < c.cfg.n_actions; j++) mx = fmax(mx, z[j]);
        for (int j = 0; j < c.cfg.n_actions; j++) s += exp(z[j] - mx);
        double logp = z[c.act[n]] - mx - log(s);
        /* ratios 1.0..~1.7 and ~0.6: some inside the clip range, some out */
        double shift[8] = {0.05, -0.5, 0.1, 0.35, -0.1, 0.6, -0.3, 0.0};
        c.old_logp[n] = logp - shift[n];
        c.adv[n] = n % 2 ? 1.3 : -0.7;
        c.old_value[n] = c.a.value[n] + (n % 3 == 0 ? 0.5 : 0.05);
        c.ret[n] = c.a.value[n] + urand();
        clipped += fabs(exp(shift[n]) - 1) > 0.2;
        vclipped += fabs(c.a.value[n] - c.old_value[n]) > 0.2;
    }
    assert_true(clipped >= 2 && clipped <= 6);
    assert_true(vclipped >= 2 && vclipped <= 6);
    nn_loss_stats st = {0};
    ppo_loss_d(c.a.logits, c.a.value, c.act, c.old_logp, c.adv, c.old_value, c.ret, B, c.cfg.n_actions, 0.2, 0.5,
               0.01, 1.0 / B, c.a.dlogits, c.a.dvalue, &st);
    assert_true(st.entropy > 0 && st.clipped == clipped);
    double *G = calloc(c.n, sizeof(double));
    net_backward_d(&c.cfg, c.off, c.P, G, &c.a, c.obs, B);
    const char *names[NN_NTENSORS] = {"c1w", "c1b", "c2w", "c2b", "a1w", "a1b", "a2w",
                                      "a2b", "v1w", "v1b", "v2w", "v2b", "v3w", "v3b"};
    for (int t = 0; t < NN_NTENSORS; t++) {
        double norm = 0;
        for (size_t i = 0; i < c.size[t]; i++) norm += fabs(G[c.off[t] + i]);
        assert_true(norm > 0); /* every tensor gets a gradient */
        check_grad(names[t], c.P + c.off[t], G + c.off[t], c.size[t], net_ppo_loss, &c);
    }
    free(G);
    net_teardown(&c);
}

static void nn_full_ppo_loss_grad(void **state)
{
    (void)state;
    full_ppo_loss_grad(0);
    full_ppo_loss_grad(1);
}

/* The PPO loss alone with respect to logits and values, with each term
 * switched on by itself. */
typedef struct {
    int B, A, act[6];
    double logits[24], value[6], old_logp[6], adv[6], old_value[6], ret[6];
    double vf, ent, dl[24], dv[6];
} loss_ctx;

static double loss_only(void *p)
{
    loss_ctx *c = p;
    double dl[24], dv[6];
    return ppo_loss_d(c->logits, c->value, c->act, c->old_logp, c->adv, c->old_value, c->ret, c->B, c->A, 0.2,
                      c->vf, c->ent, 1.0 / c->B, dl, dv, NULL);
}

static void nn_ppo_loss_terms_grad(void **state)
{
    (void)state;
    philox_stream_init(&rng, 8, 0, 0);
    loss_ctx c = {6, 4, {0, 1, 2, 3, 1, 2}, {0}, {0}, {0}, {0}, {0}, {0}, 0, 0, {0}, {0}};
    for (int i = 0; i < 24; i++) c.logits[i] = 2 * urand();
    for (int n = 0; n < 6; n++) {
        c.value[n] = urand();
        c.old_logp[n] = log(0.25) + 0.6 * urand();
        c.adv[n] = urand();
        c.old_value[n] = c.value[n] + 0.4 * urand();
        c.ret[n] = 2 * urand();
    }
    double coefs[3][2] = {{0, 0}, {0.5, 0}, {0, 0.01}}; /* policy only, + value, + entropy */
    for (int k = 0; k < 3; k++) {
        c.vf = coefs[k][0], c.ent = coefs[k][1];
        ppo_loss_d(c.logits, c.value, c.act, c.old_logp, c.adv, c.old_value, c.ret, c.B, c.A, 0.2, c.vf, c.ent,
                   1.0 / c.B, c.dl, c.dv, NULL);
        check_grad("ppo dlogits", c.logits, c.dl, 24, loss_only, &c);
        check_grad("ppo dvalue", c.value, c.dv, 6, loss_only, &c);
    }
    /* entropy alone: -ent * H of uniform logits is -ent * log A, gradient 0 */
    for (int i = 0; i < 24; i++) c.logits[i] = 0.3;
    for (int n = 0; n < 6; n++) c.adv[n] = 0, c.old_logp[n] = log(0.25);
    double L = ppo_loss_d(c.logits, c.value, c.act, c.old_logp, c.adv, c.old_value, c.ret, c.B, c.A, 0.2, 0, 1.0,
                          1.0 / c.B, c.dl, c.dv, NULL);
    assert_true(fabs(L + log(4.0)) < 1e-12);
    for (int i = 0; i < 24; i++) assert_true(fabs(c.dl[i]) < 1e-12);
}

/* The float network of nn.c agrees with the double one on the same
 * parameters (forward and gradients). */
static void float_matches_double(int windowed)
{
    net_ctx c;
    int B = 5;
    net_setup(&c, B, 9, windowed);
    nn_t nn;
    assert_int_equal(nn_alloc(&nn, &c.cfg), 0);
    assert_int_equal((int)nn.n_params, (int)c.n);
    for (size_t i = 0; i < c.n; i++) nn.params[i] = (float)c.P[i];
    for (size_t i = 0; i < c.n; i++) c.P[i] = nn.params[i];
    nn_acts a;
    assert_int_equal(nn_acts_alloc(&a, &c.cfg, B), 0);
    nn_forward(&nn, &a, c.obs, B);
    net_forward_d(&c.cfg, c.off, c.P, &c.a, c.obs, B);
    for (int i = 0; i < B * c.cfg.n_actions; i++) assert_true(fabs(a.logits[i] - c.a.logits[i]) < 1e-4);
    for (int i = 0; i < B; i++) assert_true(fabs(a.value[i] - c.a.value[i]) < 1e-4);
    for (int i = 0; i < B * c.cfg.n_actions; i++) a.dlogits[i] = (float)(c.a.dlogits[i] = urand());
    for (int i = 0; i < B; i++) a.dvalue[i] = (float)(c.a.dvalue[i] = urand());
    nn_zero_grad(&nn);
    nn_backward(&nn, &a, c.obs, B);
    double *G = calloc(c.n, sizeof(double));
    net_backward_d(&c.cfg, c.off, c.P, G, &c.a, c.obs, B);
    for (size_t i = 0; i < c.n; i++) assert_true(fabs(nn.grads[i] - G[i]) < 1e-4 * (1 + fabs(G[i])));
    free(G);
    nn_acts_free(&a);
    nn_free(&nn);
    net_teardown(&c);
}

static void nn_float_matches_double(void **state)
{
    (void)state;
    float_matches_double(0);
    float_matches_double(1);
}

/* Presets: the paper's and tiny's shapes and sizes; the orthogonal init's
 * gains. */
static void nn_presets_and_init(void **state)
{
    (void)state;
    nn_config p, s;
    assert_int_equal(nn_preset_config("paper", 31, 31, 6, &p), 0);
    assert_int_equal(nn_preset_config("small", 31, 31, 6, &s), 0);
    assert_int_equal(nn_preset_config("huge", 31, 31, 6, &s) , -1);
    assert_int_equal(nn_preset_config("small", 31, 31, 6, &s), 0);
    assert_int_equal(p.h1, 16), assert_int_equal(p.h2, 8);
    assert_int_equal(p.h2 * p.w2 * p.c2, 4096);
    assert_true(p.view_h == 31 && p.view_w == 31 && p.critic_view_h == 31 && s.critic_view_w == 31); /* whole crop */
    size_t size[NN_NTENSORS], off[NN_NTENSORS];
    size_t n = nn_param_layout(&p, size, off);
    assert_int_equal((int)size[NN_C1W], 7 * 7 * 11 * 64);
    assert_int_equal((int)size[NN_C2W], 7 * 7 * 64 * 64);
    assert_int_equal((int)size[NN_A1W], 4096 * 64);
    assert_int_equal((int)size[NN_V1W], 31 * 31 * 11 * 64);
    assert_int_equal((int)n, (int)(off[NN_V3B] + 1));
    /* the paper's forward cost, 22M multiply-adds with 10 channels; 11 here
     * (docs/method.md#network-and-ppo) */
    double macs = nn_macs_dense(&p);
    assert_true(macs > 22e6 && macs < 24e6);
    assert_true(nn_macs_executed(&p, 1.3) < 0.7 * macs);
    assert_true(nn_macs_dense(&s) < 0.2 * macs);
    /* tiny: 3x3 convolutions on the 5x5 window around the agent's cell
     * (5 -> 3 -> 2), the critic on the same window */
    nn_config t;
    assert_int_equal(nn_preset_config("tiny", 31, 31, 6, &t), 0);
    assert_true(t.crop_h == 31 && t.view_h == 5 && t.view_w == 5 && t.critic_view_h == 5 && t.critic_view_w == 5);
    assert_true(t.k == 3 && t.stride == 2 && t.pad == 1 && t.h1 == 3 && t.h2 == 2);
    n = nn_param_layout(&t, size, off);
    assert_int_equal((int)size[NN_C1W], 3 * 3 * 11 * 16);
    assert_int_equal((int)size[NN_A1W], 2 * 2 * 16 * 32);
    assert_int_equal((int)size[NN_V1W], 5 * 5 * 11 * 32);
    assert_int_equal((int)n, 16119);
    assert_true(nn_macs_dense(&t) < 0.002 * macs);
    nn_obs_view v = nn_actor_view(&t);
    assert_true(v.off == 13 * 31 + 13 && v.ld == 31 && v.size == 961); /* centred on cell (15, 15) */
    /* small and oblong maps: the window stays centred and within the crop */
    assert_int_equal(nn_preset_config("tiny", 9, 9, 6, &t), 0);
    assert_true(t.view_h == 5 && nn_actor_view(&t).off == 2 * 9 + 2);
    assert_int_equal(nn_preset_config("tiny", 31, 15, 7, &t), 0);
    assert_true(t.view_h == 5 && t.view_w == 5 && nn_critic_view(&t).off == 13 * 15 + 5);
    /* windows must be odd and fit the crop */
    t.view_h = 8;
    assert_int_equal(nn_config_finish(&t), -1);
    t.view_h = 33;
    assert_int_equal(nn_config_finish(&t), -1);
    nn_t nn;
    assert_int_equal(nn_alloc(&nn, &p), 0);
    nn_init(&nn, 3, CONV_INIT_ORTHOGONAL); /* every layer orthogonal: the convolutions too */
    struct {
        int t, cols;
        double gain;
    } w[] = {{NN_C1W, 64, sqrt(2.0)}, {NN_C2W, 64, sqrt(2.0)}, {NN_A2W, 6, 0.01}, {NN_V3W, 1, 1.0}, {NN_V2W, 64, sqrt(2.0)}};
    for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) {
        const float *W = nn.params + nn.off[w[k].t];
        int rows = (int)(nn.size[w[k].t] / (size_t)w[k].cols);
        for (int i = 0; i < w[k].cols; i++)
            for (int j = 0; j < w[k].cols; j++) {
                double d = 0;
                for (int r = 0; r < rows; r++) d += (double)W[r * w[k].cols + i] * W[r * w[k].cols + j];
                double want = i == j ? w[k].gain * w[k].gain : 0;
                assert_true(fabs(d - want) < 1e-4 * w[k].gain * w[k].gain + 1e-6);
            }
    }
    for (size_t i = 0; i < nn.size[NN_C1B]; i++) assert_true(nn.params[nn.off[NN_C1B] + i] == 0);
    /* deterministic in the seed, different across seeds */
    nn_t nn2;
    assert_int_equal(nn_alloc(&nn2, &p), 0);
    nn_init(&nn2, 3, CONV_INIT_ORTHOGONAL);
    assert_memory_equal(nn.params, nn2.params, nn.n_params * sizeof(float));
    nn_init(&nn2, 4, CONV_INIT_ORTHOGONAL);
    assert_true(memcmp(nn.params, nn2.params, nn.n_params * sizeof(float)) != 0);
    nn_free(&nn);
    nn_free(&nn2);
}

/* Mean and standard deviation of n floats, and the largest magnitude. */
static void moments(const float *w, size_t n, double *mean, double *sd, double *largest)
{
    double s = 0, ss = 0, m = 0;
    for (size_t i = 0; i < n; i++) s += w[i], m = fmax(m, fabs((double)w[i]));
    *mean = s / (double)n;
    for (size_t i = 0; i < n; i++) ss += (w[i] - *mean) * (w[i] - *mean);
    *sd = sqrt(ss / (double)n);
    *largest = m;
}

/* The reference's convolutions start LeCun normal: mean 0, std
 * sqrt(1/fan_in) with fan_in = 7*7*in channels, nothing beyond the
 * truncation at 2 std of the untruncated law, zero biases; the dense
 * layers are the same orthogonal matrices under either conv init. */
static void nn_conv_init_lecun(void **state)
{
    (void)state;
    nn_config p;
    assert_int_equal(nn_preset_config("paper", 31, 31, 6, &p), 0);
    nn_t lecun, orth;
    assert_int_equal(nn_alloc(&lecun, &p), 0);
    assert_int_equal(nn_alloc(&orth, &p), 0);
    nn_init(&lecun, 5, CONV_INIT_LECUN);
    nn_init(&orth, 5, CONV_INIT_ORTHOGONAL);
    struct {
        int t, fan_in;
    } conv[] = {{NN_C1W, 7 * 7 * p.in_ch}, {NN_C2W, 7 * 7 * p.c1}};
    for (int k = 0; k < 2; k++) {
        size_t n = lecun.size[conv[k].t];
        assert_int_equal((int)(n / (size_t)(k ? p.c2 : p.c1)), conv[k].fan_in);
        double mean, sd, largest, want = sqrt(1.0 / conv[k].fan_in);
        moments(lecun.params + lecun.off[conv[k].t], n, &mean, &sd, &largest);
        assert_true(fabs(mean) < 5 * want / sqrt((double)n));
        assert_true(fabs(sd / want - 1) < 0.02);
        /* truncated at 2 std of the law before truncation (std / 0.8796) */
        assert_true(largest <= 2 * want / 0.87962566 * (1 + 1e-6) && largest > 1.9 * want / 0.87962566);
        assert_true(memcmp(lecun.params + lecun.off[conv[k].t], orth.params + orth.off[conv[k].t], n * 4) != 0);
    }
    for (int t = 0; t < NN_NTENSORS; t++) {
        if (t == NN_C1W || t == NN_C2W) continue;
        assert_memory_equal(lecun.params + lecun.off[t], orth.params + orth.off[t], lecun.size[t] * sizeof(float));
    }
    for (size_t i = 0; i < lecun.size[NN_C1B]; i++) assert_true(lecun.params[lecun.off[NN_C1B] + i] == 0);
    for (size_t i = 0; i < lecun.size[NN_C2B]; i++) assert_true(lecun.params[lecun.off[NN_C2B] + i] == 0);
    nn_free(&lecun);
    nn_free(&orth);
}

PCG_TESTS(nn, cmocka_unit_test(nn_dense_grad), cmocka_unit_test(nn_relu_grad), cmocka_unit_test(nn_conv_grad),
          cmocka_unit_test(nn_conv_onehot_grad_and_dense_equal),
          cmocka_unit_test(nn_dense_onehot_grad_and_dense_equal),
          cmocka_unit_test(nn_onehot_gather_equals_dense_paper), cmocka_unit_test(nn_onehot_gather_equals_dense_tiny),
          cmocka_unit_test(nn_full_ppo_loss_grad),
          cmocka_unit_test(nn_ppo_loss_terms_grad), cmocka_unit_test(nn_float_matches_double),
          cmocka_unit_test(nn_presets_and_init), cmocka_unit_test(nn_conv_init_lecun))
