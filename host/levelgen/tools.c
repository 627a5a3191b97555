/* Tool calls: reading a reply's list, checking each call, the primitive
 * edits.  See tools.h. */
#include "tools.h"
#include "levelio.h"
#include "tools_internal.h"
#include "util.h"
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const tools_names[] = {"set", "line", "rect", "room", "cave", "automata", "maze", "repair", NULL};

/* Each tool's fields, in the order a message lists them; those after '|'
 * may be left out. */
static const char *const tool_fields[N_TOOLS] = {
    "row col tile",          "row col row2 col2 tile", "row col height width tile", "row col height width",
    "row col steps | seed",  "row col height width steps", "row col height width | seed", "",
};

#define WRITABLE "EMPTY, WALL, BAT, SCORPION, SPIDER, KEY, TREASURE"

int tools_tile_id(const char *name)
{
    for (int t = TILE_EMPTY; t < N_TILES; t++)
        if (!strcasecmp(name, tile_name(t))) return t;
    return -1;
}

int tools_cells_changed(const level_t *a, const level_t *b)
{
    int n = 0;
    for (int i = 0; i < a->h * a->w; i++) n += a->t[i] != b->t[i];
    return n;
}

static void refuse(tools_result *res, int call, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void refuse(tools_result *res, int call, const char *fmt, ...)
{
    if (res->n_refused >= (int)(sizeof res->refused / sizeof res->refused[0])) return;
    tools_refusal *r = &res->refused[res->n_refused++];
    r->call = call;
    char what[180];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->reason, sizeof r->reason, "call %d: %s", call, what);
}

/* The field list of a tool as a message shows it: "row, col, tile". */
static void field_list(int tool, char *buf, size_t len)
{
    size_t j = 0;
    buf[0] = 0;
    for (const char *p = tool_fields[tool]; *p && j + 3 < len; p++) {
        if (*p == '|') continue;
        if (*p == ' ') {
            if (j && buf[j - 1] != ' ') j += (size_t)snprintf(buf + j, len - j, ", ");
            while (p[1] == ' ' || p[1] == '|') p++;
            continue;
        }
        buf[j++] = *p;
        buf[j] = 0;
    }
}

static int field_known(int tool, const char *key)
{
    char f[64];
    snprintf(f, sizeof f, " %s ", key);
    char all[80];
    snprintf(all, sizeof all, " %s ", tool_fields[tool]);
    return strstr(all, f) != NULL;
}

static int field_optional(int tool, const char *key)
{
    const char *bar = strchr(tool_fields[tool], '|');
    return bar && strstr(bar, key) != NULL;
}

static const char *tool_list(void)
{
    return "set, line, rect, room, cave, automata, maze, repair";
}

/* The tile of a call: a name ("WALL") or an id; PLAYER, DOOR and BORDER
 * cannot be written.  -1 after a refusal. */
static int read_tile(const json_t *v, int k, tools_result *res)
{
    int t = -1;
    if (json_is_string(v)) t = tools_tile_id(json_string_value(v));
    else if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < N_TILES)
        t = (int)json_integer_value(v);
    if (t < 0) {
        refuse(res, k, "unknown tile (" WRITABLE ")");
        return -1;
    }
    if (t == TILE_PLAYER || t == TILE_DOOR || t == TILE_BORDER) {
        refuse(res, k, "tile %s cannot be written (" WRITABLE ")", tile_name(t));
        return -1;
    }
    return t;
}

/* Every field of the call is one of its tool's, every needed one there and
 * an integer (tile aside).  0 or -1 after a refusal. */
static int read_fields(const json_t *o, int k, tool_call *c, tools_result *res)
{
    char list[120];
    field_list(c->tool, list, sizeof list);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)o, key, v)
    {
        if (!strcmp(key, "tool")) continue;
        if (!field_known(c->tool, key)) {
            refuse(res, k, "unknown field '%.40s' for %s (%s)", key, tools_names[c->tool],
                   *list ? list : "no fields");
            return -1;
        }
    }
    int *slot[] = {&c->row, &c->col, &c->row2, &c->col2, &c->height, &c->width, &c->steps};
    const char *names[] = {"row", "col", "row2", "col2", "height", "width", "steps"};
    for (int i = 0; i < 7; i++) {
        if (!field_known(c->tool, names[i])) continue;
        v = json_object_get(o, names[i]);
        if (!v) {
            refuse(res, k, "%s needs '%s' (%s)", tools_names[c->tool], names[i], list);
            return -1;
        }
        if (!json_is_integer(v) || json_integer_value(v) < -100000 || json_integer_value(v) > 100000) {
            refuse(res, k, "'%s' must be an integer", names[i]);
            return -1;
        }
        *slot[i] = (int)json_integer_value(v);
    }
    if (field_known(c->tool, "tile")) {
        v = json_object_get(o, "tile");
        if (!v) {
            refuse(res, k, "%s needs 'tile' (%s)", tools_names[c->tool], list);
            return -1;
        }
        if ((c->tile = read_tile(v, k, res)) < 0) return -1;
    }
    v = json_object_get(o, "seed");
    if (v && field_optional(c->tool, "seed")) {
        if (!json_is_integer(v) || json_integer_value(v) < 0) {
            refuse(res, k, "'seed' must be a non-negative integer");
            return -1;
        }
        c->seed = (uint64_t)json_integer_value(v);
    }
    return 0;
}

static int check_cell(const level_t *l, int k, int second, int r, int col, tools_result *res)
{
    if (r < 0 || r >= l->h) {
        refuse(res, k, "row%s %d is outside 0..%d", second ? "2" : "", r, l->h - 1);
        return -1;
    }
    if (col < 0 || col >= l->w) {
        refuse(res, k, "col%s %d is outside 0..%d", second ? "2" : "", col, l->w - 1);
        return -1;
    }
    return 0;
}

/* The call's cells lie in the level and have the shape the tool needs. */
static int check_geometry(const level_t *l, int k, tool_call *c, tools_result *res)
{
    if (c->tool == TOOL_REPAIR) {
        c->r0 = c->c0 = 0;
        c->r1 = l->h - 1;
        c->c1 = l->w - 1;
        return 0;
    }
    if (check_cell(l, k, 0, c->row, c->col, res)) return -1;
    c->r0 = c->r1 = c->row;
    c->c0 = c->c1 = c->col;
    if (c->tool == TOOL_LINE) {
        if (check_cell(l, k, 1, c->row2, c->col2, res)) return -1;
        if (c->row != c->row2 && c->col != c->col2) {
            refuse(res, k, "a line runs along one row or one column: (%d,%d) to (%d,%d) is neither", c->row,
                   c->col, c->row2, c->col2);
            return -1;
        }
        c->r0 = c->row < c->row2 ? c->row : c->row2;
        c->r1 = c->row < c->row2 ? c->row2 : c->row;
        c->c0 = c->col < c->col2 ? c->col : c->col2;
        c->c1 = c->col < c->col2 ? c->col2 : c->col;
    }
    if (field_known(c->tool, "height")) {
        int least = c->tool == TOOL_ROOM || c->tool == TOOL_MAZE ? 3 : 1;
        if (c->height < least || c->width < least) {
            refuse(res, k, "%s needs a height and a width of at least %d", tools_names[c->tool], least);
            return -1;
        }
        c->r1 = c->row + c->height - 1;
        c->c1 = c->col + c->width - 1;
        if (c->r1 >= l->h) {
            refuse(res, k, "rows %d..%d reach outside 0..%d", c->row, c->r1, l->h - 1);
            return -1;
        }
        if (c->c1 >= l->w) {
            refuse(res, k, "cols %d..%d reach outside 0..%d", c->col, c->c1, l->w - 1);
            return -1;
        }
    }
    if (c->tool == TOOL_CAVE && (c->steps < 1 || c->steps > TOOLS_MAX_CAVE_STEPS)) {
        refuse(res, k, "steps %d is outside 1..%d", c->steps, TOOLS_MAX_CAVE_STEPS);
        return -1;
    }
    if (c->tool == TOOL_AUTOMATA && (c->steps < 1 || c->steps > TOOLS_MAX_AUTOMATA_STEPS)) {
        refuse(res, k, "steps %d is outside 1..%d", c->steps, TOOLS_MAX_AUTOMATA_STEPS);
        return -1;
    }
    return 0;
}

/* A primitive edit never writes the PLAYER or DOOR cell. */
static int check_fixed(const level_t *l, int k, const tool_call *c, tools_result *res)
{
    if (c->tool > TOOL_RECT) return 0;
    for (int r = c->r0; r <= c->r1; r++)
        for (int col = c->c0; col <= c->c1; col++) {
            int t = lv_get(l, r, col);
            if (t != TILE_PLAYER && t != TILE_DOOR) continue;
            refuse(res, k, "would overwrite the %s at (%d,%d)", tile_name(t), r, col);
            return -1;
        }
    return 0;
}

/* Check call k (1-based) against l; 0 and *c filled, or -1 after a refusal. */
static int check_call(const json_t *o, const level_t *l, int k, uint64_t seed, tool_call *c, tools_result *res)
{
    memset(c, 0, sizeof *c);
    c->seed = seed * 1000003u + (uint64_t)k;
    if (!json_is_object(o)) {
        refuse(res, k, "not an object (a call is {\"tool\": NAME, ...})");
        return -1;
    }
    const json_t *t = json_object_get(o, "tool");
    if (!json_is_string(t)) {
        refuse(res, k, "no \"tool\" name (%s)", tool_list());
        return -1;
    }
    c->tool = -1;
    for (int i = 0; tools_names[i]; i++)
        if (!strcmp(json_string_value(t), tools_names[i])) c->tool = i;
    if (c->tool < 0) {
        refuse(res, k, "unknown tool '%.40s' (%s)", json_string_value(t), tool_list());
        return -1;
    }
    if (read_fields(o, k, c, res) || check_geometry(l, k, c, res) || check_fixed(l, k, c, res)) return -1;
    return 0;
}

static void run_call(level_t *l, const tool_call *c)
{
    switch (c->tool) {
    case TOOL_SET:
    case TOOL_LINE:
    case TOOL_RECT:
        for (int r = c->r0; r <= c->r1; r++)
            for (int col = c->c0; col <= c->c1; col++) l->t[r * l->w + col] = (unsigned char)c->tile;
        break;
    case TOOL_ROOM: tool_room(l, c); break;
    case TOOL_CAVE: tool_cave(l, c); break;
    case TOOL_AUTOMATA: tool_automata(l, c); break;
    case TOOL_MAZE: tool_maze(l, c); break;
    default: tool_repair(l); break;
    }
}

static void copy_level(const level_t *in, level_t *out, unsigned char *tiles)
{
    memcpy(tiles, in->t, (size_t)(in->h * in->w));
    out->h = in->h;
    out->w = in->w;
    out->t = tiles;
}

void tools_apply_list(const json_t *list, const level_t *in, level_t *out, unsigned char *out_tiles, uint64_t seed,
                      tools_result *res)
{
    memset(res, 0, sizeof *res);
    copy_level(in, out, out_tiles);
    int n = (int)json_array_size(list);
    res->n_calls = n;
    for (int k = 1; k <= n && k <= TOOLS_MAX_CALLS; k++) {
        tool_call c;
        /* each call is checked against the level as the calls before it left it */
        if (check_call(json_array_get(list, (size_t)(k - 1)), out, k, seed, &c, res)) continue;
        run_call(out, &c);
        res->applied++;
    }
    if (n > TOOLS_MAX_CALLS) {
        tools_refusal *r = &res->refused[res->n_refused++];
        r->call = TOOLS_MAX_CALLS + 1;
        snprintf(r->reason, sizeof r->reason, "calls %d..%d: refused, a reply holds at most %d calls",
                 TOOLS_MAX_CALLS + 1, n, TOOLS_MAX_CALLS);
    }
    res->changed = tools_cells_changed(in, out);
}

/* The text after a reasoning model's last "</think>". */
static const char *answer_part(const char *reply)
{
    const char *p = reply, *q;
    while ((q = strstr(p, "</think>"))) p = q + 8;
    return p;
}

json_t *tools_read_list(const char *reply, char *err, int errlen)
{
    size_t len = reply ? strlen(reply) : 0;
    if (len > TOOLS_MAX_REPLY) {
        snprintf(err, (size_t)errlen, "the reply is %zu bytes, over the %d-byte limit: send fewer calls", len,
                 TOOLS_MAX_REPLY);
        return NULL;
    }
    const char *a = reply ? strchr(answer_part(reply), '[') : NULL;
    if (!a) {
        snprintf(err, (size_t)errlen, "the reply holds no JSON list of tool calls: answer [{\"tool\": ...}, ...]");
        return NULL;
    }
    const char *e = json_text_end(a, '[', ']');
    if (!e) {
        snprintf(err, (size_t)errlen, "the list of tool calls is cut off before its closing ']'");
        return NULL;
    }
    json_error_t je;
    json_t *list = json_loadb(a, (size_t)(e - a), 0, &je);
    if (!json_is_array(list)) {
        snprintf(err, (size_t)errlen, "the list of tool calls is not valid JSON: %s (line %d, column %d)", je.text,
                 je.line, je.column);
        json_decref(list);
        return NULL;
    }
    return list;
}

int tools_apply(const char *reply, const level_t *in, level_t *out, unsigned char *out_tiles, uint64_t seed,
                tools_result *res, char *err, int errlen)
{
    memset(res, 0, sizeof *res);
    copy_level(in, out, out_tiles);
    json_t *list = tools_read_list(reply, err, errlen);
    if (!list) return -1;
    tools_apply_list(list, in, out, out_tiles, seed, res);
    json_decref(list);
    return 0;
}

char *tools_recover(const char *reply, int *kept)
{
    *kept = 0;
    const char *a = reply ? strchr(answer_part(reply), '[') : NULL;
    if (!a || strlen(a) > TOOLS_MAX_REPLY) return NULL;
    char *out = malloc(strlen(a) + 3);
    if (!out) return NULL;
    size_t j = 0;
    out[j++] = '[';
    for (const char *p = a + 1; *p;) {
        const char *o = strchr(p, '{');
        const char *close = strchr(p, ']');
        if (!o || (close && close < o)) break;
        const char *e = json_text_end(o, '{', '}');
        if (!e) break; /* the call the reply was cut in */
        json_t *v = json_loadb(o, (size_t)(e - o), 0, NULL);
        if (json_is_object(v)) {
            if (*kept) out[j++] = ',';
            memcpy(out + j, o, (size_t)(e - o));
            j += (size_t)(e - o);
            ++*kept;
        }
        json_decref(v);
        p = e;
    }
    out[j++] = ']';
    out[j] = 0;
    if (!*kept) {
        free(out);
        return NULL;
    }
    return out;
}
