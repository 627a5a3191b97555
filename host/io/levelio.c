#include "levelio.h"
#include "util.h"
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[N_TILES] = {"BORDER", "EMPTY",  "WALL", "PLAYER", "BAT",
                                           "SCORPION", "SPIDER", "KEY",  "DOOR",   "TREASURE"};

const char *tile_name(int tile)
{
    return tile >= 0 && tile < N_TILES ? names[tile] : "?";
}

char tile_char(int tile)
{
    static const char chars[N_TILES + 1] = " .#@bsxkDT";
    return tile >= 0 && tile < N_TILES ? chars[tile] : '?';
}

int tile_of_char(char c)
{
    for (int t = 0; t < N_TILES; t++)
        if (tile_char(t) == c) return t;
    return -1;
}

#define FAIL(...)                                  \
    do {                                           \
        snprintf(err, (size_t)errlen, __VA_ARGS__); \
        return -1;                                 \
    } while (0)

int level_parse(const char *name, const char *buf, long len, level_t *out, unsigned char *tiles, char *err,
                int errlen)
{
    int h = 0, w = -1;
    long i = 0;
    int lineno = 0;
    if (len == 0) FAIL("%s: empty file, expected rows of tile ids", name);
    for (long k = 0; k < len; k++) {
        unsigned char ch = (unsigned char)buf[k];
        if (ch == 0 || (ch < 32 && ch != '\n' && ch != '\r' && ch != '\t') || ch >= 127) {
            int ln = 1;
            for (long j = 0; j < k; j++) ln += buf[j] == '\n';
            FAIL("%s:%d: binary data (byte 0x%02x), not a level text file", name, ln, ch);
        }
    }
    while (i < len) {
        long start = i;
        while (i < len && buf[i] != '\n') i++;
        long end = i;
        if (i < len) i++;
        lineno++;
        if (end > start && buf[end - 1] == '\r') end--;
        long p = start;
        while (p < end && (buf[p] == ' ' || buf[p] == '\t')) p++;
        if (p == end || buf[p] == '#') continue; /* blank or comment */
        if (h >= PCG_MAX_SIDE) FAIL("%s:%d: more than %d rows", name, lineno, PCG_MAX_SIDE);
        int cols = 0;
        p = start;
        while (p < end) {
            if (buf[p] < '0' || buf[p] > '9') {
                FAIL("%s:%d: unexpected character '%c' at column %ld, expected tile ids 1-9 separated by single spaces",
                     name, lineno, buf[p], p - start + 1);
            }
            long v = 0, tok = p;
            for (; p < end && buf[p] >= '0' && buf[p] <= '9'; p++)
                if (v < 1000) v = v * 10 + (buf[p] - '0');
            if (v < 1 || v >= N_TILES)
                FAIL("%s:%d: unknown tile id %.*s (valid: 1-%d; 0 is BORDER and never stored)", name, lineno,
                     p - tok > 20 ? 20 : (int)(p - tok), buf + tok, N_TILES - 1);
            if (cols >= PCG_MAX_SIDE) FAIL("%s:%d: more than %d columns", name, lineno, PCG_MAX_SIDE);
            tiles[h * PCG_MAX_SIDE + cols] = (unsigned char)v;
            cols++;
            if (p < end) {
                if (buf[p] != ' ' || p + 1 >= end || buf[p + 1] == ' ')
                    FAIL("%s:%d: tile ids must be separated by single spaces (column %ld)", name, lineno,
                         p - start + 1);
                p++;
            }
        }
        if (w < 0) w = cols;
        else if (cols != w) FAIL("%s:%d: row has %d tiles, earlier rows have %d", name, lineno, cols, w);
        h++;
    }
    if (h == 0) FAIL("%s: no rows of tile ids (only comments or blank lines)", name);
    /* compact rows stored with stride PCG_MAX_SIDE into h*w */
    for (int r = 0; r < h; r++) memmove(tiles + r * w, tiles + r * PCG_MAX_SIDE, (size_t)w);
    out->h = h;
    out->w = w;
    out->t = tiles;
    return 0;
}

int level_read(const char *path, level_t *out, unsigned char *tiles, char *err, int errlen)
{
    long len;
    char *buf = read_file(path, 1 << 20, &len, err, errlen);
    if (!buf) return -1;
    int rc = level_parse(path, buf, len, out, tiles, err, errlen);
    free(buf);
    return rc;
}

int level_format(const level_t *l, char *buf, int len)
{
    int n = 0;
    for (int r = 0; r < l->h; r++)
        for (int c = 0; c < l->w; c++) {
            if (n + 4 > len) return -1;
            n += snprintf(buf + n, (size_t)(len - n), "%d%c", l->t[r * l->w + c], c == l->w - 1 ? '\n' : ' ');
        }
    return n;
}

int level_write(const char *path, const level_t *l, const char *comment)
{
    char buf[PCG_MAX_CELLS * 3 + 4096];
    int n = 0;
    if (comment) n = snprintf(buf, 2048, "# %.2000s\n", comment);
    int m = level_format(l, buf + n, (int)sizeof buf - n);
    if (m < 0) {
        set_write_error("level too large to format");
        return -1;
    }
    return write_file_atomic(path, buf, (size_t)(n + m));
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **level_paths(char **args, int n_args, int *n_out, char *err, int errlen)
{
    int n = 0, cap = 64;
    char **files = malloc(sizeof(char *) * (size_t)cap);
    if (!files) goto oom;
    for (int i = 0; i < n_args; i++) {
        struct stat st;
        int first = n;
        if (path_stat(args[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            if (n == cap) {
                char **more = realloc(files, sizeof(char *) * (size_t)(cap *= 2));
                if (!more) goto oom;
                files = more;
            }
            if (!(files[n++] = strdup(args[i]))) goto oom;
            continue;
        }
        DIR *d = open_dir(args[i], err, errlen);
        if (!d) goto fail;
        for (struct dirent *e; (e = readdir(d));) {
            size_t len = strlen(e->d_name);
            if (len < 5 || e->d_name[0] == '.' || strcmp(e->d_name + len - 4, ".txt")) continue;
            if (n == cap) {
                char **more = realloc(files, sizeof(char *) * (size_t)(cap *= 2));
                if (!more) {
                    closedir(d);
                    goto oom;
                }
                files = more;
            }
            size_t sz = strlen(args[i]) + len + 2;
            if (!(files[n] = malloc(sz))) {
                closedir(d);
                goto oom;
            }
            snprintf(files[n++], sz, "%s/%s", args[i], e->d_name);
        }
        closedir(d);
        if (n == first) {
            snprintf(err, (size_t)errlen, "directory %s holds no level files (*.txt)", args[i]);
            goto fail;
        }
        qsort(files + first, (size_t)(n - first), sizeof(char *), by_name);
    }
    *n_out = n;
    return files;
oom:
    snprintf(err, (size_t)errlen, "out of memory");
fail:
    for (int i = 0; i < n; i++) free(files[i]);
    free(files);
    return NULL;
}
