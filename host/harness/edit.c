/* The editing loop: ask, recover, run on a copy, measure, accept or not.
 * See edit.h and docs/harness.md, "The editing loop". */
#include "edit_internal.h"
#include "dirguard.h"
#include "feasible.h"
#include "levelio.h"
#include "tools.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HISTORY_MAX 16

void edit_switches_full(edit_switches *s) { *s = (edit_switches){1, 1, 3, 1, 1, 1}; }
void edit_switches_open(edit_switches *s) { memset(s, 0, sizeof *s); }

typedef struct {
    const edit_run *run;
    edit_records rec;
    level_t saved;
    unsigned char tiles[PCG_MAX_CELLS];
    edit_measure_t m;              /* of the saved level */
    level_t witness;               /* the builder's level, when witness_ok */
    unsigned char witness_tiles[PCG_MAX_CELLS];
    int witness_ok;
    edit_step_t hist[HISTORY_MAX];
    int n_hist;
    edit_result *res;
} loop_t;

/* The texts of the next request, each "" when its switch is off. */
typedef struct {
    char *feedback, *history, *guidance;
} view_texts;

static void free_texts(view_texts *t)
{
    free(t->feedback);
    free(t->history);
    free(t->guidance);
}

static int make_texts(const loop_t *L, view_texts *t, char *err, int errlen)
{
    const edit_switches *w = &L->run->sw;
    const target_t *tg = L->run->target;
    int n = L->n_hist < w->history ? L->n_hist : w->history;
    t->feedback = w->feedback ? edit_feedback_text(tg, &L->m, err, errlen) : strdup("");
    if (t->feedback && L->witness_ok) {
        char *shown = edit_witness_text(&L->witness, err, errlen);
        char *both = shown ? malloc(strlen(t->feedback) + strlen(shown) + 2) : NULL;
        if (both) sprintf(both, "%s\n%s", t->feedback, shown);
        free(shown);
        free(t->feedback);
        t->feedback = both;
    }
    t->history = w->history && n ? edit_history_text(L->hist + L->n_hist - n, n, err, errlen) : strdup("");
    t->guidance = w->guidance ? edit_guidance_text(tg, &L->saved, err, errlen) : strdup("");
    return t->feedback && t->history && t->guidance ? 0 : -1;
}

static void remember(loop_t *L, const edit_step_t *s)
{
    if (L->n_hist == HISTORY_MAX) {
        memmove(L->hist, L->hist + 1, sizeof L->hist[0] * (HISTORY_MAX - 1));
        L->n_hist--;
    }
    L->hist[L->n_hist++] = *s;
}

/* The calls and refusals of a step as the records keep them. */
static json_t *refusals_json(const tools_result *tr)
{
    json_t *a = json_array();
    for (int i = 0; i < tr->n_refused; i++) json_array_append_new(a, json_string(tr->refused[i].reason));
    return a;
}

/* Read the reply into a candidate: 0 (*calls: the list read), or -1
 * with why (unreadable). */
static int read_reply(loop_t *L, const char *reply, int step, level_t *cand, unsigned char *ctiles, tools_result *tr,
                      json_t **calls, int *recovered, char *why, int whylen)
{
    uint64_t seed = L->run->editor->seed * 7919u + (uint64_t)step;
    json_t *list = tools_read_list(reply, why, whylen);
    if (!list && L->run->sw.recovery) {
        int kept;
        char *fixed = tools_recover(reply, &kept);
        list = fixed ? json_loads(fixed, 0, NULL) : NULL;
        free(fixed);
        *recovered = list != NULL;
    }
    if (!list) return -1;
    tools_apply_list(list, &L->saved, cand, ctiles, seed, tr);
    *calls = list;
    return 0;
}

/* Ask the editor once, and once more after an unreadable reply when
 * recovery is off.  The reply read, or -1 (unreadable) / -2 (server). */
static int ask_and_read(loop_t *L, const edit_view *v, level_t *cand, unsigned char *ctiles, tools_result *tr,
                        edit_step_t *s, json_t **calls, char *err, int errlen)
{
    char why[400] = "";
    char *previous = NULL;
    int rc = -1;
    for (int attempt = 1; attempt <= 2 && rc == -1; attempt++) {
        if (attempt == 2 && L->run->sw.recovery) break;
        edit_answer a;
        editor_ask(L->run->editor, v, previous, attempt == 2 ? why : NULL, &L->rec, &a);
        L->res->calls++;
        L->res->tokens += a.tokens;
        L->res->output_tokens += a.output_tokens;
        s->tokens += a.tokens;
        if (a.status == 2) {
            snprintf(err, (size_t)errlen, "%s", a.error);
            free(a.reply);
            rc = -2;
            break;
        }
        if (a.reply) rc = read_reply(L, a.reply, v->step, cand, ctiles, tr, calls, &s->recovered, why, sizeof why);
        else snprintf(why, sizeof why, "%s", a.error[0] ? a.error : "the reply was empty");
        free(previous);
        previous = a.reply;
    }
    free(previous);
    return rc;
}

/* Decide on a read candidate: the outcome, and the saved level replaced
 * (by rename in the run directory) when it is kept. */
static int decide(loop_t *L, const level_t *cand, const tools_result *tr, edit_step_t *s, char *err, int errlen)
{
    edit_measure(L->run->target, cand, &s->m);
    s->changed = tr->changed;
    if (!tr->changed) {
        s->outcome = "no edit";
        s->m = L->m;
        return 0;
    }
    s->accepted = !L->run->sw.accept || edit_better(&s->m, &L->m);
    s->outcome = !s->accepted ? "rejected" : L->run->sw.accept ? "accepted" : "saved";
    if (!s->accepted) return 0;
    memcpy(L->tiles, cand->t, (size_t)(cand->h * cand->w));
    L->m = s->m;
    L->res->accepted++;
    if (L->run->dir) {
        char path[4200];
        snprintf(path, sizeof path, "%s/level.txt", L->run->dir);
        if (level_write(path, &L->saved, "the saved level of an editing run") != 0) {
            snprintf(err, (size_t)errlen, "%s", write_error()); /* it names the path */
            return -1;
        }
    }
    return 0;
}

static void say_step(const loop_t *L, const edit_step_t *s)
{
    if (!L->run->verbose) return;
    char legs[200];
    edit_legs_text(L->run->target, &s->m, legs, sizeof legs);
    printf("step %d: %d call%s (%d refused%s), %s: %s; %s%s\n", s->step, s->calls, s->calls == 1 ? "" : "s",
           s->refused, s->recovered ? ", recovered" : "", s->outcome, legs, s->m.valid ? "valid" : "not valid: ",
           s->m.valid ? "" : s->m.reason);
    fflush(stdout);
}

/* One step.  0, EDIT_SERVER or EDIT_ERROR (err says why). */
static int edit_step(loop_t *L, int step, char *err, int errlen)
{
    view_texts t = {0};
    if (make_texts(L, &t, err, errlen)) {
        free_texts(&t);
        return EDIT_ERROR;
    }
    edit_view v = {step,       L->run->budget.steps, &L->saved,  L->run->target,
                   &L->m,      t.feedback,           t.history,  t.guidance,
                   L->witness_ok ? &L->witness : NULL};
    edit_step_t s = {.step = step, .outcome = "unreadable", .m = L->m};
    level_t cand;
    unsigned char ctiles[PCG_MAX_CELLS];
    tools_result tr;
    json_t *calls = NULL;
    int rc = ask_and_read(L, &v, &cand, ctiles, &tr, &s, &calls, err, errlen);
    free_texts(&t);
    if (rc == -2) {
        json_decref(calls);
        return EDIT_SERVER;
    }
    json_t *refusals = rc == 0 ? refusals_json(&tr) : NULL;
    if (rc == 0) {
        s.calls = tr.n_calls;
        s.refused = tr.n_refused;
        L->res->recovered += s.recovered;
        if (decide(L, &cand, &tr, &s, err, errlen)) {
            json_decref(calls);
            json_decref(refusals);
            return EDIT_ERROR;
        }
    }
    edit_write_step(&L->rec, &s, calls, refusals);
    json_decref(calls);
    json_decref(refusals);
    remember(L, &s);
    say_step(L, &s);
    return 0;
}

/* The budget that ends the episode before the next step, or NULL. */
static const char *over_budget(const loop_t *L, double t0)
{
    const edit_budget *b = &L->run->budget;
    if (b->max_calls > 0 && L->res->calls >= b->max_calls) return "the call budget is spent";
    if (b->max_tokens > 0 && L->res->tokens >= b->max_tokens) return "the token budget is spent";
    if (b->max_seconds > 0 && now_seconds() - t0 >= b->max_seconds) return "the time budget is spent";
    return NULL;
}

/* The target and the start: a path-length target the start's map can
 * hold.  EDIT_OK or the status, with err. */
static int check_target(const edit_run *run, const level_t *start, char *err, int errlen)
{
    if (run->target->kind != TARGET_PATHLENGTH) {
        snprintf(err, (size_t)errlen, "edit takes a path-length target (the route's legs or its total length)");
        return EDIT_USAGE;
    }
    target_map_t map;
    char why[400];
    if (target_map_of_level(start, &map, why, sizeof why) != 0) {
        snprintf(err, (size_t)errlen, "the start level: %s", why);
        return EDIT_USAGE;
    }
    if (target_feasible(run->target, &map, why, sizeof why) != 0) {
        snprintf(err, (size_t)errlen, "the target cannot be met on this level's map: %s", why);
        return EDIT_INFEASIBLE;
    }
    return EDIT_OK;
}

/* A new run directory: start.txt and level.txt.  0, or -1 with err. */
static int open_run_dir(const edit_run *run, const level_t *start, char *err, int errlen)
{
    char path[4200];
    if (make_dirs_msg(run->dir, err, errlen) || dirguard_add(run->dir, "editing run directory", 0, err, errlen))
        return -1;
    /* steps.jsonl too: a run killed before it wrote state.json */
    const char *marks[] = {"state.json", "steps.jsonl"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", run->dir, marks[i]);
        if (path_present(path)) {
            snprintf(err, (size_t)errlen, "%s holds an editing run already: --resume continues it", run->dir);
            return -1;
        }
    }
    const char *names[] = {"start.txt", "level.txt"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", run->dir, names[i]);
        if (level_write(path, start, i ? "the saved level of an editing run" : "the start level") != 0) {
            snprintf(err, (size_t)errlen, "%s", write_error()); /* it names the path */
            return -1;
        }
    }
    return 0;
}

static int begin(loop_t *L, char *err, int errlen)
{
    const edit_run *run = L->run;
    if (run->resume) {
        if (!run->dir) {
            snprintf(err, (size_t)errlen, "--resume needs the run directory (--out DIR)");
            return EDIT_USAGE;
        }
        int k = run->sw.history < HISTORY_MAX ? run->sw.history : HISTORY_MAX;
        /* a run directory may come from someone else: nothing in it is
         * followed out of it (host/sys/dirguard.h) */
        char why[600];
        if (dirguard_add(run->dir, "editing run directory", 1, why, sizeof why)) {
            snprintf(err, (size_t)errlen, "--resume: %s", why);
            return EDIT_ERROR;
        }
        if (edit_resume_read(run->dir, run->target, L->hist, k, &L->n_hist, &L->saved, L->tiles, L->res, err,
                             errlen))
            return EDIT_ERROR;
        return check_target(run, &L->saved, err, errlen);
    }
    int rc = check_target(run, run->start, err, errlen);
    if (rc != EDIT_OK) return rc;
    memcpy(L->tiles, run->start->t, (size_t)(run->start->h * run->start->w));
    L->saved = (level_t){run->start->h, run->start->w, L->tiles};
    if (run->dir && open_run_dir(run, run->start, err, errlen)) return EDIT_ERROR;
    return EDIT_OK;
}

/* The totals so far, with the saved level's measurement and the wall time
 * since t0 added to the time of earlier sessions. */
static void result_now(const loop_t *L, double t0, edit_result *out)
{
    *out = *L->res;
    out->perfect = L->m.perfect;
    out->valid = L->m.valid;
    out->route_key = L->m.route_key;
    out->route_door = L->m.route_door;
    out->route = L->m.route;
    out->seconds += now_seconds() - t0;
}

/* state.json after every step, not only at the end: a run that is killed
 * can be resumed, and a new run into its directory is refused rather than
 * overwriting its saved level.  EDIT_OK, or EDIT_ERROR with err. */
static int save_progress(const loop_t *L, double t0, char *err, int errlen)
{
    edit_result now;
    result_now(L, t0, &now);
    char why[400];
    if (edit_write_state(L->run->dir, L->run->target, L->run, &now, 1, why, sizeof why)) {
        snprintf(err, (size_t)errlen, "%s", why);
        return EDIT_ERROR;
    }
    return EDIT_OK;
}

static int episode_loop(loop_t *L, double t0, char *err, int errlen)
{
    edit_result *res = L->res;
    int rc = save_progress(L, t0, err, errlen);
    while (rc == EDIT_OK) {
        const char *over = over_budget(L, t0);
        if (L->m.perfect && L->run->sw.early_stop) {
            res->stop = EDIT_STOP_PERFECT;
            snprintf(res->why, sizeof res->why, "a perfect match");
        } else if (res->steps >= L->run->budget.steps) {
            res->stop = EDIT_STOP_STEPS;
            snprintf(res->why, sizeof res->why, "%d steps done", res->steps);
        } else if (over) {
            res->stop = EDIT_STOP_BUDGET;
            snprintf(res->why, sizeof res->why, "%s", over);
        } else if ((rc = edit_step(L, res->steps + 1, err, errlen)) == EDIT_OK) {
            res->steps++;
            rc = save_progress(L, t0, err, errlen);
            continue;
        } else if (rc == EDIT_SERVER) {
            res->stop = EDIT_STOP_SERVER;
            snprintf(res->why, sizeof res->why, "%s", err);
        }
        return rc;
    }
    return rc;
}

int edit_episode(const edit_run *run, level_t *final, unsigned char *final_tiles, edit_result *res, char *err,
                 int errlen)
{
    double t0 = now_seconds();
    memset(res, 0, sizeof *res);
    loop_t *L = calloc(1, sizeof *L);
    if (!L) {
        snprintf(err, (size_t)errlen, "out of memory");
        return EDIT_ERROR;
    }
    L->run = run;
    L->res = res;
    L->rec.dir = run->dir;
    edit_editor_label(run->editor, L->rec.label, sizeof L->rec.label);
    int rc = begin(L, err, errlen);
    if (rc == EDIT_OK) {
        double deadline = run->editor->llm ? run->editor->llm->deadline : 0;
        if (run->editor->llm && run->budget.max_seconds > 0) run->editor->llm->deadline = t0 + run->budget.max_seconds;
        edit_measure(run->target, &L->saved, &L->m);
        /* the PLAYER and DOOR never move, so one witness serves every step */
        L->witness_ok = run->sw.feedback && edit_witness(run->target, &L->saved, &L->witness, L->witness_tiles) == 0;
        rc = episode_loop(L, t0, err, errlen);
        if (run->editor->llm) run->editor->llm->deadline = deadline;
        result_now(L, t0, res);
        char why[400];
        if (edit_write_state(run->dir, run->target, run, res, 0, why, sizeof why) && rc == EDIT_OK) {
            snprintf(err, (size_t)errlen, "%s", why);
            rc = EDIT_ERROR;
        }
        memcpy(final_tiles, L->tiles, (size_t)(L->saved.h * L->saved.w));
        *final = (level_t){L->saved.h, L->saved.w, final_tiles};
    }
    free(L);
    return rc;
}
