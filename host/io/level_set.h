/* A set of levels: written into one directory, as `pcgrllm generate`
 * leaves them for `pcgrllm eval` -- DIR/level_000.txt ... (level files),
 * DIR/level_000.png ... and DIR/levels.png (all of them in one grid) -- and
 * read back from a list of level files. */
#ifndef PCG_LEVEL_SET_H
#define PCG_LEVEL_SET_H
#include "level.h"

/* The comment line of level i's file, written into buf. */
typedef void (*level_comment_fn)(void *ctx, int i, char *buf, int len);

/* Writes the n levels into dir (which exists), stopping at the first file
 * that cannot be written.  0, or -1 with that file's path in failed. */
int level_set_write(const char *dir, const level_t *levels, int n, level_comment_fn comment, void *ctx,
                    char *failed, int failed_len);

/* Reads the n level files into lv[i] (lv[i].t malloc'd, NULL for a file
 * not read).  A file that cannot be read is reported (its one line goes to
 * report) and the rest are still read.  Returns how many were not read, or
 * -1 with err when out of memory (reading stops there). */
int level_set_read(char *const *files, int n, level_t *lv, void (*report)(const char *line), char *err,
                   int errlen);

#endif
