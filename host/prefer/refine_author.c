/* Revisions for refinement: the offline author's experience terms or a
 * model's rewrite with the persona, the dimension and the direction in the
 * prompt (prompts/prefer/refine_reward.txt).  See refine_internal.h. */
#include "refine_internal.h"
#include "author_experience.h"
#include "llm_reply.h"
#include "prompts.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const llm_task task_refine = {LLM_CODE, 0, NULL, "refine"};

/* The offline author: the experience term of the dimension's lever added
 * (strength 1) or its weight multiplied (a feedback round: strength 2). */
static char *revise_offline(const char *code, const refine_target *t, float strength, char *note, int len)
{
    author_reward r;
    char err[300];
    if (author_parse(code, &r, err, sizeof err)) {
        say_to(note, len, "the offline author revises only rewards it wrote: %s", err);
        return NULL;
    }
    if (!author_experience_revise(&r, dim_id(t->dim), t->direction, strength, note, len)) return NULL;
    char *out = malloc(65536);
    if (out && author_code(&r, out, 65536) < 0) {
        free(out);
        out = NULL;
        say_to(note, len, "the revised reward does not fit in 64 KiB");
    }
    return out;
}

/* "Name: definition" of dimension j from the dimensions file. */
static void dimension_text(int j, char *buf, size_t len)
{
    char err[300];
    json_t *defs = dim_load(err, sizeof err);
    const json_t *d = json_array_get(json_object_get(defs, "dimensions"), (size_t)j);
    snprintf(buf, len, "%s: %s", json_string_value(json_object_get(d, "name")) ?: dim_id(j),
             json_string_value(json_object_get(d, "definition")) ?: "");
    json_decref(defs);
}

/* 1 when file path holds exactly text. */
static int holds_text(const char *path, const char *text)
{
    long len;
    char err[300];
    char *s = read_file(path, 8L << 20, &len, err, sizeof err);
    int same = s && (size_t)len == strlen(text) && !memcmp(s, text, (size_t)len);
    free(s);
    return same;
}

/* 1 when cdir's reward.c holds code and what was trained on is that too. */
static int holds_reward(const char *cdir, const char *code)
{
    char path[1400];
    snprintf(path, sizeof path, "%s/reward.c", cdir);
    if (!holds_text(path, code)) return 0;
    snprintf(path, sizeof path, "%s/train/reward.c", cdir);
    return !path_present(path) || holds_text(path, code);
}

/* The request to the model for t (prompts/prefer/refine_reward.txt). */
static char *model_request(const refine_ctx *x, const char *code, const refine_target *t, const char *evidence,
                           char *note, int len)
{
    char dim[1200], err[1200];
    dimension_text(t->dim, dim, sizeof dim);
    prompt_var v[] = {{"persona", x->persona_text}, {"dimension", dim},
                      {"direction", t->direction > 0 ? "raise" : "lower"}, {"target", x->R.flow},
                      {"reward", code}, {"evidence", evidence ? evidence : "(none: this is the first revision)"}};
    char *prompt = prompt_render("prefer", "refine_reward", v, 6, err, sizeof err);
    if (!prompt) say_to(note, len, "%s", err);
    return prompt;
}

/* An earlier attempt's reply to this same request, from cdir: its reward. */
static char *model_reused(const char *cdir, const char *prompt, char *note, int len)
{
    char path[1400], err[600];
    snprintf(path, sizeof path, "%s/request.txt", cdir);
    if (!holds_text(path, prompt)) return NULL;
    snprintf(path, sizeof path, "%s/reward.c", cdir);
    long n;
    char *code = read_file(path, 8L << 20, &n, err, sizeof err);
    if (!code || !holds_reward(cdir, code)) {
        free(code);
        return NULL;
    }
    say_to(note, len, "the model's revision to this same request in an earlier attempt, reused");
    return code;
}

/* The model: one call, its exchange kept in cdir.  NULL with note set when
 * the reply holds no reward (a reply the client cut or refused is none);
 * *server_failed when the call itself failed. */
static char *revise_model(const refine_ctx *x, const char *prompt, const refine_target *t, const char *cdir,
                          char *note, int len, int *server_failed)
{
    char err[1200], path[1400];
    snprintf(path, sizeof path, "%s/request.txt", cdir);
    write_file_atomic_msg(path, prompt, strlen(prompt), err, sizeof err);
    llm_message msg = {"user", prompt, NULL, 0};
    llm_reply r;
    int rc = llm_chat_task(&x->o->llm, &task_refine, &msg, 1, &r, err, sizeof err);
    char *out = NULL;
    if (r.content) {
        snprintf(path, sizeof path, "%s/reply.txt", cdir);
        write_file_atomic_msg(path, r.content, strlen(r.content), err + 600, 600);
    }
    if (rc && !r.model_failure) {
        *server_failed = 1;
        say_to(note, len, "the model server failed: %s", err);
    } else if (rc) {
        say_to(note, len, "the model's reply was not used: %s", err);
    } else if (!(out = llm_extract_code(r.content ? r.content : "", err, sizeof err)) ||
               !strstr(out, "compute_reward")) {
        say_to(note, len, "the reply holds no reward function%s%s", out ? "" : ": ", out ? "" : err);
        free(out);
        out = NULL;
    } else {
        say_to(note, len, "revised by the model to %s %s", t->direction > 0 ? "raise" : "lower", dim_id(t->dim));
    }
    llm_reply_free(&r);
    return out;
}

/* k->dir made for this attempt: an earlier attempt there that is not
 * reused is moved aside first.  0, or -1 with k failed. */
static int candidate_dir(refine_candidate *k, int reuse)
{
    char err[1500];
    int moved = reuse ? 0 : refine_set_aside(k->dir, k->aside, sizeof k->aside, err, sizeof err);
    if (moved < 0 || make_dirs_msg(k->dir, err, sizeof err)) {
        k->verdict = CAND_FAILED;
        say_to(k->why, sizeof k->why, "%s", err);
        moved = -1;
    }
    if (moved <= 0) k->aside[0] = 0;
    return moved < 0 ? -1 : 0;
}

char *refine_revise(refine_ctx *x, refine_candidate *k, const char *code, const char *evidence)
{
    char *out = NULL, *prompt = NULL;
    int reuse = 0;
    if (!x->o->author_model) {
        out = revise_offline(code, &k->t, k->round ? 2.0f : 1.0f, k->note, sizeof k->note);
        reuse = out && holds_reward(k->dir, out);
    } else if ((prompt = model_request(x, code, &k->t, evidence, k->note, sizeof k->note))) {
        out = model_reused(k->dir, prompt, k->note, sizeof k->note);
        reuse = out != NULL;
    }
    char done[1400];
    snprintf(done, sizeof done, "%s/train.done", k->dir);
    k->reused = reuse && path_present(done);
    if (candidate_dir(k, reuse)) {
        free(out);
        free(prompt);
        return NULL;
    }
    if (prompt && !reuse) {
        int failed = 0;
        out = revise_model(x, prompt, &k->t, k->dir, k->note, sizeof k->note, &failed);
        if (failed) x->server_failed = 1;
    }
    free(prompt);
    return out;
}
