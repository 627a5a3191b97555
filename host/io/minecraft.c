/* Levels as Minecraft structures and datapacks: see minecraft.h. */
#include "minecraft.h"
#include "levelio.h"
#include "nbt.h"
#include "zipw.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mc_size(const mc_blocks *b, int h, int w, int scale, int size[3])
{
    size[0] = scale * w + 2;
    size[1] = 1 + b->wall_height + (b->ceiling[0] ? 1 : 0);
    size[2] = scale * h + 2;
}

void mc_resource_name(const char *text, char *out, size_t len)
{
    size_t n = 0;
    for (const char *p = text; *p && n + 1 < len; p++) {
        char ch = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
        out[n++] = ok ? ch : '_';
    }
    out[n] = 0;
    if (!n) snprintf(out, len, "level");
}

/* Does cell (i, j) of a K x K patch of tile t stand in the player's way?
 * A solid body fills the patch (fill=yes) or its centre cell. */
static int patch_blocked(const mc_tile *t, int scale, int i, int j)
{
    if (!t->solid || !t->n_body) return 0;
    return t->fill || (i == scale / 2 && j == scale / 2);
}

/* ---- routes ---------------------------------------------------------------------- */

typedef struct {
    const level_t *l;
    const mc_blocks *b;
    const eval_scenario_t *s;
    int scale;
    level_t scaled;       /* EMPTY where the leg may go, WALL elsewhere */
    short *dist, *queue;
    char *why;
    int whylen;
} route_check;

/* Open the K x K patch of map cell `cell` in the scaled map, as mapped, or
 * entirely when whole is set. */
static void open_patch(route_check *rc, int cell, int whole)
{
    const int K = rc->scale, r = cell / rc->l->w, c = cell % rc->l->w;
    const mc_tile *t = &rc->b->tiles[rc->l->t[cell]];
    for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++)
            rc->scaled.t[(r * K + i) * rc->scaled.w + c * K + j] =
                !whole && patch_blocked(t, K, i, j) ? TILE_WALL : TILE_EMPTY;
}

static int check_leg(void *ctx, const eval_leg_t *leg)
{
    route_check *rc = ctx;
    const int K = rc->scale, w = rc->l->w, sw = rc->scaled.w;
    memset(rc->scaled.t, TILE_WALL, (size_t)(rc->scaled.h * sw));
    for (int i = 0; i < leg->n; i++) open_patch(rc, leg->cells[i], 0);
    /* the leg ends next to (or on) its target: its whole patch counts */
    open_patch(rc, leg->to, 1);
    int src = ((leg->from / w) * K + K / 2) * sw + (leg->from % w) * K + K / 2;
    lv_bfs(&rc->scaled, src, PCG_BLOCK_DEFAULT, -1, rc->dist, rc->queue);
    int tr = leg->to / w, tc = leg->to % w;
    for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++)
            if (rc->dist[(tr * K + i) * sw + tc * K + j] >= 0) return 0;
    /* blocked: name the first tile in the way */
    int in_way = -1;
    for (int i = 1; i + 1 < leg->n && in_way < 0; i++) {
        const mc_tile *t = &rc->b->tiles[rc->l->t[leg->cells[i]]];
        if (t->solid && t->n_body) in_way = leg->cells[i];
    }
    char where[64];
    if (rc->s->number) snprintf(where, sizeof where, "scenario %d", rc->s->number);
    else snprintf(where, sizeof where, "the target");
    int n = snprintf(rc->why, (size_t)rc->whylen, "%s: the route %s from (%d,%d) to (%d,%d) would be blocked at scale %d",
                     where, eval_leg_name(leg->kind), leg->from / w, leg->from % w, tr, tc, K);
    if (n < 0 || n >= rc->whylen) return 1;
    if (in_way >= 0) {
        const mc_tile *t = &rc->b->tiles[rc->l->t[in_way]];
        snprintf(rc->why + n, (size_t)(rc->whylen - n), ": %s at (%d,%d) has a solid body (%s) %s; %s",
                 tile_name(rc->l->t[in_way]), in_way / w, in_way % w, t->body[0],
                 t->fill ? "filling its patch" : "in its centre",
                 t->fill || K > 1 ? "map it walkable (solid=no) in the block mapping"
                                  : "use --scale 2 or more, or map it walkable (solid=no) in the block mapping");
    } else {
        snprintf(rc->why + n, (size_t)(rc->whylen - n), ": a solid body fills the patch it starts from; map %s walkable "
                 "(solid=no) in the block mapping", tile_name(rc->l->t[leg->from]));
    }
    return 1;
}

int mc_check_routes(const level_t *l, const eval_scenario_t *const *scenarios, int n, const mc_blocks *b, int scale,
                    char *why, int whylen)
{
    long cells = (long)l->h * scale * l->w * scale;
    if (scale < 1 || scale > MC_SCALE_MAX || cells > 32767) {
        snprintf(why, (size_t)whylen, "a %dx%d level at scale %d is too large to check (at most 32767 scaled cells, "
                 "scale 1..%d)", l->h, l->w, scale, MC_SCALE_MAX);
        return -1;
    }
    route_check rc = {l, b, NULL, scale, {l->h * scale, l->w * scale, NULL}, NULL, NULL, why, whylen};
    rc.scaled.t = malloc((size_t)cells);
    rc.dist = malloc(sizeof(short) * (size_t)cells);
    rc.queue = malloc(sizeof(short) * (size_t)cells);
    int result = 0;
    if (!rc.scaled.t || !rc.dist || !rc.queue) {
        snprintf(why, (size_t)whylen, "out of memory");
        result = -1;
    }
    for (int i = 0; i < n && !result; i++) {
        rc.s = scenarios[i];
        result = eval_routes(scenarios[i], l, check_leg, &rc);
    }
    free(rc.scaled.t);
    free(rc.dist);
    free(rc.queue);
    return result;
}

/* ---- the structure --------------------------------------------------------------- */

#define PALETTE_MAX 160

typedef struct {
    const level_t *l;
    const mc_blocks *b;
    int scale, size[3];
    char names[PALETTE_MAX][MC_ID_MAX];
    int n_names;
    short *state;     /* palette index of every block, x fastest, then z, then y */
    int overflow;
} build;

static int palette_index(build *bd, const char *state)
{
    for (int i = 0; i < bd->n_names; i++)
        if (!strcmp(bd->names[i], state)) return i;
    if (bd->n_names == PALETTE_MAX) {
        bd->overflow = 1;
        return 0;
    }
    snprintf(bd->names[bd->n_names], MC_ID_MAX, "%s", state);
    return bd->n_names++;
}

/* The tile behind column (x, z) of the structure, and whether the column
 * is its patch's centre (each ring block is a patch of its own). */
static int column_tile(const build *bd, int x, int z, int *centre)
{
    const int K = bd->scale;
    if (x == 0 || z == 0 || x == bd->size[0] - 1 || z == bd->size[2] - 1) {
        *centre = 1;
        return TILE_BORDER;
    }
    int c = (x - 1) / K, r = (z - 1) / K;
    *centre = (x - 1) % K == K / 2 && (z - 1) % K == K / 2;
    return bd->l->t[r * bd->l->w + c];
}

/* The block at height y (0 = floor) of a column of tile t. */
static const char *column_block(const build *bd, const mc_tile *t, int centre, int y)
{
    if (y == 0) return t->floor;
    if (y > bd->b->wall_height) return bd->b->ceiling;
    if (t->fill) return t->body[y - 1 < t->n_body ? y - 1 : t->n_body - 1];
    if (centre && y - 1 < t->n_body) return t->body[y - 1];
    return "minecraft:air";
}

static void write_state(nbt_writer *w, const char *text)
{
    mc_state s;
    int n = mc_state_split(text, &s);
    nbt_begin_compound(w, NULL);
    nbt_string(w, "Name", s.name);
    if (n) {
        nbt_begin_compound(w, "Properties");
        for (int i = 0; i < n; i++) nbt_string(w, s.key[i], s.value[i]);
        nbt_end_compound(w);
    }
    nbt_end_compound(w);
}

static void write_int3(nbt_writer *w, const char *name, int x, int y, int z)
{
    nbt_begin_list(w, name, NBT_INT, 3);
    nbt_int(w, NULL, x);
    nbt_int(w, NULL, y);
    nbt_int(w, NULL, z);
    nbt_end_list(w);
}

/* The blocks list: every position, air included (so placing clears the
 * ground); spawners carry the mob they spawn as block entity data. */
static void write_blocks(nbt_writer *w, const build *bd)
{
    const int sx = bd->size[0], sy = bd->size[1], sz = bd->size[2];
    nbt_begin_list(w, "blocks", NBT_COMPOUND, sx * sy * sz);
    for (int y = 0; y < sy; y++)
        for (int z = 0; z < sz; z++)
            for (int x = 0; x < sx; x++) {
                int centre, tile = column_tile(bd, x, z, &centre);
                const mc_tile *t = &bd->b->tiles[tile];
                nbt_begin_compound(w, NULL);
                write_int3(w, "pos", x, y, z);
                nbt_int(w, "state", bd->state[(y * sz + z) * sx + x]);
                if (t->spawner[0] && y >= 1 && y <= bd->b->wall_height && (t->fill || (centre && y == 1))) {
                    nbt_begin_compound(w, "nbt");
                    nbt_string(w, "id", "minecraft:mob_spawner");
                    nbt_begin_compound(w, "SpawnData");
                    nbt_begin_compound(w, "entity");
                    nbt_string(w, "id", t->spawner);
                    nbt_end_compound(w);
                    nbt_end_compound(w);
                    nbt_end_compound(w);
                }
                nbt_end_compound(w);
            }
    nbt_end_list(w);
}

/* Mobs stand still (NoAI) and stay (PersistenceRequired) on their tile. */
static void write_entities(nbt_writer *w, const build *bd)
{
    const level_t *l = bd->l;
    const int K = bd->scale, cells = l->h * l->w;
    int n = 0;
    for (int i = 0; i < cells; i++) n += bd->b->tiles[l->t[i]].mob[0] != 0;
    nbt_begin_list(w, "entities", NBT_COMPOUND, n);
    for (int i = 0; i < cells; i++) {
        const mc_tile *t = &bd->b->tiles[l->t[i]];
        if (!t->mob[0]) continue;
        int x = 1 + (i % l->w) * K + K / 2, z = 1 + (i / l->w) * K + K / 2;
        nbt_begin_compound(w, NULL);
        nbt_begin_list(w, "pos", NBT_DOUBLE, 3);
        nbt_double(w, NULL, x + 0.5);
        nbt_double(w, NULL, 1.0);
        nbt_double(w, NULL, z + 0.5);
        nbt_end_list(w);
        write_int3(w, "blockPos", x, 1, z);
        nbt_begin_compound(w, "nbt");
        nbt_string(w, "id", t->mob);
        nbt_byte(w, "NoAI", 1);
        nbt_byte(w, "PersistenceRequired", 1);
        nbt_end_compound(w);
        nbt_end_compound(w);
    }
    nbt_end_list(w);
}

int mc_structure(const level_t *l, const mc_blocks *b, int scale, unsigned char **out, size_t *len, char *err,
                 int errlen)
{
    *out = NULL;
    if (scale < 1 || scale > MC_SCALE_MAX || l->h < 1 || l->w < 1)
        return snprintf(err, (size_t)errlen, "scale %d is outside 1..%d", scale, MC_SCALE_MAX), -1;
    build *bd = calloc(1, sizeof *bd);
    if (!bd) return snprintf(err, (size_t)errlen, "out of memory"), -1;
    bd->l = l;
    bd->b = b;
    bd->scale = scale;
    mc_size(b, l->h, l->w, scale, bd->size);
    const int sx = bd->size[0], sy = bd->size[1], sz = bd->size[2];
    bd->state = malloc(sizeof(short) * (size_t)sx * sy * sz);
    if (!bd->state) {
        free(bd);
        return snprintf(err, (size_t)errlen, "out of memory"), -1;
    }
    for (int y = 0; y < sy; y++)
        for (int z = 0; z < sz; z++)
            for (int x = 0; x < sx; x++) {
                int centre, tile = column_tile(bd, x, z, &centre);
                const char *block = column_block(bd, &b->tiles[tile], centre, y);
                bd->state[(y * sz + z) * sx + x] = (short)palette_index(bd, block);
            }
    int rc = -1;
    if (bd->overflow) {
        snprintf(err, (size_t)errlen, "more than %d different blocks", PALETTE_MAX);
    } else {
        nbt_writer w;
        nbt_init(&w);
        nbt_begin_compound(&w, "");
        nbt_int(&w, "DataVersion", MC_DATA_VERSION);
        write_int3(&w, "size", sx, sy, sz);
        nbt_begin_list(&w, "palette", NBT_COMPOUND, bd->n_names);
        for (int i = 0; i < bd->n_names; i++) write_state(&w, bd->names[i]);
        nbt_end_list(&w);
        write_blocks(&w, bd);
        write_entities(&w, bd);
        nbt_end_compound(&w);
        rc = nbt_gzip(&w, out, len, err, errlen);
        nbt_free(&w);
    }
    free(bd->state);
    free(bd);
    return rc;
}

/* ---- the datapack ---------------------------------------------------------------- */

/* The function that builds a level next to the player: the structure's
 * corner one block south-east of the block they stand in, its floor in
 * place of the block under their feet; then onto the PLAYER tile. */
static int function_text(const char *ns, const char *name, const level_t *l, const mc_blocks *b, int scale, char *buf,
                         size_t len)
{
    int size[3];
    mc_size(b, l->h, l->w, scale, size);
    int n = snprintf(buf, len,
                     "# pcgrllm level %s: %dx%d tiles at scale %d, %d x %d x %d blocks (x, y, z).\n"
                     "# Builds it beside you (its north-west corner one block south-east of you,\n"
                     "# its floor where the block under your feet is) and moves you onto its start.\n"
                     "execute align xyz run place template %s:%s ~1 ~-1 ~1\n",
                     name, l->h, l->w, scale, size[0], size[1], size[2], ns, name);
    int p = lv_first(l, TILE_PLAYER);
    if (p >= 0)
        n += snprintf(buf + n, len - (size_t)n, "execute align xyz run tp @s ~%d.5 ~ ~%d.5\n",
                      2 + (p % l->w) * scale + scale / 2, 2 + (p / l->w) * scale + scale / 2);
    else
        n += snprintf(buf + n, len - (size_t)n, "# the level has no PLAYER tile: you stay where you are\n");
    return n;
}

int mc_datapack(const char *ns, const mc_level *levels, int n, const mc_blocks *b, int scale, unsigned char **zip,
                size_t *len, char *err, int errlen)
{
    *zip = NULL;
    zip_writer z;
    zip_init(&z);
    char meta[512], path[512], fn[1024];
    int m = snprintf(meta, sizeof meta,
                     "{\n  \"pack\": {\n    \"pack_format\": %d,\n    \"supported_formats\": [%d, %d],\n"
                     "    \"description\": \"pcgrllm: %d level%s at scale %d; /function %s:NAME builds one\"\n  }\n}\n",
                     MC_PACK_FORMAT, MC_PACK_FORMAT, MC_PACK_FORMAT_MAX, n, n == 1 ? "" : "s", scale, ns);
    int rc = zip_add(&z, "pack.mcmeta", meta, (size_t)m);
    for (int i = 0; i < n && !rc; i++) {
        unsigned char *nbt;
        size_t nbt_len;
        if (mc_structure(levels[i].level, b, scale, &nbt, &nbt_len, err, errlen)) {
            zip_free(&z);
            return -1;
        }
        snprintf(path, sizeof path, "data/%s/structure/%s.nbt", ns, levels[i].name);
        rc = zip_add(&z, path, nbt, nbt_len);
        free(nbt);
        int fl = function_text(ns, levels[i].name, levels[i].level, b, scale, fn, sizeof fn);
        snprintf(path, sizeof path, "data/%s/function/%s.mcfunction", ns, levels[i].name);
        if (!rc) rc = zip_add(&z, path, fn, (size_t)fl);
    }
    const unsigned char *data;
    if (rc || zip_finish(&z, &data, len) || !(*zip = malloc(*len))) {
        zip_free(&z);
        return snprintf(err, (size_t)errlen, "datapack: out of memory (or larger than a ZIP without ZIP64 holds)"), -1;
    }
    memcpy(*zip, data, *len);
    zip_free(&z);
    return 0;
}
