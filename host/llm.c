/* OpenAI-compatible chat completions over libcurl, bodies built and parsed
 * with jansson.  See llm.h for the contract. */
#include "llm.h"
#include "util.h"
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
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
    c->max_tokens = 4096;
    c->connect_timeout = 10.0;
    c->total_timeout = 600.0;
    c->retries = 4;
    c->backoff = 2.0;
    c->backoff_max = 60.0;
    c->retry_after_max = 300.0;
    c->max_continuations = 2;
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
static void snippet(const char *src, size_t len, char *out, size_t outlen)
{
    size_t j = 0;
    int space = 0;
    for (size_t i = 0; i < len && j + 4 < outlen; i++) {
        unsigned char ch = (unsigned char)src[i];
        if (ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ') {
            space = 1;
            continue;
        }
        if (space && j > 0) out[j++] = ' ';
        space = 0;
        out[j++] = (ch < 32 || ch == 127) ? '?' : (char)ch;
    }
    if (j + 4 >= outlen && len > 0) {
        out[j++] = '.';
        out[j++] = '.';
        out[j++] = '.';
    }
    out[j] = 0;
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

static json_t *message_json(const llm_message *m, char *why, size_t whylen)
{
    const char *role = m->role ? m->role : "user";
    if (strcmp(role, "system") && strcmp(role, "user") && strcmp(role, "assistant")) {
        snprintf(why, whylen, "message role '%.32s' is not system, user or assistant", role);
        return NULL;
    }
    json_t *o = json_object();
    json_object_set_new(o, "role", json_string(role));
    if (m->image && m->image_len > 0) {
        char *b64 = llm_base64(m->image, m->image_len);
        if (!b64) {
            json_decref(o);
            snprintf(why, whylen, "out of memory encoding an image");
            return NULL;
        }
        size_t ul = strlen(b64) + 32;
        char *url = malloc(ul);
        if (!url) {
            free(b64);
            json_decref(o);
            snprintf(why, whylen, "out of memory encoding an image");
            return NULL;
        }
        snprintf(url, ul, "data:image/png;base64,%s", b64);
        free(b64);
        json_t *parts = json_array();
        json_array_append_new(parts, json_pack("{s:s, s:o}", "type", "text", "text",
                                               jstr(m->content ? m->content : "")));
        json_array_append_new(parts, json_pack("{s:s, s:{s:s}}", "type", "image_url", "image_url",
                                               "url", url));
        free(url);
        json_object_set_new(o, "content", parts);
    } else {
        json_object_set_new(o, "content", jstr(m->content ? m->content : ""));
    }
    return o;
}

/* msgs, then (when partial != NULL) the partial assistant reply and a request
 * to continue it. */
static json_t *request_object(const llm_config *c, const llm_message *msgs, int n,
                              const char *partial, char *why, size_t whylen)
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
    if (c->max_tokens > 0)
        json_object_set_new(req, c->max_tokens_field[0] ? c->max_tokens_field : "max_tokens",
                            json_integer(c->max_tokens));
    json_object_set_new(req, "stream", json_false());
    return req;
}

char *llm_request_json(const llm_config *c, const llm_message *msgs, int n, char *err, int errlen)
{
    char why[160];
    json_t *req = request_object(c, msgs, n, NULL, why, sizeof why);
    if (!req) {
        fail(c, err, errlen, "llm: %s", why);
        return NULL;
    }
    char *s = json_dumps(req, JSON_INDENT(2));
    json_decref(req);
    if (!s) fail(c, err, errlen, "llm: could not encode the request");
    return s;
}

/* ---- config as flags and JSON --------------------------------------------------- */

static int copy_flag(char *dst, size_t cap, const char *v, const char *flag, char *err, int errlen)
{
    if (!v || !*v || strlen(v) >= cap) {
        snprintf(err, (size_t)errlen, "%s needs a value of 1 to %zu characters", flag, cap - 1);
        return -1;
    }
    memcpy(dst, v, strlen(v) + 1);
    return 1;
}

int llm_config_flag(llm_config *c, const char *flag, const char *value, char *err, int errlen)
{
    double d;
    long l;
    if (!strcmp(flag, "--base-url")) {
        if (!value || (strncmp(value, "http://", 7) && strncmp(value, "https://", 8))) {
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
           "  --max-tokens N          reply token limit (default 4096; 0: not sent)\n"
           "  --max-tokens-field F    max_tokens or max_completion_tokens (newer OpenAI models)\n"
           "  --connect-timeout S     seconds to connect (default 10)\n"
           "  --llm-timeout S         seconds for one request (default 600)\n"
           "  --llm-retries N         retries on network errors, 408, 429 and 5xx (default 4)\n"
           "  --llm-backoff S         first retry wait, doubled each time, with jitter (default 2)\n"
           "  --max-continuations N   follow-ups for a reply cut by the token limit (default 2)\n";
}

char *llm_config_json(const llm_config *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "provider", json_string("openai-compatible"));
    json_object_set_new(o, "base_url", jstr(c->base_url));
    json_object_set_new(o, "model", jstr(c->model));
    json_object_set_new(o, "api_key_env", jstr(c->api_key_env));
    json_object_set_new(o, "api_key_set", json_boolean(api_key(c) != NULL));
    json_object_set_new(o, "temperature", json_real(c->temperature));
    json_object_set_new(o, "seed", c->seed >= 0 ? json_integer(c->seed) : json_null());
    json_object_set_new(o, "max_tokens", json_integer(c->max_tokens));
    json_object_set_new(o, "max_tokens_field", jstr(c->max_tokens_field));
    json_object_set_new(o, "connect_timeout_s", json_real(c->connect_timeout));
    json_object_set_new(o, "request_timeout_s", json_real(c->total_timeout));
    json_object_set_new(o, "retries", json_integer(c->retries));
    json_object_set_new(o, "backoff_s", json_real(c->backoff));
    json_object_set_new(o, "max_continuations", json_integer(c->max_continuations));
    char *s = json_dumps(o, JSON_INDENT(2));
    json_decref(o);
    if (s) redact_with(s, api_key(c));
    return s;
}

/* ---- HTTP ------------------------------------------------------------------------ */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_init_rc;
static void curl_init_once(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

typedef struct {
    char *data;
    size_t len, cap, max;
    int too_big;
} buffer;

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *user)
{
    buffer *b = user;
    size_t n = size * nmemb;
    if (b->len + n > b->max) {
        b->too_big = 1;
        return 0;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 16384;
        while (cap < b->len + n + 1) cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) return 0;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, ptr, n);
    b->len += n;
    b->data[b->len] = 0;
    return n;
}

enum { OUT_OK, OUT_RETRY, OUT_FATAL };

typedef struct {
    long status;
    double retry_after; /* seconds, 0 if none */
    buffer body;
} http_result;

/* The message a server put in an error body ({"error":{"message":...}},
 * {"error":"..."}, {"message":...}, {"detail":...}) or the raw body. */
static void server_message(const buffer *b, char *out, size_t outlen)
{
    out[0] = 0;
    if (!b->data || !b->len) return;
    json_t *j = json_loadb(b->data, b->len, 0, NULL);
    const char *msg = NULL;
    if (j) {
        json_t *e = json_object_get(j, "error");
        if (json_is_object(e)) msg = json_string_value(json_object_get(e, "message"));
        else if (json_is_string(e)) msg = json_string_value(e);
        if (!msg) msg = json_string_value(json_object_get(j, "message"));
        if (!msg) msg = json_string_value(json_object_get(j, "detail"));
    }
    if (msg) snippet(msg, strlen(msg), out, outlen);
    else snippet(b->data, b->len, out, outlen);
    json_decref(j);
}

static int is_retryable_curl(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return 1;
    default:
        return 0;
    }
}

/* One POST.  Returns OUT_OK for HTTP 200 (body in r), else OUT_RETRY or
 * OUT_FATAL with a reason in why. */
static int http_post(const llm_config *c, const char *url, const char *body, http_result *r,
                     char *why, size_t whylen)
{
    memset(r, 0, sizeof *r);
    r->body.max = c->max_response_bytes > 0 ? (size_t)c->max_response_bytes : (size_t)8 << 20;
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(why, whylen, "could not start an HTTP client");
        return OUT_FATAL;
    }
    struct curl_slist *hdr = NULL;
    hdr = curl_slist_append(hdr, "Content-Type: application/json");
    hdr = curl_slist_append(hdr, "Accept: application/json");
    hdr = curl_slist_append(hdr, "Expect:");
    char *auth = NULL;
    size_t auth_len = 0;
    const char *key = api_key(c);
    if (key) {
        auth_len = strlen(key) + 32;
        auth = malloc(auth_len);
        if (auth) {
            snprintf(auth, auth_len, "Authorization: Bearer %s", key);
            hdr = curl_slist_append(hdr, auth);
        }
    }
    char cerr[CURL_ERROR_SIZE];
    cerr[0] = 0;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    curl_easy_setopt(h, CURLOPT_USERAGENT, "pcgrllm/0.1");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L); /* never carry the key elsewhere */
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->connect_timeout * 1000.0));
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(c->total_timeout * 1000.0));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    /* A local server is never reached through a proxy; keep the user's own
     * exceptions and add the loopback names to them. */
    const char *np = getenv("no_proxy");
    if (!np || !*np) np = getenv("NO_PROXY");
    char noproxy[1024];
    snprintf(noproxy, sizeof noproxy, "%.900s%slocalhost,127.0.0.1,::1", np && *np ? np : "", np && *np ? "," : "");
    curl_easy_setopt(h, CURLOPT_NOPROXY, noproxy);
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
    curl_off_t ra = 0;
    if (curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0) r->retry_after = (double)ra;
    curl_easy_cleanup(h);
    curl_slist_free_all(hdr);
    if (auth) {
        memset(auth, 0, auth_len);
        __asm__ __volatile__("" : : "r"(auth) : "memory");
        free(auth);
    }

    if (rc != CURLE_OK) {
        if (r->body.too_big) {
            snprintf(why, whylen, "response larger than %zu bytes", r->body.max);
            return OUT_FATAL;
        }
        const char *what = cerr[0] ? cerr : curl_easy_strerror(rc);
        if (rc == CURLE_OPERATION_TIMEDOUT)
            snprintf(why, whylen, "request timed out (%s)", what);
        else if (rc == CURLE_COULDNT_CONNECT)
            snprintf(why, whylen, "could not connect to %.300s (%s)", url, what);
        else
            snprintf(why, whylen, "network error: %s", what);
        return is_retryable_curl(rc) ? OUT_RETRY : OUT_FATAL;
    }
    if (r->status == 200) return OUT_OK;
    char msg[LLM_SNIPPET + 8];
    server_message(&r->body, msg, sizeof msg);
    long s = r->status;
    if (s == 429)
        snprintf(why, whylen, "rate limited (HTTP 429)%s%s", msg[0] ? ": " : "", msg);
    else if (s == 408 || (s >= 500 && s <= 599))
        snprintf(why, whylen, "server error (HTTP %ld)%s%s", s, msg[0] ? ": " : "", msg);
    else if (s == 401 || s == 403)
        snprintf(why, whylen, "not authorized (HTTP %ld)%s%s; check the key in $%s", s, msg[0] ? ": " : "",
                 msg, c->api_key_env[0] ? c->api_key_env : LLM_DEFAULT_KEY_ENV);
    else if (s == 404)
        snprintf(why, whylen, "not found (HTTP 404) at %.300s%s%s; check --base-url (usually ending in /v1) and --model",
                 url, msg[0] ? ": " : "", msg);
    else
        snprintf(why, whylen, "request rejected (HTTP %ld)%s%s", s, msg[0] ? ": " : "", msg);
    return (s == 408 || s == 429 || (s >= 500 && s <= 599)) ? OUT_RETRY : OUT_FATAL;
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

static int parse_completion(const buffer *b, parsed *p, char *why, size_t whylen)
{
    memset(p, 0, sizeof *p);
    json_error_t je;
    json_t *j = json_loadb(b->data ? b->data : "", b->len, 0, &je);
    if (!j || !json_is_object(j)) {
        char sn[80];
        snippet(b->data ? b->data : "", b->len, sn, sizeof sn);
        if (j) snprintf(why, whylen, "malformed JSON response: not an object (body: %s)", sn);
        else snprintf(why, whylen, "malformed JSON response: %s at line %d (body: %s)", je.text, je.line, sn);
        json_decref(j);
        return -1;
    }
    json_t *err = json_object_get(j, "error");
    if (err && !json_is_null(err)) {
        char msg[LLM_SNIPPET + 8];
        server_message(b, msg, sizeof msg);
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
            snippet(refusal, strlen(refusal), sn, sizeof sn);
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

/* Count fence lines (``` at a line start, after up to 3 spaces). */
static int count_fences(const char *s)
{
    int n = 0;
    const char *p = s;
    while (*p) {
        const char *q = p;
        int sp = 0;
        while (*q == ' ' && sp < 3) q++, sp++;
        if (!strncmp(q, "```", 3)) n++;
        const char *nl = strchr(p, '\n');
        if (!nl) break;
        p = nl + 1;
    }
    return n;
}

/* Append a continuation to the text so far.  If the text ends inside an open
 * code block and the continuation starts by opening a new one anyway, that
 * fence line is dropped. */
static char *join_continuation(char *sofar, const char *more)
{
    const char *m = more;
    if (count_fences(sofar) % 2 == 1) {
        const char *q = m;
        while (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t') q++;
        if (!strncmp(q, "```", 3)) {
            const char *nl = strchr(q, '\n');
            m = nl ? nl + 1 : q + strlen(q);
        }
    }
    size_t a = strlen(sofar), b = strlen(m);
    char *o = realloc(sofar, a + b + 1);
    if (!o) return NULL;
    memcpy(o + a, m, b + 1);
    return o;
}

static int blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\n' && *s != '\r' && *s != '\t') return 0;
    return 1;
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
}

static int chat_inner(const llm_config *c, const llm_message *msgs, int n, llm_reply *out, char *err,
                      int errlen)
{
    if (!c->base_url[0]) return fail(c, err, errlen, "llm: no base URL configured (use --base-url URL)");
    if (!c->model[0]) return fail(c, err, errlen, "llm: no model configured (use --model NAME)");
    if (!api_key(c) && c->api_key_env[0] && strstr(c->base_url, "api.openai.com"))
        return fail(c, err, errlen,
                    "llm: the environment variable %s is not set; export your OpenAI API key in it "
                    "(or name another variable with --api-key-env)",
                    c->api_key_env);
    pthread_once(&curl_once, curl_init_once);
    if (curl_init_rc != 0) return fail(c, err, errlen, "llm: could not initialise libcurl");

    char url[600];
    size_t bl = strlen(c->base_url);
    while (bl > 0 && c->base_url[bl - 1] == '/') bl--;
    if (bl >= 17 && !strncmp(c->base_url + bl - 17, "/chat/completions", 17))
        snprintf(url, sizeof url, "%.*s", (int)bl, c->base_url);
    else
        snprintf(url, sizeof url, "%.*s/chat/completions", (int)bl, c->base_url);

    char *text = NULL;   /* reply so far */
    int retries_used = 0;
    char why[1024];
    for (;;) {
        char rwhy[200];
        json_t *req = request_object(c, msgs, n, text, rwhy, sizeof rwhy);
        if (!req) {
            free(text);
            return fail(c, err, errlen, "llm: %s", rwhy);
        }
        char *body = json_dumps(req, JSON_COMPACT);
        json_decref(req);
        if (!body) {
            free(text);
            return fail(c, err, errlen, "llm: could not encode the request");
        }
        http_result hr;
        out->attempts++;
        out->usage.requests++;
        int o = http_post(c, url, body, &hr, why, sizeof why);
        free(body);
        if (o == OUT_RETRY) {
            free(hr.body.data);
            if (retries_used >= c->retries) {
                free(text);
                return fail(c, err, errlen, "llm: %s (gave up after %d attempt%s)", why, out->attempts,
                            out->attempts == 1 ? "" : "s");
            }
            double wait = c->backoff * (double)(1u << (retries_used < 20 ? retries_used : 20));
            if (wait > c->backoff_max) wait = c->backoff_max;
            wait *= 0.5 + 0.5 * jitter_unit();
            if (hr.retry_after > 0) {
                if (hr.retry_after > c->retry_after_max) {
                    free(text);
                    return fail(c, err, errlen,
                                "llm: %s; the server asks to wait %.0f s, longer than the %.0f s allowed",
                                why, hr.retry_after, c->retry_after_max);
                }
                if (wait < hr.retry_after) wait = hr.retry_after;
            }
            retries_used++;
            sleep_seconds(wait);
            continue;
        }
        if (o == OUT_FATAL) {
            free(hr.body.data);
            free(text);
            return fail(c, err, errlen, "llm: %s", why);
        }
        parsed p;
        int prc = parse_completion(&hr.body, &p, why, sizeof why);
        free(hr.body.data);
        if (prc != 0) {
            free(text);
            return fail(c, err, errlen, "llm: %s", why);
        }
        if (p.has_usage) {
            out->usage.prompt_tokens += p.pt;
            out->usage.completion_tokens += p.ct;
            out->usage.total_tokens += p.tt;
        } else {
            out->usage.missing_usage++;
        }
        snprintf(out->finish_reason, sizeof out->finish_reason, "%s", p.finish);
        if (p.model[0]) snprintf(out->model, sizeof out->model, "%s", p.model);
        if (!text) {
            text = p.text;
        } else {
            char *joined = join_continuation(text, p.text);
            free(p.text);
            if (!joined) {
                free(text);
                return fail(c, err, errlen, "llm: out of memory joining a continued reply");
            }
            text = joined;
        }
        if (!strcmp(p.finish, "length")) {
            if (out->continuations < c->max_continuations) {
                out->continuations++;
                continue;
            }
            free(text);
            return fail(c, err, errlen,
                        "llm: the reply was cut off by the token limit (max tokens %ld) and still unfinished "
                        "after %d continuation%s; raise --max-tokens (and the server's context size)",
                        c->max_tokens, out->continuations, out->continuations == 1 ? "" : "s");
        }
        if (!strcmp(p.finish, "content_filter")) {
            free(text);
            return fail(c, err, errlen, "llm: the reply was withheld by the server's content filter");
        }
        if (blank(text)) {
            free(text);
            return fail(c, err, errlen, "llm: the model returned an empty reply (finish_reason \"%s\")",
                        out->finish_reason);
        }
        const char *key = api_key(c);
        if (key && strlen(key) >= LLM_REDACT_REPLY_MIN) redact_with(text, key);
        out->content = text;
        return 0;
    }
}

int llm_chat(const llm_config *c, const llm_message *msgs, int n, llm_reply *out, char *err, int errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen > 0) err[0] = 0;
    double t0 = now_seconds();
    int rc = chat_inner(c, msgs, n, out, err, errlen);
    out->seconds = now_seconds() - t0;
    if (rc == 0) out->usage.replies = 1;
    else out->usage.failures = 1;
    if (c->usage) add_usage(c->usage, &out->usage);
    return rc;
}

/* ---- extraction ------------------------------------------------------------------- */

/* If line starts a fence (up to 3 spaces, then 3+ backticks), return the
 * number of backticks and set info to the info string's first word
 * (lower-cased); else 0. */
static int fence_at(const char *line, const char *end, char *info, size_t infolen)
{
    const char *p = line;
    int sp = 0;
    while (p < end && *p == ' ' && sp < 3) p++, sp++;
    int ticks = 0;
    while (p < end && *p == '`') p++, ticks++;
    if (ticks < 3) return 0;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    size_t j = 0;
    while (p < end && *p != ' ' && *p != '\t' && *p != '\r' && *p != '{' && j + 1 < infolen) {
        char ch = *p++;
        if (ch == '`') return 0; /* inline code span, not a fence */
        info[j++] = (char)(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
    }
    info[j] = 0;
    return ticks;
}

static int code_lang(const char *info)
{
    static const char *ok[] = {"", "c", "cpp", "c++", "cc", "cxx", "h", "cuda", "cu"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (!strcmp(info, ok[i])) return 1;
    return 0;
}

/* Is [line,end) a closing fence for a block opened with `ticks` backticks? */
static int closes(const char *line, const char *end, int ticks)
{
    const char *p = line;
    int sp = 0;
    while (p < end && *p == ' ' && sp < 3) p++, sp++;
    int t = 0;
    while (p < end && *p == '`') p++, t++;
    if (t < ticks) return 0;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
    return p == end;
}

static char *trimmed_copy(const char *a, const char *b)
{
    while (a < b && (*a == ' ' || *a == '\n' || *a == '\r' || *a == '\t')) a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\n' || b[-1] == '\r' || b[-1] == '\t')) b--;
    size_t n = (size_t)(b - a);
    char *o = malloc(n + 2);
    if (!o) return NULL;
    memcpy(o, a, n);
    o[n] = '\n';
    o[n + 1] = 0;
    return o;
}

/* Reasoning models served by llama-server or Ollama may put their thinking in
 * the reply as <think>...</think>; the answer is what follows it. */
static const char *after_thinking(const char *reply)
{
    const char *last = NULL;
    for (const char *p = reply; (p = strstr(p, "</think>")) != NULL; p += 8) last = p + 8;
    return last ? last : reply;
}

char *llm_extract_code(const char *reply, char *err, int errlen)
{
    if (reply) reply = after_thinking(reply);
    if (!reply || blank(reply)) {
        snprintf(err, (size_t)errlen, "the reply is empty: expected C code in a ```c block");
        return NULL;
    }
    const char *p = reply;
    int fences = 0, empty_blocks = 0;
    char other[24] = "";
    while (*p) {
        const char *nl = strchr(p, '\n');
        const char *end = nl ? nl : p + strlen(p);
        char info[24];
        int ticks = fence_at(p, end, info, sizeof info);
        if (!ticks) {
            p = nl ? nl + 1 : end;
            continue;
        }
        fences++;
        const char *body = nl ? nl + 1 : end;
        const char *q = body, *body_end = NULL, *after = NULL;
        while (*q) {
            const char *qn = strchr(q, '\n');
            const char *qe = qn ? qn : q + strlen(q);
            if (closes(q, qe, ticks)) {
                body_end = q;
                after = qn ? qn + 1 : qe;
                break;
            }
            q = qn ? qn + 1 : qe;
        }
        if (!body_end) { /* no closing fence: the block runs to the end */
            body_end = body + strlen(body);
            after = body_end;
        }
        if (code_lang(info)) {
            const char *a = body;
            int has = 0;
            for (const char *s = a; s < body_end; s++)
                if (*s != ' ' && *s != '\n' && *s != '\r' && *s != '\t') has = 1;
            if (has) {
                char *o = trimmed_copy(body, body_end);
                if (!o) snprintf(err, (size_t)errlen, "out of memory");
                return o;
            }
            empty_blocks++;
        } else if (!other[0]) {
            snprintf(other, sizeof other, "%s", info);
        }
        p = after;
    }
    if (fences == 0) {
        char *o = trimmed_copy(reply, reply + strlen(reply));
        if (!o) snprintf(err, (size_t)errlen, "out of memory");
        return o;
    }
    if (other[0])
        snprintf(err, (size_t)errlen,
                 "the reply has code only in a ```%s block; write the reward in C inside a ```c block", other);
    else
        snprintf(err, (size_t)errlen, "the reply's code block%s empty; put the C reward inside a ```c block",
                 empty_blocks > 1 ? "s are" : " is");
    return NULL;
}

/* End of the balanced JSON object starting at s ('{'), or NULL. */
static const char *json_object_end(const char *s)
{
    int depth = 0, in_str = 0;
    for (const char *p = s; *p; p++) {
        if (in_str) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == '"') in_str = 0;
            continue;
        }
        if (*p == '"') in_str = 1;
        else if (*p == '{') depth++;
        else if (*p == '}' && --depth == 0) return p + 1;
    }
    return NULL;
}

static char *valid_object(const char *a, const char *b)
{
    json_t *j = json_loadb(a, (size_t)(b - a), 0, NULL);
    int ok = json_is_object(j);
    json_decref(j);
    if (!ok) return NULL;
    char *o = malloc((size_t)(b - a) + 1);
    if (!o) return NULL;
    memcpy(o, a, (size_t)(b - a));
    o[b - a] = 0;
    return o;
}

char *llm_extract_json(const char *reply, char *err, int errlen)
{
    if (reply) reply = after_thinking(reply);
    if (!reply || blank(reply)) {
        snprintf(err, (size_t)errlen, "the reply is empty: expected a JSON object");
        return NULL;
    }
    /* a ```json block first */
    const char *p = reply;
    while (*p) {
        const char *nl = strchr(p, '\n');
        const char *end = nl ? nl : p + strlen(p);
        char info[24];
        int ticks = fence_at(p, end, info, sizeof info);
        if (ticks && !strcmp(info, "json") && nl) {
            const char *body = nl + 1, *q = body;
            while (*q) {
                const char *qn = strchr(q, '\n');
                const char *qe = qn ? qn : q + strlen(q);
                if (closes(q, qe, ticks)) break;
                q = qn ? qn + 1 : qe;
            }
            const char *a = body;
            while (a < q && *a != '{') a++;
            const char *b = a < q ? json_object_end(a) : NULL;
            if (b && b <= q) {
                char *o = valid_object(a, b);
                if (o) return o;
            }
        }
        p = nl ? nl + 1 : end;
    }
    /* else the first balanced object that parses */
    for (const char *a = strchr(reply, '{'); a; a = strchr(a + 1, '{')) {
        const char *b = json_object_end(a);
        if (!b) continue;
        char *o = valid_object(a, b);
        if (o) return o;
    }
    snprintf(err, (size_t)errlen, "the reply contains no JSON object");
    return NULL;
}
