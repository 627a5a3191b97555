/* PPO on the CPU backend (docs/training.md#ppo), after PureJaxRL's ppo.py: rollouts of
 * n_steps on n_envs environments, GAE, n_epochs x n_minibatches of clipped
 * policy and value losses with an entropy bonus, advantages normalised per
 * minibatch, global gradient-norm clipping, Adam.  Everything that decides
 * the numbers is in ppo_config; ppo_config_default gives the paper's values. */
#ifndef PCG_PPO_H
#define PCG_PPO_H
#include <stdint.h>
#include "env.h"
#include "nn.h"

typedef struct {
    /* environment */
    int map_h, map_w;    /* 16 x 16 */
    int variant;         /* VARIANT_DUNGEON or VARIANT_TREASURE */
    int n_envs;          /* 600 */
    /* network */
    char preset[16];     /* "paper", "small" or "tiny" (nn_preset_config) */
    /* PPO */
    int n_steps;         /* rollout length, 128 */
    int n_epochs;        /* 10 */
    int n_minibatches;   /* 4 */
    float lr;            /* Adam learning rate 1e-4, constant */
    float adam_b1, adam_b2, adam_eps; /* 0.9, 0.999, 1e-5 */
    float gamma;         /* 0.99 */
    float gae_lambda;    /* 0.95 */
    float clip_eps;      /* 0.2, policy and value */
    float ent_coef;      /* 0.01 */
    float vf_coef;       /* 0.5 */
    float max_grad_norm; /* 0.5 */
    /* samples per forward/backward chunk: memory only, the gradient is the
     * minibatch's whichever the chunk size */
    int chunk;           /* 256 */
    uint64_t seed;
    /* where the reference code and the engine's first design differ
     * (docs/training.md#reference-details); 0 is the reference's */
    env_rules rules;     /* observation centre, last step's reward, level kept */
    int conv_init;       /* CONV_INIT_LECUN or CONV_INIT_ORTHOGONAL */
} ppo_config;

/* Per-update figures. */
typedef struct {
    int64_t update;           /* updates done, this one included */
    int64_t step;             /* environment steps done (all envs) */
    double episodes;          /* episodes that ended in this rollout */
    double episode_reward;    /* their mean return (NaN if none ended) */
    double step_reward;       /* mean reward per step in this rollout */
    double policy_loss, value_loss, entropy, approx_kl, clip_frac, loss; /* means over epochs and samples */
    double grad_norm;         /* mean global norm before clipping */
    double t_env, t_forward, t_rollout, t_update; /* seconds */
    double sps;               /* steps per second, rollout + update */
} ppo_metrics;

typedef struct {
    ppo_config cfg;
    nn_t nn;
    float *adam_m, *adam_v; /* n_params each */
    int64_t adam_t;
    int64_t step, update;
    double last_episode_reward; /* latest mean episode return, NaN before any */
    env_t env;
    nn_acts acts;
    /* rollout storage, [n_steps][n_envs] */
    unsigned char *obs;
    int *actions;
    float *logp, *values, *rewards, *adv, *ret;
    unsigned char *dones;
    /* minibatch scratch */
    uint32_t *perm;
    unsigned char *mb_obs;
    int *mb_act;
    float *mb_logp, *mb_adv, *mb_val, *mb_ret;
    volatile int *stop; /* if set and non-zero, ppo_train_update gives up early */
    int fault;          /* PPO_FAULT_* that stopped the last update, 0 if none */
    int64_t fault_step; /* environment steps done when it was found */
    /* if set, called after every rollout step and every minibatch (done,
     * total: the update's progress in those units) */
    void (*progress)(void *ctx, int done, int total);
    void *progress_ctx;
} ppo_t;

/* What ppo_rollout, ppo_update and ppo_train_update return. */
enum { PPO_DONE = 0, PPO_STOPPED = -1, PPO_UNHEALTHY = -2 };
/* Why training cannot go on (ppo_t.fault): a number that is not finite.
 * The update stops before it touches the weights with it, so the network
 * is the last good one except for PPO_FAULT_WEIGHTS. */
enum {
    PPO_FAULT_NONE,
    PPO_FAULT_REWARD,   /* a reward */
    PPO_FAULT_RETURNS,  /* the returns or advantages (rewards too large to add up) */
    PPO_FAULT_LOSS,     /* the loss of a minibatch */
    PPO_FAULT_GRADIENT, /* the gradient norm */
    PPO_FAULT_WEIGHTS,  /* the weights after an optimiser step */
    PPO_N_FAULTS
};
/* "the rewards are not finite (...)": one line naming the cause. */
const char *ppo_fault_text(int fault);

/* The reference details of ppo_config by name: the flags spell detail k
 * --FLAG NAME, train.json and config.json "KEY": "NAME"; names[0] is the
 * reference's and the default, names[1] the engine's first design. */
enum { PPO_DETAIL_OBS_CENTRE, PPO_DETAIL_TERMINAL_REWARD, PPO_DETAIL_FINAL_LEVEL, PPO_DETAIL_CONV_INIT, PPO_N_DETAILS };
typedef struct {
    const char *flag, *key;
    const char *names[2];
} ppo_detail;
extern const ppo_detail ppo_details[PPO_N_DETAILS];
int ppo_detail_get(const ppo_config *c, int k);
void ppo_detail_set(ppo_config *c, int k, int v);
/* The value of detail k that name spells, -1 if none. */
int ppo_detail_parse(int k, const char *name);

void ppo_config_default(ppo_config *c);
/* NULL if the config is usable, else a one-line reason. */
const char *ppo_config_check(const ppo_config *c);
/* A fresh trainer: environments reset, network initialised from cfg->seed.
 * reward/ctx are the environment's reward.  0, or -1 with err. */
int ppo_init(ppo_t *p, const ppo_config *cfg, reward_fn reward, void *ctx, char *err, int errlen);
void ppo_free(ppo_t *p);

/* Collect one rollout of n_steps with the current policy (fills the
 * rollout storage, advantages and returns).  PPO_DONE, PPO_STOPPED if
 * *stop was raised (the environments are then mid-rollout), or
 * PPO_UNHEALTHY (p->fault says why). */
int ppo_rollout(ppo_t *p, ppo_metrics *m);
/* n_epochs x n_minibatches of gradient steps on the stored rollout.
 * PPO_DONE, PPO_STOPPED if *stop was raised (the network is then
 * mid-update), or PPO_UNHEALTHY (p->fault says why). */
int ppo_update(ppo_t *p, ppo_metrics *m);
/* Rollout and update; fills m.  PPO_DONE, PPO_STOPPED or PPO_UNHEALTHY. */
int ppo_train_update(ppo_t *p, ppo_metrics *m);

/* GAE(gamma, lambda) over [T][E] arrays: done[t][e] = 1 if the step t
 * ended the episode; last_value[e] = V of the observation after step T-1.
 * Writes advantages and returns (= adv + value). */
void ppo_gae(int T, int E, const float *rewards, const float *values, const unsigned char *dones,
             const float *last_value, float gamma, float lambda, float *adv, float *ret);

/* Sample an action from logits[A] with uniform draw u in [0,1); writes
 * its log-probability. */
int ppo_sample(const float *logits, int A, float u, float *logp);
/* The uniform draw for env e at its n-th policy action under seed. */
float ppo_action_draw(uint64_t seed, int e, uint64_t n);

/* Default seed of the evaluation maps (docs/method.md#evaluation: the same starting maps
 * every time); `pcgrllm run` uses the same value. */
#define PPO_EVAL_SEED 20250101ull

/* One episode of n fresh environments (maps from seed, as env_alloc) under
 * rules (NULL: the reference's) with actions sampled from the policy nn
 * under action_seed, or uniformly at random (env_random_actions) when nn
 * is NULL.  final_maps (n*h*w tile ids, may be NULL) receive the levels
 * the episode leaves: the maps after the second-to-last step under
 * FINAL_LEVEL_767, or with the last step's edit applied (and no
 * auto-reset) under FINAL_LEVEL_768.  returns[n] (may be NULL) are the
 * episode returns under reward (NULL: zeros) over the steps applied.  0,
 * or -1 if out of memory. */
int ppo_play_episode(const nn_t *nn, int n, int h, int w, int variant, uint64_t seed, uint64_t action_seed,
                     const env_rules *rules, reward_fn reward, void *ctx, unsigned char *final_maps, float *returns);


#endif
