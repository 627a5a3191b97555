/* The builder's witness: a level that meets the target on the saved
 * level's own map (its PLAYER and DOOR where they are), shown with the
 * feedback, and the tool calls that turn a level into it. */
#include "build.h"
#include "edit_internal.h"
#include "levelio.h"
#include "prompts.h"
#include "tools.h"
#include <stdlib.h>
#include <string.h>

/* The builder's corner (dungeon_corner numbering) that holds cell, or -1. */
static int corner_of(const level_t *l, int cell)
{
    int r = cell / l->w, c = cell % l->w, n = l->w;
    if ((r != 1 && r != n - 2) || (c != 1 && c != n - 2)) return -1;
    if (r == 1) return c == 1 ? 0 : 1;
    return c == n - 2 ? 2 : 3;
}

int edit_witness(const target_t *t, const level_t *l, level_t *out, unsigned char *tiles)
{
    int player = lv_first(l, TILE_PLAYER), door = lv_first(l, TILE_DOOR);
    if (l->h != l->w || l->w < BUILD_SIDE_MIN || player < 0 || door < 0) return -1;
    int corner = corner_of(l, player);
    if (corner < 0) return -1;
    build_result_t *b = malloc(sizeof *b);
    if (!b) return -1;
    char why[400];
    /* the builder's seed picks the corner (seed mod 4) */
    int rc = build_level(t, l->w, (uint64_t)corner, b, why, sizeof why) == BUILD_OK &&
                     b->level.t[player] == TILE_PLAYER && b->level.t[door] == TILE_DOOR
                 ? 0
                 : -1;
    if (rc == 0) {
        memcpy(tiles, b->tiles, (size_t)(l->h * l->w));
        *out = (level_t){l->h, l->w, tiles};
    }
    free(b);
    return rc;
}

char *edit_witness_text(const level_t *w, char *err, int errlen)
{
    char *map = edit_level_text(w);
    if (!map) return NULL;
    prompt_var v[] = {{"level", map}};
    char *s = prompt_render("harness", "edit_witness", v, 1, err, errlen);
    free(map);
    return s;
}

static json_t *rect_call(int r, int c, int h, int w, const char *tile)
{
    return json_pack("{s:s,s:i,s:i,s:i,s:i,s:s}", "tool", "rect", "row", r, "col", c, "height", h, "width", w,
                     "tile", tile);
}

static int fixed_tile(int tile) { return tile == TILE_PLAYER || tile == TILE_DOOR; }

/* WALL over every cell but the PLAYER's and the DOOR's: full-width bands
 * between their rows, and the pieces of their rows around them. */
static void wall_all(const level_t *l, json_t *calls)
{
    int band = 0;
    for (int r = 0; r <= l->h; r++) {
        int special = 0;
        for (int c = 0; r < l->h && c < l->w; c++) special |= fixed_tile(l->t[r * l->w + c]);
        if (r < l->h && !special) continue;
        if (r > band) json_array_append_new(calls, rect_call(band, 0, r - band, l->w, "WALL"));
        band = r + 1;
        for (int c = 0, from = 0; r < l->h && c <= l->w; c++) {
            if (c < l->w && !fixed_tile(l->t[r * l->w + c])) continue;
            if (c > from) json_array_append_new(calls, rect_call(r, from, 1, c - from, "WALL"));
            from = c + 1;
        }
    }
}

/* An open cell of the witness that a call must write. */
static int to_open(const level_t *w, int r, int c)
{
    int tile = lv_get(w, r, c);
    return lv_in(w, r, c) && tile != TILE_WALL && !fixed_tile(tile);
}

/* The witness's open cells as EMPTY lines, each the longer run across or
 * down from the first cell not yet written, then its other tiles set. */
static void open_cells(const level_t *w, json_t *calls)
{
    unsigned char done[PCG_MAX_CELLS] = {0};
    for (int i = 0; i < w->h * w->w; i++) {
        int r = i / w->w, c = i % w->w;
        if (done[i] || !to_open(w, r, c)) continue;
        int across = 1, down = 1;
        while (to_open(w, r, c + across)) across++;
        while (to_open(w, r + down, c)) down++;
        int dr = down > across, n = dr ? down : across;
        for (int k = 0; k < n; k++) done[(r + dr * k) * w->w + c + !dr * k] = 1;
        if (n == 1) json_array_append_new(calls, json_pack("{s:s,s:i,s:i,s:s}", "tool", "set", "row", r, "col", c,
                                                           "tile", "EMPTY"));
        else json_array_append_new(calls, json_pack("{s:s,s:i,s:i,s:i,s:i,s:s}", "tool", "line", "row", r, "col", c,
                                                    "row2", r + dr * (n - 1), "col2", c + !dr * (n - 1), "tile",
                                                    "EMPTY"));
    }
    for (int i = 0; i < w->h * w->w; i++)
        if (w->t[i] != TILE_EMPTY && to_open(w, i / w->w, i % w->w))
            json_array_append_new(calls, json_pack("{s:s,s:i,s:i,s:s}", "tool", "set", "row", i / w->w, "col",
                                                   i % w->w, "tile", tile_name(w->t[i])));
}

json_t *edit_witness_calls(const level_t *from, const level_t *w)
{
    if (from->h != w->h || from->w != w->w) return NULL;
    for (int i = 0; i < w->h * w->w; i++)
        if (fixed_tile(from->t[i]) != fixed_tile(w->t[i]) || (fixed_tile(w->t[i]) && from->t[i] != w->t[i]))
            return NULL;
    json_t *calls = json_array();
    wall_all(from, calls);
    open_cells(w, calls);
    if (json_array_size(calls) <= TOOLS_MAX_CALLS) return calls;
    json_decref(calls);
    return NULL;
}
