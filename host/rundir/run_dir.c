/* The files of a run directory and its log: see run_state.h. */
#include "run_state.h"
#include "levelio.h"
#include "util.h"
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void run_path(char *out, size_t len, const char *dir, const char *fmt, ...)
{
    int n = snprintf(out, len, "%s/", dir);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < len) vsnprintf(out + n, len - (size_t)n, fmt, ap);
    va_end(ap);
}

/* A line to the terminal (unless quiet) and to DIR/run.log. */
void run_say(run_state *R, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (!R->c->quiet) {
        printf("%s\n", line);
        fflush(stdout);
    }
    if (R->log) {
        double t = now_seconds() - R->t_start;
        fprintf(R->log, "[%8.1fs] %s\n", t, line);
        fflush(R->log);
    }
}

char *run_read_text(const char *path)
{
    long len;
    char err[512];
    return read_file(path, 8L << 20, &len, err, sizeof err);
}

int run_write_text(const char *path, const char *text)
{
    return write_file_atomic(path, text, strlen(text));
}

int run_write_json(const char *path, json_t *j)
{
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
    json_decref(j);
    if (!s) return set_write_error("out of memory"), -1;
    size_t n = strlen(s);
    char *t = realloc(s, n + 2);
    if (!t) {
        free(s);
        return set_write_error("out of memory"), -1;
    }
    t[n] = '\n';
    t[n + 1] = 0;
    int rc = write_file_atomic(path, t, n + 1);
    free(t);
    return rc;
}

int run_load_levels(const char *dir, int n, level_set *ls, char *err, int errlen)
{
    if (n > RUN_MAX_LEVELS) n = RUN_MAX_LEVELS;
    ls->n = 0;
    for (int i = 0; i < n; i++) {
        char path[2048];
        run_path(path, sizeof path, dir, "level_%03d.txt", i);
        if (level_read(path, &ls->levels[i], ls->tiles[i], err, errlen)) return -1;
        ls->n++;
    }
    return 0;
}

int run_node_count(const run_config *c)
{
    return c->ablation == ABL_ZS || c->ablation == ABL_SA ? 1 : c->iterations;
}

/* Levels as text grids with a legend, for prompts. */
char *run_levels_text(const level_t *levels, int n)
{
    size_t cap = 512 + (size_t)n * (PCG_MAX_CELLS * 2 + 64);
    char *s = malloc(cap);
    if (!s) return NULL;
    size_t k = (size_t)snprintf(s, cap, "Legend:");
    for (int t = 1; t < N_TILES; t++) k += (size_t)snprintf(s + k, cap - k, " %c=%s", tile_char(t), tile_name(t));
    k += (size_t)snprintf(s + k, cap - k, "\n");
    for (int i = 0; i < n; i++) {
        k += (size_t)snprintf(s + k, cap - k, "\nLevel %d:\n", i + 1);
        for (int r = 0; r < levels[i].h; r++) {
            for (int c = 0; c < levels[i].w; c++) s[k++] = tile_char(levels[i].t[r * levels[i].w + c]);
            s[k++] = '\n';
        }
    }
    s[k] = 0;
    return s;
}

/* 1 for node 0 of a run given --init-reward. */
int run_init_node(const run_state *R, int id) { return R->c->init_reward[0] && id == 0; }

char *run_node_code(run_state *R, int node)
{
    char path[1400];
    if (node < 0 || !R->g.nodes[node].reward_path[0]) return NULL;
    snprintf(path, sizeof path, "%s/%s", R->c->out, R->g.nodes[node].reward_path);
    return run_read_text(path);
}
