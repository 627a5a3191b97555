/* The offline judge (docs/prefer.md#the-offline-judge): a rule-based
 * stand-in for a model judge, labelled as such wherever it is used.  It
 * scores each experience dimension from measurable proxies of a recorded
 * play, and gives an overall rating from synthetic personas whose
 * preference is a planted linear function of the dimensions plus seeded
 * noise, so that fitting and target selection can be tested without a
 * model.  It cannot show what a person, or a model, would feel. */
#ifndef PCG_JUDGE_OFFLINE_H
#define PCG_JUDGE_OFFLINE_H
#include "dimensions.h"
#include "trajectory.h"

#define PREFER_N_PERSONAS 5
#define JUDGE_WHY_LEN 160
/* the most repeats a judge (offline or model) runs per play */
#define JUDGE_MAX_REPEATS 9

/* The built-in personas' names, the files under prompts/prefer/personas/. */
const char *persona_name(int p);
int persona_index(const char *name); /* -1 if not built in */

/* The twelve scores 1..5 with one explanation each. */
void judge_offline_dims(const play_features *f, int scores[PREFER_N_DIMS], char why[PREFER_N_DIMS][JUDGE_WHY_LEN]);

/* The synthetic persona's planted weights (preference points per dimension
 * point) and intercept (the preference of an all-3 profile). */
const double *persona_weights(int p, double *intercept);

/* The overall rating 1..10 of repeat r: persona p's planted function of
 * the scores plus noise seeded by (seed, the level's name, p, r); p = -1
 * is a neutral judge (the mean score on the 1..10 scale, no noise).  The
 * rating never reads a model's dimension answer: the offline judge
 * derives both from the same play. */
int judge_offline_overall(const play_features *f, int p, unsigned seed, int r);
/* The ratings of repeats 0..repeats-1 (at most JUDGE_MAX_REPEATS) into
 * ratings, in repeat order; returns their median, the judge's rating. */
int judge_offline_rating(const play_features *f, int p, unsigned seed, int repeats, int *ratings);

#endif
