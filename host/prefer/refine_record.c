/* Refinement's record and summary (refine_internal.h). */
#include "refine_internal.h"
#include "util.h"
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const char *refine_candidate_verdict(int verdict)
{
    switch (verdict) {
    case CAND_NO_REVISION: return "no revision";
    case CAND_CONTRACT: return "contracts did not hold (not trained)";
    case CAND_SANDBOX: return "refused by the sandbox (not trained)";
    case CAND_FAILED: return "failed";
    default: return refine_verdict_name(verdict);
    }
}

/* 1 when dir holds anything (a missing or unreadable one: 0). */
static int holds_anything(const char *dir)
{
    char err[300];
    DIR *d = open_dir(dir, err, sizeof err);
    if (!d) return path_present(dir); /* a file or a refused link in its place is something */
    struct dirent *e;
    int any = 0;
    while (!any && (e = readdir(d)))
        any = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return any;
}

int refine_set_aside(const char *dir, char *to, int tolen, char *err, int errlen)
{
    if (!holds_anything(dir)) return 0;
    for (int n = 1; n <= 999; n++) {
        snprintf(to, (size_t)tolen, "%s.%d", dir, n);
        if (path_present(to)) continue;
        return path_rename(dir, to, err, errlen) ? -1 : 1;
    }
    say_to(err, errlen, "%s: 999 earlier attempts are kept beside it already; remove some", dir);
    return -1;
}

static json_t *num(double v) { return isnan(v) ? json_null() : json_real(v); }

static json_t *profile_json(const refine_profile *p)
{
    json_t *dims = json_object();
    for (int j = 0; j < PREFER_N_DIMS; j++) json_object_set_new(dims, dim_id(j), num(p->x[j]));
    return json_pack("{s:o, s:o, s:i, s:b}", "dimensions", dims, "rating", num(p->rating), "plays", p->plays,
                     "complete", p->complete);
}

static json_t *candidate_json(const refine_ctx *x, const refine_candidate *k)
{
    json_t *c = json_pack("{s:s, s:s, s:f, s:s, s:s, s:s}", "dimension", dim_id(k->t.dim), "direction",
                          k->t.direction > 0 ? "raise" : "lower", "weight", k->t.weight, "round",
                          k->round ? "feedback" : "directed", "author", k->note, "verdict",
                          refine_candidate_verdict(k->verdict));
    const char *dir = k->dir + strlen(x->o->run) + 1; /* relative to the run */
    json_object_set_new(c, "dir", json_string(dir));
    if (k->why[0]) json_object_set_new(c, "why", json_string(k->why));
    if (k->aside[0]) json_object_set_new(c, "earlier_attempt", json_string(k->aside + strlen(x->o->run) + 1));
    if (k->contract_ran) {
        json_t *sh = json_array();
        for (int i = 0; i < k->contract.pairs; i++) json_array_append_new(sh, json_real(k->contract.shift[i]));
        json_object_set_new(c, "contracts", json_pack("{s:i, s:i, s:o}", "pairs", k->contract.pairs, "held",
                                                      k->contract.held, "shift", sh));
    }
    if (k->trained) {
        json_object_set_new(c, "fitness", json_real(k->fitness));
        json_object_set_new(c, "predicted_gain", num(k->gain));
        json_object_set_new(c, "profile", profile_json(&k->prof));
    }
    return c;
}

int refine_write_record(const refine_ctx *x, char *err, int errlen)
{
    json_t *w = json_object();
    for (int j = 0; j < PREFER_N_DIMS; j++)
        if (x->model.used[j]) json_object_set_new(w, dim_id(j), json_real(x->model.w[j]));
    json_t *cands = json_array();
    for (int i = 0; i < x->n_cand; i++) json_array_append_new(cands, candidate_json(x, &x->cand[i]));
    const refine_candidate *kept = x->accepted >= 0 ? &x->cand[x->accepted] : NULL;
    json_t *rec = json_pack("{s:i, s:s, s:s, s:s, s:{s:o, s:f}, s:f, s:o, s:o}", "node", x->node, "persona",
                            x->o->persona, "judge", x->o->judge_model ? x->o->llm.model : "offline (rule-based)",
                            "author", x->o->author_model ? x->o->llm.model : "offline (rule-based)", "model",
                            "weights", w, "intercept", x->model.b, "fitness", x->fitness, "before",
                            profile_json(&x->before), "candidates", cands);
    json_object_set_new(rec, "kept", kept ? json_string(kept->dir + strlen(x->o->run) + 1) : json_string("original"));
    json_object_set_new(rec, "after", profile_json(kept ? &kept->prof : &x->before));
    json_object_set_new(rec, "round", json_string(!kept ? "none" : kept->round ? "feedback" : "directed"));
    char path[1300];
    snprintf(path, sizeof path, "%s/refine.json", x->dir);
    if (run_write_json(path, rec)) return say_to(err, errlen, "%s", write_error()), -1;
    return 0;
}

void refine_print(const refine_ctx *x)
{
    const refine_candidate *kept = x->accepted >= 0 ? &x->cand[x->accepted] : NULL;
    const refine_profile *after = kept ? &kept->prof : &x->before;
    printf("\n%-20s %8s %8s\n", "dimension", "before", "after");
    for (int j = 0; j < PREFER_N_DIMS; j++) printf("%-20s %8.2f %8.2f\n", dim_id(j), x->before.x[j], after->x[j]);
    printf("%-20s %8.2f %8.2f\n", "rating", x->before.rating, after->rating);
    printf("%-20s %8.3f %8.3f\n", "fitness", x->fitness, kept ? kept->fitness : x->fitness);
    if (kept)
        printf("kept %s (%s round)\n", kept->dir, kept->round ? "feedback" : "directed");
    else
        printf("kept the original: no candidate passed the gate\n");
    printf("record: %s/refine.json\n", x->dir);
}
