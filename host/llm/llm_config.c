/* The client's config: defaults, command-line flags, the JSON a run
 * directory records, and what is asked of the server before a call (is it
 * there, how large is its context).  The call itself is in llm.c. */
#include "llm.h"
#include <getopt.h>
#include "llm_http.h"
#include "llm_internal.h"
#include "util.h"
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#define LLM_RETRIES_MAX 10
#define LLM_CONTINUATIONS_MAX 8

void llm_config_defaults(llm_config *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->base_url, sizeof c->base_url, "%s", LLM_DEFAULT_BASE_URL);
    snprintf(c->model, sizeof c->model, "%s", LLM_DEFAULT_MODEL);
    snprintf(c->api_key_env, sizeof c->api_key_env, "%s", LLM_DEFAULT_KEY_ENV);
    snprintf(c->max_tokens_field, sizeof c->max_tokens_field, "max_tokens");
    c->temperature = 0.0;
    c->seed = -1;
    c->max_tokens = -1;
    c->connect_timeout = 10.0;
    c->total_timeout = 600.0;
    c->retries = 4;
    c->backoff = 2.0;
    c->backoff_max = 60.0;
    c->retry_after_max = 300.0;
    c->max_continuations = 2;
    c->call_time = 900.0;
    c->stream = LLM_STREAM_ON;
    c->stop = 1;
    c->constrain = LLM_CONSTRAIN_AUTO;
    c->max_response_bytes = 8L << 20;
    c->usage = NULL;
}

/* ---- context size ------------------------------------------------------------------ */

long llm_estimate_tokens(const llm_message *msgs, int n)
{
    long bytes = 0;
    for (int i = 0; i < n; i++) bytes += (long)strlen(msgs[i].content ? msgs[i].content : "") + 24;
    return bytes / 3 + 16;
}

int llm_fits(const llm_config *c, const llm_message *msgs, int n, long reply_tokens, char *why, int whylen)
{
    long ctx = c->server && c->server->context > 0 ? c->server->context : c->context;
    if (ctx <= 0) return 1;
    long need = llm_estimate_tokens(msgs, n);
    if (need + reply_tokens <= ctx) return 1;
    snprintf(why, (size_t)whylen,
             "the prompt needs about %ld tokens and the reply up to %ld, more than the server's context of %ld "
             "tokens; start the server with a larger context (llama.cpp: -c / --n_ctx, Ollama: "
             "OLLAMA_CONTEXT_LENGTH, vLLM: --max-model-len), or give a smaller --max-tokens",
             need, reply_tokens, ctx);
    return 0;
}

/* The server's root: base_url without a trailing "/v1" (or "/chat/completions"). */
static void server_root(const char *base, char *root, size_t len)
{
    size_t bl = strlen(base);
    while (bl > 0 && base[bl - 1] == '/') bl--;
    if (bl >= 17 && !strncmp(base + bl - 17, "/chat/completions", 17)) bl -= 17;
    if (bl >= 3 && !strncmp(base + bl - 3, "/v1", 3)) bl -= 3;
    snprintf(root, len, "%.*s", (int)bl, base);
}

/* The first integer found under one of the keys, searching objects and
 * arrays of v depth-first (the model lists are arrays of objects). */
static long find_context(json_t *v, const char *const *keys, int depth)
{
    if (depth > 4) return 0;
    if (json_is_object(v)) {
        for (int k = 0; keys[k]; k++) {
            json_t *x = json_object_get(v, keys[k]);
            if (json_is_integer(x) && json_integer_value(x) > 0) return (long)json_integer_value(x);
        }
        const char *key;
        json_t *child;
        json_object_foreach(v, key, child) {
            long n = find_context(child, keys, depth + 1);
            if (n > 0) return n;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *child;
        json_array_foreach(v, i, child) {
            long n = find_context(child, keys, depth + 1);
            if (n > 0) return n;
        }
    }
    return 0;
}

int llm_check_server(const llm_config *c, char *err, int errlen)
{
    char root[600], url[700], why[600];
    server_root(c->base_url, root, sizeof root);
    snprintf(url, sizeof url, "%s/v1/models", root);
    long status = llm_http_get_status(c, llm_api_key(c), url, c->connect_timeout + 5.0, why, sizeof why);
    if (status == 0)
        return llm_fail(c, err, errlen, "the model server at %s does not answer (%s); start it, or check --base-url",
                    c->base_url, why);
    if (status == 401 || status == 403)
        return llm_fail(c, err, errlen, "the model server at %s refuses the key (HTTP %ld); check $%s", c->base_url, status,
                    c->api_key_env[0] ? c->api_key_env : LLM_DEFAULT_KEY_ENV);
    if (c->server) c->server->answered = 1;
    return 0;
}

long llm_probe_context(const llm_config *c, char *from, size_t fromlen)
{
    if (c->context > 0) {
        snprintf(from, fromlen, "--llm-context");
        return c->context;
    }
    char root[600], url[700];
    server_root(c->base_url, root, sizeof root);
    /* the runtime context, never the model's trained maximum (n_ctx_train) */
    static const char *const keys[] = {"n_ctx", "max_model_len", "loaded_context_length", "context_length", NULL};
    static const char *const paths[] = {"/props", "/v1/models", "/api/v0/models", "/api/ps"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        snprintf(url, sizeof url, "%s%s", root, paths[i]);
        json_t *j = llm_http_get_json(c, llm_api_key(c), url, 5.0);
        long n = j ? find_context(j, keys, 0) : 0;
        json_decref(j);
        if (n > 0) {
            snprintf(from, fromlen, "GET %s", paths[i]);
            return n;
        }
    }
    snprintf(from, fromlen, "unknown");
    return 0;
}

/* ---- config as flags and JSON --------------------------------------------------- */

const char *const llm_flag_names[] = {
    "base-url",    "model",         "api-key-env",      "temperature", "llm-seed",  "max-tokens",
    "max-tokens-field", "connect-timeout", "llm-timeout", "llm-call-time", "llm-retries", "llm-backoff",
    "max-continuations", "stream",   "llm-stop",         "constrain",   "llm-context", NULL,
};

void llm_options_table(const struct option *own, size_t n_own, int val, struct option *table, size_t cap)
{
    size_t n = n_own < cap ? n_own : cap - 1;
    memcpy(table, own, sizeof *own * n);
    for (int i = 0; llm_flag_names[i] && n < cap - 1; i++)
        table[n++] = (struct option){llm_flag_names[i], required_argument, 0, val};
    table[n] = (struct option){0, 0, 0, 0};
}

static int copy_flag(char *dst, size_t cap, const char *v, const char *flag, char *err, int errlen)
{
    if (!v || !*v || strlen(v) >= cap) {
        snprintf(err, (size_t)errlen, "%s needs a value of 1 to %zu characters", flag, cap - 1);
        return -1;
    }
    memcpy(dst, v, strlen(v) + 1);
    return 1;
}

int llm_base_url_ok(const char *url)
{
    if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) return 0;
    for (const unsigned char *p = (const unsigned char *)url; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f) return 0;
    return 1;
}

/* The flags that take text: 1 applied, -1 a bad value, 0 not one of them. */
static int text_flag(llm_config *c, const char *flag, const char *value, char *err, int errlen)
{
    if (!strcmp(flag, "--base-url")) {
        if (!value || !llm_base_url_ok(value)) {
            snprintf(err, (size_t)errlen, "--base-url must start with http:// or https:// (e.g. http://127.0.0.1:8080/v1)");
            return -1;
        }
        return copy_flag(c->base_url, sizeof c->base_url, value, flag, err, errlen);
    }
    if (!strcmp(flag, "--model")) return copy_flag(c->model, sizeof c->model, value, flag, err, errlen);
    if (!strcmp(flag, "--api-key-env")) {
        if (value && !*value) {
            c->api_key_env[0] = 0;
            return 1;
        }
        return copy_flag(c->api_key_env, sizeof c->api_key_env, value, flag, err, errlen);
    }
    if (!strcmp(flag, "--max-tokens-field")) {
        if (!value || (strcmp(value, "max_tokens") && strcmp(value, "max_completion_tokens"))) {
            snprintf(err, (size_t)errlen, "--max-tokens-field must be max_tokens or max_completion_tokens");
            return -1;
        }
        return copy_flag(c->max_tokens_field, sizeof c->max_tokens_field, value, flag, err, errlen);
    }
    return 0;
}

/* The flags that take a number of seconds or a temperature: as text_flag. */
static int real_flag(llm_config *c, const char *flag, const char *value, char *err, int errlen)
{
    struct {
        const char *name;
        double lo, hi;
        double *dst;
    } dflags[] = {
        {"--temperature", 0.0, 2.0, &c->temperature},
        {"--connect-timeout", 0.1, 3600.0, &c->connect_timeout},
        {"--llm-timeout", 0.1, 86400.0, &c->total_timeout},
        {"--llm-call-time", 1.0, 86400.0, &c->call_time},
        {"--llm-backoff", 0.0, 600.0, &c->backoff},
    };
    for (size_t i = 0; i < sizeof dflags / sizeof dflags[0]; i++) {
        if (strcmp(flag, dflags[i].name)) continue;
        double d;
        if (parse_double(value, dflags[i].lo, dflags[i].hi, &d) != 0) {
            snprintf(err, (size_t)errlen, "%s needs a number from %g to %g", flag, dflags[i].lo, dflags[i].hi);
            return -1;
        }
        *dflags[i].dst = d;
        return 1;
    }
    return 0;
}

/* The flags that take one of two words: as text_flag. */
static int switch_flag(llm_config *c, const char *flag, const char *value, char *err, int errlen)
{
    struct {
        const char *name, *on, *off;
        int *dst, on_value, off_value;
    } switches[] = {
        {"--stream", "on", "off", &c->stream, LLM_STREAM_ON, LLM_STREAM_OFF},
        {"--llm-stop", "on", "off", &c->stop, 1, 0},
        {"--constrain", "auto", "off", &c->constrain, LLM_CONSTRAIN_AUTO, LLM_CONSTRAIN_OFF},
    };
    for (size_t i = 0; i < sizeof switches / sizeof switches[0]; i++) {
        if (strcmp(flag, switches[i].name)) continue;
        if (value && !strcmp(value, switches[i].on)) *switches[i].dst = switches[i].on_value;
        else if (value && !strcmp(value, switches[i].off)) *switches[i].dst = switches[i].off_value;
        else {
            snprintf(err, (size_t)errlen, "%s takes %s or %s", flag, switches[i].on, switches[i].off);
            return -1;
        }
        return 1;
    }
    return 0;
}

/* The flags that take an integer: as text_flag.  Each sets a long or an
 * int; needs, where set, is what the error line says the flag needs in
 * place of the bare range. */
static int integer_flag(llm_config *c, const char *flag, const char *value, char *err, int errlen)
{
    struct {
        const char *name;
        long lo, hi;
        long *ldst;
        int *idst;
        const char *needs;
    } iflags[] = {
        {"--llm-context", 0, 10000000, &c->context, NULL,
         "the server's context size in tokens (0: read it from the server)"},
        {"--llm-seed", -1, 2147483647L, &c->seed, NULL, "an integer from -1 (not sent) to 2147483647"},
        {"--max-tokens", 0, 1000000, &c->max_tokens, NULL, "an integer from 0 (not sent) to 1000000"},
        {"--llm-retries", 0, LLM_RETRIES_MAX, NULL, &c->retries, NULL},
        {"--max-continuations", 0, LLM_CONTINUATIONS_MAX, NULL, &c->max_continuations, NULL},
    };
    for (size_t i = 0; i < sizeof iflags / sizeof iflags[0]; i++) {
        if (strcmp(flag, iflags[i].name)) continue;
        long l;
        if (parse_int(value, iflags[i].lo, iflags[i].hi, &l) != 0) {
            if (iflags[i].needs) snprintf(err, (size_t)errlen, "%s needs %s", flag, iflags[i].needs);
            else snprintf(err, (size_t)errlen, "%s needs an integer from %ld to %ld", flag, iflags[i].lo, iflags[i].hi);
            return -1;
        }
        if (iflags[i].ldst) *iflags[i].ldst = l;
        else *iflags[i].idst = (int)l;
        return 1;
    }
    return 0;
}

int llm_config_flag(llm_config *c, const char *flag, const char *value, char *err, int errlen)
{
    int rc = text_flag(c, flag, value, err, errlen);
    if (!rc) rc = real_flag(c, flag, value, err, errlen);
    if (!rc) rc = switch_flag(c, flag, value, err, errlen);
    if (!rc) rc = integer_flag(c, flag, value, err, errlen);
    return rc;
}

const char *llm_flags_help(void)
{
    return "  --base-url URL          OpenAI-compatible server, ending in /v1 (default " LLM_DEFAULT_BASE_URL ")\n"
           "  --model NAME            model name as the server knows it (default " LLM_DEFAULT_MODEL ")\n"
           "  --api-key-env VAR       environment variable holding the API key (default " LLM_DEFAULT_KEY_ENV
           "; \"\" sends none)\n"
           "  --temperature T         sampling temperature, always sent (default 0)\n"
           "  --llm-seed N            sampling seed sent to the server (default: not sent)\n"
           "  --max-tokens N          reply token limit for every task (default: sized per task,\n"
           "                          1280 for a reward, 600 feedback, 300 JSON, 1024 text; 0: not sent)\n"
           "  --max-tokens-field F    max_tokens or max_completion_tokens (newer OpenAI models)\n"
           "  --connect-timeout S     seconds to connect (default 10)\n"
           "  --llm-timeout S         seconds for one request (default 600)\n"
           "  --llm-call-time S       seconds for one call: requests, waits, continuations (default 900)\n"
           "  --llm-retries N         retries on network errors, 408, 429 and 5xx (default 4)\n"
           "  --llm-backoff S         first retry wait, doubled each time, with jitter (default 2)\n"
           "  --max-continuations N   follow-ups for a reply cut by the token limit (default 2)\n"
           "  --stream on|off         stream replies, stop early when the answer is complete (default on)\n"
           "  --llm-stop on|off       send end-of-turn stop sequences (default on; off for OpenAI o-series)\n"
           "  --constrain auto|off    a JSON schema for JSON answers where the server takes one (default auto)\n"
           "  --llm-context N         the server's context in tokens (default: read from the server)\n";
}

char *llm_config_json(const llm_config *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "provider", json_string("openai-compatible"));
    json_object_set_new(o, "base_url", llm_jstr(c->base_url));
    json_object_set_new(o, "model", llm_jstr(c->model));
    json_object_set_new(o, "api_key_set", json_boolean(llm_api_key(c) != NULL));
    json_object_set_new(o, "temperature", json_real(c->temperature));
    json_object_set_new(o, "seed", c->seed >= 0 ? json_integer(c->seed) : json_null());
    json_object_set_new(o, "max_tokens", c->max_tokens >= 0 ? json_integer(c->max_tokens) : json_string("per task"));
    json_object_set_new(o, "max_tokens_field", llm_jstr(c->max_tokens_field));
    json_object_set_new(o, "connect_timeout_s", json_real(c->connect_timeout));
    json_object_set_new(o, "request_timeout_s", json_real(c->total_timeout));
    json_object_set_new(o, "retries", json_integer(c->retries));
    json_object_set_new(o, "backoff_s", json_real(c->backoff));
    json_object_set_new(o, "max_continuations", json_integer(c->max_continuations));
    json_object_set_new(o, "call_time_s", json_real(c->call_time));
    json_object_set_new(o, "stream", json_boolean(c->stream == LLM_STREAM_ON));
    json_object_set_new(o, "stop_sequences", json_boolean(c->stop));
    json_object_set_new(o, "constrain", json_string(c->constrain == LLM_CONSTRAIN_AUTO ? "auto" : "off"));
    json_object_set_new(o, "context", c->context > 0 ? json_integer(c->context) : json_null());
    char *s = json_dumps(o, JSON_INDENT(2));
    json_decref(o);
    if (s) llm_redact(c, s);
    return s;
}
