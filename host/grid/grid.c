/* Experiment grids: definition, cells, the flags of their runs, run
 * states (grid.json is host/grid/grid_json.c).  See grid.h. */
#include "grid.h"
#include "graph.h"
#include "run.h"
#include "util.h"
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static int scenario_from_name(const char *s) { return s[0] >= '1' && s[0] <= '4' && !s[1] ? s[0] - '0' : -1; }
static int ref_count_from_name(const char *s) { return s[0] >= '0' && s[0] <= '4' && !s[1] ? s[0] - '0' : -1; }

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
    return parse_list(s, "ablations", "zs, sa, fb, full", run_parse_ablation, d->abl, 4, &d->n_abl, err, errlen);
}

int grid_parse_feedbacks(const char *s, grid_def *d, char *err, int errlen)
{
    return parse_list(s, "feedbacks", "specific, generic, none", run_parse_feedback, d->fb, 3, &d->n_fb, err, errlen);
}

int grid_parse_feedback_inputs(const char *s, grid_def *d, char *err, int errlen)
{
    return parse_list(s, "feedback-inputs", "text, image", run_parse_feedback_input, d->fbin, 2, &d->n_fbin, err,
                      errlen);
}

int grid_parse_got_best(const char *s, grid_def *d, char *err, int errlen)
{
    return parse_list(s, "got-best", "0 to 4", ref_count_from_name, d->got_best, 5, &d->n_gb, err, errlen);
}

int grid_parse_got_worst(const char *s, grid_def *d, char *err, int errlen)
{
    return parse_list(s, "got-worst", "0 to 4", ref_count_from_name, d->got_worst, 5, &d->n_gw, err, errlen);
}

static const char *const prompt_names[] = {"paper", "rich"}, *const api_names[] = {"minimal", "full"};
static const char *const fitness_names[] = {"heuristic", "llm"};

static int index_of(const char *const names[2], const char *s)
{
    return !strcmp(s, names[0]) ? 0 : !strcmp(s, names[1]) ? 1 : -1;
}

static int prompts_from_name(const char *s) { return index_of(prompt_names, s); }
static int api_from_name(const char *s) { return index_of(api_names, s); }
static int fitness_from_name(const char *s) { return index_of(fitness_names, s); }
const char *grid_prompts_name(int v) { return v == 0 || v == 1 ? prompt_names[v] : "?"; }
const char *grid_reward_api_name(int v) { return v == 0 || v == 1 ? api_names[v] : "?"; }
const char *grid_fitness_name(int v) { return v == 0 || v == 1 ? fitness_names[v] : "?"; }

int grid_parse_prompt_profiles(const char *s, grid_def *d, char *err, int errlen)
{
    return parse_list(s, "prompt-profiles", "paper, rich", prompts_from_name, d->prompts, 2, &d->n_pp, err, errlen);
}

int grid_parse_reward_apis(const char *s, grid_def *d, char *err, int errlen)
{
    return parse_list(s, "reward-apis", "minimal, full", api_from_name, d->reward_api, 2, &d->n_ra, err, errlen);
}

int grid_parse_fitnesses(const char *s, grid_def *d, char *err, int errlen)
{
    return parse_list(s, "fitnesses", "heuristic, llm", fitness_from_name, d->fitness, 2, &d->n_fit, err, errlen);
}

int grid_parse_accept(const char *s, grid_def *d, char *err, int errlen)
{
    return parse_list(s, "accept", "always, improve", run_parse_accept, d->accept, 2, &d->n_acc, err, errlen);
}

void grid_target_name(double v, char *buf, int len)
{
    if (v < 0) {
        snprintf(buf, (size_t)len, "none");
        return;
    }
    /* the fewest digits that read back as v: 0.9, not 0.90000000000000002 */
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, (size_t)len, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) return;
    }
}

int grid_parse_target_fitness(const char *s, grid_def *d, char *err, int errlen)
{
    char buf[256];
    size_t len = strlen(s);
    if (len >= sizeof buf) return snprintf(err, (size_t)errlen, "--target-fitness: list too long"), -1;
    if (!len || s[0] == ',' || s[len - 1] == ',' || strstr(s, ",,"))
        return snprintf(err, (size_t)errlen, "--target-fitness: an empty item (a comma list of fitness values in "
                                             "[0, 1] or none)"), -1;
    snprintf(buf, sizeof buf, "%s", s);
    d->n_tf = 0;
    for (char *save = NULL, *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        double v = -1;
        if (strcmp(it, "none") && parse_double(it, 0, 1, &v))
            return snprintf(err, (size_t)errlen, "--target-fitness: unknown item '%.40s' (a comma list of fitness "
                                                 "values in [0, 1] or none)", it), -1;
        for (int i = 0; i < d->n_tf; i++)
            if (d->target_fitness[i] == v)
                return snprintf(err, (size_t)errlen, "--target-fitness: '%.40s' is listed twice", it), -1;
        if (d->n_tf == GRID_MAX_TARGETS)
            return snprintf(err, (size_t)errlen, "--target-fitness: at most %d values", GRID_MAX_TARGETS), -1;
        d->target_fitness[d->n_tf++] = v;
    }
    return 0;
}

/* The model's name as it appears in cell names: letters, digits, '.', '-'
 * and '_' kept, anything else '_'. */
static void model_tag(const char *name, char *out, size_t len)
{
    size_t k = 0;
    for (const char *p = name; *p && k + 1 < len && k < 40; p++) {
        char ch = *p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                 ch == '-' || ch == '_';
        out[k++] = ok ? ch : '_';
    }
    out[k] = 0;
}

int grid_parse_models(const char *s, grid_def *d, char *err, int errlen)
{
    char buf[4096];
    if (strlen(s) >= sizeof buf) return snprintf(err, (size_t)errlen, "--models: list too long"), -1;
    snprintf(buf, sizeof buf, "%s", s);
    d->n_models = 0;
    for (char *save = NULL, *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        if (d->n_models == GRID_MAX_MODELS)
            return snprintf(err, (size_t)errlen, "--models: at most %d models", GRID_MAX_MODELS), -1;
        grid_model *m = &d->models[d->n_models];
        char *at = strchr(it, '@'); /* NAME@BASE_URL */
        if (at) *at = 0;
        if (!*it || strlen(it) >= sizeof m->name || (at && (!at[1] || strlen(at + 1) >= sizeof m->base_url)))
            return snprintf(err, (size_t)errlen, "--models: '%.60s' is not NAME or NAME@BASE_URL", it), -1;
        if (at && !llm_base_url_ok(at + 1))
            return snprintf(err, (size_t)errlen, "--models: '%.60s': the server must be an http:// or https:// address",
                            at + 1), -1;
        if (at && !strcmp(it, "offline"))
            return snprintf(err, (size_t)errlen, "--models: the offline author has no server"), -1;
        snprintf(m->name, sizeof m->name, "%s", it);
        snprintf(m->base_url, sizeof m->base_url, "%s", at ? at + 1 : "");
        char tag[64], other[64];
        model_tag(m->name, tag, sizeof tag);
        for (int i = 0; i < d->n_models; i++) {
            model_tag(d->models[i].name, other, sizeof other);
            if (!strcmp(tag, other))
                return snprintf(err, (size_t)errlen, "--models: '%.60s' is listed twice (or reads the same in cell "
                                "names as '%.60s')", m->name, d->models[i].name), -1;
        }
        d->n_models++;
    }
    if (!d->n_models) return snprintf(err, (size_t)errlen, "--models: an empty list"), -1;
    return 0;
}

int grid_set_human(grid_def *d, const char *given, char *err, int errlen)
{
    /* absolute, so that cells and batch tasks started elsewhere find it */
    char dir[PATH_MAX];
    if (!realpath(given, dir)) return snprintf(err, (size_t)errlen, "--human: %.900s: %s", given, strerror(errno)), -1;
    if (strlen(dir) >= sizeof d->human - 16) return snprintf(err, (size_t)errlen, "--human: path too long"), -1;
    for (int i = 0; i < d->n_scen; i++) {
        char path[1100], why[1200];
        long len;
        snprintf(path, sizeof path, "%s/scenario%d.c", dir, d->scen[i]);
        char *t = read_file(path, 64L << 10, &len, why, sizeof why);
        if (!t) return snprintf(err, (size_t)errlen, "--human: %s", why), -1;
        free(t);
    }
    snprintf(d->human, sizeof d->human, "%s", dir);
    return 0;
}

/* ---------------------------------------------------------------- run flags */

/* Set by the grid for every cell: never among the run flags. */
static const char *const grid_sets[] = {"scenario", "story", "story-file", "pe",  "ablation",
                                        "out",      "resume", "help",      "init-reward"};
/* Read by the grid, then handed on (or replaced, for seed). */
static const char *const grid_reads[] = {"seed", "threads", "backend"};
/* Run flags that are prefixes of flags the grid may set, yet full names
 * themselves (so not abbreviations). */
static const char *const run_full_names[] = {"feedback"};

/* The flags an axis sets: refused after "--" when that axis is given. */
static int axis_sets(const grid_def *d, const char **out)
{
    int n = 0;
    if (d->n_models) out[n++] = "model", out[n++] = "llm", out[n++] = "base-url";
    if (d->n_fb) out[n++] = "feedback";
    if (d->n_fbin) out[n++] = "feedback-input";
    if (d->n_gb) out[n++] = "got-best";
    if (d->n_gw) out[n++] = "got-worst";
    if (d->n_pp) out[n++] = "prompts";
    if (d->n_ra) out[n++] = "reward-api";
    if (d->n_fit) out[n++] = "fitness";
    if (d->n_acc) out[n++] = "accept";
    if (d->n_tf) out[n++] = "target-fitness";
    return n;
}

/* i: index in grid_reads, -1 when name is none of the grid's, -2 refused
 * (err says why: set by the grid, or an abbreviation `run` would accept). */
static int classify_flag(const grid_def *d, const char *name, size_t len, char *err, int errlen)
{
    const char *sets[24];
    int n = 0;
    for (size_t i = 0; i < sizeof grid_sets / sizeof *grid_sets; i++) sets[n++] = grid_sets[i];
    n += axis_sets(d, sets + n);
    for (size_t i = 0; i < sizeof grid_reads / sizeof *grid_reads; i++)
        if (strlen(grid_reads[i]) == len && !strncmp(name, grid_reads[i], len)) return (int)i;
    for (int i = 0; i < n; i++)
        if (strlen(sets[i]) == len && !strncmp(name, sets[i], len)) {
            snprintf(err, (size_t)errlen, "--%s is set by the grid for each cell; it cannot be a run flag", sets[i]);
            return -2;
        }
    for (size_t i = 0; i < sizeof run_full_names / sizeof *run_full_names; i++)
        if (strlen(run_full_names[i]) == len && !strncmp(name, run_full_names[i], len)) return -1;
    for (int i = 0; i < n + 3; i++) {
        const char *full = i < n ? sets[i] : grid_reads[i - n];
        if (strncmp(name, full, len)) continue;
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
        int k = classify_flag(d, name, len, err, errlen);
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

/* "s1-got-full-generic-image-b2-w1-gpt-4o-r0": the parts of the axes that
 * vary (more than one value) and apply to the cell. */
static void cell_name(const grid_def *d, grid_cell *c)
{
    char *p = c->name, *end = c->name + sizeof c->name;
    p += snprintf(p, (size_t)(end - p), "s%d-", c->scenario);
    if (c->human) p += snprintf(p, (size_t)(end - p), "human");
    else if (c->pe < 0) p += snprintf(p, (size_t)(end - p), "%s", run_ablation_name(c->ablation));
    else p += snprintf(p, (size_t)(end - p), "%s-%s", graph_pe_name(c->pe), run_ablation_name(c->ablation));
    if (c->fb >= 0 && d->n_fb > 1) p += snprintf(p, (size_t)(end - p), "-%s", run_feedback_name(c->fb));
    if (c->fbin >= 0 && d->n_fbin > 1) p += snprintf(p, (size_t)(end - p), "-%s", run_feedback_input_name(c->fbin));
    if (c->fitness >= 0 && d->n_fit > 1) p += snprintf(p, (size_t)(end - p), "-%s", fitness_names[c->fitness]);
    if (c->accept >= 0 && d->n_acc > 1) p += snprintf(p, (size_t)(end - p), "-%s", run_accept_name(c->accept));
    if (c->tf >= 0 && d->n_tf > 1) {
        char tf[32];
        grid_target_name(d->target_fitness[c->tf], tf, sizeof tf);
        p += snprintf(p, (size_t)(end - p), "-target%s%s", d->target_fitness[c->tf] < 0 ? "-" : "", tf);
    }
    if (c->gb >= 0 && d->n_gb > 1) p += snprintf(p, (size_t)(end - p), "-b%d", c->gb);
    if (c->gw >= 0 && d->n_gw > 1) p += snprintf(p, (size_t)(end - p), "-w%d", c->gw);
    if (c->prompts >= 0 && d->n_pp > 1) p += snprintf(p, (size_t)(end - p), "-%s", prompt_names[c->prompts]);
    if (c->reward_api >= 0 && d->n_ra > 1) p += snprintf(p, (size_t)(end - p), "-api-%s", api_names[c->reward_api]);
    if (c->model >= 0 && d->n_models > 1) {
        char tag[64];
        model_tag(d->models[c->model].name, tag, sizeof tag);
        p += snprintf(p, (size_t)(end - p), "-%s", tag);
    }
    snprintf(p, (size_t)(end - p), "-r%d", c->repeat);
}

typedef struct {
    const grid_def *d;
    grid_cell *cells;
    int n, cap;
} cell_list;

static int push_cell(cell_list *l, grid_cell c)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        grid_cell *p = realloc(l->cells, sizeof *p * (size_t)cap);
        if (!p) return -1;
        l->cells = p;
        l->cap = cap;
    }
    c.index = l->n;
    c.seed = l->d->base_seed + (uint64_t)c.repeat * GRID_SEED_STRIDE;
    cell_name(l->d, &c);
    l->cells[l->n++] = c;
    return 0;
}

void grid_search_axes(const grid_def *d, int pe, grid_axis ax[GRID_N_AXES])
{
    int got = pe == PE_GOT;
    ax[GRID_AX_FB] = (grid_axis){d->n_fb, d->fb};
    ax[GRID_AX_FBIN] = (grid_axis){d->n_fbin, d->fbin};
    ax[GRID_AX_FIT] = (grid_axis){d->n_fit, d->fitness};
    ax[GRID_AX_ACC] = (grid_axis){d->n_acc, d->accept};
    ax[GRID_AX_TF] = (grid_axis){d->n_tf, NULL};
    ax[GRID_AX_GB] = (grid_axis){got ? d->n_gb : 0, d->got_best};
    ax[GRID_AX_GW] = (grid_axis){got ? d->n_gw : 0, d->got_worst};
}

int grid_axes_count(const grid_axis *ax, int n)
{
    int total = 1;
    for (int i = 0; i < n; i++) total *= ax[i].n ? ax[i].n : 1;
    return total;
}

void grid_axes_pick(const grid_axis *ax, int n, int k, int *out)
{
    for (int i = n - 1; i >= 0; i--) {
        int m = ax[i].n ? ax[i].n : 1, at = k % m;
        k /= m;
        out[i] = !ax[i].n ? -1 : ax[i].v ? ax[i].v[at] : at;
    }
}

/* The fb and full cells of one search method: every value of its axes. */
static int push_search_cells(cell_list *l, grid_cell c)
{
    grid_axis ax[GRID_N_AXES];
    int v[GRID_N_AXES];
    grid_search_axes(l->d, c.pe, ax);
    for (int k = 0, n = grid_axes_count(ax, GRID_N_AXES); k < n; k++) {
        grid_axes_pick(ax, GRID_N_AXES, k, v);
        c.fb = v[GRID_AX_FB], c.fbin = v[GRID_AX_FBIN], c.fitness = v[GRID_AX_FIT];
        c.accept = v[GRID_AX_ACC], c.tf = v[GRID_AX_TF], c.gb = v[GRID_AX_GB], c.gw = v[GRID_AX_GW];
        if (push_cell(l, c)) return -1;
    }
    return 0;
}

static int has_ablation(const int *abl, int n, int a)
{
    for (int i = 0; i < n; i++)
        if (abl[i] == a) return 1;
    return 0;
}

int grid_column_cells(const int *abl, int n_abl, int column)
{
    if (!has_ablation(abl, n_abl, column)) return -1;
    int from = column == ABL_ZS ? ABL_FB : column == ABL_SA ? ABL_FULL : column;
    return has_ablation(abl, n_abl, from) ? from : column;
}

/* The cells of one scenario, given its repeat, model, prompts and reward
 * API in c: the ablations', then the Human cell.  0 or -1. */
static int push_scenario_cells(cell_list *l, grid_cell c)
{
    const grid_def *d = l->d;
    c.fb = c.fbin = c.gb = c.gw = c.fitness = c.accept = c.tf = -1;
    for (int a = 0; a < d->n_abl; a++) {
        c.ablation = d->abl[a];
        if (c.ablation == ABL_ZS || c.ablation == ABL_SA) {
            /* one node, before any fitness steers the search: not per fitness */
            if (grid_column_cells(d->abl, d->n_abl, c.ablation) != c.ablation) continue;
            c.pe = -1;
            if (push_cell(l, c)) return -1;
            continue;
        }
        for (int p = 0; p < d->n_pe; p++) {
            c.pe = d->pe[p];
            if (push_search_cells(l, c)) return -1;
        }
    }
    if (!d->human[0]) return 0;
    /* the Human row refines with CoT: once per acceptance and target fitness */
    c.human = 1, c.pe = PE_COT, c.ablation = ABL_FULL;
    grid_axis ax[2] = {{d->n_acc, d->accept}, {d->n_tf, NULL}};
    int v[2];
    for (int k = 0, n = grid_axes_count(ax, 2); k < n; k++) {
        grid_axes_pick(ax, 2, k, v);
        c.accept = v[0], c.tf = v[1];
        if (push_cell(l, c)) return -1;
    }
    return 0;
}

int grid_cells(const grid_def *d, grid_cell **cells)
{
    cell_list l = {d, NULL, 0, 0};
    int nm = d->n_models ? d->n_models : 1, npp = d->n_pp ? d->n_pp : 1, nra = d->n_ra ? d->n_ra : 1;
    for (int r = 0; r < d->repeats; r++)
        for (int m = 0; m < nm; m++)
            for (int pp = 0; pp < npp; pp++)
                for (int ra = 0; ra < nra; ra++)
                    for (int s = 0; s < d->n_scen; s++) {
                        grid_cell c;
                        memset(&c, 0, sizeof c);
                        c.scenario = d->scen[s];
                        c.model = d->n_models ? m : -1;
                        c.prompts = d->n_pp ? d->prompts[pp] : -1;
                        c.reward_api = d->n_ra ? d->reward_api[ra] : -1;
                        c.repeat = r;
                        if (push_scenario_cells(&l, c)) {
                            free(l.cells);
                            *cells = NULL;
                            return -1;
                        }
                    }
    *cells = l.cells;
    return l.n;
}

const char *grid_cell_model(const grid_def *d, const grid_cell *c)
{
    return c->model >= 0 && c->model < d->n_models ? d->models[c->model].name : "";
}

int grid_cell_run_flags(const grid_def *d, int resume, char **out)
{
    int n = 0;
    for (int i = 0; i < d->n_run_flags; i++) {
        const char *f = d->run_flags[i];
        if (!strcmp(f, "--seed")) {
            i++;
            continue;
        }
        if (!strncmp(f, "--seed=", 7)) continue;
        /* a profile only starts a run: a resumed one has its settings */
        if (resume && !strcmp(f, "--quick")) continue;
        out[n++] = d->run_flags[i];
    }
    return n;
}

/* The author and where requests go are the grid's to say, on a resume
 * too: a cell's stored config.json does not choose its model, server or
 * key (host/llm/trust.h), and `run --resume` refuses an author that differs
 * from these flags.  Into argv; returns the count. */
static int model_flags(const grid_def *d, const grid_cell *c, char **argv)
{
    int n = 0;
    if (c->model < 0) return 0;
    const grid_model *m = &d->models[c->model];
    int offline = !strcmp(m->name, "offline");
    argv[n++] = "--llm", argv[n++] = offline ? "offline" : "openai";
    if (!offline) argv[n++] = "--model", argv[n++] = (char *)m->name;
    if (m->base_url[0]) argv[n++] = "--base-url", argv[n++] = (char *)m->base_url;
    return n;
}

int grid_cell_argv(const grid_def *d, const grid_cell *c, const char *dir, int resume, int threads, int cuda,
                   grid_argv_buf *b, char **argv)
{
    int n = 0;
    argv[n++] = "pcgrllm";
    argv[n++] = "run";
    if (resume) {
        argv[n++] = "--resume";
        n += model_flags(d, c, argv + n);
    } else {
        snprintf(b->scen, sizeof b->scen, "%d", c->scenario);
        argv[n++] = "--scenario", argv[n++] = b->scen;
        argv[n++] = "--pe", argv[n++] = (char *)graph_pe_name(c->pe < 0 ? PE_COT : c->pe);
        argv[n++] = "--ablation", argv[n++] = (char *)run_ablation_name(c->ablation);
        if (c->fb >= 0) argv[n++] = "--feedback", argv[n++] = (char *)run_feedback_name(c->fb);
        if (c->fbin >= 0) argv[n++] = "--feedback-input", argv[n++] = (char *)run_feedback_input_name(c->fbin);
        if (c->gb >= 0) snprintf(b->gb, sizeof b->gb, "%d", c->gb), argv[n++] = "--got-best", argv[n++] = b->gb;
        if (c->gw >= 0) snprintf(b->gw, sizeof b->gw, "%d", c->gw), argv[n++] = "--got-worst", argv[n++] = b->gw;
        if (c->fitness >= 0) argv[n++] = "--fitness", argv[n++] = (char *)fitness_names[c->fitness];
        if (c->accept >= 0) argv[n++] = "--accept", argv[n++] = (char *)run_accept_name(c->accept);
        if (c->tf >= 0) {
            grid_target_name(d->target_fitness[c->tf], b->tf, sizeof b->tf);
            argv[n++] = "--target-fitness", argv[n++] = b->tf;
        }
        if (c->prompts >= 0) argv[n++] = "--prompts", argv[n++] = (char *)prompt_names[c->prompts];
        if (c->reward_api >= 0) argv[n++] = "--reward-api", argv[n++] = (char *)api_names[c->reward_api];
        if (c->human) {
            snprintf(b->human, sizeof b->human, "%s/scenario%d.c", d->human_files[0] ? d->human_files : d->human,
                     c->scenario);
            argv[n++] = "--init-reward", argv[n++] = b->human;
        }
        n += model_flags(d, c, argv + n);
        if (threads > 0) snprintf(b->threads, sizeof b->threads, "%d", threads), argv[n++] = "--threads",
                                                                                   argv[n++] = b->threads;
        if (cuda) argv[n++] = "--backend", argv[n++] = "cuda";
    }
    if (d->api_key_env[0]) argv[n++] = "--api-key-env", argv[n++] = (char *)d->api_key_env;
    argv[n++] = "--out";
    argv[n++] = (char *)dir;
    argv[n++] = "--yes"; /* the grid said its cost up front; a cell never asks */
    /* the run flags, their --seed replaced by the cell's (after them, so
     * that it wins; a resumed run keeps its stored seed anyway) */
    n += grid_cell_run_flags(d, resume, argv + n);
    if (!resume) {
        snprintf(b->seed, sizeof b->seed, "%llu", (unsigned long long)c->seed);
        argv[n++] = "--seed", argv[n++] = b->seed;
    }
    argv[n] = NULL;
    return n;
}

/* ---------------------------------------------------------------- run states */

static int exists_in(const char *dir, const char *name)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path_present(path);
}

/* What config.json says about the author and the settings the tables
 * report.  Returns the iterations the run makes and its target fitness. */
static void read_config(json_t *cfg, grid_result *r, int *iterations, double *target)
{
    const char *label = json_string_value(json_object_get(cfg, "author_label"));
    const char *author = json_string_value(json_object_get(cfg, "author"));
    const char *model = json_string_value(json_object_get(json_object_get(cfg, "llm"), "model"));
    const char *abl = json_string_value(json_object_get(cfg, "ablation"));
    const char *backend = json_string_value(json_object_get(cfg, "backend"));
    const char *fb = json_string_value(json_object_get(cfg, "feedback"));
    const char *fbin = json_string_value(json_object_get(cfg, "feedback_input"));
    const char *fit = json_string_value(json_object_get(cfg, "fitness"));
    const char *pp = json_string_value(json_object_get(cfg, "prompts"));
    const char *api = json_string_value(json_object_get(cfg, "reward_api"));
    json_t *gb = json_object_get(cfg, "got_best"), *gw = json_object_get(cfg, "got_worst");
    r->offline = author && !strcmp(author, "offline");
    if (r->offline) snprintf(r->author, sizeof r->author, "%s", label ? label : "rule-based offline author");
    else if (author) snprintf(r->author, sizeof r->author, "%s %s", label ? label : "language model", model ? model : "");
    snprintf(r->model, sizeof r->model, "%s", r->offline ? "offline" : model ? model : "?");
    snprintf(r->backend, sizeof r->backend, "%s", backend ? backend : "?");
    snprintf(r->feedback, sizeof r->feedback, "%s", fb ? fb : "specific");
    snprintf(r->feedback_input, sizeof r->feedback_input, "%s", fbin ? fbin : "text");
    snprintf(r->prompts, sizeof r->prompts, "%s", pp ? pp : "paper");
    snprintf(r->reward_api, sizeof r->reward_api, "%s", api ? api : "minimal");
    r->fitness_llm = fit && !strcmp(fit, "llm");
    r->evaluator_rules = json_is_true(json_object_get(cfg, "evaluator_rules"));
    r->got_best = json_is_integer(gb) ? (int)json_integer_value(gb) : 2;
    r->got_worst = json_is_integer(gw) ? (int)json_integer_value(gw) : 0;
    const char *acc = json_string_value(json_object_get(cfg, "accept"));
    snprintf(r->accept, sizeof r->accept, "%s", acc && !strcmp(acc, "improve") ? "improve" : "always");
    json_t *it = json_object_get(cfg, "iterations"), *tf = json_object_get(cfg, "target_fitness");
    *iterations = json_is_integer(it) ? (int)json_integer_value(it) : 1;
    const char *ver = json_string_value(json_object_get(cfg, "pcgrllm_version"));
    const char *commit = json_string_value(json_object_get(cfg, "pcgrllm_commit"));
    if (ver) snprintf(r->version, sizeof r->version, "%.15s%s%.28s", ver, commit ? " " : "", commit ? commit : "");
    if (abl && (!strcmp(abl, "zs") || !strcmp(abl, "sa"))) *iterations = 1;
    *target = json_is_number(tf) ? json_number_value(tf) : -1;
    r->target_fitness = *target;
}

void grid_run_state(const char *dir, grid_result *r)
{
    memset(r, 0, sizeof *r);
    r->best_node = -1;
    snprintf(r->author, sizeof r->author, "?");
    char path[2048], err[512];
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_t *cfg = path_present(path) ? read_json_file(path, 1L << 20, err, sizeof err) : NULL;
    if (!json_is_object(cfg)) {
        /* a half-written directory without config.json starts afresh */
        r->state = GRID_NEW;
        json_decref(cfg);
        return;
    }
    r->state = GRID_STARTED;
    snprintf(path, sizeof path, "%s/halted.txt", dir);
    char *halted = path_present(path) ? read_file(path, 4096, &(long){0}, err, sizeof err) : NULL;
    if (halted) snprintf(r->halted, sizeof r->halted, "%.*s", (int)strcspn(halted, "\n"), halted);
    free(halted);
    int iterations;
    double target;
    read_config(cfg, r, &iterations, &target);
    json_decref(cfg);
    snprintf(path, sizeof path, "%s/graph.json", dir);
    thought_graph g;
    if (graph_load(path, &g, err, sizeof err)) return;
    r->nodes = g.n;
    r->best_node = graph_best(&g);
    r->best_fitness = r->best_node >= 0 ? g.nodes[r->best_node].fitness : 0;
    int pending = g.n > 0 && g.nodes[g.n - 1].status == NODE_PENDING;
    /* stopped.txt: the run ended its search early (a model that wrote no reward) */
    r->gave_up = exists_in(dir, "stopped.txt");
    int ended = g.n >= iterations || (target >= 0 && r->best_node >= 0 && r->best_fitness >= target) || r->gave_up;
    if (g.n > 0 && !pending && ended && exists_in(dir, "summary.txt")) r->state = GRID_FINISHED;
    graph_free(&g);
}
