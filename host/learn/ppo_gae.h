/* Generalised advantage estimation for one environment, written once for
 * the CPU trainer (host/learn/ppo.c, a loop over environments) and the device
 * trainer (cuda/ppo.cu, one thread per environment).  PCG_HD. */
#ifndef PCG_PPO_GAE_H
#define PCG_PPO_GAE_H
#include <stddef.h>
#include "hd.h"

/* GAE(gamma, lambda) of environment e over [T][E] arrays: done[t][e] = 1 if
 * step t ended the episode; last_value[e] = V of the observation after step
 * T-1.  Writes e's advantages and returns (= advantage + value).  Summed in
 * double, so the two backends agree to float rounding. */
PCG_HD void ppo_gae_env(int T, int E, int e, const float *rewards, const float *values, const unsigned char *dones,
                        const float *last_value, float gamma, float lambda, float *adv, float *ret)
{
    double gae = 0, next_value = last_value[e];
    for (int t = T - 1; t >= 0; t--) {
        size_t i = (size_t)t * E + e;
        double live = dones[i] ? 0.0 : 1.0;
        double delta = rewards[i] + gamma * next_value * live - values[i];
        gae = delta + (double)gamma * lambda * live * gae;
        adv[i] = (float)gae;
        ret[i] = (float)(gae + values[i]);
        next_value = values[i];
    }
}

#endif
