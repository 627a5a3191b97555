/* The judge benchmark (host/prefer/prefer_bench.h) on fixed data: its
 * Spearman values against an independent computation (average ranks for
 * ties, Pearson on the ranks), pair agreement and the group gap counted by
 * hand, and damaged input refused. */
#include "harness.h"
#include "prefer_bench.h"
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Average ranks (1-based), ties sharing the mean of their positions. */
static void ranks(const double *v, int n, double *r)
{
    for (int i = 0; i < n; i++) {
        int less = 0, equal = 0;
        for (int k = 0; k < n; k++) {
            less += v[k] < v[i];
            equal += v[k] == v[i];
        }
        r[i] = less + (equal + 1) / 2.0;
    }
}

static double spearman_by_hand(const double *x, const double *y, int n)
{
    double rx[16], ry[16], mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
    ranks(x, n, rx);
    ranks(y, n, ry);
    for (int i = 0; i < n; i++) {
        mx += rx[i] / n;
        my += ry[i] / n;
    }
    for (int i = 0; i < n; i++) {
        sxy += (rx[i] - mx) * (ry[i] - my);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - my) * (ry[i] - my);
    }
    return sxy / sqrt(sxx * syy);
}

static void write_assessments(const char *path, const char *judge, const double *rating, const double *mastery, int n)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < n; i++)
        fprintf(f,
                "{\"trajectory\":\"t/%d.jsonl\",\"judge\":\"%s\",\"overall\":%g,\"dimensions\":{\"mastery\":{\"score\":%g},"
                "\"curiosity\":{\"score\":3}},\"map\":[\"@.%sD\"]}\n",
                i, judge, rating[i], mastery[i], i % 2 ? "k" : "#");
    fclose(f);
}

static void prefer_bench_fixed_data(void **state)
{
    (void)state;
    enum { N = 6 };
    static const double ra[N] = {1, 4, 4, 6, 8, 9}, rb[N] = {2, 3, 6, 5, 6, 10};
    static const double ma[N] = {1, 2, 2, 3, 5, 4}, mb[N] = {5, 4, 3, 3, 2, 1};
    char pa[600], pb[600], err[400];
    snprintf(pa, sizeof pa, "%s/bench_a.jsonl", pcg_test_tmpdir());
    snprintf(pb, sizeof pb, "%s/bench_b.jsonl", pcg_test_tmpdir());
    write_assessments(pa, "judge-a", ra, ma, N);
    write_assessments(pb, "judge-b", rb, mb, N);
    char *paths[2] = {pa, pb};
    eval_scenario_t s = *eval_scenario(1);
    bench_data d;
    assert_int_equal(bench_read(paths, 2, &s, &d, err, sizeof err), 0);
    assert_int_equal(d.n_plays, N);
    assert_int_equal(d.n_judges, 2);
    json_t *doc = bench_compare(&d);
    bench_free(&d);
    json_t *a = json_array_get(json_object_get(doc, "judges"), 0), *b = json_array_get(json_object_get(doc, "judges"), 1);
    assert_near(json_number_value(json_object_get(json_object_get(a, "dimension_rho"), "mastery")),
                spearman_by_hand(ma, ra, N), 1e-12);
    assert_near(json_number_value(json_object_get(json_object_get(b, "dimension_rho"), "mastery")),
                spearman_by_hand(mb, rb, N), 1e-12);
    /* a constant dimension has no correlation */
    assert_true(json_is_null(json_object_get(json_object_get(a, "dimension_rho"), "curiosity")));
    /* the odd plays have a key between player and door: fitness 1 then 0 */
    double fit[N];
    for (int i = 0; i < N; i++) fit[i] = i % 2 ? 2.0 / 3.0 : 0.0; /* scenario 1: BAT not met, the others right */
    assert_near(json_number_value(json_object_get(a, "fitness_rho")), spearman_by_hand(fit, ra, N), 1e-12);
    json_t *pair = json_array_get(json_object_get(doc, "pairs"), 0);
    assert_near(json_number_value(json_object_get(pair, "rating_rho")), spearman_by_hand(ra, rb, N), 1e-12);
    long agree = 0, pairs = 0;
    for (int p = 0; p < N; p++)
        for (int q = p + 1; q < N; q++) {
            double da = ra[p] - ra[q], db = rb[p] - rb[q];
            if (da == 0 || db == 0) continue;
            pairs++;
            agree += (da > 0) == (db > 0);
        }
    assert_int_equal(json_integer_value(json_object_get(pair, "pairs")), pairs);
    assert_near(json_number_value(json_object_get(pair, "agreement")), (double)agree / pairs, 1e-12);
    /* thirds by the mean of both judges (1.5, 3.5, 5, 5.5, 7, 9.5): low =
     * plays 0, 1; high = 4, 5 */
    assert_near(json_number_value(json_object_get(a, "group_gap")), (8 + 9) / 2.0 - (1 + 4) / 2.0, 1e-12);
    json_decref(doc);
}

static void prefer_bench_bad_input(void **state)
{
    (void)state;
    char path[600], err[400];
    static const char *const bad[] = {
        "{\"judge\":\"j\",\"overall\":5}\n",
        "{\"trajectory\":\"t\",\"judge\":\"j\",\"overall\":12,\"dimensions\":{}}\n",
        "{\"trajectory\":\"t\",\"judge\":\"j\",\"overall\":5,\"dimensions\":{\"meaning\":{\"score\":0}}}\n",
        "[]\n",
    };
    eval_scenario_t s = *eval_scenario(1);
    /* names too long to keep apart: the judges or the plays would merge */
    char long_judge[400], long_play[400];
    snprintf(long_judge, sizeof long_judge, "{\"trajectory\":\"t\",\"judge\":\"%0200d\",\"overall\":5,\"dimensions\":{}}\n", 7);
    snprintf(long_play, sizeof long_play, "{\"trajectory\":\"%0300d\",\"judge\":\"j\",\"overall\":5,\"dimensions\":{}}\n", 7);
    const char *const longer[] = {long_judge, long_play};
    for (size_t i = 0; i < sizeof bad / sizeof *bad + 2; i++) {
        snprintf(path, sizeof path, "%s/bench_bad_%zu.jsonl", pcg_test_tmpdir(), i);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(i < sizeof bad / sizeof *bad ? bad[i] : longer[i - sizeof bad / sizeof *bad], f);
        fclose(f);
        char *paths[1] = {path};
        bench_data d;
        err[0] = 0;
        assert_int_equal(bench_read(paths, 1, &s, &d, err, sizeof err), -1);
        assert_non_null(strstr(err, "line 1"));
    }
    /* a damaged map is no fitness, not an error */
    snprintf(path, sizeof path, "%s/bench_map.jsonl", pcg_test_tmpdir());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"trajectory\":\"t\",\"judge\":\"j\",\"overall\":5,\"dimensions\":{},\"map\":[\"@.?D\",\"..\"]}\n", f);
    fclose(f);
    char *paths[1] = {path};
    bench_data d;
    assert_int_equal(bench_read(paths, 1, &s, &d, err, sizeof err), 0);
    assert_true(isnan(d.fitness[0]));
    bench_free(&d);
}

PCG_TESTS(prefer_bench, cmocka_unit_test(prefer_bench_fixed_data), cmocka_unit_test(prefer_bench_bad_input))
