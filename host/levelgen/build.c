/* The deterministic level builder (build.h). */
#include "build.h"
#include "dungeon.h"
#include "feasible.h"
#include "pieces.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>

/* The detour slots by position along an arm (the column on the top row,
 * the row on the far column).  Slots on one side are four apart and the
 * two sides of the far column alternate, so no two detours touch. */
static int north_slot(int n, int c) { return c % 4 == 1 && c + 2 <= n - 2; }
static int east_slot(int n, int r) { return r % 4 == 1 && r + 2 <= n - 2; }
static int west_slot(int n, int r) { return r % 4 == 3 && r + 2 <= n - 2; }

/* Detour depth per slot, 0 for a straight stretch. */
typedef struct {
    unsigned char north[PCG_MAX_SIDE], east[PCG_MAX_SIDE], west[PCG_MAX_SIDE];
} plan_t;

typedef struct {
    lay_t l;
    unsigned char can[PCG_MAX_CELLS], kind[PCG_MAX_CELLS]; /* the map before it is turned to its corner */
    plan_t plan;
} build_scratch_t;

/* The straight route: the player and the door are this far apart. */
static int base_route(int n) { return 2 * (n - 3); }

static int deep_max(int n) { return n - 2; } /* a west detour from the far column to the map's edge */

/* Pairs of steps the slots can add. */
static int slots_capacity(int n)
{
    int cap = 0;
    for (int i = 1; i < n - 2; i++) cap += west_slot(n, i) * deep_max(n) + east_slot(n, i) + north_slot(n, i);
    return cap;
}

int build_route_max(int side)
{
    if (side < BUILD_SIDE_MIN || side > PCG_MAX_SIDE) return -1;
    return base_route(side) + 2 * slots_capacity(side);
}

static int fill_slots(int n, int (*slot)(int, int), int depth, unsigned char *out, int *extra)
{
    for (int i = 1; i < n - 2 && *extra > 0; i++) {
        if (!slot(n, i)) continue;
        int d = *extra < depth ? *extra : depth;
        out[i] = (unsigned char)d;
        *extra -= d;
    }
    return *extra;
}

/* Detours adding `extra` pairs of steps: the deep slots first, then the
 * one-cell ones.  -1 when the slots cannot hold that many. */
static int plan_extra(int n, int extra, plan_t *p)
{
    memset(p, 0, sizeof *p);
    fill_slots(n, west_slot, deep_max(n), p->west, &extra);
    fill_slots(n, east_slot, 1, p->east, &extra);
    return fill_slots(n, north_slot, 1, p->north, &extra) ? -1 : 0;
}

/* One arm of the corridor, from position 1 to n - 2. */
static int lay_arm(lay_t *l, int n, const unsigned char *left, const unsigned char *right)
{
    for (int pos = 1; pos < n - 2;) {
        piece_t p = {PIECE_RUN, 1, 0, 0};
        if (left && left[pos]) p = (piece_t){PIECE_DETOUR, left[pos], SIDE_LEFT, 0};
        else if (right && right[pos]) p = (piece_t){PIECE_DETOUR, right[pos], SIDE_RIGHT, 0};
        if (piece_lay(l, &p)) return -1;
        pos += p.kind == PIECE_DETOUR ? 2 : 1;
    }
    return 0;
}

/* The corridor from (1,1) east, then south to (n-2, n-2). */
static int lay_plan(lay_t *l, int n, const plan_t *p)
{
    static const piece_t turn = {PIECE_TURN, 0, SIDE_RIGHT, 0};
    lay_start(l, 1, 1, DIR_E);
    if (lay_arm(l, n, p->north, NULL) || piece_lay(l, &turn) || lay_arm(l, n, p->east, p->west)) return -1;
    return l->r[l->n - 1] == n - 2 && l->c[l->n - 1] == n - 2 ? 0 : -1;
}

/* Legs a + b the corridor can take: each at least a step, the sum the
 * straight route plus what the slots add. */
static int legs_fit(int n, int longest, int a, int b)
{
    int sum = a + b;
    return a >= 1 && b >= 1 && sum >= base_route(n) && sum <= longest && (sum - base_route(n)) % 2 == 0;
}

/* The legs within the tolerance closest to the wanted ones (exact first).
 * Returns how far off they are (0: exact), -1 when none fits. */
static int choose_legs(const target_t *t, int n, int *a, int *b)
{
    int T = t->tolerance, best = -1, longest = build_route_max(n);
    if (!target_is_two_leg(t)) {
        for (int d = 0; d <= T && best < 0; d++)
            for (int sign = -1; sign <= 1 && best < 0; sign += 2) {
                int sum = t->length + sign * d;
                if (legs_fit(n, longest, sum / 2, sum - sum / 2)) *a = sum / 2, *b = sum - sum / 2, best = d;
            }
        return best;
    }
    for (int da = -T; da <= T; da++)
        for (int db = -T; db <= T; db++) {
            /* fewest steps off in all, then the more even split of them */
            int cost = (abs(da) + abs(db)) * 4096 + (abs(da) > abs(db) ? abs(da) : abs(db));
            if ((best < 0 || cost < best) && legs_fit(n, longest, t->leg_key + da, t->leg_door + db))
                *a = t->leg_key + da, *b = t->leg_door + db, best = cost;
        }
    return best;
}

static void unbuildable_reason(const target_t *t, int n, char *reason, int len)
{
    int lo = target_is_two_leg(t) ? t->leg_key + t->leg_door - 2 * t->tolerance : t->length - t->tolerance;
    if (lo > build_route_max(n))
        say_to(reason, len, "unsupported: the builder's longest route on a %dx%d map is %d steps; the target asks at "
                            "least %d", n, n, build_route_max(n), lo);
    else say_to(reason, len, "unsupported: no legs within the tolerance make a route the builder can lay");
}

/* Put count enemies in cells that meet a placement rule, scanning from a
 * cell the seed picks.  Returns how many found a cell. */
static int place_enemies(build_scratch_t *s, int n, int count, int tile, int sealed, uint64_t seed)
{
    int cells = n * n, start = (int)(seed % (uint64_t)cells), placed = 0;
    for (int i = 0; i < cells && placed < count; i++) {
        int cell = (start + i) % cells, r = cell / n, c = cell % n;
        int fits = sealed ? lay_sealed_fits(s->kind, n, r, c) : lay_alcove_fits(s->kind, n, r, c);
        if (!fits || lay_extra(&s->l, r, c, tile ? tile : TILE_BAT + placed % 3)) continue;
        s->kind[cell] = LAY_EXTRA;
        placed++;
    }
    return placed;
}

/* The enemies of t: a path-length target's count in alcoves (enemies play
 * no part in its legs); an encounter's wanted enemies in alcoves, the others
 * sealed.  0, or -1 and the reason. */
static int place_target_enemies(build_scratch_t *s, const target_t *t, int n, uint64_t seed, char *reason, int len)
{
    if (t->kind == TARGET_PATHLENGTH && t->enemy_count) {
        int got = place_enemies(s, n, t->enemy_count, 0, 0, seed);
        if (got < t->enemy_count) {
            say_to(reason, len, "unsupported: only %d enemies fit in alcoves beside a route of %d steps; the target "
                                "asks %d", got, s->l.n - 1, t->enemy_count);
            return -1;
        }
    }
    if (t->kind != TARGET_ENCOUNTER) return 0;
    for (int e = 0; e < TARGET_N_ENEMIES; e++) {
        int sealed = !t->enemies[e];
        if (place_enemies(s, n, 1, TILE_BAT + e, sealed, seed) == 1) continue;
        say_to(reason, len, "unsupported: no cell on a %dx%d map %s for the %s", n, n,
               sealed ? "is three cells from the route" : "beside the route is a dead end",
               target_tile_name(TILE_BAT + e));
        return -1;
    }
    return 0;
}

/* The route's tiles: the key at the end of the first leg and the door at
 * the end; for a key-door target the gate, the door and the treasure. */
static void place_route_tiles(build_scratch_t *s, const target_t *t, int n, int leg_key)
{
    const lay_t *l = &s->l;
    int last = l->n - 1;
#define ROUTE_CELL(i) (l->r[i] * n + l->c[i])
    if (t->kind == TARGET_KEYDOOR) {
        s->can[ROUTE_CELL(last / 3)] = (unsigned char)t->gate;
        s->can[ROUTE_CELL(2 * last / 3)] = TILE_DOOR;
        s->can[ROUTE_CELL(last)] = TILE_TREASURE;
    } else {
        s->can[ROUTE_CELL(leg_key)] = TILE_KEY;
        s->can[ROUTE_CELL(last)] = TILE_DOOR;
    }
#undef ROUTE_CELL
}

/* The canonical map (player at (1,1)) turned so the player sits in corner k. */
static void to_corner(const unsigned char *can, int n, int corner, unsigned char *out)
{
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) {
            int rr = corner >= 2 ? n - 1 - r : r, cc = corner == 1 || corner == 2 ? n - 1 - c : c;
            out[rr * n + cc] = can[r * n + c];
        }
}

static int verify(const target_t *t, build_result_t *o, int exact, char *reason, int len)
{
    char why[256];
    target_to_scenario(t, "", &o->scenario);
    eval_level(&o->scenario, &o->level, &o->eval);
    if (t->kind == TARGET_PATHLENGTH && target_level_valid(t, &o->level, why, sizeof why)) {
        say_to(reason, len, "the built level is not valid: %s", why);
        return BUILD_FAILED;
    }
    o->perfect = t->kind == TARGET_PATHLENGTH ? o->eval.perfect : o->eval.score == 1.0;
    if (o->eval.score != 1.0 || (exact && !o->perfect)) {
        say_to(reason, len, "the built level scores %.3f (legs %d + %d)%s", o->eval.score, o->eval.route_key,
               o->eval.route_door, exact && !o->perfect ? ", not the exact legs laid" : "");
        return BUILD_FAILED;
    }
    return BUILD_OK;
}

/* Lay, furnish and verify; t is feasible and the pieces certified. */
static int build_certified(build_scratch_t *s, const target_t *t, int n, uint64_t seed, build_result_t *out,
                           char *reason, int len)
{
    int a = base_route(n) / 2, b = base_route(n) - a, off = 0;
    if (t->kind == TARGET_PATHLENGTH && (off = choose_legs(t, n, &a, &b)) < 0) {
        unbuildable_reason(t, n, reason, len);
        return BUILD_REFUSED;
    }
    if (plan_extra(n, (a + b - base_route(n)) / 2, &s->plan) || lay_plan(&s->l, n, &s->plan) ||
        lay_render(&s->l, n, 0, 0, s->can, s->kind)) {
        say_to(reason, len, "the corridor of %d steps does not fit the %dx%d map", a + b, n, n);
        return BUILD_FAILED;
    }
    if (place_target_enemies(s, t, n, seed >> 2, reason, len)) return BUILD_REFUSED;
    lay_render(&s->l, n, 0, 0, s->can, s->kind);
    place_route_tiles(s, t, n, a);
    out->leg_key = a;
    out->leg_door = b;
    to_corner(s->can, n, out->corner, out->tiles);
    return verify(t, out, t->kind == TARGET_PATHLENGTH && off == 0, reason, len);
}

int build_level(const target_t *t, int side, uint64_t seed, build_result_t *out, char *reason, int len)
{
    char why[512];
    memset(out, 0, sizeof *out);
    if (side < BUILD_SIDE_MIN || side > PCG_MAX_SIDE) {
        say_to(reason, len, "the builder takes sides %d..%d, not %d", BUILD_SIDE_MIN, PCG_MAX_SIDE, side);
        return BUILD_REFUSED;
    }
    target_map_t m;
    target_map_default(&m, side, side);
    if (target_feasible(t, &m, why, sizeof why)) {
        say_to(reason, len, "%s", why);
        return BUILD_REFUSED;
    }
    out->pieces = pieces_certify_all(side, why, sizeof why);
    if (out->pieces < 0) {
        say_to(reason, len, "a piece fails its certification: %s", why);
        return BUILD_FAILED;
    }
    out->side = side;
    out->corner = (int)(seed & 3);
    out->level = (level_t){side, side, out->tiles};
    build_scratch_t *s = malloc(sizeof *s);
    if (!s) return say_to(reason, len, "out of memory"), BUILD_FAILED;
    int rc = build_certified(s, t, side, seed, out, reason, len);
    free(s);
    return rc;
}
