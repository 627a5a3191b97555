/* The builder's pieces and their certification (pieces.h). */
#include "pieces.h"
#include "dungeon.h"
#include "eval.h"
#include "target.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>

static const int DR[4] = {-1, 0, 1, 0}, DC[4] = {0, 1, 0, -1};
static const char *const dir_names[4] = {"north", "east", "south", "west"};

static int side_dir(int dir, int side) { return side == SIDE_LEFT ? (dir + 3) & 3 : (dir + 1) & 3; }

void lay_start(lay_t *l, int r, int c, int dir)
{
    l->n = 1;
    l->r[0] = (short)r;
    l->c[0] = (short)c;
    l->n_extra = 0;
    l->dir = dir;
}

static int lay_step(lay_t *l, int d, int times)
{
    for (int i = 0; i < times; i++) {
        if (l->n >= PCG_MAX_CELLS) return -1;
        l->r[l->n] = (short)(l->r[l->n - 1] + DR[d]);
        l->c[l->n] = (short)(l->c[l->n - 1] + DC[d]);
        l->n++;
    }
    return 0;
}

int lay_extra(lay_t *l, int r, int c, int tile)
{
    if (l->n_extra >= PCG_MAX_CELLS) return -1;
    l->er[l->n_extra] = (short)r;
    l->ec[l->n_extra] = (short)c;
    l->etile[l->n_extra] = (unsigned char)tile;
    l->n_extra++;
    return 0;
}

int piece_lay(lay_t *l, const piece_t *p)
{
    int s = side_dir(l->dir, p->side), last = l->n - 1;
    switch (p->kind) {
    case PIECE_RUN: return lay_step(l, l->dir, p->n);
    case PIECE_TURN: l->dir = s; return 0;
    case PIECE_DETOUR:
        /* out along the side, two cells on, back: the wall cell left
         * between the arms is what keeps the route from cutting across */
        if (lay_step(l, s, p->n) || lay_step(l, l->dir, 2)) return -1;
        return lay_step(l, (s + 2) & 3, p->n);
    case PIECE_ALCOVE: return lay_extra(l, l->r[last] + DR[s], l->c[last] + DC[s], p->tile);
    case PIECE_SEALED: return lay_extra(l, l->r[last] + DR[s] * p->n, l->c[last] + DC[s] * p->n, p->tile);
    default: return -1;
    }
}

static int put_cell(int side, int r, int c, int tile, int what, unsigned char *tiles, unsigned char *kind)
{
    if (r < 0 || c < 0 || r >= side || c >= side || kind[r * side + c] != LAY_WALL) return -1;
    kind[r * side + c] = (unsigned char)what;
    tiles[r * side + c] = (unsigned char)tile;
    return 0;
}

int lay_render(const lay_t *l, int side, int dr, int dc, unsigned char *tiles, unsigned char *kind)
{
    memset(tiles, TILE_WALL, (size_t)side * side);
    memset(kind, LAY_WALL, (size_t)side * side);
    for (int i = 0; i < l->n; i++)
        if (put_cell(side, l->r[i] + dr, l->c[i] + dc, i ? TILE_EMPTY : TILE_PLAYER, LAY_ROUTE, tiles, kind)) return -1;
    for (int i = 0; i < l->n_extra; i++)
        if (put_cell(side, l->er[i] + dr, l->ec[i] + dc, l->etile[i], LAY_EXTRA, tiles, kind)) return -1;
    return 0;
}

static int kind_at(const unsigned char *kind, int side, int r, int c)
{
    return r < 0 || c < 0 || r >= side || c >= side ? LAY_WALL : kind[r * side + c];
}

int lay_alcove_fits(const unsigned char *kind, int side, int r, int c)
{
    if (r < 0 || c < 0 || r >= side || c >= side || kind[r * side + c] != LAY_WALL) return 0;
    int open = 0, route = 0;
    for (int d = 0; d < 4; d++) {
        int k = kind_at(kind, side, r + DR[d], c + DC[d]);
        open += k != LAY_WALL;
        route += k == LAY_ROUTE;
    }
    return open == 1 && route == 1;
}

int lay_sealed_fits(const unsigned char *kind, int side, int r, int c)
{
    if (r < 0 || c < 0 || r >= side || c >= side || kind[r * side + c] != LAY_WALL) return 0;
    for (int d = 0; d < 4; d++)
        if (kind_at(kind, side, r + DR[d], c + DC[d]) != LAY_WALL) return 0;
    for (int y = r - 2; y <= r + 2; y++)
        for (int x = c - 2; x <= c + 2; x++)
            if (kind_at(kind, side, y, x) == LAY_ROUTE) return 0;
    return 1;
}

piece_claim_t piece_claim(const piece_t *p)
{
    piece_claim_t k = {0, 0};
    if (p->kind == PIECE_RUN) k.steps = p->n;
    else if (p->kind == PIECE_DETOUR) k.steps = 2 * p->n + 2;
    else if (p->kind == PIECE_ALCOVE) k.met = 1;
    return k;
}

void piece_describe(const piece_t *p, char *buf, int len)
{
    static const char *const names[PIECE_KINDS] = {"run", "turn", "detour", "alcove", "sealed cell"};
    const char *side = p->side == SIDE_LEFT ? "left" : "right";
    const char *name = p->kind >= 0 && p->kind < PIECE_KINDS ? names[p->kind] : "?";
    if (p->kind == PIECE_RUN) say_to(buf, len, "run of %d", p->n);
    else if (p->kind == PIECE_TURN) say_to(buf, len, "turn %s", side);
    else if (p->kind == PIECE_DETOUR) say_to(buf, len, "detour of depth %d to the %s", p->n, side);
    else if (p->kind == PIECE_ALCOVE) say_to(buf, len, "%s %s to the %s", target_tile_name(p->tile), name, side);
    else say_to(buf, len, "%s %s %d cells to the %s", target_tile_name(p->tile), name, p->n, side);
}

/* One context's walk compared with the laid cells. */
typedef struct {
    const lay_t *l;
    int side, dr, dc, key, door;
    int wrong; /* the first leg that is not the laid one, else -1 */
} walk_check_t;

static int laid_cell(const walk_check_t *w, int i) { return (w->l->r[i] + w->dr) * w->side + w->l->c[i] + w->dc; }

static int walk_leg(void *ctx, const eval_leg_t *leg)
{
    walk_check_t *w = ctx;
    int from;
    if (leg->kind == EVAL_LEG_PLAYER_KEY) from = 0;
    else if (leg->kind == EVAL_LEG_KEY_DOOR) from = w->key;
    else return 0;
    int to = leg->kind == EVAL_LEG_PLAYER_KEY ? w->key : w->door;
    int ok = leg->n == to - from + 1;
    for (int i = 0; ok && i < leg->n; i++) ok = leg->cells[i] == laid_cell(w, from + i);
    if (!ok && w->wrong < 0) w->wrong = leg->kind;
    return 0;
}

/* A context: lead-in, the piece, lead-out, key, door, laid at the origin. */
static void lay_context(lay_t *l, const piece_t *p, int dir, int *key, int *door)
{
    static const piece_t two = {PIECE_RUN, 2, 0, 0}, one = {PIECE_RUN, 1, 0, 0};
    lay_start(l, 0, 0, dir);
    piece_lay(l, &two);
    piece_lay(l, p);
    piece_lay(l, &two);
    *key = l->n - 1;
    piece_lay(l, &one);
    *door = l->n - 1;
}

static void lay_bounds(const lay_t *l, int *lo_r, int *lo_c, int *hi_r, int *hi_c)
{
    *lo_r = *lo_c = 1 << 20;
    *hi_r = *hi_c = -(1 << 20);
    for (int i = 0; i < l->n + l->n_extra; i++) {
        int r = i < l->n ? l->r[i] : l->er[i - l->n], c = i < l->n ? l->c[i] : l->ec[i - l->n];
        if (r < *lo_r) *lo_r = r;
        if (r > *hi_r) *hi_r = r;
        if (c < *lo_c) *lo_c = c;
        if (c > *hi_c) *hi_c = c;
    }
}

typedef struct {
    unsigned char tiles[PCG_MAX_CELLS], kind[PCG_MAX_CELLS];
    lay_t l;
} cert_scratch_t;

/* The placement rule of an enemy piece, read on the map without its enemy. */
static int rule_holds(cert_scratch_t *s, const piece_t *p, int side, int dr, int dc)
{
    if (p->kind != PIECE_ALCOVE && p->kind != PIECE_SEALED) return 1;
    unsigned char tiles[PCG_MAX_CELLS];
    int last = --s->l.n_extra;
    lay_render(&s->l, side, dr, dc, tiles, s->kind);
    s->l.n_extra++;
    int r = s->l.er[last] + dr, c = s->l.ec[last] + dc;
    return p->kind == PIECE_ALCOVE ? lay_alcove_fits(s->kind, side, r, c) : lay_sealed_fits(s->kind, side, r, c);
}

/* Play one context; 0 when the evaluator agrees with the claim. */
static int play_context(cert_scratch_t *s, const piece_t *p, const piece_claim_t *claim, int side,
                        int dr, int dc, int key, int door, char *why, int len)
{
    lay_t *l = &s->l;
    if (lay_render(l, side, dr, dc, s->tiles, s->kind)) return say_to(why, len, "its cells overlap"), -1;
    s->tiles[(l->r[key] + dr) * side + l->c[key] + dc] = TILE_KEY;
    s->tiles[(l->r[door] + dr) * side + l->c[door] + dc] = TILE_DOOR;
    int enemy = p->kind == PIECE_ALCOVE || p->kind == PIECE_SEALED;
    target_t t;
    target_encounter(&t, enemy && p->tile == TILE_BAT, enemy && p->tile == TILE_SCORPION,
                     enemy && p->tile == TILE_SPIDER);
    eval_scenario_t sc;
    target_to_scenario(&t, "", &sc);
    level_t lv = {side, side, s->tiles};
    eval_level_t m;
    eval_level(&sc, &lv, &m);
    walk_check_t w = {l, side, dr, dc, key, door, -1};
    eval_routes(&sc, &lv, walk_leg, &w);
    int met = enemy ? m.met[p->tile - TILE_BAT] : 0;
    if (m.solutions != 1) say_to(why, len, "the evaluator finds %d solutions, not one", m.solutions);
    else if (m.route_key != 4 + claim->steps)
        say_to(why, len, "claims %d steps, the evaluator measures %d", claim->steps, m.route_key - 4);
    else if (m.route_door != 1) say_to(why, len, "it changes the next leg to %d steps", m.route_door);
    else if (w.wrong >= 0) say_to(why, len, "the evaluator's %s path is not the laid route", eval_leg_name(w.wrong));
    else if (met != claim->met)
        say_to(why, len, "claims its enemy is %s, the evaluator %s it", claim->met ? "met" : "not met",
               met ? "meets" : "does not meet");
    else if (!rule_holds(s, p, side, dr, dc)) say_to(why, len, "its cell breaks the builder's placement rule");
    else return 0;
    return -1;
}

int piece_certify(const piece_t *p, const piece_claim_t *claim, int side, char *reason, int len)
{
    cert_scratch_t *s = malloc(sizeof *s);
    if (!s) return say_to(reason, len, "out of memory"), -1;
    int played = 0, rc = 0;
    char name[96], why[160];
    piece_describe(p, name, sizeof name);
    for (int dir = 0; dir < 4 && rc == 0; dir++)
        for (int end = 0; end < 2 && rc == 0; end++) {
            int key, door, lo_r, lo_c, hi_r, hi_c;
            lay_context(&s->l, p, dir, &key, &door);
            lay_bounds(&s->l, &lo_r, &lo_c, &hi_r, &hi_c);
            if (hi_r - lo_r >= side || hi_c - lo_c >= side) continue; /* this heading does not fit */
            int dr = end ? side - 1 - hi_r : -lo_r, dc = end ? side - 1 - hi_c : -lo_c;
            if (play_context(s, p, claim, side, dr, dc, key, door, why, sizeof why)) {
                say_to(reason, len, "%s, heading %s from row %d col %d on a %dx%d map: %s", name, dir_names[dir],
                       dr, dc, side, side, why);
                rc = -1;
            } else played++;
        }
    free(s);
    if (rc == 0 && played < 4) {
        say_to(reason, len, "%s fits in only %d of the contexts on a %dx%d map", name, played, side, side);
        rc = -1;
    }
    return rc ? -1 : played;
}

static int certify_own(const piece_t *p, int side, int *count, char *reason, int len)
{
    piece_claim_t k = piece_claim(p);
    if (piece_certify(p, &k, side, reason, len) < 0) return -1;
    (*count)++;
    return 0;
}

/* The pieces of one side of the route: detours of every depth, and the
 * enemy pieces of each enemy. */
static int certify_side(int side, int cert_side, int s, int *count, char *reason, int len)
{
    piece_t turn = {PIECE_TURN, 0, s, 0};
    if (certify_own(&turn, cert_side, count, reason, len)) return -1;
    for (int d = 1; d <= side - 2; d++) {
        piece_t p = {PIECE_DETOUR, d, s, 0};
        if (certify_own(&p, cert_side, count, reason, len)) return -1;
    }
    for (int e = TILE_BAT; e <= TILE_SPIDER; e++) {
        piece_t alcove = {PIECE_ALCOVE, 1, s, e}, sealed = {PIECE_SEALED, 3, s, e};
        if (certify_own(&alcove, cert_side, count, reason, len) || certify_own(&sealed, cert_side, count, reason, len))
            return -1;
    }
    return 0;
}

int pieces_certify_all(int side, char *reason, int len)
{
    static int certified[PCG_MAX_SIDE + 1];
    if (side < 1 || side > PCG_MAX_SIDE) return say_to(reason, len, "no map of side %d", side), -1;
    if (certified[side]) return certified[side];
    /* contexts need room for the lead-in and lead-out around a piece */
    int cert_side = side < PCG_DEFAULT_SIDE ? PCG_DEFAULT_SIDE : side, count = 0;
    for (int n = 1; n <= 2; n++) {
        piece_t run = {PIECE_RUN, n, 0, 0};
        if (certify_own(&run, cert_side, &count, reason, len)) return -1;
    }
    for (int s = SIDE_LEFT; s <= SIDE_RIGHT; s++)
        if (certify_side(side, cert_side, s, &count, reason, len)) return -1;
    certified[side] = count;
    return count;
}
