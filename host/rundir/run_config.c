/* A run's settings: see run_config.h. */
#include "run_config.h"
#include "cpus.h"
#include "nn.h"
#include "ppo.h"
#include "version.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUN_FORMAT 1

void run_config_defaults(run_config *c)
{
    memset(c, 0, sizeof *c);
    c->scenario = 1;
    c->offline = 1;
    llm_config_defaults(&c->llm);
    c->pe = PE_COT;
    c->iterations = 6;
    c->align = 5;
    c->breadth = 2;
    c->got_best = 2;
    c->got_worst = 0;
    c->prompts = PROMPTS_PAPER;
    c->reward_api = -1; /* follow the profile (run_flags_parse) */
    c->got_refs = -1;
    c->ablation = ABL_FULL;
    c->feedback = FB_SPECIFIC;
    c->fitness_mode = FIT_HEURISTIC;
    c->feedback_input = FBIN_TEXT;
    c->trials = 3;
    c->fixes = 3;
    c->node_time = 1800;
    c->target_fitness = -1;
    c->steps = 50000000LL;
    c->envs = 600;
    c->threads = 0;
    snprintf(c->preset, sizeof c->preset, "paper");
    snprintf(c->backend, sizeof c->backend, "auto");
    snprintf(c->matmul, sizeof c->matmul, "fp32");
    c->seed = 0;
    c->train_timeout = 0;
    c->n_levels = 30;
    c->eval_seed = PPO_EVAL_SEED;
    c->check_envs = 64;
    c->check_timeout = 60;
}

void run_config_follow_profile(run_config *c)
{
    int rich = c->prompts == PROMPTS_RICH;
    if (c->reward_api < 0) c->reward_api = rich ? API_FULL : API_MINIMAL;
    if (c->got_refs < 0) c->got_refs = rich ? GRAPH_REFS_ENGINE : GRAPH_REFS_REFERENCE;
}

/* ---------------------------------------------------------------- profiles */

/* quick: the loop shown working on a CPU in minutes (docs/loop.md, "The
 * quick profile"): the tiny network on 64 environments, trained long enough
 * to beat random play on scenario 1 (docs/benchmarks.md), two alignment
 * rounds, a 16-environment reward check. */
static const struct {
    const char *name, *flags;
} run_profiles[] = {
    {"quick", "--preset tiny --envs 64 --steps 327680 --align 2 --check-envs 16"},
};

const char *run_profile_flags(const char *name)
{
    for (size_t i = 0; i < sizeof run_profiles / sizeof run_profiles[0]; i++)
        if (!strcmp(run_profiles[i].name, name)) return run_profiles[i].flags;
    return NULL;
}

int run_profile_argv(const char *name, char *buf, size_t len, char **argv, int max)
{
    const char *flags = run_profile_flags(name);
    if (!flags || len == 0) return 0;
    snprintf(buf, len, "%s", flags);
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, " ", &save); t && n < max; t = strtok_r(NULL, " ", &save)) argv[n++] = t;
    return n;
}

/* ---------------------------------------------------------------- names */

static const char *const abl_names[] = {"zs", "sa", "fb", "full"};
static const char *const fb_names[] = {"specific", "generic", "none"};
static const char *const fit_names[] = {"heuristic", "llm"};
static const char *const fbin_names[] = {"text", "image"};
static const char *const prompts_names[] = {"paper", "rich"};
static const char *const api_names[] = {"minimal", "full"};
static const char *const refs_names[] = {"reference", "engine"};
static const char *const accept_names[] = {"always", "improve"};

static int run_name_index(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], s)) return i;
    return -1;
}

int run_parse_ablation(const char *s) { return run_name_index(abl_names, 4, s); }
int run_parse_feedback(const char *s) { return run_name_index(fb_names, 3, s); }
int run_parse_fitness(const char *s) { return run_name_index(fit_names, 2, s); }
int run_parse_feedback_input(const char *s) { return run_name_index(fbin_names, 2, s); }
int run_parse_prompts(const char *s) { return run_name_index(prompts_names, 2, s); }
int run_parse_reward_api(const char *s) { return run_name_index(api_names, 2, s); }
int run_parse_got_refs(const char *s) { return run_name_index(refs_names, 2, s); }
int run_parse_accept(const char *s) { return run_name_index(accept_names, 2, s); }
const char *run_ablation_name(int a) { return a >= 0 && a < 4 ? abl_names[a] : "?"; }
const char *run_feedback_name(int f) { return f >= 0 && f < 3 ? fb_names[f] : "?"; }
const char *run_feedback_input_name(int f) { return f >= 0 && f < 2 ? fbin_names[f] : "?"; }
const char *run_prompts_name(int p) { return p >= 0 && p < 2 ? prompts_names[p] : "?"; }
const char *run_reward_api_name(int a) { return a >= 0 && a < 2 ? api_names[a] : "?"; }
const char *run_got_refs_name(int r) { return r >= 0 && r < 2 ? refs_names[r] : "?"; }
const char *run_accept_name(int a) { return a >= 0 && a < 2 ? accept_names[a] : "?"; }

const char *run_accept_rule(int pe, int a)
{
    if (pe == PE_COT)
        return a == GRAPH_ACCEPT_IMPROVE ? "each iteration refines the best node so far"
                                         : "each iteration refines the latest node";
    return a == GRAPH_ACCEPT_IMPROVE ? "only roots and nodes that scored above their parent are expanded"
                                     : "the best node with room for a child is expanded";
}

/* ---------------------------------------------------------------- details */

static const char *const node_seed_names[] = {"same", "offset"};

int run_parse_node_seeds(const char *s) { return run_name_index(node_seed_names, 2, s); }
const char *run_node_seeds_name(int v) { return v >= 0 && v < 2 ? node_seed_names[v] : "?"; }

uint64_t run_node_seed(const run_config *c, int id)
{
    return c->seed + (c->node_seeds == NODE_SEEDS_OFFSET ? (uint64_t)id : 0);
}

static void details_to_json(const run_config *c, json_t *o)
{
    for (int k = 0; k < PPO_N_DETAILS; k++)
        json_object_set_new(o, ppo_details[k].key, json_string(ppo_details[k].names[c->details[k]]));
    json_object_set_new(o, "node_seeds", json_string(node_seed_names[c->node_seeds]));
}

/* A config.json written before these settings existed belongs to a run
 * made the engine's first way: a missing key is that way (value 1). */
static int details_from_json(json_t *o, run_config *c, char *err, int errlen)
{
    for (int k = 0; k <= PPO_N_DETAILS; k++) {
        const char *key = k < PPO_N_DETAILS ? ppo_details[k].key : "node_seeds";
        json_t *v = json_object_get(o, key);
        int value = 1;
        if (v) {
            const char *name = json_is_string(v) ? json_string_value(v) : "";
            value = k < PPO_N_DETAILS ? ppo_detail_parse(k, name) : run_parse_node_seeds(name);
        }
        if (value < 0) {
            snprintf(err, (size_t)errlen, "config.json: '%s' unknown", key);
            return -1;
        }
        *(k < PPO_N_DETAILS ? &c->details[k] : &c->node_seeds) = value;
    }
    return 0;
}

/* ---------------------------------------------------------------- config */

json_t *run_config_to_json(const run_config *given)
{
    run_config settled = *given, *c = &settled;
    run_config_follow_profile(c);
    json_t *o = json_object();
    json_object_set_new(o, "format", json_integer(RUN_FORMAT));
    json_object_set_new(o, "scenario", json_integer(c->scenario));
    json_object_set_new(o, "story", json_string(c->story));
    json_object_set_new(o, "init_reward", c->init_reward[0] ? json_string(c->init_reward) : json_null());
    json_object_set_new(o, "author", json_string(c->offline ? "offline" : "openai"));
    json_object_set_new(o, "author_label",
                        json_string(c->offline ? "rule-based offline author (baseline, not a language model)"
                                               : "language model"));
    if (!c->offline) {
        char *lj = llm_config_json(&c->llm);
        json_t *l = lj ? json_loads(lj, 0, NULL) : NULL;
        free(lj);
        json_object_set_new(o, "llm", l ? l : json_null());
    }
    if (c->profile[0]) {
        json_object_set_new(o, "profile", json_string(c->profile));
        json_object_set_new(o, "profile_flags", json_string(run_profile_flags(c->profile)));
    }
    json_object_set_new(o, "pe", json_string(graph_pe_name(c->pe)));
    json_object_set_new(o, "iterations", json_integer(c->iterations));
    json_object_set_new(o, "align", json_integer(c->align));
    json_object_set_new(o, "breadth", json_integer(c->breadth));
    json_object_set_new(o, "got_best", json_integer(c->got_best));
    json_object_set_new(o, "got_worst", json_integer(c->got_worst));
    json_object_set_new(o, "got_refs", json_string(run_got_refs_name(c->got_refs)));
    json_object_set_new(o, "prompts", json_string(run_prompts_name(c->prompts)));
    json_object_set_new(o, "reward_api", json_string(run_reward_api_name(c->reward_api)));
    json_object_set_new(o, "ablation", json_string(abl_names[c->ablation]));
    json_object_set_new(o, "feedback", json_string(fb_names[c->feedback]));
    json_object_set_new(o, "fitness", json_string(fit_names[c->fitness_mode]));
    json_object_set_new(o, "feedback_input", json_string(fbin_names[c->feedback_input]));
    json_object_set_new(o, "trials", json_integer(c->trials));
    json_object_set_new(o, "fixes", json_integer(c->fixes));
    json_object_set_new(o, "node_time", json_real(c->node_time));
    json_object_set_new(o, "evaluator_rules", json_boolean(c->evaluator_rules));
    json_object_set_new(o, "target_fitness", json_real(c->target_fitness));
    json_object_set_new(o, "accept", json_string(accept_names[c->accept]));
    json_object_set_new(o, "steps", json_integer(c->steps));
    json_object_set_new(o, "envs", json_integer(c->envs));
    json_object_set_new(o, "threads", json_integer(c->threads));
    /* what a reader needs to tell how the result was made */
    char why[160];
    cpu_budget cb = cpus_current();
    if (c->threads > 0) snprintf(why, sizeof why, "--threads %d", c->threads);
    else cpus_describe(&cb, why, sizeof why);
    json_object_set_new(o, "threads_at_start", json_integer(c->threads > 0 ? c->threads : cb.threads));
    json_object_set_new(o, "threads_reason", json_string(why));
    json_object_set_new(o, "pcgrllm_version", json_string(pcg_version()));
    json_object_set_new(o, "pcgrllm_commit", pcg_commit()[0] ? json_string(pcg_commit()) : json_null());
    json_object_set_new(o, "preset", json_string(c->preset));
    json_object_set_new(o, "backend", json_string(c->backend));
    json_object_set_new(o, "matmul", json_string(c->matmul));
    json_object_set_new(o, "seed", json_integer((json_int_t)c->seed));
    json_object_set_new(o, "train_timeout", json_real(c->train_timeout));
    json_object_set_new(o, "levels", json_integer(c->n_levels));
    json_object_set_new(o, "eval_seed", json_integer((json_int_t)c->eval_seed));
    json_object_set_new(o, "check_envs", json_integer(c->check_envs));
    json_object_set_new(o, "check_timeout", json_real(c->check_timeout));
    details_to_json(c, o);
    return o;
}

#define GET_INT(key, dst, lo, hi)                                                              \
    do {                                                                                       \
        json_t *v_ = json_object_get(o, key);                                                  \
        if (!json_is_integer(v_) || json_integer_value(v_) < (lo) || json_integer_value(v_) > (hi)) { \
            snprintf(err, (size_t)errlen, "config.json: '%s' missing or out of range", key);    \
            return -1;                                                                         \
        }                                                                                      \
        dst = json_integer_value(v_);                                                          \
    } while (0)
#define GET_REAL(key, dst, lo, hi)                                                             \
    do {                                                                                       \
        json_t *v_ = json_object_get(o, key);                                                  \
        if (!json_is_number(v_) || !(json_number_value(v_) >= (lo) && json_number_value(v_) <= (hi))) { \
            snprintf(err, (size_t)errlen, "config.json: '%s' missing or out of range", key);    \
            return -1;                                                                         \
        }                                                                                      \
        dst = json_number_value(v_);                                                           \
    } while (0)
#define GET_NAME(key, names, n, dst)                                                           \
    do {                                                                                       \
        json_t *v_ = json_object_get(o, key);                                                  \
        int i_ = json_is_string(v_) ? run_name_index(names, n, json_string_value(v_)) : -1;   \
        if (i_ < 0) {                                                                          \
            snprintf(err, (size_t)errlen, "config.json: '%s' missing or unknown", key);         \
            return -1;                                                                         \
        }                                                                                      \
        dst = i_;                                                                              \
    } while (0)

/* A key that runs made before it existed may lack: absent is the old
 * default, but present it must be well formed (ok), not quietly read as
 * that default.  0, or -1 with err. */
static int optional_key(const json_t *v, int ok, const char *key, const char *what, char *err, int errlen)
{
    if (!v || ok) return 0;
    snprintf(err, (size_t)errlen, "config.json: '%s' must be %s", key, what);
    return -1;
}

/* The author and its model server (the key's variable is never read from
 * a stored file: host/llm/trust.h). */
static int author_from_json(json_t *o, run_config *c, char *err, int errlen)
{
    static const char *const author_names[] = {"openai", "offline"};
    GET_NAME("author", author_names, 2, c->offline);
    if (!c->offline) {
        json_t *l = json_object_get(o, "llm");
        /* the key's variable is never read from here (host/llm/trust.h); the
         * server is checked by resume_server */
        json_t *bu = json_object_get(l, "base_url"), *mo = json_object_get(l, "model");
        json_t *te = json_object_get(l, "temperature");
        if (optional_key(mo, json_is_string(mo), "llm.model", "a string", err, errlen) ||
            optional_key(te, json_is_number(te), "llm.temperature", "a number", err, errlen))
            return -1;
        if (json_is_string(bu) && !llm_base_url_ok(json_string_value(bu))) {
            snprintf(err, (size_t)errlen, "config.json: 'llm.base_url' must be an http:// or https:// address");
            return -1;
        }
        if (json_is_string(bu)) snprintf(c->llm.base_url, sizeof c->llm.base_url, "%s", json_string_value(bu));
        if (json_is_string(mo)) snprintf(c->llm.model, sizeof c->llm.model, "%s", json_string_value(mo));
        if (json_is_number(te)) c->llm.temperature = json_number_value(te);
    }
    return 0;
}

/* The search: method, iterations, references, prompts, ablation, feedback. */
static int search_from_json(json_t *o, run_config *c, char *err, int errlen)
{
    static const char *const pe_names[] = {"cot", "tot", "got"};
    long long v;
    GET_NAME("pe", pe_names, 3, c->pe);
    GET_INT("iterations", v, 1, RUN_ITERATIONS_MAX);
    c->iterations = (int)v;
    GET_INT("align", v, 0, 100);
    c->align = (int)v;
    GET_INT("breadth", v, 1, GRAPH_MAX_BREADTH);
    c->breadth = (int)v;
    /* runs made before the setting existed showed the two best */
    c->got_best = 2;
    c->got_worst = 0;
    if (json_object_get(o, "got_best")) GET_INT("got_best", c->got_best, 0, GRAPH_MAX_REF_KIND);
    if (json_object_get(o, "got_worst")) GET_INT("got_worst", c->got_worst, 0, GRAPH_MAX_REF_KIND);
    /* runs made before these were stored were made with today's "rich" prompts */
    c->prompts = PROMPTS_RICH;
    c->reward_api = API_FULL;
    c->got_refs = GRAPH_REFS_ENGINE;
    if (json_object_get(o, "prompts")) GET_NAME("prompts", prompts_names, 2, c->prompts);
    if (json_object_get(o, "reward_api")) GET_NAME("reward_api", api_names, 2, c->reward_api);
    if (json_object_get(o, "got_refs")) GET_NAME("got_refs", refs_names, 2, c->got_refs);
    GET_NAME("ablation", abl_names, 4, c->ablation);
    GET_NAME("feedback", fb_names, 3, c->feedback);
    GET_NAME("fitness", fit_names, 2, c->fitness_mode);
    GET_NAME("feedback_input", fbin_names, 2, c->feedback_input);
    GET_INT("trials", v, 1, 100);
    c->trials = (int)v;
    GET_INT("fixes", v, 0, 100);
    c->fixes = (int)v;
    json_t *nt = json_object_get(o, "node_time"), *er = json_object_get(o, "evaluator_rules");
    if (optional_key(nt, json_is_number(nt) && json_number_value(nt) >= 0 && json_number_value(nt) <= RUN_SECONDS_MAX,
                     "node_time", "a number of seconds 0..1e9", err, errlen) ||
        optional_key(er, json_is_boolean(er), "evaluator_rules", "true or false", err, errlen))
        return -1;
    if (nt) c->node_time = json_number_value(nt);
    c->evaluator_rules = json_is_true(er); /* absent before the option: off */
    GET_REAL("target_fitness", c->target_fitness, -1, 1); /* -1: none */
    c->accept = GRAPH_ACCEPT_ALWAYS; /* runs made before the option refined every node they made */
    if (json_object_get(o, "accept")) GET_NAME("accept", accept_names, 2, c->accept);
    return 0;
}

/* Training and evaluation of each node. */
static int training_from_json(json_t *o, run_config *c, char *err, int errlen)
{
    long long v;
    double d;
    GET_INT("steps", v, 1, (long long)1 << 50);
    c->steps = v;
    GET_INT("envs", v, 1, 1 << 24);
    c->envs = (int)v;
    GET_INT("threads", v, 0, 4096);
    c->threads = (int)v;
    json_t *p = json_object_get(o, "preset"), *b = json_object_get(o, "backend");
    if (!json_is_string(p) || !json_is_string(b)) {
        snprintf(err, (size_t)errlen, "config.json: 'preset' or 'backend' missing");
        return -1;
    }
    if (!nn_preset_known(json_string_value(p))) {
        snprintf(err, (size_t)errlen, "config.json: 'preset' must be " NN_PRESETS);
        return -1;
    }
    snprintf(c->preset, sizeof c->preset, "%s", json_string_value(p));
    json_t *pf = json_object_get(o, "profile"); /* absent: the run named no profile */
    const char *bs = json_string_value(b);
    if (optional_key(pf, json_is_null(pf) || (json_is_string(pf) && run_profile_flags(json_string_value(pf))),
                     "profile", "a profile's name (quick) or null", err, errlen))
        return -1;
    if (strcmp(bs, "cpu") && strcmp(bs, "cuda") && strcmp(bs, "auto")) {
        snprintf(err, (size_t)errlen, "config.json: 'backend' must be cpu, cuda or auto");
        return -1;
    }
    if (json_is_string(pf)) snprintf(c->profile, sizeof c->profile, "%s", json_string_value(pf));
    snprintf(c->backend, sizeof c->backend, "%s", bs);
    json_t *mm = json_object_get(o, "matmul"); /* absent in runs made before the option */
    if (optional_key(mm, json_is_string(mm), "matmul", "fp32, tf32 or bf16", err, errlen)) return -1;
    const char *mms = json_is_string(mm) ? json_string_value(mm) : "fp32";
    if (strcmp(mms, "fp32") && strcmp(mms, "tf32") && strcmp(mms, "bf16")) {
        snprintf(err, (size_t)errlen, "config.json: 'matmul' must be fp32, tf32 or bf16");
        return -1;
    }
    snprintf(c->matmul, sizeof c->matmul, "%s", mms);
    GET_INT("seed", v, 0, LLONG_MAX);
    c->seed = (uint64_t)v;
    GET_REAL("train_timeout", d, 0, RUN_SECONDS_MAX);
    c->train_timeout = d;
    GET_INT("levels", v, 1, RUN_LEVELS_MAX);
    c->n_levels = (int)v;
    GET_INT("eval_seed", v, 0, LLONG_MAX);
    c->eval_seed = (uint64_t)v;
    GET_INT("check_envs", v, 1, RUN_CHECK_ENVS_MAX);
    c->check_envs = (int)v;
    GET_REAL("check_timeout", c->check_timeout, RUN_CHECK_TIMEOUT_MIN, RUN_CHECK_TIMEOUT_MAX);
    return 0;
}

/* Read a stored config back (resume).  The LLM settings other than those
 * stored (timeouts, retries) keep the values of c. */
int run_config_from_json(json_t *o, run_config *c, char *err, int errlen)
{
    long long v;
    GET_INT("format", v, RUN_FORMAT, RUN_FORMAT);
    GET_INT("scenario", v, 0, 4);
    c->scenario = (int)v;
    json_t *s = json_object_get(o, "story");
    if (!json_is_string(s) || strlen(json_string_value(s)) > STORY_MAX_LEN) {
        snprintf(err, (size_t)errlen, "config.json: 'story' missing or too long");
        return -1;
    }
    snprintf(c->story, sizeof c->story, "%s", json_string_value(s));
    json_t *ir = json_object_get(o, "init_reward"); /* absent in runs made before the option */
    if (ir && !json_is_null(ir) && (!json_is_string(ir) || !json_string_value(ir)[0] ||
                                    strlen(json_string_value(ir)) >= sizeof c->init_reward)) {
        snprintf(err, (size_t)errlen, "config.json: 'init_reward' must be a path or null");
        return -1;
    }
    snprintf(c->init_reward, sizeof c->init_reward, "%s", json_is_string(ir) ? json_string_value(ir) : "");
    if (author_from_json(o, c, err, errlen) || search_from_json(o, c, err, errlen) ||
        training_from_json(o, c, err, errlen))
        return -1;
    return details_from_json(o, c, err, errlen);
}
