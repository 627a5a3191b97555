/* A grid summary as a document of blocks (headings, notes, tables, plots,
 * the list of cells), built once from the rows and tables by
 * host/grid/grid_views.c and rendered as Markdown or HTML by
 * host/grid/grid_pages.c.  Private to those two files. */
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

#endif
