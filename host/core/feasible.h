/* What a target can ask of a map, and what a level must be to meet it
 * (docs/evaluator.md#feasibility).
 *
 * A path-length target is refused before anything runs when the map's
 * geometry proves it cannot be met: a route's legs are shortest paths on a
 * grid, so each is at least the Manhattan distance between its ends, of the
 * same parity, and visits each cell at most once.  The default map puts the
 * player and the door in opposite corners, so every route is at least
 * (H - 3) + (W - 3) steps (26 on 16x16) and of even length. */
#ifndef PCG_FEASIBLE_H
#define PCG_FEASIBLE_H
#include "level.h"
#include "target.h"

/* The fixed cells a target is measured against. */
typedef struct {
    int h, w;
    int player, door; /* cell indices */
} target_map_t;

/* The generator's map: the player and the door in opposite corners, one
 * step in from the edges (every corner the reset can draw gives the same
 * distances). */
void target_map_default(target_map_t *m, int h, int w);
/* The map of an existing level: its first PLAYER and first DOOR.  -1 and
 * reason when either is missing. */
int target_map_of_level(const level_t *l, target_map_t *m, char *reason, int len);

/* 0 when some level on map m could meet t (the engine cannot prove it
 * impossible); -1 and a one-line reason that names the bound otherwise.
 * Only path-length targets have bounds; every valid other target passes. */
int target_feasible(const target_t *t, const target_map_t *m, char *reason, int len);

/* 0 when l is a valid level for a path-length target: one PLAYER, one DOOR,
 * exactly one KEY, t's enemy count when it names one, and every non-wall
 * cell in one connected region; else -1 and the first rule broken. */
int target_level_valid(const target_t *t, const level_t *l, char *reason, int len);

#endif
