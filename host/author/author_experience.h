/* The offline author's experience terms (docs/prefer.md#refinement): level
 * features a reward can add so that play under a persona changes in one
 * experience dimension -- forks, dead ends, open floor, enemies by the key.
 * Which feature serves which dimension is the offline author's own rule
 * (its levers), kept here; a dimension without a lever is declined.  Like
 * the rest of the offline author this is a rule-based baseline, not a
 * model's judgement of what a player feels. */
#ifndef PCG_AUTHOR_EXPERIENCE_H
#define PCG_AUTHOR_EXPERIENCE_H
#include "author_offline.h"
#include <stddef.h>

/* 1 for the term kinds of this file (AT_EXP_*). */
int author_is_experience(int kind);

/* The lever of dimension dim_id ("curiosity", ...): the term kind and the
 * sign of the feature that raises the dimension.  -1 without one. */
int author_experience_lever(const char *dim_id, int *sign);

/* Steer r towards direction (+1 raise, -1 lower) of dimension dim_id: add
 * the lever's term with weight direction * sign * strength, or multiply an
 * existing one's by strength.  1 when r changed; 0 (note says why) when
 * the dimension has no lever or the weight is at its limit. */
int author_experience_revise(author_reward *r, const char *dim_id, int direction, float strength, char *note,
                             int len);

/* The C of r's experience terms, added to v inside author_code's loop over
 * the two levels (l); "" when r has none.  Its length, or -1 when buf is
 * too small. */
int author_experience_code(const author_reward *r, char *buf, size_t len);

#endif
