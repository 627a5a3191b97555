/* Charts drawn with cairo.  See plot.h. */
#include "plot.h"
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Colours of the series, in order (colour-blind safe, after Okabe and Ito). */
static const double palette[][3] = {
    {0.00, 0.45, 0.70}, {0.90, 0.62, 0.00}, {0.00, 0.62, 0.45}, {0.80, 0.40, 0.00},
    {0.34, 0.71, 0.91}, {0.80, 0.47, 0.65}, {0.35, 0.35, 0.35}, {0.94, 0.89, 0.26},
};
#define N_PALETTE ((int)(sizeof palette / sizeof palette[0]))

typedef struct {
    cairo_surface_t *surface;
    cairo_t *cr;
    int w, h;
    double x0, y0, x1, y1;     /* the plot area, pixels */
    double xmin, xmax, ymin, ymax;
} canvas;

static void colour(cairo_t *cr, int k, double alpha)
{
    const double *c = palette[k % N_PALETTE];
    cairo_set_source_rgba(cr, c[0], c[1], c[2], alpha);
}

static void text_at(cairo_t *cr, double x, double y, const char *s, double size, double align_x, double align_y)
{
    cairo_text_extents_t e;
    cairo_set_font_size(cr, size);
    cairo_text_extents(cr, s, &e);
    cairo_move_to(cr, x - e.width * align_x - e.x_bearing, y - e.height * align_y - e.y_bearing);
    cairo_show_text(cr, s);
}

/* A white page with the title; the plot area leaves room for the axis
 * labels and, on the right, legend_w pixels of legend. */
static int canvas_open(canvas *c, const plot_axes *ax, int legend_w)
{
    memset(c, 0, sizeof *c);
    c->w = ax->width > 0 ? ax->width : 720;
    c->h = ax->height > 0 ? ax->height : 420;
    c->surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, c->w, c->h);
    c->cr = cairo_create(c->surface);
    if (cairo_status(c->cr) != CAIRO_STATUS_SUCCESS) return -1;
    cairo_set_source_rgb(c->cr, 1, 1, 1);
    cairo_paint(c->cr);
    cairo_select_font_face(c->cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_source_rgb(c->cr, 0.1, 0.1, 0.1);
    if (ax->title) text_at(c->cr, c->w / 2.0, 14, ax->title, 15, 0.5, 0);
    c->x0 = 70;
    c->y0 = 40;
    c->x1 = c->w - 20 - legend_w;
    c->y1 = c->h - 55;
    return 0;
}

typedef struct {
    unsigned char *data;
    size_t len, cap;
    int oom;
} png_buf;

static cairo_status_t png_append(void *closure, const unsigned char *data, unsigned int n)
{
    png_buf *b = closure;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 65536;
        while (cap < b->len + n) cap *= 2;
        unsigned char *p = realloc(b->data, cap);
        if (!p) return b->oom = 1, CAIRO_STATUS_WRITE_ERROR;
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
    return CAIRO_STATUS_SUCCESS;
}

static int canvas_close(canvas *c, unsigned char **png, size_t *len)
{
    png_buf b = {0};
    cairo_surface_flush(c->surface);
    cairo_status_t st = cairo_surface_write_to_png_stream(c->surface, png_append, &b);
    cairo_destroy(c->cr);
    cairo_surface_destroy(c->surface);
    if (st != CAIRO_STATUS_SUCCESS || b.oom) {
        free(b.data);
        return -1;
    }
    *png = b.data;
    *len = b.len;
    return 0;
}

static double px_x(const canvas *c, double v) { return c->x0 + (v - c->xmin) / (c->xmax - c->xmin) * (c->x1 - c->x0); }
static double px_y(const canvas *c, double v) { return c->y1 - (v - c->ymin) / (c->ymax - c->ymin) * (c->y1 - c->y0); }

/* A tick step of 1, 2 or 5 times a power of ten giving about n ticks. */
static double nice_step(double range, int n)
{
    double raw = range / n, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/* The frame, y ticks with a light grid, the axis labels. */
static void draw_frame(canvas *c, const plot_axes *ax)
{
    cairo_t *cr = c->cr;
    double step = nice_step(c->ymax - c->ymin, 5);
    char lab[32];
    cairo_set_line_width(cr, 1);
    for (double v = ceil(c->ymin / step - 1e-9) * step; v <= c->ymax + 1e-9 * step; v += step) {
        double y = px_y(c, v);
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, c->x0, y);
        cairo_line_to(cr, c->x1, y);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        snprintf(lab, sizeof lab, "%.*f", step < 0.1 ? 2 : step < 1 ? 1 : 0, fabs(v) < 1e-12 ? 0.0 : v);
        text_at(cr, c->x0 - 6, y, lab, 11, 1, 0.5);
    }
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_rectangle(cr, c->x0, c->y0, c->x1 - c->x0, c->y1 - c->y0);
    cairo_stroke(cr);
    if (ax->xlabel) text_at(cr, (c->x0 + c->x1) / 2, c->h - 12, ax->xlabel, 12, 0.5, 1);
    if (ax->ylabel) {
        cairo_save(cr);
        cairo_translate(cr, 16, (c->y0 + c->y1) / 2);
        cairo_rotate(cr, -M_PI / 2);
        text_at(cr, 0, 0, ax->ylabel, 12, 0.5, 0.5);
        cairo_restore(cr);
    }
}

/* Legend entries down the right edge. */
static void draw_legend(canvas *c, const char *const *labels, int n)
{
    for (int k = 0; k < n; k++) {
        double y = c->y0 + 8 + 20 * k;
        colour(c->cr, k, 1);
        cairo_rectangle(c->cr, c->x1 + 16, y - 5, 14, 10);
        cairo_fill(c->cr);
        cairo_set_source_rgb(c->cr, 0.1, 0.1, 0.1);
        text_at(c->cr, c->x1 + 36, y, labels[k] ? labels[k] : "", 12, 0, 0.5);
    }
}

/* The y range of the data (values and bands), or the one given. */
static void y_range(const plot_axes *ax, const double *v, size_t n, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) {
            if (v[i] < *lo) *lo = v[i];
            if (v[i] > *hi) *hi = v[i];
        }
    if (ax->ymin < ax->ymax) *lo = ax->ymin, *hi = ax->ymax;
    if (!(*lo <= *hi)) *lo = 0, *hi = 1;
    if (*hi - *lo < 1e-9) *lo -= 0.5, *hi += 0.5;
}

static void draw_marker(cairo_t *cr, double x, double y, int kind)
{
    if (kind == 2) {
        cairo_move_to(cr, x - 4, y - 4);
        cairo_line_to(cr, x + 4, y + 4);
        cairo_move_to(cr, x - 4, y + 4);
        cairo_line_to(cr, x + 4, y - 4);
        cairo_stroke(cr);
    } else {
        cairo_arc(cr, x, y, 3.5, 0, 2 * M_PI);
        cairo_fill(cr);
    }
}

static void draw_series(canvas *c, const plot_series *s, int k)
{
    cairo_t *cr = c->cr;
    if (s->lo && s->hi) { /* the band: upper edge forward, lower edge back */
        int started = 0;
        for (int i = 0; i < s->n; i++)
            if (isfinite(s->hi[i]) && isfinite(s->lo[i])) {
                (started++ ? cairo_line_to : cairo_move_to)(cr, px_x(c, s->x[i]), px_y(c, s->hi[i]));
            }
        for (int i = s->n - 1; i >= 0; i--)
            if (isfinite(s->hi[i]) && isfinite(s->lo[i])) cairo_line_to(cr, px_x(c, s->x[i]), px_y(c, s->lo[i]));
        colour(cr, k, 0.18);
        if (started) cairo_fill(cr);
        cairo_new_path(cr);
    }
    colour(cr, k, 1);
    cairo_set_line_width(cr, 2);
    if (s->line || s->step) {
        int pen = 0;
        double py = 0;
        for (int i = 0; i < s->n; i++) {
            if (!isfinite(s->y[i])) {
                pen = 0;
                continue;
            }
            double x = px_x(c, s->x[i]), y = px_y(c, s->y[i]);
            if (pen && s->step) cairo_line_to(cr, x, py);
            (pen ? cairo_line_to : cairo_move_to)(cr, x, y);
            pen = 1;
            py = y;
        }
        cairo_stroke(cr);
    }
    cairo_set_line_width(cr, 1.5);
    for (int i = 0; s->markers && i < s->n; i++)
        if (isfinite(s->y[i])) draw_marker(cr, px_x(c, s->x[i]), px_y(c, s->y[i]), s->markers);
}

/* x ticks at the integers when there are few of them, else nice steps. */
static void draw_x_ticks(canvas *c)
{
    double range = c->xmax - c->xmin, step = range <= 12 ? 1 : nice_step(range, 8);
    char lab[32];
    cairo_set_source_rgb(c->cr, 0.2, 0.2, 0.2);
    for (double v = ceil(c->xmin / step - 1e-9) * step; v <= c->xmax + 1e-9; v += step) {
        snprintf(lab, sizeof lab, "%g", v);
        text_at(c->cr, px_x(c, v), c->y1 + 8, lab, 11, 0.5, 0);
    }
}

/* The reference line across the plot area (under the series), or (legend
 * >= 0) its entry at that place in the legend. */
static void draw_reference(canvas *c, const plot_axes *ax, int legend)
{
    cairo_t *cr = c->cr;
    double dash[] = {6, 4}, y = legend < 0 ? px_y(c, ax->ref_y) : c->y0 + 8 + 20 * legend;
    double x0 = legend < 0 ? c->x0 : c->x1 + 16, x1 = legend < 0 ? c->x1 : c->x1 + 30;
    cairo_save(cr);
    cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
    cairo_set_line_width(cr, 1.5);
    cairo_set_dash(cr, dash, 2, 0);
    cairo_move_to(cr, x0, y);
    cairo_line_to(cr, x1, y);
    cairo_stroke(cr);
    cairo_restore(cr);
    if (legend < 0) return;
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    text_at(cr, c->x1 + 36, y, ax->ref_label, 12, 0, 0.5);
}

int plot_lines_png(const plot_axes *ax, const plot_series *s, int ns, unsigned char **png, size_t *len)
{
    canvas c;
    const char *labels[16];
    int nl = ns < 16 ? ns : 16;
    for (int k = 0; k < nl; k++) labels[k] = s[k].label;
    if (canvas_open(&c, ax, 150)) return canvas_close(&c, png, len), -1;
    double lo = INFINITY, hi = -INFINITY, a, b;
    c.xmin = INFINITY;
    c.xmax = -INFINITY;
    for (int k = 0; k < ns; k++) {
        for (int i = 0; i < s[k].n; i++) {
            if (s[k].x[i] < c.xmin) c.xmin = s[k].x[i];
            if (s[k].x[i] > c.xmax) c.xmax = s[k].x[i];
        }
        y_range(ax, s[k].y, (size_t)s[k].n, &a, &b);
        lo = fmin(lo, a), hi = fmax(hi, b);
        if (s[k].lo) y_range(ax, s[k].lo, (size_t)s[k].n, &a, &b), lo = fmin(lo, a);
        if (s[k].hi) y_range(ax, s[k].hi, (size_t)s[k].n, &a, &b), hi = fmax(hi, b);
    }
    int ref = ax->ref_label && isfinite(ax->ref_y);
    if (ref) lo = fmin(lo, ax->ref_y), hi = fmax(hi, ax->ref_y); /* in view even outside the range given */
    if (!(c.xmin < c.xmax)) c.xmin = isfinite(c.xmin) ? c.xmin - 1 : 0, c.xmax = c.xmin + 2;
    double pad = (c.xmax - c.xmin) * 0.04;
    c.xmin -= pad, c.xmax += pad;
    c.ymin = isfinite(lo) ? lo : 0;
    c.ymax = isfinite(hi) ? hi : 1;
    draw_frame(&c, ax);
    draw_x_ticks(&c);
    cairo_save(c.cr);
    cairo_rectangle(c.cr, c.x0, c.y0, c.x1 - c.x0, c.y1 - c.y0);
    cairo_clip(c.cr);
    if (ref) draw_reference(&c, ax, -1);
    for (int k = 0; k < ns; k++) draw_series(&c, &s[k], k);
    cairo_restore(c.cr);
    draw_legend(&c, labels, nl);
    if (ref) draw_reference(&c, ax, nl);
    return canvas_close(&c, png, len);
}

int plot_bars_png(const plot_axes *ax, const char *const *groups, int ng, const char *const *series, int ns,
                  const double *value, const double *err, unsigned char **png, size_t *len)
{
    canvas c;
    if (canvas_open(&c, ax, 150)) return canvas_close(&c, png, len), -1;
    size_t n = (size_t)ng * (size_t)ns;
    double *ext = malloc(sizeof(double) * (2 * n + 1));
    if (!ext) return canvas_close(&c, png, len), -1;
    for (size_t i = 0; i < n; i++) {
        double e = err && isfinite(err[i]) ? err[i] : 0;
        ext[2 * i] = value[i] - e;
        ext[2 * i + 1] = value[i] + e;
    }
    ext[2 * n] = 0; /* bars start at zero */
    y_range(ax, ext, 2 * n + 1, &c.ymin, &c.ymax);
    free(ext);
    c.xmin = 0;
    c.xmax = ng > 0 ? ng : 1;
    draw_frame(&c, ax);
    cairo_t *cr = c.cr;
    double gw = (c.x1 - c.x0) / c.xmax, bw = gw * 0.8 / (ns > 0 ? ns : 1);
    for (int g = 0; g < ng; g++) {
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        text_at(cr, c.x0 + gw * (g + 0.5), c.y1 + 8, groups[g], 11, 0.5, 0);
        for (int k = 0; k < ns; k++) {
            double v = value[k * ng + g], x = c.x0 + gw * g + gw * 0.1 + bw * k;
            if (!isfinite(v)) continue;
            colour(cr, k, 1);
            double ya = px_y(&c, 0), yb = px_y(&c, v);
            cairo_rectangle(cr, x + 1, fmin(ya, yb), bw - 2, fabs(yb - ya));
            cairo_fill(cr);
            double e = err ? err[k * ng + g] : NAN;
            if (!isfinite(e) || e <= 0) continue;
            cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
            cairo_set_line_width(cr, 1.2);
            cairo_move_to(cr, x + bw / 2, px_y(&c, v - e));
            cairo_line_to(cr, x + bw / 2, px_y(&c, v + e));
            cairo_stroke(cr);
        }
    }
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2); /* the zero line */
    cairo_move_to(cr, c.x0, px_y(&c, 0));
    cairo_line_to(cr, c.x1, px_y(&c, 0));
    cairo_stroke(cr);
    draw_legend(&c, series, ns);
    return canvas_close(&c, png, len);
}

int plot_heatmap_png(const plot_axes *ax, const char *const *rows, int nr, const char *const *cols, int nc,
                     const double *v, double vmin, double vmax, unsigned char **png, size_t *len)
{
    canvas c;
    if (canvas_open(&c, ax, 0)) return canvas_close(&c, png, len), -1;
    cairo_t *cr = c.cr;
    c.x0 = 110; /* room for the row labels */
    c.y0 = 48;
    double cw = (c.x1 - c.x0) / (nc > 0 ? nc : 1), ch = (c.y1 - c.y0) / (nr > 0 ? nr : 1);
    char lab[32];
    for (int r = 0; r < nr; r++)
        for (int k = 0; k < nc; k++) {
            double x = v[r * nc + k], t = vmax > vmin ? (x - vmin) / (vmax - vmin) : 0.5;
            t = fmin(1, fmax(0, t));
            /* white to the first palette colour; grey where nothing was measured */
            if (isfinite(x)) cairo_set_source_rgb(cr, 1 - t, 1 - 0.55 * t, 1 - 0.3 * t);
            else cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
            cairo_rectangle(cr, c.x0 + cw * k, c.y0 + ch * r, cw, ch);
            cairo_fill(cr);
            snprintf(lab, sizeof lab, isfinite(x) ? "%.3f" : "-", x);
            cairo_set_source_rgb(cr, t > 0.6 ? 1 : 0.1, t > 0.6 ? 1 : 0.1, t > 0.6 ? 1 : 0.1);
            text_at(cr, c.x0 + cw * (k + 0.5), c.y0 + ch * (r + 0.5), lab, 13, 0.5, 0.5);
        }
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    for (int k = 0; k < nc; k++) text_at(cr, c.x0 + cw * (k + 0.5), c.y1 + 8, cols[k], 12, 0.5, 0);
    for (int r = 0; r < nr; r++) text_at(cr, c.x0 - 8, c.y0 + ch * (r + 0.5), rows[r], 12, 1, 0.5);
    if (ax->xlabel) text_at(cr, (c.x0 + c.x1) / 2, c.h - 12, ax->xlabel, 12, 0.5, 1);
    if (ax->ylabel) {
        cairo_save(cr);
        cairo_translate(cr, 16, (c.y0 + c.y1) / 2);
        cairo_rotate(cr, -M_PI / 2);
        text_at(cr, 0, 0, ax->ylabel, 12, 0.5, 0.5);
        cairo_restore(cr);
    }
    return canvas_close(&c, png, len);
}
