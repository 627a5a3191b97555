/* A grid's cells read as rows.  See grid_rows.h. */
#include "grid_rows.h"
#include "graph.h"
#include "grid_exec.h"
#include "run.h"
#include "util.h"
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void grid_row_blank(grid_row *row)
{
    memset(row, 0, sizeof *row);
    row->key.got_best = row->key.got_worst = -1;
    snprintf(row->key.prompts, sizeof row->key.prompts, "paper");
    snprintf(row->key.reward_api, sizeof row->key.reward_api, "minimal");
    snprintf(row->key.search_fitness, sizeof row->key.search_fitness, "heuristic");
    snprintf(row->key.accept, sizeof row->key.accept, "always");
    snprintf(row->key.target_fitness, sizeof row->key.target_fitness, "none");
    row->scenario = row->ablation = row->repeat = row->iteration = row->node = -1;
    row->fitness = row->llm_score = row->best_so_far = row->llm_best_so_far = NAN;
    row->playable_share = row->mean_solutions = row->mean_entropy = row->diversity = row->playable_wall_share = NAN;
    row->wall_s = row->train_s = NAN;
    row->norm = NAN;
}

int grid_key_equal(const grid_key *a, const grid_key *b)
{
    return !strcmp(a->model, b->model) && !strcmp(a->pe, b->pe) && !strcmp(a->feedback, b->feedback) &&
           !strcmp(a->feedback_input, b->feedback_input) && a->got_best == b->got_best &&
           a->got_worst == b->got_worst && !strcmp(a->prompts, b->prompts) && !strcmp(a->reward_api, b->reward_api) &&
           !strcmp(a->search_fitness, b->search_fitness) && !strcmp(a->accept, b->accept) &&
           !strcmp(a->target_fitness, b->target_fitness);
}

int grid_rows_init(grid_rows *R, const int *scen, int n_scen, int repeats, const int *abl, int n_abl)
{
    memset(R, 0, sizeof *R);
    if (n_scen < 1 || n_scen > 4 || n_abl < 0 || n_abl > 4 || repeats < 1) return -1;
    memcpy(R->scen, scen, sizeof(int) * (size_t)n_scen);
    memcpy(R->abl, abl, sizeof(int) * (size_t)n_abl);
    R->n_scen = n_scen;
    R->n_abl = n_abl;
    R->repeats = repeats;
    run_config c; /* the evaluation levels a run makes unless its flags say otherwise */
    run_config_defaults(&c);
    R->n_levels = c.n_levels;
    R->eval_seed = c.eval_seed;
    return 0;
}

int grid_rows_add(grid_rows *R, const grid_row *row)
{
    if (R->n == R->cap) {
        int cap = R->cap ? R->cap * 2 : 256;
        grid_row *p = realloc(R->rows, sizeof *p * (size_t)cap);
        if (!p) return -1;
        R->rows = p;
        R->cap = cap;
    }
    R->rows[R->n++] = *row;
    return 0;
}

int grid_rows_add_cell(grid_rows *R, const grid_cell_info *c)
{
    grid_cell_info *p = realloc(R->cell_info, sizeof *p * (size_t)(R->n_cell_info + 1));
    if (!p) return -1;
    R->cell_info = p;
    R->cell_info[R->n_cell_info++] = *c;
    return 0;
}

const char *grid_cell_state_name(int state)
{
    return state == GRID_FINISHED ? "finished" : state == GRID_STARTED ? "started" : "new";
}

void grid_rows_free(grid_rows *R)
{
    free(R->rows);
    free(R->cell_info);
    memset(R, 0, sizeof *R);
}

static double num_or_nan(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* What a node measured: eval.json (the evaluator's fitness and the level
 * metrics) and times.json.  The graph's fitness is the model's score when
 * the cell judged with --fitness llm. */
static void read_node(const char *dir, const thought_node *nd, const grid_result *res, grid_row *row)
{
    char path[2300], err[2400];
    row->iteration = nd->iteration;
    row->node = nd->id;
    row->ok = nd->status == NODE_OK;
    row->wall_s = nd->wall_s;
    row->fitness = row->ok && !res->fitness_llm ? nd->fitness : 0;
    row->llm_score = !res->fitness_llm ? NAN : row->ok ? nd->fitness : 0;
    snprintf(path, sizeof path, "%s/nodes/%03d/eval.json", dir, nd->id);
    json_t *ev = row->ok ? read_json_file(path, 8L << 20, err, sizeof err) : NULL;
    if (ev) {
        double f = num_or_nan(ev, "fitness");
        if (isfinite(f)) row->fitness = f;
        row->playable_share = num_or_nan(ev, "playable_share");
        row->mean_solutions = num_or_nan(ev, "mean_solutions");
        row->mean_entropy = num_or_nan(ev, "mean_entropy");
        row->diversity = num_or_nan(ev, "diversity");
        row->playable_wall_share = num_or_nan(ev, "playable_wall_share");
        if (row->playable_wall_share < 0) row->playable_wall_share = NAN; /* -1: no playable level */
        json_decref(ev);
    } else if (row->ok && res->fitness_llm) {
        row->fitness = NAN; /* the evaluator's fitness is unknown */
    }
    snprintf(path, sizeof path, "%s/nodes/%03d/times.json", dir, nd->id);
    json_t *tm = read_json_file(path, 1L << 16, err, sizeof err);
    row->train_s = num_or_nan(tm, "train_s");
    json_decref(tm);
    snprintf(path, sizeof path, "%s/nodes/%03d/train/train.json", dir, nd->id);
    json_t *tj = path_present(path) ? read_json_file(path, 1L << 20, err, sizeof err) : NULL;
    json_t *th = json_object_get(tj, "threads");
    const char *be = json_string_value(json_object_get(tj, "backend"));
    row->threads = json_is_integer(th) ? (int)json_integer_value(th) : 0;
    snprintf(row->backend, sizeof row->backend, "%s", be ? be : "");
    json_decref(tj);
    snprintf(row->version, sizeof row->version, "%s", res->version);
}

/* The headings of a shared cell under search method pe: k with every
 * value of the axes the cell does not depend on.  Returns the count. */
static int method_keys(const grid_def *d, int pe, const grid_result *res, const grid_key *k, grid_key *keys, int max)
{
    grid_axis ax[GRID_N_AXES];
    int v[GRID_N_AXES], n = 0;
    grid_search_axes(d, pe, ax);
    for (int c = 0, total = grid_axes_count(ax, GRID_N_AXES); c < total && n < max; c++) {
        grid_axes_pick(ax, GRID_N_AXES, c, v);
        grid_key e = *k;
        snprintf(e.pe, sizeof e.pe, "%s", graph_pe_name(pe));
        if (v[GRID_AX_FB] >= 0) snprintf(e.feedback, sizeof e.feedback, "%s", run_feedback_name(v[GRID_AX_FB]));
        if (v[GRID_AX_FBIN] >= 0)
            snprintf(e.feedback_input, sizeof e.feedback_input, "%s", run_feedback_input_name(v[GRID_AX_FBIN]));
        if (v[GRID_AX_FIT] >= 0)
            snprintf(e.search_fitness, sizeof e.search_fitness, "%s", grid_fitness_name(v[GRID_AX_FIT]));
        if (v[GRID_AX_ACC] >= 0) snprintf(e.accept, sizeof e.accept, "%s", run_accept_name(v[GRID_AX_ACC]));
        if (v[GRID_AX_TF] >= 0)
            grid_target_name(d->target_fitness[v[GRID_AX_TF]], e.target_fitness, sizeof e.target_fitness);
        if (pe == PE_GOT) {
            e.got_best = v[GRID_AX_GB] >= 0 ? v[GRID_AX_GB] : res->got_best;
            e.got_worst = v[GRID_AX_GW] >= 0 ? v[GRID_AX_GW] : res->got_worst;
        }
        keys[n++] = e;
    }
    return n;
}

/* The headings a cell's nodes are reported under: one key for a cell of
 * one search method; every search method of the grid (and every value of
 * the axes it does not depend on) for a shared zero-shot or +SA cell.  An
 * axis's value is the grid's where it sets it, else what config.json
 * says. */
static int cell_keys(const grid_def *d, const grid_cell *c, const grid_result *res, grid_key *keys, int max)
{
    grid_key k;
    memset(&k, 0, sizeof k);
    snprintf(k.model, sizeof k.model, "%s", c->model >= 0 ? grid_cell_model(d, c) : res->model);
    snprintf(k.feedback, sizeof k.feedback, "%s", res->feedback);
    snprintf(k.feedback_input, sizeof k.feedback_input, "%s", res->feedback_input);
    snprintf(k.prompts, sizeof k.prompts, "%s", c->prompts >= 0 ? grid_prompts_name(c->prompts) : res->prompts);
    snprintf(k.reward_api, sizeof k.reward_api, "%s",
             c->reward_api >= 0 ? grid_reward_api_name(c->reward_api) : res->reward_api);
    snprintf(k.search_fitness, sizeof k.search_fitness, "%s", grid_fitness_name(res->fitness_llm ? FIT_LLM : FIT_HEURISTIC));
    snprintf(k.accept, sizeof k.accept, "%s", c->accept >= 0 ? run_accept_name(c->accept) : res->accept);
    grid_target_name(c->tf >= 0 ? d->target_fitness[c->tf] : res->target_fitness, k.target_fitness,
                     sizeof k.target_fitness);
    k.got_best = k.got_worst = -1;
    if (c->pe >= 0 || c->human) {
        snprintf(k.pe, sizeof k.pe, "%s", c->human ? "human" : graph_pe_name(c->pe));
        if (c->pe == PE_GOT && !c->human) k.got_best = res->got_best, k.got_worst = res->got_worst;
        keys[0] = k;
        return 1;
    }
    int n = 0;
    for (int p = 0; p < d->n_pe; p++) n += method_keys(d, d->pe[p], res, &k, keys + n, max - n);
    return n;
}

static void note_author(grid_rows *R, const grid_result *res)
{
    R->language_model |= !res->offline;
    for (int i = 0; i < R->n_authors; i++)
        if (!strcmp(R->authors[i], res->author)) return;
    if (R->n_authors < 4) snprintf(R->authors[R->n_authors++], sizeof R->authors[0], "%s", res->author);
}

/* The cell's line in the summary's list, and the evaluation levels of its
 * run (the first started cell's count for the grid: every cell runs with
 * the same run flags). */
static int note_cell(const char *dir, const grid_cell *c, const grid_result *res, grid_rows *R)
{
    char path[2100], err[256];
    grid_cell_info ci = {.scenario = c->scenario, .repeat = c->repeat, .state = res->state,
                         .best_node = res->best_node, .best_fitness = res->best_fitness};
    snprintf(ci.name, sizeof ci.name, "%s", c->name);
    snprintf(path, sizeof path, "%s/report.html", dir);
    ci.report = access(path, F_OK) == 0;
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_t *cfg = res->state != GRID_NEW && !R->levels_read ? read_json_file(path, 1L << 20, err, sizeof err) : NULL;
    if (cfg) {
        json_t *n = json_object_get(cfg, "levels"), *s = json_object_get(cfg, "eval_seed");
        if (json_is_integer(n) && json_integer_value(n) > 0) R->n_levels = (int)json_integer_value(n);
        if (json_is_integer(s) && json_integer_value(s) >= 0) R->eval_seed = (uint64_t)json_integer_value(s);
        R->levels_read = 1;
        json_decref(cfg);
    }
    return grid_rows_add_cell(R, &ci);
}

/* The column that a cell's first node also gives, or -1: the Human row's
 * zero-shot value; a method's zero-shot (+SA) value when the grid takes
 * it from its +FB (full) cells. */
static int first_column(const grid_def *d, const grid_cell *c)
{
    if (c->human) return ABL_ZS;
    int column = c->ablation == ABL_FB ? ABL_ZS : c->ablation == ABL_FULL ? ABL_SA : -1;
    return column >= 0 && grid_column_cells(d->abl, d->n_abl, column) == c->ablation ? column : -1;
}

/* The rows of one cell.  0, or -1 (out of memory). */
static int read_cell(const char *out, const grid_def *d, const grid_cell *c, grid_rows *R)
{
    char dir[2048], err[512], path[2100];
    grid_result res;
    grid_cell_dir(out, c, dir, sizeof dir);
    grid_run_state(dir, &res);
    if (note_cell(dir, c, &res, R)) return -1;
    if (res.state == GRID_NEW) return 0;
    if (res.state == GRID_FINISHED) R->n_finished++, note_author(R, &res);
    R->n_halted += res.state != GRID_FINISHED && res.halted[0];
    R->n_gave_up += res.state == GRID_FINISHED && res.gave_up;
    res.evaluator_rules ? R->rules_on++ : R->rules_off++;
    R->fitness_llm |= res.fitness_llm;
    thought_graph g;
    snprintf(path, sizeof path, "%s/graph.json", dir);
    if (graph_load(path, &g, err, sizeof err)) return 0; /* started, nothing finished yet */
    /* every search method x feedback x input x fitness x acceptance x target x best x worst references */
    enum { MAX_HEADINGS = 3 * 3 * 2 * 2 * 2 * GRID_MAX_TARGETS * 5 * 5 };
    grid_key *keys = malloc(sizeof *keys * MAX_HEADINGS);
    if (!keys) return graph_free(&g), -1;
    int nk = cell_keys(d, c, &res, keys, MAX_HEADINGS), rc = 0, first = first_column(d, c);
    double best = NAN, lbest = NAN;
    for (int i = 0; i < g.n && !rc; i++) {
        const thought_node *nd = &g.nodes[i];
        if (nd->status == NODE_PENDING) continue;
        grid_row row;
        grid_row_blank(&row);
        read_node(dir, nd, &res, &row);
        best = isfinite(best) && !(row.fitness > best) ? best : row.fitness;
        lbest = isfinite(lbest) && !(row.llm_score > lbest) ? lbest : row.llm_score;
        row.best_so_far = best;
        row.llm_best_so_far = lbest;
        row.scenario = c->scenario;
        row.repeat = c->repeat;
        row.seed = c->seed;
        row.final = res.state == GRID_FINISHED && i == g.n - 1;
        row.evaluator_rules = res.evaluator_rules;
        snprintf(row.cell, sizeof row.cell, "%s", c->name);
        for (int k = 0; k < nk && !rc; k++) {
            row.key = keys[k];
            row.ablation = c->ablation;
            row.duplicate = k > 0;
            rc = grid_rows_add(R, &row);
            if (!rc && first >= 0 && nd->iteration == 1) {
                row.ablation = first;
                row.duplicate = 1;
                rc = grid_rows_add(R, &row);
            }
        }
    }
    graph_free(&g);
    free(keys);
    return rc;
}

int grid_human_marker(const char *path)
{
    char line[128] = "", err[64];
    int fd = open_regular(path, err, sizeof err); /* not through a link in the grid directory */
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0) close(fd);
        return GRID_HUMAN_UNMARKED;
    }
    if (!fgets(line, sizeof line, f)) line[0] = 0;
    fclose(f);
    line[strcspn(line, "\r\n")] = 0;
    for (int k = GRID_HUMAN_REFERENCE_PORT; k <= GRID_HUMAN_ENGINE_DESIGN; k++) {
        char want[64];
        snprintf(want, sizeof want, "/* pcgrllm-human: %s */", grid_human_marker_name(k));
        if (!strcmp(line, want)) return k;
    }
    return GRID_HUMAN_UNMARKED;
}

const char *grid_human_marker_name(int kind)
{
    return kind == GRID_HUMAN_REFERENCE_PORT ? "reference-port" : kind == GRID_HUMAN_ENGINE_DESIGN ? "engine-design"
                                                                                                 : NULL;
}

int grid_human_kind(const grid_rows *R, int s)
{
    if (s > 0) return s <= 4 ? R->human_kind[s] : GRID_HUMAN_UNMARKED;
    for (int i = 1; i < R->n_scen; i++)
        if (R->human_kind[R->scen[i]] != R->human_kind[R->scen[0]]) return GRID_HUMAN_UNMARKED;
    return R->human_kind[R->scen[0]];
}

int grid_rows_read(const char *out, const grid_def *d, const grid_cell *cells, int n_cells, grid_rows *R)
{
    if (grid_rows_init(R, d->scen, d->n_scen, d->repeats, d->abl, d->n_abl)) return -1;
    R->human = d->human[0] != 0;
    for (int i = 0; R->human && i < d->n_scen; i++) { /* the copy the cells read */
        char path[1200];
        snprintf(path, sizeof path, "%s/human/scenario%d.c", out, d->scen[i]);
        R->human_kind[d->scen[i]] = grid_human_marker(path);
    }
    R->n_cells = n_cells;
    for (int k = 0; k < n_cells; k++)
        if (read_cell(out, d, &cells[k], R)) return grid_rows_free(R), -1;
    return 0;
}
