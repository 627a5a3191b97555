/* Experiment grids: definition, cells, scheduler, run states.  See grid.h. */
#include "grid.h"
#include "graph.h"
#include "util.h"
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GRID_FORMAT 1

static const char *const abl_names[] = {"zs", "sa", "fb", "full"};

const char *grid_ablation_name(int a) { return a >= 0 && a < 4 ? abl_names[a] : "?"; }

static int ablation_from_name(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, abl_names[i])) return i;
    return -1;
}

/* ---------------------------------------------------------------- lists */

/* Split a comma list; each item goes through parse(), which returns its
 * value or -1.  Duplicates and empty items are refused. */
static int parse_list(const char *s, const char *what, const char *allowed, int (*parse)(const char *), int *out,
                      int max, int *n, char *err, int errlen)
{
    char buf[256];
    if (strlen(s) >= sizeof buf) {
        snprintf(err, (size_t)errlen, "--%s: list too long", what);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    char *p = buf;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = 0;
        int v = *p ? parse(p) : -1;
        if (v < 0) {
            snprintf(err, (size_t)errlen, "--%s: unknown item '%.40s' (a comma list of %s)", what, p, allowed);
            return -1;
        }
        for (int i = 0; i < *n; i++)
            if (out[i] == v) {
                snprintf(err, (size_t)errlen, "--%s: '%.40s' is listed twice", what, p);
                return -1;
            }
        if (*n >= max) {
            snprintf(err, (size_t)errlen, "--%s: too many items", what);
            return -1;
        }
        out[(*n)++] = v;
        if (!comma) break;
        p = comma + 1;
    }
    return 0;
}

static int scenario_from_name(const char *s)
{
    return s[0] >= '1' && s[0] <= '4' && !s[1] ? s[0] - '0' : -1;
}

int grid_parse_scenarios(const char *s, grid_def *d, char *err, int errlen)
{
    return parse_list(s, "scenarios", "1, 2, 3, 4", scenario_from_name, d->scen, 4, &d->n_scen, err, errlen);
}

int grid_parse_pe(const char *s, grid_def *d, char *err, int errlen)
{
    return parse_list(s, "pe", "cot, tot, got", graph_pe_from_name, d->pe, 3, &d->n_pe, err, errlen);
}

int grid_parse_ablations(const char *s, grid_def *d, char *err, int errlen)
{
    return parse_list(s, "ablations", "zs, sa, fb, full", ablation_from_name, d->abl, 4, &d->n_abl, err, errlen);
}

/* ---------------------------------------------------------------- run flags */

/* Set by the grid for every cell: never among the run flags. */
static const char *const grid_sets[] = {"scenario", "story", "story-file", "pe", "ablation", "out", "resume", "help"};
/* Read by the grid, then handed on (or replaced, for seed). */
static const char *const grid_reads[] = {"seed", "threads", "backend"};

/* i: index in grid_reads, or -1 when name is none of them.  Abbreviations
 * (which `run` would accept) of either list are refused. */
static int classify_flag(const char *name, size_t len, char *err, int errlen)
{
    const char *const *lists[2] = {grid_sets, grid_reads};
    int counts[2] = {(int)(sizeof grid_sets / sizeof *grid_sets), (int)(sizeof grid_reads / sizeof *grid_reads)};
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < counts[l]; i++) {
            const char *full = lists[l][i];
            if (strncmp(name, full, len)) continue;
            if (full[len] == 0 && l == 1) return i;
            if (full[len] == 0)
                snprintf(err, (size_t)errlen, "--%s is set by the grid for each cell; it cannot be a run flag", full);
            else
                snprintf(err, (size_t)errlen, "run flag '--%.*s': write it in full (--%s ...)", (int)len, name, full);
            return -2;
        }
    return -1;
}

int grid_set_run_flags(grid_def *d, int n, char **flags, int *sets_threads, int *sets_backend, char *err,
                       int errlen)
{
    *sets_threads = *sets_backend = 0;
    d->base_seed = 0;
    if (n > GRID_MAX_RUN_FLAGS) {
        snprintf(err, (size_t)errlen, "more than %d run flags after --", GRID_MAX_RUN_FLAGS);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const char *f = flags[i];
        if (strncmp(f, "--", 2) || !f[2]) continue; /* a value, or something `run` will refuse */
        const char *name = f + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int k = classify_flag(name, len, err, errlen);
        if (k == -2) return -1;
        if (k == 0) { /* --seed */
            const char *v = eq ? eq + 1 : i + 1 < n ? flags[i + 1] : NULL;
            if (!v || parse_u64(v, &d->base_seed) ||
                d->base_seed > (1ull << 62) - (uint64_t)GRID_SEED_STRIDE * GRID_MAX_REPEATS) {
                snprintf(err, (size_t)errlen, "run flag --seed needs a non-negative integer below 2^62 - 10^6");
                return -1;
            }
        }
        if (k == 1) *sets_threads = 1;
        if (k == 2) *sets_backend = 1;
    }
    for (int i = 0; i < d->n_run_flags; i++) free(d->run_flags[i]);
    d->n_run_flags = 0;
    for (int i = 0; i < n; i++) {
        d->run_flags[i] = strdup(flags[i]);
        if (!d->run_flags[i]) {
            snprintf(err, (size_t)errlen, "out of memory");
            return -1;
        }
        d->n_run_flags = i + 1;
    }
    return 0;
}

void grid_def_free(grid_def *d)
{
    for (int i = 0; i < d->n_run_flags; i++) free(d->run_flags[i]);
    d->n_run_flags = 0;
}

/* ---------------------------------------------------------------- cells */

int grid_n_cells(const grid_def *d) { return d->n_scen * d->n_pe * d->n_abl * d->repeats; }

void grid_cell_at(const grid_def *d, int k, grid_cell *c)
{
    int per_repeat = d->n_scen * d->n_pe * d->n_abl;
    c->index = k;
    c->repeat = k / per_repeat;
    int rest = k % per_repeat;
    c->ablation = d->abl[rest % d->n_abl];
    rest /= d->n_abl;
    c->pe = d->pe[rest % d->n_pe];
    c->scenario = d->scen[rest / d->n_pe];
    c->seed = d->base_seed + (uint64_t)c->repeat * GRID_SEED_STRIDE;
    snprintf(c->name, sizeof c->name, "s%d-%s-%s-r%d", c->scenario, graph_pe_name(c->pe),
             grid_ablation_name(c->ablation), c->repeat);
}

/* ---------------------------------------------------------------- grid.json */

char *grid_def_json(const grid_def *d)
{
    json_t *o = json_object(), *a;
    json_object_set_new(o, "format", json_integer(GRID_FORMAT));
    json_object_set_new(o, "scenarios", a = json_array());
    for (int i = 0; i < d->n_scen; i++) json_array_append_new(a, json_integer(d->scen[i]));
    json_object_set_new(o, "pe", a = json_array());
    for (int i = 0; i < d->n_pe; i++) json_array_append_new(a, json_string(graph_pe_name(d->pe[i])));
    json_object_set_new(o, "ablations", a = json_array());
    for (int i = 0; i < d->n_abl; i++) json_array_append_new(a, json_string(abl_names[d->abl[i]]));
    json_object_set_new(o, "repeats", json_integer(d->repeats));
    json_object_set_new(o, "run_flags", a = json_array());
    for (int i = 0; i < d->n_run_flags; i++) json_array_append_new(a, json_string(d->run_flags[i]));
    json_object_set_new(o, "cells", a = json_array());
    for (int k = 0; k < grid_n_cells(d); k++) {
        grid_cell c;
        grid_cell_at(d, k, &c);
        json_t *e = json_object();
        json_object_set_new(e, "index", json_integer(k));
        json_object_set_new(e, "name", json_string(c.name));
        json_object_set_new(e, "seed", json_integer((json_int_t)c.seed));
        json_array_append_new(a, e);
    }
    char *s = json_dumps(o, JSON_INDENT(2));
    json_decref(o);
    return s;
}

/* A JSON array of strings or integers, joined with commas, for the list
 * parsers (which check every item). */
static int join_items(json_t *arr, char *buf, size_t len)
{
    if (!json_is_array(arr) || json_array_size(arr) == 0) return -1;
    size_t k = 0, i;
    json_t *v;
    buf[0] = 0;
    json_array_foreach(arr, i, v) {
        int n;
        if (json_is_string(v)) n = snprintf(buf + k, len - k, "%s%s", i ? "," : "", json_string_value(v));
        else if (json_is_integer(v)) n = snprintf(buf + k, len - k, "%s%lld", i ? "," : "", (long long)json_integer_value(v));
        else return -1;
        if (n < 0 || (size_t)n >= len - k) return -1;
        k += (size_t)n;
    }
    return 0;
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
    char buf[256], why[256];
    int rc = -1;
    json_t *fmt = json_object_get(o, "format"), *rep = json_object_get(o, "repeats");
    json_t *flags = json_object_get(o, "run_flags");
    if (!json_is_integer(fmt) || json_integer_value(fmt) != GRID_FORMAT) {
        snprintf(err, (size_t)errlen, "'format' missing or not %d", GRID_FORMAT);
    } else if (join_items(json_object_get(o, "scenarios"), buf, sizeof buf) ||
               grid_parse_scenarios(buf, d, why, sizeof why)) {
        snprintf(err, (size_t)errlen, "'scenarios' missing or invalid");
    } else if (join_items(json_object_get(o, "pe"), buf, sizeof buf) || grid_parse_pe(buf, d, why, sizeof why)) {
        snprintf(err, (size_t)errlen, "'pe' missing or invalid");
    } else if (join_items(json_object_get(o, "ablations"), buf, sizeof buf) ||
               grid_parse_ablations(buf, d, why, sizeof why)) {
        snprintf(err, (size_t)errlen, "'ablations' missing or invalid");
    } else if (!json_is_integer(rep) || json_integer_value(rep) < 1 || json_integer_value(rep) > GRID_MAX_REPEATS) {
        snprintf(err, (size_t)errlen, "'repeats' missing or not 1..%d", GRID_MAX_REPEATS);
    } else if (!json_is_array(flags) || json_array_size(flags) > GRID_MAX_RUN_FLAGS) {
        snprintf(err, (size_t)errlen, "'run_flags' missing or too long");
    } else {
        d->repeats = (int)json_integer_value(rep);
        char *list[GRID_MAX_RUN_FLAGS];
        int n = 0, bad = 0, st, sb;
        size_t i;
        json_t *v;
        json_array_foreach(flags, i, v) {
            if (!json_is_string(v)) bad = 1;
            else list[n++] = (char *)json_string_value(v);
        }
        if (bad) snprintf(err, (size_t)errlen, "'run_flags' holds something other than strings");
        else if (grid_set_run_flags(d, n, list, &st, &sb, why, sizeof why))
            snprintf(err, (size_t)errlen, "'run_flags': %s", why);
        else rc = 0;
    }
    json_decref(o);
    if (rc) grid_def_free(d);
    return rc;
}

int grid_def_equal(const grid_def *a, const grid_def *b)
{
    if (a->n_scen != b->n_scen || a->n_pe != b->n_pe || a->n_abl != b->n_abl || a->repeats != b->repeats ||
        a->n_run_flags != b->n_run_flags)
        return 0;
    if (memcmp(a->scen, b->scen, sizeof(int) * (size_t)a->n_scen) || memcmp(a->pe, b->pe, sizeof(int) * (size_t)a->n_pe) ||
        memcmp(a->abl, b->abl, sizeof(int) * (size_t)a->n_abl))
        return 0;
    for (int i = 0; i < a->n_run_flags; i++)
        if (strcmp(a->run_flags[i], b->run_flags[i])) return 0;
    return 1;
}

/* ---------------------------------------------------------------- scheduler */

int grid_sched_init(grid_sched *s, int n_slots, const int *queue, int n_queue)
{
    memset(s, 0, sizeof *s);
    if (n_slots < 1 || n_queue < 0) return -1;
    s->slot_cell = malloc(sizeof(int) * (size_t)n_slots);
    if (!s->slot_cell) return -1;
    for (int i = 0; i < n_slots; i++) s->slot_cell[i] = -1;
    s->n_slots = n_slots;
    s->queue = queue;
    s->n_queue = n_queue;
    return 0;
}

void grid_sched_free(grid_sched *s)
{
    free(s->slot_cell);
    s->slot_cell = NULL;
}

int grid_sched_next(grid_sched *s, int *slot)
{
    if (s->next >= s->n_queue) return -1;
    for (int i = 0; i < s->n_slots; i++)
        if (s->slot_cell[i] < 0) {
            int cell = s->queue[s->next++];
            s->slot_cell[i] = cell;
            s->running++;
            *slot = i;
            return cell;
        }
    return -1;
}

int grid_sched_done(grid_sched *s, int slot)
{
    if (slot < 0 || slot >= s->n_slots || s->slot_cell[slot] < 0) return -1;
    int cell = s->slot_cell[slot];
    s->slot_cell[slot] = -1;
    s->running--;
    return cell;
}

void grid_sched_stop(grid_sched *s) { s->next = s->n_queue; }

/* ---------------------------------------------------------------- run states */

static int exists_in(const char *dir, const char *name)
{
    char path[2048];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

void grid_run_state(const char *dir, grid_result *r)
{
    memset(r, 0, sizeof *r);
    r->best_node = -1;
    snprintf(r->author, sizeof r->author, "?");
    char path[2048], err[512];
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_t *cfg = json_load_file(path, 0, NULL);
    if (!json_is_object(cfg)) {
        /* a half-written directory without config.json starts afresh */
        r->state = GRID_NEW;
        json_decref(cfg);
        return;
    }
    r->state = GRID_STARTED;
    const char *label = json_string_value(json_object_get(cfg, "author_label"));
    const char *author = json_string_value(json_object_get(cfg, "author"));
    const char *model = json_string_value(json_object_get(json_object_get(cfg, "llm"), "model"));
    const char *abl = json_string_value(json_object_get(cfg, "ablation"));
    const char *backend = json_string_value(json_object_get(cfg, "backend"));
    r->offline = author && !strcmp(author, "offline");
    if (r->offline) snprintf(r->author, sizeof r->author, "%s", label ? label : "rule-based offline author");
    else if (author) snprintf(r->author, sizeof r->author, "%s %s", label ? label : "language model", model ? model : "");
    snprintf(r->backend, sizeof r->backend, "%s", backend ? backend : "?");
    json_t *it = json_object_get(cfg, "iterations"), *tf = json_object_get(cfg, "target_fitness");
    int iterations = json_is_integer(it) ? (int)json_integer_value(it) : 1;
    if (abl && (!strcmp(abl, "zs") || !strcmp(abl, "sa"))) iterations = 1;
    double target = json_is_number(tf) ? json_number_value(tf) : -1;
    json_decref(cfg);
    snprintf(path, sizeof path, "%s/graph.json", dir);
    thought_graph g;
    if (graph_load(path, &g, err, sizeof err)) return;
    r->nodes = g.n;
    r->best_node = graph_best(&g);
    r->best_fitness = r->best_node >= 0 ? g.nodes[r->best_node].fitness : 0;
    int pending = g.n > 0 && g.nodes[g.n - 1].status == NODE_PENDING;
    /* stopped.txt: the run ended its search early (a model that wrote no reward) */
    int ended = g.n >= iterations || (target >= 0 && r->best_node >= 0 && r->best_fitness >= target) ||
                exists_in(dir, "stopped.txt");
    if (g.n > 0 && !pending && ended && exists_in(dir, "summary.txt")) r->state = GRID_FINISHED;
    graph_free(&g);
}

/* ---------------------------------------------------------------- statistics */

void grid_mean_std(const double *x, int n, double *mean, double *sd)
{
    double m = 0, v = 0;
    for (int i = 0; i < n; i++) m += x[i];
    m = n ? m / n : 0;
    for (int i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m);
    *mean = m;
    *sd = n ? sqrt(v / n) : 0;
}
