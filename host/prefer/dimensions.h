/* The twelve experience dimensions of PREFER, adapted to dungeon play
 * (docs/prefer.md#experience-dimensions): nine of PXI, three of CORGIS,
 * each scored 1..5.  Their definitions and scale anchors live in one data
 * file, prompts/prefer/dimensions.json, shown as written to a model judge;
 * the engine fixes only their order and ids. */
#ifndef PCG_DIMENSIONS_H
#define PCG_DIMENSIONS_H
#include <jansson.h>

#define PREFER_N_DIMS 12
#define PREFER_N_PXI 9 /* the first nine are PXI's, the last three CORGIS's */

enum {
    DIM_GOALS_RULES,
    DIM_CHALLENGE_FIT,
    DIM_PROGRESS_FEEDBACK,
    DIM_EASE_OF_CONTROL,
    DIM_AUTONOMY,
    DIM_MASTERY,
    DIM_CURIOSITY,
    DIM_MEANING,
    DIM_IMMERSION,
    DIM_COGNITIVE,
    DIM_DECISION,
    DIM_EMOTIONAL
};

/* "goals_rules", ... for dimension j; NULL past the end. */
const char *dim_id(int j);
/* The index of an id, or -1. */
int dim_index(const char *id);

/* The dimensions file, checked: twelve entries in the engine's order with
 * an instrument (PXI for the first nine, CORGIS after), a name, a
 * definition and anchors 1, 3 and 5.  A new reference, or NULL and one line. */
json_t *dim_load(char *err, int errlen);

/* A persona's file, prompts/prefer/personas/NAME.txt (NAME: lower case,
 * digits, _).  malloc'd text, or NULL with one line (*usage set when the
 * name itself is wrong or names no file). */
char *persona_load(const char *name, int *usage, char *err, int errlen);

#endif
