/* The small run and observations the refinement tests share
 * (tests/test_refine.c). */
#ifndef PCG_REFINE_FIXTURE_H
#define PCG_REFINE_FIXTURE_H

/* The directory holding run/ (scenario 1, one node, 4 levels) and
 * obs.jsonl (offline assessments by thrill_seeker and system_purist),
 * made on first use. */
const char *refine_fixture(void);

#endif
