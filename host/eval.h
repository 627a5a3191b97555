/* The evaluator (SPEC §5): scores generated levels against a scenario's
 * target, plus the per-level metrics and the diversity of a set of levels.
 * The built-in scenarios are those of SPEC §7.  docs/evaluator.md states the
 * rules and how each ambiguity of the specification is read. */
#ifndef PCG_EVAL_H
#define PCG_EVAL_H
#include "level.h"

/* Target kinds: a required enemy set g (encounter), a gate tile G on the
 * way Player -> G -> Door -> Treasure (key-door), or the length of the
 * solution route Player -> Key -> Door (path length). */
enum { EVAL_ENCOUNTER = 0, EVAL_KEYDOOR = 1, EVAL_PATHLENGTH = 2 };
/* Enemy order of g and p: BAT, SCORPION, SPIDER. */
#define EVAL_N_ENEMIES 3

typedef struct {
    int number;          /* 1..4 for the built-in scenarios, 0 for others */
    const char *story;   /* the designer's text */
    const char *flow;    /* e.g. "Player -> Bat -> Key -> Door" */
    int variant;         /* VARIANT_DUNGEON or VARIANT_TREASURE (dungeon.h) */
    int kind;            /* EVAL_ENCOUNTER or EVAL_KEYDOOR */
    int enemies[EVAL_N_ENEMIES]; /* encounter: g_e in {0,1} */
    int gate;            /* key-door: TILE_KEY or TILE_BAT (any tile id 1..9) */
    int length;          /* path length: the wanted route length in steps */
    int tolerance;       /* path length: steps off that still score 1 */
} eval_scenario_t;

/* Score of a level whose solution route is route steps long (-1: none)
 * against a path-length target: 1 within the tolerance, then falling
 * linearly to 0 at a further `length` steps off. */
double eval_route_score(int route, int length, int tolerance);

/* Built-in scenario 1..eval_n_scenarios(); NULL for any other number. */
const eval_scenario_t *eval_scenario(int number);
int eval_n_scenarios(void);

/* Everything measured on one level.  Distances are BFS steps, -1 when there
 * is no path or the tile is missing. */
typedef struct {
    double score;        /* 0..1 */
    int solutions;       /* encounter: keys giving a solution; key-door: gates
                            on a playable route (0 when not playable) */
    int playable;        /* encounter: the player reaches the door;
                            key-door: the level is playable (score 1) */
    int missing;         /* TILE_PLAYER/TILE_DOOR/TILE_TREASURE when that
                            required tile is absent (score 0), else 0 */
    int met[EVAL_N_ENEMIES]; /* encounter: p_e, enemy met on some solution */
    int player_door;     /* encounter: to the first DOOR; key-door: to the
                            nearest DOOR (walls blocking) */
    int route;           /* encounter and path length: steps of the shortest
                            solution route (player->key + key->door); key-door: -1 */
    int player_gate;     /* key-door: player to the nearest G, DOORs blocking */
    int gate_door;       /* key-door: that G to its nearest DOOR */
    int player_treasure; /* key-door: player to TREASURE, DOORs passable */
    int counts[N_TILES]; /* tiles of each id */
    double entropy;      /* Shannon entropy of the tile-type shares, bits */
    double wall_share;   /* WALL tiles / cells */
} eval_level_t;

typedef struct {
    int n;                     /* levels */
    double fitness;            /* mean score */
    double diversity;          /* mean pairwise Hamming distance, cells */
    double diversity_share;    /* the same divided by the cells per level */
    int n_playable;
    double playable_share;     /* n_playable / n */
    double playable_wall_share;/* mean wall share of playable levels, -1 if none */
    double mean_solutions;
    double mean_entropy;
} eval_summary_t;

/* Score one level; fills every field of m.  No allocation, thread-safe. */
void eval_level(const eval_scenario_t *s, const level_t *l, eval_level_t *m);

/* Score n levels.  per (n entries) may be NULL; sum may be NULL, which also
 * skips the O(n^2) diversity.  Returns the fitness (mean score, 0 if n == 0). */
double eval_levels(const eval_scenario_t *s, const level_t *levels, int n, eval_level_t *per, eval_summary_t *sum);

/* Scores only, for benchmarks and the training loop: scores[i] for each of n
 * levels, scored in parallel (OpenMP).  Returns the mean score. */
double eval_score_batch(const eval_scenario_t *s, const level_t *levels, int n, float *scores);

/* Mean pairwise Hamming distance in cells; a pair of different sizes counts
 * as differing in every cell of the larger.  0 for fewer than two levels. */
double eval_diversity(const level_t *levels, int n);

#endif
