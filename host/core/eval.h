/* The evaluator (docs/method.md#evaluation): scores generated levels against a scenario's
 * target, plus the per-level metrics and the diversity of a set of levels.
 * The built-in scenarios are the paper's (docs/method.md#scenarios).
 * docs/evaluator.md states the rules and how each ambiguity of the paper's
 * description is read. */
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
    int leg_key, leg_door; /* path length, two-leg form: player -> key and key -> door steps wanted
                              (length is their sum); 0 in the total form */
    int enemy_count;     /* path length: enemy tiles the level must hold for a perfect match; 0: any */
} eval_scenario_t;

/* Score of a level whose solution route is route steps long (-1: none)
 * against a path-length target: 1 within the tolerance, then falling
 * linearly to 0 at a further `length` steps off. */
double eval_route_score(int route, int length, int tolerance);
/* A path-length scenario's score of a route with legs to_key + to_door
 * (-1: none): the total form scores the sum; the two-leg form averages
 * each leg's eval_route_score. */
double eval_pathlength_score(const eval_scenario_t *s, int to_key, int to_door);

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
    int route_key, route_door; /* that route's legs, player -> key (key-avoiding)
                            and key -> door; -1 without a solution */
    int perfect;         /* path length: the route (or both legs) exactly as
                            asked and the enemy count met; 0 otherwise */
    int player_gate;     /* key-door: player to the nearest G, DOORs blocking */
    int gate_door;       /* key-door: that G to its nearest DOOR */
    int player_treasure; /* key-door: player to TREASURE, DOORs passable */
    int counts[N_TILES]; /* tiles of each id */
    double entropy;      /* Shannon entropy of the tile-type shares, bits */
    double wall_share;   /* WALL tiles / cells: the unwalkable tile ratio (UTR)
                            of Word2Minecraft for this level */
    /* Word2Minecraft's view (docs/evaluator.md): the objective tiles are
     * those of the scenario's flow after the player (eval_objective_tiles) */
    int objectives_reachable; /* a "valid" level: every objective tile type is
                                 present and every objective cell reachable
                                 from the player (walls blocking) */
    double objective_path;    /* mean BFS steps from the player to each objective
                                 cell (this level's ASPAO), -1 if not valid */
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
    /* Word2Minecraft's metrics (docs/evaluator.md) */
    int n_valid;               /* levels with objectives_reachable */
    double aspao;              /* mean objective_path over valid levels, -1 if none */
    double utr;                /* mean wall share over all levels */
    double vutr;               /* wall shares of the valid levels summed, over n:
                                  an invalid level counts as 0 */
    /* the evaluation summary of the paper's reference implementation,
     * which its GoT prompts show (eval_reference_level) */
    double solvability;        /* share of solvable levels */
    double important_reachable;/* mean share of the important enemies there and reachable */
} eval_summary_t;

/* Score one level; fills every field of m.  No allocation, thread-safe. */
void eval_level(const eval_scenario_t *s, const level_t *l, eval_level_t *m);

/* Score n levels.  per (n entries) may be NULL; sum may be NULL, which also
 * skips the O(n^2) diversity.  Returns the fitness (mean score, 0 if n == 0). */
double eval_levels(const eval_scenario_t *s, const level_t *levels, int n, eval_level_t *per, eval_summary_t *sum);

/* Scores only, for benchmarks and the training loop: scores[i] for each of n
 * levels, scored in parallel (OpenMP).  Returns the mean score. */
double eval_score_batch(const eval_scenario_t *s, const level_t *levels, int n, float *scores);

/* eval_level's score alone, for an encounter or key-door target on a level
 * of at most four bit-row words (bitrows4.h; the 16x16 map among them):
 * 1 and *score set, or 0 for any other level or target (eval_score_batch
 * then takes eval_level's).  No allocation, thread-safe (eval_score.c). */
int eval_score_small(const eval_scenario_t *s, const level_t *l, double *score);

/* The objective tiles of a scenario (Word2Minecraft's ASPAO): the tiles of
 * its flow after the player.  Encounter: the required enemies, KEY, DOOR;
 * key-door: G, DOOR, TREASURE.  Writes at most EVAL_N_ENEMIES + 3 tile
 * ids into tiles; returns how many. */
int eval_objective_tiles(const eval_scenario_t *s, int *tiles);

/* The important tiles of a scenario, as the paper's reference
 * implementation names them for its summary: the enemies the story asks
 * for (encounter), the gate when it is an enemy (key-door: BAT), none for
 * a path-length target.  Writes at most EVAL_N_ENEMIES tile ids; returns
 * how many. */
int eval_important_tiles(const eval_scenario_t *s, int *tiles);

/* The reference implementation's view of one level, the summary its GoT
 * prompts show (docs/llm.md, "What the paper profile sends"): *solvable is 1 when the player reaches the
 * DOOR and the first KEY in row-major order, only WALL blocking (a path of
 * length > 0 to the key); *reachable is the share of the important tiles
 * (eval_important_tiles) of which some tile lies in the level and can be
 * reached from the player, 1 when there are none.  eval_levels averages
 * both into the summary. */
void eval_reference_level(const eval_scenario_t *s, const level_t *l, int *solvable, double *reachable);

/* One leg of a route the evaluator walks: cells[0] is from, cells[n-1]
 * is to, BFS order rules of docs/evaluator.md#rules; valid only during the callback. */
enum {
    EVAL_LEG_PLAYER_DOOR,     /* the path behind player_door */
    EVAL_LEG_PLAYER_KEY,      /* encounter: a solution's key-avoiding path */
    EVAL_LEG_KEY_DOOR,        /* encounter: that key on to the door */
    EVAL_LEG_PLAYER_GATE,     /* key-door: to the nearest G, doors blocking */
    EVAL_LEG_GATE_DOOR,       /* key-door: that G to its nearest door */
    EVAL_LEG_PLAYER_TREASURE, /* key-door: to the treasure, doors passable */
};
typedef struct {
    int kind;          /* EVAL_LEG_* */
    int from, to;      /* cell indices */
    const short *cells;
    int n;
} eval_leg_t;
typedef int (*eval_route_fn)(void *ctx, const eval_leg_t *leg);
/* Call fn for every path behind a distance or a solution that eval_level
 * reports for s on l: the player -> door path, and for encounter targets
 * both legs of every solution, for key-door targets player -> treasure,
 * player -> G and G -> door.  A leg that does not exist is not reported.
 * Stops at the first non-zero return of fn and returns it; else 0. */
int eval_routes(const eval_scenario_t *s, const level_t *l, eval_route_fn fn, void *ctx);
/* "player -> key", ... for an EVAL_LEG_* kind. */
const char *eval_leg_name(int kind);

/* Mean pairwise Hamming distance in cells; a pair of different sizes counts
 * as differing in every cell of the larger.  0 for fewer than two levels. */
double eval_diversity(const level_t *levels, int n);

#endif
