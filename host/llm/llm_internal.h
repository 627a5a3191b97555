/* What host/llm/llm.c (the call) and host/llm/llm_config.c (the config and
 * the server's context size) share; no other file includes this. */
#ifndef PCG_LLM_INTERNAL_H
#define PCG_LLM_INTERNAL_H
#include "llm.h"
#include <jansson.h>

/* The API key from the environment variable the config names; NULL when
 * none is named or it is unset or empty. */
const char *llm_api_key(const llm_config *c);

/* The only way the client writes err: format, flatten to one line, redact
 * the key.  Always returns -1. */
int llm_fail(const llm_config *c, char *err, int errlen, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A JSON string of s ("" for NULL); invalid UTF-8 bytes become '?', since
 * jansson takes only UTF-8.  NULL when out of memory. */
json_t *llm_jstr(const char *s);

#endif
