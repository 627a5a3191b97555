/* A grid summary's document (host/grid/grid_doc.h) as Markdown (tables.md,
 * summary.txt), as one HTML page that opens from disk (summary.html), and
 * its plots as files.  See grid_report.h and docs/grid.md. */
#include "grid_doc.h"
#include "grid_report.h"
#include "llm.h"
#include "util.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the cells */

/* A cell's report as a path relative to the summary, percent-encoded
 * but for letters, digits and "-._~/": safe in a quoted attribute and in a
 * Markdown link whatever the cell's name holds. */
static void report_url(FILE *f, const char *name)
{
    fputs("cells/", f);
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("-._~", *p))
            fputc(*p, f);
        else fprintf(f, "%%%02X", *p);
    }
    fputs("/report.html", f);
}

/* A cell's columns but the name and the link: scenario, repeat, state, best. */
static void cell_fields(const grid_cell_info *c, char *buf, size_t len, const char *sep)
{
    if (c->state != GRID_NEW && c->best_node >= 0)
        snprintf(buf, len, "%d%s%d%s%s%s%.3f (node %d)", c->scenario, sep, c->repeat, sep, grid_cell_state_name(c->state), sep,
                 c->best_fitness, c->best_node);
    else snprintf(buf, len, "%d%s%d%s%s%s–", c->scenario, sep, c->repeat, sep, grid_cell_state_name(c->state), sep);
}

static const char *const cell_heads[] = {"Cell", "Scenario", "Repeat", "State", "Best fitness", "Report"};
#define N_CELL_HEADS ((int)(sizeof cell_heads / sizeof *cell_heads))

static void md_cells(FILE *f, const grid_rows *R)
{
    char fields[160];
    for (int k = 0; k < N_CELL_HEADS; k++) fprintf(f, "| %s ", cell_heads[k]);
    fputs("|\n|---|---:|---:|---|---:|---|\n", f);
    for (int i = 0; i < R->n_cell_info; i++) {
        const grid_cell_info *c = &R->cell_info[i];
        cell_fields(c, fields, sizeof fields, " | ");
        fprintf(f, "| %s | %s | ", c->name, fields);
        if (c->report) fputs("[report](", f), report_url(f, c->name), fputs(")", f);
        else fputs("–", f);
        fputs(" |\n", f);
    }
    fputs("\n", f);
}

/* ---------------------------------------------------------------- Markdown */

static void md_table(FILE *f, const vtable *t)
{
    for (int c = 0; c < t->ncol; c++) fprintf(f, "| %s ", t->head[c]);
    fprintf(f, "|\n");
    for (int c = 0; c < t->ncol; c++) fprintf(f, "|%s", c < 2 ? "---" : "---:");
    fprintf(f, "|\n");
    for (int r = 0; r < t->nrow; r++) {
        for (int c = 0; c < t->ncol; c++) {
            const char *s = t->cell[r * t->ncol + c];
            fprintf(f, t->bold[r * t->ncol + c] ? "| **%s** " : "| %s ", s);
        }
        fprintf(f, "|\n");
    }
    fprintf(f, "\n");
}

char *grid_tables_markdown(const grid_rows *R, const grid_tables *T, int full)
{
    vdoc d = {0};
    grid_doc_build(&d, R, T, full);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    for (int i = 0; f && i < d.n; i++) {
        const vblock *b = &d.b[i];
        if (b->kind == B_H2) fprintf(f, "## %s\n\n", b->text ? b->text : "");
        else if (b->kind == B_H3) fprintf(f, "### %s\n\n", b->text ? b->text : "");
        else if (b->kind == B_PARA) fprintf(f, "%s\n\n", b->text ? b->text : "");
        else if (b->kind == B_TABLE && b->t) md_table(f, b->t);
        else if (b->kind == B_PLOT) fprintf(f, "![%s](plots/%s)\n\n", b->text ? b->text : "", b->name);
        else if (b->kind == B_CELLS) md_cells(f, d.R);
    }
    if (f) fclose(f);
    grid_doc_free(&d);
    return buf;
}

/* ---------------------------------------------------------------- HTML */

/* Text for an element or a quoted attribute. */
static void html_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '\'') fputs("&#39;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

static void html_cells(FILE *f, const grid_rows *R)
{
    char fields[200];
    fputs("<table class='cells'><tr>", f);
    for (int k = 0; k < N_CELL_HEADS; k++) fprintf(f, "<th>%s</th>", cell_heads[k]);
    fputs("</tr>\n", f);
    for (int i = 0; i < R->n_cell_info; i++) {
        const grid_cell_info *c = &R->cell_info[i];
        fputs("<tr><td>", f);
        html_text(f, c->name);
        cell_fields(c, fields, sizeof fields, "</td><td>");
        fprintf(f, "</td><td>%s</td><td>", fields);
        if (c->report) fputs("<a href='", f), report_url(f, c->name), fputs("'>report</a>", f);
        else fputs("–", f);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void html_table(FILE *f, const vtable *t)
{
    fputs("<table><tr>", f);
    for (int c = 0; c < t->ncol; c++) fputs("<th>", f), html_text(f, t->head[c]), fputs("</th>", f);
    fputs("</tr>\n", f);
    for (int r = 0; r < t->nrow; r++) {
        fputs("<tr>", f);
        for (int c = 0; c < t->ncol; c++) {
            int b = t->bold[r * t->ncol + c];
            fputs(b ? "<td><b>" : "<td>", f);
            html_text(f, t->cell[r * t->ncol + c]);
            fputs(b ? "</b></td>" : "</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

char *grid_tables_html(const grid_rows *R, const grid_tables *T, const char *title)
{
    vdoc d = {.with_png = 1};
    grid_doc_build(&d, R, T, 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return grid_doc_free(&d), NULL;
    fputs("<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>", f);
    html_text(f, title);
    fputs("</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}"
          "table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;"
          "text-align:right}th{background:#f0f0f0}td:nth-child(-n+2){text-align:left}img{max-width:100%}"
          "</style></head><body>\n<h1>",
          f);
    html_text(f, title);
    fputs("</h1>\n", f);
    for (int i = 0; i < d.n; i++) {
        const vblock *b = &d.b[i];
        const char *tag = b->kind == B_H2 ? "h2" : b->kind == B_H3 ? "h3" : "p";
        if (b->kind == B_TABLE && b->t) html_table(f, b->t);
        else if (b->kind == B_PLOT && b->png) {
            char *b64 = llm_base64(b->png, b->png_len);
            fputs("<p><img alt='", f);
            html_text(f, b->name);
            fprintf(f, "' src='data:image/png;base64,%s'/></p>\n", b64 ? b64 : "");
            free(b64);
        } else if (b->kind == B_CELLS) {
            html_cells(f, d.R);
        } else if (b->kind != B_TABLE && b->kind != B_PLOT) {
            fprintf(f, "<%s>", tag);
            html_text(f, b->text);
            fprintf(f, "</%s>\n", tag);
        }
    }
    fputs("</body></html>\n", f);
    fclose(f);
    grid_doc_free(&d);
    return buf;
}

/* The plots as files DIR/plots/NAME.png (the names tables.md gives).
 * 0, or -1 with err. */
int grid_write_plots(const char *out, const grid_rows *R, const grid_tables *T, char *err, int errlen)
{
    vdoc d = {.with_png = 1};
    grid_doc_build(&d, R, T, 1);
    char path[1400];
    int rc = 0;
    snprintf(path, sizeof path, "%s/plots", out);
    if (make_dirs(path)) rc = -1, snprintf(err, (size_t)errlen, "cannot create %s", path);
    for (int i = 0; !rc && i < d.n; i++)
        if (d.b[i].kind == B_PLOT && d.b[i].png) {
            snprintf(path, sizeof path, "%s/plots/%s", out, d.b[i].name);
            rc = write_file_atomic_msg(path, d.b[i].png, d.b[i].png_len, err, errlen);
        }
    grid_doc_free(&d);
    return rc;
}
