/* The model player (play_model.h). */
#include "play_model.h"
#include "llm_reply.h"
#include "prompts.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const llm_task task_move = {LLM_JSON, 200, NULL, "move"};

/* The window and what the player holds, as the model is shown them. */
static void view_text(const play_question *q, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "position (%d,%d), %s\n", q->pos / q->level->w, q->pos % q->level->w,
                                q->has_key ? "holding the key" : "without the key");
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(q->record, "sees"), i, row)
        if (n < len) n += (size_t)snprintf(buf + n, len - n, "  |%s|\n", json_string_value(row) ?: "");
}

/* The index of the legal move the reply names, or -1. */
static int move_of(const play_question *q, const char *reply, char *why, size_t whylen)
{
    char err[200];
    char *text = llm_extract_json(reply ? reply : "", err, sizeof err);
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    const char *move = json_string_value(json_object_get(o, "move"));
    snprintf(why, whylen, "%s", json_string_value(json_object_get(o, "why")) ?: "");
    int pick = -1;
    for (int i = 0; move && i < q->n; i++)
        if (!strcmp(move, q->moves[i])) pick = i;
    json_decref(o);
    return pick;
}

int play_model_choose(void *ctx, const play_question *q)
{
    play_model *m = ctx;
    if (m->server_failed || m->calls >= m->max_calls) {
        json_object_set_new(q->record, "asked", json_string(m->server_failed ? "no: the server failed" : "no: budget spent"));
        return -1;
    }
    char view[1024], moves[64] = "", err[400];
    view_text(q, view, sizeof view);
    for (int i = 0; i < q->n; i++) snprintf(moves + strlen(moves), sizeof moves - strlen(moves), "%s%s", i ? ", " : "", q->moves[i]);
    prompt_var v[] = {{"persona", m->persona_text}, {"view", view}, {"moves", moves}};
    char *prompt = prompt_render("prefer", "player_move", v, 3, err, sizeof err);
    if (!prompt) {
        m->server_failed = 1;
        snprintf(m->error, sizeof m->error, "%s", err);
        return -1;
    }
    llm_message msg = {"user", prompt, NULL, 0};
    llm_reply r;
    int rc = llm_chat_task(m->llm, &task_move, &msg, 1, &r, err, sizeof err);
    free(prompt);
    m->calls++;
    m->output_tokens += r.usage.completion_tokens;
    int pick = -1;
    char why[200] = "";
    if (rc == 0 || r.model_failure) pick = move_of(q, r.content, why, sizeof why);
    if (rc && !r.model_failure) {
        m->server_failed = 1;
        snprintf(m->error, sizeof m->error, "%s", err);
    }
    llm_reply_free(&r);
    m->invalid += pick < 0 && !m->server_failed;
    json_object_set_new(q->record, "asked", json_string(pick >= 0 ? "yes" : "yes: no legal move in the answer"));
    if (why[0]) json_object_set_new(q->record, "why", json_string(why));
    return pick;
}
