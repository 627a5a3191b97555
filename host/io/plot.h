/* Charts for reports, drawn with cairo into PNG bytes (the HTML pages embed
 * them as data URLs, so they open from disk): lines with a spread band,
 * grouped bars with error bars, and a labelled heatmap.  Values that are
 * NAN are not drawn (a gap in a line, a missing bar, a grey cell). */
#ifndef PCG_PLOT_H
#define PCG_PLOT_H
#include <stddef.h>

typedef struct {
    const char *title, *xlabel, *ylabel;
    double ymin, ymax;          /* the y range; ymin >= ymax: from the data */
    int width, height;          /* pixels; 0: 720 x 420 */
    const char *ref_label;      /* lines only: a dashed horizontal reference line at */
    double ref_y;               /* ref_y, named in the legend (NULL or NAN: none) */
} plot_axes;

typedef struct {
    const char *label;          /* in the legend */
    int n;
    const double *x, *y;        /* n points, x ascending */
    const double *lo, *hi;      /* a shaded band from lo to hi (both NULL: none) */
    int line;                   /* join the points */
    int step;                   /* join them as a staircase (best so far) */
    int markers;                /* 1 dots, 2 crosses */
} plot_series;

/* A PNG (malloc'd into *png, *len bytes).  0, or -1 (out of memory, a
 * cairo failure). */
int plot_lines_png(const plot_axes *ax, const plot_series *s, int ns, unsigned char **png, size_t *len);
/* Bars: ng groups along x (labels groups[]), ns bars in each (series[]);
 * value[k * ng + g] is bar k of group g, err[] (or NULL) a +- error bar. */
int plot_bars_png(const plot_axes *ax, const char *const *groups, int ng, const char *const *series, int ns,
                  const double *value, const double *err, unsigned char **png, size_t *len);
/* nr x nc cells, v[r * nc + c], coloured on [vmin, vmax] and labelled with
 * their value; row and column labels, ax->xlabel naming the columns and
 * ax->ylabel the rows. */
int plot_heatmap_png(const plot_axes *ax, const char *const *rows, int nr, const char *const *cols, int nc,
                     const double *v, double vmin, double vmax, unsigned char **png, size_t *len);

#endif
