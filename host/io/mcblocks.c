/* The tile -> block mapping file: see mcblocks.h and minecraft/blocks.txt. */
#include "mcblocks.h"
#include "datadir.h"
#include "levelio.h"
#include "util.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAPPING_MAX_BYTES (64L * 1024)

static int id_char(char ch, int path)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.' ||
           (path && ch == '/');
}

/* [k=v,...] at p (after '['): lower-case words on both sides.  The length
 * up to and including ']', or 0 when malformed. */
static size_t props_len(const char *p)
{
    size_t i = 0;
    for (;;) {
        size_t k = i;
        while (p[i] && (id_char(p[i], 0) && p[i] != '.' && p[i] != '-')) i++;
        if (i == k || p[i] != '=') return 0;
        size_t v = ++i;
        while (p[i] && (id_char(p[i], 0) && p[i] != '.' && p[i] != '-')) i++;
        if (i == v) return 0;
        if (p[i] == ']') return i + 1;
        if (p[i] != ',') return 0;
        i++;
    }
}

/* A Minecraft resource id "ns:path" (or "path", namespace minecraft),
 * optionally followed by block properties when props is set.  Writes the
 * namespaced form into out.  0, or -1 with why. */
static int parse_id(const char *text, int props, char *out, size_t outlen, const char **why)
{
    const char *colon = strchr(text, ':');
    const char *path = colon ? colon + 1 : text;
    if (colon) {
        if (colon == text) return *why = "an empty namespace before ':'", -1;
        for (const char *q = text; q < colon; q++)
            if (!id_char(*q, 0)) return *why = "a namespace of lower-case letters, digits, '_', '-', '.'", -1;
    }
    size_t n = 0;
    while (id_char(path[n], 1)) n++;
    if (n == 0) return *why = "a name of lower-case letters, digits, '_', '-', '.', '/'", -1;
    if (path[n] == '[') {
        if (!props) return *why = "no [properties] here (an entity id, not a block)", -1;
        size_t pl = props_len(path + n + 1);
        if (!pl || path[n + 1 + pl]) return *why = "properties written [key=value,key=value]", -1;
    } else if (path[n]) {
        return *why = "only lower-case letters, digits, '_', '-', '.', '/' (and [key=value,...] for blocks)", -1;
    }
    if (snprintf(out, outlen, "%s%s", colon ? "" : "minecraft:", text) >= (int)outlen) return *why = "too long", -1;
    return 0;
}

static int yes_no(const char *v, int *out)
{
    if (!strcmp(v, "yes")) *out = 1;
    else if (!strcmp(v, "no")) *out = 0;
    else return -1;
    return 0;
}

#define FAIL(...)                                   \
    do {                                            \
        snprintf(err, (size_t)errlen, __VA_ARGS__); \
        return -1;                                  \
    } while (0)

/* One "TILE key=value ..." line into t. */
static int parse_tile_line(const char *name, int line, char **tok, int n, mc_tile *t, char *err, int errlen)
{
    int has_floor = 0, solid_given = -1;
    char body[MC_BODY_MAX * MC_ID_MAX] = "";
    memset(t, 0, sizeof *t);
    for (int i = 1; i < n; i++) {
        char *eq = strchr(tok[i], '=');
        if (!eq) FAIL("%s:%d: '%s' is not key=value (keys: floor body fill solid mob spawner)", name, line, tok[i]);
        *eq = 0;
        const char *k = tok[i], *v = eq + 1, *why = "";
        if (!strcmp(k, "floor")) {
            if (parse_id(v, 1, t->floor, sizeof t->floor, &why)) FAIL("%s:%d: floor=%s: expected %s", name, line, v, why);
            has_floor = 1;
        } else if (!strcmp(k, "body")) {
            snprintf(body, sizeof body, "%s", v);
        } else if (!strcmp(k, "fill") || !strcmp(k, "solid")) {
            int yn;
            if (yes_no(v, &yn)) FAIL("%s:%d: %s=%s: expected yes or no", name, line, k, v);
            if (k[0] == 'f') t->fill = yn;
            else solid_given = yn;
        } else if (!strcmp(k, "mob") || !strcmp(k, "spawner")) {
            char *dst = k[0] == 'm' ? t->mob : t->spawner;
            if (parse_id(v, 0, dst, MC_ID_MAX, &why)) FAIL("%s:%d: %s=%s: expected %s", name, line, k, v, why);
        } else {
            FAIL("%s:%d: unknown key '%s' (keys: floor body fill solid mob spawner)", name, line, k);
        }
    }
    if (!has_floor) FAIL("%s:%d: %s needs floor=BLOCK", name, line, tok[0]);
    if (t->mob[0] && t->spawner[0]) FAIL("%s:%d: give mob= or spawner=, not both", name, line);
    if (t->spawner[0]) {
        if (body[0]) FAIL("%s:%d: spawner= is the body already (a minecraft:spawner); drop body=", name, line);
        if (solid_given == 0) FAIL("%s:%d: a spawner is a solid block: drop solid=no", name, line);
        snprintf(body, sizeof body, "minecraft:spawner");
        solid_given = 1;
    }
    for (char *save = NULL, *b = strtok_r(body, "/", &save); b; b = strtok_r(NULL, "/", &save)) {
        const char *why = "";
        if (t->n_body == MC_BODY_MAX) FAIL("%s:%d: more than %d blocks in body=", name, line, MC_BODY_MAX);
        if (parse_id(b, 1, t->body[t->n_body], MC_ID_MAX, &why)) FAIL("%s:%d: body block '%s': expected %s", name, line, b, why);
        t->n_body++;
    }
    if (t->fill && !t->n_body) FAIL("%s:%d: fill=yes needs body=BLOCK", name, line);
    t->solid = solid_given == 1;
    return 0;
}

/* Split a line into whitespace-separated tokens, dropping a '#' comment. */
static int tokens(char *line, char **tok, int max)
{
    int n = 0;
    for (char *p = line; *p;) {
        while (*p == ' ' || *p == '\t' || *p == '\r') p++;
        if (!*p || *p == '#') break;
        if (n == max) return -1;
        tok[n++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r') p++;
        if (*p) *p++ = 0;
    }
    return n;
}

int mc_blocks_parse(const char *name, const char *text, mc_blocks *b, char *err, int errlen)
{
    memset(b, 0, sizeof *b);
    snprintf(b->source, sizeof b->source, "%s", name);
    int seen[N_TILES] = {0}, line = 0;
    for (const char *p = text; *p; line++) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char buf[2048], *tok[16];
        if (len >= sizeof buf) FAIL("%s:%d: line longer than %zu bytes", name, line + 1, sizeof buf - 1);
        memcpy(buf, p, len);
        buf[len] = 0;
        p = end ? end + 1 : p + len;
        int n = tokens(buf, tok, 16);
        if (n < 0) FAIL("%s:%d: more than 16 words", name, line + 1);
        if (n == 0) continue;
        if (!strcmp(tok[0], "wall_height")) {
            long v;
            if (n != 2 || parse_int(tok[1], 2, MC_WALL_MAX, &v))
                FAIL("%s:%d: wall_height takes one number, 2..%d", name, line + 1, MC_WALL_MAX);
            b->wall_height = (int)v;
        } else if (!strcmp(tok[0], "ceiling")) {
            const char *why = "";
            if (n != 2) FAIL("%s:%d: ceiling takes one block, or none", name, line + 1);
            if (strcmp(tok[1], "none") && parse_id(tok[1], 1, b->ceiling, sizeof b->ceiling, &why))
                FAIL("%s:%d: ceiling %s: expected %s", name, line + 1, tok[1], why);
        } else {
            int t = 0;
            while (t < N_TILES && strcmp(tile_name(t), tok[0])) t++;
            if (t == N_TILES)
                FAIL("%s:%d: unknown word '%s' (wall_height, ceiling, or a tile: BORDER EMPTY WALL PLAYER BAT "
                     "SCORPION SPIDER KEY DOOR TREASURE)",
                     name, line + 1, tok[0]);
            if (seen[t]) FAIL("%s:%d: %s is given twice (first on line %d)", name, line + 1, tok[0], seen[t]);
            seen[t] = line + 1;
            if (parse_tile_line(name, line + 1, tok, n, &b->tiles[t], err, errlen)) return -1;
        }
    }
    if (!b->wall_height) FAIL("%s: no wall_height line (e.g. wall_height 3)", name);
    for (int t = 0; t < N_TILES; t++) {
        if (!seen[t]) FAIL("%s: no line for %s (every tile needs one, BORDER being the ring around the map)", name, tile_name(t));
        const mc_tile *m = &b->tiles[t];
        if (!m->fill && m->n_body > b->wall_height)
            FAIL("%s:%d: %s's body is %d blocks tall, above wall_height %d", name, seen[t], tile_name(t), m->n_body,
                 b->wall_height);
    }
    return 0;
}

int mc_blocks_load(const char *path, mc_blocks *b, char *err, int errlen)
{
    static const datadir_spec spec = {"minecraft", "blocks.txt", "Minecraft block mapping", "PCGRLLM_MINECRAFT"};
    char file[PATH_MAX + 16];
    if (!path) {
        char dir[PATH_MAX];
        if (datadir_find(&spec, dir, sizeof dir, err, errlen)) return -1;
        snprintf(file, sizeof file, "%s/blocks.txt", dir);
        path = file;
    }
    long len;
    char *text = read_file(path, MAPPING_MAX_BYTES, &len, err, errlen);
    if (!text) return -1;
    if ((long)strlen(text) != len) {
        free(text);
        FAIL("%s: holds a NUL byte, not a text mapping", path);
    }
    int rc = mc_blocks_parse(path, text, b, err, errlen);
    free(text);
    return rc;
}

int mc_state_split(const char *text, mc_state *s)
{
    memset(s, 0, sizeof *s);
    const char *br = strchr(text, '[');
    size_t n = br ? (size_t)(br - text) : strlen(text);
    snprintf(s->name, sizeof s->name, "%.*s", (int)n, text);
    int k = 0;
    for (const char *p = br ? br + 1 : NULL; p && *p && *p != ']' && k < MC_PROPS_MAX; k++) {
        const char *eq = strchr(p, '='), *end = p + strcspn(p, ",]");
        if (!eq || eq > end) break;
        snprintf(s->key[k], sizeof s->key[k], "%.*s", (int)(eq - p), p);
        snprintf(s->value[k], sizeof s->value[k], "%.*s", (int)(end - eq - 1), eq + 1);
        p = *end == ',' ? end + 1 : end;
    }
    return k;
}
