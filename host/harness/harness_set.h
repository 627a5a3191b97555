/* The harness benchmark's targets (docs/harness.md#the-benchmark).
 *
 * Every feasible two-leg target with each leg in 10..40 steps on the
 * generator's 16x16 map (tolerance 0, three enemies required), shuffled
 * by a seed: the first HARNESS_FIXED are the fixed set every comparison
 * uses, the rest the reserved set.  Each case also names the seed of its
 * starting level (the generator's reset map).  bench/harness_targets.json
 * keeps the set made from HARNESS_SET_SEED; a test checks the file
 * against this code. */
#ifndef PCG_HARNESS_SET_H
#define PCG_HARNESS_SET_H
#include "target.h"
#include <jansson.h>

#define HARNESS_SET_SEED 2026u
#define HARNESS_FIXED 64
#define HARNESS_LEG_MIN 10
#define HARNESS_LEG_MAX 40
#define HARNESS_ENEMIES 3
/* Pairs in the leg range, feasible or not: an upper bound on the set. */
#define HARNESS_SET_MAX ((HARNESS_LEG_MAX - HARNESS_LEG_MIN + 1) * (HARNESS_LEG_MAX - HARNESS_LEG_MIN + 1))

typedef struct {
    int leg_key, leg_door;
    unsigned level_seed; /* the starting level: the generator's reset for this seed */
} harness_case;

/* The whole set for seed, fixed part first; returns how many (at most
 * HARNESS_SET_MAX). */
int harness_set_make(unsigned seed, harness_case *out);
/* The target of a case: two legs, tolerance 0, HARNESS_ENEMIES enemies. */
void harness_case_target(const harness_case *c, target_t *t);

/* {"seed":S,"fixed":F,"cases":[{"player_key":A,"key_door":B,"level_seed":L},...]} */
json_t *harness_set_json(unsigned seed, const harness_case *cases, int n);
/* Strict reading of a set file (untrusted): returns the number of cases
 * and the size of its fixed part in *fixed, or -1 and a one-line reason.
 * Every case must be a feasible target on the generator's map. */
int harness_set_read(const char *path, harness_case *out, int max, int *fixed, char *err, int errlen);

#endif
