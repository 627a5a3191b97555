/* pcgrllm prefer fit: per-persona preference models from assessments
 * (docs/prefer.md#preference-models). */
#include "commands.h"
#include "prefer_bench.h"
#include "prefer_fit.h"
#include "target.h"
#include "util.h"
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void prefer_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm prefer fit [--lambda L] [--json] ASSESSMENTS.jsonl...\n"
            "       pcgrllm prefer bench (--scenario N | --target JSON) [--json] ASSESSMENTS.jsonl...\n"
            "       pcgrllm prefer refine --persona P [...] RUN ASSESSMENTS.jsonl... (prefer refine --help)\n"
            "  Fits one ridge model per persona (lambda 10 by default) predicting the overall\n"
            "  rating from the twelve dimensions of pcgrllm assess's output, and compares it on\n"
            "  held-out generators (a generator: the \"generator\" field, else the trajectory's\n"
            "  folder) with the persona-mean and shared baselines and the -CORGIS, -PXI and\n"
            "  -persona ablations: MAE, R^2 and pair-order accuracy.  Then each persona's\n"
            "  coefficients, in preference points per dimension point.\n"
            "  bench compares judges (an assessment's judge and persona) on the same plays: the\n"
            "  Spearman correlation of each dimension with the judge's rating and of the rating\n"
            "  with the evaluator's fitness of the level played (scenario N or the target), the\n"
            "  mean rating in the high, middle and low thirds of the plays, and per pair of\n"
            "  judges the correlation and agreement of their ratings.\n");
}

static json_t *coefficients_json(const pref_data *d, double lambda)
{
    json_t *all = json_object();
    for (int p = 0; p < d->n_personas; p++) {
        pref_model m;
        if (pref_fit_persona(d, p, lambda, &m)) continue;
        json_t *w = json_object();
        for (int j = 0; j < PREFER_N_DIMS; j++) json_object_set_new(w, dim_id(j), m.used[j] ? json_real(m.w[j]) : json_null());
        json_object_set_new(all, d->personas[p], json_pack("{s:f, s:o}", "intercept", m.b, "weights", w));
    }
    return all;
}

static json_t *families_json(const pref_data *d, double lambda)
{
    json_t *rows = json_array();
    for (int fam = 0; fam < PREF_N_FAMILIES; fam++) {
        pref_scores s;
        if (pref_evaluate(d, fam, lambda, &s)) continue;
        json_array_append_new(rows, json_pack("{s:s, s:f, s:f, s:f, s:i}", "model", pref_family_name(fam), "mae", s.mae,
                                              "r2", s.r2, "order", s.order, "pairs", s.pairs));
    }
    return rows;
}

static void print_table(const pref_data *d, json_t *families, json_t *coef, int skipped)
{
    printf("observations: %d from %d generators and %d personas (%d lines without a persona or rating skipped,"
           " %d with a missing dimension imputed)\n\n",
           d->n, d->n_generators, d->n_personas, skipped, d->n_incomplete);
    printf("%-22s %6s %7s %7s %8s\n", "model (held-out)", "MAE", "R^2", "order", "pairs");
    size_t i;
    json_t *row;
    json_array_foreach(families, i, row) {
        printf("%-22s %6.3f %7.3f %6.1f%% %8lld\n", json_string_value(json_object_get(row, "model")),
               json_number_value(json_object_get(row, "mae")), json_number_value(json_object_get(row, "r2")),
               100 * json_number_value(json_object_get(row, "order")),
               (long long)json_integer_value(json_object_get(row, "pairs")));
    }
    printf("\ncoefficients (separate models on every observation; rating points per dimension point):\n");
    const char *name;
    json_t *m;
    json_object_foreach(coef, name, m) {
        printf("  %s: intercept %.2f\n   ", name, json_number_value(json_object_get(m, "intercept")));
        json_t *w = json_object_get(m, "weights");
        for (int j = 0; j < PREFER_N_DIMS; j++) {
            json_t *v = json_object_get(w, dim_id(j));
            if (v && !json_is_null(v)) printf(" %s %+.2f", dim_id(j), json_number_value(v));
            else printf(" %s -", dim_id(j));
            if (j == PREFER_N_PXI - 1) printf("\n   ");
        }
        putchar('\n');
    }
}

static int prefer_fit(int argc, char **argv)
{
    static const struct option opts[] = {{"lambda", required_argument, 0, 'l'}, {"json", no_argument, 0, 'j'},
                                         {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    double lambda = PREFER_LAMBDA;
    int c, as_json = 0;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'l':
            if (parse_double(optarg, 0, 1e6, &lambda)) return die_msg("prefer fit: --lambda must be in [0, 1e6]"), 2;
            break;
        case 'j': as_json = 1; break;
        case 'h': prefer_usage(stdout); return 0;
        default: prefer_usage(stderr); return 2;
        }
    }
    if (optind >= argc) return die_msg("prefer fit: no assessment files given (pcgrllm assess writes them)"), 2;
    pref_data d;
    int skipped;
    char err[1600];
    if (pref_read(argv + optind, argc - optind, &d, &skipped, err, sizeof err)) return die_msg("prefer fit: %s", err), 1;
    if (d.n_generators < 3) {
        pref_free(&d);
        return die_msg("prefer fit: the observations come from %d generators; held-out folds need at least 3",
                       d.n_generators), 3;
    }
    json_t *families = families_json(&d, lambda), *coef = coefficients_json(&d, lambda);
    if (as_json) {
        json_t *doc = json_pack("{s:i, s:i, s:i, s:i, s:f, s:o, s:o}", "observations", d.n, "generators", d.n_generators,
                                "personas", d.n_personas, "skipped", skipped, "lambda", lambda, "models", families,
                                "coefficients", coef);
        char *s = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        if (s) puts(s);
        free(s);
        json_decref(doc);
    } else {
        print_table(&d, families, coef, skipped);
        json_decref(families);
        json_decref(coef);
    }
    pref_free(&d);
    return 0;
}

static void print_rho(const json_t *v)
{
    if (json_is_number(v)) printf(" %7.3f", json_number_value(v));
    else printf(" %7s", "-");
}

static void print_bench(const json_t *doc)
{
    const json_t *judges = json_object_get(doc, "judges");
    printf("%lld plays, %lld judges\n\n%-40s %6s %8s %9s\n", (long long)json_integer_value(json_object_get(doc, "plays")),
           (long long)json_array_size(judges), "judge", "rated", "rho fit", "gap h-l");
    size_t i;
    json_t *j;
    json_array_foreach(judges, i, j) {
        printf("%-40.40s %6lld", json_string_value(json_object_get(j, "judge")),
               (long long)json_integer_value(json_object_get(j, "rated")));
        print_rho(json_object_get(j, "fitness_rho"));
        print_rho(json_object_get(j, "group_gap"));
        putchar('\n');
    }
    printf("\nSpearman rho of each dimension with the judge's rating (judges in the order above):\n");
    for (int k = 0; k < PREFER_N_DIMS; k++) {
        printf("  %-20s", dim_id(k));
        json_array_foreach(judges, i, j) print_rho(json_object_get(json_object_get(j, "dimension_rho"), dim_id(k)));
        putchar('\n');
    }
    printf("\npairs of judges: rating rho, agreement (pairs of plays ordered alike)\n");
    json_array_foreach(json_object_get(doc, "pairs"), i, j) {
        printf("  %s | %s:", json_string_value(json_object_get(j, "a")), json_string_value(json_object_get(j, "b")));
        print_rho(json_object_get(j, "rating_rho"));
        const json_t *ag = json_object_get(j, "agreement");
        if (json_is_number(ag)) printf("  %.1f%% of %lld\n", 100 * json_number_value(ag),
                                       (long long)json_integer_value(json_object_get(j, "pairs")));
        else printf("  -\n");
    }
}

/* --scenario N or --target JSON into *s.  -1 to go on, else the status. */
static int bench_scenario(const char *scenario, const char *target, eval_scenario_t *s)
{
    char why[400];
    if (!scenario == !target) return die_msg("prefer bench: give one of --scenario N and --target JSON"), 2;
    if (scenario) {
        long n;
        if (parse_int(scenario, 1, eval_n_scenarios(), &n))
            return die_msg("prefer bench: --scenario must be 1..%d", eval_n_scenarios()), 2;
        *s = *eval_scenario((int)n);
        return -1;
    }
    if (target_scenario_from_json(target, s, why, sizeof why)) return die_msg("prefer bench: --target: %s", why), 2;
    return -1;
}

static int prefer_bench(int argc, char **argv)
{
    static const struct option opts[] = {{"scenario", required_argument, 0, 's'}, {"target", required_argument, 0, 't'},
                                         {"json", no_argument, 0, 'j'},           {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *scenario = NULL, *target = NULL;
    int c, as_json = 0;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 's': scenario = optarg; break;
        case 't': target = optarg; break;
        case 'j': as_json = 1; break;
        case 'h': prefer_usage(stdout); return 0;
        default: prefer_usage(stderr); return 2;
        }
    }
    eval_scenario_t s;
    int rc = bench_scenario(scenario, target, &s);
    if (rc >= 0) return rc;
    if (optind >= argc) return die_msg("prefer bench: no assessment files given"), 2;
    bench_data d;
    char err[1600];
    if (bench_read(argv + optind, argc - optind, &s, &d, err, sizeof err)) return die_msg("prefer bench: %s", err), 1;
    json_t *doc = bench_compare(&d);
    bench_free(&d);
    if (!doc) return die_msg("prefer bench: out of memory"), 1;
    if (as_json) {
        char *text = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        if (text) puts(text);
        free(text);
    } else {
        print_bench(doc);
    }
    json_decref(doc);
    return 0;
}

int cmd_prefer(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        prefer_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "fit")) return prefer_fit(argc - 1, argv + 1);
    if (!strcmp(argv[1], "bench")) return prefer_bench(argc - 1, argv + 1);
    if (!strcmp(argv[1], "refine")) return prefer_refine(argc - 1, argv + 1);
    return die_msg("prefer: unknown subcommand '%s' (fit, bench, refine)", argv[1]), 2;
}
