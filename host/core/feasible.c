/* Feasibility of path-length targets and validity of levels (feasible.h). */
#include "feasible.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>

void target_map_default(target_map_t *m, int h, int w)
{
    m->h = h;
    m->w = w;
    m->player = 1 * w + 1;
    m->door = (h - 2) * w + (w - 2);
}

int target_map_of_level(const level_t *l, target_map_t *m, char *reason, int len)
{
    m->h = l->h;
    m->w = l->w;
    m->player = lv_first(l, TILE_PLAYER);
    m->door = lv_first(l, TILE_DOOR);
    if (m->player < 0 || m->door < 0) {
        say_to(reason, len, "the level has no %s", m->player < 0 ? "PLAYER" : "DOOR");
        return -1;
    }
    return 0;
}

static int manhattan(const target_map_t *m, int a, int b)
{
    return abs(a / m->w - b / m->w) + abs(a % m->w - b % m->w);
}

/* Some key cell k (not the player's or the door's) is as close as a and b
 * allow and of their parities: a shortest path of length a from the player
 * to k exists on some level only if manhattan(player, k) <= a with the
 * same parity, and likewise for k -> door. */
static int legs_possible(const target_map_t *m, int a, int b)
{
    for (int k = 0; k < m->h * m->w; k++) {
        if (k == m->player || k == m->door) continue;
        int pk = manhattan(m, m->player, k), kd = manhattan(m, k, m->door);
        if (pk <= a && (a - pk) % 2 == 0 && kd <= b && (b - kd) % 2 == 0) return 1;
    }
    return 0;
}

/* Each leg is a shortest path: at most cells - 1 steps. */
static int leg_max(const target_map_t *m) { return m->h * m->w - 1; }

static int max_int(int a, int b) { return a > b ? a : b; }
static int min_int(int a, int b) { return a < b ? a : b; }

static int two_legs_feasible(const target_t *t, const target_map_t *m)
{
    int T = t->tolerance, top = leg_max(m);
    for (int a = max_int(t->leg_key - T, 1); a <= min_int(t->leg_key + T, top); a++)
        for (int b = max_int(t->leg_door - T, 1); b <= min_int(t->leg_door + T, top); b++)
            if (legs_possible(m, a, b)) return 1;
    return 0;
}

static int total_feasible(const target_t *t, const target_map_t *m)
{
    int d = manhattan(m, m->player, m->door), top = leg_max(m);
    for (int L = max_int(t->length - t->tolerance, d); L <= min_int(t->length + t->tolerance, 2 * top); L++) {
        if ((L - d) % 2) continue; /* every route has the parity of d */
        for (int a = max_int(L - top, 1); a < L && a <= top; a++)
            if (legs_possible(m, a, L - a)) return 1;
    }
    return 0;
}

/* Why no (a, b) in the target's box works, by the first bound it breaks. */
static void infeasible_reason(const target_t *t, const target_map_t *m, char *reason, int len)
{
    int d = manhattan(m, m->player, m->door), T = t->tolerance;
    int two = target_is_two_leg(t);
    int lo = two ? t->leg_key + t->leg_door - 2 * T : t->length - T;
    int hi = two ? t->leg_key + t->leg_door + 2 * T : t->length + T;
    if (two && (t->leg_key - T > leg_max(m) || t->leg_door - T > leg_max(m)))
        say_to(reason, len, "no leg can be longer than %d steps on a %dx%d map (a shortest path visits each cell once)",
            leg_max(m), m->h, m->w);
    else if (!two && lo > 2 * leg_max(m))
        say_to(reason, len, "no route can be longer than %d steps on a %dx%d map (each leg visits each cell once)",
            2 * leg_max(m), m->h, m->w);
    else if (hi < d)
        say_to(reason, len, "every route on this map is at least %d steps (the player and the door are %d apart); "
                            "asked %d%s", d, d, two ? t->leg_key + t->leg_door : t->length, T ? " give or take" : "");
    else if (lo == hi && (lo - d) % 2)
        say_to(reason, len, "every route on this map has %s length (the player and the door are %d steps apart); "
                            "asked exactly %d", d % 2 ? "an odd" : "an even", d, lo);
    else
        say_to(reason, len, "no key cell on this map is at those distances from the player and the door");
}

int target_feasible(const target_t *t, const target_map_t *m, char *reason, int len)
{
    if (target_validate(t, reason, len)) return -1;
    if (t->kind != TARGET_PATHLENGTH) return 0;
    if (t->enemy_count > m->h * m->w - 3) {
        say_to(reason, len, "%d enemies do not fit on a %dx%d map beside the player, the key and the door",
            t->enemy_count, m->h, m->w);
        return -1;
    }
    if (target_is_two_leg(t) ? two_legs_feasible(t, m) : total_feasible(t, m)) return 0;
    infeasible_reason(t, m, reason, len);
    return -1;
}

int target_level_valid(const target_t *t, const level_t *l, char *reason, int len)
{
    static const int once[3] = {TILE_PLAYER, TILE_DOOR, TILE_KEY};
    for (int i = 0; i < 3; i++) {
        int n = lv_count(l, once[i]);
        if (n != 1) {
            say_to(reason, len, "the level has %d %s tiles, not one", n, target_tile_name(once[i]));
            return -1;
        }
    }
    int enemies = lv_count(l, TILE_BAT) + lv_count(l, TILE_SCORPION) + lv_count(l, TILE_SPIDER);
    if (t->enemy_count && enemies != t->enemy_count) {
        say_to(reason, len, "the level has %d enemies, not %d", enemies, t->enemy_count);
        return -1;
    }
    int regions = lv_regions(l);
    if (regions != 1) {
        say_to(reason, len, "the open cells form %d separate regions, not one", regions);
        return -1;
    }
    return 0;
}
