/* A grid's definition as grid.json and back.  See grid.h. */
#include "grid.h"
#include "graph.h"
#include "run.h"
#include "util.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 2: zs and sa cells shared by the search methods, the axes of models,
 * feedback, feedback input, references and the Human row; 3: zs and sa
 * taken from the fb and full cells where the grid has them. */
#define GRID_FORMAT 3

/* ---------------------------------------------------------------- grid.json */

static json_t *int_array(const int *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, json_integer(v[i]));
    return a;
}

static json_t *name_array(const int *v, int n, const char *(*name)(int))
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, json_string(name(v[i])));
    return a;
}

char *grid_def_json(const grid_def *d)
{
    json_t *o = json_object(), *a;
    json_object_set_new(o, "format", json_integer(GRID_FORMAT));
    json_object_set_new(o, "scenarios", int_array(d->scen, d->n_scen));
    json_object_set_new(o, "models", a = json_array());
    for (int i = 0; i < d->n_models; i++)
        json_array_append_new(a, json_pack("{s:s, s:s}", "name", d->models[i].name, "base_url", d->models[i].base_url));
    json_object_set_new(o, "pe", name_array(d->pe, d->n_pe, graph_pe_name));
    json_object_set_new(o, "ablations", name_array(d->abl, d->n_abl, run_ablation_name));
    json_object_set_new(o, "feedbacks", name_array(d->fb, d->n_fb, run_feedback_name));
    json_object_set_new(o, "feedback_inputs", name_array(d->fbin, d->n_fbin, run_feedback_input_name));
    json_object_set_new(o, "got_best", int_array(d->got_best, d->n_gb));
    json_object_set_new(o, "got_worst", int_array(d->got_worst, d->n_gw));
    json_object_set_new(o, "prompt_profiles", name_array(d->prompts, d->n_pp, grid_prompts_name));
    json_object_set_new(o, "reward_apis", name_array(d->reward_api, d->n_ra, grid_reward_api_name));
    json_object_set_new(o, "fitnesses", name_array(d->fitness, d->n_fit, grid_fitness_name));
    json_object_set_new(o, "accept", name_array(d->accept, d->n_acc, run_accept_name));
    json_object_set_new(o, "target_fitness", a = json_array());
    for (int i = 0; i < d->n_tf; i++)
        json_array_append_new(a, d->target_fitness[i] < 0 ? json_string("none") : json_real(d->target_fitness[i]));
    json_object_set_new(o, "human", d->human[0] ? json_string(d->human) : json_null());
    json_object_set_new(o, "repeats", json_integer(d->repeats));
    json_object_set_new(o, "run_flags", a = json_array());
    for (int i = 0; i < d->n_run_flags; i++) json_array_append_new(a, json_string(d->run_flags[i]));
    json_object_set_new(o, "cells", a = json_array());
    grid_cell *cells;
    int n = grid_cells(d, &cells);
    for (int k = 0; k < n; k++)
        json_array_append_new(a, json_pack("{s:i, s:s, s:I}", "index", k, "name", cells[k].name, "seed",
                                           (json_int_t)cells[k].seed));
    free(cells);
    char *s = json_dumps(o, JSON_INDENT(2));
    json_decref(o);
    return s;
}

/* A JSON array of strings or numbers, joined with commas, for the list
 * parsers (which check every item).  An empty array gives "". */
static int join_items(json_t *arr, char *buf, size_t len)
{
    if (!json_is_array(arr)) return -1;
    size_t k = 0, i;
    json_t *v;
    buf[0] = 0;
    json_array_foreach(arr, i, v) {
        int n;
        if (json_is_string(v)) n = snprintf(buf + k, len - k, "%s%s", i ? "," : "", json_string_value(v));
        else if (json_is_integer(v)) n = snprintf(buf + k, len - k, "%s%lld", i ? "," : "", (long long)json_integer_value(v));
        else if (json_is_real(v)) n = snprintf(buf + k, len - k, "%s%.17g", i ? "," : "", json_real_value(v));
        else return -1;
        if (n < 0 || (size_t)n >= len - k) return -1;
        k += (size_t)n;
    }
    return 0;
}

/* One list of grid.json through its parser; an optional list may be empty
 * (the axis is not varied), or absent (an axis newer than the file).  0,
 * or -1 with err naming the key. */
static int read_list(json_t *o, const char *key, int optional, int (*parse)(const char *, grid_def *, char *, int),
                     grid_def *d, char *err, int errlen)
{
    char buf[1024], why[256];
    json_t *arr = json_object_get(o, key);
    if (!arr && optional) return 0;
    if (join_items(arr, buf, sizeof buf) || (!buf[0] && !optional) || (buf[0] && parse(buf, d, why, sizeof why)))
        return snprintf(err, (size_t)errlen, "'%s' missing or invalid", key), -1;
    return 0;
}

static int read_models(json_t *o, grid_def *d, char *err, int errlen)
{
    json_t *arr = json_object_get(o, "models"), *m;
    size_t i;
    if (!json_is_array(arr) || json_array_size(arr) > GRID_MAX_MODELS)
        return snprintf(err, (size_t)errlen, "'models' missing or invalid"), -1;
    json_array_foreach(arr, i, m) {
        const char *name = json_string_value(json_object_get(m, "name"));
        const char *url = json_string_value(json_object_get(m, "base_url"));
        if (!name || !url || !name[0] || strlen(name) >= GRID_MODEL_MAX || strlen(url) >= sizeof d->models[0].base_url)
            return snprintf(err, (size_t)errlen, "'models' missing or invalid"), -1;
        if (url[0] && !llm_base_url_ok(url))
            return snprintf(err, (size_t)errlen, "'models': a base_url must be an http:// or https:// address"), -1;
        snprintf(d->models[i].name, sizeof d->models[i].name, "%s", name);
        snprintf(d->models[i].base_url, sizeof d->models[i].base_url, "%s", url);
    }
    d->n_models = (int)json_array_size(arr);
    return 0;
}

static int read_run_flags(json_t *o, grid_def *d, char *err, int errlen)
{
    json_t *flags = json_object_get(o, "run_flags"), *v;
    char *list[GRID_MAX_RUN_FLAGS], why[256];
    int n = 0, st, sb;
    size_t i;
    if (!json_is_array(flags) || json_array_size(flags) > GRID_MAX_RUN_FLAGS)
        return snprintf(err, (size_t)errlen, "'run_flags' missing or too long"), -1;
    json_array_foreach(flags, i, v) {
        if (!json_is_string(v)) return snprintf(err, (size_t)errlen, "'run_flags' holds something other than strings"), -1;
        list[n++] = (char *)json_string_value(v);
    }
    if (grid_set_run_flags(d, n, list, &st, &sb, why, sizeof why))
        return snprintf(err, (size_t)errlen, "'run_flags': %s", why), -1;
    return 0;
}

/* A format-2 grid.json defines the cells it did then unless it has zs
 * with fb, or sa with full (those columns now come from the fb and full
 * cells, and the zs and sa cells are not made). */
static int same_cells_as_format2(const grid_def *d)
{
    return grid_column_cells(d->abl, d->n_abl, ABL_ZS) != ABL_FB && grid_column_cells(d->abl, d->n_abl, ABL_SA) != ABL_FULL;
}

int grid_def_from_file(const char *path, grid_def *d, char *err, int errlen)
{
    static const char *const keys[] = {"format",   "scenarios",      "models",          "pe",
                                       "ablations", "feedbacks",     "feedback_inputs", "got_best",
                                       "got_worst", "prompt_profiles", "reward_apis",   "fitnesses",
                                       "accept",    "target_fitness", "repeats",         "human",
                                       "run_flags", "cells",          NULL};
    char why[1400];
    long len;
    memset(d, 0, sizeof *d);
    char *text = read_file(path, 16L << 20, &len, why, sizeof why);
    json_error_t je;
    json_t *o = text ? json_loads(text, JSON_REJECT_DUPLICATES, &je) : NULL;
    const char *key, *bad = NULL;
    json_t *v;
    json_object_foreach(o, key, v) {
        int known = 0;
        for (int i = 0; keys[i] && !known; i++) known = !strcmp(keys[i], key);
        if (!known && !bad) bad = key;
    }
    int rc = -1;
    if (!text) snprintf(err, (size_t)errlen, "--config: %s", why);
    /* refused here, not parsed again below without the key check: a key
     * given twice hid every unknown key */
    else if (!o) snprintf(err, (size_t)errlen, "--config %s: line %d: %s", path, je.line, je.text);
    else if (bad) snprintf(err, (size_t)errlen, "--config %s: unknown key '%.60s' (the keys grid.json holds: docs/grid.md)", path, bad);
    else if ((rc = grid_def_from_json(text, d, why, sizeof why))) snprintf(err, (size_t)errlen, "--config %s: %s", path, why);
    json_decref(o);
    free(text);
    return rc;
}

int grid_def_from_json(const char *text, grid_def *d, char *err, int errlen)
{
    memset(d, 0, sizeof *d);
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    if (!json_is_object(o)) {
        snprintf(err, (size_t)errlen, "not a JSON object (line %d: %s)", je.line, je.text);
        json_decref(o);
        return -1;
    }
    int rc = -1;
    json_t *fmt = json_object_get(o, "format"), *rep = json_object_get(o, "repeats"), *hu = json_object_get(o, "human");
    json_int_t format = json_is_integer(fmt) ? json_integer_value(fmt) : 0;
    if (format == 1) {
        snprintf(err, (size_t)errlen, "it was written by an earlier version (format 1, before zero-shot and +SA cells "
                                      "were shared by the search methods)");
    } else if (format != 2 && format != GRID_FORMAT) {
        snprintf(err, (size_t)errlen, "'format' missing or not %d", GRID_FORMAT);
    } else if (!read_list(o, "scenarios", 0, grid_parse_scenarios, d, err, errlen) && !read_models(o, d, err, errlen) &&
               !read_list(o, "pe", 0, grid_parse_pe, d, err, errlen) &&
               !read_list(o, "ablations", 0, grid_parse_ablations, d, err, errlen) &&
               !read_list(o, "feedbacks", 1, grid_parse_feedbacks, d, err, errlen) &&
               !read_list(o, "feedback_inputs", 1, grid_parse_feedback_inputs, d, err, errlen) &&
               !read_list(o, "got_best", 1, grid_parse_got_best, d, err, errlen) &&
               !read_list(o, "got_worst", 1, grid_parse_got_worst, d, err, errlen) &&
               !read_list(o, "prompt_profiles", 1, grid_parse_prompt_profiles, d, err, errlen) &&
               !read_list(o, "reward_apis", 1, grid_parse_reward_apis, d, err, errlen) &&
               !read_list(o, "fitnesses", 1, grid_parse_fitnesses, d, err, errlen) &&
               !read_list(o, "accept", 1, grid_parse_accept, d, err, errlen) &&
               !read_list(o, "target_fitness", 1, grid_parse_target_fitness, d, err, errlen)) {
        if (!json_is_integer(rep) || json_integer_value(rep) < 1 || json_integer_value(rep) > GRID_MAX_REPEATS)
            snprintf(err, (size_t)errlen, "'repeats' missing or not 1..%d", GRID_MAX_REPEATS);
        else if (hu && !json_is_null(hu) && (!json_is_string(hu) || strlen(json_string_value(hu)) >= sizeof d->human))
            snprintf(err, (size_t)errlen, "'human' must be a directory or null");
        else {
            d->repeats = (int)json_integer_value(rep);
            snprintf(d->human, sizeof d->human, "%s", json_is_string(hu) ? json_string_value(hu) : "");
            rc = read_run_flags(o, d, err, errlen);
        }
        if (!rc && format == 2 && !same_cells_as_format2(d)) {
            snprintf(err, (size_t)errlen, "it was written by an earlier version (format 2, when zero-shot and +SA ran "
                                          "in cells of their own beside the +FB and full cells)");
            rc = -1;
        }
    }
    json_decref(o);
    if (rc) grid_def_free(d);
    return rc;
}

static int same_ints(const int *a, int na, const int *b, int nb)
{
    return na == nb && !memcmp(a, b, sizeof(int) * (size_t)na);
}

int grid_def_equal(const grid_def *a, const grid_def *b)
{
    if (a->repeats != b->repeats || a->n_run_flags != b->n_run_flags || a->n_models != b->n_models ||
        strcmp(a->human, b->human))
        return 0;
    if (!same_ints(a->scen, a->n_scen, b->scen, b->n_scen) || !same_ints(a->pe, a->n_pe, b->pe, b->n_pe) ||
        !same_ints(a->abl, a->n_abl, b->abl, b->n_abl) || !same_ints(a->fb, a->n_fb, b->fb, b->n_fb) ||
        !same_ints(a->fbin, a->n_fbin, b->fbin, b->n_fbin) ||
        !same_ints(a->got_best, a->n_gb, b->got_best, b->n_gb) ||
        !same_ints(a->got_worst, a->n_gw, b->got_worst, b->n_gw) ||
        !same_ints(a->prompts, a->n_pp, b->prompts, b->n_pp) ||
        !same_ints(a->reward_api, a->n_ra, b->reward_api, b->n_ra) ||
        !same_ints(a->fitness, a->n_fit, b->fitness, b->n_fit) || !same_ints(a->accept, a->n_acc, b->accept, b->n_acc) ||
        a->n_tf != b->n_tf || memcmp(a->target_fitness, b->target_fitness, sizeof(double) * (size_t)a->n_tf))
        return 0;
    for (int i = 0; i < a->n_models; i++)
        if (strcmp(a->models[i].name, b->models[i].name) || strcmp(a->models[i].base_url, b->models[i].base_url))
            return 0;
    for (int i = 0; i < a->n_run_flags; i++)
        if (strcmp(a->run_flags[i], b->run_flags[i])) return 0;
    return 1;
}
