/* A set of levels in files (level_set.h). */
#include "level_set.h"
#include "levelio.h"
#include "render.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int level_set_write(const char *dir, const level_t *levels, int n, level_comment_fn comment, void *ctx,
                    char *failed, int failed_len)
{
    char comment_line[512];
    for (int i = 0; i < n; i++) {
        comment(ctx, i, comment_line, sizeof comment_line);
        snprintf(failed, (size_t)failed_len, "%s/level_%03d.txt", dir, i);
        if (level_write(failed, &levels[i], comment_line)) return -1;
        snprintf(failed, (size_t)failed_len, "%s/level_%03d.png", dir, i);
        if (level_render_png(&levels[i], failed, 24)) return -1;
    }
    snprintf(failed, (size_t)failed_len, "%s/levels.png", dir);
    if (levels_render_grid_png(levels, n, n < 6 ? n : 6, NULL, failed, 12)) return -1;
    failed[0] = 0;
    return 0;
}

int level_set_read(char *const *files, int n, level_t *lv, void (*report)(const char *line), char *err,
                   int errlen)
{
    unsigned char *tiles = malloc(PCG_MAX_CELLS);
    if (!tiles) return snprintf(err, (size_t)errlen, "out of memory"), -1;
    int bad = 0;
    for (int i = 0; i < n; i++) {
        level_t l;
        if (level_read(files[i], &l, tiles, err, errlen)) {
            report(err);
            bad++;
            continue;
        }
        lv[i].h = l.h;
        lv[i].w = l.w;
        lv[i].t = malloc((size_t)l.h * (size_t)l.w);
        if (!lv[i].t) {
            snprintf(err, (size_t)errlen, "out of memory reading %s", files[i]);
            bad = -1;
            break;
        }
        memcpy(lv[i].t, tiles, (size_t)l.h * (size_t)l.w);
    }
    free(tiles);
    return bad;
}
