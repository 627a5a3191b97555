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

/* The model: one call, its exchange kept in cdir.  NULL with note set when
 * the reply holds no reward; *server_failed when the call itself failed. */
static char *revise_model(const refine_ctx *x, const char *code, const refine_target *t, const char *evidence,
                          const char *cdir, char *note, int len, int *server_failed)
{
    char dim[1200], err[1200], path[1300];
    dimension_text(t->dim, dim, sizeof dim);
    prompt_var v[] = {{"persona", x->persona_text}, {"dimension", dim},
                      {"direction", t->direction > 0 ? "raise" : "lower"}, {"target", x->R.flow},
                      {"reward", code}, {"evidence", evidence ? evidence : "(none: this is the first revision)"}};
    char *prompt = prompt_render("prefer", "refine_reward", v, 6, err, sizeof err);
    if (!prompt) return say_to(note, len, "%s", err), NULL;
    snprintf(path, sizeof path, "%s/request.txt", cdir);
    write_file_atomic_msg(path, prompt, strlen(prompt), err, sizeof err);
    llm_message msg = {"user", prompt, NULL, 0};
    llm_reply r;
    int rc = llm_chat_task(&x->o->llm, &task_refine, &msg, 1, &r, err, sizeof err);
    free(prompt);
    char *out = NULL;
    if (r.content) {
        snprintf(path, sizeof path, "%s/reply.txt", cdir);
        write_file_atomic_msg(path, r.content, strlen(r.content), err + 600, 600);
    }
    if (rc && !r.model_failure) {
        *server_failed = 1;
        say_to(note, len, "the model server failed: %s", err);
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

char *refine_revise(refine_ctx *x, const char *code, const refine_target *t, int round, const char *evidence,
                    const char *cdir, char *note, int len)
{
    if (!x->o->author_model) return revise_offline(code, t, round ? 2.0f : 1.0f, note, len);
    int failed = 0;
    char *out = revise_model(x, code, t, evidence, cdir, note, len, &failed);
    if (failed) x->server_failed = 1;
    return out;
}
