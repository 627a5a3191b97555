/* Policy and value network of the CPU trainer (docs/training.md#the-network), written the way
 * llm.c writes train_gpt2.c: one plain function per layer pass, all
 * parameters in one contiguous buffer described by a size table, gradients
 * and Adam moments in buffers of the same layout.
 *
 * Input: the compact observation of host/core/dungeon.h, one byte per crop cell
 * (tile id | OBS_FROZEN_BIT).  The network sees it as a one-hot tensor of
 * crop_h x crop_w x OBS_CHANNELS (HWC): channels 0..9 are the tile ids,
 * BORDER included, channel 10 is "frozen".  That is 11 channels where the
 * paper's text says 10: the engine's tile set has TREASURE as a tenth id
 * and the frozen mask as its own channel.
 *
 * Actor:  conv c1 k x k stride s pad p -> relu -> conv c2 k x k stride s
 *         pad p -> relu -> dense actor_hidden -> relu -> dense n_actions
 * Critic: dense critic_hidden on the flattened one-hot crop -> relu ->
 *         dense critic_hidden -> relu -> dense 1
 * Each of the two layers that read the observation (conv 1, critic dense
 * 1) may read only a window of it centred on the agent's cell (view_*,
 * critic_view_*; the whole crop in the paper and small presets).  They are
 * computed as gathers of weight rows, equal to the dense computation on
 * the one-hot window.
 *
 * Weights are stored [fan_in][fan_out] row-major; a convolution's fan-in
 * index is (ky*k + kx)*in_channels + channel, its activations are HWC. */
#ifndef PCG_NN_H
#define PCG_NN_H
#include <stddef.h>
#include <stdint.h>

/* Parameter tensors, in buffer order. */
enum {
    NN_C1W, NN_C1B,  /* conv 1 */
    NN_C2W, NN_C2B,  /* conv 2 */
    NN_A1W, NN_A1B,  /* actor dense */
    NN_A2W, NN_A2B,  /* actor head (logits) */
    NN_V1W, NN_V1B,  /* critic dense 1 (one-hot input) */
    NN_V2W, NN_V2B,  /* critic dense 2 */
    NN_V3W, NN_V3B,  /* critic head (value) */
    NN_NTENSORS
};

typedef struct {
    int crop_h, crop_w; /* observation crop (2h-1, 2w-1) */
    int in_ch;          /* one-hot channels (OBS_CHANNELS) */
    int n_actions;
    int c1, c2;         /* conv filters */
    int k, stride, pad; /* both convolutions (paper: 7, 2, 3) */
    int h1, w1, h2, w2; /* conv output sizes (paper: 16x16, 8x8 on 16x16 maps) */
    int actor_hidden, critic_hidden;
    /* windows of the crop, centred on the agent's cell, that conv 1 and
     * the critic read (odd sizes, at most the crop; 0: the whole crop) */
    int view_h, view_w;
    int critic_view_h, critic_view_w;
} nn_config;

typedef struct {
    nn_config cfg;
    size_t size[NN_NTENSORS]; /* floats per tensor */
    size_t off[NN_NTENSORS];  /* offset in the buffers */
    size_t n_params;
    float *params; /* n_params */
    float *grads;  /* n_params */
} nn_t;

/* Per-batch activations and scratch for batches of up to cap samples. */
typedef struct {
    int cap;
    float *c1;     /* cap x h1*w1*c1, after relu */
    float *col;    /* cap*h2*w2 x k*k*c1: im2col of c1; reused for its gradient */
    float *c2;     /* cap x h2*w2*c2, after relu (the actor's features) */
    float *a1;     /* cap x actor_hidden, after relu */
    float *logits; /* cap x n_actions */
    float *v1;     /* cap x critic_hidden, after relu */
    float *v2;     /* cap x critic_hidden, after relu */
    float *value;  /* cap */
    /* gradients of the same activations */
    float *dc1, *dc2, *da1, *dlogits, *dv1, *dv2, *dvalue;
    float *block;
} nn_acts;

/* Preset by name: "paper" (the paper's: 64/64 filters, 64 units), "small"
 * (16/16 filters, 64 units; a sixth of the paper preset's multiply-adds)
 * or "tiny" (for a few CPU cores: 3x3 convolutions on a 5x5 window around
 * the agent's cell, docs/training.md).  Returns 0, or -1 for an unknown
 * name. */
int nn_preset_config(const char *preset, int crop_h, int crop_w, int n_actions, nn_config *cfg);
/* 1 if preset names a preset; NN_PRESETS lists them for error messages. */
int nn_preset_known(const char *preset);
#define NN_PRESETS "paper, small or tiny"
/* Fill derived sizes (h1, w1, h2, w2; a view of 0 becomes the crop) from
 * the rest; -1 if inconsistent. */
int nn_config_finish(nn_config *cfg);
/* Tensor sizes of a config into size[] and off[]; returns the total. */
size_t nn_param_layout(const nn_config *cfg, size_t *size, size_t *off);

int nn_alloc(nn_t *nn, const nn_config *cfg);
void nn_free(nn_t *nn);
/* How the two convolutions' kernels start: LeCun normal (a normal
 * truncated at 2 std, scaled to std sqrt(1/fan_in) with fan_in = k*k*in
 * channels; Flax's default, which the reference code keeps) or orthogonal
 * with gain sqrt 2 as the dense layers.  0 is the reference's. */
enum { CONV_INIT_LECUN = 0, CONV_INIT_ORTHOGONAL = 1 };
/* Dense layers orthogonal (gain sqrt 2 hidden, 0.01 policy head, 1 value
 * head), the convolutions as conv_init says, biases zero; deterministic
 * in seed. */
void nn_init(nn_t *nn, uint64_t seed, int conv_init);
int nn_acts_alloc(nn_acts *a, const nn_config *cfg, int cap);
void nn_acts_free(nn_acts *a);

/* Forward of B <= a->cap observations (B x crop_h*crop_w bytes).  Fills
 * a->logits and a->value (and the other activations for backward). */
void nn_forward(const nn_t *nn, nn_acts *a, const unsigned char *obs, int B);
/* Backward from a->dlogits and a->dvalue; adds into nn->grads. */
void nn_backward(nn_t *nn, nn_acts *a, const unsigned char *obs, int B);
void nn_zero_grad(nn_t *nn);

/* Sums over samples of the PPO loss terms (see nn_ppo_loss). */
typedef struct {
    double policy, value, entropy, approx_kl, clipped;
} nn_loss_stats;

/* PPO loss of B samples and its gradient (docs/training.md#ppo), written into
 * a->dlogits and a->dvalue from a->logits and a->value.  Per sample: ratio
 * r = exp(logp[act] - old_logp), policy term max(-adv r, -adv clip(r,
 * 1-eps, 1+eps)), value term 0.5 max((v-R)^2, (old_v + clip(v-old_v, -eps,
 * eps) - R)^2), entropy H; loss = scale * sum(policy + vf_coef value -
 * ent_coef H).  Adds the terms' plain sums to st (may be NULL): policy,
 * value, entropy, approx KL (r-1-log r), clipped count.  Returns the loss. */
double nn_ppo_loss(nn_acts *a, int B, int n_actions, const int *act, const float *old_logp, const float *adv,
                   const float *old_value, const float *ret, double clip_eps, double vf_coef, double ent_coef,
                   double scale, nn_loss_stats *st);

/* Multiply-adds of one forward pass per observation: as the dense network
 * (one-hot layers as full matrix products), and as executed here (one-hot
 * layers as gathers, counting an observation's average non-zero inputs). */
double nn_macs_dense(const nn_config *cfg);
double nn_macs_executed(const nn_config *cfg, double nonzero_per_cell);

/* OpenMP threads for the network (0: leave as is).  OpenBLAS is set to
 * one thread: the layers split their matrix products across the OpenMP
 * threads themselves (nn_alloc sets this too).  See docs/training.md. */
void nn_set_threads(int threads);

#endif
