/* What a grid's summary says where its figures are thin or need a
 * reference: comparisons over fewer than three seeds are not tested and say
 * so, a significant difference shows its direction, a grid of one scenario
 * is not normalised, the page links every cell's report (escaped), and
 * random play is measured as `pcgrllm levels --policy random` + `eval`
 * measure it.  Rows are built by hand, as grid_rows_read gives them. */
#include "harness.h"
#include "grid_report.h"
#include "grid_rows.h"
#include "run.h"
#include "stats.h"
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add(grid_rows *R, const char *model, int scenario, int abl, int repeat, int iteration, double fitness,
                int final)
{
    grid_row w;
    grid_row_blank(&w);
    snprintf(w.key.model, sizeof w.key.model, "%s", model);
    snprintf(w.key.pe, sizeof w.key.pe, "cot");
    snprintf(w.key.feedback, sizeof w.key.feedback, "specific");
    snprintf(w.key.feedback_input, sizeof w.key.feedback_input, "text");
    w.scenario = scenario, w.ablation = abl, w.repeat = repeat, w.iteration = iteration, w.final = final, w.ok = 1;
    w.seed = 1000u * (unsigned)repeat;
    w.fitness = w.best_so_far = fitness;
    snprintf(w.cell, sizeof w.cell, "s%d-%s-r%d", scenario, abl == ABL_ZS ? "zs" : "cot-full", repeat);
    assert_int_equal(grid_rows_add(R, &w), 0);
}

/* Zero-shot and a two-iteration PCGRLLM cell per seed, in scenario s. */
static void add_seeds(grid_rows *R, const char *model, int s, const double *zs, const double *full, int n)
{
    for (int r = 0; r < n; r++) {
        add(R, model, s, ABL_ZS, r, 1, zs[r], 1);
        add(R, model, s, ABL_FULL, r, 1, zs[r], 0);
        add(R, model, s, ABL_FULL, r, 2, full[r], 1);
    }
}

/* text (freed here) holds every string of want and none of never (both
 * NULL-terminated). */
static void check_text(char *text, const char *const *want, const char *const *never)
{
    assert_non_null(text);
    for (; *want; want++)
        if (!strstr(text, *want)) fail_msg("missing: %s", *want);
    for (; *never; never++)
        if (strstr(text, *never)) fail_msg("should not be there: %s", *never);
    free(text);
}

static json_t *p_entry(json_t *j, int scenario)
{
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(j, "p_values"), i, o) {
        json_t *s = json_object_get(o, "scenario");
        if (scenario ? json_integer_value(s) == scenario : json_is_string(s)) return o;
    }
    fail_msg("no p-value entry for scenario %d", scenario);
    return NULL;
}

/* Two seeds, PCGRLLM below zero-shot with little spread: Welch's test
 * alone would call it significant (p < 0.05); with two seeds a side the
 * table says the comparison has too few runs and marks nothing. */
static void grid_two_seeds_too_few_for_a_test(void **state)
{
    (void)state;
    grid_rows R;
    grid_tables T;
    int scen[] = {1, 3}, abl[] = {ABL_ZS, ABL_FULL};
    const double zs[] = {0.911, 0.922}, full[] = {0.800, 0.811}, zs3[] = {0.2, 0.3}, full3[] = {0.4, 0.5};
    assert_int_equal(grid_rows_init(&R, scen, 2, 2, abl, 2), 0);
    add_seeds(&R, "offline", 1, zs, full, 2);
    add_seeds(&R, "offline", 3, zs3, full3, 2);
    assert_true(stats_welch_p(full, 2, zs, 2, NULL, NULL) < 0.05); /* what a dagger would have rested on */
    assert_int_equal(grid_tables_compute(&R, GRID_VALUE_FINAL, &T), 0);
    for (int i = 0; i < T.n_t2; i++) {
        assert_true(T.t2[i].few_zs);
        assert_true(isnan(T.t2[i].p_zs));
    }
    check_text(grid_tables_markdown(&R, &T, 1),
               (const char *const[]){"| 1 | CoT | **0.917 ± 0.008 (n=2, too few)** | 0.806 ± 0.008 (n=2, too few) | n < 3 |",
                                     "Too few runs for a test: a value marked \"too few\" is over fewer than 3 seeds",
                                     NULL},
               (const char *const[]){"†↑", "†↓", NULL});
    check_text(grid_tables_html(&R, &T, "two seeds"),
               (const char *const[]){"<td>0.806 ± 0.008 (n=2, too few)</td><td>n &lt; 3</td>",
                                     "<p>Too few runs for a test", NULL},
               (const char *const[]){"†↑", "†↓", NULL});
    json_t *j = grid_summary_json(&R, &T), *p = p_entry(j, 1), *o;
    assert_true(json_is_null(json_object_get(p, "p")));
    assert_true(json_is_true(json_object_get(p, "too_few_runs")));
    assert_false(json_is_true(json_object_get(p, "significant")));
    assert_string_equal(json_string_value(json_object_get(p, "direction")), "lower");
    assert_string_equal(json_string_value(json_object_get(p, "mark")), "");
    assert_int_equal(json_integer_value(json_object_get(p, "n_vs")), 2);
    size_t i;
    json_array_foreach(json_object_get(j, "table2"), i, o) assert_true(json_is_true(json_object_get(o, "too_few_runs")));
    assert_int_equal(json_integer_value(json_object_get(j, "min_test_n")), 3);
    json_decref(j);
    grid_tables_free(&T);
    grid_rows_free(&R);
}

/* Three seeds: PCGRLLM clearly worse than zero-shot in scenario 1 and
 * clearly better in scenario 3; each mark says which. */
static void grid_significant_marks_show_direction(void **state)
{
    (void)state;
    grid_rows R;
    grid_tables T;
    int scen[] = {1, 3}, abl[] = {ABL_ZS, ABL_FULL};
    const double zs1[] = {0.90, 0.91, 0.92}, full1[] = {0.60, 0.61, 0.62};
    const double zs3[] = {0.10, 0.12, 0.11}, full3[] = {0.50, 0.52, 0.51};
    assert_int_equal(grid_rows_init(&R, scen, 2, 3, abl, 2), 0);
    add_seeds(&R, "offline", 1, zs1, full1, 3);
    add_seeds(&R, "offline", 3, zs3, full3, 3);
    assert_int_equal(grid_tables_compute(&R, GRID_VALUE_FINAL, &T), 0);
    check_text(grid_tables_markdown(&R, &T, 1),
               (const char *const[]){"| 1 | CoT | **0.910 ± 0.010** | 0.610 ± 0.010 †↓ | 0.000 |",
                                     "| 3 | CoT | 0.110 ± 0.010 | **0.510 ± 0.010 †↑** | 0.000 |",
                                     "↑ its mean is higher (better) than that column's, ↓ lower (worse)", NULL},
               (const char *const[]){", too few)", "Too few runs for a test:", NULL});
    check_text(grid_tables_html(&R, &T, "marks"),
               (const char *const[]){"<td>0.610 ± 0.010 †↓</td>", "<td><b>0.510 ± 0.010 †↑</b></td>", NULL},
               (const char *const[]){NULL});
    json_t *j = grid_summary_json(&R, &T), *p1 = p_entry(j, 1), *p3 = p_entry(j, 3);
    assert_string_equal(json_string_value(json_object_get(p1, "direction")), "lower");
    assert_string_equal(json_string_value(json_object_get(p1, "mark")), "†↓");
    assert_true(json_is_true(json_object_get(p1, "significant")));
    assert_string_equal(json_string_value(json_object_get(p3, "direction")), "higher");
    assert_string_equal(json_string_value(json_object_get(p3, "mark")), "†↑");
    assert_true(json_number_value(json_object_get(p3, "p")) < 0.05);
    json_decref(j);
    grid_tables_free(&T);
    grid_rows_free(&R);
}

/* One scenario: no Mean row, no normalisation (the values by iteration
 * are the raw fitness), and the summary says why; random play is the
 * scenario's own score. */
static void grid_one_scenario_not_normalised(void **state)
{
    (void)state;
    grid_rows R;
    grid_tables T;
    int scen[] = {1}, abl[] = {ABL_ZS, ABL_FULL};
    const double zs[] = {0.90, 0.91, 0.95}, full[] = {0.80, 0.85, 0.81};
    assert_int_equal(grid_rows_init(&R, scen, 1, 3, abl, 2), 0);
    add_seeds(&R, "offline", 1, zs, full, 3);
    assert_int_equal(grid_tables_compute(&R, GRID_VALUE_FINAL, &T), 0);
    assert_false(T.normalised);
    assert_int_equal(T.n_t2, 1); /* scenario 1 only */
    assert_int_equal(T.t2[0].scenario, 1);
    assert_int_equal(T.n_t4, 1);
    assert_true(fabs(T.t4[0].it[1].mean - (0.80 + 0.85 + 0.81) / 3) < 1e-12); /* raw, not (x - min)/(max - min) */
    assert_true(fabs(T.random_play_mean - T.random_play[1]) < 1e-12);
    check_text(grid_tables_markdown(&R, &T, 1),
               (const char *const[]){"No Mean row: a grid of one scenario is not normalised",
                                     "Table IV: by iteration (scenario 1, raw fitness: one scenario is not normalised)",
                                     "| CoT | PCGRLLM | **0.920 ± 0.026** | 0.820 ± 0.026 |", NULL},
               (const char *const[]){"| Mean |", "Scenario 1: min", NULL});
    json_t *j = grid_summary_json(&R, &T), *o;
    assert_true(json_is_false(json_object_get(j, "normalised")));
    json_t *norm = json_object_get(json_object_get(j, "notes"), "normalisation");
    assert_true(json_is_false(json_object_get(norm, "applied")));
    assert_true(json_is_string(json_object_get(norm, "why_not")));
    size_t i;
    json_array_foreach(json_object_get(j, "rows"), i, o) assert_true(json_is_null(json_object_get(o, "norm")));
    json_array_foreach(json_object_get(j, "table2"), i, o) assert_true(json_is_integer(json_object_get(o, "scenario")));
    assert_null(json_object_get(json_object_get(j, "random_play"), "mean"));
    json_decref(j);
    grid_tables_free(&T);
    /* two scenarios: the paper's normalised Mean row is there */
    int two[] = {1, 3};
    grid_rows_free(&R);
    assert_int_equal(grid_rows_init(&R, two, 2, 3, abl, 2), 0);
    add_seeds(&R, "offline", 1, zs, full, 3);
    add_seeds(&R, "offline", 3, full, zs, 3);
    assert_int_equal(grid_tables_compute(&R, GRID_VALUE_FINAL, &T), 0);
    assert_true(T.normalised);
    assert_int_equal(T.n_t2, 3);
    assert_int_equal(T.t2[2].scenario, 0);
    /* random play is the 0 of each scenario's normalisation, so of the Mean rows too */
    assert_true(fabs(T.random_play_mean) < 1e-12);
    for (int k = 0; k < R.n; k++) {
        double r = T.random_play[R.rows[k].scenario];
        assert_true(fabs(R.rows[k].norm - (R.rows[k].fitness - r) / (1 - r)) < 1e-12);
    }
    grid_tables_free(&T);
    grid_rows_free(&R);
}

static void add_cell(grid_rows *R, const char *name, int state, int report)
{
    grid_cell_info c = {.scenario = 1, .state = state, .best_node = state == GRID_NEW ? -1 : 0, .best_fitness = 0.5,
                        .report = report};
    snprintf(c.name, sizeof c.name, "%s", name);
    assert_int_equal(grid_rows_add_cell(R, &c), 0);
}

/* summary.html links each cell's report relatively, and nothing a cell or
 * model name holds becomes markup. */
static void grid_summary_links_reports_escaped(void **state)
{
    (void)state;
    grid_rows R;
    grid_tables T;
    int scen[] = {1}, abl[] = {ABL_ZS, ABL_FULL};
    const double zs[] = {0.5, 0.6, 0.7}, full[] = {0.6, 0.7, 0.8};
    assert_int_equal(grid_rows_init(&R, scen, 1, 3, abl, 2), 0);
    add_seeds(&R, "<script>alert(1)</script>", 1, zs, full, 3);
    add_cell(&R, "s1-zs-r0", GRID_FINISHED, 1);
    add_cell(&R, "s1-<img src=x onerror=alert(1)>-r0", GRID_FINISHED, 1);
    add_cell(&R, "s1-cot-full-r1", GRID_STARTED, 0);
    add_cell(&R, "s1-zs-r2", GRID_NEW, 0);
    assert_int_equal(grid_tables_compute(&R, GRID_VALUE_FINAL, &T), 0);
    char *html = grid_tables_html(&R, &T, "<script>t</script>");
    assert_non_null(html);
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "<img src=x"));
    assert_non_null(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    /* every onerror= is in text or in a percent-encoded link */
    assert_int_equal(pcg_test_count_of(html, "onerror="), pcg_test_count_of(html, "&lt;img src=x onerror=alert(1)&gt;"));
    assert_non_null(strstr(html, "<a href='cells/s1-zs-r0/report.html'>report</a>"));
    assert_non_null(strstr(html, "<a href='cells/s1-%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E-r0/report.html'>"));
    assert_non_null(strstr(html, "<td>s1-cot-full-r1</td><td>1</td><td>0</td><td>started</td><td>0.500 (node 0)</td>"
                                 "<td>–</td>"));
    assert_non_null(strstr(html, "<td>s1-zs-r2</td><td>1</td><td>0</td><td>new</td><td>–</td><td>–</td>"));
    assert_int_equal(pcg_test_count_of(html, "<a href="), 2);
    free(html);
    check_text(grid_tables_markdown(&R, &T, 1),
               (const char *const[]){"| s1-zs-r0 | 1 | 0 | finished | 0.500 (node 0) | [report](cells/s1-zs-r0/report.html) |",
                                     NULL},
               (const char *const[]){NULL});
    json_t *j = grid_summary_json(&R, &T), *cells = json_object_get(j, "cells");
    assert_int_equal(json_array_size(cells), 4);
    assert_string_equal(json_string_value(json_object_get(json_array_get(cells, 0), "report")),
                        "cells/s1-zs-r0/report.html");
    assert_true(json_is_null(json_object_get(json_array_get(cells, 2), "report")));
    json_decref(j);
    grid_tables_free(&T);
    grid_rows_free(&R);
}

/* Random play as the CLI measures it: `pcgrllm levels --policy random`
 * (the treasure maps for scenarios 3 and 4) scored by `pcgrllm eval`. */
static void grid_random_play_matches_levels_and_eval(void **state)
{
    (void)state;
    static const struct {
        int scenario, n;
        unsigned long long seed;
    } cases[] = {{1, 30, 20250101ull}, {2, 30, 20250101ull}, {3, 30, 20250101ull}, {4, 12, 7ull}};
    char dir[PATH_MAX], path[PATH_MAX + 32], out[8192];
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        snprintf(dir, sizeof dir, "%s/random-play-%zu", pcg_test_tmpdir(), k);
        snprintf(path, sizeof path, "%s/eval.json", dir);
        int rc = pcg_test_sh(out, sizeof out, "%s levels --n %d --policy random --seed %llu --variant %s --out %s && "
                             "%s eval --scenario %d --json %s > %s", pcg_test_binary(), cases[k].n, cases[k].seed,
                             cases[k].scenario >= 3 ? "treasure" : "dungeon", dir, pcg_test_binary(), cases[k].scenario,
                             dir, path);
        if (rc != 0) fail_msg("levels/eval exited %d: %s", rc, out);
        json_t *j = json_load_file(path, 0, NULL);
        assert_non_null(j);
        double want = json_number_value(json_object_get(j, "fitness"));
        json_decref(j);
        double got = grid_random_play_fitness(cases[k].scenario, cases[k].n, cases[k].seed);
        if (!(fabs(got - want) < 1e-12)) fail_msg("scenario %d: %.6f, eval says %.6f", cases[k].scenario, got, want);
    }
    /* the tables take the cells' levels and seed */
    grid_rows R;
    grid_tables T;
    int scen[] = {4}, abl[] = {ABL_ZS};
    assert_int_equal(grid_rows_init(&R, scen, 1, 1, abl, 1), 0);
    R.n_levels = 12, R.eval_seed = 7;
    add(&R, "offline", 4, ABL_ZS, 0, 1, 0.5, 1);
    assert_int_equal(grid_tables_compute(&R, GRID_VALUE_FINAL, &T), 0);
    assert_true(fabs(T.random_play[4] - grid_random_play_fitness(4, 12, 7)) < 1e-12);
    assert_true(isnan(T.random_play[1]));
    grid_tables_free(&T);
    grid_rows_free(&R);
}

PCG_TESTS(grid_caveats, cmocka_unit_test(grid_two_seeds_too_few_for_a_test),
          cmocka_unit_test(grid_significant_marks_show_direction), cmocka_unit_test(grid_one_scenario_not_normalised),
          cmocka_unit_test(grid_summary_links_reports_escaped),
          cmocka_unit_test(grid_random_play_matches_levels_and_eval))
