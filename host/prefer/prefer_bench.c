/* The judge benchmark (prefer_bench.h). */
#include "prefer_bench.h"
#include "prefer_fit.h"
#include "levelio.h"
#include "util.h"
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_FILE_MAX (256L << 20)
/* a judge and its persona fit the key of 192 bytes with " / " between */
#define JUDGE_NAME_MAX 120
#define PERSONA_NAME_MAX 60

static int find_or_add(char *table, size_t width, int *n, int max, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (!strncmp(table + (size_t)i * width, name, width - 1)) return i;
    if (*n >= max) return -1;
    snprintf(table + (size_t)*n * width, width, "%s", name);
    return (*n)++;
}

/* The map rows of an assessment as a level, scored; NaN without one. */
static double map_fitness(const json_t *map, const eval_scenario_t *s)
{
    size_t h = json_array_size(map), w = h ? strlen(json_string_value(json_array_get(map, 0)) ?: "") : 0;
    if (!h || !w || h > PCG_MAX_SIDE || w > PCG_MAX_SIDE) return NAN;
    unsigned char t[PCG_MAX_CELLS];
    for (size_t r = 0; r < h; r++) {
        const char *row = json_string_value(json_array_get(map, r));
        if (!row || strlen(row) != w) return NAN;
        for (size_t c = 0; c < w; c++) {
            int tile = tile_of_char(row[c]);
            if (tile < TILE_EMPTY) return NAN;
            t[r * w + c] = (unsigned char)tile;
        }
    }
    level_t l = {(int)h, (int)w, t};
    eval_level_t m;
    eval_level(s, &l, &m);
    return m.score;
}

static int read_line(const json_t *a, const eval_scenario_t *s, bench_data *d, char *err, int errlen)
{
    const char *judge = json_string_value(json_object_get(a, "judge"));
    const char *persona = json_string_value(json_object_get(a, "persona"));
    const char *play = json_string_value(json_object_get(a, "trajectory"));
    if (!judge || !play) {
        say_to(err, errlen, "an assessment needs judge and trajectory");
        return -1;
    }
    /* names are kept to a width: longer ones would be cut, and two judges or
     * plays alike up to the cut would be taken for one, a rating of the one
     * silently replacing the other's */
    if (strlen(judge) > JUDGE_NAME_MAX || (persona && strlen(persona) > PERSONA_NAME_MAX) ||
        strlen(play) >= sizeof *d->plays) {
        say_to(err, errlen, "judge (at most %d bytes), persona (%d) or trajectory (%zu) too long", JUDGE_NAME_MAX,
               PERSONA_NAME_MAX, sizeof *d->plays - 1);
        return -1;
    }
    char key[192];
    snprintf(key, sizeof key, "%s%s%s", judge, persona ? " / " : "", persona ? persona : "");
    int j = find_or_add((char *)d->judges, sizeof *d->judges, &d->n_judges, BENCH_MAX_JUDGES, key);
    int p = find_or_add((char *)d->plays, sizeof *d->plays, &d->n_plays, BENCH_MAX_PLAYS, play);
    if (j < 0 || p < 0) {
        say_to(err, errlen, "at most %d judges and %d plays", BENCH_MAX_JUDGES, BENCH_MAX_PLAYS);
        return -1;
    }
    const json_t *y = json_object_get(a, "overall");
    double v = json_number_value(y);
    if (y && !json_is_null(y) && (!json_is_number(y) || v < 1 || v > 10)) {
        say_to(err, errlen, "overall must be 1..10 or null");
        return -1;
    }
    size_t at = (size_t)j * BENCH_MAX_PLAYS + (size_t)p;
    d->rating[at] = json_is_number(y) ? v : NAN;
    int missing;
    if (pref_scores_json(json_object_get(a, "dimensions"), d->dims + at * PREFER_N_DIMS, &missing, err, errlen))
        return -1;
    if (isnan(d->fitness[p])) d->fitness[p] = map_fitness(json_object_get(a, "map"), s);
    return 0;
}

typedef struct {
    const eval_scenario_t *s;
    bench_data *d;
} bench_ctx;

static int bench_line(const json_t *o, int line, void *ctx, char *err, int errlen)
{
    bench_ctx *c = ctx;
    (void)line;
    return read_line(o, c->s, c->d, err, errlen);
}

int bench_read(char **paths, int n, const eval_scenario_t *s, bench_data *d, char *err, int errlen)
{
    memset(d, 0, sizeof *d);
    size_t cells = (size_t)BENCH_MAX_JUDGES * BENCH_MAX_PLAYS;
    d->judges = calloc(BENCH_MAX_JUDGES, sizeof *d->judges);
    d->plays = calloc(BENCH_MAX_PLAYS, sizeof *d->plays);
    d->rating = malloc(sizeof(double) * cells);
    d->dims = malloc(sizeof(double) * cells * PREFER_N_DIMS);
    d->fitness = malloc(sizeof(double) * BENCH_MAX_PLAYS);
    if (!d->judges || !d->plays || !d->rating || !d->dims || !d->fitness) {
        bench_free(d);
        say_to(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < cells; i++) d->rating[i] = NAN;
    for (size_t i = 0; i < cells * PREFER_N_DIMS; i++) d->dims[i] = NAN;
    for (int i = 0; i < BENCH_MAX_PLAYS; i++) d->fitness[i] = NAN;
    bench_ctx ctx = {s, d};
    for (int i = 0; i < n; i++)
        if (read_jsonl_file(paths[i], BENCH_FILE_MAX, bench_line, &ctx, err, errlen)) {
            bench_free(d);
            return -1;
        }
    return 0;
}

void bench_free(bench_data *d)
{
    free(d->judges);
    free(d->plays);
    free(d->rating);
    free(d->dims);
    free(d->fitness);
    memset(d, 0, sizeof *d);
}

static double rating_of(const bench_data *d, int j, int p) { return d->rating[(size_t)j * BENCH_MAX_PLAYS + p]; }

/* Spearman's rho of the pairs where both are known; null below three
 * pairs or when either side is constant. */
static json_t *spearman(const double *x, const double *y, int n)
{
    double *a = malloc(sizeof(double) * (size_t)n * 4);
    if (!a) return json_null();
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i]) && !isnan(y[i])) {
            a[m] = x[i];
            a[n + m] = y[i];
            m++;
        }
    double rho = m >= 3 ? gsl_stats_spearman(a, 1, a + n, 1, (size_t)m, a + 2 * n) : NAN;
    free(a);
    return isfinite(rho) ? json_real(rho) : json_null();
}

static json_t *judge_json(const bench_data *d, int j, const int *group)
{
    double *y = malloc(sizeof(double) * (size_t)d->n_plays * 2), *x = y ? y + d->n_plays : NULL;
    if (!y) return json_null();
    for (int p = 0; p < d->n_plays; p++) y[p] = rating_of(d, j, p);
    json_t *dims = json_object();
    for (int k = 0; k < PREFER_N_DIMS; k++) {
        for (int p = 0; p < d->n_plays; p++) x[p] = d->dims[((size_t)j * BENCH_MAX_PLAYS + p) * PREFER_N_DIMS + k];
        json_object_set_new(dims, dim_id(k), spearman(x, y, d->n_plays));
    }
    double sum[3] = {0}, cnt[3] = {0};
    int rated = 0;
    for (int p = 0; p < d->n_plays; p++)
        if (!isnan(y[p])) {
            sum[group[p]] += y[p];
            cnt[group[p]]++;
            rated++;
        }
    json_t *groups = json_object();
    static const char *const names[3] = {"low", "middle", "high"};
    for (int g = 0; g < 3; g++) json_object_set_new(groups, names[g], cnt[g] ? json_real(sum[g] / cnt[g]) : json_null());
    json_t *o = json_pack("{s:s, s:i, s:o, s:o, s:o}", "judge", d->judges[j], "rated", rated, "dimension_rho", dims,
                          "fitness_rho", spearman(d->fitness, y, d->n_plays), "group_mean", groups);
    if (cnt[0] && cnt[2]) json_object_set_new(o, "group_gap", json_real(sum[2] / cnt[2] - sum[0] / cnt[0]));
    free(y);
    return o;
}

/* Thirds of the plays by the mean rating of every judge (0 low .. 2 high). */
static void play_groups(const bench_data *d, int *group)
{
    double *mean = malloc(sizeof(double) * (size_t)d->n_plays);
    size_t *order = malloc(sizeof(size_t) * (size_t)d->n_plays);
    if (!mean || !order) {
        for (int p = 0; p < d->n_plays; p++) group[p] = 1;
    } else {
        for (int p = 0; p < d->n_plays; p++) {
            double s = 0;
            int n = 0;
            for (int j = 0; j < d->n_judges; j++)
                if (!isnan(rating_of(d, j, p))) {
                    s += rating_of(d, j, p);
                    n++;
                }
            mean[p] = n ? s / n : 5.5;
        }
        gsl_sort_index(order, mean, 1, (size_t)d->n_plays);
        for (int i = 0; i < d->n_plays; i++) group[order[i]] = 3 * i / d->n_plays;
    }
    free(mean);
    free(order);
}

static json_t *pair_json(const bench_data *d, int a, int b)
{
    double *x = malloc(sizeof(double) * (size_t)d->n_plays * 2), *y = x ? x + d->n_plays : NULL;
    if (!x) return json_null();
    long agree = 0, pairs = 0;
    for (int p = 0; p < d->n_plays; p++) {
        x[p] = rating_of(d, a, p);
        y[p] = rating_of(d, b, p);
    }
    for (int p = 0; p < d->n_plays; p++)
        for (int q = p + 1; q < d->n_plays; q++) {
            double da = x[p] - x[q], db = y[p] - y[q];
            if (isnan(da) || isnan(db) || da == 0 || db == 0) continue;
            agree += (da > 0) == (db > 0);
            pairs++;
        }
    json_t *o = json_pack("{s:s, s:s, s:o, s:I}", "a", d->judges[a], "b", d->judges[b], "rating_rho",
                          spearman(x, y, d->n_plays), "pairs", (json_int_t)pairs);
    json_object_set_new(o, "agreement", pairs ? json_real((double)agree / pairs) : json_null());
    free(x);
    return o;
}

json_t *bench_compare(const bench_data *d)
{
    int *group = malloc(sizeof(int) * (size_t)(d->n_plays + 1));
    if (!group) return NULL;
    play_groups(d, group);
    json_t *judges = json_array(), *pairs = json_array();
    for (int j = 0; j < d->n_judges; j++) json_array_append_new(judges, judge_json(d, j, group));
    for (int a = 0; a < d->n_judges; a++)
        for (int b = a + 1; b < d->n_judges; b++) json_array_append_new(pairs, pair_json(d, a, b));
    free(group);
    return json_pack("{s:i, s:i, s:o, s:o}", "plays", d->n_plays, "judges_n", d->n_judges, "judges", judges, "pairs",
                     pairs);
}
