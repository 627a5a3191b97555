/* Level pictures: terminal text with a legend, and PNG through cairo. */
#ifndef PCG_RENDER_H
#define PCG_RENDER_H
#include <stdio.h>
#include "level.h"

/* Print a level with a legend; colour when colour != 0. */
void level_print(FILE *f, const level_t *l, int colour);
/* One level as a PNG with labelled tiles and a legend.  0 or -1. */
int level_render_png(const level_t *l, const char *path, int cell_px);
/* Several levels in a grid (cols per row), each titled with its index and
 * an optional caption (captions may be NULL).  0 or -1. */
int levels_render_grid_png(const level_t *levels, int n, int cols, const char *const *captions, const char *path,
                           int cell_px);

#endif
