/* The level tools: room, cave, automata, maze, repair.  Each changes WALL
 * and EMPTY cells only: the player, the door, the key, the enemies and the
 * treasure are never moved, carved over or walled in place. */
#include "philox.h"
#include "tools_internal.h"
#include <string.h>

static int is_ground(int t) { return t == TILE_WALL || t == TILE_EMPTY; }

static void put(level_t *l, int r, int c, int tile)
{
    if (lv_in(l, r, c) && is_ground(l->t[r * l->w + c])) l->t[r * l->w + c] = (unsigned char)tile;
}

/* A rectangle of EMPTY inside a WALL ring; the middle of each side of the
 * ring stays open, so the room joins what lies around it. */
void tool_room(level_t *l, const tool_call *c)
{
    int mr = (c->r0 + c->r1) / 2, mc = (c->c0 + c->c1) / 2;
    for (int r = c->r0; r <= c->r1; r++)
        for (int col = c->c0; col <= c->c1; col++) {
            int ring = r == c->r0 || r == c->r1 || col == c->c0 || col == c->c1;
            int gap = (r == mr && (col == c->c0 || col == c->c1)) || (col == mc && (r == c->r0 || r == c->r1));
            put(l, r, col, ring && !gap ? TILE_WALL : TILE_EMPTY);
        }
}

/* Four neighbours of a cell in a random order drawn from s. */
static void shuffled_dirs(philox_stream *s, int *d)
{
    for (int i = 0; i < 4; i++) d[i] = i;
    for (int i = 3; i > 0; i--) {
        int j = (int)philox_below(philox_next(s), (pcg_u32)(i + 1));
        int t = d[i];
        d[i] = d[j];
        d[j] = t;
    }
}

/* A depth-first digger: from the start cell it tunnels into a random wall
 * next to it, and backs up when no wall is next to it, until it has carved
 * c->steps walls or has nowhere left to dig. */
void tool_cave(level_t *l, const tool_call *c)
{
    philox_stream s;
    philox_stream_init(&s, c->seed, 0x63617665u, 0);
    static __thread short stack[PCG_MAX_CELLS];
    static __thread unsigned char seen[PCG_MAX_CELLS];
    int cells = l->h * l->w, top = 0, carved = 0;
    memset(seen, 0, (size_t)cells);
    int start = c->row * l->w + c->col;
    stack[top++] = (short)start;
    seen[start] = 1;
    if (l->t[start] == TILE_WALL) {
        l->t[start] = TILE_EMPTY;
        carved++;
    }
    while (top > 0 && carved < c->steps) {
        int cur = stack[top - 1], d[4], next = -1;
        shuffled_dirs(&s, d);
        for (int i = 0; i < 4 && next < 0; i++) {
            int r = cur / l->w + PCG_DR(d[i]), col = cur % l->w + PCG_DC(d[i]);
            if (lv_in(l, r, col) && !seen[r * l->w + col] && l->t[r * l->w + col] == TILE_WALL) next = r * l->w + col;
        }
        if (next < 0) {
            top--;
            continue;
        }
        seen[next] = 1;
        l->t[next] = TILE_EMPTY;
        carved++;
        stack[top++] = (short)next;
    }
}

/* Cellular-automata smoothing: each step, a ground cell of the region
 * becomes WALL with 5 or more walls among its 8 neighbours, EMPTY with 3
 * or fewer (cells off the map count as walls), else stays. */
void tool_automata(level_t *l, const tool_call *c)
{
    static __thread unsigned char next[PCG_MAX_CELLS];
    for (int step = 0; step < c->steps; step++) {
        memcpy(next, l->t, (size_t)(l->h * l->w));
        for (int r = c->r0; r <= c->r1; r++)
            for (int col = c->c0; col <= c->c1; col++) {
                if (!is_ground(l->t[r * l->w + col])) continue;
                int walls = 0;
                for (int dr = -1; dr <= 1; dr++)
                    for (int dc = -1; dc <= 1; dc++) {
                        if (!dr && !dc) continue;
                        int t = lv_in(l, r + dr, col + dc) ? l->t[(r + dr) * l->w + col + dc] : TILE_WALL;
                        walls += t == TILE_WALL;
                    }
                if (walls >= 5) next[r * l->w + col] = TILE_WALL;
                else if (walls <= 3) next[r * l->w + col] = TILE_EMPTY;
            }
        memcpy(l->t, next, (size_t)(l->h * l->w));
    }
}

/* A maze in the region by a randomised depth-first search over the cells
 * at odd offsets from its corner; the walls between visited cells are
 * carved.  Other tiles in the region stay and count as open. */
void tool_maze(level_t *l, const tool_call *c)
{
    philox_stream s;
    philox_stream_init(&s, c->seed, 0x6d617a65u, 0);
    for (int r = c->r0; r <= c->r1; r++)
        for (int col = c->c0; col <= c->c1; col++) put(l, r, col, TILE_WALL);
    int mh = (c->r1 - c->r0) / 2, mw = (c->c1 - c->c0) / 2; /* lattice of mh x mw nodes */
    static __thread short stack[PCG_MAX_CELLS];
    static __thread unsigned char seen[PCG_MAX_CELLS];
    memset(seen, 0, (size_t)(mh * mw));
    int top = 0;
    stack[top++] = 0;
    seen[0] = 1;
    put(l, c->r0 + 1, c->c0 + 1, TILE_EMPTY);
    while (top > 0) {
        int cur = stack[top - 1], d[4], next = -1, dir = 0;
        shuffled_dirs(&s, d);
        for (int i = 0; i < 4 && next < 0; i++) {
            int r = cur / mw + PCG_DR(d[i]), col = cur % mw + PCG_DC(d[i]);
            if (r >= 0 && col >= 0 && r < mh && col < mw && !seen[r * mw + col]) {
                next = r * mw + col;
                dir = d[i];
            }
        }
        if (next < 0) {
            top--;
            continue;
        }
        seen[next] = 1;
        int r = c->r0 + 1 + 2 * (cur / mw), col = c->c0 + 1 + 2 * (cur % mw);
        put(l, r + PCG_DR(dir), col + PCG_DC(dir), TILE_EMPTY);
        put(l, r + 2 * PCG_DR(dir), col + 2 * PCG_DC(dir), TILE_EMPTY);
        stack[top++] = (short)next;
    }
}

static int open_cell(const level_t *l, int i) { return l->t[i] != TILE_WALL && l->t[i] != TILE_BORDER; }

/* Carve the fewest walls that join one more open region to the region in
 * mark (0-1 BFS: open cells cost 0, walls 1).  0 when there is none left. */
static int join_nearest(level_t *l, const unsigned char *mark)
{
    static __thread short deque[2 * PCG_MAX_CELLS], from[PCG_MAX_CELLS];
    static __thread int cost[PCG_MAX_CELLS];
    int cells = l->h * l->w, head = PCG_MAX_CELLS, tail = PCG_MAX_CELLS;
    for (int i = 0; i < cells; i++) {
        cost[i] = mark[i] ? 0 : -1;
        from[i] = -1;
        if (mark[i]) deque[tail++] = (short)i;
    }
    while (head < tail) {
        int cur = deque[head++];
        if (open_cell(l, cur) && !mark[cur]) {
            for (int p = cur; p >= 0 && !mark[p]; p = from[p])
                if (l->t[p] == TILE_WALL) l->t[p] = TILE_EMPTY;
            return 1;
        }
        for (int k = 0; k < 4; k++) {
            int r = cur / l->w + PCG_DR(k), col = cur % l->w + PCG_DC(k), n = r * l->w + col;
            if (!lv_in(l, r, col) || l->t[n] == TILE_BORDER) continue;
            int step = l->t[n] == TILE_WALL;
            if (cost[n] >= 0 && cost[n] <= cost[cur] + step) continue;
            cost[n] = cost[cur] + step;
            from[n] = (short)cur;
            if (head == 0 || tail == 2 * PCG_MAX_CELLS) return 0; /* cannot happen: relaxations are bounded */
            if (step) deque[tail++] = (short)n;
            else deque[--head] = (short)n;
        }
    }
    return 0;
}

/* Greedy connectivity repair: while some open cell cannot be reached from
 * the player (or, without one, from the first open cell), carve the
 * fewest walls that join the nearest such region to the reached one. */
void tool_repair(level_t *l)
{
    static __thread short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    static __thread unsigned char mark[PCG_MAX_CELLS];
    int cells = l->h * l->w;
    for (int round = 0; round < cells; round++) {
        int src = lv_first(l, TILE_PLAYER);
        for (int i = 0; src < 0 && i < cells; i++)
            if (open_cell(l, i)) src = i;
        if (src < 0) return;
        lv_bfs(l, src, PCG_BLOCK_DEFAULT, -1, dist, queue);
        int left = 0;
        for (int i = 0; i < cells; i++) {
            mark[i] = dist[i] >= 0;
            left += open_cell(l, i) && !mark[i];
        }
        if (!left || !join_nearest(l, mark)) return;
    }
}
