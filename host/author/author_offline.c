/* The offline author: rule-based baseline reward design (not a language
 * model).  See author_offline.h and docs/offline-author.md. */
#include "author_offline.h"
#include "author_experience.h"
#include "dungeon.h"
#include "util.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const term_names[AT_N_KINDS] = {
    "key_count",  "player_key", "key_door",     "enemy_count",  "enemy_near",  "enemy_none",
    "enemy_away", "gate_count", "door_count",   "player_gate",  "gate_door",   "door_separates",
    "route_length", "exp_forks", "exp_dead_ends", "exp_open", "exp_guard",
};

const char *author_term_name(int kind) { return kind >= 0 && kind < AT_N_KINDS ? term_names[kind] : "?"; }

static int term_kind_by_name(const char *s)
{
    for (int k = 0; k < AT_N_KINDS; k++)
        if (!strcmp(s, term_names[k])) return k;
    return -1;
}

static void add_term(author_reward *r, int kind, int tile, float weight, int form, int param)
{
    if (r->n >= AUTHOR_MAX_TERMS) return;
    author_term *t = &r->term[r->n++];
    t->kind = kind;
    t->tile = tile;
    t->weight = weight;
    t->form = form;
    t->param = param;
    t->changes = 0;
}

/* Initial weights: connectivity first (no solution scores 0), then the
 * enemies on the route, then counts that keep the map readable. */
void author_initial(const target_t *t, author_reward *r)
{
    memset(r, 0, sizeof *r);
    r->target = *t;
    r->scale = 1.0f;
    if (t->kind == TARGET_KEYDOOR) {
        add_term(r, AT_GATE_COUNT, t->gate, 1.0f, AF_BINARY, 1);
        add_term(r, AT_DOOR_COUNT, TILE_DOOR, 1.0f, AF_BINARY, 1);
        add_term(r, AT_PLAYER_GATE, t->gate, 2.0f, AF_BINARY, 0);
        add_term(r, AT_GATE_DOOR, t->gate, 2.0f, AF_BINARY, 0);
        add_term(r, AT_DOOR_SEPARATES, TILE_DOOR, 2.0f, AF_BINARY, 0);
        return;
    }
    add_term(r, AT_KEY_COUNT, TILE_KEY, 1.0f, AF_BINARY, 1);
    add_term(r, AT_PLAYER_KEY, TILE_KEY, 2.0f, AF_BINARY, 0);
    add_term(r, AT_KEY_DOOR, TILE_KEY, 2.0f, AF_BINARY, 0);
    if (t->kind == TARGET_PATHLENGTH) {
        /* the length only counts once there is a route: after the connectivity terms */
        add_term(r, AT_ROUTE_LENGTH, TILE_KEY, 2.0f, AF_BINARY, 0);
        return;
    }
    for (int e = 0; e < TARGET_N_ENEMIES; e++) {
        int tile = TILE_BAT + e;
        if (t->enemies[e]) {
            add_term(r, AT_ENEMY_COUNT, tile, 1.0f, AF_BINARY, 1);
            add_term(r, AT_ENEMY_NEAR, tile, 2.0f, AF_BINARY, 2);
        } else {
            add_term(r, AT_ENEMY_NONE, tile, 1.0f, AF_BINARY, 0);
            add_term(r, AT_ENEMY_AWAY, tile, 1.0f, AF_BINARY, 2);
        }
    }
}

/* ------------------------------------------------------------------ */
/* Code generation                                                    */

typedef struct {
    char *buf;
    size_t len, pos;
    int overflow;
} sbuf;

static void out(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(sbuf *b, const char *fmt, ...)
{
    if (b->overflow) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->buf + b->pos, b->len - b->pos, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= b->len - b->pos) b->overflow = 1;
    else b->pos += (size_t)n;
}

const char *c_float_literal(float v, char *s)
{
    snprintf(s, 40, "%.9g", (double)v);
    if (!strpbrk(s, ".eni")) strcat(s, ".0");
    strcat(s, "f");
    return s;
}

static int has_term(const author_reward *r, int kind)
{
    for (int i = 0; i < r->n; i++)
        if (r->term[i].kind == kind) return 1;
    return 0;
}

static int needs_regions(const author_reward *r)
{
    for (int i = 0; i < r->n; i++) {
        int k = r->term[i].kind;
        if (r->term[i].form == AF_SHAPED &&
            (k == AT_PLAYER_KEY || k == AT_KEY_DOOR || k == AT_PLAYER_GATE || k == AT_GATE_DOOR))
            return 1;
    }
    return 0;
}

static const char *tname(int tile) { return target_tile_name(tile); }

/* One enemy type's detour from the route, into det_<TILE>. */
static void emit_detour(sbuf *b, int tile)
{
    const char *n = tname(tile);
    out(b, "        /* %s: extra steps to pass the nearest %s on the way (99: none) */\n", n, n);
    out(b, "        int n_%s = count_tiles(l, %s);\n", n, n);
    out(b, "        float det_%s = 99.0f;\n", n);
    out(b, "        if (n_%s > 0 && players > 0) {\n", n);
    out(b, "            int from_p = nearest_tile_distance(l, pr[0], pc[0], %s);\n", n);
    out(b, "            int from_d = doors > 0 ? nearest_tile_distance(l, dr[0], dc[0], %s) : -1;\n", n);
    out(b, "            if (bk >= 0) {\n");
    out(b, "                int from_k = nearest_tile_distance(l, kr[bk], kc[bk], %s);\n", n);
    out(b, "                if (from_p >= 0 && from_k >= 0)\n");
    out(b, "                    det_%s = fminf(det_%s, (float)(from_p + from_k - d_pk));\n", n, n);
    out(b, "                if (d_kd > 0 && from_k >= 0 && from_d >= 0)\n");
    out(b, "                    det_%s = fminf(det_%s, (float)(from_k + from_d - d_kd));\n", n, n);
    out(b, "            } else if (d_pd > 0 && from_p >= 0 && from_d >= 0) {\n");
    out(b, "                det_%s = fminf(det_%s, (float)(from_p + from_d - d_pd));\n", n, n);
    out(b, "            }\n");
    out(b, "        }\n");
}

static void emit_connect(sbuf *b, const author_term *t, const char *cond, const char *what)
{
    char w[40];
    out(b, "        /* %s (%s): %s */\n", author_term_name(t->kind), t->form == AF_SHAPED ? "shaped" : "binary",
        what);
    if (t->form == AF_SHAPED)
        out(b, "        v += %s * (%s ? 1.0f : -fminf((float)(regions - 1), 10.0f) / 10.0f);\n", c_float_literal(t->weight, w),
            cond);
    else
        out(b, "        v += %s * (%s ? 1.0f : 0.0f);\n", c_float_literal(t->weight, w), cond);
}

static void emit_count(sbuf *b, const author_term *t, const char *count, int want, const char *what)
{
    char w[40];
    out(b, "        /* %s: %s */\n", author_term_name(t->kind), what);
    out(b, "        v += %s * -fminf(fabsf((float)%s - %d.0f), quarter) / 4.0f;\n", c_float_literal(t->weight, w), count, want);
}

/* The route Player -> Key -> Door the encounter terms are measured on:
 * d_pk, d_kd (or d_pd when no key is reached), and the counts. */
static void emit_route(sbuf *b, const author_reward *r)
{
    out(b, "        /* each tile too many or too few costs a quarter, up to a quarter of the map */\n");
    out(b, "        float quarter = (float)(level_height(l) * level_width(l)) / 4.0f;\n");
    out(b, "        int pr[1], pc[1], dr[1], dc[1], kr[4], kc[4];\n");
    out(b, "        int players = find_tiles(l, PLAYER, pr, pc, 1);\n");
    out(b, "        int doors = find_tiles(l, DOOR, dr, dc, 1);\n");
    out(b, "        int keys = find_tiles(l, KEY, kr, kc, 4);\n");
    if (needs_regions(r)) out(b, "        int regions = count_regions(l);\n");
    out(b, "        /* the first key (row-major) the player reaches; the door is reachable\n");
    out(b, "         * from it exactly when it is reachable from any reachable key */\n");
    out(b, "        int d_pk = -1, d_kd = -1, bk = -1;\n");
    out(b, "        for (int k = 0; players > 0 && k < keys && k < 4 && bk < 0; k++) {\n");
    out(b, "            int a = path_length(l, pr[0], pc[0], kr[k], kc[k]);\n");
    out(b, "            if (a <= 0) continue;\n");
    out(b, "            bk = k;\n");
    out(b, "            d_pk = a;\n");
    out(b, "            d_kd = doors > 0 ? path_length(l, kr[k], kc[k], dr[0], dc[0]) : -1;\n");
    out(b, "        }\n");
    out(b, "        int d_pd = bk < 0 && players > 0 && doors > 0 ? path_length(l, pr[0], pc[0], dr[0], dc[0]) : -1;\n");
    out(b, "        (void)d_pd;\n");
}

/* One leg's off-target steps, as the evaluator's route score counts them. */
static void emit_leg_off(sbuf *b, const char *name, const char *dist, int want, int tolerance)
{
    char lw[40], tw[40];
    out(b, "            float %s = fmaxf(fabsf((float)(%s) - %s) - %s, 0.0f);\n", name, dist, c_float_literal((float)want, lw),
        c_float_literal((float)tolerance, tw));
}

static void emit_route_length(sbuf *b, const author_term *t, const target_t *g)
{
    char w[40], lw[40], aw[40], bw[40];
    int shaped = t->form == AF_SHAPED;
    out(b, "        if (d_pk > 0 && d_kd > 0) {\n");
    if (target_is_two_leg(g)) {
        out(b, "            /* route_length (%s): Player -> Key %d steps and Key -> Door %d, give or take %d */\n",
            shaped ? "shaped" : "binary", g->leg_key, g->leg_door, g->tolerance);
        emit_leg_off(b, "off_a", "d_pk", g->leg_key, g->tolerance);
        emit_leg_off(b, "off_b", "d_kd", g->leg_door, g->tolerance);
        if (shaped)
            out(b, "            v += %s * 0.5f * ((1.0f - fminf(off_a / %s, 1.0f)) + (1.0f - fminf(off_b / %s, 1.0f)));\n",
                c_float_literal(t->weight, w), c_float_literal((float)g->leg_key, aw), c_float_literal((float)g->leg_door, bw));
        else
            out(b, "            v += %s * (off_a == 0.0f && off_b == 0.0f ? 1.0f : 0.0f);\n", c_float_literal(t->weight, w));
    } else {
        out(b, "            /* route_length (%s): the route Player -> Key -> Door %d steps, give or take %d */\n",
            shaped ? "shaped" : "binary", g->length, g->tolerance);
        emit_leg_off(b, "off", "d_pk + d_kd", g->length, g->tolerance);
        if (shaped) out(b, "            v += %s * (1.0f - fminf(off / %s, 1.0f));\n", c_float_literal(t->weight, w), c_float_literal((float)g->length, lw));
        else out(b, "            v += %s * (off == 0.0f ? 1.0f : 0.0f);\n", c_float_literal(t->weight, w));
    }
    out(b, "        }\n");
}

static void emit_encounter_term(sbuf *b, const author_reward *r, const author_term *t)
{
    char w[40];
    const char *n = tname(t->tile);
    switch (t->kind) {
    case AT_KEY_COUNT: emit_count(b, t, "keys", t->param, "exactly one key"); break;
    case AT_PLAYER_KEY: emit_connect(b, t, "d_pk > 0", "the player reaches a key"); break;
    case AT_KEY_DOOR: emit_connect(b, t, "d_kd > 0", "that key reaches the door"); break;
    case AT_ENEMY_COUNT: {
        char cnt[32], what[80];
        snprintf(cnt, sizeof cnt, "n_%s", n);
        snprintf(what, sizeof what, "%d %s on the map", t->param, n);
        emit_count(b, t, cnt, t->param, what);
        break;
    }
    case AT_ENEMY_NEAR:
        out(b, "        /* enemy_near (%s): a %s within %d extra steps of the route */\n",
            t->form == AF_SHAPED ? "shaped" : "binary", n, t->param);
        if (t->form == AF_SHAPED)
            out(b, "        v += %s * (det_%s <= %d.0f ? 1.0f : -fminf(det_%s - %d.0f, 20.0f) / 20.0f);\n",
                c_float_literal(t->weight, w), n, t->param, n, t->param);
        else
            out(b, "        v += %s * (det_%s <= %d.0f ? 1.0f : 0.0f);\n", c_float_literal(t->weight, w), n, t->param);
        break;
    case AT_ROUTE_LENGTH: emit_route_length(b, t, &r->target); break;
    case AT_ENEMY_NONE:
        out(b, "        /* enemy_none: no %s on the map */\n", n);
        out(b, "        v += %s * -fminf((float)n_%s, quarter) / 4.0f;\n", c_float_literal(t->weight, w), n);
        break;
    case AT_ENEMY_AWAY:
        out(b, "        /* enemy_away (%s): no %s within %d extra steps of the route */\n",
            t->form == AF_SHAPED ? "shaped" : "binary", n, t->param);
        if (t->form == AF_SHAPED)
            out(b,
                "        v += %s * (det_%s <= %d.0f ? -1.0f : -fmaxf(0.0f, %d.0f - det_%s) / 4.0f);\n",
                c_float_literal(t->weight, w), n, t->param, t->param + 4, n);
        else
            out(b, "        v += %s * (det_%s <= %d.0f ? -1.0f : 0.0f);\n", c_float_literal(t->weight, w), n, t->param);
        break;
    default: break;
    }
}

static void emit_encounter_terms(sbuf *b, const author_reward *r)
{
    int want_detour[TARGET_N_ENEMIES] = {0};
    for (int i = 0; i < r->n; i++) {
        int k = r->term[i].kind, tile = r->term[i].tile;
        if ((k == AT_ENEMY_NEAR || k == AT_ENEMY_AWAY || k == AT_ENEMY_COUNT || k == AT_ENEMY_NONE) &&
            tile >= TILE_BAT && tile <= TILE_SPIDER)
            want_detour[tile - TILE_BAT] = 1;
    }
    emit_route(b, r);
    for (int e = 0; e < TARGET_N_ENEMIES; e++)
        if (want_detour[e]) emit_detour(b, TILE_BAT + e);
    for (int i = 0; i < r->n; i++) emit_encounter_term(b, r, &r->term[i]);
}

static void emit_keydoor_terms(sbuf *b, const author_reward *r)
{
    const char *g = tname(r->target.gate);
    out(b, "        /* each tile too many or too few costs a quarter, up to a quarter of the map */\n");
    out(b, "        float quarter = (float)(level_height(l) * level_width(l)) / 4.0f;\n");
    out(b, "        int pr[1], pc[1], tr[1], tc[1], dr[4], dc[4], gr[4], gc[4];\n");
    out(b, "        int players = find_tiles(l, PLAYER, pr, pc, 1);\n");
    out(b, "        int treasures = find_tiles(l, TREASURE, tr, tc, 1);\n");
    out(b, "        int doors = find_tiles(l, DOOR, dr, dc, 4);\n");
    out(b, "        int gates = find_tiles(l, %s, gr, gc, 4);\n", g);
    if (needs_regions(r)) out(b, "        int regions = count_regions(l);\n");
    out(b, "        int d_pd = players > 0 ? nearest_tile_distance(l, pr[0], pc[0], DOOR) : -1;\n");
    out(b, "        /* the nearest reachable %s (the gate) and the nearest door from it */\n", g);
    out(b, "        int d_pg = -1, d_gd = -1;\n");
    out(b, "        for (int k = 0; players > 0 && k < gates && k < 4; k++) {\n");
    out(b, "            int a = path_length(l, pr[0], pc[0], gr[k], gc[k]);\n");
    out(b, "            if (a <= 0 || (d_pg >= 0 && a >= d_pg)) continue;\n");
    out(b, "            d_pg = a;\n");
    out(b, "            d_gd = nearest_tile_distance(l, gr[k], gc[k], DOOR);\n");
    out(b, "        }\n");
    out(b, "        int gate_first = d_pg > 0 && (d_pd < 0 || d_pg < d_pd);\n");
    if (has_term(r, AT_DOOR_SEPARATES)) {
        out(b, "        /* the shortest way to the treasure runs through a door set in a wall */\n");
        out(b, "        int sep = 0;\n");
        out(b, "        if (players > 0 && treasures > 0) {\n");
        out(b, "            int d_pt = path_length(l, pr[0], pc[0], tr[0], tc[0]);\n");
        out(b, "            for (int k = 0; d_pt > 0 && k < doors && k < 4 && !sep; k++) {\n");
        out(b, "                int a = path_length(l, pr[0], pc[0], dr[k], dc[k]);\n");
        out(b, "                int c = path_length(l, dr[k], dc[k], tr[0], tc[0]);\n");
        out(b, "                int walls = 0;\n");
        out(b, "                for (int m = 0; m < 4; m++) {\n");
        out(b, "                    int t = tile_at(l, dr[k] + (m == 0) - (m == 1), dc[k] + (m == 2) - (m == 3));\n");
        out(b, "                    walls += t == WALL || t == BORDER;\n");
        out(b, "                }\n");
        out(b, "                if (a > 0 && c > 0 && a + c == d_pt && walls >= 2) sep = 1;\n");
        out(b, "            }\n");
        out(b, "        }\n");
    }
    for (int i = 0; i < r->n; i++) {
        const author_term *t = &r->term[i];
        char what[80];
        switch (t->kind) {
        case AT_GATE_COUNT:
            snprintf(what, sizeof what, "exactly %d %s", t->param, g);
            emit_count(b, t, "gates", t->param, what);
            break;
        case AT_DOOR_COUNT: emit_count(b, t, "doors", t->param, "exactly one door"); break;
        case AT_PLAYER_GATE:
            snprintf(what, sizeof what, "the player reaches a %s before any door", g);
            emit_connect(b, t, "gate_first", what);
            break;
        case AT_GATE_DOOR:
            snprintf(what, sizeof what, "a door is reachable from that %s", g);
            emit_connect(b, t, "d_gd > 0", what);
            break;
        case AT_DOOR_SEPARATES: {
            char w[40];
            out(b, "        /* door_separates: the treasure lies behind the door */\n");
            out(b, "        v += %s * (sep ? 1.0f : 0.0f);\n", c_float_literal(t->weight, w));
            break;
        }
        default: break;
        }
    }
}

int author_code(const author_reward *r, char *buf, size_t len)
{
    sbuf b = {buf, len, 0, 0};
    char desc[200], w[40];
    if (!buf || !len) return -1;
    buf[0] = 0;
    target_describe(&r->target, desc, sizeof desc);
    out(&b, "/* Reward written by the pcgrllm offline author, a rule-based baseline\n");
    out(&b, " * (deterministic rules, not a language model).\n");
    out(&b, " * Target: %s\n", desc);
    out(&b, " * Score S(level) = sum of weighted terms; reward = scale * (S(curr) - S(prev)).\n");
    out(&b, " *\n");
    out(&b, " * offline-author-terms v1\n");
    const char *kind = r->target.kind == TARGET_KEYDOOR ? "keydoor"
                       : r->target.kind == TARGET_PATHLENGTH ? "pathlength"
                                                              : "encounter";
    out(&b, " * target %s g=%d,%d,%d gate=%s", kind, r->target.enemies[0], r->target.enemies[1], r->target.enemies[2],
        r->target.kind == TARGET_KEYDOOR ? tname(r->target.gate) : "-");
    if (r->target.kind == TARGET_PATHLENGTH)
        out(&b, " length=%d tolerance=%d", r->target.length, r->target.tolerance);
    if (target_is_two_leg(&r->target)) out(&b, " legs=%d,%d", r->target.leg_key, r->target.leg_door);
    if (r->target.enemy_count) out(&b, " enemy_count=%d", r->target.enemy_count);
    out(&b, "\n");
    out(&b, " * scale %.9g revision %d\n", (double)r->scale, r->revision);
    for (int i = 0; i < r->n; i++) {
        const author_term *t = &r->term[i];
        out(&b, " * term %s tile=%s weight=%.9g form=%s param=%d changes=%d\n", author_term_name(t->kind),
            t->tile ? tname(t->tile) : "-", (double)t->weight, t->form == AF_SHAPED ? "shaped" : "binary", t->param,
            t->changes);
    }
    out(&b, " * end-terms\n */\n");
    out(&b, "float compute_reward(const level_t *prev, const level_t *curr)\n{\n");
    out(&b, "    float score[2];\n");
    out(&b, "    for (int s = 0; s < 2; s++) {\n");
    out(&b, "        const level_t *l = s == 0 ? prev : curr;\n");
    out(&b, "        float v = 0.0f;\n");
    if (r->target.kind == TARGET_KEYDOOR) emit_keydoor_terms(&b, r);
    else emit_encounter_terms(&b, r);
    char experience[2400];
    if (author_experience_code(r, experience, sizeof experience) < 0) b.overflow = 1;
    else out(&b, "%s", experience);
    out(&b, "        score[s] = v;\n");
    out(&b, "    }\n");
    out(&b, "    return %s * (score[1] - score[0]);\n}\n", c_float_literal(r->scale, w));
    if (b.overflow) {
        buf[0] = 0;
        return -1;
    }
    return (int)b.pos;
}

/* ------------------------------------------------------------------ */
/* Reading the terms back                                             */

static int tile_from_name(const char *s)
{
    if (!strcmp(s, "-")) return 0;
    for (int t = 1; t < N_TILES; t++)
        if (!strcmp(s, tname(t))) return t;
    return -1;
}

/* Next line of the header (after " * "), copied into line. */
static const char *next_line(const char *p, char *line, size_t len)
{
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    const char *s = p;
    while (n && (*s == ' ' || *s == '*')) s++, n--;
    if (n >= len) n = len - 1;
    memcpy(line, s, n);
    line[n] = 0;
    return e ? e + 1 : p + strlen(p);
}

int author_parse(const char *code, author_reward *r, char *err, int errlen)
{
    memset(r, 0, sizeof *r);
    const char *p = code ? strstr(code, "offline-author-terms v1\n") : NULL;
    if (!p) {
        say_to(err, errlen, "not a reward written by the offline author (no offline-author-terms header)");
        return -1;
    }
    p = strchr(p, '\n') + 1;
    char line[256], kind[32], g[32], tile[32], form[32];
    int g0, g1, g2, lineno = 0;
    p = next_line(p, line, sizeof line);
    if (sscanf(line, "target %31s g=%d,%d,%d gate=%31s", kind, &g0, &g1, &g2, g) != 5) goto bad;
    target_t *t = &r->target;
    memset(t, 0, sizeof *t);
    if (!strcmp(kind, "encounter")) {
        t->kind = TARGET_ENCOUNTER;
        t->enemies[0] = g0;
        t->enemies[1] = g1;
        t->enemies[2] = g2;
        t->variant = VARIANT_DUNGEON;
    } else if (!strcmp(kind, "keydoor")) {
        t->kind = TARGET_KEYDOOR;
        t->gate = tile_from_name(g);
        t->variant = VARIANT_TREASURE;
    } else if (!strcmp(kind, "pathlength")) {
        const char *lp = strstr(line, " length=");
        t->kind = TARGET_PATHLENGTH;
        t->variant = VARIANT_DUNGEON;
        if (!lp || sscanf(lp, " length=%d tolerance=%d", &t->length, &t->tolerance) != 2) goto bad;
        const char *legs = strstr(line, " legs="), *ec = strstr(line, " enemy_count=");
        if (legs && sscanf(legs, " legs=%d,%d", &t->leg_key, &t->leg_door) != 2) goto bad;
        if (ec && sscanf(ec, " enemy_count=%d", &t->enemy_count) != 1) goto bad;
    }
    if (target_validate(t, NULL, 0)) goto bad;
    lineno++;
    p = next_line(p, line, sizeof line);
    float scale;
    if (sscanf(line, "scale %f revision %d", &scale, &r->revision) != 2 || !(scale > 0 && scale < 1e6f) ||
        r->revision < 0)
        goto bad;
    r->scale = scale;
    for (;;) {
        lineno++;
        if (!*p) goto bad;
        p = next_line(p, line, sizeof line);
        if (!strcmp(line, "end-terms")) break;
        author_term tm;
        memset(&tm, 0, sizeof tm);
        if (r->n >= AUTHOR_MAX_TERMS ||
            sscanf(line, "term %31s tile=%31s weight=%f form=%31s param=%d changes=%d", kind, tile, &tm.weight,
                   form, &tm.param, &tm.changes) != 6)
            goto bad;
        tm.kind = term_kind_by_name(kind);
        tm.tile = tile_from_name(tile);
        tm.form = !strcmp(form, "shaped") ? AF_SHAPED : !strcmp(form, "binary") ? AF_BINARY : -1;
        if (tm.kind < 0 || tm.tile < 0 || tm.form < 0 || !(fabsf(tm.weight) <= AUTHOR_WEIGHT_MAX) ||
            tm.param < 0 || tm.param > 99 || tm.changes < 0)
            goto bad;
        r->term[r->n++] = tm;
    }
    return 0;
bad:
    say_to(err, errlen, "offline-author header: cannot read line %d of the terms", lineno + 1);
    memset(r, 0, sizeof *r);
    return -1;
}

/* ------------------------------------------------------------------ */
/* Self-alignment                                                     */

static int sparse_kind(int k)
{
    return k == AT_PLAYER_KEY || k == AT_KEY_DOOR || k == AT_PLAYER_GATE || k == AT_GATE_DOOR ||
           k == AT_ENEMY_NEAR || k == AT_ENEMY_AWAY || k == AT_ROUTE_LENGTH;
}

/* Round to 3 significant digits, so scales print and parse exactly. */
static float round3(double v)
{
    if (!(v > 0)) return (float)v;
    double e = pow(10.0, floor(log10(v)) - 2);
    return (float)(floor(v / e + 0.5) * e);
}

int author_align(author_reward *r, const author_stats *s, char *note, int len)
{
    if (!s || s->n <= 0 || !isfinite(s->mean) || !isfinite(s->std) || !isfinite(s->min) || !isfinite(s->max)) {
        say_to(note, len, "no usable statistics; reward unchanged");
        return 0;
    }
    double peak = fmax(fabs(s->min), fabs(s->max));
    /* Sparsity first: a reward that is almost always zero gives PPO little
     * to learn from.  Shape the binary terms, one kind of change per step. */
    if (s->zero_share > 0.9 || peak == 0) {
        int shaped = 0;
        for (int i = 0; i < r->n; i++)
            if (sparse_kind(r->term[i].kind) && r->term[i].form == AF_BINARY) {
                r->term[i].form = AF_SHAPED;
                shaped++;
            }
        if (shaped) {
            r->revision++;
            say_to(note, len,
                "%.0f%% of random-play rewards are zero: %d binary term%s made shaped (partial credit for "
                "fewer regions and smaller detours)",
                s->zero_share * 100, shaped, shaped == 1 ? "" : "s");
            return 1;
        }
        if (peak == 0) {
            say_to(note, len, "every random-play reward is zero and all terms are already shaped; unchanged");
            return 0;
        }
    }
    /* Scale: keep the largest reward near 1. */
    if (peak > 2.0 || peak < 0.25) {
        float old = r->scale;
        float next = round3(r->scale / peak);
        if (next < 1e-4f) next = 1e-4f;
        if (next > 1e4f) next = 1e4f;
        if (next != old) {
            r->scale = next;
            r->revision++;
            say_to(note, len, "largest |reward| %.4g is outside [0.25, 2]: scale %.4g -> %.4g", peak, (double)old,
                (double)next);
            return 1;
        }
    }
    say_to(note, len, "statistics in range (largest |reward| %.4g, zero share %.0f%%); unchanged", peak,
        s->zero_share * 100);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Feedback and refinement                                            */

typedef struct {
    const author_reward *r;
    int kind, tile, levels, changes;
    char problem[240], change[240];
} diagnosis;

static int term_changes(const author_reward *r, int kind, int tile)
{
    for (int i = 0; i < r->n; i++)
        if (r->term[i].kind == kind && r->term[i].tile == tile) return r->term[i].changes;
    return 0;
}

/* The problem affecting the most levels wins; on a tie, the one whose term
 * has been changed less often (so a failure that refining one term did not
 * fix does not hide an equal one), then the one listed first. */
static void consider(diagnosis *best, int kind, int tile, int levels, const char *problem, const char *change)
{
    if (levels <= 0 || levels < best->levels) return;
    int changes = term_changes(best->r, kind, tile);
    if (levels == best->levels && changes >= best->changes) return;
    best->kind = kind;
    best->tile = tile;
    best->levels = levels;
    best->changes = changes;
    snprintf(best->problem, sizeof best->problem, "%s", problem);
    snprintf(best->change, sizeof best->change, "%s", change);
}

/* The key-door flow Player -> gate -> Door -> Treasure, step by step. */
static void diagnose_keydoor(const author_reward *r, const author_metrics *m, diagnosis *d)
{
    char p[240], c[240];
    int n = m->n;
    const char *g = tname(r->target.gate);
    snprintf(p, sizeof p, "%d of %d levels have no %s, so nothing opens the door", m->no_gate, n, g);
    snprintf(c, sizeof c, "raise the weight of the term that asks for exactly one %s (gate_count)", g);
    consider(d, AT_GATE_COUNT, r->target.gate, m->no_gate, p, c);
    snprintf(p, sizeof p, "%d of %d levels have no DOOR in front of the treasure", m->no_door, n);
    snprintf(c, sizeof c, "raise the weight of the term that asks for exactly one door (door_count)");
    consider(d, AT_DOOR_COUNT, TILE_DOOR, m->no_door, p, c);
    snprintf(p, sizeof p, "in %d of %d levels the player cannot reach a %s without passing a door",
             m->gate_unreached, n, g);
    snprintf(c, sizeof c, "strengthen the term that rewards reaching a %s before any door (player_gate)", g);
    consider(d, AT_PLAYER_GATE, r->target.gate, m->gate_unreached, p, c);
    snprintf(p, sizeof p, "in %d of %d levels no door can be reached from the %s", m->gate_no_door, n, g);
    snprintf(c, sizeof c, "strengthen the term that rewards a door reachable from the %s (gate_door)", g);
    consider(d, AT_GATE_DOOR, r->target.gate, m->gate_no_door, p, c);
    snprintf(p, sizeof p, "in %d of %d levels the treasure cannot be reached even through the door",
             m->treasure_unreached, n);
    snprintf(c, sizeof c, "strengthen the term that rewards a way to the treasure through the door "
                          "(door_separates)");
    consider(d, AT_DOOR_SEPARATES, TILE_DOOR, m->treasure_unreached, p, c);
    snprintf(p, sizeof p, "in %d of %d levels the player reaches the treasure without passing the door",
             m->door_not_separating, n);
    snprintf(c, sizeof c, "strengthen the term that rewards the door closing the only way to the treasure "
                          "(door_separates)");
    consider(d, AT_DOOR_SEPARATES, TILE_DOOR, m->door_not_separating, p, c);
}

/* The route Player -> Key -> Door: a key, reached, reaching the door. */
static void diagnose_route(const author_metrics *m, diagnosis *d)
{
    char p[240], c[240];
    int n = m->n;
    snprintf(p, sizeof p, "%d of %d levels have no KEY, so there is no solution", m->no_key, n);
    snprintf(c, sizeof c, "raise the weight of the term that asks for exactly one key (key_count)");
    consider(d, AT_KEY_COUNT, TILE_KEY, m->no_key, p, c);
    snprintf(p, sizeof p, "in %d of %d levels the player cannot reach any key", m->key_unreached, n);
    snprintf(c, sizeof c, "strengthen the term that rewards a path from the player to a key (player_key)");
    consider(d, AT_PLAYER_KEY, TILE_KEY, m->key_unreached, p, c);
    snprintf(p, sizeof p, "in %d of %d levels the door cannot be reached from the key", m->door_unreached, n);
    snprintf(c, sizeof c, "strengthen the term that rewards a path from the key to the door (key_door)");
    consider(d, AT_KEY_DOOR, TILE_KEY, m->door_unreached, p, c);
    snprintf(p, sizeof p, "in %d of %d levels every way to a key passes another key", m->blocked_by_keys, n);
    snprintf(c, sizeof c, "raise the weight of the term that asks for exactly one key (key_count)");
    consider(d, AT_KEY_COUNT, TILE_KEY, m->blocked_by_keys, p, c);
}

/* Two legs: the leg off its length in the most levels. */
static void diagnose_legs(const author_reward *r, const author_metrics *m, diagnosis *d)
{
    char p[240], c[240];
    int T = r->target.tolerance, key_off = m->key_short + m->key_long, door_off = m->door_short + m->door_long;
    int key = key_off >= door_off;
    snprintf(p, sizeof p,
             "in %d of the %d solvable levels the %s leg is not %d +- %d steps (%d too short, %d too long)",
             key ? key_off : door_off, m->solved, key ? "Player -> Key" : "Key -> Door",
             key ? r->target.leg_key : r->target.leg_door, T, key ? m->key_short : m->door_short,
             key ? m->key_long : m->door_long);
    snprintf(c, sizeof c, "strengthen the term that rewards legs of %d and %d +- %d steps (route_length)",
             r->target.leg_key, r->target.leg_door, T);
    consider(d, AT_ROUTE_LENGTH, TILE_KEY, key ? key_off : door_off, p, c);
}

static void diagnose_route_length(const author_reward *r, const author_metrics *m, diagnosis *d)
{
    char p[240], c[240];
    if (target_is_two_leg(&r->target)) {
        diagnose_legs(r, m, d);
        return;
    }
    int off = m->route_short + m->route_long, L = r->target.length, T = r->target.tolerance;
    snprintf(p, sizeof p,
             "in %d of the %d solvable levels the route Player -> Key -> Door is not %d +- %d steps (%d too "
             "short, %d too long)",
             off, m->solved, L, T, m->route_short, m->route_long);
    snprintf(c, sizeof c, "strengthen the term that rewards a route of %d +- %d steps (route_length)", L, T);
    consider(d, AT_ROUTE_LENGTH, TILE_KEY, off, p, c);
}

/* Each enemy type: met when asked for, not met when not. */
static void diagnose_enemies(const author_reward *r, const author_metrics *m, diagnosis *d)
{
    char p[240], c[240];
    for (int e = 0; e < TARGET_N_ENEMIES; e++) {
        const char *name = tname(TILE_BAT + e);
        if (r->target.enemies[e]) {
            int missed = m->solved - m->met[e];
            int absent = m->solved - m->present[e];
            if (absent * 2 > missed) {
                snprintf(p, sizeof p,
                         "the %s is not met in %d of the %d solvable levels; %d of them have no %s at all", name,
                         missed, m->solved, absent, name);
                snprintf(c, sizeof c, "raise the weight of the term that asks for one %s on the map (enemy_count)",
                         name);
                consider(d, AT_ENEMY_COUNT, TILE_BAT + e, missed, p, c);
            } else {
                snprintf(p, sizeof p,
                         "the %s is not met in %d of the %d solvable levels although it is on the map in %d of "
                         "them",
                         name, missed, m->solved, m->present[e]);
                snprintf(c, sizeof c, "strengthen the term that rewards a %s close to the player-key-door route "
                                      "(enemy_near)",
                         name);
                consider(d, AT_ENEMY_NEAR, TILE_BAT + e, missed, p, c);
            }
        } else {
            snprintf(p, sizeof p, "the %s, which the story does not ask for, is met in %d of the %d solvable levels",
                     name, m->met[e], m->solved);
            snprintf(c, sizeof c, "strengthen the term that penalises a %s near the route (enemy_away)", name);
            consider(d, AT_ENEMY_AWAY, TILE_BAT + e, m->met[e], p, c);
        }
    }
}

static void diagnose(const author_reward *r, const author_metrics *m, diagnosis *d)
{
    memset(d, 0, sizeof *d);
    d->r = r;
    d->kind = -1;
    if (r->target.kind == TARGET_KEYDOOR) {
        diagnose_keydoor(r, m, d);
        return;
    }
    diagnose_route(m, d);
    if (r->target.kind == TARGET_PATHLENGTH) diagnose_route_length(r, m, d);
    else diagnose_enemies(r, m, d);
}

int author_feedback(const author_reward *r, const author_metrics *m, char *buf, int len)
{
    diagnosis d;
    diagnose(r, m, &d);
    if (d.kind < 0)
        return snprintf(buf, (size_t)len,
                        "No problem found: all %d levels satisfy the target (fitness %.3f). Keep the reward as it "
                        "is.\n",
                        m->n, m->fitness);
    return snprintf(buf, (size_t)len,
                    "Problem: %s (fitness %.3f).\nChange: %s.\n[offline-author term=%s:%s levels=%d/%d]\n",
                    d.problem, m->fitness, d.change, author_term_name(d.kind), tname(d.tile), d.levels, m->n);
}

int author_refine(author_reward *r, const char *feedback, char *note, int len)
{
    return author_refine_branch(r, feedback, 0, note, len);
}

int author_refine_branch(author_reward *r, const char *feedback, int branch, char *note, int len)
{
    if (branch < 0) branch = 0;
    const char *tag = feedback ? strstr(feedback, "[offline-author term=") : NULL;
    char kind[32], tile[32];
    if (!tag || sscanf(tag, "[offline-author term=%31[a-z_]:%31[A-Z]", kind, tile) != 2) {
        say_to(note, len, "the feedback names no measured problem; terms unchanged");
        return 0;
    }
    int k = term_kind_by_name(kind), t = tile_from_name(tile);
    if (k < 0 || t <= 0) {
        say_to(note, len, "the feedback names an unknown term '%s:%s'; terms unchanged", kind, tile);
        return 0;
    }
    author_term *tm = NULL;
    for (int i = 0; i < r->n && !tm; i++)
        if (r->term[i].kind == k && r->term[i].tile == t) tm = &r->term[i];
    if (!tm) {
        if (r->n >= AUTHOR_MAX_TERMS) {
            say_to(note, len, "no room for a new %s term; terms unchanged", kind);
            return 0;
        }
        add_term(r, k, t, 1.0f, AF_BINARY, k == AT_ENEMY_NEAR || k == AT_ENEMY_AWAY ? 2 : 1);
        r->revision++;
        say_to(note, len, "added the missing term %s for %s", kind, tile);
        return 1;
    }
    /* Even-numbered changes double the weight, odd ones change the form;
     * a form that cannot change any more falls back to the weight.  An odd
     * branch (a second child of the same parent) takes the other change, so
     * siblings differ. */
    int form_change = (tm->changes + branch) % 2 == 1;
    tm->changes++;
    r->revision++;
    if (form_change) {
        if (k == AT_ENEMY_NEAR && tm->param > 0) {
            tm->param--;
            say_to(note, len, "%s %s: radius tightened to %d extra steps", kind, tile, tm->param);
            return 1;
        }
        if (k == AT_ENEMY_AWAY && tm->param < 8) {
            tm->param += 2;
            say_to(note, len, "%s %s: radius widened to %d extra steps", kind, tile, tm->param);
            return 1;
        }
        if (sparse_kind(k) && tm->form == AF_BINARY) {
            tm->form = AF_SHAPED;
            say_to(note, len, "%s %s: made shaped (partial credit on the way)", kind, tile);
            return 1;
        }
    }
    float old = tm->weight;
    /* branch b multiplies by 2 + b: siblings never take the same step */
    float factor = 2.0f + (float)branch;
    tm->weight = fminf(tm->weight * factor, AUTHOR_WEIGHT_MAX);
    if (tm->weight == old) {
        say_to(note, len, "%s %s: weight already at its maximum %.4g", kind, tile, (double)old);
        return 1; /* revision and change count moved */
    }
    say_to(note, len, "%s %s: weight %.4g -> %.4g", kind, tile, (double)old, (double)tm->weight);
    return 1;
}

int author_merge(author_reward *r, double parent_fitness, const author_reward *refs, const double *ref_fitness,
                 int n_refs, char *note, int len)
{
    int taken = 0;
    size_t pos = 0;
    if (note && len > 0) note[0] = 0;
    for (int i = 0; i < r->n; i++) {
        author_term *t = &r->term[i];
        const author_term *from = NULL;
        double best = parent_fitness;
        int from_ref = -1;
        for (int k = 0; k < n_refs; k++) {
            if (!target_equal(&refs[k].target, &r->target) || !(ref_fitness[k] > best)) continue;
            for (int j = 0; j < refs[k].n; j++) {
                const author_term *u = &refs[k].term[j];
                if (u->kind == t->kind && u->tile == t->tile && u->changes > t->changes) {
                    from = u;
                    best = ref_fitness[k];
                    from_ref = k;
                    break;
                }
            }
        }
        if (!from) continue;
        t->weight = from->weight;
        t->form = from->form;
        t->param = from->param;
        t->changes = from->changes;
        taken++;
        if (note && len > 0 && pos < (size_t)len) {
            int w = snprintf(note + pos, (size_t)len - pos, "%s%s %s from reference %d", pos ? "; " : "",
                             author_term_name(t->kind), tname(t->tile), from_ref + 1);
            if (w > 0) pos += (size_t)w;
        }
    }
    if (taken) r->revision++;
    else say_to(note, len, "no reference scored above the parent with a further refined term");
    return taken;
}
