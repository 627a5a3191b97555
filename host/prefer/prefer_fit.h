/* Per-persona preference models (docs/prefer.md#preference-models):
 * ridge regression of the overall rating on the twelve dimensions, with
 * standardisation and median imputation from the training fold only, and
 * folds that hold out whole generators; the baselines and ablations of
 * PREFER beside it. */
#ifndef PCG_PREFER_FIT_H
#define PCG_PREFER_FIT_H
#include "dimensions.h"
#include <jansson.h>

#define PREFER_LAMBDA 10.0
#define PREFER_MAX_OBS 200000

typedef struct {
    int generator;            /* index into the generator names */
    int persona;              /* index into the persona names */
    double x[PREFER_N_DIMS];  /* NaN: the judge left it out */
    double y;                 /* overall rating */
} pref_obs;

typedef struct {
    pref_obs *obs;
    int n, n_incomplete;      /* rows kept; rows with a missing dimension kept for imputation */
    char (*generators)[160];
    int n_generators;
    char (*personas)[64];
    int n_personas;
} pref_data;

/* Observations from assess's JSON lines: persona from "persona" (a line
 * without one is skipped and counted in *skipped), generator from
 * "generator" or else the trajectory's folder.  0, or -1 with one line. */
int pref_read(char **paths, int n_paths, pref_data *d, int *skipped, char *err, int errlen);
void pref_free(pref_data *d);
/* An assessment's "dimensions" object into x (NaN where null or absent;
 * *missing counts them).  -1 and one line for a score that is not 1..5. */
int pref_scores_json(const json_t *dims, double *x, int *missing, char *err, int errlen);

/* One fitted model in the dimensions' own units: y = b + sum w_j x_j. */
typedef struct {
    double w[PREFER_N_DIMS], b;
    int used[PREFER_N_DIMS];
} pref_model;

/* The families compared (docs/prefer.md#preference-models). */
enum { PREF_SEPARATE, PREF_PERSONA_MEAN, PREF_SHARED, PREF_NO_CORGIS, PREF_NO_PXI, PREF_NO_PERSONA, PREF_N_FAMILIES };
const char *pref_family_name(int family);

typedef struct {
    double mae, r2, order; /* MAE and R^2 averaged over personas; pair-order accuracy pooled */
    int pairs;
} pref_scores;

/* Persona p's model fitted on every observation (for its coefficients).
 * 0, or -1 when p has too few observations. */
int pref_fit_persona(const pref_data *d, int p, double lambda, pref_model *m);
/* Held-out scores of one family: each generator left out in turn for MAE
 * and R^2, both generators of a pair left out for its order.  0, or -1
 * when fewer than three generators. */
int pref_evaluate(const pref_data *d, int family, double lambda, pref_scores *s);

#endif
