/* Target selection and the acceptance gate (refine_plan.h). */
#include "refine_plan.h"
#include <math.h>
#include <stdlib.h>

int refine_select(const pref_model *m, const double *x, refine_target *out, int max)
{
    int n = 0;
    int taken[PREFER_N_DIMS] = {0};
    while (n < max) {
        int best = -1;
        for (int j = 0; j < PREFER_N_DIMS; j++) {
            if (taken[j] || !m->used[j] || m->w[j] == 0 || isnan(x[j])) continue;
            int up = m->w[j] > 0;
            if (up ? x[j] > 5 - REFINE_EPSILON : x[j] < 1 + REFINE_EPSILON) continue; /* no room */
            if (best < 0 || fabs(m->w[j]) > fabs(m->w[best])) best = j;
        }
        if (best < 0) break;
        taken[best] = 1;
        out[n++] = (refine_target){best, m->w[best] > 0 ? 1 : -1, m->w[best]};
    }
    return n;
}

double refine_predict(const pref_model *m, const double *x)
{
    double y = m->b;
    for (int j = 0; j < PREFER_N_DIMS; j++) {
        if (!m->used[j]) continue;
        if (isnan(x[j])) return NAN;
        y += m->w[j] * x[j];
    }
    return y;
}

const char *refine_verdict_name(int verdict)
{
    static const char *const names[] = {"accepted", "incomplete profile", "target dimension did not move",
                                        "no predicted preference gain", "story fitness fell"};
    return verdict >= 0 && verdict <= REFINE_FITNESS_FELL ? names[verdict] : "?";
}

int refine_gate(const pref_model *m, const refine_target *t, const double *before, const double *after,
                double fitness_before, double fitness_after, double *gain)
{
    *gain = NAN;
    for (int j = 0; j < PREFER_N_DIMS; j++)
        if (isnan(after[j])) return REFINE_INCOMPLETE;
    *gain = refine_predict(m, after) - refine_predict(m, before);
    if (t->direction * (after[t->dim] - before[t->dim]) < REFINE_EPSILON) return REFINE_TARGET_STILL;
    if (!(*gain > 0)) return REFINE_NO_GAIN;
    if (fitness_after < fitness_before) return REFINE_FITNESS_FELL;
    return REFINE_ACCEPT;
}
