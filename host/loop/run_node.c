/* One thought node of the loop, step by step: the reward (generated or
 * refined, checked in the sandbox, fixed), its self-alignment, training,
 * levels, fitness and feedback.  Each step leaves its files in the node
 * directory and is skipped when they are there, so a resumed node goes on
 * from the step it had reached.  See loop_internal.h. */
#include "loop_internal.h"
#include "author.h"
#include "prompts.h"
#include "render.h"
#include "reward_jit.h"
#include "util.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- levels */

json_t *run_eval_json(const run_state *R, const level_set *ls)
{
    static const char *const enemy[3] = {"BAT", "SCORPION", "SPIDER"};
    json_t *o = json_object();
    json_object_set_new(o, "fitness", json_real(ls->sum.fitness));
    json_object_set_new(o, "diversity", json_real(ls->sum.diversity));
    json_object_set_new(o, "playable_share", json_real(ls->sum.playable_share));
    json_object_set_new(o, "playable_wall_share", json_real(ls->sum.playable_wall_share));
    json_object_set_new(o, "mean_solutions", json_real(ls->sum.mean_solutions));
    json_object_set_new(o, "n_valid", json_integer(ls->sum.n_valid));
    json_object_set_new(o, "aspao", ls->sum.n_valid ? json_real(ls->sum.aspao) : json_null());
    json_object_set_new(o, "utr", json_real(ls->sum.utr));
    json_object_set_new(o, "vutr", json_real(ls->sum.vutr));
    json_object_set_new(o, "mean_entropy", json_real(ls->sum.mean_entropy));
    json_object_set_new(o, "diversity_share", json_real(ls->sum.diversity_share));
    /* the reference implementation's summary, which GoT prompts show (a resumed run reads it here) */
    json_object_set_new(o, "solvability", json_real(ls->sum.solvability));
    json_object_set_new(o, "important_reachable", json_real(ls->sum.important_reachable));
    json_t *arr = json_array();
    for (int i = 0; i < ls->n; i++) {
        const eval_level_t *m = &ls->per[i];
        json_t *l = json_object();
        char f[32];
        snprintf(f, sizeof f, "level_%03d.txt", i);
        json_object_set_new(l, "file", json_string(f));
        json_object_set_new(l, "score", json_real(m->score));
        json_object_set_new(l, "solutions", json_integer(m->solutions));
        json_object_set_new(l, "playable", json_boolean(m->playable));
        if (R->esc.kind == EVAL_PATHLENGTH) json_object_set_new(l, "route", json_integer(m->route));
        if (R->esc.kind == EVAL_ENCOUNTER) {
            json_t *met = json_object();
            for (int e = 0; e < 3; e++) json_object_set_new(met, enemy[e], json_boolean(m->met[e]));
            json_object_set_new(l, "met", met);
        }
        json_array_append_new(arr, l);
    }
    json_object_set_new(o, "levels", arr);
    return o;
}

/* ---------------------------------------------------------------- checks */

static json_t *check_json(int accepted, const char *reason, const reward_stats *st)
{
    json_t *o = json_object();
    json_object_set_new(o, "accepted", json_boolean(accepted));
    if (!accepted) json_object_set_new(o, "reason", json_string(reason));
    if (accepted) {
        json_t *s = json_object();
        json_object_set_new(s, "mean", json_real(st->mean));
        json_object_set_new(s, "std", json_real(st->std));
        json_object_set_new(s, "min", json_real(st->min));
        json_object_set_new(s, "max", json_real(st->max));
        json_object_set_new(s, "zero_share", json_real(st->zero_share));
        json_object_set_new(s, "us_per_call", json_real(st->us_per_call));
        json_object_set_new(s, "n", json_integer(st->n));
        json_object_set_new(o, "stats", s);
        char warning[512];
        if (reward_stats_warning(st, warning, sizeof warning)) json_object_set_new(o, "warning", json_string(warning));
    }
    return o;
}

/* Sandboxed check of code; writes NAME.c and NAME.json in ndir. */
static int check_reward(run_state *R, const char *ndir, const char *name, const char *code, reward_stats *st,
                        char *reason, int len)
{
    char path[2048];
    run_path(path, sizeof path, ndir, "%s.c", name);
    run_write_text(path, code);
    /* a run that may train on the GPU also needs the reward to compile with NVRTC */
    int gpu = strcmp(R->c->backend, "cpu") != 0, gpu_checked = 0;
    int rc = reward_validate_both(code, R->esc.variant, R->c->check_envs, R->c->seed + 1, R->c->check_timeout, gpu, st,
                                  &gpu_checked, reason, len);
    /* for the run's summary: how far the rewards got */
    char why[256];
    char warning[512];
    if (rc == 0 && reward_stats_warning(st, warning, sizeof warning)) run_say(R, "  warning: %s", warning);
    if (rc == 0) R->tally.validated++, R->tally.compiled++;
    else if (reward_check_compile_cpu(code, R->c->check_timeout, why, sizeof why) == 0) R->tally.compiled++;
    run_path(path, sizeof path, ndir, "%s.json", name);
    run_write_json(path, check_json(rc == 0, reason, st));
    return rc;
}

static int read_stats(const char *path, reward_stats *st)
{
    char err[1200];
    json_t *j = read_json_file(path, 1L << 20, err, sizeof err);
    json_t *s = json_object_get(j, "stats");
    if (!json_is_object(s)) {
        json_decref(j);
        return -1;
    }
    st->mean = json_number_value(json_object_get(s, "mean"));
    st->std = json_number_value(json_object_get(s, "std"));
    st->min = json_number_value(json_object_get(s, "min"));
    st->max = json_number_value(json_object_get(s, "max"));
    st->zero_share = json_number_value(json_object_get(s, "zero_share"));
    st->us_per_call = json_number_value(json_object_get(s, "us_per_call"));
    st->n = (long)json_integer_value(json_object_get(s, "n"));
    json_decref(j);
    return 0;
}

/* ---------------------------------------------------------------- node steps */

/* Step 1 of the node that trains the --init-reward reward: the run's copy
 * (DIR/init_reward.c) must pass the sandbox as it is; nobody fixes it. */
static int step_init_reward(run_state *R, const char *ndir, const char *gen_path, char *reason, int len)
{
    char path[1200], why[1024];
    snprintf(path, sizeof path, "%s/init_reward.c", R->c->out);
    char *code = run_read_text(path);
    if (!code) return snprintf(reason, (size_t)len, "cannot read the initial reward %.1000s", path), -1;
    reward_stats st;
    int rc = check_reward(R, ndir, "reward_init", code, &st, why, sizeof why);
    if (rc) {
        snprintf(reason, (size_t)len, "the initial reward (--init-reward %.300s) was rejected: %s", R->c->init_reward,
                 why);
    } else {
        run_say(R, "  initial reward accepted: mean %.4g std %.4g zero share %.2f, %.1f us/call", st.mean, st.std,
                st.zero_share, st.us_per_call);
        char sp[2048];
        run_path(sp, sizeof sp, ndir, "reward_gen.json");
        run_write_json(sp, check_json(1, "", &st));
        rc = run_write_text(gen_path, code);
    }
    free(code);
    return rc ? -1 : 0;
}

/* Step 1: a valid reward, within trials x (1 + fixes) attempts.  Writes
 * ndir/reward_gen.c.  0, or -1 with the last rejection in reason. */
static int step_generate(run_state *R, int id, const char *ndir, char *reason, int len)
{
    char path[2048], err[1024], name[64];
    run_path(path, sizeof path, ndir, "reward_gen.c");
    if (path_present(path)) return 0;
    if (run_init_node(R, id)) return step_init_reward(R, ndir, path, reason, len);
    for (int trial = 0; trial < R->c->trials; trial++) {
        char *code = au_generate(R, id, ndir, trial + 1, trial ? reason : NULL, err, sizeof err);
        if (R->halted[0]) return free(code), RUN_FATAL;
        if (!code) {
            snprintf(reason, (size_t)len, "author: %s", err);
            run_say(R, "  trial %d: %s", trial + 1, reason);
            continue;
        }
        for (int fix = 0;; fix++) {
            reward_stats st;
            snprintf(name, sizeof name, "reward_t%d_f%d", trial + 1, fix);
            if (check_reward(R, ndir, name, code, &st, reason, len) == 0) {
                run_say(R, "  reward accepted (trial %d, fix %d): mean %.4g std %.4g zero share %.2f, %.1f us/call",
                        trial + 1, fix, st.mean, st.std, st.zero_share, st.us_per_call);
                char sp[2048];
                run_path(sp, sizeof sp, ndir, "reward_gen.json");
                run_write_json(sp, check_json(1, "", &st));
                int rc = run_write_text(path, code);
                free(code);
                return rc;
            }
            run_say(R, "  trial %d fix %d rejected: %s", trial + 1, fix, reason);
            if (fix >= R->c->fixes) break;
            char *fixed = au_fix(R, id, ndir, code, reason, trial + 1, fix + 1, err, sizeof err);
            free(code);
            code = fixed;
            if (R->halted[0]) return free(code), RUN_FATAL;
            if (!code) {
                snprintf(reason, (size_t)len, "author: %s", err);
                break;
            }
        }
        free(code);
    }
    return -1;
}

/* Step 2: self-alignment rounds.  Writes align_K.c/.json and reward.c. */
static int step_align(run_state *R, int id, const char *ndir, char *reason, int len)
{
    char path[2048], final_path[2048], err[1024], name[64];
    run_path(final_path, sizeof final_path, ndir, "reward.c");
    if (path_present(final_path)) return 0;
    run_path(path, sizeof path, ndir, "reward_gen.c");
    char *code = run_read_text(path);
    if (!code) return snprintf(reason, (size_t)len, "cannot read %.1000s", path), -1;
    /* the --init-reward node trains the given reward as it is */
    int rounds = (R->c->ablation == ABL_SA || R->c->ablation == ABL_FULL) && !run_init_node(R, id) ? R->c->align : 0;
    for (int k = 1; k <= rounds; k++) {
        run_path(path, sizeof path, ndir, "align_%d.c", k);
        if (path_present(path)) {
            free(code);
            code = run_read_text(path);
            if (!code) return snprintf(reason, (size_t)len, "cannot read %.1000s", path), -1;
            continue;
        }
        /* statistics of the current reward, from its accepted check */
        reward_stats st;
        char sp[2048];
        if (k == 1) run_path(sp, sizeof sp, ndir, "reward_gen.json");
        else run_path(sp, sizeof sp, ndir, "align_%d.json", k - 1);
        if (read_stats(sp, &st)) {
            free(code);
            return snprintf(reason, (size_t)len, "cannot read the statistics in %.1000s", sp), -1;
        }
        char *next = au_align(R, id, ndir, code, &st, k, err, sizeof err);
        if (R->halted[0]) return free(code), free(next), RUN_FATAL;
        int accepted = 0, same = next && !strcmp(next, code);
        if (same) run_say(R, "  align %d/%d: reward unchanged", k, rounds);
        for (int fix = 0; next && !same && fix <= R->c->fixes; fix++) {
            reward_stats st2;
            char why[1024];
            snprintf(name, sizeof name, "align_%d_f%d", k, fix);
            if (check_reward(R, ndir, name, next, &st2, why, sizeof why) == 0) {
                accepted = 1;
                run_say(R, "  align %d/%d: mean %.4g std %.4g zero share %.2f -> mean %.4g std %.4g zero share %.2f", k,
                        rounds, st.mean, st.std, st.zero_share, st2.mean, st2.std, st2.zero_share);
                st = st2;
                break;
            }
            run_say(R, "  align %d/%d fix %d rejected: %s", k, rounds, fix, why);
            if (fix == R->c->fixes) break;
            char *f = au_fix(R, id, ndir, next, why, AU_ALIGN_TRIAL + k, fix + 1, err, sizeof err);
            free(next);
            next = f;
            if (R->halted[0]) return free(code), free(next), RUN_FATAL;
        }
        if (!next) run_say(R, "  align %d/%d: author gave no reward (%s); keeping the previous one", k, rounds, err);
        else if (!accepted && !same)
            run_say(R, "  align %d/%d: no valid aligned reward; keeping the previous one", k, rounds);
        if (accepted) {
            free(code);
            code = next;
        } else
            free(next);
        run_path(sp, sizeof sp, ndir, "align_%d.json", k);
        run_write_json(sp, check_json(1, "", &st)); /* before the .c: the .c marks the round done */
        run_write_text(path, code);
    }
    int rc = run_write_text(final_path, code);
    free(code);
    return rc;
}

/* Step 5: fitness (heuristic evaluator, or the model's judgement). */
static int step_fitness(run_state *R, int id, const char *ndir, level_set *ls, double *fitness, char *reason,
                        int len)
{
    char dir[2048], path[2048], err[1024];
    run_path(dir, sizeof dir, ndir, "levels");
    if (run_load_levels(dir, R->c->n_levels, ls, err, sizeof err)) {
        snprintf(reason, (size_t)len, "generated levels: %s", err);
        return -1;
    }
    eval_levels(&R->esc, ls->levels, ls->n, ls->per, &ls->sum);
    run_path(path, sizeof path, ndir, "eval.json");
    if (!path_present(path) && run_write_json(path, run_eval_json(R, ls))) {
        snprintf(reason, (size_t)len, "%s", write_error());
        return -1;
    }
    run_path(path, sizeof path, ndir, "levels.png");
    if (!path_present(path)) levels_render_grid_png(ls->levels, ls->n, 6, NULL, path, 12);
    *fitness = ls->sum.fitness;
    if (R->c->fitness_mode == FIT_LLM) {
        double f;
        if (au_fitness(R, id, ndir, ls, &f, err, sizeof err)) {
            snprintf(reason, (size_t)len, "fitness judgement: %s", err);
            return R->halted[0] ? RUN_FATAL : -1;
        }
        run_say(R, "  fitness (model's judgement) %.3f; heuristic %.3f", f, ls->sum.fitness);
        *fitness = f;
    }
    return 0;
}

/* Step 6: feedback on the levels (specific), or the fixed texts. */
static char *step_feedback(run_state *R, int id, const char *ndir, const level_set *ls, char *reason, int len)
{
    char path[2048], err[1024];
    run_path(path, sizeof path, ndir, "feedback.txt");
    char *fb = run_read_text(path);
    if (fb) return fb;
    if (R->c->feedback == FB_SPECIFIC) {
        char code_path[2048];
        run_path(code_path, sizeof code_path, ndir, "reward.c");
        char *code = run_read_text(code_path);
        if (!code) return snprintf(reason, (size_t)len, "cannot read %.1000s", code_path), NULL;
        fb = au_feedback(R, id, ndir, code, ls, err, sizeof err);
        free(code);
    } else {
        const char *fixed = R->c->feedback == FB_GENERIC ? "feedback_generic" : "feedback_none";
        fb = prompt_load(run_prompts_name(R->c->prompts), fixed, err, sizeof err);
    }
    if (!fb) {
        snprintf(reason, (size_t)len, "feedback: %s", err);
        return NULL;
    }
    if (run_write_text(path, fb)) {
        snprintf(reason, (size_t)len, "%s", write_error());
        free(fb);
        return NULL;
    }
    return fb;
}

/* Seconds spent in each step of a node, added up over the processes that
 * worked on it (a resumed node adds to what its first attempt measured),
 * in ndir/times.json for the grid's rows.  Returns the time now, where the
 * next step's clock starts. */
static double add_step_time(const char *ndir, const char *key, double since)
{
    double now = now_seconds();
    char path[1400], err[1500];
    snprintf(path, sizeof path, "%s/times.json", ndir);
    json_t *o = path_present(path) ? read_json_file(path, 1L << 16, err, sizeof err) : NULL;
    if (!json_is_object(o)) {
        json_decref(o);
        o = json_object();
    }
    double before = json_number_value(json_object_get(o, key));
    json_object_set_new(o, key, json_real(before + (now - since)));
    run_write_json(path, o); /* a lost update costs a timing, not the run */
    return now;
}

/* The node's outcome in the graph, its files' checksums, and a line on it;
 * a failed node's reason goes into failed.txt. */
static void finish_node(run_state *R, int id, const char *ndir, int ok, double fitness, const level_set *ls,
                        const char *fb, const char *reason)
{
    thought_node *nd = &R->g.nodes[id];
    char path[1400];
    if (ok) {
        snprintf(nd->reward_path, sizeof nd->reward_path, "nodes/%03d/reward.c", id);
        graph_finish(&R->g, id, NODE_OK, fitness);
        graph_set_feedback(&R->g, id, fb);
        record_files(R, id);
        run_say(R, "  fitness %.4f (playable %d/%d, diversity %.1f)", fitness, ls->sum.n_playable, ls->n,
                ls->sum.diversity);
        if (fb) {
            int n = (int)strcspn(fb, "\n"); /* its first line; feedback.txt holds the rest */
            run_say(R, "  feedback: %.*s%s", n < 300 ? n : 300, fb, fb[n] && fb[n + 1] ? " ..." : "");
        }
    } else {
        nd->reward_path[0] = 0;
        graph_finish(&R->g, id, NODE_FAILED, 0);
        snprintf(path, sizeof path, "%s/failed.txt", ndir);
        char line[2100];
        snprintf(line, sizeof line, "%s\n", reason);
        run_write_text(path, line);
        record_files(R, id);
        run_say(R, "  node %d failed: %s", id, reason);
    }
}

/* One thought node, from whatever step it had reached.  0, or RUN_FATAL
 * (reason printed; the node stays pending for a --resume). */
int run_node(run_state *R, int id)
{
    thought_node *nd = &R->g.nodes[id];
    char ndir[1200], reason[2048];
    snprintf(ndir, sizeof ndir, "%s/nodes/%03d", R->c->out, id);
    if (make_dirs_msg(ndir, reason, sizeof reason)) {
        die_msg("run: node %d: %s", id, reason);
        return RUN_FATAL;
    }
    if (redo_damaged(R, id) < 0) return RUN_FATAL;
    double t0 = now_seconds();
    llm_usage u0 = R->usage;
    /* the node's model calls share one wall-time budget; training and level
     * generation run as subprocesses with limits of their own */
    R->c->llm.deadline = R->c->node_time > 0 ? t0 + R->c->node_time : 0;
    run_say(R, "node %d: iteration %d of %d, %s", id, nd->iteration, run_node_count(R->c),
            run_init_node(R, id) ? "the given initial reward, trained as it is"
            : nd->parent < 0     ? "from the empty template"
                                 : "refining a parent");
    /* under --accept improve the parent is not always the latest node: say why */
    if (nd->parent >= 0)
        run_say(R, "  parent node %d (fitness %.3f%s)", nd->parent, R->g.nodes[nd->parent].fitness,
                R->g.accept != GRAPH_ACCEPT_IMPROVE ? ""
                : R->g.pe == PE_COT                 ? ", the best so far"
                                                    : ", the best that improved on its parent");
    level_set *ls = calloc(1, sizeof *ls);
    double fitness = 0;
    int rc = ls ? 0 : (snprintf(reason, sizeof reason, "out of memory"), -1);
    double ts = now_seconds();
#define TIMED(key, call) if (!rc) rc = (call), ts = add_step_time(ndir, key, ts)
    TIMED("reward_s", step_generate(R, id, ndir, reason, sizeof reason));
    TIMED("align_s", step_align(R, id, ndir, reason, sizeof reason));
    TIMED("train_s", step_train(R, id, ndir, reason, sizeof reason));
    TIMED("levels_s", step_generate_levels(R, ndir, reason, sizeof reason));
    TIMED("fitness_s", step_fitness(R, id, ndir, ls, &fitness, reason, sizeof reason));
    int ok = rc == 0;
    char *fb = NULL;
    if (ok && (R->c->ablation == ABL_FB || R->c->ablation == ABL_FULL)) {
        fb = step_feedback(R, id, ndir, ls, reason, sizeof reason);
        ts = add_step_time(ndir, "feedback_s", ts);
        if (!fb) ok = 0;
    }
#undef TIMED
    if (R->halted[0]) rc = RUN_FATAL, snprintf(reason, sizeof reason, "%s", R->halted);
    if (rc == RUN_FATAL) {
        /* the node stays pending: a --resume continues it */
        run_say(R, "  stopping: %s", reason);
        die_msg("run: node %d: %s", id, reason);
        free(fb);
        free(ls);
        return RUN_FATAL;
    }
    finish_node(R, id, ndir, ok, fitness, ls, fb, reason);
    free(fb);
    free(ls);
    R->c->llm.deadline = 0;
    nd->tokens_prompt += R->usage.prompt_tokens - u0.prompt_tokens;
    nd->tokens_completion += R->usage.completion_tokens - u0.completion_tokens;
    nd->wall_s += now_seconds() - t0;
    return 0;
}
