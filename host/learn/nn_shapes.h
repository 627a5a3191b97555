/* The network's geometry, written once for the CPU layers (host/learn/nn.c,
 * host/learn/nn_layers.h) and the device layers (cuda/nn.cu): the windows of the
 * observation that the first layers read, the two convolutions' shapes and
 * the table of per-sample activation sizes that nn_acts is laid out by. */
#ifndef PCG_NN_SHAPES_H
#define PCG_NN_SHAPES_H
#include <stddef.h>
#include "nn.h"

typedef struct {
    int H, W, C;       /* input */
    int k, stride, pad;
    int OH, OW, O;     /* output */
} nn_conv_shape;

/* A window of h x w cells of each observation: cell (r, c) of sample n is
 * byte n*size + off + r*ld + c of the observation batch. */
typedef struct {
    int h, w;  /* window */
    int ld;    /* row length of the observation (crop_w) */
    int off;   /* first cell of the window in the observation */
    int size;  /* bytes per observation (crop_h*crop_w) */
} nn_obs_view;

/* The h x w window centred in the crop (the agent's cell). */
static inline nn_obs_view nn_centred_view(const nn_config *c, int h, int w)
{
    nn_obs_view v;
    v.h = h, v.w = w, v.ld = c->crop_w, v.size = c->crop_h * c->crop_w;
    v.off = (c->crop_h - h) / 2 * c->crop_w + (c->crop_w - w) / 2;
    return v;
}

/* What conv 1 and the critic's first layer read. */
static inline nn_obs_view nn_actor_view(const nn_config *c)
{
    return nn_centred_view(c, c->view_h, c->view_w);
}

static inline nn_obs_view nn_critic_view(const nn_config *c)
{
    return nn_centred_view(c, c->critic_view_h, c->critic_view_w);
}

static inline void nn_conv_shapes(const nn_config *c, nn_conv_shape *s1, nn_conv_shape *s2)
{
    s1->H = c->view_h, s1->W = c->view_w, s1->C = c->in_ch;
    s1->k = c->k, s1->stride = c->stride, s1->pad = c->pad;
    s1->OH = c->h1, s1->OW = c->w1, s1->O = c->c1;
    s2->H = c->h1, s2->W = c->w1, s2->C = c->c1;
    s2->k = c->k, s2->stride = c->stride, s2->pad = c->pad;
    s2->OH = c->h2, s2->OW = c->w2, s2->O = c->c2;
}

/* nn_acts' arrays, in layout order, and the floats each takes per sample. */
#define NN_N_ACTS 15
static inline void nn_acts_table(const nn_config *c, nn_acts *a, size_t per[NN_N_ACTS], float **ptr[NN_N_ACTS])
{
    size_t n1 = (size_t)c->h1 * c->w1 * c->c1, ncol = (size_t)c->h2 * c->w2 * c->k * c->k * c->c1;
    size_t n2 = (size_t)c->h2 * c->w2 * c->c2;
    size_t sizes[NN_N_ACTS] = {n1,
                               ncol,
                               n2,
                               (size_t)c->actor_hidden,
                               (size_t)c->n_actions,
                               (size_t)c->critic_hidden,
                               (size_t)c->critic_hidden,
                               1,
                               n1,
                               n2,
                               (size_t)c->actor_hidden,
                               (size_t)c->n_actions,
                               (size_t)c->critic_hidden,
                               (size_t)c->critic_hidden,
                               1};
    float **slots[NN_N_ACTS] = {&a->c1,  &a->col, &a->c2,  &a->a1,      &a->logits, &a->v1,  &a->v2,    &a->value,
                                &a->dc1, &a->dc2, &a->da1, &a->dlogits, &a->dv1,    &a->dv2, &a->dvalue};
    for (int i = 0; i < NN_N_ACTS; i++) {
        per[i] = sizes[i];
        ptr[i] = slots[i];
    }
}

#endif
