/* The two authors of the loop behind one interface (author.h): a
 * language model through the prompt templates, or the rule-based offline
 * baseline (host/author/author_offline.h), which needs no network. */
#include "author_offline.h"
#include "levelio.h"
#include "prompts.h"
#include "render.h"
#include "story.h"
#include "author.h"
#include "feasible.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    char *parent = run_node_code(R, nd->parent);
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
            char *code = run_node_code(R, nd->refs[k]);
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

char *au_generate(run_state *R, int node, const char *ndir, int trial, const char *previous, char *err, int errlen)
{
    return R->c->offline ? offline_generate(R, node, err, errlen)
                         : mdl_generate(R, node, ndir, trial, previous, err, errlen);
}

char *au_fix(run_state *R, int node, const char *ndir, const char *code, const char *reason, int trial, int fix,
             char *err, int errlen)
{
    if (R->c->offline) {
        /* its code comes from fixed templates: a rejection is a defect, not
         * something to negotiate */
        snprintf(err, (size_t)errlen, "the rule-based offline author does not rewrite rejected code");
        return NULL;
    }
    return mdl_fix(R, node, ndir, code, reason, trial, fix, err, errlen);
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
    return mdl_align(R, ndir, code, st, round, err, errlen);
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
    return mdl_feedback(R, ndir, code, ls, err, errlen);
}

int au_fitness(run_state *R, int node, const char *ndir, const level_set *ls, double *fitness, char *err, int errlen)
{
    (void)node;
    if (R->c->offline) {
        snprintf(err, (size_t)errlen, "--fitness llm needs a language model (--llm openai)");
        return -1;
    }
    return mdl_fitness(R, ndir, ls, fitness, err, errlen);
}

/* A target the generator's map cannot hold is refused like a story the
 * reader refuses: before any training. */
static int refuse_infeasible(const target_t *t, char *reason, int len)
{
    target_map_t map;
    char why[400];
    target_map_default(&map, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE);
    if (target_feasible(t, &map, why, sizeof why) == 0) return 0;
    snprintf(reason, (size_t)len, "the target cannot be met: %s", why);
    return 3;
}

int au_target(run_state *R, const char *dir, target_t *t, char *reason, int len)
{
    int rc;
    if (R->c->offline) rc = story_extract_offline(R->c->story, t, reason, len) == STORY_OK ? 0 : 3;
    else rc = mdl_target(R, dir, t, reason, len);
    /* a target that drops what the story asks for is refused, whoever read it */
    if (!rc && story_check_target(R->c->story, t, reason, len)) rc = 3;
    return rc ? rc : refuse_infeasible(t, reason, len);
}
