/* The offline author's reading of a story: keywords in, a target out
 * (host/core/target.h says what a target is).
 *
 * story_extract_offline() is the rule-based (keyword) reading used by the
 * offline author; a language model reads the same target through
 * target_from_json().  Both refuse what the evaluator cannot measure, with
 * a one-line reason that begins with its category ("ambiguous: ...").  docs/offline-author.md lists the rules. */
#ifndef PCG_STORY_H
#define PCG_STORY_H
#include "target.h"

/* Rule-based target extraction.  Returns STORY_OK (reason says how the story
 * was read) or STORY_REFUSED (reason says why).  Deterministic; any input,
 * including NULL, binary or very long text, gets an answer. */
int story_extract_offline(const char *story, target_t *out, char *reason, int len);

/* 0 when target t keeps what the story's words ask for; -1 and a reason
 * when it leaves out an enemy type the story names (a path-length or
 * key-door target cannot require it), a count of enemies, or a number of
 * steps.  Both extractions pass through it. */
int story_check_target(const char *story, const target_t *t, char *reason, int len);

/* The category a refusal's reason begins with ("incomplete",
 * "contradictory", "ambiguous", "unsupported"), or NULL for none. */
const char *story_refusal_category(const char *reason);

#endif
