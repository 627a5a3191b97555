/* The paper's tables and plots of a grid as a document of blocks
 * (host/grid/grid_doc.h); host/grid/grid_pages.c renders it.  See grid_report.h
 * and docs/grid.md. */
#include "build.h"
#include "grid_doc.h"
#include "grid_report.h"
#include "plot.h"
#include "run.h"
#include "util.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The paper's significance marks with their direction: † against ZS, ∗
 * against +SA, each followed by ↑ when PCGRLLM's mean is the higher (the
 * better: fitness is higher-better) and ↓ when it is the lower. */
static void append_marks(char *buf, const grid_t2_row *e)
{
    size_t l = strlen(buf);
    if (e->p_zs < 0.05) l += (size_t)snprintf(buf + l, VT_CELL - l, " †%s", e->dir_zs > 0 ? "↑" : "↓");
    if (e->p_sa < 0.05 && l < VT_CELL) snprintf(buf + l, VT_CELL - l, " ∗%s", e->dir_sa > 0 ? "↑" : "↓");
}

/* ---------------------------------------------------------------- Table II */

static int column_shown(const grid_rows *R, int a)
{
    for (int i = 0; i < R->n_abl; i++)
        if (R->abl[i] == a) return 1;
    return R->human && (a == ABL_ZS || a == ABL_FULL);
}

/* A Table II row's method, in scenario s: the Human row says whose design
 * its reward is. */
static void row_label(const grid_rows *R, const grid_key *k, int s, int rv, char *buf)
{
    int kind = strcmp(k->pe, "human") ? -1 : grid_human_kind(R, s);
    if (kind == GRID_HUMAN_REFERENCE_PORT) snprintf(buf, VT_CELL, "Human (reference port)");
    else if (kind == GRID_HUMAN_ENGINE_DESIGN) snprintf(buf, VT_CELL, "Human (engine's design)");
    else grid_key_label(k, rv, buf, VT_CELL);
}

/* One Table II row into row[]: the values (with the caveat where the
 * table compares), the marks on PCGRLLM and the p-values.  Returns 1 when
 * a comparison had too few seeds for a test. */
static int table2_row(const grid_rows *R, const grid_t2_row *e, const int *cols, int nc, int pz, int ps, int rv,
                      char (*row)[VT_CELL], unsigned char *bold)
{
    snprintf(row[0], VT_CELL, e->scenario ? "%d" : "Mean", e->scenario);
    row_label(R, &e->key, e->scenario, rv, row[1]);
    int human = !strcmp(e->key.pe, "human");
    for (int c = 0; c < nc; c++) {
        int a = cols[c];
        if (human && a != ABL_ZS && a != ABL_FULL) continue;
        vd_stat_few(row[2 + c], &e->col[a], R->repeats, pz || ps);
        if (a == ABL_FULL && e->col[a].n) append_marks(row[2 + c], e);
        bold[2 + c] = (e->best >> a & 1) && e->col[a].n > 0;
    }
    if (human) return 0;
    if (pz) vd_p(row[2 + nc], e->p_zs, e->few_zs);
    if (ps) vd_p(row[2 + nc + pz], e->p_sa, e->few_sa);
    return (pz && e->few_zs) || (ps && e->few_sa);
}

/* Beside a Mean row, the same mean of the raw scores (no test, no bold). */
static void mean_raw_row(const grid_rows *R, const grid_t2_row *e, const int *cols, int nc, int rv, vtable *t)
{
    char(*row)[VT_CELL] = vd_row(t);
    if (!row) return;
    snprintf(row[0], VT_CELL, "Mean (raw)");
    row_label(R, &e->key, 0, rv, row[1]);
    for (int c = 0; c < nc; c++)
        if (e->col[cols[c]].n) vd_stat(row[2 + c], &e->raw[cols[c]], R->repeats);
}

static void table2_group(vdoc *d, const grid_rows *R, const grid_tables *T, const grid_key *g)
{
    char title[400];
    int cols[4], nc = 0, rv = vd_refs_vary(T), few = 0;
    for (int a = 0; a < 4; a++)
        if (column_shown(R, a)) cols[nc++] = a;
    int pz = column_shown(R, ABL_ZS) && column_shown(R, ABL_FULL), ps = column_shown(R, ABL_SA) && column_shown(R, ABL_FULL);
    vd_group_title(T, title, sizeof title, "Table II", g);
    vd_text(d, B_H3, "%s", title);
    vtable *t = vd_table(d, 2 + nc + pz + ps);
    if (!t) return;
    snprintf(t->head[0], VT_CELL, "Scenario");
    snprintf(t->head[1], VT_CELL, "Method");
    for (int c = 0; c < nc; c++) snprintf(t->head[2 + c], VT_CELL, "%s", vd_col_names[cols[c]]);
    if (pz) snprintf(t->head[2 + nc], VT_CELL, "p(ZS)");
    if (ps) snprintf(t->head[2 + nc + pz], VT_CELL, "p(SA)");
    for (int i = 0; i < T->n_t2; i++) {
        const grid_t2_row *e = &T->t2[i];
        if (!vd_same_group(&e->key, g)) continue;
        char(*row)[VT_CELL] = vd_row(t);
        if (!row) return;
        few |= table2_row(R, e, cols, nc, pz, ps, rv, row, t->bold + (t->nrow - 1) * t->ncol);
    }
    for (int i = 0; i < T->n_t2; i++)
        if (T->t2[i].scenario == 0 && vd_same_group(&T->t2[i].key, g)) mean_raw_row(R, &T->t2[i], cols, nc, rv, t);
    if (few)
        vd_text(d, B_PARA, "Too few runs for a test: a value marked \"too few\" is over fewer than %d seeds; a "
                           "comparison with such a column has no p-value (\"n < %d\") and no significance mark.",
                GRID_MIN_TEST_N, GRID_MIN_TEST_N);
    if (pz || ps)
        vd_text(d, B_PARA, "Marks on PCGRLLM: † p(ZS) < 0.05, ∗ p(SA) < 0.05 (Welch's t-test, at least %d seeds in "
                           "both columns); ↑ its mean is higher (better) than that column's, ↓ lower (worse).",
                GRID_MIN_TEST_N);
}

/* Each distinct group of the t2 rows, in order, through fn. */
static void for_groups(vdoc *d, const grid_rows *R, const grid_tables *T,
                       void (*fn)(vdoc *, const grid_rows *, const grid_tables *, const grid_key *))
{
    for (int i = 0; i < T->n_t2; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = vd_same_group(&T->t2[j].key, &T->t2[i].key);
        if (!seen) fn(d, R, T, &T->t2[i].key);
    }
}

/* ---------------------------------------------------------------- by iteration */

static void fitness_plot(vdoc *d, const grid_tables *T, const grid_key *g, int abl, int rv)
{
    plot_series s[16];
    double *buf[16] = {0};
    char labels[16][64];
    int ns = 0;
    double lo = 0; /* normalised values fall below 0 where worse than random play */
    for (int i = 0; i < T->n_t4 && ns < 16; i++) {
        const grid_t4_row *e = &T->t4[i];
        if (!vd_same_group(&e->key, g) || e->ablation != abl) continue;
        double *v = buf[ns] = malloc(sizeof(double) * 4 * (size_t)e->n_iter);
        if (!v) break;
        for (int y = 0; y < e->n_iter; y++) {
            v[y] = y + 1;
            v[e->n_iter + y] = e->it[y].mean;
            double sd = isfinite(e->it[y].sd) ? e->it[y].sd : 0;
            v[2 * e->n_iter + y] = e->it[y].mean - sd;
            if (v[2 * e->n_iter + y] < lo) lo = floor(v[2 * e->n_iter + y] * 10) / 10;
            v[3 * e->n_iter + y] = e->it[y].mean + sd;
        }
        grid_key_label(&e->key, rv, labels[ns], sizeof labels[ns]);
        s[ns] = (plot_series){labels[ns], e->n_iter, v, v + e->n_iter, v + 2 * e->n_iter, v + 3 * e->n_iter, 1, 0, 1};
        ns++;
    }
    char title[400], head[300], ylabel[160], ref[64];
    vd_group_title(T, head, sizeof head, "Fitness by iteration", g);
    snprintf(title, sizeof title, "%s, %s", head, vd_col_names[abl]);
    if (T->normalised) snprintf(ylabel, sizeof ylabel, "normalised mean fitness (band: ± std over seeds)");
    else snprintf(ylabel, sizeof ylabel, "fitness, scenario %d, not normalised (band: ± std)", T->mean_scenario);
    snprintf(ref, sizeof ref, "random play (%.3f)", T->random_play_mean);
    plot_axes ax = {.title = title, .xlabel = "iteration", .ylabel = ylabel, .ymin = lo, .ymax = 1, .width = 860,
                    .height = 420, .ref_label = ref, .ref_y = T->random_play_mean};
    unsigned char *png = NULL;
    size_t len = 0;
    if (ns && (!d->with_png || plot_lines_png(&ax, s, ns, &png, &len) == 0))
        vd_plot(d, title, "fitness_by_iteration", png, len);
    for (int k = 0; k < ns; k++) free(buf[k]);
}

static void table4_group(vdoc *d, const grid_rows *R, const grid_tables *T, const grid_key *g)
{
    int top = 0, rv = vd_refs_vary(T), abls = 0;
    for (int i = 0; i < T->n_t4; i++)
        if (vd_same_group(&T->t4[i].key, g)) top = T->t4[i].n_iter > top ? T->t4[i].n_iter : top, abls |= 1 << T->t4[i].ablation;
    if (top == 0) return;
    char title[400];
    vd_group_title(T, title, sizeof title, "Table IV", g);
    vd_text(d, B_H3, "%s", title);
    vtable *t = vd_table(d, 2 + top);
    if (!t) return;
    snprintf(t->head[0], VT_CELL, "Method");
    snprintf(t->head[1], VT_CELL, "Ablation");
    for (int y = 0; y < top && 2 + y < t->ncol; y++) snprintf(t->head[2 + y], VT_CELL, "y%d", y + 1);
    for (int i = 0; i < T->n_t4; i++) {
        const grid_t4_row *e = &T->t4[i];
        if (!vd_same_group(&e->key, g)) continue;
        char(*row)[VT_CELL] = vd_row(t);
        if (!row) return;
        grid_key_label(&e->key, rv, row[0], VT_CELL);
        snprintf(row[1], VT_CELL, "%s", vd_col_names[e->ablation]);
        int best = -1;
        for (int y = 0; y < e->n_iter && 2 + y < t->ncol; y++) {
            vd_stat(row[2 + y], &e->it[y], R->repeats);
            if (e->it[y].n && (best < 0 || e->it[y].mean > e->it[best].mean)) best = y;
        }
        if (best >= 0) t->bold[(t->nrow - 1) * t->ncol + 2 + best] = 1;
        if (!T->normalised || !(row = vd_row(t))) continue;
        grid_key_label(&e->key, rv, row[0], VT_CELL);
        snprintf(row[1], VT_CELL, "%s (raw)", vd_col_names[e->ablation]);
        for (int y = 0; y < e->n_iter && 2 + y < t->ncol; y++) vd_stat(row[2 + y], &e->raw[y], R->repeats);
    }
    for (int abl = ABL_FB; abl <= ABL_FULL; abl++)
        if (abls >> abl & 1) fitness_plot(d, T, g, abl, rv);
}

/* Table V as the paper's: per method and scenario, the heuristic fitness
 * at iteration 1 and at the last iteration of +FB cells steered by the
 * heuristic and by the model's own scores, and the test of the last. */
static void table5(vdoc *d, const grid_rows *R, const grid_tables *T)
{
    if (!T->n_t5) return;
    vd_text(d, B_H3, "Table V — heuristic fitness of +FB runs whose search the heuristic or the model's own scores "
                     "steered (%s)", T->normalised ? "Mean rows normalised" : "one scenario, not normalised");
    vtable *t = vd_table(d, 9);
    const char *h[] = {"Scenario", "Method", "Heuristic Base", "+FB", "Δ", "LLM Base", "+FB", "Δ", "p(+FB)"};
    if (!t) return;
    for (int c = 0; c < 9; c++) snprintf(t->head[c], VT_CELL, "%s", h[c]);
    int rv = vd_refs_vary(T), few = 0;
    for (int raw = 0; raw < 2; raw++)
        for (int i = 0; i < T->n_t5; i++) {
            const grid_t5_row *e = &T->t5[i];
            if (raw && e->scenario) continue;
            char(*row)[VT_CELL] = vd_row(t);
            if (!row) return;
            snprintf(row[0], VT_CELL, raw ? "Mean (raw)" : e->scenario ? "%d" : "Mean", e->scenario);
            vd_full_label(T, &e->key, rv, row[1]);
            for (int g = 0; g < 2; g++) {
                const grid_stat *b = raw ? &e->raw_base[g] : &e->base[g], *f = raw ? &e->raw_fb[g] : &e->fb[g];
                vd_stat(row[2 + 3 * g], b, R->repeats);
                vd_stat_few(row[3 + 3 * g], f, R->repeats, !raw);
                vd_delta(row[4 + 3 * g], b->mean, f->mean);
            }
            if (!raw) vd_p(row[8], e->p, e->few), few |= e->few;
        }
    vd_text(d, B_PARA, "Base: iteration 1 (before any parent is chosen, so the two differ only by run-to-run "
                       "variation); +FB: the last iteration; Δ = +FB − Base. Both are the evaluator's heuristic fitness: "
                       "the table measures how the levels turn out when each fitness steers the search. p(+FB): "
                       "Welch's t-test of the model-steered +FB against the heuristic-steered one%s.",
           few ? " (\"n < 3\": too few runs for a test)" : "");
}

/* The model's own scores beside the heuristic fitness of the same nodes
 * (--fitness llm): how far its judgement follows the evaluator's. */
static void model_scores(vdoc *d, const grid_rows *R, const grid_tables *T)
{
    if (!R->fitness_llm) return;
    vd_text(d, B_H3, "Model scores vs heuristic — the evaluator's fitness and the model's own scores of the same nodes "
                     "(not the paper's Table V)");
    vtable *t = vd_table(d, 8);
    const char *h[] = {"Scenario", "Method", "Heuristic ZS", "+FB", "Δ", "LLM ZS", "+FB", "Δ"};
    if (!t) return;
    for (int c = 0; c < 8; c++) snprintf(t->head[c], VT_CELL, "%s", h[c]);
    int rv = vd_refs_vary(T);
    for (int i = 0; i < T->n_t2; i++) {
        const grid_t2_row *e = &T->t2[i];
        if (!e->llm[ABL_FB].n) continue; /* its +FB nodes were not judged by the model */
        char(*row)[VT_CELL] = vd_row(t);
        if (!row) return;
        snprintf(row[0], VT_CELL, e->scenario ? "%d" : "Mean", e->scenario);
        vd_full_label(T, &e->key, rv, row[1]);
        vd_mean(row[2], &e->col[ABL_ZS]);
        vd_mean(row[3], &e->col[ABL_FB]);
        vd_delta(row[4], e->col[ABL_ZS].mean, e->col[ABL_FB].mean);
        vd_mean(row[5], &e->llm[ABL_ZS]);
        vd_mean(row[6], &e->llm[ABL_FB]);
        vd_delta(row[7], e->llm[ABL_ZS].mean, e->llm[ABL_FB].mean);
    }
    vd_text(d, B_PARA, "The model's scores are not normalised (their floor is unknown): its Mean rows are the plain "
                       "mean over scenarios.");
}

/* ---------------------------------------------------------------- Table IX */

/* The summary row (Mean, or the only scenario's) of the key that differs
 * from k only in feedback input fi. */
static const grid_t2_row *with_input(const grid_tables *T, const grid_key *k, const char *fi)
{
    for (int i = 0; i < T->n_t2; i++) {
        grid_key o = T->t2[i].key;
        if (T->t2[i].scenario != T->mean_scenario || strcmp(o.feedback_input, fi)) continue;
        snprintf(o.feedback_input, sizeof o.feedback_input, "%s", k->feedback_input);
        if (grid_key_equal(&o, k)) return &T->t2[i];
    }
    return NULL;
}

static void table9(vdoc *d, const grid_tables *T)
{
    vtable *t = NULL;
    int rv = vd_refs_vary(T);
    for (int i = 0; i < T->n_t2; i++) {
        const grid_t2_row *e = &T->t2[i];
        if (e->scenario != T->mean_scenario || strcmp(e->key.feedback_input, "text")) continue;
        const grid_t2_row *img = with_input(T, &e->key, "image");
        if (!img) continue;
        if (!t) {
            vd_text(d, B_H3, "Table IX — feedback on the levels as text or as an image (%s)",
                    T->normalised ? "Mean rows" : "the only scenario, not normalised");
            const char *h[] = {"Method", "Text ZS", "+FB", "Δ", "Image ZS", "+FB", "Δ"};
            if (!(t = vd_table(d, 7))) return;
            for (int c = 0; c < 7; c++) snprintf(t->head[c], VT_CELL, "%s", h[c]);
        }
        char(*row)[VT_CELL] = vd_row(t);
        if (!row) return;
        vd_full_label(T, &e->key, rv, row[0]);
        const grid_t2_row *x[2] = {e, img};
        for (int k = 0; k < 2; k++) {
            vd_mean(row[1 + 3 * k], &x[k]->col[ABL_ZS]);
            vd_mean(row[2 + 3 * k], &x[k]->col[ABL_FB]);
            vd_delta(row[3 + 3 * k], x[k]->col[ABL_ZS].mean, x[k]->col[ABL_FB].mean);
        }
    }
}

/* ---------------------------------------------------------------- feedback types */

/* The t4 rows of key k's study: the same but for the feedback type. */
static int study_rows(const grid_tables *T, const grid_t4_row *k, int *out)
{
    int n = 0;
    for (int i = 0; i < T->n_t4; i++) {
        grid_key o = T->t4[i].key;
        snprintf(o.feedback, sizeof o.feedback, "%s", k->key.feedback);
        if (T->t4[i].ablation == k->ablation && grid_key_equal(&o, &k->key) && n < 3) out[n++] = i;
    }
    return n;
}

static void feedback_study_one(vdoc *d, const grid_rows *R, const grid_tables *T, const int *rows, int n)
{
    const grid_t4_row *f = &T->t4[rows[0]];
    int top = 0, rv = vd_refs_vary(T);
    for (int k = 0; k < n; k++) top = T->t4[rows[k]].n_iter > top ? T->t4[rows[k]].n_iter : top;
    char lab[VT_CELL];
    grid_key_label(&f->key, rv, lab, sizeof lab);
    vd_text(d, B_H3, "Feedback types — %s, %s, %s input, %s (Table III, Fig. 6)", lab, f->key.model,
            f->key.feedback_input, vd_col_names[f->ablation]);
    for (int part = 0; part < 2; part++) { /* the values, then their changes */
        int ncol = 1 + (part ? top - 1 : top);
        vtable *t = vd_table(d, ncol);
        if (!t) return;
        snprintf(t->head[0], VT_CELL, "Feedback");
        for (int y = 1; y < ncol; y++) snprintf(t->head[y], VT_CELL, part ? "Δy %d→%d" : "y%d", y, y + 1);
        for (int k = 0; k < n; k++) {
            const grid_t4_row *e = &T->t4[rows[k]];
            char(*row)[VT_CELL] = vd_row(t);
            if (!row) return;
            snprintf(row[0], VT_CELL, "%s", e->key.feedback);
            for (int y = 1; y < ncol && y - 1 < e->n_iter; y++)
                vd_stat(row[y], part ? &e->dy[y - 1] : &e->it[y - 1], R->repeats);
        }
    }
    /* Fig. 6: the changes as bars, one group per step */
    char groups[GRID_MAX_ITER][16];
    const char *gp[GRID_MAX_ITER], *sp[3];
    double v[3 * GRID_MAX_ITER], e[3 * GRID_MAX_ITER];
    int ng = top - 1;
    for (int y = 0; y < ng; y++) snprintf(groups[y], sizeof groups[y], "%d→%d", y + 1, y + 2), gp[y] = groups[y];
    for (int k = 0; k < n; k++) {
        sp[k] = T->t4[rows[k]].key.feedback;
        for (int y = 0; y < ng; y++) {
            v[k * ng + y] = y < T->t4[rows[k]].n_iter - 1 ? T->t4[rows[k]].dy[y].mean : NAN;
            e[k * ng + y] = y < T->t4[rows[k]].n_iter - 1 ? T->t4[rows[k]].dy[y].sd : NAN;
        }
    }
    char title[300];
    snprintf(title, sizeof title, "Change of the normalised mean fitness per iteration (%s, %s)", lab,
             vd_col_names[f->ablation]);
    plot_axes ax = {.title = title, .xlabel = "iteration step", .ylabel = "Δy (error bars: ± std over seeds)",
                    .width = 860, .height = 400};
    unsigned char *png = NULL;
    size_t len = 0;
    if (ng > 0 && (!d->with_png || plot_bars_png(&ax, gp, ng, sp, n, v, e, &png, &len) == 0))
        vd_plot(d, title, "feedback_delta", png, len);
}

static void feedback_study(vdoc *d, const grid_rows *R, const grid_tables *T)
{
    for (int i = 0; i < T->n_t4; i++) {
        int rows[3], n = study_rows(T, &T->t4[i], rows);
        if (n > 1 && rows[0] == i) feedback_study_one(d, R, T, rows, n);
    }
}

/* ---------------------------------------------------------------- references (Fig. 7) */

static int add_value(int *v, int *n, int x)
{
    for (int i = 0; i < *n; i++)
        if (v[i] == x) return i;
    int i = *n;
    while (i > 0 && v[i - 1] > x) v[i] = v[i - 1], i--; /* kept sorted */
    v[i] = x;
    (*n)++;
    return i;
}

/* A GoT summary row of g's group with a value in column abl. */
static int heat_cell(const grid_tables *T, const grid_t2_row *e, const grid_key *g, int abl)
{
    return e->scenario == T->mean_scenario && !strcmp(e->key.pe, "got") && vd_same_group(&e->key, g) && e->col[abl].n;
}

/* The GoT summary rows (Mean, or the only scenario's) of g's group, by
 * best (rows) and worst (columns) reference counts, for column abl. */
static void heatmap_one(vdoc *d, const grid_tables *T, const grid_key *g, int abl)
{
    int bs[5], ws[5], nb = 0, nw = 0;
    for (int i = 0; i < T->n_t2; i++) {
        const grid_t2_row *e = &T->t2[i];
        if (!heat_cell(T, e, g, abl)) continue;
        add_value(bs, &nb, e->key.got_best);
        add_value(ws, &nw, e->key.got_worst);
    }
    if (nb * nw < 2) return;
    double v[25];
    for (int i = 0; i < 25; i++) v[i] = NAN;
    for (int i = 0; i < T->n_t2; i++) {
        const grid_t2_row *e = &T->t2[i];
        if (!heat_cell(T, e, g, abl)) continue;
        v[add_value(bs, &nb, e->key.got_best) * nw + add_value(ws, &nw, e->key.got_worst)] = e->col[abl].mean;
    }
    char title[400], head[300], rl[5][16], cl[5][16];
    const char *rp[5], *cp[5];
    vd_group_title(T, head, sizeof head, "GoT references", g);
    snprintf(title, sizeof title, "%s, %s (Fig. 7)", head, vd_col_names[abl]);
    vd_text(d, B_H3, "%s", title);
    vtable *t = vd_table(d, 1 + nw);
    if (!t) return;
    snprintf(t->head[0], VT_CELL, "best \\ worst");
    for (int c = 0; c < nw; c++) snprintf(t->head[1 + c], VT_CELL, "%d", ws[c]);
    for (int r = 0; r < nb; r++) {
        char(*row)[VT_CELL] = vd_row(t);
        if (!row) return;
        snprintf(row[0], VT_CELL, "%d", bs[r]);
        for (int c = 0; c < nw; c++) snprintf(row[1 + c], VT_CELL, isfinite(v[r * nw + c]) ? "%.3f" : "–", v[r * nw + c]);
        snprintf(rl[r], sizeof rl[r], "best %d", bs[r]), rp[r] = rl[r];
    }
    for (int c = 0; c < nw; c++) snprintf(cl[c], sizeof cl[c], "worst %d", ws[c]), cp[c] = cl[c];
    plot_axes ax = {.title = title, .xlabel = "worst-fitness references", .ylabel = "best-fitness references",
                    .width = 640, .height = 400};
    unsigned char *png = NULL;
    size_t len = 0;
    if (!d->with_png || plot_heatmap_png(&ax, rp, nb, cp, nw, v, 0, 1, &png, &len) == 0)
        vd_plot(d, title, "ref_heatmap", png, len);
}

static void heatmaps(vdoc *d, const grid_rows *R, const grid_tables *T, const grid_key *g)
{
    (void)R;
    heatmap_one(d, T, g, ABL_FULL);
    heatmap_one(d, T, g, ABL_FB);
}

/* ---------------------------------------------------------------- notes */

/* What the Human row is, and whose design each scenario's reward is (the
 * marker on the first line of the grid's copy, DIR/human/scenarioN.c). */
static void human_notes(vdoc *d, const grid_rows *R)
{
    char which[3][200] = {"", "", ""};
    for (int i = 0; i < R->n_scen; i++) {
        int k = R->human_kind[R->scen[i]];
        size_t l = strlen(which[k]);
        snprintf(which[k] + l, sizeof which[k] - l, "%s%d", l ? ", " : "", R->scen[i]);
    }
    vd_text(d, B_PARA, "The Human row is the human-written reward trained as it is (ZS) and then refined with CoT "
                       "(PCGRLLM).%s%s%s%s%s%s%s", which[1][0] ? " Scenario " : "", which[1],
            which[1][0] ? ": a port of the reference implementation's reward." : "", which[2][0] ? " Scenario " : "",
            which[2], which[2][0] ? ": the engine's own design." : "",
            which[0][0] ? " A reward file without a marker of its origin on its first line is labelled Human." : "");
}

/* Where the ZS and +SA columns come from. */
static void source_notes(vdoc *d, const grid_rows *R)
{
    static const char *const what[2] = {"ZS", "+SA"}, *const from[2] = {"+FB", "full"};
    for (int k = 0; k < 2; k++) {
        int col = k ? ABL_SA : ABL_ZS, src = grid_column_cells(R->abl, R->n_abl, col);
        if (src == col)
            vd_text(d, B_PARA, "%s runs once per (scenario, model, seed) in cells of its own (the grid has no %s "
                               "cells), reported under each search method.", what[k], from[k]);
        else if (src >= 0)
            vd_text(d, B_PARA, "%s is iteration 1 of each method's own %s cells, as in the paper's Table II: no "
                               "separate %s cells run.", what[k], from[k], k ? "+SA" : "zero-shot");
    }
}

static void notes(vdoc *d, const grid_rows *R, const grid_tables *T, int full)
{
    vd_text(d, B_H2, "Notes");
    for (int i = 0; i < R->n_authors; i++) vd_text(d, B_PARA, "Author: %s.", R->authors[i]);
    if (!R->n_authors) vd_text(d, B_PARA, "Author: none yet (no finished cell).");
    vd_text(d, B_PARA, "Cells: %d of %d finished; %d seed%s (repeats). Each entry is the mean ± sample standard "
                       "deviation over seeds (n shown when fewer seeds had a value).",
            R->n_finished, R->n_cells, R->repeats, R->repeats == 1 ? "" : "s");
    if (R->n_halted)
        vd_text(d, B_PARA, "%d cell%s stopped because %s model server failed (not a result: rerun the grid once the "
                           "server answers; see cells/NAME.log).",
                R->n_halted, R->n_halted == 1 ? "" : "s", R->n_halted == 1 ? "its" : "their");
    if (R->n_gave_up)
        vd_text(d, B_PARA, "%d finished cell%s ended early: the model wrote no reward function in two nodes in a "
                           "row, so the last of those nodes (fitness 0) is the final value.",
                R->n_gave_up, R->n_gave_up == 1 ? "" : "s");
    vd_text(d, B_PARA, "%s", T->value == GRID_VALUE_BEST
                                  ? "Values: --value best: the highest fitness among a cell's nodes up to the "
                                    "column's node (not the paper's measure)."
                                  : "Values (as the paper): ZS = iteration 1 without self-alignment, +SA = iteration 1 "
                                    "with it, +FB = the last iteration without it, PCGRLLM = the last iteration with it.");
    source_notes(d, R);
    if (R->human) human_notes(d, R);
    if (T->normalised) {
        vd_text(d, B_PARA, "Mean rows (the paper's scenario-wise normalised mean; its formula cannot be recovered from "
                           "the paper's numbers, so this is the engine's): per scenario s a fitness x maps to (x − r_s) "
                           "/ (1 − r_s), r_s random play's fitness in s: 0 is random play, 1 a perfect score, below 0 "
                           "worse than random play. The bounds are fixed, so a value does not change when cells are "
                           "added. The normalised scores of the scenarios are averaged per seed, then mean ± std over "
                           "seeds; the Mean (raw) rows average the raw scores the same way. Scenario rows are raw "
                           "scores.");
    } else {
        vd_text(d, B_PARA, "Not normalised: the grid has one scenario (%d). The paper's Mean row averages normalised "
                           "scores across scenarios; with one scenario there is nothing to average, so there is no "
                           "Mean row, and the values by iteration and the studies are raw fitness.", T->mean_scenario);
    }
    for (int i = 0; i < R->n_scen; i++) {
        int s = R->scen[i];
        vd_text(d, B_PARA, "Random play, scenario %d: %.3f (the %d evaluation levels after one episode of uniformly "
                           "random actions on the fixed evaluation maps, seed %llu; `pcgrllm levels --policy random`)%s.",
                s, T->random_play[s], R->n_levels, (unsigned long long)R->eval_seed,
                T->normalised ? ": the 0 of its normalisation" : "");
    }
    if (T->normalised)
        vd_text(d, B_PARA, "Random play on the Mean rows' scale: %.3f, by definition (the dashed line of the fitness "
                           "plots).", T->random_play_mean);
    vd_text(d, B_PARA, "p(ZS), p(SA): Welch's two-sided t-test of PCGRLLM against ZS and +SA over seeds, when both "
                       "columns have at least %d seeds (else \"n < %d\": too few runs for a test); – undefined (a "
                       "column missing, or no spread in either and the same mean). † p(ZS) < 0.05, ∗ p(SA) < 0.05, "
                       "with ↑ where PCGRLLM is higher (better) and ↓ where it is lower (worse). Bold: the best "
                       "value of the row.", GRID_MIN_TEST_N, GRID_MIN_TEST_N);
    vd_text(d, B_PARA, "Prompts: %s.", R->rules_on && R->rules_off ? "some cells stated the evaluator's rules "
                                                                      "(--evaluator-rules) and some did not"
                                        : R->rules_on ? "the evaluator's rules were stated (--evaluator-rules)"
                                                      : "the evaluator's rules were not stated, as in the paper");
    if (!full) vd_text(d, B_PARA, "Every table, the plots and the rows: tables.md, summary.html, summary.json.");
}

/* ---------------------------------------------------------------- the builder's bound */

/* What a level built to each scenario's target scores: the ceiling of
 * every column, measured by the evaluator on the builder's level. */
static void builder_bound(vdoc *d, const grid_rows *R)
{
    char line[400] = "";
    static build_result_t b;
    for (int i = 0; i < R->n_scen; i++) {
        target_t t;
        char why[300], one[120];
        if (target_scenario(R->scen[i], &t)) continue;
        if (build_level(&t, PCG_DEFAULT_SIDE, 0, &b, why, sizeof why) == BUILD_OK)
            snprintf(one, sizeof one, "scenario %d %.3f", R->scen[i], b.eval.score);
        else snprintf(one, sizeof one, "scenario %d not built (%.80s)", R->scen[i], why);
        size_t n = strlen(line);
        snprintf(line + n, sizeof line - n, "%s%s", n ? ", " : "", one);
    }
    if (line[0])
        vd_text(d, B_PARA, "Upper bound: a level the deterministic builder makes for each target (pcgrllm build, "
                           "docs/harness.md), scored by the evaluator: %s.", line);
}

/* ---------------------------------------------------------------- the document */

void grid_doc_build(vdoc *d, const grid_rows *R, const grid_tables *T, int full)
{
    d->R = R;
    vd_text(d, B_H2, "Table II: ablations by search method");
    if (!T->n_t2) vd_text(d, B_PARA, "No node has finished yet.");
    for_groups(d, R, T, table2_group);
    if (T->n_t2) builder_bound(d, R);
    if (!T->normalised && T->n_t2)
        vd_text(d, B_PARA, "No Mean row: a grid of one scenario is not normalised (see the notes).");
    if (full) {
        if (T->normalised) vd_text(d, B_H2, "Table IV: by iteration (normalised mean)");
        else vd_text(d, B_H2, "Table IV: by iteration (scenario %d, raw fitness: one scenario is not normalised)",
                     T->mean_scenario);
        for_groups(d, R, T, table4_group);
        vd_text(d, B_H2, "Studies");
        int before = d->n;
        table5(d, R, T);
        model_scores(d, R, T);
        table9(d, T);
        feedback_study(d, R, T);
        for_groups(d, R, T, heatmaps);
        if (d->n == before)
            vd_text(d, B_PARA, "None in this grid: --fitnesses heuristic,llm gives Table V, --fitness llm the model's "
                               "scores beside the heuristic, --feedback-inputs text,image Table IX, --feedbacks "
                               "specific,generic,none Table III and Fig. 6, --got-best and --got-worst lists Fig. 7.");
        if (R->n_cell_info) {
            vd_text(d, B_H2, "Cells");
            vd_block(d, B_CELLS);
        }
    }
    notes(d, R, T, full);
}
