/* OpenAI-compatible chat completions: the request, the call (budgets,
 * retries, continuations) and the config.  HTTP and the event stream are in
 * llm_http.c, reading replies in llm_reply.c.  See llm.h for the contract. */
#include "llm.h"
#include "llm_http.h"
#include "util.h"
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LLM_RETRIES_MAX 10
#define LLM_CONTINUATIONS_MAX 8
#define LLM_SNIPPET 200

static const char continue_prompt[] =
    "Your reply was cut off by the output length limit. Continue exactly where it stopped: "
    "do not repeat anything already written, do not restart the answer and do not open a new "
    "code block.";

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

/* ---- the key and its redaction ------------------------------------------------ */

static const char *api_key(const llm_config *c)
{
    if (!c->api_key_env[0]) return NULL;
    const char *k = getenv(c->api_key_env);
    return k && *k ? k : NULL;
}

/* Replace each occurrence of key in s, in place.  Keys of 10 bytes or more
 * become "[redacted]"; shorter ones become as many '*'.  Never grows s. */
static void redact_with(char *s, const char *key)
{
    if (!s || !key || !*key) return;
    size_t kl = strlen(key);
    static const char tag[] = "[redacted]";
    size_t tl = sizeof tag - 1;
    char *p = s;
    while ((p = strstr(p, key)) != NULL) {
        if (kl >= tl) {
            memcpy(p, tag, tl);
            memmove(p + tl, p + kl, strlen(p + kl) + 1);
            p += tl;
        } else {
            memset(p, '*', kl);
            p += kl;
        }
    }
}

void llm_redact(const llm_config *c, char *s)
{
    redact_with(s, api_key(c));
}

/* Keys shorter than this are not secrets (local servers take any text, often
 * "ollama" or "none"); redacting them inside a reply would corrupt code. */
#define LLM_REDACT_REPLY_MIN 8

/* The only way llm_chat writes err: format, flatten to one line, redact. */
static int fail(const llm_config *c, char *err, int errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(const llm_config *c, char *err, int errlen, const char *fmt, ...)
{
    if (!err || errlen <= 0) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, (size_t)errlen, fmt, ap);
    va_end(ap);
    for (char *p = err; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
    redact_with(err, api_key(c));
    return -1;
}

/* A short printable one-line excerpt of server text, for error messages. */

/* ---- text helpers ----------------------------------------------------------------- */

char *llm_base64(const void *data, size_t len)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *d = data;
    size_t out_len = 4 * ((len + 2) / 3);
    char *out = malloc(out_len + 1);
    if (!out) return NULL;
    size_t j = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16;
        if (i + 1 < len) v |= (uint32_t)d[i + 1] << 8;
        if (i + 2 < len) v |= d[i + 2];
        out[j++] = tab[(v >> 18) & 63];
        out[j++] = tab[(v >> 12) & 63];
        out[j++] = i + 1 < len ? tab[(v >> 6) & 63] : '=';
        out[j++] = i + 2 < len ? tab[v & 63] : '=';
    }
    out[j] = 0;
    return out;
}

/* A copy of s with invalid UTF-8 bytes replaced by '?' (jansson only takes UTF-8). */
static char *utf8_clean(const char *s)
{
    size_t n = strlen(s);
    char *o = malloc(n + 1);
    if (!o) return NULL;
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        int ok = len > 0 && i + (size_t)len <= n;
        for (int k = 1; ok && k < len; k++)
            if (((unsigned char)s[i + (size_t)k] >> 6) != 2) ok = 0;
        if (ok && len == 2 && c < 0xC2) ok = 0;
        if (ok) {
            memcpy(o + i, s + i, (size_t)len);
            i += (size_t)len;
        } else {
            o[i++] = '?';
        }
    }
    o[n] = 0;
    return o;
}

static json_t *jstr(const char *s)
{
    json_t *j = json_string(s ? s : "");
    if (j) return j;
    char *c = utf8_clean(s);
    if (!c) return NULL;
    j = json_string(c);
    free(c);
    return j;
}


/* ---- request body --------------------------------------------------------------- */

/* Per-task budgets: a reward (a short plan and one function) is about a
 * thousand tokens; feedback is a few sentences; the JSON answers a line. */
#define TOKENS_CODE 1280
#define TOKENS_TEXT 1024

long llm_task_tokens(const llm_config *c, const llm_task *task)
{
    if (c->max_tokens >= 0) return c->max_tokens;
    if (task && task->max_tokens > 0) return task->max_tokens;
    return task && task->kind == LLM_CODE ? TOKENS_CODE : TOKENS_TEXT;
}

/* End-of-turn markers of common chat formats.  A model served without its
 * chat template (or without chat training) writes them as text and goes on
 * with an imagined next turn; the server stops at them instead. */
static const char *const stop_sequences[] = {"<end_of_turn>", "<|im_end|>", "<|eot_id|>", "<start_of_turn>"};

static json_t *message_json(const llm_message *m, char *why, size_t whylen)
{
    const char *role = m->role ? m->role : "user";
    if (strcmp(role, "system") && strcmp(role, "user") && strcmp(role, "assistant")) {
        snprintf(why, whylen, "message role '%.32s' is not system, user or assistant", role);
        return NULL;
    }
    json_t *o = json_object();
    json_object_set_new(o, "role", json_string(role));
    if (!m->image || m->image_len == 0) {
        json_object_set_new(o, "content", jstr(m->content ? m->content : ""));
        return o;
    }
    char *b64 = llm_base64(m->image, m->image_len);
    size_t ul = b64 ? strlen(b64) + 32 : 0;
    char *url = b64 ? malloc(ul) : NULL;
    if (!url) {
        free(b64);
        json_decref(o);
        snprintf(why, whylen, "out of memory encoding an image");
        return NULL;
    }
    snprintf(url, ul, "data:image/png;base64,%s", b64);
    free(b64);
    json_t *parts = json_array();
    json_array_append_new(parts, json_pack("{s:s, s:o}", "type", "text", "text", jstr(m->content ? m->content : "")));
    json_array_append_new(parts, json_pack("{s:s, s:{s:s}}", "type", "image_url", "image_url", "url", url));
    free(url);
    json_object_set_new(o, "content", parts);
    return o;
}

/* The response_format asking for task->schema in the given form: 1 OpenAI's
 * json_schema (vLLM, Ollama, LM Studio take it too), 2 llama-cpp-python's
 * json_object with a schema.  NULL when there is no schema. */
static json_t *schema_format(const llm_task *task, int form)
{
    if (!task || task->kind != LLM_JSON || !task->schema || form <= 0) return NULL;
    json_t *schema = json_loads(task->schema, 0, NULL);
    if (!schema) return NULL;
    if (form == 2) return json_pack("{s:s, s:o}", "type", "json_object", "schema", schema);
    return json_pack("{s:s, s:{s:s, s:o, s:b}}", "type", "json_schema", "json_schema", "name",
                     task->name && *task->name ? task->name : "answer", "schema", schema, "strict", 1);
}

/* msgs, then (when partial != NULL) the partial assistant reply and a request
 * to continue it; form is the response_format form to ask for. */
static json_t *request_object(const llm_config *c, const llm_task *task, const llm_message *msgs, int n,
                              const char *partial, int form, char *why, size_t whylen)
{
    if (n <= 0) {
        snprintf(why, whylen, "no messages to send");
        return NULL;
    }
    json_t *req = json_object();
    json_object_set_new(req, "model", jstr(c->model));
    json_t *arr = json_array();
    for (int i = 0; i < n; i++) {
        json_t *m = message_json(&msgs[i], why, whylen);
        if (!m) {
            json_decref(arr);
            json_decref(req);
            return NULL;
        }
        json_array_append_new(arr, m);
    }
    if (partial) {
        json_array_append_new(arr, json_pack("{s:s, s:o}", "role", "assistant", "content", jstr(partial)));
        json_array_append_new(arr, json_pack("{s:s, s:s}", "role", "user", "content", continue_prompt));
    }
    json_object_set_new(req, "messages", arr);
    json_object_set_new(req, "temperature", json_real(c->temperature));
    if (c->seed >= 0) json_object_set_new(req, "seed", json_integer(c->seed));
    long tokens = llm_task_tokens(c, task);
    if (tokens > 0)
        json_object_set_new(req, c->max_tokens_field[0] ? c->max_tokens_field : "max_tokens", json_integer(tokens));
    if (c->stop) {
        json_t *st = json_array();
        for (size_t i = 0; i < sizeof stop_sequences / sizeof stop_sequences[0]; i++)
            json_array_append_new(st, json_string(stop_sequences[i]));
        json_object_set_new(req, "stop", st);
    }
    json_t *rf = schema_format(task, form);
    if (rf) json_object_set_new(req, "response_format", rf);
    json_object_set_new(req, "stream", json_boolean(c->stream == LLM_STREAM_ON));
    if (c->stream == LLM_STREAM_ON)
        json_object_set_new(req, "stream_options", json_pack("{s:b}", "include_usage", 1));
    return req;
}

/* The response_format form to try first for this config. */
static int schema_form(const llm_config *c)
{
    if (c->constrain != LLM_CONSTRAIN_AUTO) return -1;
    return c->server && c->server->schema_form ? c->server->schema_form : 1;
}

char *llm_request_json(const llm_config *c, const llm_task *task, const llm_message *msgs, int n, char *err,
                       int errlen)
{
    char why[160];
    json_t *req = request_object(c, task, msgs, n, NULL, schema_form(c), why, sizeof why);
    if (!req) {
        fail(c, err, errlen, "llm: %s", why);
        return NULL;
    }
    char *s = json_dumps(req, JSON_INDENT(2));
    json_decref(req);
    if (!s) fail(c, err, errlen, "llm: could not encode the request");
    return s;
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
    long status = llm_http_get_status(c, api_key(c), url, c->connect_timeout + 5.0, why, sizeof why);
    if (status == 0)
        return fail(c, err, errlen, "the model server at %s does not answer (%s); start it, or check --base-url",
                    c->base_url, why);
    if (status == 401 || status == 403)
        return fail(c, err, errlen, "the model server at %s refuses the key (HTTP %ld); check $%s", c->base_url, status,
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
        json_t *j = llm_http_get_json(c, api_key(c), url, 5.0);
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

int llm_config_flag(llm_config *c, const char *flag, const char *value, char *err, int errlen)
{
    double d;
    long l;
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
        if (parse_double(value, dflags[i].lo, dflags[i].hi, &d) != 0) {
            snprintf(err, (size_t)errlen, "%s needs a number from %g to %g", flag, dflags[i].lo, dflags[i].hi);
            return -1;
        }
        *dflags[i].dst = d;
        return 1;
    }
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
    if (!strcmp(flag, "--llm-context")) {
        if (parse_int(value, 0, 10000000, &l) != 0) {
            snprintf(err, (size_t)errlen, "--llm-context needs the server's context size in tokens (0: read it from the server)");
            return -1;
        }
        c->context = l;
        return 1;
    }
    if (!strcmp(flag, "--llm-seed")) {
        if (parse_int(value, -1, 2147483647L, &l) != 0) {
            snprintf(err, (size_t)errlen, "--llm-seed needs an integer from -1 (not sent) to 2147483647");
            return -1;
        }
        c->seed = l;
        return 1;
    }
    if (!strcmp(flag, "--max-tokens")) {
        if (parse_int(value, 0, 1000000, &l) != 0) {
            snprintf(err, (size_t)errlen, "--max-tokens needs an integer from 0 (not sent) to 1000000");
            return -1;
        }
        c->max_tokens = l;
        return 1;
    }
    if (!strcmp(flag, "--llm-retries")) {
        if (parse_int(value, 0, LLM_RETRIES_MAX, &l) != 0) {
            snprintf(err, (size_t)errlen, "--llm-retries needs an integer from 0 to %d", LLM_RETRIES_MAX);
            return -1;
        }
        c->retries = (int)l;
        return 1;
    }
    if (!strcmp(flag, "--max-continuations")) {
        if (parse_int(value, 0, LLM_CONTINUATIONS_MAX, &l) != 0) {
            snprintf(err, (size_t)errlen, "--max-continuations needs an integer from 0 to %d", LLM_CONTINUATIONS_MAX);
            return -1;
        }
        c->max_continuations = (int)l;
        return 1;
    }
    return 0;
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
    json_object_set_new(o, "base_url", jstr(c->base_url));
    json_object_set_new(o, "model", jstr(c->model));
    json_object_set_new(o, "api_key_set", json_boolean(api_key(c) != NULL));
    json_object_set_new(o, "temperature", json_real(c->temperature));
    json_object_set_new(o, "seed", c->seed >= 0 ? json_integer(c->seed) : json_null());
    json_object_set_new(o, "max_tokens", c->max_tokens >= 0 ? json_integer(c->max_tokens) : json_string("per task"));
    json_object_set_new(o, "max_tokens_field", jstr(c->max_tokens_field));
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
    if (s) redact_with(s, api_key(c));
    return s;
}


/* ---- waiting ---------------------------------------------------------------------- */

static double jitter_unit(void)
{
    static __thread uint64_t st;
    if (!st) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        st = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^ 0x9E3779B97F4A7C15ull;
    }
    st ^= st << 13;
    st ^= st >> 7;
    st ^= st << 17;
    return (double)(st >> 11) / 9007199254740992.0;
}

static void sleep_seconds(double s)
{
    if (s <= 0) return;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}


/* ---- response parsing ------------------------------------------------------------ */

typedef struct {
    char *text;   /* malloc'd, may be "" */
    char finish[32];
    char model[128];
    long pt, ct, tt;
    int has_usage;
} parsed;

static int parse_completion(const llm_buf *b, parsed *p, char *why, size_t whylen)
{
    memset(p, 0, sizeof *p);
    json_error_t je;
    json_t *j = json_loadb(b->data ? b->data : "", b->len, 0, &je);
    if (!j || !json_is_object(j)) {
        char sn[80];
        llm_snippet(b->data ? b->data : "", b->len, sn, sizeof sn);
        if (j) snprintf(why, whylen, "malformed JSON response: not an object (body: %s)", sn);
        else snprintf(why, whylen, "malformed JSON response: %s at line %d (body: %s)", je.text, je.line, sn);
        json_decref(j);
        return -1;
    }
    json_t *err = json_object_get(j, "error");
    if (err && !json_is_null(err)) {
        char msg[LLM_SNIPPET + 8];
        llm_server_message(b, msg, sizeof msg);
        snprintf(why, whylen, "server returned an error: %s", msg);
        json_decref(j);
        return -1;
    }
    json_t *choices = json_object_get(j, "choices");
    if (!json_is_array(choices)) {
        snprintf(why, whylen, "malformed response: no \"choices\" list");
        json_decref(j);
        return -1;
    }
    if (json_array_size(choices) == 0) {
        snprintf(why, whylen, "the server returned an empty \"choices\" list (no reply)");
        json_decref(j);
        return -1;
    }
    json_t *ch = json_array_get(choices, 0);
    json_t *msg = json_is_object(ch) ? json_object_get(ch, "message") : NULL;
    if (!json_is_object(msg)) {
        snprintf(why, whylen, "malformed response: choice 0 has no \"message\" object");
        json_decref(j);
        return -1;
    }
    json_t *content = json_object_get(msg, "content");
    if (json_is_string(content)) {
        p->text = strdup(json_string_value(content));
    } else if (json_is_array(content)) { /* list of parts: join the text ones */
        size_t total = 1, i;
        json_t *part;
        json_array_foreach(content, i, part) {
            const char *t = json_string_value(json_object_get(part, "text"));
            if (t) total += strlen(t);
        }
        p->text = malloc(total);
        if (p->text) {
            p->text[0] = 0;
            json_array_foreach(content, i, part) {
                const char *t = json_string_value(json_object_get(part, "text"));
                if (t) strcat(p->text, t);
            }
        }
    } else if (content == NULL || json_is_null(content)) {
        const char *refusal = json_string_value(json_object_get(msg, "refusal"));
        if (refusal) {
            char sn[LLM_SNIPPET + 8];
            llm_snippet(refusal, strlen(refusal), sn, sizeof sn);
            snprintf(why, whylen, "the model refused: %s", sn);
            json_decref(j);
            return -1;
        }
        p->text = strdup("");
    } else {
        snprintf(why, whylen, "malformed response: message content is neither text nor a list of parts");
        json_decref(j);
        return -1;
    }
    if (!p->text) {
        snprintf(why, whylen, "out of memory reading the reply");
        json_decref(j);
        return -1;
    }
    const char *fr = json_string_value(json_object_get(ch, "finish_reason"));
    snprintf(p->finish, sizeof p->finish, "%s", fr ? fr : "");
    const char *model = json_string_value(json_object_get(j, "model"));
    snprintf(p->model, sizeof p->model, "%s", model ? model : "");
    json_t *u = json_object_get(j, "usage");
    if (json_is_object(u)) {
        p->has_usage = 1;
        p->pt = (long)json_integer_value(json_object_get(u, "prompt_tokens"));
        p->ct = (long)json_integer_value(json_object_get(u, "completion_tokens"));
        json_t *t = json_object_get(u, "total_tokens");
        p->tt = json_is_integer(t) ? (long)json_integer_value(t) : p->pt + p->ct;
    }
    json_decref(j);
    return 0;
}



/* ---- the call ----------------------------------------------------------------------- */

void llm_reply_free(llm_reply *r)
{
    if (!r) return;
    free(r->content);
    r->content = NULL;
}

static void add_usage(llm_usage *dst, const llm_usage *src)
{
    dst->prompt_tokens += src->prompt_tokens;
    dst->completion_tokens += src->completion_tokens;
    dst->total_tokens += src->total_tokens;
    dst->requests += src->requests;
    dst->replies += src->replies;
    dst->failures += src->failures;
    dst->missing_usage += src->missing_usage;
    dst->cut += src->cut;
    dst->seconds += src->seconds;
}

/* State of one call across its requests. */
typedef struct {
    const llm_config *c;
    const llm_task *task;
    const llm_message *msgs;
    int n;
    char url[600];
    double deadline;
    int form;            /* response_format form in use; -1 none */
    int retries_used;
    int answered;        /* some request of this call got an HTTP response */
    char *text;          /* the reply so far */
    llm_reply *out;
} call;

/* Fail the call: err gets the line, the reply keeps what arrived. */
static int call_fail(call *k, int model, int cut, char *err, int errlen, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static int call_fail(call *k, int model, int cut, char *err, int errlen, const char *fmt, ...)
{
    char line[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    k->out->model_failure = model;
    k->out->cut = cut;
    if (k->text && !llm_blank(k->text)) {
        const char *key = api_key(k->c);
        if (key && strlen(key) >= LLM_REDACT_REPLY_MIN) redact_with(k->text, key);
        k->out->content = k->text;
    } else {
        free(k->text);
    }
    k->text = NULL;
    return fail(k->c, err, errlen, "llm: %s", line);
}

/* Add one response's text and tokens to the call. */
static int take_text(call *k, const char *piece, const http_exchange *x)
{
    llm_reply *out = k->out;
    if (x->has_usage) {
        out->usage.prompt_tokens += x->pt;
        out->usage.completion_tokens += x->ct;
        out->usage.total_tokens += x->tt;
    } else if (x->streamed) {
        /* a server that reports no usage in streams: one piece is one token,
         * and the prompt is estimated from its size */
        long pt = llm_estimate_tokens(k->msgs, k->n);
        out->usage.prompt_tokens += pt;
        out->usage.completion_tokens += x->chunks;
        out->usage.total_tokens += pt + x->chunks;
        out->tokens_counted = 1;
        out->usage.missing_usage++;
    } else {
        out->usage.missing_usage++;
    }
    if (x->finish[0]) snprintf(out->finish_reason, sizeof out->finish_reason, "%s", x->finish);
    if (x->model[0]) snprintf(out->model, sizeof out->model, "%s", x->model);
    if (!k->text) {
        k->text = strdup(piece);
        return k->text ? 0 : -1;
    }
    char *joined = llm_join_continuation(k->text, piece);
    if (!joined) return -1;
    k->text = joined;
    return 0;
}

/* Advice for a reply that hit the token limit, fitted to what it holds:
 * a model that never started its answer is not helped by more tokens. */
static void length_advice(const call *k, long tokens, char *buf, size_t len)
{
    const char *t = k->text ? k->text : "";
    int kind = k->task ? k->task->kind : LLM_TEXT;
    if (kind == LLM_CODE && !strstr(t, "```"))
        snprintf(buf, len,
                 "the model wrote %ld tokens without starting a code block: it may lack chat training, or the "
                 "server may not apply its chat template (see docs/llm.md); a larger --max-tokens only makes "
                 "each try longer",
                 tokens);
    else if (kind == LLM_CODE)
        snprintf(buf, len,
                 "the code block was still open after %ld tokens and %d continuation%s; raise --max-tokens if the "
                 "model writes long functions",
                 tokens, k->out->continuations, k->out->continuations == 1 ? "" : "s");
    else if (kind == LLM_JSON)
        snprintf(buf, len,
                 "no complete JSON object after %ld tokens: the model may lack chat training or a chat template "
                 "(see docs/llm.md)",
                 tokens);
    else
        snprintf(buf, len,
                 "the reply was cut off by the token limit after %ld tokens and %d continuation%s: a reasoning "
                 "model needs a larger --max-tokens; a model that rambles may lack chat training or a chat "
                 "template (see docs/llm.md)",
                 tokens, k->out->continuations, k->out->continuations == 1 ? "" : "s");
}

/* A reply cut by the token limit: continue it (1), or fail (-1). */
static int on_length(call *k, char *err, int errlen)
{
    char why[600];
    const char *t = k->text ? k->text : "";
    if (llm_text_loops(t, strlen(t), why, sizeof why))
        return call_fail(k, 1, LLM_CUT_LOOP, err, errlen,
                         "the model fell into a loop (%s); cut at the token limit and not continued: it may lack "
                         "chat training, or the server may not apply its chat template (see docs/llm.md)",
                         why);
    int kind = k->task ? k->task->kind : LLM_TEXT;
    /* continuing helps an answer under way, not one never begun */
    int begun = kind == LLM_CODE ? strstr(t, "```") != NULL : kind == LLM_JSON ? strchr(t, '{') != NULL : 1;
    if (begun && k->out->continuations < k->c->max_continuations) {
        k->out->continuations++;
        return 1;
    }
    length_advice(k, k->out->usage.completion_tokens, why, sizeof why);
    return call_fail(k, 1, LLM_CUT_LENGTH, err, errlen, "%s (max tokens %ld)", why, llm_task_tokens(k->c, k->task));
}

/* The client ended the stream: a complete answer (0), else a failure. */
static int on_stopped(call *k, const http_exchange *x, char *err, int errlen)
{
    if (take_text(k, x->text.data + x->prefix_len, x))
        return call_fail(k, 0, LLM_CUT_NONE, err, errlen, "out of memory joining a reply");
    if (x->stop == STOP_DONE) {
        k->out->early_stop = 1;
        snprintf(k->out->finish_reason, sizeof k->out->finish_reason, "stop");
        return 0;
    }
    if (x->stop == STOP_BIG)
        return call_fail(k, 0, LLM_CUT_NONE, err, errlen, "response larger than %zu bytes", x->text.max);
    if (x->stop == STOP_LOOP)
        return call_fail(k, 1, LLM_CUT_LOOP, err, errlen,
                         "the model fell into a loop after %ld tokens (%s); cut there and not continued: it may "
                         "lack chat training, or the server may not apply its chat template (see docs/llm.md)",
                         k->out->usage.completion_tokens, x->stop_why);
    double gen = x->t_first > 0 ? now_seconds() - x->t_first : 0;
    char rate[96] = "";
    if (x->chunks > 0 && gen > 0.1) snprintf(rate, sizeof rate, " at %.1f tokens/s", (double)x->chunks / gen);
    return call_fail(k, 1, LLM_CUT_TIME, err, errlen,
                     "no complete answer within the time allowed (%.0f s: --llm-call-time, --llm-timeout or the "
                     "node's budget; %ld tokens%s%s); not resent, since a single-slot server would still be busy "
                     "with it",
                     now_seconds() - k->out->seconds, x->chunks, rate,
                     x->chunks == 0 ? ", none before the time ran out: the prompt may be too long for this machine"
                                    : "");
}

/* A plain or streamed reply that arrived whole: 0 done, 1 continue, -1 failed. */
static int on_reply(call *k, http_exchange *x, char *err, int errlen)
{
    char why[1024];
    if (x->streamed) {
        if (x->stream_error[0])
            return call_fail(k, 0, LLM_CUT_NONE, err, errlen, "server returned an error: %s", x->stream_error);
        if (take_text(k, x->text.data + x->prefix_len, x))
            return call_fail(k, 0, LLM_CUT_NONE, err, errlen, "out of memory joining a reply");
    } else {
        parsed p;
        if (parse_completion(&x->body, &p, why, sizeof why) != 0)
            return call_fail(k, strstr(why, "refused") != NULL, LLM_CUT_NONE, err, errlen, "%s", why);
        snprintf(x->finish, sizeof x->finish, "%s", p.finish);
        snprintf(x->model, sizeof x->model, "%s", p.model);
        x->has_usage = p.has_usage, x->pt = p.pt, x->ct = p.ct, x->tt = p.tt;
        int rc = take_text(k, p.text, x);
        free(p.text);
        if (rc) return call_fail(k, 0, LLM_CUT_NONE, err, errlen, "out of memory joining a reply");
    }
    if (!strcmp(k->out->finish_reason, "length")) return on_length(k, err, errlen);
    if (!strcmp(k->out->finish_reason, "content_filter"))
        return call_fail(k, 1, LLM_CUT_NONE, err, errlen, "the reply was withheld by the server's content filter");
    if (!k->text || llm_blank(k->text))
        return call_fail(k, 1, LLM_CUT_NONE, err, errlen, "the model returned an empty reply (finish_reason \"%s\")",
                         k->out->finish_reason);
    return 0;
}

/* A request the server refused for its response_format: try the next form
 * (OpenAI's, then llama-cpp-python's, then none).  1 if there is one. */
static int next_form(call *k, const http_exchange *x, const char *why)
{
    if (k->form <= 0 || (x->status != 400 && x->status != 422)) return 0;
    if (!strstr(why, "response_format") && !strstr(why, "schema") && !strstr(why, "json")) return 0;
    k->form = k->form == 1 ? 2 : -1;
    if (k->c->server) k->c->server->schema_form = k->form;
    return 1;
}

/* Wait before a retry: exponential backoff with jitter, at least a
 * Retry-After; 0, or -1 (why set) when the wait is not allowed. */
static int backoff(call *k, const http_exchange *x, char *why, size_t whylen)
{
    const llm_config *c = k->c;
    double wait = c->backoff * (double)(1u << (k->retries_used < 20 ? k->retries_used : 20));
    if (wait > c->backoff_max) wait = c->backoff_max;
    wait *= 0.5 + 0.5 * jitter_unit();
    if (x->retry_after > 0) {
        if (x->retry_after > c->retry_after_max) {
            size_t n = strlen(why);
            snprintf(why + n, whylen - n, "; the server asks to wait %.0f s, longer than the %.0f s allowed",
                     x->retry_after, c->retry_after_max);
            return -1;
        }
        if (wait < x->retry_after) wait = x->retry_after;
    }
    if (now_seconds() + wait >= k->deadline) return -1;
    k->retries_used++;
    if (c->progress && isatty(STDERR_FILENO))
        fprintf(stderr, "\rllm: %s; retry %d of %d in %.1f s\n", why, k->retries_used, c->retries, wait);
    sleep_seconds(wait);
    return 0;
}

/* One request of the call: 0 done, 1 send another, -1 failed. */
static int call_request(call *k, char *err, int errlen)
{
    char why[1024];
    json_t *req = request_object(k->c, k->task, k->msgs, k->n, k->text, k->form, why, sizeof why);
    char *body = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!body) return call_fail(k, 0, LLM_CUT_NONE, err, errlen, "%s", req ? "could not encode the request" : why);
    http_exchange x;
    if (llm_http_init(&x, k->c, k->text)) {
        free(body);
        return call_fail(k, 0, LLM_CUT_NONE, err, errlen, "out of memory");
    }
    x.kind = k->task ? k->task->kind : LLM_TEXT;
    x.deadline = k->deadline;
    x.progress = k->c->progress;
    x.label = k->task && k->task->name ? k->task->name : "model";
    k->out->attempts++;
    k->out->usage.requests++;
    int o = llm_http_post(k->c, api_key(k->c), k->url, body, &x, why, sizeof why);
    free(body);
    if (x.status) {
        k->answered = 1;
        if (k->c->server) k->c->server->answered = 1;
    }
    int rc;
    /* a server that never answered is not there: waiting for it helps
     * nobody, saying so at once does */
    if (x.unreachable && !k->answered && !(k->c->server && k->c->server->answered))
        rc = call_fail(k, 0, LLM_CUT_NONE, err, errlen, "the model server at %s does not answer (%s); start it, or "
                       "check --base-url", k->c->base_url, why);
    else if (o == HTTP_OK) rc = on_reply(k, &x, err, errlen);
    else if (o == HTTP_STOPPED) rc = on_stopped(k, &x, err, errlen);
    else if (o == HTTP_FATAL && next_form(k, &x, why)) rc = 1;
    else if (o == HTTP_RETRY && k->retries_used < k->c->retries && backoff(k, &x, why, sizeof why) == 0) rc = 1;
    else if (o == HTTP_RETRY)
        rc = call_fail(k, 0, LLM_CUT_NONE, err, errlen, "%s (gave up after %d attempt%s)", why, k->out->attempts,
                       k->out->attempts == 1 ? "" : "s");
    else rc = call_fail(k, 0, LLM_CUT_NONE, err, errlen, "%s", why);
    int answered = o == HTTP_OK || (o == HTTP_STOPPED && rc == 0);
    if (answered && k->form > 0 && k->task && k->task->kind == LLM_JSON) {
        k->out->constrained = 1;
        if (k->c->server) k->c->server->schema_form = k->form; /* the form this server takes */
    }
    llm_http_free(&x);
    return rc;
}

static int chat_inner(call *k, char *err, int errlen)
{
    const llm_config *c = k->c;
    if (!c->base_url[0]) return fail(c, err, errlen, "llm: no base URL configured (use --base-url URL)");
    if (!c->model[0]) return fail(c, err, errlen, "llm: no model configured (use --model NAME)");
    if (!api_key(c) && c->api_key_env[0] && strstr(c->base_url, "api.openai.com"))
        return fail(c, err, errlen,
                    "llm: the environment variable %s is not set; export your OpenAI API key in it "
                    "(or name another variable with --api-key-env)",
                    c->api_key_env);
    char why[600];
    if (!llm_fits(c, k->msgs, k->n, llm_task_tokens(c, k->task), why, sizeof why))
        return fail(c, err, errlen, "llm: %s", why);
    size_t bl = strlen(c->base_url);
    while (bl > 0 && c->base_url[bl - 1] == '/') bl--;
    if (bl >= 17 && !strncmp(c->base_url + bl - 17, "/chat/completions", 17))
        snprintf(k->url, sizeof k->url, "%.*s", (int)bl, c->base_url);
    else
        snprintf(k->url, sizeof k->url, "%.*s/chat/completions", (int)bl, c->base_url);
    int rc;
    do {
        if (now_seconds() >= k->deadline - 0.5)
            return call_fail(k, 1, LLM_CUT_TIME, err, errlen,
                             "no time left for a request (--llm-call-time, or the node's budget)");
        rc = call_request(k, err, errlen);
    } while (rc == 1);
    if (rc == 0) {
        const char *key = api_key(c);
        if (key && strlen(key) >= LLM_REDACT_REPLY_MIN) redact_with(k->text, key);
        k->out->content = k->text;
        k->text = NULL;
    }
    return rc;
}

int llm_chat_task(const llm_config *c, const llm_task *task, const llm_message *msgs, int n, llm_reply *out,
                  char *err, int errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen > 0) err[0] = 0;
    double t0 = now_seconds();
    call k = {.c = c, .task = task, .msgs = msgs, .n = n, .out = out, .form = schema_form(c)};
    k.deadline = t0 + c->call_time;
    if (c->deadline > 0 && c->deadline < k.deadline) k.deadline = c->deadline;
    out->seconds = t0; /* on_stopped reads the start from here until the end */
    int rc = chat_inner(&k, err, errlen);
    free(k.text);
    out->seconds = now_seconds() - t0;
    out->usage.seconds = out->seconds;
    if (rc == 0) out->usage.replies = 1;
    else out->usage.failures = 1;
    if (out->cut) out->usage.cut = 1;
    if (c->usage) add_usage(c->usage, &out->usage);
    return rc == 0 ? 0 : -1;
}

int llm_chat(const llm_config *c, const llm_message *msgs, int n, llm_reply *out, char *err, int errlen)
{
    return llm_chat_task(c, NULL, msgs, n, out, err, errlen);
}
