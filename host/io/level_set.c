/* A directory of generated levels (level_set.h). */
#include "level_set.h"
#include "levelio.h"
#include "render.h"
#include <stdio.h>

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
