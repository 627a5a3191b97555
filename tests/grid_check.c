/* See grid_check.h. */
#include "harness.h"
#include "grid_check.h"
#include "stats.h"
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXR 64

/* The row and the entry report under the same heading (the scenario
 * aside). */
static int same_heading(json_t *row, json_t *e)
{
    static const char *const keys[] = {"model",      "pe",         "feedback",       "feedback_input",
                                       "got_best",   "got_worst",  "prompts",        "reward_api",
                                       "search_fitness", "accept", "target_fitness"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (!json_equal(json_object_get(row, keys[i]), json_object_get(e, keys[i]))) return 0;
    return 1;
}

/* Whether a column of ablation abl reads iteration 1 (else the last). */
static int first_of(const char *abl) { return !strcmp(abl, "zs") || !strcmp(abl, "sa"); }

/* The value a row gives a column of ablation abl at iteration 1 (first)
 * or the last, or NAN when it gives none. */
static double column_value(json_t *row, const char *abl, int first)
{
    if (strcmp(json_string_value(json_object_get(row, "ablation")), abl)) return NAN;
    if (first ? json_integer_value(json_object_get(row, "iteration")) != 1 : !json_is_true(json_object_get(row, "final")))
        return NAN;
    return json_number_value(json_object_get(row, "fitness"));
}

/* Per repeat, entry e's values: raw in its scenario, or for "mean" the
 * mean over the grid's scenarios of (x - r_s) / (1 - r_s), r_s random
 * play's fitness there (raw: of x itself). */
static int entry_values(json_t *sum, json_t *e, const char *abl, int first, const int *scen, int n_scen, int raw,
                        double *v)
{
    json_t *rows = json_object_get(sum, "rows"), *rp = json_object_get(sum, "random_play");
    int repeats = 0;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        int k = (int)json_integer_value(json_object_get(r, "repeat"));
        repeats = k + 1 > repeats ? k + 1 : repeats;
    }
    json_t *sj = json_object_get(e, "scenario");
    for (int k = 0; k < repeats && k < MAXR; k++) {
        double sum_v = 0;
        for (int si = 0; si < n_scen; si++) {
            int s = scen[si];
            if (json_is_integer(sj) && json_integer_value(sj) != s) continue;
            double x = NAN;
            json_array_foreach(rows, i, r) {
                if (json_integer_value(json_object_get(r, "scenario")) != s ||
                    json_integer_value(json_object_get(r, "repeat")) != k || !same_heading(r, e))
                    continue;
                double c = column_value(r, abl, first);
                if (!isnan(c)) x = c;
            }
            char key[4];
            snprintf(key, sizeof key, "%d", s);
            double floor_s = json_number_value(json_object_get(rp, key));
            sum_v += json_is_integer(sj) || raw ? x : (x - floor_s) / (1 - floor_s);
        }
        v[k] = json_is_integer(sj) ? sum_v : sum_v / n_scen;
    }
    return repeats;
}

static void check_number(json_t *o, const char *key, double want, const char *what)
{
    json_t *g = json_object_get(o, key);
    if (isnan(want) ? !json_is_null(g) : !(json_is_number(g) && fabs(json_number_value(g) - want) < 1e-9))
        fail_msg("%s: %s is %s, want %.10g", what, key, json_is_number(g) ? "different" : "null", want);
}

static void finite_only(const double *v, int n, double *out, int *m)
{
    *m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i])) out[(*m)++] = v[i];
}

/* A Table V entry: the +FB rows of its heading steered by each fitness,
 * at iteration 1 and the last, and Welch's p of the last. */
static void check_table5(json_t *sum, json_t *e, const int *scen, int n_scen)
{
    static const char *const by[2] = {"heuristic", "llm"};
    double fin[2][MAXR];
    int m[2];
    for (int g = 0; g < 2; g++) {
        json_t *h = json_deep_copy(e);
        json_object_set_new(h, "search_fitness", json_string(by[g]));
        for (int first = 0; first < 2; first++) {
            double v[MAXR], f[MAXR], mean, sd;
            char key[64];
            int k, n = entry_values(sum, h, "fb", first, scen, n_scen, 0, v);
            finite_only(v, n, f, &k);
            stats_mean_sd(f, k, &mean, &sd);
            snprintf(key, sizeof key, "%s_steered_%s", by[g], first ? "base" : "fb");
            check_number(e, key, mean, "table5");
            if (!first) memcpy(fin[g], f, sizeof(double) * (size_t)k), m[g] = k;
        }
        json_decref(h);
    }
    int few = m[0] && m[1] && (m[0] < 3 || m[1] < 3);
    assert_int_equal(json_is_true(json_object_get(e, "too_few_runs")), few);
    check_number(e, "p", few ? NAN : stats_welch_p(fin[1], m[1], fin[0], m[0], NULL, NULL), "table5 p");
}

void grid_check_summary(const char *dir, int want_finished)
{
    char path[PATH_MAX + 64];
    const char *files[] = {"summary.html", "tables.md", "rows.csv", "table2.csv", "p_values.csv", "summary.txt"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        if (!pcg_test_exists(path)) fail_msg("%s is missing", path);
    }
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "cells_finished")), want_finished);
    json_t *rows = json_object_get(j, "rows"), *t2 = json_object_get(j, "table2"), *e;
    assert_true(json_array_size(rows) > 0);
    int scen[4], n_scen = 0;
    size_t i;
    json_array_foreach(rows, i, e) {
        int s = (int)json_integer_value(json_object_get(e, "scenario")), seen = 0;
        for (int k = 0; k < n_scen; k++) seen |= scen[k] == s;
        if (!seen && n_scen < 4) scen[n_scen++] = s;
    }
    assert_true(json_array_size(t2) > 0);
    json_array_foreach(t2, i, e) {
        for (int raw = 0; raw < 2; raw++) {
            double v[MAXR], f[MAXR], m, sd;
            const char *abl = json_string_value(json_object_get(e, "ablation"));
            int n = entry_values(j, e, abl, first_of(abl), scen, n_scen, raw, v), k;
            finite_only(v, n, f, &k);
            stats_mean_sd(f, k, &m, &sd);
            char what[160];
            snprintf(what, sizeof what, "table2 entry %zu (%s %s%s)", i, json_string_value(json_object_get(e, "pe")),
                     json_string_value(json_object_get(e, "ablation")), raw ? ", raw" : "");
            assert_int_equal(json_integer_value(json_object_get(e, raw ? "raw_n" : "n")), k);
            check_number(e, raw ? "raw_mean" : "mean", m, what);
            check_number(e, raw ? "raw_std" : "std", sd, what);
        }
    }
    json_array_foreach(json_object_get(j, "p_values"), i, e) {
        double a[MAXR], b[MAXR], fa[MAXR], fb[MAXR];
        int n = entry_values(j, e, "full", 0, scen, n_scen, 0, a), na, nb;
        entry_values(j, e, json_string_value(json_object_get(e, "vs")), 1, scen, n_scen, 0, b);
        finite_only(a, n, fa, &na);
        finite_only(b, n, fb, &nb);
        /* fewer than three seeds in a column with seeds: no test */
        int few = na && nb && (na < 3 || nb < 3);
        assert_int_equal(json_is_true(json_object_get(e, "too_few_runs")), few);
        check_number(e, "p", few ? NAN : stats_welch_p(fa, na, fb, nb, NULL, NULL), "p-value");
    }
    json_array_foreach(json_object_get(j, "table5"), i, e) check_table5(j, e, scen, n_scen);
    json_decref(j);
}
