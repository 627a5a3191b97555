/* HTTP for the chat client: libcurl, server-sent events read line by line
 * with jansson, the reply watched as it arrives.  See llm_http.h. */
#include "llm_http.h"
#include "util.h"
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_init_rc;
static void curl_init_once(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

int llm_buf_add(llm_buf *b, const char *p, size_t n)
{
    if (b->max && b->len + n > b->max) {
        b->too_big = 1;
        return -1;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 16384;
        while (cap < b->len + n + 1) cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) return -1;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
    return 0;
}

void llm_snippet(const char *src, size_t len, char *out, size_t outlen)
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

void llm_server_message(const llm_buf *b, char *out, size_t outlen)
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
        if (!msg) { /* FastAPI validation errors: {"detail": [{"msg": ...}]} */
            json_t *d = json_array_get(json_object_get(j, "detail"), 0);
            msg = json_string_value(json_object_get(d, "msg"));
        }
    }
    if (msg) llm_snippet(msg, strlen(msg), out, outlen);
    else llm_snippet(b->data, b->len, out, outlen);
    json_decref(j);
}

int llm_http_init(http_exchange *x, const llm_config *c, const char *prefix)
{
    memset(x, 0, sizeof *x);
    x->body.max = c->max_response_bytes > 0 ? (size_t)c->max_response_bytes : (size_t)8 << 20;
    x->text.max = x->body.max;
    x->line.max = x->body.max;
    if (prefix && llm_buf_add(&x->text, prefix, strlen(prefix))) return -1;
    if (!x->text.data && llm_buf_add(&x->text, "", 0)) return -1;
    x->prefix_len = x->text.len;
    x->checked = x->text.len;
    return 0;
}

void llm_http_free(http_exchange *x)
{
    free(x->body.data);
    free(x->text.data);
    free(x->line.data);
    memset(&x->body, 0, sizeof x->body);
    memset(&x->text, 0, sizeof x->text);
    memset(&x->line, 0, sizeof x->line);
}

/* ---- progress --------------------------------------------------------------------- */

/* On a terminal one line rewritten in place; otherwise a plain line every
 * 30 s, so that a log shows a slow model is still working. */
static void show_progress(http_exchange *x, int final)
{
    double now = now_seconds();
    int tty = isatty(2);
    if (!final && now - x->last_progress < (tty ? 0.5 : 30.0)) return;
    if (final && !(tty && x->progress_shown)) return;
    x->last_progress = now;
    if (final) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
        return;
    }
    double gen = x->t_first > 0 ? now - x->t_first : 0;
    char line[200];
    if (x->chunks == 0)
        snprintf(line, sizeof line, "  %s: waiting for the first token, %.0f s", x->label ? x->label : "model",
                 now - x->t_start);
    else
        snprintf(line, sizeof line, "  %s: %ld tokens, %.1f tokens/s, %.0f s", x->label ? x->label : "model",
                 x->chunks, gen > 0.05 ? (double)x->chunks / gen : 0.0, now - x->t_start);
    if (tty) fprintf(stderr, "\r\033[K%s", line);
    else fprintf(stderr, "%s\n", line);
    fflush(stderr);
    x->progress_shown = 1;
}

static int on_progress(void *user, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    http_exchange *x = user;
    if (x->deadline > 0 && now_seconds() >= x->deadline) {
        x->stop = STOP_TIME;
        return 1; /* aborts the transfer: closing the connection cancels the generation */
    }
    if (x->progress && x->mode != 2) show_progress(x, 0);
    return 0;
}

/* ---- the event stream ------------------------------------------------------------- */

/* Is the streamed text a complete answer, or a loop?  Sets x->stop. */
static void watch(http_exchange *x, const char *piece)
{
    const char *t = x->text.data;
    int boundary = strchr(piece, '\n') || strchr(piece, '`') || strchr(piece, '}');
    if (x->kind == LLM_CODE && boundary && llm_code_closed(t)) x->stop = STOP_DONE;
    else if (x->kind == LLM_JSON && strchr(piece, '}') && llm_json_closed(t)) x->stop = STOP_DONE;
    if (x->stop) return;
    /* the loop test reads the tail only; every line or 64 bytes is often enough */
    if (!strchr(piece, '\n') && x->text.len - x->checked < 64) return;
    x->checked = x->text.len;
    if (llm_text_loops(t, x->text.len, x->stop_why, sizeof x->stop_why)) x->stop = STOP_LOOP;
}

static void on_event(http_exchange *x, const char *data)
{
    if (!strcmp(data, "[DONE]")) return;
    json_t *j = json_loads(data, 0, NULL);
    if (!json_is_object(j)) {
        json_decref(j);
        return; /* not an event this client reads */
    }
    json_t *e = json_object_get(j, "error");
    if (e && !json_is_null(e)) {
        llm_buf b = {(char *)data, strlen(data), 0, 0, 0};
        llm_server_message(&b, x->stream_error, sizeof x->stream_error);
        if (!x->stream_error[0]) snprintf(x->stream_error, sizeof x->stream_error, "error event");
    }
    const char *model = json_string_value(json_object_get(j, "model"));
    if (model && *model) snprintf(x->model, sizeof x->model, "%s", model);
    json_t *u = json_object_get(j, "usage");
    if (json_is_object(u)) {
        x->has_usage = 1;
        x->pt = (long)json_integer_value(json_object_get(u, "prompt_tokens"));
        x->ct = (long)json_integer_value(json_object_get(u, "completion_tokens"));
        json_t *tt = json_object_get(u, "total_tokens");
        x->tt = json_is_integer(tt) ? (long)json_integer_value(tt) : x->pt + x->ct;
    }
    json_t *ch = json_array_get(json_object_get(j, "choices"), 0);
    const char *fr = json_string_value(json_object_get(ch, "finish_reason"));
    if (fr) snprintf(x->finish, sizeof x->finish, "%s", fr);
    json_t *delta = json_object_get(ch, "delta");
    const char *piece = json_string_value(json_object_get(delta, "content"));
    /* reasoning models may stream their thinking in a field of its own:
     * it counts as work done, not as the answer */
    int thinking = json_is_string(json_object_get(delta, "reasoning_content"));
    if ((piece && *piece) || thinking) {
        x->chunks++;
        if (x->t_first == 0) x->t_first = now_seconds();
    }
    if (piece && *piece) {
        if (llm_buf_add(&x->text, piece, strlen(piece)) == 0) {
            watch(x, piece);
        } else {
            x->stop = STOP_BIG;
        }
    }
    json_decref(j);
}

/* Server-sent events: "data: ..." lines; comments (":") and other fields are skipped. */
static void on_line(http_exchange *x, char *line)
{
    size_t n = strlen(line);
    if (n && line[n - 1] == '\r') line[--n] = 0;
    if (strncmp(line, "data:", 5)) return;
    const char *d = line + 5;
    if (*d == ' ') d++;
    on_event(x, d);
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *user)
{
    http_exchange *x = user;
    size_t n = size * nmemb;
    if (!x->mode) {
        long status = 0;
        char *ctype = NULL;
        curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(x->curl, CURLINFO_CONTENT_TYPE, &ctype);
        x->mode = status == 200 && ctype && strstr(ctype, "text/event-stream") ? 1 : 2;
        x->streamed = x->mode == 1;
    }
    if (x->mode == 2) return llm_buf_add(&x->body, ptr, n) ? 0 : n;
    for (size_t i = 0; i < n; i++) {
        if (ptr[i] != '\n') {
            if (llm_buf_add(&x->line, ptr + i, 1)) return 0;
            continue;
        }
        if (x->line.data) on_line(x, x->line.data);
        x->line.len = 0;
        if (x->line.data) x->line.data[0] = 0;
        if (x->stop) return 0; /* ends the transfer */
    }
    if (x->progress) show_progress(x, 0);
    return n;
}

/* ---- requests --------------------------------------------------------------------- */

static int is_retryable_curl(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
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

/* Errors that mean no server was reached at all. */
static int is_unreachable(CURLcode rc)
{
    return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY ||
           rc == CURLE_SSL_CONNECT_ERROR;
}

/* Options every request shares. */
static void common_options(CURL *h, const llm_config *c, const char *url, char *cerr, char *noproxy, size_t nplen)
{
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "pcgrllm/0.1");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L); /* never carry the key elsewhere */
    /* a model server speaks HTTP: never a file:// or other address (the
     * callers check too; this holds whatever reaches here) */
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->connect_timeout * 1000.0));
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    /* A local server is never reached through a proxy; keep the user's own
     * exceptions and add the loopback names to them. */
    const char *np = getenv("no_proxy");
    if (!np || !*np) np = getenv("NO_PROXY");
    snprintf(noproxy, nplen, "%.900s%slocalhost,127.0.0.1,::1", np && *np ? np : "", np && *np ? "," : "");
    curl_easy_setopt(h, CURLOPT_NOPROXY, noproxy);
}

static struct curl_slist *headers(const char *key, char **auth_out, size_t *auth_len)
{
    struct curl_slist *hdr = NULL;
    hdr = curl_slist_append(hdr, "Content-Type: application/json");
    hdr = curl_slist_append(hdr, "Accept: application/json, text/event-stream");
    hdr = curl_slist_append(hdr, "Expect:");
    *auth_out = NULL;
    if (key) {
        *auth_len = strlen(key) + 32;
        char *auth = malloc(*auth_len);
        if (auth) {
            snprintf(auth, *auth_len, "Authorization: Bearer %s", key);
            hdr = curl_slist_append(hdr, auth);
            *auth_out = auth;
        }
    }
    return hdr;
}

static void forget(char *auth, size_t len)
{
    if (!auth) return;
    memset(auth, 0, len);
    __asm__ __volatile__("" : : "r"(auth) : "memory");
    free(auth);
}

/* The outcome of a request that got an HTTP status other than 200. */
static int status_outcome(const llm_config *c, const char *url, const http_exchange *x, char *why, size_t whylen)
{
    char msg[208];
    llm_server_message(&x->body, msg, sizeof msg);
    long s = x->status;
    const char *sep = msg[0] ? ": " : "";
    if (s == 429) snprintf(why, whylen, "rate limited (HTTP 429)%s%s", sep, msg);
    else if (s == 408 || (s >= 500 && s <= 599)) snprintf(why, whylen, "server error (HTTP %ld)%s%s", s, sep, msg);
    else if (s == 401 || s == 403)
        snprintf(why, whylen, "not authorized (HTTP %ld)%s%s; check the key in $%s", s, sep, msg,
                 c->api_key_env[0] ? c->api_key_env : LLM_DEFAULT_KEY_ENV);
    else if (s == 404)
        snprintf(why, whylen, "not found (HTTP 404) at %.300s%s%s; check --base-url (usually ending in /v1) and --model",
                 url, sep, msg);
    else snprintf(why, whylen, "request rejected (HTTP %ld)%s%s", s, sep, msg);
    return (s == 408 || s == 429 || (s >= 500 && s <= 599)) ? HTTP_RETRY : HTTP_FATAL;
}

int llm_http_post(const llm_config *c, const char *key, const char *url, const char *body, http_exchange *x,
                  char *why, size_t whylen)
{
    pthread_once(&curl_once, curl_init_once);
    CURL *h = curl_init_rc == 0 ? curl_easy_init() : NULL;
    if (!h) {
        snprintf(why, whylen, "could not start an HTTP client");
        return HTTP_FATAL;
    }
    x->curl = h;
    x->t_start = x->last_progress = now_seconds();
    char *auth;
    size_t auth_len = 0;
    struct curl_slist *hdr = headers(key, &auth, &auth_len);
    char cerr[CURL_ERROR_SIZE], noproxy[1024];
    cerr[0] = 0;
    common_options(h, c, url, cerr, noproxy, sizeof noproxy);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    double limit = c->total_timeout;
    if (x->deadline > 0 && x->deadline - x->t_start < limit) limit = x->deadline - x->t_start;
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(limit * 1000.0) > 1 ? (long)(limit * 1000.0) : 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &x->status);
    curl_off_t ra = 0;
    if (curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0) x->retry_after = (double)ra;
    curl_easy_cleanup(h);
    x->curl = NULL;
    curl_slist_free_all(hdr);
    forget(auth, auth_len);
    if (x->progress) show_progress(x, 1);

    if (rc == CURLE_OPERATION_TIMEDOUT && !x->stop) x->stop = STOP_TIME;
    if (x->stop) return HTTP_STOPPED;
    if (rc != CURLE_OK) {
        if (x->body.too_big || x->text.too_big || x->line.too_big) {
            snprintf(why, whylen, "response larger than %zu bytes", x->body.max);
            return HTTP_FATAL;
        }
        const char *what = cerr[0] ? cerr : curl_easy_strerror(rc);
        if (rc == CURLE_COULDNT_CONNECT) snprintf(why, whylen, "could not connect to %.300s (%s)", url, what);
        else snprintf(why, whylen, "network error: %s", what);
        x->unreachable = is_unreachable(rc);
        return is_retryable_curl(rc) ? HTTP_RETRY : HTTP_FATAL;
    }
    if (x->status == 200) return HTTP_OK;
    return status_outcome(c, url, x, why, whylen);
}

static size_t on_get(char *ptr, size_t size, size_t nmemb, void *user)
{
    return llm_buf_add(user, ptr, size * nmemb) ? 0 : size * nmemb;
}

/* One GET: the status (0 when nothing answered, with why), the body in b. */
static long get_once(const llm_config *c, const char *key, const char *url, double timeout_s, llm_buf *b, char *why,
                     size_t whylen)
{
    pthread_once(&curl_once, curl_init_once);
    CURL *h = curl_init_rc == 0 ? curl_easy_init() : NULL;
    if (!h) return snprintf(why, whylen, "could not start an HTTP client"), 0;
    char *auth;
    size_t auth_len = 0;
    struct curl_slist *hdr = headers(key, &auth, &auth_len);
    char cerr[CURL_ERROR_SIZE], noproxy[1024];
    cerr[0] = 0;
    common_options(h, c, url, cerr, noproxy, sizeof noproxy);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000.0));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_get);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(h);
    curl_slist_free_all(hdr);
    forget(auth, auth_len);
    if (status == 0) snprintf(why, whylen, "%s", cerr[0] ? cerr : curl_easy_strerror(rc));
    return status;
}

json_t *llm_http_get_json(const llm_config *c, const char *key, const char *url, double timeout_s)
{
    llm_buf b = {NULL, 0, 0, 1 << 20, 0};
    char why[CURL_ERROR_SIZE + 64];
    long status = get_once(c, key, url, timeout_s, &b, why, sizeof why);
    json_t *j = status == 200 && b.data && !b.too_big ? json_loadb(b.data, b.len, 0, NULL) : NULL;
    free(b.data);
    return j;
}

long llm_http_get_status(const llm_config *c, const char *key, const char *url, double timeout_s, char *why,
                         size_t whylen)
{
    llm_buf b = {NULL, 0, 0, 1 << 16, 0};
    long status = get_once(c, key, url, timeout_s, &b, why, whylen);
    free(b.data);
    return status;
}
