/* What a run spent on its model (usage.json, so that a resumed run counts
 * on) and the closing summary.  See loop_internal.h. */
#include "loop_internal.h"
#include "util.h"
#include <jansson.h>
#include <stdio.h>

/* ---------------------------------------------------------------- usage */

void save_usage(run_state *R)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/usage.json", R->c->out);
    json_t *o = json_object();
    json_object_set_new(o, "prompt_tokens", json_integer(R->usage.prompt_tokens));
    json_object_set_new(o, "completion_tokens", json_integer(R->usage.completion_tokens));
    json_object_set_new(o, "total_tokens", json_integer(R->usage.total_tokens));
    json_object_set_new(o, "requests", json_integer(R->usage.requests));
    json_object_set_new(o, "replies", json_integer(R->usage.replies));
    json_object_set_new(o, "failures", json_integer(R->usage.failures));
    json_object_set_new(o, "cut", json_integer(R->usage.cut));
    json_object_set_new(o, "seconds", json_real(R->usage.seconds));
    const run_tally *t = &R->tally;
    json_object_set_new(o, "tally",
                        json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:f}", "calls", t->calls,
                                  "replies", t->replies, "cut_loop", t->cut_loop, "cut_time", t->cut_time,
                                  "cut_length", t->cut_length, "early_stops", t->early_stops, "rewards_held",
                                  t->rewards_held, "compiled", t->compiled, "validated", t->validated, "trained",
                                  t->trained, "call_seconds", t->call_seconds));
    run_write_json(path, o);
}

void load_usage(run_state *R)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/usage.json", R->c->out);
    char err[1400];
    json_t *o = read_json_file(path, 1L << 20, err, sizeof err); /* counts only: a bad file starts them again */
    if (!o) return;
    R->usage.prompt_tokens = (long)json_integer_value(json_object_get(o, "prompt_tokens"));
    R->usage.completion_tokens = (long)json_integer_value(json_object_get(o, "completion_tokens"));
    R->usage.total_tokens = (long)json_integer_value(json_object_get(o, "total_tokens"));
    R->usage.requests = (long)json_integer_value(json_object_get(o, "requests"));
    R->usage.replies = (long)json_integer_value(json_object_get(o, "replies"));
    R->usage.failures = (long)json_integer_value(json_object_get(o, "failures"));
    R->usage.cut = (long)json_integer_value(json_object_get(o, "cut"));
    R->usage.seconds = json_number_value(json_object_get(o, "seconds"));
    json_t *t = json_object_get(o, "tally");
    run_tally *y = &R->tally;
#define TALLY(f) y->f = (int)json_integer_value(json_object_get(t, #f))
    TALLY(calls), TALLY(replies), TALLY(cut_loop), TALLY(cut_time), TALLY(cut_length), TALLY(early_stops);
    TALLY(rewards_held), TALLY(compiled), TALLY(validated), TALLY(trained);
#undef TALLY
    y->call_seconds = json_number_value(json_object_get(t, "call_seconds"));
    json_decref(o);
}

/* ---------------------------------------------------------------- the model */

/* The server's context size, read or flagged, and what follows from it. */
void say_context(run_state *R)
{
    char from[64];
    R->server.context = llm_probe_context(&R->c->llm, from, sizeof from);
    snprintf(R->server.context_from, sizeof R->server.context_from, "%s", from);
    if (R->server.context > 0)
        run_say(R, "model server context: %ld tokens (%s); prompts are fitted to it", R->server.context, from);
    else
        run_say(R, "model server context: not reported by the server; give --llm-context N to have prompts "
                   "fitted to it and too long ones refused before they are sent");
}

/* What the model's replies came to, and a clear end for a run without a reward. */
void say_summary(run_state *R, int best)
{
    const run_tally *t = &R->tally;
    if (!R->c->offline && t->calls > 0) {
        run_say(R, "model: %d call%s in %.0f s (%.1f s each), %d with a reply; cut: %d loop%s, %d out of time, %d at "
                   "the token limit; %d stopped early once complete",
                t->calls, t->calls == 1 ? "" : "s", t->call_seconds, t->call_seconds / t->calls, t->replies,
                t->cut_loop, t->cut_loop == 1 ? "" : "s", t->cut_time, t->cut_length, t->early_stops);
        run_say(R, "rewards: %d held a reward function, %d compiled, %d passed validation, %d trained",
                t->rewards_held, t->compiled, t->validated, t->trained);
    }
    if (best < 0)
        run_warn(R, "run: no node produced a reward; why each failed: %s/nodes/*/failed.txt, what the model wrote: "
                    "%s/nodes/*/llm/*.reply.txt",
                 R->c->out, R->c->out);
}
