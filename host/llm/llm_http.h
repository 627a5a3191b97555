/* One HTTP exchange with a chat-completions server, for host/llm/llm.c and
 * host/llm/llm_config.c only: libcurl does the HTTP, jansson reads each
 * server-sent event, and the reply is watched while it streams in
 * (host/llm/llm_reply.h). */
#ifndef PCG_LLM_HTTP_H
#define PCG_LLM_HTTP_H
#include "llm.h"
#include <jansson.h>
#include <stddef.h>

typedef struct {
    char *data;
    size_t len, cap, max;
    int too_big;
} llm_buf;

/* Append n bytes (NUL-terminated after); 0, or -1 when over max or out of memory. */
int llm_buf_add(llm_buf *b, const char *p, size_t n);

/* Outcome of one request. */
enum { HTTP_OK, HTTP_RETRY, HTTP_FATAL, HTTP_STOPPED };
/* Why the client ended a stream itself. */
enum { STOP_NONE, STOP_DONE, STOP_LOOP, STOP_TIME, STOP_BIG };

typedef struct {
    /* in */
    int kind;              /* LLM_TEXT, LLM_CODE or LLM_JSON: when an answer is complete */
    double deadline;       /* absolute now_seconds(): the request ends there */
    int progress;          /* progress on stderr */
    const char *label;     /* in progress lines */
    /* out */
    long status;
    double retry_after;    /* seconds, 0 if none */
    llm_buf body;          /* the body, when it is not an event stream (errors, plain replies) */
    int streamed;          /* the reply came as server-sent events */
    llm_buf text;          /* streamed: the text so far, starting with the prefix given */
    size_t prefix_len;     /* of which this many bytes were there before the request */
    char finish[32];
    char model[128];
    long pt, ct, tt;
    int has_usage;
    long chunks;           /* streamed content pieces (one token each on llama.cpp servers) */
    int stop;              /* STOP_* when the client ended the stream */
    int unreachable;       /* no connection: refused, no such host, no TLS handshake */
    char stop_why[320];
    char stream_error[320];/* an error event inside the stream */
    double t_start, t_first; /* request start, first content (0 if none) */
    /* private */
    void *curl;
    int mode;              /* 0 unknown, 1 event stream, 2 plain body */
    llm_buf line;
    size_t checked;        /* text length at the last loop check */
    double last_progress;
    int progress_shown;
} http_exchange;

/* Prepare x for a request; prefix (may be NULL) is the reply text so far
 * (continuations are watched as one text). */
int llm_http_init(http_exchange *x, const llm_config *c, const char *prefix);
void llm_http_free(http_exchange *x);

/* POST body to url (key, when not NULL, in the Authorization header).
 * HTTP_OK: status 200, the reply in x (streamed or in x->body); HTTP_STOPPED:
 * the client ended the stream (x->stop); else HTTP_RETRY or HTTP_FATAL with
 * a reason in why. */
int llm_http_post(const llm_config *c, const char *key, const char *url, const char *body, http_exchange *x,
                  char *why, size_t whylen);

/* GET url and parse the body as JSON (new reference), or NULL.  For short
 * questions to the server (its context size); never retried. */
json_t *llm_http_get_json(const llm_config *c, const char *key, const char *url, double timeout_s);
/* GET url once: the HTTP status (any: the server answered), or 0 with the
 * reason in why when nothing answered. */
long llm_http_get_status(const llm_config *c, const char *key, const char *url, double timeout_s, char *why,
                         size_t whylen);

/* The message a server put in an error body, or an excerpt of the raw body. */
void llm_server_message(const llm_buf *b, char *out, size_t outlen);
/* A short printable one-line excerpt of server text. */
void llm_snippet(const char *src, size_t len, char *out, size_t outlen);

#endif
