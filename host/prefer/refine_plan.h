/* The decisions of persona-directed refinement (docs/prefer.md#refinement):
 * which dimensions to steer, in which direction, and whether a revised
 * generator is kept.  Pure functions of the measured profiles and the
 * persona's preference model, so each rule is tested on its own. */
#ifndef PCG_REFINE_PLAN_H
#define PCG_REFINE_PLAN_H
#include "dimensions.h"
#include "prefer_fit.h"

#define REFINE_MAX_TARGETS 3
#define REFINE_EPSILON 0.25 /* the least change of a target dimension that counts */

typedef struct {
    int dim;       /* DIM_* */
    int direction; /* +1 raise, -1 lower */
    double weight; /* the persona's coefficient, rating points per dimension point */
} refine_target;

/* Up to max targets for profile x (1..5 per dimension) under model m: the
 * dimensions with a non-zero weight, ranked by |weight|, direction the
 * weight's sign, skipping those without room to move by REFINE_EPSILON
 * on the 1..5 scale.  Returns how many. */
int refine_select(const pref_model *m, const double *x, refine_target *out, int max);

/* Why a candidate is kept or not. */
enum {
    REFINE_ACCEPT = 0,
    REFINE_INCOMPLETE,      /* a dimension of the candidate's profile is missing */
    REFINE_TARGET_STILL,    /* the target dimension did not move by epsilon the intended way */
    REFINE_NO_GAIN,         /* the predicted preference did not rise */
    REFINE_FITNESS_FELL     /* the story's fitness fell */
};
const char *refine_verdict_name(int verdict);

/* PREFER's two conditions plus the story's: the target moved by at least
 * epsilon in its direction, m predicts a higher preference for the
 * candidate's profile than for the original's, and the fitness did not
 * fall.  A candidate with a missing dimension (NaN) is never accepted.
 * *gain is the predicted preference change (NaN when incomplete). */
int refine_gate(const pref_model *m, const refine_target *t, const double *before, const double *after,
                double fitness_before, double fitness_after, double *gain);

/* m's prediction for profile x (NaN if any used dimension is missing). */
double refine_predict(const pref_model *m, const double *x);

#endif
