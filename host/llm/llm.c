/* OpenAI-compatible chat completions: the request and the call (budgets,
 * retries, continuations).  The config, its flags and the server's context
 * size are in llm_config.c, HTTP and the event stream in llm_http.c, reading
 * replies in llm_reply.c.  See llm.h for the contract. */
#include "llm.h"
#include "llm_http.h"
#include "llm_internal.h"
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

#define LLM_SNIPPET 200

static const char continue_prompt[] =
    "Your reply was cut off by the output length limit. Continue exactly where it stopped: "
    "do not repeat anything already written, do not restart the answer and do not open a new "
    "code block.";

/* ---- the key and its redaction ------------------------------------------------ */

const char *llm_api_key(const llm_config *c)
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
    redact_with(s, llm_api_key(c));
}

/* Keys shorter than this are not secrets (local servers take any text, often
 * "ollama" or "none"); redacting them inside a reply would corrupt code. */
#define LLM_REDACT_REPLY_MIN 8

/* The only way the client writes err: format, flatten to one line, redact. */
int llm_fail(const llm_config *c, char *err, int errlen, const char *fmt, ...)
{
    if (!err || errlen <= 0) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, (size_t)errlen, fmt, ap);
    va_end(ap);
    for (char *p = err; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
    redact_with(err, llm_api_key(c));
    return -1;
}

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

json_t *llm_jstr(const char *s)
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
        json_object_set_new(o, "content", llm_jstr(m->content ? m->content : ""));
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
    json_array_append_new(parts,
                          json_pack("{s:s, s:o}", "type", "text", "text", llm_jstr(m->content ? m->content : "")));
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
    json_object_set_new(req, "model", llm_jstr(c->model));
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
        json_array_append_new(arr, json_pack("{s:s, s:o}", "role", "assistant", "content", llm_jstr(partial)));
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
        llm_fail(c, err, errlen, "llm: %s", why);
        return NULL;
    }
    char *s = json_dumps(req, JSON_INDENT(2));
    json_decref(req);
    if (!s) llm_fail(c, err, errlen, "llm: could not encode the request");
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

/* The body as a JSON object that is not an error report; NULL with why set. */
static json_t *completion_object(const llm_buf *b, char *why, size_t whylen)
{
    json_error_t je;
    json_t *j = json_loadb(b->data ? b->data : "", b->len, 0, &je);
    if (!j || !json_is_object(j)) {
        char sn[80];
        llm_snippet(b->data ? b->data : "", b->len, sn, sizeof sn);
        if (j) snprintf(why, whylen, "malformed JSON response: not an object (body: %s)", sn);
        else snprintf(why, whylen, "malformed JSON response: %s at line %d (body: %s)", je.text, je.line, sn);
        json_decref(j);
        return NULL;
    }
    json_t *err = json_object_get(j, "error");
    if (err && !json_is_null(err)) {
        char msg[LLM_SNIPPET + 8];
        llm_server_message(b, msg, sizeof msg);
        snprintf(why, whylen, "server returned an error: %s", msg);
        json_decref(j);
        return NULL;
    }
    return j;
}

/* The completion's first choice, which holds a "message" object; NULL with why set. */
static json_t *first_choice(json_t *j, char *why, size_t whylen)
{
    json_t *choices = json_object_get(j, "choices");
    if (!json_is_array(choices)) {
        snprintf(why, whylen, "malformed response: no \"choices\" list");
        return NULL;
    }
    if (json_array_size(choices) == 0) {
        snprintf(why, whylen, "the server returned an empty \"choices\" list (no reply)");
        return NULL;
    }
    json_t *ch = json_array_get(choices, 0);
    json_t *msg = json_is_object(ch) ? json_object_get(ch, "message") : NULL;
    if (!json_is_object(msg)) {
        snprintf(why, whylen, "malformed response: choice 0 has no \"message\" object");
        return NULL;
    }
    return ch;
}

/* The text parts of a content list, joined (malloc'd; NULL when out of memory). */
static char *joined_parts(json_t *content)
{
    size_t total = 1, i;
    json_t *part;
    json_array_foreach(content, i, part) {
        const char *t = json_string_value(json_object_get(part, "text"));
        if (t) total += strlen(t);
    }
    char *text = malloc(total);
    if (!text) return NULL;
    text[0] = 0;
    json_array_foreach(content, i, part) {
        const char *t = json_string_value(json_object_get(part, "text"));
        if (t) strcat(text, t);
    }
    return text;
}

/* The reply text of a message (malloc'd, may be ""); NULL with why set. */
static char *message_text(json_t *msg, char *why, size_t whylen)
{
    json_t *content = json_object_get(msg, "content");
    char *text;
    if (json_is_string(content)) {
        text = strdup(json_string_value(content));
    } else if (json_is_array(content)) {
        text = joined_parts(content);
    } else if (content == NULL || json_is_null(content)) {
        const char *refusal = json_string_value(json_object_get(msg, "refusal"));
        if (refusal) {
            char sn[LLM_SNIPPET + 8];
            llm_snippet(refusal, strlen(refusal), sn, sizeof sn);
            snprintf(why, whylen, "the model refused: %s", sn);
            return NULL;
        }
        text = strdup("");
    } else {
        snprintf(why, whylen, "malformed response: message content is neither text nor a list of parts");
        return NULL;
    }
    if (!text) snprintf(why, whylen, "out of memory reading the reply");
    return text;
}

/* The finish reason, model and usage of a completion into p. */
static void completion_facts(json_t *j, json_t *ch, parsed *p)
{
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
}

static int parse_completion(const llm_buf *b, parsed *p, char *why, size_t whylen)
{
    memset(p, 0, sizeof *p);
    json_t *j = completion_object(b, why, whylen);
    if (!j) return -1;
    json_t *ch = first_choice(j, why, whylen);
    p->text = ch ? message_text(json_object_get(ch, "message"), why, whylen) : NULL;
    if (p->text) completion_facts(j, ch, p);
    json_decref(j);
    return p->text ? 0 : -1;
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
        const char *key = llm_api_key(k->c);
        if (key && strlen(key) >= LLM_REDACT_REPLY_MIN) redact_with(k->text, key);
        k->out->content = k->text;
    } else {
        free(k->text);
    }
    k->text = NULL;
    return llm_fail(k->c, err, errlen, "llm: %s", line);
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
    int o = llm_http_post(k->c, llm_api_key(k->c), k->url, body, &x, why, sizeof why);
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
    if (!c->base_url[0]) return llm_fail(c, err, errlen, "llm: no base URL configured (use --base-url URL)");
    if (!c->model[0]) return llm_fail(c, err, errlen, "llm: no model configured (use --model NAME)");
    if (!llm_api_key(c) && c->api_key_env[0] && strstr(c->base_url, "api.openai.com"))
        return llm_fail(c, err, errlen,
                    "llm: the environment variable %s is not set; export your OpenAI API key in it "
                    "(or name another variable with --api-key-env)",
                    c->api_key_env);
    char why[600];
    if (!llm_fits(c, k->msgs, k->n, llm_task_tokens(c, k->task), why, sizeof why))
        return llm_fail(c, err, errlen, "llm: %s", why);
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
        const char *key = llm_api_key(c);
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
