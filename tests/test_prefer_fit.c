/* Preference models (host/prefer/prefer_fit.h): the ridge solver against
 * an exact answer, imputation from the fold, and, end to end through play
 * and the offline judge, the planted weights' signs recovered and the
 * persona-mean baseline beaten on held-out generators. */
#include "harness.h"
#include "judge_offline.h"
#include "prefer_fit.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* y = 2 + 0.5 x0 - 0.3 x5 exactly: with lambda 0 the fit is the truth, in
 * the dimensions' own units. */
static void ridge_exact_and_imputed(void **state)
{
    (void)state;
    static pref_obs obs[60];
    static char gens[6][160], pers[1][64];
    pref_data d = {obs, 60, 0, gens, 6, pers, 1};
    strcpy(pers[0], "p");
    for (int g = 0; g < 6; g++) snprintf(gens[g], sizeof gens[g], "g%d", g);
    for (int i = 0; i < 60; i++) {
        obs[i].generator = i % 6;
        obs[i].persona = 0;
        for (int j = 0; j < PREFER_N_DIMS; j++) {
            unsigned h = (unsigned)(i * 12 + j + 1) * 2654435761u; /* scattered, so no two columns align */
            obs[i].x[j] = 1 + (h >> 16) % 5;
        }
        obs[i].y = 2 + 0.5 * obs[i].x[0] - 0.3 * obs[i].x[5];
    }
    pref_model m;
    assert_int_equal(pref_fit_persona(&d, 0, 0.0, &m), 0);
    assert_near(m.w[0], 0.5, 1e-6);
    assert_near(m.w[5], -0.3, 1e-6);
    assert_near(m.b, 2.0, 1e-6);
    for (int j = 1; j < PREFER_N_DIMS; j++)
        if (j != 5) assert_near(m.w[j], 0.0, 1e-6);
    pref_scores s;
    assert_int_equal(pref_evaluate(&d, PREF_SEPARATE, 0.0, &s), 0);
    assert_near(s.mae, 0.0, 1e-6);
    assert_near(s.order, 1.0, 0);
    /* ridge shrinks towards zero, never past it */
    assert_int_equal(pref_fit_persona(&d, 0, 10.0, &m), 0);
    assert_true(m.w[0] > 0 && m.w[0] < 0.5);
    assert_true(m.w[5] < 0 && m.w[5] > -0.3);
    /* a missing dimension takes the fold's median and the fit still runs */
    obs[7].x[3] = NAN;
    assert_int_equal(pref_evaluate(&d, PREF_SEPARATE, 1.0, &s), 0);
    assert_true(s.mae < 0.2);
    /* fewer than three generators: no held-out folds */
    d.n_generators = 2;
    for (int i = 0; i < 60; i++) obs[i].generator = i % 2;
    assert_int_equal(pref_evaluate(&d, PREF_SEPARATE, 1.0, &s), -1);
}

/* Twelve generators of eight levels each, played by the explorer and
 * rated by the offline judge's five synthetic personas. */
static void prefer_fit_recovers_planted_weights(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    char dir[512], out[65536];
    snprintf(dir, sizeof dir, "%s/prefer", pcg_test_tmpdir());
    char bin[PATH_MAX];
    assert_non_null(realpath(pcg_test_binary(), bin));
    int rc = pcg_test_sh(out, sizeof out,
                         "set -e; cd %s 2>/dev/null || mkdir -p %s && cd %s; for g in 1 2 3 4 5 6 7 8 9 10 11 12; do "
                         "p=start; [ $((g %% 2)) = 1 ] && p=random; %s levels --n 8 --seed $g --policy $p --out L/g$g "
                         ">/dev/null; %s play --player explorer --seed $g --curiosity 0.$((g %% 9)) --out T/g$g L/g$g "
                         ">/dev/null; done; for p in efficiency_essentialist narrative_architect social_lubricator "
                         "system_purist thrill_seeker; do %s assess --judge offline --persona $p T/*/*.jsonl; done > "
                         "obs.jsonl; %s assess --judge offline T/g1/*.jsonl >> obs.jsonl; %s prefer fit --json obs.jsonl",
                         dir, dir, dir, bin, bin, bin, bin, bin);
    if (rc) fail_msg("pipeline failed (%d): %s", rc, out);
    json_t *doc = json_loads(out, 0, NULL);
    assert_non_null(doc);
    assert_int_equal(json_integer_value(json_object_get(doc, "observations")), 5 * 96);
    assert_int_equal(json_integer_value(json_object_get(doc, "skipped")), 8); /* the neutral ratings */
    json_t *models = json_object_get(doc, "models");
    double mae[PREF_N_FAMILIES];
    for (int f = 0; f < PREF_N_FAMILIES; f++)
        mae[f] = json_number_value(json_object_get(json_array_get(models, (size_t)f), "mae"));
    assert_true(mae[PREF_SEPARATE] < mae[PREF_PERSONA_MEAN]);
    assert_true(mae[PREF_SEPARATE] < mae[PREF_SHARED]);
    assert_true(mae[PREF_SEPARATE] < mae[PREF_NO_PXI]);
    json_t *coef = json_object_get(doc, "coefficients");
    for (int p = 0; p < PREFER_N_PERSONAS; p++) {
        const double *w = persona_weights(p, NULL);
        json_t *fit = json_object_get(json_object_get(coef, persona_name(p)), "weights");
        assert_non_null(fit);
        for (int j = 0; j < PREFER_N_DIMS; j++) {
            json_t *v = json_object_get(fit, dim_id(j));
            if (fabs(w[j]) < 0.5 || json_is_null(v)) continue;
            if ((json_number_value(v) > 0) != (w[j] > 0))
                fail_msg("%s: %s fitted %+.3f, planted %+.2f", persona_name(p), dim_id(j), json_number_value(v), w[j]);
        }
    }
    json_decref(doc);
}

static void prefer_fit_bad_input(void **state)
{
    (void)state;
    char path[600], out[4096];
    static const char *const bad[] = {
        "{\"persona\":\"p\",\"overall\":11,\"dimensions\":{}}\n",
        "{\"persona\":\"p\",\"overall\":5,\"dimensions\":{\"mastery\":{\"score\":7}}}\n",
        "{\"persona\":\"p\",\"overall\":5,\"dimensions\":{\"mastery\":{\"score\":\"high\"}}}\n",
        "prose instead of JSON\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(path, sizeof path, "%s/bad_obs_%zu.jsonl", pcg_test_tmpdir(), i);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(bad[i], f);
        fclose(f);
        int rc = pcg_test_sh(out, sizeof out, "%s prefer fit %s 2>&1", pcg_test_binary(), path);
        assert_int_equal(rc, 1);
        assert_int_equal(pcg_test_count_lines(out), 1);
        assert_non_null(strstr(out, "line 1"));
    }
    /* names too long to keep apart: generators or personas would merge */
    static const char *const longer[] = {"{\"persona\":\"p\",\"trajectory\":\"%0200d/t.jsonl\",\"overall\":5,"
                                         "\"dimensions\":{\"mastery\":{\"score\":3}}}\n",
                                         "{\"persona\":\"%0200d\",\"overall\":5,\"dimensions\":{\"mastery\":{\"score\":3}}}\n"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/long_obs_%zu.jsonl", pcg_test_tmpdir(), i);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, longer[i], 7);
        fclose(f);
        int rc = pcg_test_sh(out, sizeof out, "%s prefer fit %s 2>&1", pcg_test_binary(), path);
        assert_int_equal(rc, 1);
        if (!strstr(out, "line 1: the generator")) fail_msg("%zu: %s", i, out);
    }
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s prefer fit 2>&1", pcg_test_binary()), 2);
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s prefer guess x 2>&1", pcg_test_binary()), 2);
    assert_int_equal(pcg_test_count_lines(out), 1);
}

PCG_TESTS(prefer_fit, cmocka_unit_test(ridge_exact_and_imputed), cmocka_unit_test(prefer_fit_recovers_planted_weights),
          cmocka_unit_test(prefer_fit_bad_input))
