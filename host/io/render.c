#include "render.h"
#include "levelio.h"
#include "util.h"
#include <cairo.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Fill colour (RGB 0..1) and label per tile. */
static const double tile_rgb[N_TILES][3] = {
    {0.10, 0.10, 0.10}, /* BORDER */
    {0.93, 0.91, 0.84}, /* EMPTY */
    {0.30, 0.28, 0.33}, /* WALL */
    {0.20, 0.55, 0.95}, /* PLAYER */
    {0.62, 0.30, 0.78}, /* BAT */
    {0.90, 0.45, 0.10}, /* SCORPION */
    {0.80, 0.15, 0.20}, /* SPIDER */
    {0.98, 0.80, 0.10}, /* KEY */
    {0.45, 0.28, 0.12}, /* DOOR */
    {0.15, 0.70, 0.35}, /* TREASURE */
};
/* 256-colour terminal backgrounds */
static const int tile_ansi[N_TILES] = {0, 230, 240, 33, 135, 208, 160, 220, 94, 34};

void level_print(FILE *f, const level_t *l, int colour)
{
    for (int r = 0; r < l->h; r++) {
        for (int c = 0; c < l->w; c++) {
            int t = l->t[r * l->w + c];
            if (colour) fprintf(f, "\033[48;5;%dm\033[38;5;16m%c \033[0m", tile_ansi[t], tile_char(t));
            else fprintf(f, "%c ", tile_char(t));
        }
        fputc('\n', f);
    }
    fprintf(f, "legend:");
    for (int t = 1; t < N_TILES; t++) {
        if (colour) fprintf(f, " \033[48;5;%dm\033[38;5;16m%c\033[0m %s", tile_ansi[t], tile_char(t), tile_name(t));
        else fprintf(f, " %c=%s", tile_char(t), tile_name(t));
    }
    fputc('\n', f);
}

static void draw_level(cairo_t *cr, const level_t *l, double x0, double y0, int px)
{
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, px * 0.6);
    for (int r = 0; r < l->h; r++)
        for (int c = 0; c < l->w; c++) {
            int t = l->t[r * l->w + c];
            if (t < 0 || t >= N_TILES) t = TILE_BORDER;
            double x = x0 + c * px, y = y0 + r * px;
            cairo_set_source_rgb(cr, tile_rgb[t][0], tile_rgb[t][1], tile_rgb[t][2]);
            cairo_rectangle(cr, x, y, px, px);
            cairo_fill(cr);
            if (t == TILE_WALL) { /* brick hatching so walls read without colour */
                cairo_set_source_rgb(cr, 0.45, 0.43, 0.48);
                cairo_set_line_width(cr, 1);
                cairo_move_to(cr, x, y + px / 2.0);
                cairo_line_to(cr, x + px, y + px / 2.0);
                cairo_stroke(cr);
            }
            /* the symbols of `show` and of the text grids the model reads */
            char label[2] = {tile_char(t), 0};
            if (t != TILE_BORDER && t != TILE_EMPTY && t != TILE_WALL) {
                cairo_text_extents_t ex;
                cairo_text_extents(cr, label, &ex);
                cairo_set_source_rgb(cr, 1, 1, 1);
                cairo_move_to(cr, x + (px - ex.width) / 2 - ex.x_bearing, y + (px - ex.height) / 2 - ex.y_bearing);
                cairo_show_text(cr, label);
            }
        }
    cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
    cairo_set_line_width(cr, 0.5);
    for (int r = 0; r <= l->h; r++) {
        cairo_move_to(cr, x0, y0 + r * px);
        cairo_line_to(cr, x0 + l->w * px, y0 + r * px);
    }
    for (int c = 0; c <= l->w; c++) {
        cairo_move_to(cr, x0 + c * px, y0);
        cairo_line_to(cr, x0 + c * px, y0 + l->h * px);
    }
    cairo_stroke(cr);
}

/* Legend rows below the picture; returns its height. */
static int draw_legend(cairo_t *cr, double x0, double y0, int width, int draw)
{
    int sw = 14, x = (int)x0, y = (int)y0, rowh = 20;
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 12);
    for (int t = 1; t < N_TILES; t++) {
        cairo_text_extents_t ex;
        cairo_text_extents(cr, tile_name(t), &ex);
        int need = sw + 4 + (int)ex.x_advance + 12;
        if (x + need > x0 + width && x > x0) {
            x = (int)x0;
            y += rowh;
        }
        if (draw) {
            cairo_set_source_rgb(cr, tile_rgb[t][0], tile_rgb[t][1], tile_rgb[t][2]);
            cairo_rectangle(cr, x, y + 3, sw, sw);
            cairo_fill(cr);
            cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
            cairo_move_to(cr, x + sw + 4, y + 15);
            cairo_show_text(cr, tile_name(t));
        }
        x += need;
    }
    return y + rowh - (int)y0;
}

typedef struct {
    int fd, err; /* err: errno of the first failed write */
} png_sink;

static cairo_status_t png_write(void *closure, const unsigned char *data, unsigned int len)
{
    png_sink *k = closure;
    if (write_all(k->fd, data, len) == 0) return CAIRO_STATUS_SUCCESS;
    k->err = errno;
    return CAIRO_STATUS_WRITE_ERROR;
}

/* The PNG goes to a temporary file beside path, then is renamed over it
 * (the rules of write_file_atomic: a FIFO, device or directory at path is
 * refused, a symlink replaced).  cairo's own file writer would open path
 * directly and follow or block on whatever lies there. */
static int write_surface(cairo_surface_t *s, const char *path)
{
    char tmp[4200], err[1024];
    if (check_output_path(path, err, sizeof err)) return set_write_error(err), -1;
    png_sink k = {tmp_create(path, tmp, sizeof tmp, err, sizeof err), 0};
    if (k.fd < 0) return set_write_error(err), -1;
    cairo_status_t st = cairo_surface_write_to_png_stream(s, png_write, &k);
    if (st != CAIRO_STATUS_SUCCESS) {
        snprintf(err, sizeof err, "%s: cannot write: %s", path,
                 k.err ? strerror(k.err) : cairo_status_to_string(st));
        close(k.fd);
        path_unlink(tmp);
        return set_write_error(err), -1;
    }
    if (tmp_commit(k.fd, tmp, path, err, sizeof err)) return set_write_error(err), -1;
    return 0;
}

int levels_render_grid_png(const level_t *levels, int n, int cols, const char *const *captions, const char *path,
                           int px)
{
    if (n <= 0) return -1;
    if (cols <= 0 || cols > n) cols = n;
    int rows = (n + cols - 1) / cols, gap = 12, title = n > 1 || captions ? 18 : 0;
    int lw = 0, lh = 0;
    for (int i = 0; i < n; i++) {
        if (levels[i].w > lw) lw = levels[i].w;
        if (levels[i].h > lh) lh = levels[i].h;
    }
    int width = gap + cols * (lw * px + gap);
    if (width < 360) width = 360;
    /* measure the legend */
    cairo_surface_t *probe = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
    cairo_t *pc = cairo_create(probe);
    int legend_h = draw_legend(pc, gap, 0, width - 2 * gap, 0);
    cairo_destroy(pc);
    cairo_surface_destroy(probe);
    int height = gap + rows * (title + lh * px + gap) + legend_h + gap;
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        set_write_error("cannot draw the picture: out of memory");
        return -1;
    }
    cairo_t *cr = cairo_create(s);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    for (int i = 0; i < n; i++) {
        double x = gap + (i % cols) * (lw * px + gap), y = gap + (i / cols) * (title + lh * px + gap);
        if (title) {
            char t[160];
            snprintf(t, sizeof t, "%d%s%.100s", i, captions && captions[i] ? "  " : "",
                     captions && captions[i] ? captions[i] : "");
            cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
            cairo_set_font_size(cr, 12);
            cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
            cairo_move_to(cr, x, y + 13);
            cairo_show_text(cr, t);
        }
        draw_level(cr, &levels[i], x, y + title, px);
    }
    draw_legend(cr, gap, gap + rows * (title + lh * px + gap), width - 2 * gap, 1);
    cairo_destroy(cr);
    int rc = write_surface(s, path);
    cairo_surface_destroy(s);
    return rc;
}

int level_render_png(const level_t *l, const char *path, int px)
{
    return levels_render_grid_png(l, 1, 1, NULL, path, px);
}
