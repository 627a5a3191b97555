/* The blocks of a grid summary's document (grid_doc.h), and the labels
 * and number formats its tables share.  The tables themselves are
 * host/grid/grid_views.c. */
#define _GNU_SOURCE /* vasprintf */
#include "grid_doc.h"
#include "grid_report.h"
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- building */

vblock *vd_block(vdoc *d, int kind)
{
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 32;
        vblock *p = realloc(d->b, sizeof *p * (size_t)cap);
        if (!p) return NULL;
        d->b = p;
        d->cap = cap;
    }
    vblock *b = &d->b[d->n++];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    return b;
}

void vd_text(vdoc *d, int kind, const char *fmt, ...)
{
    vblock *b = vd_block(d, kind);
    if (!b) return;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&b->text, fmt, ap) < 0) b->text = NULL;
    va_end(ap);
}

vtable *vd_table(vdoc *d, int ncol)
{
    vblock *b = vd_block(d, B_TABLE);
    if (!b) return NULL;
    b->t = calloc(1, sizeof *b->t);
    if (b->t) b->t->ncol = ncol < VT_MAX_COLS ? ncol : VT_MAX_COLS;
    return b->t;
}

/* A new row; its cells, empty, to fill in (NULL when out of memory). */
char (*vd_row(vtable *t))[VT_CELL]
{
    if (!t) return NULL;
    if (t->nrow == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        char(*c)[VT_CELL] = realloc(t->cell, sizeof *c * (size_t)cap * (size_t)t->ncol);
        unsigned char *b = realloc(t->bold, (size_t)cap * (size_t)t->ncol);
        if (c) t->cell = c;
        if (b) t->bold = b;
        if (!c || !b) return NULL;
        t->cap = cap;
    }
    memset(t->cell[t->nrow * t->ncol], 0, sizeof *t->cell * (size_t)t->ncol);
    memset(t->bold + t->nrow * t->ncol, 0, (size_t)t->ncol);
    return &t->cell[t->nrow++ * t->ncol];
}

void vd_plot(vdoc *d, const char *title, const char *stem, unsigned char *png, size_t len)
{
    vblock *b = vd_block(d, B_PLOT);
    if (!b) return free(png);
    b->text = strdup(title);
    snprintf(b->name, sizeof b->name, "%s_%d.png", stem, ++d->plots);
    b->png = png;
    b->png_len = len;
}

void grid_doc_free(vdoc *d)
{
    for (int i = 0; i < d->n; i++) {
        free(d->b[i].text);
        free(d->b[i].png);
        if (d->b[i].t) free(d->b[i].t->cell), free(d->b[i].t->bold), free(d->b[i].t);
    }
    free(d->b);
}

/* ---------------------------------------------------------------- labels */

const char *const vd_col_names[4] = {"ZS", "+SA", "+FB", "PCGRLLM"};

void grid_key_label(const grid_key *k, int refs_vary, char *buf, size_t len)
{
    const char *pe = !strcmp(k->pe, "cot") ? "CoT" : !strcmp(k->pe, "tot") ? "ToT" : !strcmp(k->pe, "got") ? "GoT"
                     : !strcmp(k->pe, "human")                          ? "Human"
                                                                        : k->pe;
    if (refs_vary && k->got_best >= 0) snprintf(buf, len, "%s (best %d, worst %d)", pe, k->got_best, k->got_worst);
    else snprintf(buf, len, "%s", pe);
}

/* mean ± std, with n when fewer seeds than the grid's had a value; few:
 * also with n and "too few" below GRID_MIN_TEST_N (a column that is compared). */
/* v for printing with three decimals: a rounding error below zero (a
 * normalised value at random play's score) reads 0.000, not -0.000. */
static double tidy(double v) { return v < 0 && v > -0.0005 ? 0 : v; }

void vd_stat_few(char *buf, const grid_stat *s, int repeats, int few)
{
    const char *why = few && s->n < GRID_MIN_TEST_N ? ", too few" : "";
    double m = tidy(s->mean);
    if (s->n == 0) snprintf(buf, VT_CELL, "–");
    else if (!isfinite(s->sd)) snprintf(buf, VT_CELL, "%.3f (n=%d%s)", m, s->n, why);
    else if (s->n < repeats || *why) snprintf(buf, VT_CELL, "%.3f ± %.3f (n=%d%s)", m, s->sd, s->n, why);
    else snprintf(buf, VT_CELL, "%.3f ± %.3f", m, s->sd);
}

void vd_stat(char *buf, const grid_stat *s, int repeats) { vd_stat_few(buf, s, repeats, 0); }

/* Whether the keys of the tables take more than one value of field f
 * (an offset into grid_key). */
static int vd_field_varies(const grid_tables *T, size_t f)
{
    for (int i = 1; i < T->n_t2; i++)
        if (strcmp((const char *)&T->t2[i].key + f, (const char *)&T->t2[0].key + f)) return 1;
    return 0;
}

/* ", rich prompts, full reward API, LLM fitness, improve acceptance,
 * target 0.9": the settings of a key
 * that a table names where the grid varies them or they are not the
 * runs' defaults. */
static void vd_key_extras(const grid_tables *T, const grid_key *k, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    if (vd_field_varies(T, offsetof(grid_key, prompts)) || strcmp(k->prompts, "paper"))
        n += (size_t)snprintf(buf + n, len - n, ", %s prompts", k->prompts);
    if (n < len && (vd_field_varies(T, offsetof(grid_key, reward_api)) || strcmp(k->reward_api, "minimal")))
        n += (size_t)snprintf(buf + n, len - n, ", %s reward API", k->reward_api);
    if (n < len && k->search_fitness[0] && /* "": a table of both */
        (vd_field_varies(T, offsetof(grid_key, search_fitness)) || strcmp(k->search_fitness, "heuristic")))
        n += (size_t)snprintf(buf + n, len - n, ", %s fitness", !strcmp(k->search_fitness, "llm") ? "LLM" : k->search_fitness);
    if (n < len && (vd_field_varies(T, offsetof(grid_key, accept)) || strcmp(k->accept, "always")))
        n += (size_t)snprintf(buf + n, len - n, ", %s acceptance", k->accept);
    if (n < len && (vd_field_varies(T, offsetof(grid_key, target_fitness)) || strcmp(k->target_fitness, "none")))
        snprintf(buf + n, len - n, ", target %s", k->target_fitness);
}

/* "GoT, gpt-4o, specific, text": a method with its model and feedback
 * settings (and the others that key_extras names), where a table mixes
 * them. */
void vd_full_label(const grid_tables *T, const grid_key *k, int rv, char *buf)
{
    char lab[VT_CELL], more[128];
    grid_key_label(k, rv, lab, sizeof lab);
    vd_key_extras(T, k, more, sizeof more);
    snprintf(buf, VT_CELL, "%.24s, %.24s, %.12s, %.6s%.52s", lab, k->model, k->feedback, k->feedback_input, more);
}

void vd_p(char *buf, double p, int few)
{
    if (few) snprintf(buf, VT_CELL, "n < %d", GRID_MIN_TEST_N);
    else snprintf(buf, VT_CELL, isfinite(p) ? "%.3f" : "–", p);
}

/* The table group of a key: model, feedback, feedback input, prompts,
 * reward API, fitness, acceptance and target fitness (a table holds every
 * method of the group). */
int vd_same_group(const grid_key *a, const grid_key *b)
{
    return !strcmp(a->model, b->model) && !strcmp(a->feedback, b->feedback) &&
           !strcmp(a->feedback_input, b->feedback_input) && !strcmp(a->prompts, b->prompts) &&
           !strcmp(a->reward_api, b->reward_api) && !strcmp(a->search_fitness, b->search_fitness) &&
           !strcmp(a->accept, b->accept) && !strcmp(a->target_fitness, b->target_fitness);
}

void vd_group_title(const grid_tables *T, char *buf, size_t len, const char *table, const grid_key *k)
{
    char more[128];
    vd_key_extras(T, k, more, sizeof more);
    snprintf(buf, len, "%s — %s%s, %s feedback, %s input%s", table,
             !strcmp(k->model, "offline") ? "offline author" : "model ", !strcmp(k->model, "offline") ? "" : k->model,
             k->feedback, k->feedback_input, more);
}

/* Whether the grid shows GoT with several reference counts. */
int vd_refs_vary(const grid_tables *T)
{
    for (int i = 0; i < T->n_t2; i++)
        for (int j = 0; j < T->n_t2; j++)
            if (T->t2[i].key.got_best >= 0 && T->t2[j].key.got_best >= 0 &&
                (T->t2[i].key.got_best != T->t2[j].key.got_best || T->t2[i].key.got_worst != T->t2[j].key.got_worst))
                return 1;
    return 0;
}

/* ---------------------------------------------------------------- Table V */

void vd_delta(char *buf, double a, double b)
{
    snprintf(buf, VT_CELL, isfinite(a) && isfinite(b) ? "%+.3f" : "–", fabs(b - a) < 0.0005 ? 0 : b - a);
}

void vd_mean(char *buf, const grid_stat *s) { snprintf(buf, VT_CELL, s->n ? "%.3f" : "–", tidy(s->mean)); }
