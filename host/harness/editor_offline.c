/* The rule-based editor: no model, a fixed set of candidate edits, each
 * measured with the evaluator on a copy, the best one proposed.  While
 * the level is not valid it proposes the repairs (one key, the enemy
 * count, one open region); once it is, it moves the key, or adds or
 * removes walls on and beside the route to lengthen or shorten each leg.
 * A baseline for the loop, labelled as rule-based wherever it appears. */
#include "edit_internal.h"
#include "levelio.h"
#include "tools.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    const edit_view *v;
    json_t *calls;       /* the best candidate so far, or NULL */
    edit_measure_t m;
    int changed;
} best_t;

static json_t *set_call(int r, int c, int tile)
{
    return json_pack("{s:s,s:i,s:i,s:s}", "tool", "set", "row", r, "col", c, "tile", tile_name(tile));
}

/* Measure candidate calls (consumed) and keep them if they beat the best. */
static void try_calls(best_t *b, json_t *calls)
{
    unsigned char tiles[PCG_MAX_CELLS];
    level_t out;
    tools_result res;
    tools_apply_list(calls, b->v->level, &out, tiles, 1, &res);
    edit_measure_t m;
    edit_measure(b->v->target, &out, &m);
    int wins = !b->calls || edit_better(&m, &b->m) ||
               (!edit_better(&b->m, &m) && res.changed < b->changed);
    if (wins && res.applied == (int)json_array_size(calls) && res.changed > 0) {
        json_decref(b->calls);
        b->calls = calls;
        b->m = m;
        b->changed = res.changed;
    } else {
        json_decref(calls);
    }
}

/* Walls that would split the open region are weighed once more with a
 * repair after them, which opens the fewest walls elsewhere. */
static void try_walls(best_t *b, json_t *calls)
{
    json_t *repaired = json_deep_copy(calls);
    json_array_append_new(repaired, json_pack("{s:s}", "tool", "repair"));
    try_calls(b, calls);
    try_calls(b, repaired);
}

/* The enemies the target asks for: remove the extra ones, or add BATs on
 * open cells off the route, spread over the map. */
static void fix_enemies(const edit_view *v, const unsigned char *route, json_t *calls)
{
    const level_t *l = v->level;
    int want = v->target->enemy_count, have = 0, cells = l->h * l->w;
    if (want <= 0) return;
    for (int i = 0; i < cells; i++) {
        if (!target_is_enemy(l->t[i])) continue;
        if (++have > want) json_array_append_new(calls, set_call(i / l->w, i % l->w, TILE_EMPTY));
    }
    for (int k = 0, i = cells / 3; have < want && k < cells; k++, i = (i + 37) % cells)
        if (l->t[i] == TILE_EMPTY && !route[i]) {
            json_array_append_new(calls, set_call(i / l->w, i % l->w, TILE_BAT));
            have++;
        }
}

/* Invalid level: one candidate per key kept (or per cell a key may go
 * to), each with the enemy fix and a connectivity repair after it. */
static void propose_fixes(best_t *b, const unsigned char *route)
{
    const level_t *l = b->v->level;
    int cells = l->h * l->w, keys = lv_count(l, TILE_KEY);
    json_t *base = json_array();
    fix_enemies(b->v, route, base);
    for (int keep = 0; keep < cells; keep++) {
        int t = l->t[keep];
        if (keys > 0 ? t != TILE_KEY : t != TILE_EMPTY) continue;
        json_t *c = json_array();
        for (int i = 0; i < cells; i++)
            if (l->t[i] == TILE_KEY && i != keep) json_array_append_new(c, set_call(i / l->w, i % l->w, TILE_EMPTY));
        if (!keys) json_array_append_new(c, set_call(keep / l->w, keep % l->w, TILE_KEY));
        json_array_extend(c, base);
        json_array_append_new(c, json_pack("{s:s}", "tool", "repair"));
        try_calls(b, c);
    }
    json_decref(base);
}

/* Wall lines from a route cell, in each direction, of a few lengths. */
static void propose_lines(best_t *b, int cell)
{
    static const int lengths[] = {2, 3, 5, 8};
    const level_t *l = b->v->level;
    int r = cell / l->w, c = cell % l->w;
    for (int d = 0; d < 4; d++)
        for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
            int n = 0;
            while (n < lengths[k] && lv_get(l, r + PCG_DR(d) * n, c + PCG_DC(d) * n) == TILE_EMPTY) n++;
            if (n < 2) break;
            try_walls(b, json_pack("[{s:s,s:i,s:i,s:i,s:i,s:s}]", "tool", "line", "row", r, "col", c, "row2",
                                   r + PCG_DR(d) * (n - 1), "col2", c + PCG_DC(d) * (n - 1), "tile", "WALL"));
            if (n < lengths[k]) break;
        }
}

static json_t *key_move(const level_t *l, int key, int cell);

/* Valid level: move the key, wall a route cell or a line from it, or open
 * a wall. */
static void propose_moves(best_t *b, const unsigned char *route)
{
    const level_t *l = b->v->level;
    int cells = l->h * l->w, key = lv_first(l, TILE_KEY);
    for (int i = 0; i < cells; i++) {
        int r = i / l->w, c = i % l->w;
        if (l->t[i] == TILE_EMPTY && key >= 0) try_calls(b, key_move(l, key, i));
        if (l->t[i] == TILE_EMPTY && route[i]) {
            try_walls(b, json_pack("[o]", set_call(r, c, TILE_WALL)));
            propose_lines(b, i);
        }
        if (l->t[i] == TILE_WALL) try_calls(b, json_pack("[o]", set_call(r, c, TILE_EMPTY)));
    }
}

/* Key moves worth combining with a wall: the nearest to the target. */
#define COMBO_KEYS 8

/* The KEY moved from key to cell, as two calls. */
static json_t *key_move(const level_t *l, int key, int cell)
{
    json_t *mv = json_array();
    json_array_append_new(mv, set_call(key / l->w, key % l->w, TILE_EMPTY));
    json_array_append_new(mv, set_call(cell / l->w, cell % l->w, TILE_KEY));
    return mv;
}

/* 1 when a neighbour of cell is on the route. */
static int beside_route(const level_t *l, const unsigned char *route, int cell)
{
    for (int k = 0; k < 4; k++) {
        int r = cell / l->w + PCG_DR(k), c = cell % l->w + PCG_DC(k);
        if (lv_in(l, r, c) && route[r * l->w + c]) return 1;
    }
    return 0;
}

/* When no single edit helps (each leg's parity or both legs at once need
 * changing): the best key moves, each with a wall on its new route or a
 * wall beside it opened. */
static void propose_combos(best_t *b)
{
    const level_t *l = b->v->level;
    int cells = l->h * l->w, key = lv_first(l, TILE_KEY), top[COMBO_KEYS], n = 0;
    long dist[COMBO_KEYS];
    if (key < 0) return;
    unsigned char tiles[PCG_MAX_CELLS], route[PCG_MAX_CELLS];
    for (int i = 0; i < cells; i++) {
        if (l->t[i] != TILE_EMPTY) continue;
        memcpy(tiles, l->t, (size_t)cells);
        tiles[key] = TILE_EMPTY;
        tiles[i] = TILE_KEY;
        level_t moved = {l->h, l->w, tiles};
        edit_measure_t m;
        edit_measure(b->v->target, &moved, &m);
        if (!m.valid) continue;
        /* a full list takes the move only in place of a farther last one */
        if (n == COMBO_KEYS && m.distance >= dist[COMBO_KEYS - 1]) continue;
        int at = n < COMBO_KEYS ? n++ : COMBO_KEYS - 1;
        for (; at > 0 && dist[at - 1] > m.distance; at--) {
            dist[at] = dist[at - 1];
            top[at] = top[at - 1];
        }
        dist[at] = m.distance;
        top[at] = i;
    }
    for (int k = 0; k < n; k++) {
        memcpy(tiles, l->t, (size_t)cells);
        tiles[key] = TILE_EMPTY;
        tiles[top[k]] = TILE_KEY;
        level_t moved = {l->h, l->w, tiles};
        edit_route_cells(b->v->target, &moved, route);
        for (int i = 0; i < cells; i++) {
            int tile = route[i] && tiles[i] == TILE_EMPTY ? TILE_WALL
                       : tiles[i] == TILE_WALL && beside_route(&moved, route, i) ? TILE_EMPTY
                                                                                : -1;
            if (tile < 0) continue;
            json_t *c = key_move(l, key, top[k]);
            json_array_append_new(c, set_call(i / l->w, i % l->w, tile));
            if (tile == TILE_WALL) try_walls(b, c);
            else try_calls(b, c);
        }
    }
}

/* Two walls opened in a row from beside the route: a shortcut through a
 * wall two thick, which one opened wall cannot make; and two walls on the
 * route: a detour that neither makes alone. */
static void propose_pairs(best_t *b, const unsigned char *route)
{
    const level_t *l = b->v->level;
    for (int i = 0; i < l->h * l->w; i++)
        for (int j = i + 1; route[i] && l->t[i] == TILE_EMPTY && j < l->h * l->w; j++)
            if (route[j] && l->t[j] == TILE_EMPTY)
                try_walls(b, json_pack("[o,o]", set_call(i / l->w, i % l->w, TILE_WALL),
                                       set_call(j / l->w, j % l->w, TILE_WALL)));
    for (int i = 0; i < l->h * l->w; i++) {
        if (l->t[i] != TILE_WALL || !beside_route(l, route, i)) continue;
        int r = i / l->w, c = i % l->w;
        for (int d = 0; d < 4; d++) {
            int r2 = r + PCG_DR(d), c2 = c + PCG_DC(d);
            if (lv_get(l, r2, c2) != TILE_WALL) continue;
            try_calls(b, json_pack("[o,o]", set_call(r, c, TILE_EMPTY), set_call(r2, c2, TILE_EMPTY)));
        }
    }
}

char *editor_offline_calls(const edit_view *v)
{
    unsigned char route[PCG_MAX_CELLS];
    edit_route_cells(v->target, v->level, route);
    best_t b = {v, NULL, {0}, 0};
    if (!v->m->valid) propose_fixes(&b, route);
    else propose_moves(&b, route);
    if (v->m->valid && !(b.calls && edit_better(&b.m, v->m))) propose_combos(&b);
    if (v->m->valid && !(b.calls && edit_better(&b.m, v->m))) propose_pairs(&b, route);
    /* On a plateau of its own moves, or at the last step when they fall
     * short, the witness: the level rebuilt as the builder's, measured like
     * any candidate.  Only then, since a long reply is the one a weak editor
     * is likeliest to spoil. */
    int stuck = !(b.calls && edit_better(&b.m, v->m)), last = v->step >= v->steps && !(b.calls && b.m.perfect);
    json_t *rebuild = v->witness && (stuck || last) ? edit_witness_calls(v->level, v->witness) : NULL;
    if (rebuild) try_calls(&b, rebuild);
    /* nothing better than the level as it is: no edit */
    char *text = b.calls && edit_better(&b.m, v->m) ? json_dumps(b.calls, JSON_COMPACT) : strdup("[]");
    json_decref(b.calls);
    return text;
}
