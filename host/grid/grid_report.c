/* A grid's summary as JSON and CSV, and the files of DIR.  See
 * grid_report.h; the Markdown and HTML views are in grid_views.c. */
#include "grid_report.h"
#include "version.h"
#include "grid_exec.h"
#include "run.h"
#include "util.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* JSON numbers are finite: NAN (unknown) is null. */
static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }
static json_t *jref(int v) { return v >= 0 ? json_integer(v) : json_null(); }
static json_t *jscen(int s) { return s > 0 ? json_integer(s) : json_string("mean"); }

/* The key's fields into o. */
static void put_key(json_t *o, const grid_key *k)
{
    json_object_set_new(o, "model", json_string(k->model));
    json_object_set_new(o, "pe", json_string(k->pe));
    json_object_set_new(o, "feedback", json_string(k->feedback));
    json_object_set_new(o, "feedback_input", json_string(k->feedback_input));
    json_object_set_new(o, "got_best", jref(k->got_best));
    json_object_set_new(o, "got_worst", jref(k->got_worst));
    json_object_set_new(o, "prompts", json_string(k->prompts));
    json_object_set_new(o, "reward_api", json_string(k->reward_api));
    json_object_set_new(o, "search_fitness", json_string(k->search_fitness));
    json_object_set_new(o, "accept", json_string(k->accept));
    /* a number, or null where the search had no target */
    json_object_set_new(o, "target_fitness",
                        strcmp(k->target_fitness, "none") ? json_real(strtod(k->target_fitness, NULL)) : json_null());
}

static json_t *row_json(const grid_row *w)
{
    json_t *o = json_object();
    json_object_set_new(o, "scenario", json_integer(w->scenario));
    put_key(o, &w->key);
    json_object_set_new(o, "ablation", json_string(run_ablation_name(w->ablation)));
    json_object_set_new(o, "seed", json_integer((json_int_t)w->seed));
    json_object_set_new(o, "repeat", json_integer(w->repeat));
    json_object_set_new(o, "iteration", json_integer(w->iteration));
    json_object_set_new(o, "fitness", jnum(w->fitness));
    json_object_set_new(o, "llm_score", jnum(w->llm_score));
    json_object_set_new(o, "norm", jnum(w->norm));
    json_object_set_new(o, "best_so_far", jnum(w->best_so_far));
    json_object_set_new(o, "final", json_boolean(w->final));
    json_object_set_new(o, "ok", json_boolean(w->ok));
    json_object_set_new(o, "playable_share", jnum(w->playable_share));
    json_object_set_new(o, "mean_solutions", jnum(w->mean_solutions));
    json_object_set_new(o, "mean_entropy", jnum(w->mean_entropy));
    json_object_set_new(o, "diversity", jnum(w->diversity));
    json_object_set_new(o, "playable_wall_share", jnum(w->playable_wall_share));
    json_object_set_new(o, "wall_s", jnum(w->wall_s));
    json_object_set_new(o, "train_s", jnum(w->train_s));
    json_object_set_new(o, "threads", w->threads > 0 ? json_integer(w->threads) : json_null());
    json_object_set_new(o, "backend", w->backend[0] ? json_string(w->backend) : json_null());
    json_object_set_new(o, "version", w->version[0] ? json_string(w->version) : json_null());
    json_object_set_new(o, "evaluator_rules", json_boolean(w->evaluator_rules));
    json_object_set_new(o, "duplicate", json_boolean(w->duplicate));
    json_object_set_new(o, "cell", json_string(w->cell));
    json_object_set_new(o, "node", json_integer(w->node));
    return o;
}

/* The columns a Table II row shows: the grid's ablations, and zero-shot
 * and PCGRLLM for the Human row. */
static int shows_column(const grid_rows *R, const grid_t2_row *e, int a)
{
    if (!strcmp(e->key.pe, "human")) return a == ABL_ZS || a == ABL_FULL;
    for (int i = 0; i < R->n_abl; i++)
        if (R->abl[i] == a) return 1;
    return 0;
}

/* A Human entry's reward: what its file's marker says in its scenario,
 * or on the Mean row the scenarios' when they agree (else null). */
static void human_reward_json(json_t *o, const grid_rows *R, int s)
{
    const char *name = grid_human_marker_name(grid_human_kind(R, s));
    json_object_set_new(o, "human_reward", name ? json_string(name) : json_null());
}

/* A p-value entry's test: PCGRLLM against column other. */
static void p_json(json_t *o, const grid_t2_row *e, int other)
{
    double p = other == ABL_SA ? e->p_sa : e->p_zs;
    int few = other == ABL_SA ? e->few_sa : e->few_zs, dir = other == ABL_SA ? e->dir_sa : e->dir_zs;
    int n = e->col[ABL_FULL].n && e->col[other].n;
    char mark[16] = "";
    if (p < 0.05) snprintf(mark, sizeof mark, "%s%s", other == ABL_SA ? "∗" : "†", dir > 0 ? "↑" : "↓");
    json_object_set_new(o, "vs", json_string(run_ablation_name(other)));
    json_object_set_new(o, "p", jnum(p));
    json_object_set_new(o, "n_pcgrllm", json_integer(e->col[ABL_FULL].n));
    json_object_set_new(o, "n_vs", json_integer(e->col[other].n));
    json_object_set_new(o, "too_few_runs", json_boolean(few));
    json_object_set_new(o, "significant", json_boolean(p < 0.05));
    json_object_set_new(o, "direction", !n ? json_null() : json_string(dir > 0 ? "higher" : dir < 0 ? "lower" : "equal"));
    json_object_set_new(o, "mark", json_string(mark));
}

static void table2_json(const grid_rows *R, const grid_tables *T, json_t *t2, json_t *pv, json_t *t5)
{
    for (int i = 0; i < T->n_t2; i++) {
        const grid_t2_row *e = &T->t2[i];
        int any_llm = 0;
        for (int a = 0; a < 4; a++) {
            any_llm |= e->llm[a].n > 0;
            if (!shows_column(R, e, a)) continue;
            json_t *o = json_object();
            json_object_set_new(o, "scenario", jscen(e->scenario));
            put_key(o, &e->key);
            json_object_set_new(o, "ablation", json_string(run_ablation_name(a)));
            json_object_set_new(o, "mean", jnum(e->col[a].mean));
            json_object_set_new(o, "std", jnum(e->col[a].sd));
            json_object_set_new(o, "n", json_integer(e->col[a].n));
            json_object_set_new(o, "too_few_runs", json_boolean(e->col[a].n < GRID_MIN_TEST_N));
            json_object_set_new(o, "best", json_boolean(e->best >> a & 1));
            json_object_set_new(o, "raw_mean", jnum(e->raw[a].mean));
            json_object_set_new(o, "raw_std", jnum(e->raw[a].sd));
            json_object_set_new(o, "raw_n", json_integer(e->raw[a].n));
            if (!strcmp(e->key.pe, "human")) human_reward_json(o, R, e->scenario);
            json_array_append_new(t2, o);
        }
        for (int v = 0; v < 2; v++) {
            int other = v ? ABL_SA : ABL_ZS;
            /* the paper gives none for the Human row */
            if (!shows_column(R, e, ABL_FULL) || !shows_column(R, e, other) || !strcmp(e->key.pe, "human")) continue;
            json_t *o = json_object();
            json_object_set_new(o, "scenario", jscen(e->scenario));
            put_key(o, &e->key);
            json_array_append_new(pv, o);
            p_json(o, e, other);
        }
        if (!any_llm || !e->llm[ABL_FB].n) continue; /* the model's scores of the +FB nodes it judged */
        json_t *o = json_object();
        json_object_set_new(o, "scenario", jscen(e->scenario));
        put_key(o, &e->key);
        json_object_set_new(o, "heuristic_zs", jnum(e->col[ABL_ZS].mean));
        json_object_set_new(o, "heuristic_fb", jnum(e->col[ABL_FB].mean));
        json_object_set_new(o, "heuristic_delta", jnum(e->col[ABL_FB].mean - e->col[ABL_ZS].mean));
        json_object_set_new(o, "llm_zs", jnum(e->llm[ABL_ZS].mean));
        json_object_set_new(o, "llm_fb", jnum(e->llm[ABL_FB].mean));
        json_object_set_new(o, "llm_delta", jnum(e->llm[ABL_FB].mean - e->llm[ABL_ZS].mean));
        json_array_append_new(t5, o);
    }
}

static void stat_json(json_t *o, const char *name, const grid_stat *st)
{
    char key[64];
    json_object_set_new(o, name, jnum(st->mean));
    snprintf(key, sizeof key, "%s_std", name);
    json_object_set_new(o, key, jnum(st->sd));
    snprintf(key, sizeof key, "%s_n", name);
    json_object_set_new(o, key, json_integer(st->n));
}

/* Table V as the paper's: per method and scenario, +FB steered by the
 * heuristic and by the model, at iteration 1 (base) and the last (fb). */
static json_t *table5_json(const grid_tables *T)
{
    static const char *const by[2] = {"heuristic", "llm"};
    json_t *a = json_array();
    for (int i = 0; i < T->n_t5; i++) {
        const grid_t5_row *e = &T->t5[i];
        json_t *o = json_object();
        json_object_set_new(o, "scenario", jscen(e->scenario));
        put_key(o, &e->key);
        json_object_del(o, "search_fitness"); /* the entry holds both */
        for (int g = 0; g < 2; g++) {
            char k[64];
            snprintf(k, sizeof k, "%s_steered_base", by[g]);
            stat_json(o, k, &e->base[g]);
            snprintf(k, sizeof k, "%s_steered_fb", by[g]);
            stat_json(o, k, &e->fb[g]);
            snprintf(k, sizeof k, "%s_steered_delta", by[g]);
            json_object_set_new(o, k, jnum(e->fb[g].mean - e->base[g].mean));
            snprintf(k, sizeof k, "%s_steered_base_raw", by[g]);
            json_object_set_new(o, k, jnum(e->raw_base[g].mean));
            snprintf(k, sizeof k, "%s_steered_fb_raw", by[g]);
            json_object_set_new(o, k, jnum(e->raw_fb[g].mean));
        }
        json_object_set_new(o, "p", jnum(e->p));
        json_object_set_new(o, "too_few_runs", json_boolean(e->few));
        json_object_set_new(o, "direction", !e->fb[0].n || !e->fb[1].n ? json_null()
                                            : json_string(e->dir > 0 ? "higher" : e->dir < 0 ? "lower" : "equal"));
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *table4_json(const grid_tables *T)
{
    json_t *a = json_array();
    for (int i = 0; i < T->n_t4; i++) {
        const grid_t4_row *e = &T->t4[i];
        for (int y = 0; y < e->n_iter; y++) {
            json_t *o = json_object();
            put_key(o, &e->key);
            json_object_set_new(o, "ablation", json_string(run_ablation_name(e->ablation)));
            json_object_set_new(o, "iteration", json_integer(y + 1));
            json_object_set_new(o, "mean", jnum(e->it[y].mean));
            json_object_set_new(o, "std", jnum(e->it[y].sd));
            json_object_set_new(o, "n", json_integer(e->it[y].n));
            json_object_set_new(o, "raw_mean", jnum(e->raw[y].mean));
            json_object_set_new(o, "raw_std", jnum(e->raw[y].sd));
            json_object_set_new(o, "delta_next_mean", jnum(e->dy[y].mean));
            json_object_set_new(o, "delta_next_std", jnum(e->dy[y].sd));
            json_object_set_new(o, "delta_next_n", json_integer(e->dy[y].n));
            json_array_append_new(a, o);
        }
    }
    return a;
}

/* Entries of arr whose `field` takes more than one value among entries
 * that agree on every other key field: the studies that vary one axis
 * (feedback type for Fig. 6, feedback input for Table IX). */
static json_t *varying(json_t *arr, const char *field)
{
    static const char *const keys[] = {"scenario", "model", "pe", "feedback", "feedback_input", "got_best",
                                       "got_worst", "prompts", "reward_api", "search_fitness", "accept",
                                       "target_fitness", "ablation", "iteration"};
    json_t *out = json_array();
    size_t i, j;
    json_t *a, *b;
    json_array_foreach(arr, i, a) {
        int keep = 0;
        json_array_foreach(arr, j, b) {
            if (i == j || json_equal(json_object_get(a, field), json_object_get(b, field))) continue;
            int same = 1;
            for (size_t k = 0; k < sizeof keys / sizeof *keys && same; k++)
                if (strcmp(keys[k], field))
                    same = json_equal(json_object_get(a, keys[k]), json_object_get(b, keys[k])) ||
                           (!json_object_get(a, keys[k]) && !json_object_get(b, keys[k]));
            if (same) keep = 1;
        }
        if (keep) json_array_append(out, a);
    }
    return out;
}

/* The reference heatmap (Fig. 7): GoT summary-row values (Mean, or the
 * only scenario's) by best and worst reference counts, when those were
 * varied. */
static json_t *heatmap_json(json_t *t2, const grid_tables *T)
{
    json_t *out = json_array(), *o;
    size_t i;
    json_t *got = json_array();
    json_array_foreach(t2, i, o) {
        const char *abl = json_string_value(json_object_get(o, "ablation"));
        json_t *sc = json_object_get(o, "scenario");
        int summary = T->mean_scenario ? json_integer_value(sc) == T->mean_scenario : json_is_string(sc);
        if (summary && !strcmp(json_string_value(json_object_get(o, "pe")), "got") &&
            (!strcmp(abl, "full") || !strcmp(abl, "fb")))
            json_array_append(got, o);
    }
    json_t *b = varying(got, "got_best"), *w = varying(got, "got_worst");
    json_array_foreach(got, i, o) {
        int in = 0;
        size_t j;
        json_t *x;
        json_array_foreach(b, j, x) in |= json_equal(x, o);
        json_array_foreach(w, j, x) in |= json_equal(x, o);
        if (in) json_array_append(out, o);
    }
    json_decref(got);
    json_decref(b);
    json_decref(w);
    return out;
}

static json_t *notes_json(const grid_rows *R, const grid_tables *T)
{
    json_t *n = json_object(), *norm = json_object();
    json_object_set_new(n, "value", json_string(T->value == GRID_VALUE_BEST
                                                    ? "best: the highest fitness of the cell's nodes up to the column's node"
                                                    : "final: zero-shot and +SA iteration 1, +FB and PCGRLLM the last node"));
    json_object_set_new(n, "std", json_string("sample standard deviation (divisor n - 1) over seeds"));
    json_object_set_new(n, "p", json_string("Welch's two-sided t-test of PCGRLLM against the column, over seeds; "
                                            "null with too_few_runs when a column has fewer than min_test_n seeds"));
    json_object_set_new(n, "marks", json_string("on PCGRLLM: \u2020 p(ZS) < 0.05, \u2217 p(SA) < 0.05; \u2191 PCGRLLM's "
                                                "mean higher (better) than the column's, \u2193 lower (worse)"));
    for (int k = 0; k < 2; k++) {
        int col = k ? ABL_SA : ABL_ZS, src = grid_column_cells(R->abl, R->n_abl, col);
        if (src >= 0)
            json_object_set_new(n, k ? "sa_source" : "zs_source",
                                json_string(src != col ? (k ? "iteration 1 of each method's own full cells"
                                                            : "iteration 1 of each method's own fb cells")
                                                       : "cells of its own, once per (scenario, model, seed), reported "
                                                         "under each search method"));
    }
    json_object_set_new(n, "evaluator_rules", json_string(R->rules_on && R->rules_off ? "mixed"
                                                          : R->rules_on               ? "stated in the prompts"
                                                                                      : "not in the prompts"));
    for (int s = 1; s <= 4; s++) {
        if (!isfinite(T->random_play[s]) || !T->normalised) continue;
        char k[4];
        snprintf(k, sizeof k, "%d", s);
        json_object_set_new(norm, k, json_pack("{s:f, s:f}", "zero", T->random_play[s], "one", 1.0));
    }
    json_object_set_new(norm, "applied", json_boolean(T->normalised));
    json_object_set_new(norm, "formula", json_string("per scenario s: (x - r_s) / (1 - r_s), r_s random play's fitness "
                                                     "in s (0 = random play, 1 = a perfect score, below 0 = worse than "
                                                     "random play); fixed bounds, so a value does not change when "
                                                     "cells are added. The engine's definition: the paper's formula "
                                                     "cannot be recovered from its numbers"));
    if (!T->normalised)
        json_object_set_new(norm, "why_not", json_string("one scenario: no Mean rows to average over scenarios; the "
                                                         "values by iteration and the studies are raw fitness"));
    json_object_set_new(n, "normalisation", norm);
    json_object_set_new(n, "random_play", json_string("fitness of the evaluation levels after one episode of uniformly "
                                                      "random actions on the fixed evaluation maps (pcgrllm levels "
                                                      "--policy random --seed EVAL_SEED)"));
    return n;
}

static json_t *random_play_json(const grid_rows *R, const grid_tables *T)
{
    json_t *o = json_object();
    for (int i = 0; i < R->n_scen; i++) {
        char k[4];
        snprintf(k, sizeof k, "%d", R->scen[i]);
        json_object_set_new(o, k, jnum(T->random_play[R->scen[i]]));
    }
    if (T->normalised) json_object_set_new(o, "mean", jnum(T->random_play_mean));
    json_object_set_new(o, "levels", json_integer(R->n_levels));
    json_object_set_new(o, "eval_seed", json_integer((json_int_t)R->eval_seed));
    return o;
}

/* Every cell with its state and its report, relative to DIR. */
static json_t *cells_json(const grid_rows *R)
{
    json_t *a = json_array();
    for (int i = 0; i < R->n_cell_info; i++) {
        const grid_cell_info *c = &R->cell_info[i];
        int best = c->state != GRID_NEW && c->best_node >= 0;
        char rep[GRID_NAME_MAX + 32];
        snprintf(rep, sizeof rep, "cells/%s/report.html", c->name);
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(c->name));
        json_object_set_new(o, "scenario", json_integer(c->scenario));
        json_object_set_new(o, "repeat", json_integer(c->repeat));
        json_object_set_new(o, "state", json_string(grid_cell_state_name(c->state)));
        json_object_set_new(o, "best_node", jref(best ? c->best_node : -1));
        json_object_set_new(o, "best_fitness", best ? jnum(c->best_fitness) : json_null());
        json_object_set_new(o, "report", c->report ? json_string(rep) : json_null());
        json_array_append_new(a, o);
    }
    return a;
}

json_t *grid_summary_json(const grid_rows *R, const grid_tables *T)
{
    json_t *o = json_object(), *rows = json_array(), *t2 = json_array(), *pv = json_array(), *t5 = json_array();
    json_t *authors = json_array();
    for (int i = 0; i < R->n; i++) json_array_append_new(rows, row_json(&R->rows[i]));
    table2_json(R, T, t2, pv, t5);
    json_t *t4 = table4_json(T);
    for (int i = 0; i < R->n_authors; i++) json_array_append_new(authors, json_string(R->authors[i]));
    json_object_set_new(o, "format", json_integer(2));
    json_object_set_new(o, "pcgrllm_version", json_string(pcg_version()));
    json_object_set_new(o, "pcgrllm_commit", pcg_commit()[0] ? json_string(pcg_commit()) : json_null());
    json_object_set_new(o, "cells_total", json_integer(R->n_cells));
    json_object_set_new(o, "cells_finished", json_integer(R->n_finished));
    /* the two ways a cell can end without a model's result: never a fitness of 0 */
    json_object_set_new(o, "cells_server_failed", json_integer(R->n_halted));
    json_object_set_new(o, "cells_model_gave_up", json_integer(R->n_gave_up));
    json_object_set_new(o, "repeats", json_integer(R->repeats));
    json_object_set_new(o, "value", json_string(T->value == GRID_VALUE_BEST ? "best" : "final"));
    json_object_set_new(o, "authors", authors);
    json_object_set_new(o, "language_model", json_boolean(R->language_model));
    json_object_set_new(o, "normalised", json_boolean(T->normalised));
    json_object_set_new(o, "min_test_n", json_integer(GRID_MIN_TEST_N));
    json_object_set_new(o, "random_play", random_play_json(R, T));
    json_object_set_new(o, "cells", cells_json(R));
    if (R->human) {
        json_t *h = json_object();
        for (int i = 0; i < R->n_scen; i++) {
            char k[4];
            const char *name = grid_human_marker_name(R->human_kind[R->scen[i]]);
            snprintf(k, sizeof k, "%d", R->scen[i]);
            json_object_set_new(h, k, name ? json_string(name) : json_null());
        }
        json_object_set_new(o, "human_rewards", h);
    }
    json_object_set_new(o, "notes", notes_json(R, T));
    json_object_set_new(o, "rows", rows);
    json_object_set_new(o, "table2", t2);
    json_object_set_new(o, "p_values", pv);
    json_object_set_new(o, "table4", t4);
    json_object_set_new(o, "table5", table5_json(T));
    json_object_set_new(o, "model_scores_vs_heuristic", t5);
    json_t *t2mean = varying(t2, "feedback_input");
    json_object_set_new(o, "table9", t2mean);
    json_object_set_new(o, "feedback_study", varying(t4, "feedback"));
    json_object_set_new(o, "ref_heatmap", heatmap_json(t2, T));
    return o;
}

/* ---------------------------------------------------------------- CSV */

static void csv_field(FILE *f, json_t *v)
{
    if (!v || json_is_null(v)) return;
    if (json_is_true(v) || json_is_false(v)) {
        fputs(json_is_true(v) ? "true" : "false", f);
        return;
    }
    if (!json_is_string(v)) {
        char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));
        if (s) fputs(s, f);
        free(s);
        return;
    }
    const char *s = json_string_value(v);
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

char *grid_csv(json_t *arr, const char *const *columns, int n_columns)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    for (int c = 0; c < n_columns; c++) fprintf(f, "%s%s", c ? "," : "", columns[c]);
    fputc('\n', f);
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o) {
        for (int c = 0; c < n_columns; c++) {
            if (c) fputc(',', f);
            csv_field(f, json_object_get(o, columns[c]));
        }
        fputc('\n', f);
    }
    fclose(f);
    return buf;
}

/* ---------------------------------------------------------------- the files */

/* The CSV files: each list of summary.json with its columns. */
static int write_csvs(const char *out, json_t *sum, char *err, int errlen)
{
#define KEY_COLS "model", "pe", "feedback", "feedback_input", "got_best", "got_worst", "prompts", "reward_api", \
                 "search_fitness", "accept", "target_fitness"
    static const char *const rows[] = {"scenario", KEY_COLS, "ablation", "seed", "repeat", "iteration", "fitness",
                                       "llm_score", "norm", "best_so_far", "final", "ok", "playable_share",
                                       "mean_solutions", "mean_entropy", "diversity", "playable_wall_share", "wall_s",
                                       "train_s", "threads", "backend", "version", "evaluator_rules", "duplicate",
                                       "cell", "node"};
    static const char *const t2[] = {"scenario", KEY_COLS, "ablation", "mean", "std", "n", "too_few_runs", "best",
                                     "raw_mean", "raw_std", "raw_n"};
    static const char *const pv[] = {"scenario", KEY_COLS, "vs", "p", "n_pcgrllm", "n_vs", "too_few_runs",
                                     "significant", "direction", "mark"};
    static const char *const t4[] = {KEY_COLS, "ablation", "iteration", "mean", "std", "n", "raw_mean", "raw_std",
                                     "delta_next_mean", "delta_next_std", "delta_next_n"};
    static const char *const ms[] = {"scenario", KEY_COLS, "heuristic_zs", "heuristic_fb", "heuristic_delta", "llm_zs",
                                     "llm_fb", "llm_delta"};
#define STEERED(by) by "_steered_base", by "_steered_base_std", by "_steered_base_n", by "_steered_fb", \
                    by "_steered_fb_std", by "_steered_fb_n", by "_steered_delta", by "_steered_base_raw", \
                    by "_steered_fb_raw"
    static const char *const t5[] = {"scenario", KEY_COLS, STEERED("heuristic"), STEERED("llm"), "p", "too_few_runs",
                                     "direction"};
#undef STEERED
#undef KEY_COLS
    static const struct {
        const char *file, *list;
        const char *const *cols;
        int n;
    } files[] = {
        {"rows.csv", "rows", rows, sizeof rows / sizeof *rows},
        {"table2.csv", "table2", t2, sizeof t2 / sizeof *t2},
        {"p_values.csv", "p_values", pv, sizeof pv / sizeof *pv},
        {"table4.csv", "table4", t4, sizeof t4 / sizeof *t4},
        {"table5.csv", "table5", t5, sizeof t5 / sizeof *t5},
        {"model_scores_vs_heuristic.csv", "model_scores_vs_heuristic", ms, sizeof ms / sizeof *ms},
        {"table9.csv", "table9", t2, sizeof t2 / sizeof *t2},
        {"feedback_study.csv", "feedback_study", t4, sizeof t4 / sizeof *t4},
        {"ref_heatmap.csv", "ref_heatmap", t2, sizeof t2 / sizeof *t2},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[1400];
        char *csv = grid_csv(json_object_get(sum, files[i].list), files[i].cols, files[i].n);
        snprintf(path, sizeof path, "%s/%s", out, files[i].file);
        int rc = csv ? write_file_atomic_msg(path, csv, strlen(csv), err, errlen) : -1;
        if (!csv) snprintf(err, (size_t)errlen, "%s: out of memory", path);
        free(csv);
        if (rc) return -1;
    }
    return 0;
}

/* name in DIR <- text (malloc'd, freed here). */
static int write_text_file(const char *out, const char *name, char *text, char *err, int errlen)
{
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", out, name);
    int rc = text ? write_file_atomic_msg(path, text, strlen(text), err, errlen) : -1;
    if (!text) snprintf(err, (size_t)errlen, "%s: out of memory", path);
    free(text);
    return rc;
}

static int write_outputs(const char *out, const grid_rows *R, const grid_tables *T, int quiet, char *err, int errlen)
{
    json_t *sum = grid_summary_json(R, T);
    char *js = sum ? json_dumps(sum, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) : NULL;
    int rc = write_text_file(out, "summary.json", js, err, errlen);
    if (!rc) rc = write_csvs(out, sum, err, errlen);
    json_decref(sum);
    char title[1200];
    snprintf(title, sizeof title, "pcgrllm grid %s", out);
    if (!rc) rc = write_text_file(out, "tables.md", grid_tables_markdown(R, T, 1), err, errlen);
    if (!rc) rc = write_text_file(out, "summary.html", grid_tables_html(R, T, title), err, errlen);
    if (!rc) rc = grid_write_plots(out, R, T, err, errlen);
    char *txt = rc ? NULL : grid_tables_markdown(R, T, 0);
    if (txt && !quiet) printf("grid %s: %d cells, %d finished\n\n%s", out, R->n_cells, R->n_finished, txt);
    if (!rc) rc = write_text_file(out, "summary.txt", txt, err, errlen);
    else free(txt);
    if (!rc && !quiet)
        printf("wrote %s/summary.json, tables.md, summary.html, rows.csv, table2.csv, p_values.csv, table4.csv and "
               "plots/\n", out);
    return rc;
}

int grid_report(const char *out, const grid_def *d, const grid_cell *cells, int n_cells, int value, int quiet)
{
    grid_rows R;
    grid_tables T;
    char err[1600];
    if (grid_rows_read(out, d, cells, n_cells, &R)) return die_msg("grid: out of memory"), -1;
    if (grid_tables_compute(&R, value, &T)) {
        grid_rows_free(&R);
        return die_msg("grid: out of memory"), -1;
    }
    int rc = write_outputs(out, &R, &T, quiet, err, sizeof err);
    int finished = R.n_finished;
    grid_tables_free(&T);
    grid_rows_free(&R);
    if (rc) return die_msg("grid: %s", err), -1;
    return finished;
}
