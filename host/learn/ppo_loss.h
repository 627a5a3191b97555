/* The PPO loss of one sample and its gradient (docs/training.md#ppo), written once for
 * the CPU trainer (host/learn/nn_layers.h: float, and double in the gradient
 * tests) and the device trainer's loss kernel (cuda/nn.cu).  Before
 * including, define PPO_REAL (the type of the logits and gradients) and
 * PPO_FN(name) (the function's name for that type).  There is no include
 * guard: each type includes it once.
 *
 * For logits z[A] of one sample with the action act taken, the ratio
 * r = exp(logp(act) - old_logp), the policy term
 * max(-adv r, -adv clip(r, 1-eps, 1+eps)), the value term
 * 0.5 max((v-R)^2, (ov + clip(v-ov, -eps, eps) - R)^2) and the entropy H,
 * the sample's loss is policy + vf_coef value - ent_coef H.  Writes
 * scale * its gradient into dz[A] and *dv, and its terms into t[6]: the
 * loss, policy, value, entropy, approximate KL (r-1-log r), clipped (0 or
 * 1, |r-1| > eps).  All arithmetic is in double. */
#include "hd.h"
#include <math.h>

PCG_HD void PPO_FN(ppo_loss_one)(const PPO_REAL *z, int A, int act, double old_logp, double adv, double v,
                                 double ov, double R, double clip_eps, double vf_coef, double ent_coef, double scale,
                                 PPO_REAL *dz, PPO_REAL *dv, double *t)
{
    double mx = z[0];
    for (int j = 1; j < A; j++)
        if (z[j] > mx) mx = z[j];
    double sum = 0;
    for (int j = 0; j < A; j++) sum += exp(z[j] - mx);
    double lse = mx + log(sum), H = 0;
    for (int j = 0; j < A; j++) {
        double lp = z[j] - lse;
        H -= exp(lp) * lp;
    }
    double logp = z[act] - lse, logr = logp - old_logp, r = exp(logr);
    double rc = r < 1 - clip_eps ? 1 - clip_eps : r > 1 + clip_eps ? 1 + clip_eps : r;
    double pg1 = -adv * r, pg2 = -adv * rc, pg = pg1 >= pg2 ? pg1 : pg2;
    /* d pg / d r: the unclipped branch, or the clipped one if r is inside */
    double dpg_dr = pg1 >= pg2 ? -adv : (rc == r ? -adv : 0);
    double dlogp = dpg_dr * r;
    double d = v - ov, dc = d < -clip_eps ? -clip_eps : d > clip_eps ? clip_eps : d;
    double vc = ov + dc, e1 = (v - R) * (v - R), e2 = (vc - R) * (vc - R);
    double vl = 0.5 * (e1 >= e2 ? e1 : e2);
    double dvl = e1 >= e2 ? (v - R) : (dc == d ? (vc - R) : 0);
    for (int j = 0; j < A; j++) {
        double lp = z[j] - lse, p = exp(lp);
        double g = dlogp * ((j == act) - p) - ent_coef * (-p * (lp + H));
        dz[j] = (PPO_REAL)(scale * g);
    }
    *dv = (PPO_REAL)(scale * vf_coef * dvl);
    t[0] = pg + vf_coef * vl - ent_coef * H;
    t[1] = pg;
    t[2] = vl;
    t[3] = H;
    t[4] = (r - 1) - logr;
    t[5] = fabs(r - 1) > clip_eps;
}
