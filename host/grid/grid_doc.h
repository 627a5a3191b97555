/* A grid summary as a document of blocks (headings, notes, tables, plots,
 * the list of cells), built once from the rows and tables by
 * host/grid/grid_views.c (with the blocks and labels of
 * host/grid/grid_doc.c) and rendered as Markdown or HTML by
 * host/grid/grid_pages.c.  Private to those files. */
#ifndef PCG_GRID_DOC_H
#define PCG_GRID_DOC_H
#include "grid_rows.h"
#include <stddef.h>

#define VT_MAX_COLS 72
#define VT_CELL 128

typedef struct {
    int ncol, nrow, cap;
    char head[VT_MAX_COLS][VT_CELL];
    char (*cell)[VT_CELL];       /* nrow x ncol */
    unsigned char *bold;
} vtable;

enum { B_H2, B_H3, B_PARA, B_TABLE, B_PLOT, B_CELLS };

typedef struct {
    int kind;
    char *text;                  /* heading, note, or the plot's title */
    vtable *t;
    char name[96];               /* a plot's file name under plots/ */
    unsigned char *png;
    size_t png_len;
} vblock;

typedef struct {
    vblock *b;
    int n, cap;
    int with_png;                /* draw the plots (not needed for Markdown) */
    int plots;                   /* plots named so far */
    const grid_rows *R;          /* for B_CELLS: the cells and their reports */
} vdoc;

/* Every block of the summary into d (full: every table, else Table II and
 * the notes); d->with_png draws the plots. */
void grid_doc_build(vdoc *d, const grid_rows *R, const grid_tables *T, int full);
void grid_doc_free(vdoc *d);

/* ---- building blocks (host/grid/grid_doc.c); NULL when out of memory ---- */
vblock *vd_block(vdoc *d, int kind);
void vd_text(vdoc *d, int kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
vtable *vd_table(vdoc *d, int ncol);
/* A new row of t; its cells, empty, to fill in. */
char (*vd_row(vtable *t))[VT_CELL];
/* A plot (png: malloc'd, taken) as plots/STEM_K.png. */
void vd_plot(vdoc *d, const char *title, const char *stem, unsigned char *png, size_t len);

/* ---- labels and numbers ---- */
extern const char *const vd_col_names[4]; /* ZS, +SA, +FB, PCGRLLM */
/* mean ± std, with n when fewer seeds than the grid's had a value; few:
 * also "too few" below GRID_MIN_TEST_N (a column that is compared). */
void vd_stat_few(char *buf, const grid_stat *s, int repeats, int few);
void vd_stat(char *buf, const grid_stat *s, int repeats);
/* A p-value, "n < 3" when not tested, – when undefined. */
void vd_p(char *buf, double p, int few);
/* "+0.123": b - a, – when either is unknown. */
void vd_delta(char *buf, double a, double b);
/* A mean alone, – without seeds. */
void vd_mean(char *buf, const grid_stat *s);
/* "GoT, gpt-4o, specific, text[, rich prompts, ...]": a method with its
 * settings, where a table mixes them. */
void vd_full_label(const grid_tables *T, const grid_key *k, int rv, char *buf);
/* The table group of a key: all but the method (a table holds every
 * method of the group), and its title. */
int vd_same_group(const grid_key *a, const grid_key *b);
void vd_group_title(const grid_tables *T, char *buf, size_t len, const char *table, const grid_key *k);
/* Whether the grid shows GoT with several reference counts. */
int vd_refs_vary(const grid_tables *T);

#endif
