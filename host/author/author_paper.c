/* The paper profile (prompts/paper/, `run --prompts paper`): each call
 * carries what the paper's reference implementation gives its model
 * (docs/llm.md, "Prompt profiles").  The first reward starts from the
 * empty template with no count of iterations; a refinement shows the
 * parent's code and feedback and the reasoning tips of the search (the
 * iteration, or for ToT the depth of the tree; GoT adds the previous
 * iteration's evaluation summary and the references); a code fix shows
 * the failing code and why, with the same tips; self-alignment is one
 * user message with the reward and its statistics line; feedback and the
 * judge see every level as an array of tile ids. */
#include "author_exchange.h"
#include "eval.h"
#include "levelio.h"
#include "util.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P "paper"

/* The reasoning tips of a refinement or fix of node, with n of its
 * references: CoT the iteration, ToT the depth of the tree as the
 * reference counts it, GoT the CoT tips, the previous iteration's summary
 * and the references.  malloc'd, or NULL with err. */
static char *thought_tips(run_state *R, int node, int n, char *err, int errlen)
{
    const thought_node *nd = &R->g.nodes[node];
    int k = nd->iteration, total = run_node_count(R->c);
    if (R->c->pe == PE_TOT) {
        k = (k - 1) / R->c->breadth + 1;
        total = (total - 1) / R->c->breadth + 1;
    }
    char it[16], its[16], pct[24];
    snprintf(it, sizeof it, "%d", k);
    snprintf(its, sizeof its, "%d", total);
    snprintf(pct, sizeof pct, "%.1f%%", 100.0 * k / total);
    prompt_var cv[] = {{"iteration", it}, {"iterations", its}, {"progress", pct}};
    char *cot = prompt_render(P, "thoughts_cot", cv, 3, err, errlen);
    if (!cot || R->c->pe != PE_GOT) return cot;
    /* the nodes are numbered by iteration: the previous one is node - 1 */
    char *summary = author_summary(R, node - 1, err, errlen);
    char *refs = summary ? author_references(R, node, n, err, errlen) : NULL;
    if (refs && !refs[0]) {
        free(refs);
        refs = prompt_load(P, "got_no_references", err, errlen);
    }
    char *tips = NULL;
    if (refs) {
        prompt_var gv[] = {{"thought_tips", cot}, {"summary", summary}, {"references", refs}};
        tips = prompt_render(P, "thoughts_got", gv, 3, err, errlen);
    }
    free(cot);
    free(summary);
    free(refs);
    return tips;
}

/* A refinement, or a fix (code given): GoT with as many references as fit
 * the context (all, then one fewer at a time). */
static char *with_tips(run_state *R, int node, const char *ndir, exchange_t *x, prompt_var *v, int tips_slot,
                       char *err, int errlen)
{
    int n = R->c->pe == PE_GOT ? R->g.nodes[node].n_refs : 0;
    for (;; n--) {
        char *tips = thought_tips(R, node, n, err, errlen);
        if (!tips) return NULL;
        v[tips_slot].value = tips;
        char why[700];
        if (n > 0 && !au_exchange_fits(R, x, why, sizeof why)) {
            run_say(R, "  the prompt with %d reference%s does not fit the context; trying %d", n, n == 1 ? "" : "s",
                    n - 1);
            free(tips);
            continue;
        }
        char *code = au_exchange_code(R, ndir, x, err, errlen);
        free(tips);
        return code;
    }
}

char *pap_generate(run_state *R, int node, const char *ndir, int trial, char *err, int errlen)
{
    const thought_node *nd = &R->g.nodes[node];
    char *api = author_reward_api(R, err, errlen);
    if (!api) return NULL;
    char name[64];
    snprintf(name, sizeof name, "generate_%d", trial);
    /* a later trial is the same request again under another seed, as the reference asks */
    exchange_t x = {name, "system", "reward_init", NULL, 0, NULL, 0, &au_task_code, NULL, trial};
    char *code = NULL;
    if (nd->parent < 0) {
        prompt_var v[] = {{"story", R->c->story}, {"reward_api", api}, {"evaluator_rules", R->evaluator_rules}};
        x.vars = v, x.nvars = 3;
        code = au_exchange_code(R, ndir, &x, err, errlen);
        free(api);
        return code;
    }
    char *parent = run_node_code(R, nd->parent);
    const char *fb = R->g.nodes[nd->parent].feedback ? R->g.nodes[nd->parent].feedback : "";
    if (parent) {
        prompt_var v[] = {{"story", R->c->story}, {"reward_api", api},  {"parent_code", parent},
                          {"feedback", fb},       {"thought_tips", ""}, {"evaluator_rules", R->evaluator_rules}};
        x.tmpl = "reward_refine", x.vars = v, x.nvars = 6;
        code = with_tips(R, node, ndir, &x, v, 4, err, errlen);
    } else
        snprintf(err, (size_t)errlen, "the parent node's reward is missing");
    free(parent);
    free(api);
    return code;
}

/* The statistics line of self-alignment, as the reference prints it. */
static char *statistics_line(const reward_stats *st, char *err, int errlen)
{
    char mean[32], std[32], zero[32];
    snprintf(mean, sizeof mean, "%.6f", st->mean);
    snprintf(std, sizeof std, "%.6f", st->std);
    snprintf(zero, sizeof zero, "%.4f", 100.0 * st->zero_share);
    prompt_var v[] = {{"mean", mean}, {"std", std}, {"zero_percent", zero}};
    return prompt_render(P, "statistics_line", v, 3, err, errlen);
}

/* One self-alignment request: code with its statistics, and the fix
 * request (fix_request, "" for none). */
static char *align_request(run_state *R, const char *ndir, const char *name, const char *code,
                           const reward_stats *st, const char *fix_request, char *err, int errlen)
{
    char *stats = statistics_line(st, err, errlen);
    if (!stats) return NULL;
    prompt_var v[] = {{"code", code}, {"statistics", stats}, {"fix_request", fix_request}};
    exchange_t x = {name, NULL, "self_align", v, 3, NULL, 0, &au_task_code, NULL, 1};
    char *out = au_exchange_code(R, ndir, &x, err, errlen);
    free(stats);
    return out;
}

char *pap_align(run_state *R, const char *ndir, const char *code, const reward_stats *st, int round, char *err,
                int errlen)
{
    char name[64];
    snprintf(name, sizeof name, "align_%d", round);
    return align_request(R, ndir, name, code, st, "", err, errlen);
}

/* The reward of a node before self-alignment round `round`, and its
 * statistics, from the node directory.  The code (malloc'd), or NULL. */
static char *before_round(const char *ndir, int round, reward_stats *st, char *err, int errlen)
{
    char c_path[1400], j_path[1400];
    if (round <= 1) {
        snprintf(c_path, sizeof c_path, "%s/reward_gen.c", ndir);
        snprintf(j_path, sizeof j_path, "%s/reward_gen.json", ndir);
    } else {
        snprintf(c_path, sizeof c_path, "%s/align_%d.c", ndir, round - 1);
        snprintf(j_path, sizeof j_path, "%s/align_%d.json", ndir, round - 1);
    }
    char why[1500];
    json_t *j = read_json_file(j_path, 1L << 20, why, sizeof why);
    json_t *s = json_object_get(j, "stats");
    char *code = json_is_object(s) ? run_read_text(c_path) : NULL;
    if (code) {
        memset(st, 0, sizeof *st);
        st->mean = json_number_value(json_object_get(s, "mean"));
        st->std = json_number_value(json_object_get(s, "std"));
        st->zero_share = json_number_value(json_object_get(s, "zero_share"));
    } else
        snprintf(err, (size_t)errlen, "cannot read the reward before self-alignment round %d in %.1200s", round, ndir);
    json_decref(j);
    return code;
}

char *pap_fix(run_state *R, int node, const char *ndir, const char *code, const char *reason, int trial, int fix,
              char *err, int errlen)
{
    char name[64];
    snprintf(name, sizeof name, "fix_t%d_f%d", trial, fix);
    if (trial > AU_ALIGN_TRIAL) {
        /* the reference asks again for the round, with the reward before
         * it and its statistics, and the rejected revision with why */
        reward_stats st;
        char *before = before_round(ndir, trial - AU_ALIGN_TRIAL, &st, err, errlen);
        if (!before) return NULL;
        prompt_var fv[] = {{"code", code}, {"rejection", reason}};
        char *request = prompt_render(P, "align_fix", fv, 2, err, errlen);
        char *out = request ? align_request(R, ndir, name, before, &st, request, err, errlen) : NULL;
        free(request);
        free(before);
        return out;
    }
    char *api = author_reward_api(R, err, errlen);
    if (!api) return NULL;
    prompt_var v[] = {{"story", R->c->story}, {"reward_api", api},   {"code", code},
                      {"rejection", reason},  {"thought_tips", ""}, {"evaluator_rules", R->evaluator_rules}};
    exchange_t x = {name, "system", "reward_fix", v, 6, NULL, 0, &au_task_code, NULL, 1};
    char *out = with_tips(R, node, ndir, &x, v, 4, err, errlen);
    free(api);
    return out;
}

/* The first n levels as arrays of tile ids, one row a line, each headed by
 * its number (level_array.txt). */
static char *levels_as_arrays(run_state *R, const level_set *ls, int n)
{
    char err[256];
    char *item = prompt_load(P, "level_array", err, sizeof err);
    if (!item) return NULL;
    size_t cap = 64 + (size_t)PCG_MAX_CELLS * 2 + 4 * PCG_MAX_SIDE, len = 0;
    char *tiles = malloc(cap), *all = calloc(1, 1);
    for (int i = 0; i < n && tiles && all; i++) {
        const level_t *l = &ls->levels[i];
        size_t k = 0;
        for (int r = 0; r < l->h; r++) {
            k += (size_t)snprintf(tiles + k, cap - k, "%s[", r ? " " : "[");
            for (int c = 0; c < l->w; c++)
                k += (size_t)snprintf(tiles + k, cap - k, c ? " %d" : "%d", l->t[r * l->w + c]);
            k += (size_t)snprintf(tiles + k, cap - k, "]%s", r + 1 < l->h ? "\n" : "]");
        }
        char num[16];
        snprintf(num, sizeof num, "%d", i + 1);
        prompt_var v[] = {{"number", num}, {"tiles", tiles}};
        char *one = prompt_fill(item, "paper/level_array", v, 2, err, sizeof err);
        size_t ol = one ? strlen(one) : 0;
        char *grown = one ? realloc(all, len + ol + 2) : NULL;
        if (grown) {
            all = grown;
            if (i) all[len++] = '\n';
            memcpy(all + len, one, ol + 1);
            len += ol;
        } else
            free(all), all = NULL;
        free(one);
    }
    (void)R;
    free(item);
    free(tiles);
    return all;
}

/* The story's important tiles by name, as a list: "[BAT, SCORPION]". */
static void important_tiles(const run_state *R, char *buf, size_t len)
{
    int tiles[EVAL_N_ENEMIES], n = eval_important_tiles(&R->esc, tiles);
    size_t k = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < n && k < len; i++) k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "", tile_name(tiles[i]));
    if (k < len) snprintf(buf + k, len - k, "]");
}

char *pap_feedback(run_state *R, const char *ndir, const char *code, const level_set *ls, char *err, int errlen)
{
    char imp[128];
    important_tiles(R, imp, sizeof imp);
    char *tiles = author_tile_enum(R, err, errlen);
    if (!tiles) return NULL;
    prompt_var v[] = {{"story", R->c->story}, {"important_tiles", imp}, {"code", code},
                      {"tile_enum", tiles},   {"levels", NULL},         {"evaluator_rules", R->evaluator_rules}};
    exchange_t x = {"feedback", "feedback_system", "feedback_specific", v, 6, NULL, 0, &au_task_feedback, NULL, 1};
    char *out = NULL;
    if (R->c->feedback_input != FBIN_IMAGE) {
        out = au_exchange_levels(R, ndir, &x, v, 4, -1, ls, levels_as_arrays, err, errlen);
    } else {
        char png[1600];
        snprintf(png, sizeof png, "%s/levels.png", ndir);
        long len;
        char *img = read_file(png, 64L << 20, &len, err, errlen);
        char *in_image = img ? prompt_load(P, "levels_in_image", err, errlen) : NULL;
        if (in_image) {
            v[4].value = in_image;
            x.image = img, x.image_len = (size_t)len;
            out = au_exchange(R, ndir, &x, err, errlen);
        }
        free(in_image);
        free(img);
    }
    free(tiles);
    return out;
}

int pap_fitness(run_state *R, const char *ndir, const level_set *ls, double *fitness, char *err, int errlen)
{
    char *tiles = author_tile_enum(R, err, errlen);
    if (!tiles) return -1;
    prompt_var v[] = {{"story", R->c->story}, {"tile_enum", tiles}, {"levels", NULL},
                      {"evaluator_rules", R->evaluator_rules}};
    exchange_t x = {"fitness", NULL, "fitness_llm", v, 4, NULL, 0, &au_task_judge, NULL, 1};
    char *reply = au_exchange_levels(R, ndir, &x, v, 2, -1, ls, levels_as_arrays, err, errlen);
    free(tiles);
    if (!reply) return -1;
    int rc = prompt_parse_fitness(reply, fitness, err, errlen);
    free(reply);
    return rc;
}
