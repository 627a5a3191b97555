/* Ridge preference models and their held-out scores (prefer_fit.h). */
#include "prefer_fit.h"
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PREF_MAX_PERSONAS 32
#define MAX_FEATURES (PREFER_N_DIMS + PREF_MAX_PERSONAS)

const char *pref_family_name(int family)
{
    static const char *const names[PREF_N_FAMILIES] = {"separate (PREFER)", "persona mean", "shared",
                                                       "- CORGIS (PXI only)", "- PXI (CORGIS only)", "- persona"};
    return family >= 0 && family < PREF_N_FAMILIES ? names[family] : "?";
}

static int pooled(int family) { return family == PREF_SHARED || family == PREF_NO_PERSONA; }

static int dim_in_family(int family, int j)
{
    if (family == PREF_NO_CORGIS) return j < PREFER_N_PXI;
    if (family == PREF_NO_PXI) return j >= PREFER_N_PXI;
    return 1;
}

/* Which rows train a model: persona p (-1: all) without generators g1, g2. */
typedef struct {
    int persona, g1, g2;
} fold;

static int in_fold(const pref_obs *o, const fold *f)
{
    return (f->persona < 0 || o->persona == f->persona) && o->generator != f->g1 && o->generator != f->g2;
}

typedef struct {
    int family, nf, n_personas;
    double median[PREFER_N_DIMS];
    double mean[MAX_FEATURES], sd[MAX_FEATURES], beta[MAX_FEATURES];
    double ybar;
} ridge;

/* The feature row of o: the family's dimensions (a missing one takes the
 * fold's median), then one indicator per persona for the shared model. */
static int features(const ridge *r, const pref_obs *o, double *out)
{
    int n = 0;
    for (int j = 0; j < PREFER_N_DIMS; j++)
        if (dim_in_family(r->family, j)) out[n++] = isnan(o->x[j]) ? r->median[j] : o->x[j];
    if (r->family == PREF_SHARED)
        for (int p = 0; p < r->n_personas; p++) out[n++] = o->persona == p;
    return n;
}

static void fold_medians(const pref_data *d, const fold *f, ridge *r, double *scratch)
{
    for (int j = 0; j < PREFER_N_DIMS; j++) {
        size_t n = 0;
        for (int i = 0; i < d->n; i++)
            if (in_fold(&d->obs[i], f) && !isnan(d->obs[i].x[j])) scratch[n++] = d->obs[i].x[j];
        gsl_sort(scratch, 1, n);
        r->median[j] = n ? gsl_stats_median_from_sorted_data(scratch, 1, n) : 3.0;
    }
}

/* Means and standard deviations of the features over the fold. */
static int fold_moments(const pref_data *d, const fold *f, ridge *r)
{
    double row[MAX_FEATURES], sq[MAX_FEATURES] = {0};
    int rows = 0;
    memset(r->mean, 0, sizeof r->mean);
    r->ybar = 0;
    for (int i = 0; i < d->n; i++) {
        if (!in_fold(&d->obs[i], f)) continue;
        r->nf = features(r, &d->obs[i], row);
        for (int k = 0; k < r->nf; k++) {
            r->mean[k] += row[k];
            sq[k] += row[k] * row[k];
        }
        r->ybar += d->obs[i].y;
        rows++;
    }
    if (rows < 2) return -1;
    for (int k = 0; k < r->nf; k++) {
        r->mean[k] /= rows;
        double var = sq[k] / rows - r->mean[k] * r->mean[k];
        r->sd[k] = var > 1e-12 ? sqrt(var) : 0; /* a constant feature carries nothing */
    }
    r->ybar /= rows;
    return rows;
}

/* Solve (Z'Z + lambda I) beta = Z'(y - ybar) on the standardised fold. */
static int fold_solve(const pref_data *d, const fold *f, double lambda, ridge *r)
{
    gsl_matrix *A = gsl_matrix_calloc((size_t)r->nf, (size_t)r->nf);
    gsl_vector *c = gsl_vector_calloc((size_t)r->nf), *beta = gsl_vector_alloc((size_t)r->nf);
    double row[MAX_FEATURES], z[MAX_FEATURES];
    for (int i = 0; i < d->n; i++) {
        if (!in_fold(&d->obs[i], f)) continue;
        features(r, &d->obs[i], row);
        for (int k = 0; k < r->nf; k++) z[k] = r->sd[k] > 0 ? (row[k] - r->mean[k]) / r->sd[k] : 0;
        for (int a = 0; a < r->nf; a++) {
            *gsl_vector_ptr(c, (size_t)a) += z[a] * (d->obs[i].y - r->ybar);
            for (int b = 0; b < r->nf; b++) *gsl_matrix_ptr(A, (size_t)a, (size_t)b) += z[a] * z[b];
        }
    }
    for (int k = 0; k < r->nf; k++) *gsl_matrix_ptr(A, (size_t)k, (size_t)k) += lambda;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int rc = gsl_linalg_cholesky_decomp1(A) || gsl_linalg_cholesky_solve(A, c, beta) ? -1 : 0;
    gsl_set_error_handler(old);
    for (int k = 0; k < r->nf; k++) r->beta[k] = rc ? 0 : gsl_vector_get(beta, (size_t)k);
    gsl_matrix_free(A);
    gsl_vector_free(c);
    gsl_vector_free(beta);
    return rc;
}

static int fit_fold(const pref_data *d, int family, const fold *f, double lambda, ridge *r, double *scratch)
{
    memset(r, 0, sizeof *r);
    r->family = family;
    r->n_personas = d->n_personas;
    fold_medians(d, f, r, scratch);
    if (fold_moments(d, f, r) < 0) return -1;
    if (family == PREF_PERSONA_MEAN) return 0; /* ybar alone */
    return fold_solve(d, f, lambda, r);
}

static double predict(const ridge *r, const pref_obs *o)
{
    if (r->family == PREF_PERSONA_MEAN) return r->ybar;
    double row[MAX_FEATURES], y = r->ybar;
    features(r, o, row);
    for (int k = 0; k < r->nf; k++)
        if (r->sd[k] > 0) y += r->beta[k] * (row[k] - r->mean[k]) / r->sd[k];
    return y;
}

int pref_fit_persona(const pref_data *d, int p, double lambda, pref_model *m)
{
    ridge r;
    fold f = {p, -1, -1};
    double *scratch = malloc(sizeof(double) * (size_t)(d->n + 1));
    int rc = scratch ? fit_fold(d, PREF_SEPARATE, &f, lambda, &r, scratch) : -1;
    free(scratch);
    if (rc) return -1;
    m->b = r.ybar;
    for (int j = 0; j < PREFER_N_DIMS; j++) {
        m->used[j] = r.sd[j] > 0;
        m->w[j] = m->used[j] ? r.beta[j] / r.sd[j] : 0; /* per point of dimension j */
        m->b -= m->w[j] * r.mean[j];
    }
    return 0;
}

/* Every row's prediction from a model that did not see its generator;
 * NaN where the fold was too small to fit. */
static void held_out_predictions(const pref_data *d, int family, double lambda, double *pred, double *scratch)
{
    ridge r;
    for (int i = 0; i < d->n; i++) pred[i] = NAN;
    for (int g = 0; g < d->n_generators; g++)
        for (int p = pooled(family) ? -1 : 0; p < (pooled(family) ? 0 : d->n_personas); p++) {
            fold f = {p, g, -1};
            if (fit_fold(d, family, &f, lambda, &r, scratch)) continue;
            for (int i = 0; i < d->n; i++)
                if (d->obs[i].generator == g && (p < 0 || d->obs[i].persona == p)) pred[i] = predict(&r, &d->obs[i]);
        }
}

/* MAE and R^2 of persona p's held-out predictions; -1 when it has fewer
 * than two. */
static int persona_errors(const pref_data *d, int p, const double *pred, double *mae, double *r2)
{
    double sum = 0, sse = 0, sst = 0, mean = 0;
    int n = 0;
    for (int i = 0; i < d->n; i++)
        if (d->obs[i].persona == p && !isnan(pred[i])) {
            mean += d->obs[i].y;
            n++;
        }
    if (n < 2) return -1;
    mean /= n;
    for (int i = 0; i < d->n; i++) {
        if (d->obs[i].persona != p || isnan(pred[i])) continue;
        double e = d->obs[i].y - pred[i];
        sum += fabs(e);
        sse += e * e;
        sst += (d->obs[i].y - mean) * (d->obs[i].y - mean);
    }
    *mae = sum / n;
    *r2 = sst > 0 ? 1 - sse / sst : 0;
    return 0;
}

/* Pair order with both generators held out: the share of within-persona
 * pairs of different ratings the model puts in the observed order (a tie
 * counts half). */
static void pair_order(const pref_data *d, int family, double lambda, pref_scores *s, double *scratch)
{
    ridge r[PREF_MAX_PERSONAS + 1];
    int ok[PREF_MAX_PERSONAS + 1];
    double credit = 0;
    s->pairs = 0;
    for (int g1 = 0; g1 < d->n_generators; g1++)
        for (int g2 = g1 + 1; g2 < d->n_generators; g2++) {
            for (int p = 0; p < d->n_personas; p++) {
                fold f = {pooled(family) ? -1 : p, g1, g2};
                if (!pooled(family) || p == 0) ok[p] = fit_fold(d, family, &f, lambda, &r[p], scratch) == 0;
                else ok[p] = ok[0], r[p] = r[0];
            }
            for (int i = 0; i < d->n; i++) {
                const pref_obs *a = &d->obs[i];
                if (a->generator != g1 || !ok[a->persona]) continue;
                for (int j = 0; j < d->n; j++) {
                    const pref_obs *b = &d->obs[j];
                    if (b->generator != g2 || b->persona != a->persona || b->y == a->y) continue;
                    double da = predict(&r[a->persona], a) - predict(&r[a->persona], b);
                    credit += da == 0 ? 0.5 : (da > 0) == (a->y > b->y);
                    s->pairs++;
                }
            }
        }
    s->order = s->pairs ? credit / s->pairs : 0;
}

int pref_evaluate(const pref_data *d, int family, double lambda, pref_scores *s)
{
    memset(s, 0, sizeof *s);
    if (d->n_generators < 3 || d->n_personas > PREF_MAX_PERSONAS) return -1;
    double *pred = malloc(sizeof(double) * (size_t)d->n), *scratch = malloc(sizeof(double) * (size_t)(d->n + 1));
    int rc = pred && scratch ? 0 : -1, counted = 0;
    if (!rc) {
        held_out_predictions(d, family, lambda, pred, scratch);
        for (int p = 0; p < d->n_personas; p++) {
            double mae, r2;
            if (persona_errors(d, p, pred, &mae, &r2)) continue;
            s->mae += mae;
            s->r2 += r2;
            counted++;
        }
        if (counted) {
            s->mae /= counted;
            s->r2 /= counted;
        } else {
            rc = -1;
        }
        pair_order(d, family, lambda, s, scratch);
    }
    free(pred);
    free(scratch);
    return rc;
}
