/* The editors behind the loop: a language model (openai), the rule-based
 * editor (offline, editor_offline.c) and the rule-based editor with random
 * calls mixed in (noisy:P, a stand-in for a weak model).  Whatever the
 * editor, its reply is text the loop reads the same way, and every request
 * and reply is recorded. */
#include "author_exchange.h"
#include "edit_internal.h"
#include "story.h"
#include "levelio.h"
#include "philox.h"
#include "prompts.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A reply holds up to 64 small calls: a text budget of its own. */
static const llm_task edit_task = {LLM_TEXT, 1500, NULL, "edit"};

int edit_editor_parse(const char *s, edit_editor *e, char *err, int errlen)
{
    memset(e, 0, sizeof *e);
    if (!strcmp(s, "offline")) return 0;
    if (!strcmp(s, "openai")) {
        e->kind = EDITOR_OPENAI;
        return 0;
    }
    if (!strncmp(s, "noisy:", 6) && parse_double(s + 6, 0, 1, &e->noise) == 0) {
        e->kind = EDITOR_NOISY;
        return 0;
    }
    snprintf(err, (size_t)errlen, "--llm %.60s: takes offline, noisy:P (P from 0 to 1) or openai", s);
    return -1;
}

void edit_editor_label(const edit_editor *e, char *buf, int len)
{
    if (e->kind == EDITOR_OPENAI) snprintf(buf, (size_t)len, "openai %s", e->llm ? e->llm->model : "");
    else if (e->kind == EDITOR_NOISY) snprintf(buf, (size_t)len, "noisy:%.2f (rule-based, random calls)", e->noise);
    else snprintf(buf, (size_t)len, "offline (rule-based)");
}

void editor_random_call(const level_t *l, uint64_t r, char *buf, int len)
{
    static const char *const tiles[] = {"WALL", "EMPTY", "WALL", "EMPTY", "KEY", "BAT"};
    philox_stream s;
    philox_stream_init(&s, r, 0x6e6f6973u, 0);
    int kind = (int)philox_below(philox_next(&s), 4);
    int row = (int)philox_below(philox_next(&s), (pcg_u32)l->h), col = (int)philox_below(philox_next(&s), (pcg_u32)l->w);
    const char *tile = tiles[philox_below(philox_next(&s), 6)];
    int a = 1 + (int)philox_below(philox_next(&s), 4), b = 1 + (int)philox_below(philox_next(&s), 4);
    if (kind == 0 || kind == 1)
        snprintf(buf, (size_t)len, "{\"tool\":\"set\",\"row\":%d,\"col\":%d,\"tile\":\"%s\"}", row, col, tile);
    else if (kind == 2)
        snprintf(buf, (size_t)len, "{\"tool\":\"line\",\"row\":%d,\"col\":%d,\"row2\":%d,\"col2\":%d,\"tile\":\"%s\"}",
                 row, col, row, col + a, tile);
    else
        snprintf(buf, (size_t)len,
                 "{\"tool\":\"rect\",\"row\":%d,\"col\":%d,\"height\":%d,\"width\":%d,\"tile\":\"%s\"}", row, col, a,
                 b, tile);
}

/* The noisy editor: with probability P a step's reply is one random call
 * in place of the offline editor's whole reply, as a weak model now and
 * then answers with a wrong action.  Draws depend on the seed and the step
 * only, so a resumed run draws the same. */
static char *noisy_calls(const edit_editor *e, const edit_view *v)
{
    philox_stream s;
    philox_stream_init(&s, e->seed, 0x100000000ull + (uint64_t)v->step, 0);
    if (philox_next(&s) >= e->noise * 4294967296.0) return editor_offline_calls(v);
    char call[200], *text = malloc(sizeof call + 2);
    editor_random_call(v->level, ((uint64_t)philox_next(&s) << 32) | philox_next(&s), call, sizeof call);
    if (text) snprintf(text, sizeof call + 2, "[%s]", call);
    return text;
}

/* What a rule-based editor was given, for requests.jsonl. */
static json_t *view_json(const edit_view *v)
{
    char *map = edit_level_text(v->level);
    json_t *o = json_pack("{s:s,s:[i,i],s:i,s:b}", "level", map ? map : "", "legs", v->m->route_key,
                          v->m->route_door, "route", v->m->route, "valid", v->m->valid);
    free(map);
    char *witness = v->witness ? edit_level_text(v->witness) : NULL;
    if (witness) json_object_set_new(o, "witness", json_string(witness));
    free(witness);
    return o;
}

static void ask_rules(const edit_editor *e, const edit_view *v, const edit_records *rec, edit_answer *a)
{
    edit_record(rec, "requests.jsonl",
                json_pack("{s:i,s:i,s:s,s:o}", "step", v->step, "attempt", 1, "editor", rec->label, "given",
                          view_json(v)));
    a->reply = e->kind == EDITOR_NOISY ? noisy_calls(e, v) : editor_offline_calls(v);
    if (!a->reply) {
        a->status = 2;
        snprintf(a->error, sizeof a->error, "out of memory");
    }
    edit_record(rec, "replies.jsonl",
                json_pack("{s:i,s:i,s:s,s:s,s:s?}", "step", v->step, "attempt", 1, "editor", rec->label, "status",
                          a->status ? "error" : "ok", "reply", a->reply));
}

/* The user message of a step (edit_request.txt), malloc'd. */
static char *request_text(const edit_view *v, char *err, int errlen)
{
    char target[300], step[16], steps[16];
    target_describe(v->target, target, sizeof target);
    snprintf(step, sizeof step, "%d", v->step);
    snprintf(steps, sizeof steps, "%d", v->steps);
    char *map = edit_level_text(v->level);
    prompt_var vars[] = {{"target", target},           {"level", map ? map : ""},  {"step", step},
                         {"steps", steps},             {"feedback", v->feedback}, {"history", v->history},
                         {"guidance", v->guidance}};
    char *s = prompt_render("harness", "edit_request", vars, 7, err, errlen);
    free(map);
    return s;
}

static void record_reply(const edit_records *rec, const edit_view *v, int attempt, const llm_reply *r,
                         const edit_answer *a)
{
    static const char *const status[] = {"ok", "failed", "error"};
    static const char *const cut[] = {"", "loop", "time", "length"};
    edit_record(rec, "replies.jsonl",
                json_pack("{s:i,s:i,s:s,s:s,s:s?,s:s,s:s,s:s,s:I,s:I,s:f}", "step", v->step, "attempt", attempt,
                          "editor", rec->label, "status", status[a->status], "reply", r->content, "error", a->error,
                          "finish_reason", r->finish_reason, "cut", cut[r->cut], "prompt_tokens",
                          (json_int_t)r->usage.prompt_tokens, "completion_tokens",
                          (json_int_t)r->usage.completion_tokens, "seconds", r->seconds));
}

static void ask_model(const edit_editor *e, const edit_view *v, const char *previous, const char *retry_error,
                      const edit_records *rec, edit_answer *a)
{
    char err[sizeof a->error];
    char *sys = prompt_render("harness", "edit_system", NULL, 0, err, sizeof err);
    char *user = sys ? request_text(v, err, sizeof err) : NULL;
    char *retry = NULL;
    if (user && retry_error) {
        prompt_var rv[] = {{"failure", retry_error}};
        retry = prompt_render("harness", "edit_retry", rv, 1, err, sizeof err);
    }
    if (!user || (retry_error && !retry)) {
        a->status = 2;
        snprintf(a->error, sizeof a->error, "%s", err);
        free(sys);
        free(user);
        return;
    }
    llm_message msgs[4] = {{"system", sys, NULL, 0}, {"user", user, NULL, 0}, {"assistant", previous ? previous : "", NULL, 0},
                           {"user", retry, NULL, 0}};
    int n = retry ? 4 : 2, attempt = retry ? 2 : 1;
    char *body = llm_request_json(e->llm, &edit_task, msgs, n, err, sizeof err);
    json_t *req = body ? json_loads(body, 0, NULL) : NULL;
    free(body);
    edit_record(rec, "requests.jsonl",
                json_pack("{s:i,s:i,s:s,s:o?}", "step", v->step, "attempt", attempt, "editor", rec->label, "request",
                          req));
    llm_reply r;
    int rc = llm_chat_task(e->llm, &edit_task, msgs, n, &r, a->error, sizeof a->error);
    a->status = rc == 0 ? 0 : r.model_failure ? 1 : 2;
    if (rc == 0) a->error[0] = 0;
    a->reply = r.content ? strdup(r.content) : NULL;
    a->tokens += r.usage.total_tokens ? r.usage.total_tokens : r.usage.prompt_tokens + r.usage.completion_tokens;
    a->output_tokens += r.usage.completion_tokens;
    record_reply(rec, v, attempt, &r, a);
    llm_reply_free(&r);
    free(sys);
    free(user);
    free(retry);
}

void editor_ask(const edit_editor *e, const edit_view *v, const char *previous, const char *retry_error,
                const edit_records *rec, edit_answer *a)
{
    memset(a, 0, sizeof *a);
    if (e->kind == EDITOR_OPENAI) ask_model(e, v, previous, retry_error, rec, a);
    else ask_rules(e, v, rec, a);
}

/* The target extraction's own budget and schema are the story reader's. */
int edit_story_target(const char *story, const edit_editor *e, const char *dir, target_t *t, char *reason, int len)
{
    if (e->kind != EDITOR_OPENAI) return story_extract_offline(story, t, reason, len);
    edit_records rec = {dir, ""};
    edit_editor_label(e, rec.label, sizeof rec.label);
    prompt_var v[] = {{"story", story}};
    char *user = prompt_render("rich", "target_extraction", v, 1, reason, len);
    if (!user) return EDIT_STORY_ERROR;
    llm_message msg = {"user", user, NULL, 0};
    char *body = llm_request_json(e->llm, &au_task_target, &msg, 1, reason, len);
    json_t *req = body ? json_loads(body, 0, NULL) : NULL;
    free(body);
    edit_record(&rec, "requests.jsonl",
                json_pack("{s:i,s:s,s:s,s:o?}", "step", 0, "task", "target", "editor", rec.label, "request", req));
    llm_reply r;
    int rc = llm_chat_task(e->llm, &au_task_target, &msg, 1, &r, reason, len);
    free(user);
    edit_record(&rec, "replies.jsonl",
                json_pack("{s:i,s:s,s:s,s:s,s:s?}", "step", 0, "task", "target", "editor", rec.label, "status",
                          rc == 0 ? "ok" : r.model_failure ? "failed" : "error", "reply", r.content));
    if (rc != 0) {
        int server = !r.model_failure;
        llm_reply_free(&r);
        return server ? EDIT_STORY_SERVER : EDIT_STORY_ERROR;
    }
    rc = target_from_json(r.content, t, reason, len);
    llm_reply_free(&r);
    return rc;
}
