/* What the tool calls' parser (tools.c) and the level tools (tools_level.c)
 * share.  Private to host/levelgen/. */
#ifndef PCG_TOOLS_INTERNAL_H
#define PCG_TOOLS_INTERNAL_H
#include "level.h"
#include <stdint.h>

enum { TOOL_SET, TOOL_LINE, TOOL_RECT, TOOL_ROOM, TOOL_CAVE, TOOL_AUTOMATA, TOOL_MAZE, TOOL_REPAIR, N_TOOLS };

/* One checked call: the cells it may touch are r0..r1 x c0..c1. */
typedef struct {
    int tool;
    int row, col, row2, col2, height, width, steps;
    int tile;
    uint64_t seed;
    int r0, c0, r1, c1;
} tool_call;

/* The level tools; each changes WALL and EMPTY cells only. */
void tool_room(level_t *l, const tool_call *c);
void tool_cave(level_t *l, const tool_call *c);
void tool_automata(level_t *l, const tool_call *c);
void tool_maze(level_t *l, const tool_call *c);
void tool_repair(level_t *l);

#endif
