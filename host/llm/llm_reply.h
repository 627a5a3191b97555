/* Reading model replies (host/llm/llm_reply.c): the code or JSON a reply holds,
 * and what the client watches while a reply streams in.  Pure text
 * functions: no network, no allocation except the returned copies. */
#ifndef PCG_LLM_REPLY_H
#define PCG_LLM_REPLY_H
#include <stddef.h>

/* The extractors read only what follows the last "</think>" when the reply
 * holds one (reasoning models that inline their thinking). */

/* Code from a model reply (malloc'd): the body of the first fenced block
 * whose info string is empty, c, cpp, c++, cc, h or cuda; the whole reply
 * (trimmed) when it has no fence at all.  A reply whose only fenced blocks
 * are in other languages, or that is empty, is an error (NULL, err set). */
char *llm_extract_code(const char *reply, char *err, int errlen);

/* The first JSON object in a reply (malloc'd text): a ```json block if there
 * is one, else the first balanced {...} in the text.  NULL with err if none. */
char *llm_extract_json(const char *reply, char *err, int errlen);

/* While streaming: 1 once the reply so far holds a finished answer, so the
 * rest need not be generated: a code block (as llm_extract_code picks it)
 * with its closing fence; a balanced JSON object. */
int llm_code_closed(const char *reply);
int llm_json_closed(const char *reply);

/* 1 if the text so far ends in a loop (one passage or one line repeated far
 * more often than any answer would), with what repeats in why. */
int llm_text_loops(const char *text, size_t len, char *why, size_t whylen);

/* Append a continuation to the text so far (realloc'd; NULL when out of
 * memory, sofar then still owned by the caller).  If the text ends inside an
 * open code block and the continuation opens a new one anyway, that fence
 * line is dropped. */
char *llm_join_continuation(char *sofar, const char *more);

/* 1 if s holds only whitespace. */
int llm_blank(const char *s);

#endif
