/* The offline author's reading of a story: keywords in, a target out
 * (host/core/target.h says what a target is).
 *
 * story_extract_offline() is the rule-based (keyword) reading used by the
 * offline author; a language model reads the same target through
 * target_from_json().  Both refuse what the evaluator cannot measure, with
 * a one-line reason.  docs/offline-author.md lists the rules. */
#ifndef PCG_STORY_H
#define PCG_STORY_H
#include "target.h"

/* Rule-based target extraction.  Returns STORY_OK (reason says how the story
 * was read) or STORY_REFUSED (reason says why).  Deterministic; any input,
 * including NULL, binary or very long text, gets an answer. */
int story_extract_offline(const char *story, target_t *out, char *reason, int len);

#endif
