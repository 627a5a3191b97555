/* The language-model author of the loop: each step's prompt rendered from
 * the run's prompt profile under prompts/ (here the rich profile's calls;
 * the paper profile's are in author_paper.c), sent as a task with its own
 * token budget, and recorded in the
 * node directory (request, reply, outcome) whether it succeeded or not, so
 * that the user sees what the model wrote and --resume neither repeats a
 * call that failed because of the model nor trusts one that did not finish.
 * A prompt that does not fit the server's context is made smaller (fewer
 * levels, no references) or refused in one line before it is sent. */
#include "author_exchange.h"
#include "util.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* JSON schemas the server may enforce for the structured answers. */
static const char target_schema[] =
    "{\"anyOf\":["
    "{\"type\":\"object\",\"properties\":{\"kind\":{\"const\":\"encounter\"},\"enemies\":{\"type\":\"array\","
    "\"items\":{\"enum\":[\"BAT\",\"SCORPION\",\"SPIDER\"]}},\"reason\":{\"type\":\"string\"}},"
    "\"required\":[\"kind\",\"enemies\"],\"additionalProperties\":false},"
    "{\"type\":\"object\",\"properties\":{\"kind\":{\"const\":\"keydoor\"},\"gate\":{\"enum\":[\"KEY\",\"BAT\"]},"
    "\"reason\":{\"type\":\"string\"}},\"required\":[\"kind\",\"gate\"],\"additionalProperties\":false},"
    "{\"type\":\"object\",\"properties\":{\"kind\":{\"const\":\"pathlength\"},\"length\":{\"type\":\"integer\"},"
    "\"tolerance\":{\"type\":\"integer\"},\"enemy_count\":{\"type\":\"integer\"},\"reason\":{\"type\":\"string\"}},"
    "\"required\":[\"kind\",\"length\"],\"additionalProperties\":false},"
    "{\"type\":\"object\",\"properties\":{\"kind\":{\"const\":\"pathlength\"},\"player_key\":{\"type\":\"integer\"},"
    "\"key_door\":{\"type\":\"integer\"},\"tolerance\":{\"type\":\"integer\"},\"enemy_count\":{\"type\":\"integer\"},"
    "\"reason\":{\"type\":\"string\"}},\"required\":[\"kind\",\"player_key\",\"key_door\"],"
    "\"additionalProperties\":false},"
    "{\"type\":\"object\",\"properties\":{\"refuse\":{\"type\":\"string\"}},\"required\":[\"refuse\"],"
    "\"additionalProperties\":false}]}";
static const char fitness_schema[] =
    "{\"type\":\"object\",\"properties\":{\"scores\":{\"type\":\"array\",\"items\":{\"type\":\"number\"}},"
    "\"fitness\":{\"type\":\"number\"}},\"required\":[\"scores\",\"fitness\"],\"additionalProperties\":false}";

const llm_task au_task_code = {LLM_CODE, 0, NULL, "reward"};
const llm_task au_task_feedback = {LLM_TEXT, 600, NULL, "feedback"};
const llm_task au_task_target = {LLM_JSON, 300, target_schema, "target"};
const llm_task au_task_fitness = {LLM_JSON, 400, fitness_schema, "fitness"};
/* the paper's judge reasons step by step around its JSON: a text budget */
const llm_task au_task_judge = {LLM_TEXT, 0, NULL, "fitness"};

const char *au_profile(const run_state *R) { return run_prompts_name(R->c->prompts); }

static const char *const cut_names[] = {"", "loop", "time", "length"};

static void record_outcome(const char *path, const llm_reply *r, const char *failure)
{
    json_t *o = json_object();
    json_object_set_new(o, "status", json_string(!failure ? "ok" : r->model_failure ? "failed" : "error"));
    if (failure) json_object_set_new(o, "reason", json_string(failure));
    json_object_set_new(o, "finish_reason", json_string(r->finish_reason));
    if (r->cut) json_object_set_new(o, "cut", json_string(cut_names[r->cut]));
    json_object_set_new(o, "early_stop", json_boolean(r->early_stop));
    json_object_set_new(o, "constrained", json_boolean(r->constrained));
    json_object_set_new(o, "prompt_tokens", json_integer(r->usage.prompt_tokens));
    json_object_set_new(o, "completion_tokens", json_integer(r->usage.completion_tokens));
    json_object_set_new(o, "tokens_counted_from_stream", json_boolean(r->tokens_counted));
    json_object_set_new(o, "requests", json_integer(r->attempts));
    json_object_set_new(o, "seconds", json_real(r->seconds));
    json_object_set_new(o, "reply_bytes", json_integer(r->content ? (json_int_t)strlen(r->content) : 0));
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(o);
    if (s) run_write_text(path, s);
    free(s);
}

/* A failure recorded by an earlier run of this node: not asked again. */
static int recorded_failure(const char *path, char *err, int errlen)
{
    char e[1400];
    json_t *o = read_json_file(path, 1L << 20, e, sizeof e);
    const char *status = json_string_value(json_object_get(o, "status"));
    int failed = status && !strcmp(status, "failed");
    if (failed)
        snprintf(err, (size_t)errlen, "%s (recorded; not asked again)",
                 json_string_value(json_object_get(o, "reason")) ? json_string_value(json_object_get(o, "reason"))
                                                                  : "failed");
    json_decref(o);
    return failed;
}

/* The system and user messages of an exchange (malloc'd texts in sys, user;
 * *sys stays NULL for an exchange without one); the messages in m, their
 * count returned, or -1 with err. */
static int render(const run_state *R, const exchange_t *x, char **sys, char **user, llm_message *m, char *err,
                  int errlen)
{
    const char *prof = au_profile(R);
    *sys = x->sys ? prompt_render(prof, x->sys, NULL, 0, err, errlen) : NULL;
    *user = *sys || !x->sys ? prompt_render(prof, x->tmpl, x->vars, x->nvars, err, errlen) : NULL;
    if (*user && x->retry) {
        size_t a = strlen(*user), b = strlen(x->retry);
        char *u = realloc(*user, a + b + 3);
        if (u) {
            memcpy(u + a, "\n\n", 2);
            memcpy(u + a + 2, x->retry, b + 1);
            *user = u;
        }
    }
    if (!*user) {
        free(*sys);
        *sys = NULL;
        return -1;
    }
    int n = 0;
    if (*sys) m[n++] = (llm_message){"system", *sys, NULL, 0};
    m[n++] = (llm_message){"user", *user, x->image, x->image_len};
    return n;
}

int au_exchange_fits(run_state *R, const exchange_t *x, char *why, int whylen)
{
    char *sys, *user;
    llm_message m[2];
    int nm = render(R, x, &sys, &user, m, why, whylen);
    if (nm < 0) return 1; /* the exchange reports it */
    int ok = llm_fits(&R->c->llm, m, nm, llm_task_tokens(&R->c->llm, x->task), why, whylen);
    free(sys);
    free(user);
    return ok;
}

static void tally_reply(run_state *R, const llm_reply *r)
{
    run_tally *t = &R->tally;
    t->calls++;
    t->replies += r->content != NULL;
    t->cut_loop += r->cut == LLM_CUT_LOOP;
    t->cut_time += r->cut == LLM_CUT_TIME;
    t->cut_length += r->cut == LLM_CUT_LENGTH;
    t->early_stops += r->early_stop;
    t->call_seconds += r->seconds;
}

char *au_exchange(run_state *R, const char *ndir, const exchange_t *x, char *err, int errlen)
{
    char dir[1400], req_path[1600], reply_path[1600], out_path[1600];
    snprintf(dir, sizeof dir, "%s/llm", ndir);
    snprintf(req_path, sizeof req_path, "%s/%s.request.json", dir, x->name);
    snprintf(reply_path, sizeof reply_path, "%s/%s.reply.txt", dir, x->name);
    snprintf(out_path, sizeof out_path, "%s/%s.outcome.json", dir, x->name);
    if (recorded_failure(out_path, err, errlen)) return NULL;
    char *stored = run_read_text(reply_path);
    if (stored) return stored;
    if (make_dirs_msg(dir, err, errlen)) return NULL;
    char *sys, *user;
    llm_message msgs[2];
    int nm = render(R, x, &sys, &user, msgs, err, errlen);
    if (nm < 0) return NULL;
    llm_config c = R->c->llm;
    if (x->attempt > 1) c.seed = (c.seed >= 0 ? c.seed : 0) + x->attempt - 1; /* another draw, where sampled */
    char *req = llm_request_json(&c, x->task, msgs, nm, err, errlen);
    if (req) run_write_text(req_path, req);
    free(req);
    llm_reply rep;
    int rc = llm_chat_task(&c, x->task, msgs, nm, &rep, err, errlen);
    free(sys);
    free(user);
    tally_reply(R, &rep);
    char tokens[64];
    snprintf(tokens, sizeof tokens, "%ld%s", rep.usage.completion_tokens, rep.tokens_counted ? " (counted)" : "");
    if (rep.content) run_write_text(reply_path, rep.content); /* cut or not: the user sees what it wrote */
    record_outcome(out_path, &rep, rc ? err : NULL);
    if (rc && !rep.model_failure && !R->halted[0]) { /* not the model's doing: no result is made of it */
        if (strstr(err, R->c->llm.base_url)) snprintf(R->halted, sizeof R->halted, "%s", err);
        else snprintf(R->halted, sizeof R->halted, "the model server at %.500s failed: %.600s", R->c->llm.base_url, err);
    }
    if (rc) {
        run_say(R, "  model reply %s: %s tokens, %.1f s, %s%s", x->name, tokens, rep.seconds,
                rep.cut ? "cut: " : "failed", rep.cut ? cut_names[rep.cut] : "");
        llm_reply_free(&rep);
        return NULL;
    }
    run_say(R, "  model reply %s: %ld+%s tokens, %.1f s%s", x->name, rep.usage.prompt_tokens, tokens, rep.seconds,
            rep.early_stop ? ", stopped once the answer was complete" : "");
    char *text = rep.content;
    rep.content = NULL;
    return text;
}

char *au_exchange_code(run_state *R, const char *ndir, const exchange_t *x, char *err, int errlen)
{
    char *reply = au_exchange(R, ndir, x, err, errlen);
    if (!reply) return NULL;
    char *code = llm_extract_code(reply, err, errlen);
    free(reply);
    if (code && !strstr(code, "compute_reward")) {
        /* prose without a code block is taken whole by the extractor; it is
         * not worth a compile and a round of fixes */
        snprintf(err, (size_t)errlen, "the reply holds no reward function (no compute_reward in it)");
        free(code);
        return NULL;
    }
    if (code) R->tally.rewards_held++;
    return code;
}

/* The note appended to a retried prompt: what went wrong last time. */
static char *retry_note(int attempt, int attempts, const char *failure, char *err, int errlen)
{
    if (attempt <= 1 || !failure || !*failure) return NULL;
    char a[16], as[16];
    snprintf(a, sizeof a, "%d", attempt);
    snprintf(as, sizeof as, "%d", attempts);
    prompt_var v[] = {{"attempt", a}, {"attempts", as}, {"failure", failure}};
    return prompt_render("rich", "retry_note", v, 3, err, errlen);
}

/* The rich profile's refinement of node: the parent with its fitness and
 * feedback, and the GoT references, as many as fit the context (two, one,
 * none). */
static char *rich_refine(run_state *R, int node, const char *ndir, exchange_t *x, prompt_var *head, char *err,
                         int errlen)
{
    const thought_node *nd = &R->g.nodes[node];
    char *parent = run_node_code(R, nd->parent), *code = NULL, pfit[32];
    const char *fb = R->g.nodes[nd->parent].feedback ? R->g.nodes[nd->parent].feedback : "";
    snprintf(pfit, sizeof pfit, "%.3f", R->g.nodes[nd->parent].fitness);
    int nrefs = R->c->pe == PE_GOT ? nd->n_refs : 0;
    for (;; nrefs--) {
        char *refs = author_references(R, node, nrefs, err, errlen);
        if (!parent || !refs) {
            if (!parent) snprintf(err, (size_t)errlen, "the parent node's reward is missing");
            free(refs);
            break;
        }
        prompt_var v[] = {head[0],
                          head[1],
                          head[2],
                          head[3],
                          {"parent_code", parent},
                          {"parent_fitness", pfit},
                          {"feedback", fb},
                          {"references", refs},
                          {"target", R->flow},
                          {"evaluator_rules", R->evaluator_rules}};
        x->tmpl = "reward_refine", x->vars = v, x->nvars = 10;
        char why[700];
        if (nrefs > 0 && !au_exchange_fits(R, x, why, sizeof why)) {
            run_say(R, "  the prompt with %d reference%s does not fit the context; trying %d", nrefs,
                    nrefs == 1 ? "" : "s", nrefs - 1);
            free(refs);
            continue;
        }
        code = au_exchange_code(R, ndir, x, err, errlen);
        free(refs);
        break;
    }
    free(parent);
    return code;
}

char *mdl_generate(run_state *R, int node, const char *ndir, int trial, const char *previous, char *err, int errlen)
{
    if (R->c->prompts == PROMPTS_PAPER) return pap_generate(R, node, ndir, trial, err, errlen);
    const thought_node *nd = &R->g.nodes[node];
    char *api = author_reward_api(R, err, errlen);
    if (!api) return NULL;
    char it[16], its[16], name[64];
    snprintf(it, sizeof it, "%d", nd->iteration);
    snprintf(its, sizeof its, "%d", run_node_count(R->c));
    snprintf(name, sizeof name, "generate_%d", trial);
    char *note = retry_note(trial, R->c->trials, previous, err, errlen);
    exchange_t x = {name, "system", NULL, NULL, 0, NULL, 0, &au_task_code, note, trial};
    prompt_var head[] = {{"story", R->c->story}, {"reward_api", api}, {"iteration", it}, {"iterations", its}};
    char *code;
    if (nd->parent < 0) {
        prompt_var v[] = {head[0], head[1], head[2], head[3], {"target", R->flow},
                          {"evaluator_rules", R->evaluator_rules}};
        x.tmpl = "reward_init", x.vars = v, x.nvars = 6;
        code = au_exchange_code(R, ndir, &x, err, errlen);
    } else
        code = rich_refine(R, node, ndir, &x, head, err, errlen);
    free(api);
    free(note);
    return code;
}

char *mdl_fix(run_state *R, int node, const char *ndir, const char *code, const char *reason, int trial, int fix,
              char *err, int errlen)
{
    if (R->c->prompts == PROMPTS_PAPER) return pap_fix(R, node, ndir, code, reason, trial, fix, err, errlen);
    char *api = author_reward_api(R, err, errlen);
    if (!api) return NULL;
    char name[64];
    snprintf(name, sizeof name, "fix_t%d_f%d", trial, fix);
    prompt_var v[] = {{"code", code}, {"rejection", reason}, {"reward_api", api}, {"story", R->c->story}};
    exchange_t x = {name, "system", "reward_fix", v, 4, NULL, 0, &au_task_code, NULL, 1};
    char *out = au_exchange_code(R, ndir, &x, err, errlen);
    free(api);
    return out;
}

char *mdl_align(run_state *R, const char *ndir, const char *code, const reward_stats *st, int round, char *err,
                int errlen)
{
    if (R->c->prompts == PROMPTS_PAPER) return pap_align(R, ndir, code, st, round, err, errlen);
    char *api = author_reward_api(R, err, errlen);
    if (!api) return NULL;
    char stats[1024], warning[512], r_s[16], rs_s[16], name[64];
    reward_stats_text(st, stats, sizeof stats);
    reward_stats_warning(st, warning, sizeof warning);
    char *warn = prompt_statistics_warning("rich", warning, err, errlen);
    if (!warn) {
        free(api);
        return NULL;
    }
    snprintf(r_s, sizeof r_s, "%d", round);
    snprintf(rs_s, sizeof rs_s, "%d", R->c->align);
    snprintf(name, sizeof name, "align_%d", round);
    prompt_var v[] = {{"story", R->c->story}, {"reward_api", api},    {"code", code},
                      {"statistics", stats},  {"align_round", r_s}, {"align_rounds", rs_s},
                      {"statistics_warning", warn}};
    exchange_t x = {name, "system", "self_align", v, 7, NULL, 0, &au_task_code, NULL, 1};
    char *out = au_exchange_code(R, ndir, &x, err, errlen);
    free(warn);
    free(api);
    return out;
}

char *au_exchange_levels(run_state *R, const char *ndir, exchange_t *x, prompt_var *vars, int text_slot,
                         int count_slot, const level_set *ls, au_levels_text_fn text_of, char *err, int errlen)
{
    static const int tries[] = {RUN_MAX_LEVELS, 10, 5};
    char count[16];
    for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
        int n = ls->n < tries[i] ? ls->n : tries[i];
        if (i > 0 && n == (ls->n < tries[i - 1] ? ls->n : tries[i - 1])) continue;
        char *text = text_of(R, ls, n);
        if (!text) return snprintf(err, (size_t)errlen, "out of memory"), NULL;
        snprintf(count, sizeof count, "%d", n);
        vars[text_slot].value = text;
        if (count_slot >= 0) vars[count_slot].value = count;
        char why[700];
        int last = i + 1 == sizeof tries / sizeof tries[0];
        if (!last && !au_exchange_fits(R, x, why, sizeof why)) {
            run_say(R, "  %s prompt with %d levels does not fit the context; showing fewer", x->name, n);
            free(text);
            continue;
        }
        char *out = au_exchange(R, ndir, x, err, errlen);
        free(text);
        return out;
    }
    return NULL;
}

static char *levels_as_grids(run_state *R, const level_set *ls, int n)
{
    (void)R;
    return run_levels_text(ls->levels, n);
}

char *mdl_feedback(run_state *R, const char *ndir, const char *code, const level_set *ls, char *err, int errlen)
{
    if (R->c->prompts == PROMPTS_PAPER) return pap_feedback(R, ndir, code, ls, err, errlen);
    char count[16];
    prompt_var v[] = {{"story", R->c->story}, {"code", code},       {"levels", NULL},
                      {"level_count", count},   {"target", R->flow}, {"evaluator_rules", R->evaluator_rules}};
    exchange_t x = {"feedback", "system", "feedback_specific", v, 6, NULL, 0, &au_task_feedback, NULL, 1};
    if (R->c->feedback_input != FBIN_IMAGE)
        return au_exchange_levels(R, ndir, &x, v, 2, 3, ls, levels_as_grids, err, errlen);
    char png[1600];
    snprintf(png, sizeof png, "%s/levels.png", ndir);
    long len;
    char *img = read_file(png, 64L << 20, &len, err, errlen);
    char *in_image = img ? prompt_load("rich", "levels_in_image", err, errlen) : NULL;
    char *out = NULL;
    if (in_image) {
        snprintf(count, sizeof count, "%d", ls->n);
        v[2].value = in_image;
        x.image = img, x.image_len = (size_t)len;
        out = au_exchange(R, ndir, &x, err, errlen);
    }
    free(in_image);
    free(img);
    return out;
}

int mdl_fitness(run_state *R, const char *ndir, const level_set *ls, double *fitness, char *err, int errlen)
{
    if (R->c->prompts == PROMPTS_PAPER) return pap_fitness(R, ndir, ls, fitness, err, errlen);
    int n = ls->n < 10 ? ls->n : 10;
    char count[16];
    snprintf(count, sizeof count, "%d", n);
    char *text = run_levels_text(ls->levels, n);
    if (!text) return -1;
    prompt_var v[] = {{"story", R->c->story},
                      {"levels", text},
                      {"level_count", count},
                      {"target", R->flow},
                      {"evaluator_rules", R->evaluator_rules}};
    exchange_t x = {"fitness", "system", "fitness_llm", v, 5, NULL, 0, &au_task_fitness, NULL, 1};
    char *reply = au_exchange(R, ndir, &x, err, errlen);
    free(text);
    if (!reply) return -1;
    int rc = prompt_parse_fitness(reply, fitness, err, errlen);
    free(reply);
    return rc;
}

int mdl_target(run_state *R, const char *dir, target_t *t, char *reason, int len)
{
    prompt_var v[] = {{"story", R->c->story}};
    /* the paper's prompts have no system message of their own for it */
    exchange_t x = {"target", R->c->prompts == PROMPTS_PAPER ? NULL : "system", "target_extraction", v, 1, NULL, 0,
                    &au_task_target, NULL, 1};
    char *reply = au_exchange(R, dir, &x, reason, len);
    if (!reply) return -1;
    int rc = target_from_json(reply, t, reason, len);
    free(reply);
    return rc == STORY_OK ? 0 : rc == STORY_REFUSED ? 3 : -1;
}
