/* Client for OpenAI-compatible chat completions (POST {base_url}/chat/completions),
 * as served by OpenAI itself and by llama-server, vLLM, Ollama and LM Studio.
 * This file is the transport; reading replies is host/llm/llm_reply.h.
 *
 * One call of llm_chat_task() is one sample for one task (code, JSON or
 * text): the request carries the model, the messages, the temperature, a
 * token budget sized to the task, stop sequences and, for JSON tasks on
 * servers that take one, a JSON schema the server enforces.  Replies stream
 * in (server-sent events) and are watched as they come: the call stops
 * early once the answer is complete (a code block closed, a JSON object
 * closed), cuts a reply that falls into a loop (never continued), and stops
 * at the call's wall-time budget; closing the connection is what cancels
 * the generation on the server.  A request that ran out of time is never
 * resent (a single-slot server may still be busy with it); network errors,
 * 408, 429 (Retry-After honoured) and 5xx are retried with exponential
 * backoff and jitter.  A reply cut by the token limit is continued while it
 * is an open code block or plain text, a bounded number of times; a half
 * reply is never returned as complete, but what arrived is kept in the
 * reply for the caller to save.
 *
 * The API key is read from the environment variable named in the config at
 * each call and only ever placed in the Authorization header.  Every message
 * this client produces (errors, reply text) is passed through a redaction that
 * replaces the key with "[redacted]", so not even a server that echoes the key
 * back can make it appear in logs or run directories. */
#ifndef PCG_LLM_H
#define PCG_LLM_H
#include <stddef.h>
#include "llm_reply.h"

#define LLM_DEFAULT_BASE_URL "https://api.openai.com/v1"
#define LLM_DEFAULT_MODEL "gpt-4o-2024-08-06"
#define LLM_DEFAULT_KEY_ENV "OPENAI_API_KEY"

/* Token usage, per call (llm_reply) or accumulated over a run (llm_config.usage). */
typedef struct {
    long prompt_tokens;
    long completion_tokens;
    long total_tokens;
    long requests;       /* HTTP requests sent, retries and continuations included */
    long replies;        /* llm_chat calls that returned a complete reply */
    long failures;       /* llm_chat calls that returned an error */
    long missing_usage;  /* successful responses that carried no usage object */
    long cut;            /* calls whose reply was cut: a loop, the time budget or the token limit */
    double seconds;      /* wall time in calls */
} llm_usage;

/* What the client learned about the server during a run (optional, shared
 * by every call that points at it). */
typedef struct {
    long context;        /* context size in tokens: --llm-context or read from the server; 0 unknown */
    char context_from[64]; /* where it came from: "--llm-context", "GET /props", ... */
    int schema_form;     /* response_format form that works: 0 untried, 1 json_schema (OpenAI),
                          * 2 json_object + schema (llama-cpp-python), -1 none: plain text */
    int answered;        /* the server has answered at least once: a failure to connect
                          * after that is worth retrying (a restart), before it is not */
} llm_server;

enum { LLM_STREAM_OFF = 0, LLM_STREAM_ON = 1 };
enum { LLM_CONSTRAIN_OFF = 0, LLM_CONSTRAIN_AUTO = 1 };
/* The kind of answer a task wants: how a reply is watched and budgeted. */
enum { LLM_TEXT = 0, LLM_CODE = 1, LLM_JSON = 2 };
/* Why a reply was cut (llm_reply.cut). */
enum { LLM_CUT_NONE = 0, LLM_CUT_LOOP, LLM_CUT_TIME, LLM_CUT_LENGTH };

typedef struct {
    char base_url[512];      /* ".../v1"; "/chat/completions" is appended */
    char model[256];
    char api_key_env[128];   /* environment variable holding the key; "" = never send one */
    double temperature;      /* always sent; default 0 */
    long seed;               /* sent when >= 0; default -1 (not sent) */
    long max_tokens;         /* -1 (default): each task's own budget; 0: not sent; N: every task's */
    char max_tokens_field[32]; /* "max_tokens" (default) or "max_completion_tokens" */
    double connect_timeout;  /* seconds, per request; default 10 */
    double total_timeout;    /* seconds, per request; default 600 */
    double call_time;        /* seconds, per call: requests, waits and continuations; default 900 */
    double deadline;         /* absolute now_seconds() no call may pass (a node's budget); 0 none */
    int stream;              /* LLM_STREAM_ON (default) or OFF: one JSON body per request */
    int stop;                /* send stop sequences (default 1); OpenAI reasoning models refuse them */
    int constrain;           /* LLM_CONSTRAIN_AUTO (default): a JSON schema for JSON tasks where taken */
    long context;            /* --llm-context: the server's context in tokens; 0 read it or unknown */
    int progress;            /* show tokens and tokens/s on stderr while a reply streams in */
    int retries;             /* extra attempts after a retryable failure; default 4, at most 10 */
    double backoff;          /* first backoff in seconds, doubled each retry; default 2 */
    double backoff_max;      /* cap of one backoff wait; default 60 */
    double retry_after_max;  /* the longest Retry-After honoured; longer is an error; default 300 */
    int max_continuations;   /* follow-up requests for a reply cut by the token limit; default 2 */
    long max_response_bytes; /* cap on one response body; default 8 MiB */
    llm_usage *usage;        /* optional: every call adds its usage here (per-run total) */
    llm_server *server;      /* optional: what was learned about the server (per run) */
} llm_config;

/* One task: what kind of answer it wants and its own token budget (used
 * unless --max-tokens gives one for all). */
typedef struct {
    int kind;                /* LLM_TEXT, LLM_CODE or LLM_JSON */
    long max_tokens;         /* this task's budget; 0: the default text budget */
    const char *schema;      /* LLM_JSON: JSON schema text the server may enforce, or NULL */
    const char *name;        /* a short name: the schema's, and in progress lines */
} llm_task;

/* One chat message.  image/image_len, when set, attach a PNG which is sent as
 * a data URL (content becomes [text part, image_url part]) for vision models. */
typedef struct {
    const char *role;  /* "system", "user" or "assistant" */
    const char *content;
    const void *image;
    size_t image_len;
} llm_message;

typedef struct {
    char *content;            /* malloc'd full reply text (continuations joined); on a failed
                                 call, what arrived before it failed (NULL if nothing) */
    char finish_reason[32];   /* of the last response: "stop", ... */
    char model[128];          /* model name the server reported, if any */
    llm_usage usage;          /* this call only */
    int attempts;             /* HTTP requests this call made */
    int continuations;        /* of them, follow-ups after finish_reason "length" */
    double seconds;           /* wall time of the call, waits included */
    int cut;                  /* LLM_CUT_*: why the reply was cut short, if it was */
    int early_stop;           /* the answer was complete before the model stopped: not waited for */
    int model_failure;        /* a failed call that the model caused (a loop, no answer in the
                                 budget, an empty or refused reply), not the network or server */
    int tokens_counted;       /* no usage reported: completion tokens counted from the stream,
                                 prompt tokens estimated from the prompt's size */
    int constrained;          /* a JSON schema was enforced by the server */
} llm_reply;

void llm_config_defaults(llm_config *c);

/* Ask the server once whether it is there (GET {base}/models, within the
 * connect timeout and a few seconds), before work that depends on it:
 * 0 when it answers (any HTTP status but a refused key), else -1 with one
 * line in err naming the server and what to do. */
int llm_check_server(const llm_config *c, char *err, int errlen);

/* Apply one command-line flag to the config: --base-url, --model,
 * --api-key-env, --temperature, --llm-seed, --max-tokens, --connect-timeout,
 * --llm-timeout, --llm-call-time, --llm-retries, --llm-backoff,
 * --max-continuations, --stream, --llm-stop, --constrain, --llm-context.
 * Returns 1 if the flag was consumed (with its value), 0 if it is not an LLM
 * flag, -1 on a bad value (err says why). */
int llm_config_flag(llm_config *c, const char *flag, const char *value, char *err, int errlen);
/* 1 when url may name a model server: http:// or https://, then printable
 * ASCII without spaces (a stored file:// or gopher:// address would have
 * curl read a local file or speak another protocol). */
int llm_base_url_ok(const char *url);

/* The names of the flags above without their dashes, NULL-terminated (for
 * commands that build their option tables from them). */
extern const char *const llm_flag_names[];
/* A getopt_long table: the n_own options of own, then every flag above
 * (required_argument, val) and the terminator, into table (room for cap
 * entries; the LLM flags that do not fit are left out). */
struct option;
void llm_options_table(const struct option *own, size_t n_own, int val, struct option *table, size_t cap);

/* One-line usage text of the flags above, for --help. */
const char *llm_flags_help(void);

/* The config as a JSON object text (malloc'd) for a run directory: the key
 * variable's name is recorded, never its value. */
char *llm_config_json(const llm_config *c);

/* One call for a task (see the top of this file).  Returns 0 and fills out,
 * or -1 with a one-line reason in err that says what to do about it; in both
 * cases free out with llm_reply_free (a failed call may hold a cut reply). */
int llm_chat_task(const llm_config *c, const llm_task *task, const llm_message *msgs, int n, llm_reply *out,
                  char *err, int errlen);
/* llm_chat_task for plain text with the default budget. */
int llm_chat(const llm_config *c, const llm_message *msgs, int n, llm_reply *out, char *err,
             int errlen);

/* The token budget a task gets under this config. */
long llm_task_tokens(const llm_config *c, const llm_task *task);

/* The server's context size: c->context if set, else read from the server
 * where it exposes it (llama.cpp's llama-server GET /props, vLLM and LM
 * Studio model lists, Ollama GET /api/ps); 0 when unknown.  from says
 * where the number came from.  Never fails: a server that tells nothing
 * leaves it unknown. */
long llm_probe_context(const llm_config *c, char *from, size_t fromlen);

/* Tokens the messages take, estimated from their size (3 bytes a token,
 * an over-estimate for English and C, plus a little per message for the
 * chat template). */
long llm_estimate_tokens(const llm_message *msgs, int n);
/* 1 if the messages and a reply of reply_tokens fit the known context (or it
 * is unknown), else 0 with one line in why. */
int llm_fits(const llm_config *c, const llm_message *msgs, int n, long reply_tokens, char *why, int whylen);
void llm_reply_free(llm_reply *r);

/* The JSON body llm_chat_task would first send for these messages (malloc'd;
 * task may be NULL for plain text), e.g. to store a prompt in a run
 * directory.  It never contains the key. */
char *llm_request_json(const llm_config *c, const llm_task *task, const llm_message *msgs, int n, char *err,
                       int errlen);

/* Replace every occurrence of the configured key (if set in the environment)
 * in s with "[redacted]", in place (the text only gets shorter or keeps its
 * length).  Exposed so callers can pass server-supplied text through it too. */
void llm_redact(const llm_config *c, char *s);

/* Standard base64 of data (malloc'd, NUL-terminated). */
char *llm_base64(const void *data, size_t len);

/* The `pcgrllm ask` command (host/cli/cmd_ask.c): one prompt, one printed reply. */
int cmd_ask(int argc, char **argv);

#endif
