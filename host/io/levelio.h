/* Level text files (docs/method.md#level-files): H lines of W tile ids separated by single
 * spaces; lines starting with '#' are comments. */
#ifndef PCG_LEVELIO_H
#define PCG_LEVELIO_H
#include "level.h"

/* Read a level into tiles (PCG_MAX_CELLS bytes).  On error returns -1 and
 * writes one line naming the file and the line into err. */
int level_read(const char *path, level_t *out, unsigned char *tiles, char *err, int errlen);
/* Parse from a buffer; name is used in messages. */
int level_parse(const char *name, const char *buf, long len, level_t *out, unsigned char *tiles, char *err,
                int errlen);
/* Write atomically (temporary file, then rename).  comment may be NULL. */
int level_write(const char *path, const level_t *l, const char *comment);
/* Format as text into buf (no comment); returns bytes or -1 if too small. */
int level_format(const level_t *l, char *buf, int len);
/* The level files named by command arguments: a file as given, a
 * directory as its *.txt files in name order (what `pcgrllm generate`
 * writes).  A malloc'd array of n malloc'd paths, or NULL with a line in
 * err when a directory cannot be read or holds no level file. */
char **level_paths(char **args, int n_args, int *n, char *err, int errlen);
const char *tile_name(int tile);
char tile_char(int tile);
/* The tile a character of tile_char stands for, or -1. */
int tile_of_char(char c);

#endif
