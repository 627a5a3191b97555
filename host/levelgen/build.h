/* The deterministic level builder (docs/harness.md, "The builder"): a
 * level that meets a target, joined from certified pieces (pieces.h) on
 * the generator's map and verified with the evaluator.
 *
 * The route is one corridor from the player's corner to the door's, walls
 * everywhere else: east along the top row, then south down the far
 * column.  Its length is set by detours in fixed slots (one cell deep
 * above the top row and beside the far column, up to side - 2 deep across
 * the map from the far column), the key lies on it at the first leg's
 * length, enemies sit in alcoves (met) or sealed cells (not met).  The
 * same target, side and seed give the same level byte for byte. */
#ifndef PCG_BUILD_H
#define PCG_BUILD_H
#include "eval.h"
#include "level.h"
#include "target.h"
#include <stdint.h>

enum { BUILD_OK = 0, BUILD_REFUSED = 1, BUILD_FAILED = -1 };
/* Sides the builder takes. */
#define BUILD_SIDE_MIN 5

typedef struct {
    int side;
    int corner;                        /* the player's corner, 0..3 as dungeon_corner numbers them */
    int leg_key, leg_door;             /* the legs laid */
    int pieces;                        /* pieces certified for this side */
    unsigned char tiles[PCG_MAX_CELLS];
    level_t level;                     /* side x side, tiles above */
    eval_scenario_t scenario;          /* the target as the evaluator reads it */
    eval_level_t eval;                 /* the evaluator's measure of the level */
    int perfect;                       /* path length: the evaluator's perfect; other kinds: score 1 */
} build_result_t;

/* The longest route the builder lays on a side x side map. */
int build_route_max(int side);

/* Build a level for t on a side x side map; seed picks the player's corner
 * (seed mod 4: its diagonal and end) and where enemies go.  BUILD_OK with
 * out filled and verified; BUILD_REFUSED with a one-line reason for a
 * target that target_feasible refuses or that the builder cannot lay;
 * BUILD_FAILED when the finished level does not pass the evaluator (a
 * defect of the builder, said in reason). */
int build_level(const target_t *t, int side, uint64_t seed, build_result_t *out, char *reason, int len);

#endif
