/* The two authors of the loop behind one interface (run_internal.h): a
 * language model through the prompt templates, or the rule-based offline
 * baseline (host/author_offline.h), which needs no network. */
#include "author_offline.h"
#include "levelio.h"
#include "prompts.h"
#include "render.h"
#include "run_internal.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* The reward API text the prompts quote: docs/reward-api.md beside the
 * prompts directory. */
static char *reward_api_text(char *err, int errlen)
{
    char dir[2048], path[2300];
    if (prompts_dir(dir, sizeof dir, err, errlen)) return NULL;
    const char *cands[] = {"%s/../docs/reward-api.md", "%s/reward-api.md", "%s/../share/pcgrllm/reward-api.md"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, cands[i], dir);
        char *t = run_read_text(path);
        if (t) return t;
    }
    snprintf(err, (size_t)errlen, "cannot find docs/reward-api.md beside the prompts directory %s", dir);
    return NULL;
}

static char *node_code(run_state *R, int node)
{
    char path[1400];
    if (node < 0 || !R->g.nodes[node].reward_path[0]) return NULL;
    snprintf(path, sizeof path, "%s/%s", R->c->out, R->g.nodes[node].reward_path);
    return run_read_text(path);
}

/* ---------------------------------------------------------------- language model */

/* One request to the model, stored as ndir/llm/NAME.request.json and
 * NAME.reply.txt; a stored reply is reused (resume). */
static char *exchange(run_state *R, const char *ndir, const char *name, const char *tmpl, const prompt_var *vars,
                      int nvars, const void *image, size_t image_len, char *err, int errlen)
{
    char dir[1400], req_path[1600], reply_path[1600];
    snprintf(dir, sizeof dir, "%s/llm", ndir);
    snprintf(req_path, sizeof req_path, "%s/%s.request.json", dir, name);
    snprintf(reply_path, sizeof reply_path, "%s/%s.reply.txt", dir, name);
    char *stored = run_read_text(reply_path);
    if (stored) return stored;
    if (make_dirs(dir)) {
        snprintf(err, (size_t)errlen, "cannot create %s", dir);
        return NULL;
    }
    char *sys = prompt_render("system", NULL, 0, err, errlen);
    if (!sys) return NULL;
    char *user = prompt_render(tmpl, vars, nvars, err, errlen);
    if (!user) {
        free(sys);
        return NULL;
    }
    llm_message msgs[2] = {{"system", sys, NULL, 0}, {"user", user, image, image_len}};
    char *req = llm_request_json(&R->c->llm, msgs, 2, err, errlen);
    if (req) {
        run_write_text(req_path, req);
        free(req);
    }
    llm_reply rep;
    int rc = llm_chat(&R->c->llm, msgs, 2, &rep, err, errlen);
    free(sys);
    free(user);
    if (rc) return NULL;
    run_say(R, "  model reply %s: %ld+%ld tokens, %.1f s", name, rep.usage.prompt_tokens, rep.usage.completion_tokens,
            rep.seconds);
    char *text = rep.content;
    rep.content = NULL;
    llm_reply_free(&rep);
    run_write_text(reply_path, text);
    return text;
}

static char *exchange_code(run_state *R, const char *ndir, const char *name, const char *tmpl, const prompt_var *vars,
                           int nvars, char *err, int errlen)
{
    char *reply = exchange(R, ndir, name, tmpl, vars, nvars, NULL, 0, err, errlen);
    if (!reply) return NULL;
    char *code = llm_extract_code(reply, err, errlen);
    free(reply);
    return code;
}

static char *llm_generate(run_state *R, int node, const char *ndir, int trial, char *err, int errlen)
{
    const thought_node *nd = &R->g.nodes[node];
    char *api = reward_api_text(err, errlen);
    if (!api) return NULL;
    char it[16], its[16], name[64], pfit[32];
    snprintf(it, sizeof it, "%d", nd->iteration);
    snprintf(its, sizeof its, "%d", run_node_count(R->c));
    snprintf(name, sizeof name, "generate_%d", trial);
    char *code = NULL;
    if (nd->parent < 0) {
        prompt_var v[] = {{"story", R->c->story}, {"reward_api", api}, {"iteration", it}, {"iterations", its},
                          {"evaluator_rules", R->evaluator_rules}};
        code = exchange_code(R, ndir, name, "reward_init", v, 5, err, errlen);
    } else {
        char *parent = node_code(R, nd->parent);
        const char *fb = R->g.nodes[nd->parent].feedback ? R->g.nodes[nd->parent].feedback : "";
        snprintf(pfit, sizeof pfit, "%.3f", R->g.nodes[nd->parent].fitness);
        char *refs = NULL;
        if (R->c->pe == PE_GOT && nd->n_refs > 0) {
            char *codes[GRAPH_MAX_REFS] = {0};
            double fit[GRAPH_MAX_REFS];
            int kinds[GRAPH_MAX_REFS], n = 0;
            for (int k = 0; k < nd->n_refs; k++) {
                codes[n] = node_code(R, nd->refs[k]);
                fit[n] = nd->ref_fitness[k];
                kinds[n] = nd->ref_kind[k];
                if (codes[n]) n++;
            }
            refs = prompt_references((const char *const *)codes, fit, kinds, n, err, errlen);
            for (int k = 0; k < n; k++) free(codes[k]);
        } else
            refs = dupstr("");
        if (parent && refs) {
            prompt_var v[] = {{"story", R->c->story},   {"reward_api", api},  {"iteration", it},
                              {"iterations", its},      {"parent_code", parent}, {"parent_fitness", pfit},
                              {"feedback", fb},         {"references", refs},   {"evaluator_rules", R->evaluator_rules}};
            code = exchange_code(R, ndir, name, "reward_refine", v, 9, err, errlen);
        } else if (!parent)
            snprintf(err, (size_t)errlen, "the parent node's reward is missing");
        free(parent);
        free(refs);
    }
    free(api);
    return code;
}

/* ---------------------------------------------------------------- offline author */

static char *offline_code(const author_reward *r, char *err, int errlen)
{
    size_t cap = 1 << 16;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    if (author_code(r, buf, cap) < 0) {
        free(buf);
        snprintf(err, (size_t)errlen, "offline author: reward source too long");
        return NULL;
    }
    return buf;
}

static char *offline_generate(run_state *R, int node, char *err, int errlen)
{
    const thought_node *nd = &R->g.nodes[node];
    author_reward r;
    char note[512];
    if (nd->parent < 0) {
        author_initial(&R->target, &r);
        return offline_code(&r, err, errlen);
    }
    char *parent = node_code(R, nd->parent);
    if (!parent) {
        snprintf(err, (size_t)errlen, "the parent node's reward is missing");
        return NULL;
    }
    int rc = author_parse(parent, &r, err, errlen);
    free(parent);
    if (rc && run_init_node(R, nd->parent)) {
        /* it reads only rewards it wrote: a given initial reward is replaced
         * by its own initial design for the target */
        author_initial(&R->target, &r);
        run_say(R, "  offline author: cannot read the given initial reward's terms (%s); starting from its own "
                   "initial reward",
                err);
    } else if (rc)
        return NULL;
    if (R->c->pe == PE_GOT && nd->n_refs > 0) {
        /* the references lend the parent their further refined terms */
        author_reward refs[GRAPH_MAX_REFS];
        double fit[GRAPH_MAX_REFS];
        int n = 0;
        for (int k = 0; k < nd->n_refs; k++) {
            char *code = node_code(R, nd->refs[k]);
            char why[256];
            if (code && author_parse(code, &refs[n], why, sizeof why) == 0) fit[n++] = nd->ref_fitness[k];
            free(code);
        }
        author_merge(&r, R->g.nodes[nd->parent].fitness, refs, fit, n, note, sizeof note);
        run_say(R, "  offline author, references: %s", note);
    }
    /* the b-th child of a parent takes a different change than its siblings */
    int kids[GRAPH_MAX_NODES], branch = 0;
    int nk = graph_children(&R->g, nd->parent, kids, GRAPH_MAX_NODES);
    while (branch < nk && kids[branch] != node) branch++;
    const char *fb = R->g.nodes[nd->parent].feedback;
    author_refine_branch(&r, fb ? fb : "", branch, note, sizeof note);
    run_say(R, "  offline author: %s", note);
    return offline_code(&r, err, errlen);
}

/* ---------------------------------------------------------------- the interface */

char *au_generate(run_state *R, int node, const char *ndir, int trial, char *err, int errlen)
{
    return R->c->offline ? offline_generate(R, node, err, errlen) : llm_generate(R, node, ndir, trial, err, errlen);
}

char *au_fix(run_state *R, int node, const char *ndir, const char *code, const char *reason, int trial, int fix,
             char *err, int errlen)
{
    (void)node;
    if (R->c->offline) {
        /* its code comes from fixed templates: a rejection is a defect, not
         * something to negotiate */
        snprintf(err, (size_t)errlen, "the rule-based offline author does not rewrite rejected code");
        return NULL;
    }
    char *api = reward_api_text(err, errlen);
    if (!api) return NULL;
    char name[64];
    snprintf(name, sizeof name, "fix_t%d_f%d", trial, fix);
    prompt_var v[] = {{"code", code}, {"rejection", reason}, {"reward_api", api}, {"story", R->c->story}};
    char *out = exchange_code(R, ndir, name, "reward_fix", v, 4, err, errlen);
    free(api);
    return out;
}

char *au_align(run_state *R, int node, const char *ndir, const char *code, const reward_stats *st, int round,
               char *err, int errlen)
{
    (void)node;
    if (R->c->offline) {
        author_reward r;
        if (author_parse(code, &r, err, errlen)) return NULL;
        author_stats as = {st->mean, st->std, st->min, st->max, st->zero_share, st->n};
        char note[512];
        author_align(&r, &as, note, sizeof note);
        run_say(R, "  offline author, align %d: %s", round, note);
        return offline_code(&r, err, errlen);
    }
    char *api = reward_api_text(err, errlen);
    if (!api) return NULL;
    char stats[1024], r_s[16], rs_s[16], name[64];
    reward_stats_text(st, stats, sizeof stats);
    snprintf(r_s, sizeof r_s, "%d", round);
    snprintf(rs_s, sizeof rs_s, "%d", R->c->align);
    snprintf(name, sizeof name, "align_%d", round);
    prompt_var v[] = {{"story", R->c->story}, {"reward_api", api},    {"code", code},
                      {"statistics", stats},  {"align_round", r_s}, {"align_rounds", rs_s}};
    char *out = exchange_code(R, ndir, name, "self_align", v, 6, err, errlen);
    free(api);
    return out;
}

char *au_feedback(run_state *R, int node, const char *ndir, const char *code, const level_set *ls, char *err,
                  int errlen)
{
    if (R->c->offline) {
        author_reward r;
        if (author_parse(code, &r, err, errlen)) {
            if (!run_init_node(R, node)) return NULL;
            /* a given initial reward: the feedback names the term of its
             * own design that the measured failure calls for */
            author_initial(&R->target, &r);
        }
        author_metrics m;
        author_metrics_compute(&R->target, ls->levels, ls->n, &m);
        char *buf = malloc(4096);
        if (!buf) return NULL;
        author_feedback(&r, &m, buf, 4096);
        return buf;
    }
    char count[16];
    snprintf(count, sizeof count, "%d", ls->n);
    if (R->c->feedback_input == FBIN_IMAGE) {
        char png[1600];
        snprintf(png, sizeof png, "%s/levels.png", ndir);
        long len;
        char *img = read_file(png, 64L << 20, &len, err, errlen);
        if (!img) return NULL;
        prompt_var v[] = {{"story", R->c->story},
                          {"code", code},
                          {"levels", "The levels are shown in the attached image, numbered from 0, with a legend."},
                          {"level_count", count},
                          {"evaluator_rules", R->evaluator_rules}};
        char *out = exchange(R, ndir, "feedback", "feedback_specific", v, 5, img, (size_t)len, err, errlen);
        free(img);
        return out;
    }
    char *text = run_levels_text(ls->levels, ls->n);
    if (!text) return NULL;
    prompt_var v[] = {{"story", R->c->story},
                      {"code", code},
                      {"levels", text},
                      {"level_count", count},
                      {"evaluator_rules", R->evaluator_rules}};
    char *out = exchange(R, ndir, "feedback", "feedback_specific", v, 5, NULL, 0, err, errlen);
    free(text);
    return out;
}

int au_fitness(run_state *R, int node, const char *ndir, const level_set *ls, double *fitness, char *err, int errlen)
{
    (void)node;
    if (R->c->offline) {
        snprintf(err, (size_t)errlen, "--fitness llm needs a language model (--llm openai)");
        return -1;
    }
    int n = ls->n < 10 ? ls->n : 10;
    char count[16];
    snprintf(count, sizeof count, "%d", n);
    char *text = run_levels_text(ls->levels, n);
    if (!text) return -1;
    prompt_var v[] = {
        {"story", R->c->story}, {"levels", text}, {"level_count", count}, {"evaluator_rules", R->evaluator_rules}};
    char *reply = exchange(R, ndir, "fitness", "fitness_llm", v, 4, NULL, 0, err, errlen);
    free(text);
    if (!reply) return -1;
    int rc = prompt_parse_fitness(reply, fitness, err, errlen);
    free(reply);
    return rc;
}

int au_target(run_state *R, const char *dir, target_t *t, char *reason, int len)
{
    if (R->c->offline) {
        int rc = story_extract_offline(R->c->story, t, reason, len);
        return rc == STORY_OK ? 0 : 3;
    }
    prompt_var v[] = {{"story", R->c->story}};
    char *reply = exchange(R, dir, "target", "target_extraction", v, 1, NULL, 0, reason, len);
    if (!reply) return -1;
    int rc = target_from_json(reply, t, reason, len);
    free(reply);
    return rc == STORY_OK ? 0 : rc == STORY_REFUSED ? 3 : -1;
}
