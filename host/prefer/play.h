/* Recorded playthroughs of levels (docs/prefer.md#play).
 *
 * A player walks a level from the PLAYER tile, one 4-neighbour step at a
 * time (walls block; enemies, keys and the door are walkable), picks up
 * the KEY and ends at the DOOR.  Every step is recorded: where the
 * player stands, what it sees (the 5x5 window around it, the evaluator's
 * meeting distance), its legal moves, the move taken and the events of
 * the step.  A level without a route is played as far as the player gets
 * and ends with the reason: a complete record of a failed play.
 *
 *   route     walks the evaluator's solution route (player -> key ->
 *             door, host/core/eval.h eval_routes), the shortest one
 *   explorer  seeded: explores unvisited cells first, heads for the key
 *             and then the door once it has seen them and has visited a
 *             share `curiosity` of the cells it can reach
 *   chooser   follows corridors and turns back at dead ends by itself, and
 *             at each junction (two or more ways on besides the way back)
 *             asks a chooser (a language model: play_model.h) which way;
 *             when the chooser gives no answer the explorer's rule moves */
#ifndef PCG_PLAY_H
#define PCG_PLAY_H
#include "level.h"
#include <jansson.h>
#include <stdio.h>

enum { PLAY_ROUTE = 0, PLAY_EXPLORER = 1, PLAY_CHOOSER = 2 };

/* A junction's question: the legal moves (names as in the record) and the
 * cells they lead to.  Returns the index of the move taken, or -1 to leave
 * it to the explorer's rule; may add fields to the step's record. */
typedef struct {
    const level_t *level;
    int pos, has_key, step;
    int n;
    const char *moves[4];
    int cells[4];
    json_t *record;
} play_question;
typedef int (*play_chooser)(void *ctx, const play_question *q);
enum { PLAY_WINDOW = 2 }; /* cells each side: a 5x5 view */

/* Event bits of one step. */
enum {
    PLAY_EV_ENEMY = 1,     /* an enemy came within the window for the first time */
    PLAY_EV_KEY = 2,       /* stepped on the key (first time) */
    PLAY_EV_DOOR = 4,      /* reached the door with the key: the play ends */
    PLAY_EV_DEAD_END = 8,  /* the cell has one open neighbour and is no goal */
    PLAY_EV_BACKTRACK = 16 /* stepped onto a cell visited before */
};

/* How a play ended. */
enum { PLAY_END_DOOR = 0, PLAY_END_NO_ROUTE = 1, PLAY_END_STUCK = 2, PLAY_END_STEP_LIMIT = 3, PLAY_END_INVALID = 4 };

typedef struct {
    int player;       /* PLAY_ROUTE or PLAY_EXPLORER */
    unsigned seed;    /* explorer's choices */
    double curiosity; /* explorer: share of reachable cells to visit before heading for the goal, 0..1 */
    int max_steps;    /* 0: four times the cells */
    play_chooser chooser; /* PLAY_CHOOSER */
    void *chooser_ctx;
    const char *chooser_name; /* the header's player name, e.g. "llm" */
} play_opts;

typedef struct {
    int end;                     /* PLAY_END_* */
    int steps, backtracks, dead_ends, enemies_seen, visited;
    int key_step, door_step;     /* step numbers, -1 if never */
} play_summary;

/* Defaults: route player, seed 0, curiosity 0.5, max_steps 0. */
void play_opts_default(play_opts *o);
/* "door", "no_route", ... for PLAY_END_*. */
const char *play_end_name(int end);

/* Play l and append one JSON object per step to steps (a JSON array the
 * caller owns), then fill *sum.  Never fails on a level's content; -1
 * only when out of memory. */
int play_level(const level_t *l, const play_opts *o, json_t *steps, play_summary *sum);

/* The level as rows of tile characters (levelio.h tile_char). */
json_t *play_map_json(const level_t *l);
/* The record's header and closing lines (docs/prefer.md#trajectory-files). */
json_t *play_header_json(const char *level_name, const level_t *l, const play_opts *o);
json_t *play_summary_json(const play_summary *s);
/* Play l and write its whole record to f, one JSON object a line.  0, or
 * -1 when out of memory or the write fails. */
int play_write_record(FILE *f, const char *level_name, const level_t *l, const play_opts *o, play_summary *sum);

#endif
