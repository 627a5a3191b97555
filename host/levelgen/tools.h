/* Level tools and tool calls (docs/harness.md, "Level tools and tool calls").
 *
 * A model edits a level by replying with a JSON list of tool calls:
 *   [{"tool":"set","row":3,"col":4,"tile":"WALL"},
 *    {"tool":"rect","row":2,"col":2,"height":3,"width":5,"tile":"EMPTY"}]
 * Primitive edits (set, line, rect) may write any tile but PLAYER and DOOR
 * and never touch the PLAYER or DOOR cell.  Level tools (room, cave,
 * automata, maze, repair) change WALL and EMPTY cells only, so the player,
 * the door, the key and the enemies stay where they are.
 *
 * Every call is checked on its own before it runs; a refused call changes
 * nothing and gets one reason that names the call and what to change.
 * Applying works on a copy: the input level is never written. */
#ifndef PCG_TOOLS_H
#define PCG_TOOLS_H
#include "level.h"
#include <stdint.h>

/* Calls one reply may hold; the rest are refused with one reason. */
#define TOOLS_MAX_CALLS 64
/* The longest reply read, in bytes. */
#define TOOLS_MAX_REPLY 65536
/* The most cells a cave digger carves, and automata steps, per call. */
#define TOOLS_MAX_CAVE_STEPS 256
#define TOOLS_MAX_AUTOMATA_STEPS 8

typedef struct {
    int call;          /* 1-based index of the call in the reply; 0: the reply as a whole */
    char reason[200];  /* "call 3: row 17 is outside 0..15" */
} tools_refusal;

typedef struct {
    int n_calls;       /* calls the reply held (beyond TOOLS_MAX_CALLS included) */
    int applied;       /* calls that ran */
    int n_refused;     /* entries of refused (the calls past the limit are one entry) */
    tools_refusal refused[TOOLS_MAX_CALLS + 2];
    int changed;       /* cells whose tile differs from the input level */
} tools_result;

/* The tools' names, NULL-terminated, in the order error messages list them. */
extern const char *const tools_names[];

/* Read the reply's JSON list (bare, in a ```json fence or within prose: the
 * first '[' to its matching ']'), check each call and apply those that pass
 * to a copy of in: out views out_tiles (PCG_MAX_CELLS bytes).  seed makes
 * cave and maze reproducible (a call's own "seed" takes precedence).
 * Returns 0 when the reply was read as a list (refused calls or not), -1
 * when it was not (out is then a copy of in and err says why, in words the
 * model can act on). */
int tools_apply(const char *reply, const level_t *in, level_t *out, unsigned char *out_tiles, uint64_t seed,
                tools_result *res, char *err, int errlen);

/* The list of a reply as tools_apply reads it (a new reference), or NULL
 * with err. */
struct json_t *tools_read_list(const char *reply, char *err, int errlen);

/* The same on an already parsed list (a jansson json_t array). */
struct json_t;
void tools_apply_list(const struct json_t *list, const level_t *in, level_t *out, unsigned char *out_tiles,
                      uint64_t seed, tools_result *res);

/* Recovery of a reply cut short: the complete call objects of its list,
 * re-joined as a list (malloc'd text); NULL when none is complete.  *kept
 * is the number of calls kept. */
char *tools_recover(const char *reply, int *kept);

/* Cells in which a and b (of one size) differ. */
int tools_cells_changed(const level_t *a, const level_t *b);

/* The tile id of a name the calls may use ("WALL", "wall"), or -1. */
int tools_tile_id(const char *name);

#endif
