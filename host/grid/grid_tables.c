/* The paper's tables from a grid's rows.  See grid_rows.h for what each
 * holds and docs/grid.md for the formulas. */
#include "grid_rows.h"
#include "eval.h"
#include "ppo.h"
#include "run.h"
#include "stats.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

grid_stat grid_stat_of(const double *x, int n)
{
    double buf[GRID_MAX_REPEATS];
    int m = 0;
    for (int i = 0; i < n && m < GRID_MAX_REPEATS; i++)
        if (isfinite(x[i])) buf[m++] = x[i];
    grid_stat s = {NAN, NAN, m};
    stats_mean_sd(buf, m, &s.mean, &s.sd);
    return s;
}

/* The rows with their keys numbered, so that lookups compare integers. */
typedef struct {
    grid_rows *R;
    const grid_tables *T;
    grid_key *keys;
    int n_keys;
    int *key_of;                 /* per row */
} table_ctx;

static int number_keys(table_ctx *x)
{
    grid_rows *R = x->R;
    x->keys = malloc(sizeof *x->keys * (size_t)(R->n + 1));
    x->key_of = malloc(sizeof *x->key_of * (size_t)(R->n + 1));
    if (!x->keys || !x->key_of) return -1;
    for (int i = 0; i < R->n; i++) {
        int k = 0;
        while (k < x->n_keys && !grid_key_equal(&x->keys[k], &R->rows[i].key)) k++;
        if (k == x->n_keys) x->keys[x->n_keys++] = R->rows[i].key;
        x->key_of[i] = k;
    }
    return 0;
}

double grid_norm(const grid_tables *T, int scenario, double x)
{
    if (!T->normalised || scenario < 1 || scenario > 4) return NAN;
    double r = T->random_play[scenario];
    return isfinite(r) && r < 1 ? (x - r) / (1 - r) : NAN;
}

/* Each row's normalised fitness.  The bounds are fixed per scenario, so a
 * row's value does not depend on the other rows of the grid. */
static void normalise(grid_rows *R, const grid_tables *T)
{
    for (int i = 0; i < R->n; i++) R->rows[i].norm = grid_norm(T, R->rows[i].scenario, R->rows[i].fitness);
}

/* A row's value: its fitness (or the best so far, with --value best), of
 * the evaluator or the model, raw or normalised within its scenario (raw
 * in a grid of one scenario, which is not normalised).  The model's scores
 * are never normalised: their floor is unknown. */
static double row_value(const grid_tables *T, const grid_row *r, int llm, int norm)
{
    int best = T->value == GRID_VALUE_BEST;
    double v = llm ? (best ? r->llm_best_so_far : r->llm_score) : (best ? r->best_so_far : r->fitness);
    if (llm || !norm || !T->normalised || !isfinite(v)) return v;
    return grid_norm(T, r->scenario, v);
}

/* The row of key k, ablation abl, scenario s and repeat r at iteration it,
 * or (it == 0) the one its column reports: iteration 1 for zs and sa, the
 * cell's last node for fb and full. */
static const grid_row *find_row(const table_ctx *x, int k, int abl, int s, int r, int it)
{
    for (int i = 0; i < x->R->n; i++) {
        const grid_row *w = &x->R->rows[i];
        if (x->key_of[i] != k || w->ablation != abl || w->scenario != s || w->repeat != r) continue;
        if (it > 0 ? w->iteration == it : abl == ABL_ZS || abl == ABL_SA ? w->iteration == 1 : w->final) return w;
    }
    return NULL;
}

/* The summary rows' scenarios: the Mean of the normalised values, and
 * the same mean of the raw ones. */
enum { SCEN_MEAN = 0, SCEN_MEAN_RAW = -1 };

/* out[r] for every repeat: the value in scenario s (raw), or for SCEN_MEAN
 * (SCEN_MEAN_RAW) the mean over the grid's scenarios of the normalised
 * (raw) values (NAN unless every scenario has one). */
static void repeat_values(const table_ctx *x, int k, int abl, int s, int it, int llm, double *out)
{
    const grid_rows *R = x->R;
    for (int r = 0; r < R->repeats; r++) {
        if (s > 0) {
            const grid_row *w = find_row(x, k, abl, s, r, it);
            out[r] = w ? row_value(x->T, w, llm, 0) : NAN;
            continue;
        }
        double sum = 0;
        for (int i = 0; i < R->n_scen && isfinite(sum); i++) {
            const grid_row *w = find_row(x, k, abl, R->scen[i], r, it);
            sum += w ? row_value(x->T, w, llm, s == SCEN_MEAN) : NAN;
        }
        out[r] = sum / R->n_scen;
    }
}

/* Welch's p of PCGRLLM against another column, over the repeats that
 * have a value. */
static double column_p(const double *full, const double *other, int n)
{
    double a[GRID_MAX_REPEATS], b[GRID_MAX_REPEATS];
    int na = 0, nb = 0;
    for (int i = 0; i < n; i++) {
        if (isfinite(full[i])) a[na++] = full[i];
        if (isfinite(other[i])) b[nb++] = other[i];
    }
    return stats_welch_p(a, na, b, nb, NULL, NULL);
}

/* PCGRLLM (f) against column o: *few when both have seeds but one has
 * fewer than GRID_MIN_TEST_N (then no test: NAN), *dir the sign of the
 * difference of their means. */
static double compare(const grid_stat *f, const grid_stat *o, const double *vf, const double *vo, int n, int *few,
                      int *dir)
{
    *dir = f->n && o->n ? (f->mean > o->mean) - (f->mean < o->mean) : 0;
    *few = f->n && o->n && (f->n < GRID_MIN_TEST_N || o->n < GRID_MIN_TEST_N);
    return *few ? NAN : column_p(vf, vo, n);
}

/* The ablations a key has columns for: the grid's, and for the Human row
 * zero-shot and PCGRLLM. */
static int has_column(const table_ctx *x, int k, int abl)
{
    if (!strcmp(x->keys[k].pe, "human")) return abl == ABL_ZS || abl == ABL_FULL;
    for (int i = 0; i < x->R->n_abl; i++)
        if (x->R->abl[i] == abl) return 1;
    return 0;
}

static void t2_row(const table_ctx *x, int k, int s, grid_t2_row *e)
{
    int R = x->R->repeats;
    double v[4][GRID_MAX_REPEATS];
    memset(e, 0, sizeof *e);
    e->key = x->keys[k];
    e->scenario = s;
    double top = -INFINITY;
    for (int a = 0; a < 4; a++) {
        double l[GRID_MAX_REPEATS], w[GRID_MAX_REPEATS];
        for (int r = 0; r < R; r++) v[a][r] = l[r] = w[r] = NAN;
        if (has_column(x, k, a)) {
            repeat_values(x, k, a, s, 0, 0, v[a]);
            repeat_values(x, k, a, s, 0, 1, l);
            if (s == SCEN_MEAN) repeat_values(x, k, a, SCEN_MEAN_RAW, 0, 0, w);
        }
        e->col[a] = grid_stat_of(v[a], R);
        e->llm[a] = grid_stat_of(l, R);
        e->raw[a] = s == SCEN_MEAN ? grid_stat_of(w, R) : e->col[a];
        if (e->col[a].n && e->col[a].mean > top) top = e->col[a].mean;
    }
    for (int a = 0; a < 4; a++)
        if (e->col[a].n && e->col[a].mean >= top - 1e-12) e->best |= 1 << a;
    const grid_stat *f = &e->col[ABL_FULL];
    e->p_zs = compare(f, &e->col[ABL_ZS], v[ABL_FULL], v[ABL_ZS], R, &e->few_zs, &e->dir_zs);
    e->p_sa = compare(f, &e->col[ABL_SA], v[ABL_FULL], v[ABL_SA], R, &e->few_sa, &e->dir_sa);
}

/* The Mean-row value by iteration of key k in ablation abl, and its
 * change from each iteration to the next.  0 when the key has no such
 * rows. */
static int t4_row(const table_ctx *x, int k, int abl, grid_t4_row *e)
{
    int R = x->R->repeats, top = 0;
    for (int i = 0; i < x->R->n; i++)
        if (x->key_of[i] == k && x->R->rows[i].ablation == abl && x->R->rows[i].iteration > top)
            top = x->R->rows[i].iteration;
    if (top == 0) return 0;
    memset(e, 0, sizeof *e);
    e->key = x->keys[k];
    e->ablation = abl;
    e->n_iter = top < GRID_MAX_ITER ? top : GRID_MAX_ITER;
    double prev[GRID_MAX_REPEATS], cur[GRID_MAX_REPEATS], d[GRID_MAX_REPEATS], raw[GRID_MAX_REPEATS];
    for (int y = 1; y <= e->n_iter; y++) {
        repeat_values(x, k, abl, SCEN_MEAN_RAW, y, 0, raw);
        e->raw[y - 1] = grid_stat_of(raw, R);
        repeat_values(x, k, abl, SCEN_MEAN, y, 0, cur);
        e->it[y - 1] = grid_stat_of(cur, R);
        if (y > 1) {
            for (int r = 0; r < R; r++) d[r] = cur[r] - prev[r];
            e->dy[y - 2] = grid_stat_of(d, R);
        }
        memcpy(prev, cur, sizeof(double) * (size_t)R);
    }
    e->dy[e->n_iter - 1] = grid_stat_of(d, 0);
    return 1;
}

/* The key that differs from key k only in what steered the search, with
 * search_fitness fit; -1 when the rows have none. */
static int with_fitness(const table_ctx *x, int k, const char *fit)
{
    grid_key o = x->keys[k];
    snprintf(o.search_fitness, sizeof o.search_fitness, "%s", fit);
    for (int i = 0; i < x->n_keys; i++)
        if (grid_key_equal(&x->keys[i], &o)) return i;
    return -1;
}

static int has_rows(const table_ctx *x, int k, int abl)
{
    for (int i = 0; i < x->R->n; i++)
        if (x->key_of[i] == k && x->R->rows[i].ablation == abl) return 1;
    return 0;
}

/* Table V in scenario s of the +FB cells of keys kk[0] (steered by the
 * heuristic) and kk[1] (by the model). */
static void t5_row(const table_ctx *x, const int kk[2], int s, grid_t5_row *e)
{
    int R = x->R->repeats;
    double last[2][GRID_MAX_REPEATS], v[GRID_MAX_REPEATS];
    memset(e, 0, sizeof *e);
    e->key = x->keys[kk[0]];
    e->key.search_fitness[0] = 0;
    e->scenario = s;
    for (int g = 0; g < 2; g++) {
        repeat_values(x, kk[g], ABL_FB, s, 1, 0, v);
        e->base[g] = grid_stat_of(v, R);
        repeat_values(x, kk[g], ABL_FB, s, 0, 0, last[g]);
        e->fb[g] = grid_stat_of(last[g], R);
        if (s != SCEN_MEAN) {
            e->raw_base[g] = e->base[g], e->raw_fb[g] = e->fb[g];
            continue;
        }
        repeat_values(x, kk[g], ABL_FB, SCEN_MEAN_RAW, 1, 0, v);
        e->raw_base[g] = grid_stat_of(v, R);
        repeat_values(x, kk[g], ABL_FB, SCEN_MEAN_RAW, 0, 0, v);
        e->raw_fb[g] = grid_stat_of(v, R);
    }
    e->p = compare(&e->fb[1], &e->fb[0], last[1], last[0], R, &e->few, &e->dir);
}

/* Every pair of keys with +FB rows steered by the heuristic and by the
 * model, in every scenario and the Mean row.  0 or -1. */
static int table5(const table_ctx *x, grid_tables *T)
{
    int n_rows = x->R->n_scen + T->normalised;
    T->t5 = calloc((size_t)(x->n_keys * n_rows + 1), sizeof *T->t5);
    if (!T->t5) return -1;
    for (int k = 0; k < x->n_keys; k++) {
        int kk[2] = {k, with_fitness(x, k, "llm")};
        if (strcmp(x->keys[k].search_fitness, "heuristic") || kk[1] < 0 || !has_rows(x, k, ABL_FB) ||
            !has_rows(x, kk[1], ABL_FB))
            continue;
        for (int i = 0; i < n_rows; i++)
            t5_row(x, kk, i < x->R->n_scen ? x->R->scen[i] : SCEN_MEAN, &T->t5[T->n_t5++]);
    }
    return 0;
}

double grid_random_play_fitness(int scenario, int n, uint64_t eval_seed)
{
    const eval_scenario_t *sc = eval_scenario(scenario);
    int side = PCG_DEFAULT_SIDE;
    unsigned char *maps = sc && n > 0 ? malloc((size_t)n * (size_t)(side * side)) : NULL;
    level_t *lv = maps ? malloc(sizeof *lv * (size_t)n) : NULL;
    double f = NAN;
    if (lv && ppo_play_episode(NULL, n, side, side, sc->variant, eval_seed, eval_seed, NULL, NULL, NULL, maps, NULL) == 0) {
        for (int i = 0; i < n; i++) lv[i] = (level_t){side, side, maps + (size_t)i * (size_t)(side * side)};
        f = eval_levels(sc, lv, n, NULL, NULL);
    }
    free(lv);
    free(maps);
    return f;
}

/* Random play per scenario of the grid: the floor of its normalisation;
 * on the Mean rows' scale it is 0 by definition. */
static void random_play(const grid_rows *R, grid_tables *T)
{
    for (int s = 0; s < 5; s++) T->random_play[s] = NAN;
    for (int i = 0; i < R->n_scen; i++)
        T->random_play[R->scen[i]] = grid_random_play_fitness(R->scen[i], R->n_levels, R->eval_seed);
    T->random_play_mean = T->normalised ? 0 : T->random_play[R->scen[0]];
}

int grid_tables_compute(grid_rows *R, int value, grid_tables *T)
{
    memset(T, 0, sizeof *T);
    T->value = value;
    T->normalised = R->n_scen > 1;
    T->mean_scenario = T->normalised ? 0 : R->scen[0];
    table_ctx x = {R, T, NULL, 0, NULL};
    if (R->repeats > GRID_MAX_REPEATS || number_keys(&x)) goto oom;
    random_play(R, T);
    normalise(R, T);
    int n_t2 = (R->n_scen + T->normalised) * x.n_keys;
    T->t2 = calloc((size_t)(n_t2 + 1), sizeof *T->t2);
    T->t4 = calloc((size_t)(2 * x.n_keys + 1), sizeof *T->t4);
    if (!T->t2 || !T->t4) goto oom;
    for (int i = 0; i < R->n_scen + T->normalised; i++)
        for (int k = 0; k < x.n_keys; k++) t2_row(&x, k, i < R->n_scen ? R->scen[i] : 0, &T->t2[T->n_t2++]);
    for (int k = 0; k < x.n_keys; k++)
        for (int abl = ABL_FB; abl <= ABL_FULL; abl++)
            if (has_column(&x, k, abl)) T->n_t4 += t4_row(&x, k, abl, &T->t4[T->n_t4]);
    if (table5(&x, T)) goto oom;
    free(x.keys);
    free(x.key_of);
    return 0;
oom:
    free(x.keys);
    free(x.key_of);
    grid_tables_free(T);
    return -1;
}

void grid_tables_free(grid_tables *T)
{
    free(T->t2);
    free(T->t4);
    free(T->t5);
    T->t2 = NULL;
    T->t4 = NULL;
    T->t5 = NULL;
    T->n_t2 = T->n_t4 = T->n_t5 = 0;
}
