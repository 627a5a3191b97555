/* Client for OpenAI-compatible chat completions (POST {base_url}/chat/completions),
 * as served by OpenAI itself and by llama-server, vLLM, Ollama and LM Studio.
 *
 * One call of llm_chat() is one sample: the request always carries the model,
 * the messages, the temperature, "stream": false and, when set, the seed and
 * the token limit; it never asks for several choices.  Network errors, 408,
 * 429 (Retry-After honoured) and 5xx are retried with exponential backoff and
 * jitter, a bounded number of times.  A reply cut by the token limit
 * (finish_reason "length") is continued in further requests, a bounded number
 * of times, and is an error if it still does not finish: a half reply is never
 * returned as complete.  A malformed body or an empty choice list is a clear
 * error, not retried (the caller decides whether to ask again).
 *
 * The API key is read from the environment variable named in the config at
 * each call and only ever placed in the Authorization header.  Every message
 * this client produces (errors, reply text) is passed through a redaction that
 * replaces the key with "[redacted]", so not even a server that echoes the key
 * back can make it appear in logs or run directories. */
#ifndef PCG_LLM_H
#define PCG_LLM_H
#include <stddef.h>

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
} llm_usage;

typedef struct {
    char base_url[512];      /* ".../v1"; "/chat/completions" is appended */
    char model[256];
    char api_key_env[128];   /* environment variable holding the key; "" = never send one */
    double temperature;      /* always sent; default 0 */
    long seed;               /* sent when >= 0; default -1 (not sent) */
    long max_tokens;         /* sent when > 0; default 4096 */
    char max_tokens_field[32]; /* "max_tokens" (default) or "max_completion_tokens" */
    double connect_timeout;  /* seconds, per request; default 10 */
    double total_timeout;    /* seconds, per request; default 600 */
    int retries;             /* extra attempts after a retryable failure; default 4, at most 10 */
    double backoff;          /* first backoff in seconds, doubled each retry; default 2 */
    double backoff_max;      /* cap of one backoff wait; default 60 */
    double retry_after_max;  /* the longest Retry-After honoured; longer is an error; default 300 */
    int max_continuations;   /* follow-up requests for a reply cut by the token limit; default 2 */
    long max_response_bytes; /* cap on one response body; default 8 MiB */
    llm_usage *usage;        /* optional: every call adds its usage here (per-run total) */
} llm_config;

/* One chat message.  image/image_len, when set, attach a PNG which is sent as
 * a data URL (content becomes [text part, image_url part]) for vision models. */
typedef struct {
    const char *role;  /* "system", "user" or "assistant" */
    const char *content;
    const void *image;
    size_t image_len;
} llm_message;

typedef struct {
    char *content;            /* malloc'd full reply text (continuations joined) */
    char finish_reason[32];   /* of the last response: "stop", ... */
    char model[128];          /* model name the server reported, if any */
    llm_usage usage;          /* this call only */
    int attempts;             /* HTTP requests this call made */
    int continuations;        /* of them, follow-ups after finish_reason "length" */
    double seconds;           /* wall time of the call, waits included */
} llm_reply;

void llm_config_defaults(llm_config *c);

/* Apply one command-line flag to the config: --base-url, --model,
 * --api-key-env, --temperature, --llm-seed, --max-tokens, --connect-timeout,
 * --llm-timeout, --llm-retries, --llm-backoff, --max-continuations.
 * Returns 1 if the flag was consumed (with its value), 0 if it is not an LLM
 * flag, -1 on a bad value (err says why). */
int llm_config_flag(llm_config *c, const char *flag, const char *value, char *err, int errlen);

/* One-line usage text of the flags above, for --help. */
const char *llm_flags_help(void);

/* The config as a JSON object text (malloc'd) for a run directory: the key
 * variable's name is recorded, never its value. */
char *llm_config_json(const llm_config *c);

/* Send one chat completion request (see the top of this file).  Returns 0 and
 * fills out (free with llm_reply_free) or returns -1 with a one-line reason in
 * err; out->content is NULL on error. */
int llm_chat(const llm_config *c, const llm_message *msgs, int n, llm_reply *out, char *err,
             int errlen);
void llm_reply_free(llm_reply *r);

/* The JSON body llm_chat would send for these messages (malloc'd), e.g. to
 * store a prompt in a run directory.  It never contains the key. */
char *llm_request_json(const llm_config *c, const llm_message *msgs, int n, char *err, int errlen);

/* Replace every occurrence of the configured key (if set in the environment)
 * in s with "[redacted]", in place (the text only gets shorter or keeps its
 * length).  Exposed so callers can pass server-supplied text through it too. */
void llm_redact(const llm_config *c, char *s);

/* Both extractors below read only what follows the last "</think>" when the
 * reply holds one (reasoning models that inline their thinking). */

/* Code from a model reply (malloc'd): the body of the first fenced block
 * whose info string is empty, c, cpp, c++, cc, h or cuda; the whole reply
 * (trimmed) when it has no fence at all.  A reply whose only fenced blocks
 * are in other languages, or that is empty, is an error (NULL, err set). */
char *llm_extract_code(const char *reply, char *err, int errlen);

/* The first JSON object in a reply (malloc'd text): a ```json block if there
 * is one, else the first balanced {...} in the text.  NULL with err if none. */
char *llm_extract_json(const char *reply, char *err, int errlen);

/* Standard base64 of data (malloc'd, NUL-terminated). */
char *llm_base64(const void *data, size_t len);

/* The `pcgrllm ask` command (host/cmd_ask.c): one prompt, one printed reply. */
int cmd_ask(int argc, char **argv);

#endif
