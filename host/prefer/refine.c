/* Persona-directed refinement: the pipeline (refine.h). */
#include "refine_internal.h"
#include "author_experience.h"
#include "judge_offline.h"
#include "prefer_fit.h"
#include "reward_jit.h"
#include "run.h"
#include "run_refine.h"
#include "util.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void say(refine_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(refine_ctx *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay_and_log(x->log, 0, fmt, ap);
    va_end(ap);
}

/* The persona's model from the observations: its own separate ridge fit. */
static int fit_model(refine_ctx *x, char *err, int errlen)
{
    pref_data d;
    int skipped, p = -1;
    if (pref_read(x->o->observations, x->o->n_observations, &d, &skipped, err, errlen)) return -1;
    for (int k = 0; k < d.n_personas; k++)
        if (!strcmp(d.personas[k], x->o->persona)) p = k;
    int rc = p < 0 ? -1 : pref_fit_persona(&d, p, x->o->lambda, &x->model);
    if (rc) say_to(err, errlen, "the observations hold too few ratings by %s to fit its model", x->o->persona);
    pref_free(&d);
    return rc;
}

/* PREFER's ranking of every dimension with room to move; the offline
 * author steers only those it has a lever for, so it takes the first
 * --targets of those (a model author the first --targets of all). */
static void select_targets(refine_ctx *x)
{
    refine_target all[PREFER_N_DIMS];
    int n = refine_select(&x->model, x->before.x, all, PREFER_N_DIMS), sign;
    x->n_targets = 0;
    for (int i = 0; i < n && x->n_targets < x->o->max_targets; i++)
        if (x->o->author_model || author_experience_lever(dim_id(all[i].dim), &sign) >= 0)
            x->targets[x->n_targets++] = all[i];
}

/* The node's reward, as the sandbox takes it (REWARD_MAX_SOURCE at most). */
static int read_reward(refine_ctx *x, char *err, int errlen)
{
    char path[1400], why[1200];
    long len;
    snprintf(path, sizeof path, "%s/nodes/%03d/reward.c", x->o->run, x->node);
    if (!(x->code = read_file(path, REWARD_MAX_SOURCE, &len, why, sizeof why)))
        return say_to(err, errlen, "node %d's reward: %s", x->node, why), -1;
    if ((size_t)len != strlen(x->code)) return say_to(err, errlen, "%s holds a NUL byte: not C source", path), -1;
    return 0;
}

/* RUN/prefer/PERSONA for this refinement: a finished one there (its
 * refine.json) is refused unless --restart, which moves whatever is there
 * aside (aside says where) rather than mixing it with the new one. */
static int persona_dir(refine_ctx *x, char *aside, int alen, char *err, int errlen)
{
    char path[1400];
    snprintf(x->dir, sizeof x->dir, "%s/prefer/%s", x->o->run, x->o->persona);
    snprintf(path, sizeof path, "%s/refine.json", x->dir);
    aside[0] = 0;
    if (!x->o->restart && path_present(path))
        return say_to(err, errlen,
                      "%s holds a finished refinement (refine.json); --restart keeps it beside as %s.N and starts "
                      "over",
                      x->dir, x->dir),
               -1;
    if (x->o->restart && refine_set_aside(x->dir, aside, alen, err, errlen) < 0) return -1;
    if (make_dirs_msg(x->dir, err, errlen)) return -1;
    snprintf(path, sizeof path, "%s/refine.log", x->dir);
    if (!(x->log = open_append(path, err, errlen))) return -1;
    x->R.log = x->log;
    return 0;
}

/* The run, its node, the persona and its model, the node's profile. */
static int setup(refine_ctx *x, char *err, int errlen)
{
    const refine_opts *o = x->o;
    char path[1400], why[1200], aside[1300];
    if (run_refine_open(&x->R, &x->c, &x->g, o->run, &o->llm, !o->author_model, NULL, err, errlen)) return -1;
    x->node = o->node >= 0 ? o->node : graph_best(&x->g);
    if (x->node < 0) return say_to(err, errlen, "%s has no finished node to refine", o->run), -1;
    if (x->node >= x->g.n || x->g.nodes[x->node].status != NODE_OK)
        return say_to(err, errlen, "%s has no finished node %d", o->run, x->node), -1;
    if (read_reward(x, err, errlen)) return -1;
    snprintf(path, sizeof path, "%s/nodes/%03d/levels", o->run, x->node);
    if (!(x->levels = malloc(sizeof *x->levels))) return say_to(err, errlen, "out of memory"), -1;
    if (run_load_levels(path, x->c.n_levels, x->levels, why, sizeof why))
        return say_to(err, errlen, "node %d's levels: %s", x->node, why), -1;
    eval_levels(&x->R.esc, x->levels->levels, x->levels->n, x->levels->per, &x->levels->sum);
    x->fitness = x->levels->sum.fitness;
    int usage;
    if (!(x->persona_text = persona_load(o->persona, &usage, err, errlen))) return -1;
    x->persona = persona_index(o->persona);
    if (!o->judge_model && x->persona < 0)
        return say_to(err, errlen, "the offline judge rates only its five personas, not '%s'", o->persona), -1;
    if (fit_model(x, err, errlen)) return -1;
    /* at most this many trainings; asked before anything is written */
    if (run_refine_cost(&x->R, o->max_targets + o->feedback, o->yes)) return x->refused = 1, -1;
    if (persona_dir(x, aside, sizeof aside, err, errlen)) return -1;
    if (aside[0]) say(x, "the earlier refinement for %s is kept in %s", o->persona, aside);
    snprintf(path, sizeof path, "%s/original", x->dir);
    int rc = refine_profile_levels(o, x->persona, x->persona_text, x->levels, path, &x->before, why, sizeof why);
    if (rc == REFINE_SERVER_FAILED) x->server_failed = 1;
    if (rc) return say_to(err, errlen, "node %d's plays: %s", x->node, why), -1;
    select_targets(x);
    return 0;
}

/* Before training: the contracts, then the sandbox.  0 to train. */
static int check_candidate(refine_ctx *x, refine_candidate *k)
{
    char why[700];
    int rc = contract_check(x->code, k->code, x->R.esc.variant, dim_id(k->t.dim), k->t.direction, &k->contract,
                            why, sizeof why);
    k->contract_ran = rc == 0;
    if (rc == -2) x->parent_failed = 1;
    if (rc < 0) return k->verdict = CAND_SANDBOX, say_to(k->why, sizeof k->why, "%s", why), -1;
    if (rc == 0 && k->contract.held < k->contract.pairs) {
        k->verdict = CAND_CONTRACT;
        say_to(k->why, sizeof k->why, "held on %d of %d contract pairs", k->contract.held, k->contract.pairs);
        return -1;
    }
    reward_stats st;
    if (reward_validate(k->code, x->R.esc.variant, x->c.check_envs, 1, 30, &st, why, sizeof why)) {
        k->verdict = CAND_SANDBOX;
        say_to(k->why, sizeof k->why, "%s", why);
        return -1;
    }
    return 0;
}

/* An earlier candidate trained on the same reward (two dimensions may
 * share a lever): its levels and plays stand for this one's too. */
static const refine_candidate *same_reward(const refine_ctx *x, const refine_candidate *k)
{
    for (const refine_candidate *e = x->cand; e < k; e++)
        if (e->trained && e->code && !strcmp(e->code, k->code)) return e;
    return NULL;
}

/* One candidate: revise, check, train, generate, play, judge, gate. */
static void run_candidate(refine_ctx *x, refine_candidate *k, const char *parent_code, const char *evidence)
{
    char err[1500], path[1400];
    k->code = refine_revise(x, k, parent_code, evidence);
    say(x, "  %s %s: %s", k->t.direction > 0 ? "raise" : "lower", dim_id(k->t.dim), k->note);
    if (k->aside[0]) say(x, "    an earlier attempt with another revision is kept in %s", k->aside);
    if (k->reused) say(x, "    an earlier attempt's training of this same revision is reused");
    if (!k->code) {
        if (!k->verdict && x->server_failed) /* the server's failure, not a verdict on the author */
            k->verdict = CAND_FAILED, say_to(k->why, sizeof k->why, "the author's model server failed");
        if (!k->verdict) k->verdict = CAND_NO_REVISION;
        return;
    }
    snprintf(path, sizeof path, "%s/reward.c", k->dir);
    if (write_file_atomic_msg(path, k->code, strlen(k->code), err, sizeof err) || check_candidate(x, k)) {
        if (!k->verdict) k->verdict = CAND_FAILED, say_to(k->why, sizeof k->why, "%s", err);
        return;
    }
    const refine_candidate *twin = same_reward(x, k);
    if (twin) {
        k->fitness = twin->fitness;
        k->prof = twin->prof;
        k->trained = 1;
        snprintf(k->why, sizeof k->why, "the same reward as %s: its training and plays are reused",
                 twin->dir + strlen(x->dir) + 1);
        k->verdict = refine_gate(&x->model, &k->t, x->before.x, k->prof.x, x->fitness, k->fitness, &k->gain);
        return;
    }
    level_set *ls = malloc(sizeof *ls);
    int rc = !ls ? -1 : run_refine_candidate(&x->R, x->node, k->dir, ls, &k->fitness, err, sizeof err) ? -1
                      : refine_profile_levels(x->o, x->persona, x->persona_text, ls, k->dir, &k->prof, err, sizeof err);
    free(ls);
    if (rc) {
        if (rc == REFINE_SERVER_FAILED) x->server_failed = 1;
        k->verdict = CAND_FAILED;
        say_to(k->why, sizeof k->why, "%s", ls ? err : "out of memory");
        return;
    }
    k->trained = 1;
    k->verdict = refine_gate(&x->model, &k->t, x->before.x, k->prof.x, x->fitness, k->fitness, &k->gain);
}

static void say_candidate(refine_ctx *x, const refine_candidate *k)
{
    if (k->trained)
        say(x, "    %s %.2f -> %.2f, predicted preference %+.3f, rating %.2f -> %.2f, fitness %.3f -> %.3f: %s",
            dim_id(k->t.dim), x->before.x[k->t.dim], k->prof.x[k->t.dim], k->gain, x->before.rating, k->prof.rating,
            x->fitness, k->fitness, refine_candidate_verdict(k->verdict));
    else
        say(x, "    %s%s%s", refine_candidate_verdict(k->verdict), k->why[0] ? ": " : "", k->why);
}

/* The feedback round: the best rejected candidate that was trained, revised
 * once more with what it showed. */
static void feedback_round(refine_ctx *x)
{
    int best = -1;
    for (int i = 0; i < x->n_cand; i++)
        if (x->cand[i].trained && !isnan(x->cand[i].gain) && (best < 0 || x->cand[i].gain > x->cand[best].gain))
            best = i;
    if (best < 0) return say(x, "no trained candidate to give feedback on");
    const refine_candidate *b = &x->cand[best];
    /* the revision itself is the prompt's reward, whole: repeated here it
     * would be cut to the evidence's length */
    char evidence[900];
    snprintf(evidence, sizeof evidence,
             "The previous revision (the reward below) was trained and played: %s went from %.2f to %.2f (it must "
             "move by at least %.2f the intended way), the persona's predicted preference changed by %+.3f, and "
             "the story's fitness went from %.3f to %.3f. It was not kept: %s.",
             dim_id(b->t.dim), x->before.x[b->t.dim], b->prof.x[b->t.dim], REFINE_EPSILON, b->gain, x->fitness,
             b->fitness, refine_candidate_verdict(b->verdict));
    refine_candidate *k = &x->cand[x->n_cand++];
    memset(k, 0, sizeof *k);
    k->t = b->t;
    k->round = 1;
    snprintf(k->dir, sizeof k->dir, "%s/feedback", x->dir);
    say(x, "feedback round on candidate %d", best + 1);
    run_candidate(x, k, b->code, evidence);
    say_candidate(x, k);
    if (k->verdict == REFINE_ACCEPT) x->accepted = x->n_cand - 1;
}

static void refine_free(refine_ctx *x)
{
    for (int i = 0; i < x->n_cand; i++) free(x->cand[i].code);
    free(x->code);
    free(x->persona_text);
    free(x->levels);
    graph_free(&x->g);
    if (x->log) fclose(x->log);
}

int refine_run(const refine_opts *o)
{
    refine_ctx *x = calloc(1, sizeof *x);
    char err[2000];
    if (!x) return die_msg("prefer refine: out of memory"), 1;
    x->o = o;
    x->accepted = -1;
    if (setup(x, err, sizeof err)) {
        if (!x->refused) die_msg("prefer refine: %s", err);
        int rc = x->server_failed ? 4 : 1;
        refine_free(x);
        free(x);
        return rc;
    }
    say(x, "refining node %d of %s for %s (fitness %.3f, %d plays, mean rating %.2f); %d target%s", x->node, o->run,
        o->persona, x->fitness, x->before.plays, x->before.rating, x->n_targets, x->n_targets == 1 ? "" : "s");
    for (int i = 0; i < x->n_targets && x->accepted < 0 && !x->server_failed && !x->parent_failed; i++) {
        refine_candidate *k = &x->cand[x->n_cand++];
        k->t = x->targets[i];
        snprintf(k->dir, sizeof k->dir, "%s/candidate_%d", x->dir, i + 1);
        run_candidate(x, k, x->code, NULL);
        say_candidate(x, k);
        if (k->verdict == REFINE_ACCEPT) x->accepted = i;
    }
    if (x->accepted < 0 && o->feedback && !x->server_failed && !x->parent_failed && x->n_targets > 0)
        feedback_round(x);
    int rc = refine_write_record(x, err, sizeof err) ? (die_msg("prefer refine: %s", err), 1) : 0;
    if (x->parent_failed) /* every other candidate would fail the same way */
        die_msg("prefer refine: node %d: %s", x->node, x->cand[x->n_cand - 1].why), rc = 1;
    if (!rc) refine_print(x);
    /* the run's report shows the refinement beside its nodes */
    if (!rc && run_report(o->run, 1, 1) == 0) printf("report: %s/report.html\n", o->run);
    if (x->server_failed) rc = 4;
    refine_free(x);
    free(x);
    return rc;
}
