/* The evaluator, level files and pictures behind the C ABI (pcg_api.h). */
#include "pcg_api.h"
#include "eval.h"
#include "eval_json.h"
#include "levelio.h"
#include "render.h"
#include "target.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A caller's map: a side in 1..PCG_MAX_SIDE and tile ids 1..9, what a
 * level file may hold.  0, or -1 with err naming the level. */
static int check_map(int i, int h, int w, const unsigned char *t, char *err, int errlen)
{
    if (h < 1 || w < 1 || h > PCG_MAX_SIDE || w > PCG_MAX_SIDE)
        return say_to(err, errlen, "level %d: %dx%d is not a map size (sides 1..%d)", i, h, w, PCG_MAX_SIDE), -1;
    for (int k = 0; k < h * w; k++)
        if (t[k] < 1 || t[k] >= N_TILES)
            return say_to(err, errlen, "level %d: tile %d at row %d, column %d is not a tile id 1..%d", i, t[k], k / w,
                          k % w, N_TILES - 1),
                   -1;
    return 0;
}

/* "1".."4", or target JSON.  0, or -1 with err. */
static int scenario_of(const char *target, eval_scenario_t *out, char *err, int errlen)
{
    if (!target) return say_to(err, errlen, "no target given"), -1;
    long number;
    if (!parse_int(target, 1, eval_n_scenarios(), &number)) {
        *out = *eval_scenario((int)number);
        return 0;
    }
    if (!strchr(target, '{')) /* "5", "0", "1.5": read as JSON they would only say there is no object */
        return say_to(err, errlen, "target: neither a scenario number 1..%d nor target JSON", eval_n_scenarios()), -1;
    char why[512];
    if (target_scenario_from_json(target, out, why, sizeof why)) return say_to(err, errlen, "target: %s", why), -1;
    return 0;
}

/* The document of n checked levels, as text. */
static char *eval_text(const eval_scenario_t *s, int n, level_t *lv, const char *const *names, char *err, int errlen)
{
    eval_level_t *per = calloc((size_t)n, sizeof *per);
    char **own = names ? NULL : calloc((size_t)n, sizeof *own);
    char *text = NULL;
    if (!per || (!names && !own)) goto out;
    for (int i = 0; own && i < n; i++) {
        own[i] = malloc(16);
        if (!own[i]) goto out;
        snprintf(own[i], 16, "%d", i);
    }
    eval_summary_t sum;
    eval_levels(s, lv, n, per, &sum);
    json_t *doc = eval_json_doc(s, names ? names : (const char *const *)own, lv, per, &sum);
    if (doc) text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
out:
    if (!text) say_to(err, errlen, "out of memory, or a level name that is not UTF-8");
    for (int i = 0; own && i < n; i++) free(own[i]);
    free(own), free(per);
    return text;
}

char *pcg_eval(const char *target, int n, const int *hs, const int *ws, const unsigned char *tiles,
               const long *offsets, const char *const *names, char *err, int errlen)
{
    eval_scenario_t s;
    if (scenario_of(target, &s, err, errlen)) return NULL;
    if (n < 1) return say_to(err, errlen, "no levels to evaluate"), NULL;
    level_t *lv = calloc((size_t)n, sizeof *lv);
    if (!lv) return say_to(err, errlen, "out of memory"), NULL;
    char *text = NULL;
    for (int i = 0; i < n; i++) {
        /* the evaluator only reads the tiles */
        lv[i] = (level_t){hs[i], ws[i], (unsigned char *)tiles + offsets[i]};
        if (check_map(i, hs[i], ws[i], lv[i].t, err, errlen)) goto out;
    }
    text = eval_text(&s, n, lv, names, err, errlen);
out:
    free(lv);
    return text;
}

int pcg_level_read(const char *path, unsigned char *tiles, int *h, int *w, char *err, int errlen)
{
    level_t l;
    if (level_read(path, &l, tiles, err, errlen)) return -1;
    *h = l.h, *w = l.w;
    return 0;
}

int pcg_level_parse(const char *text, long len, unsigned char *tiles, int *h, int *w, char *err, int errlen)
{
    level_t l;
    if (level_parse("<text>", text, len, &l, tiles, err, errlen)) return -1;
    *h = l.h, *w = l.w;
    return 0;
}

int pcg_level_write(const char *path, int h, int w, const unsigned char *tiles, const char *comment, char *err,
                    int errlen)
{
    if (check_map(0, h, w, tiles, err, errlen)) return -1;
    level_t l = {h, w, (unsigned char *)tiles}; /* written, not changed */
    if (level_write(path, &l, comment)) return say_to(err, errlen, "%s", write_error()), -1;
    return 0;
}

int pcg_render_png(const char *path, int h, int w, const unsigned char *tiles, int cell_px, char *err, int errlen)
{
    if (check_map(0, h, w, tiles, err, errlen)) return -1;
    if (cell_px < 4 || cell_px > 256) return say_to(err, errlen, "cell_px must be in 4..256, not %d", cell_px), -1;
    level_t l = {h, w, (unsigned char *)tiles};
    if (level_render_png(&l, path, cell_px)) return say_to(err, errlen, "%s", write_error()), -1;
    return 0;
}
