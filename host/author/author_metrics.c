/* Failure counts of generated levels against a target, through the
 * evaluator: what the offline author's feedback names (author_offline.h). */
#include "author_offline.h"
#include "eval.h"
#include "level.h"
#include <string.h>

/* A key-door level: solved, or the first step of Player -> gate -> Door ->
 * Treasure that fails. */
static void count_keydoor(const target_t *t, const level_t *l, const eval_level_t *ev, author_metrics *m)
{
    if (ev->playable) {
        m->solved++;
        return;
    }
    if (!ev->counts[t->gate]) {
        m->no_gate++;
        return;
    }
    if (!ev->counts[TILE_DOOR]) {
        m->no_door++;
        return;
    }
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    int cells = l->h * l->w, player = lv_first(l, TILE_PLAYER);
    /* gates reachable with doors blocking; from them, a door */
    lv_bfs_rows(l, player, PCG_BLOCK_DEFAULT | (1u << TILE_DOOR), -1, -1, dist, queue);
    int reach = 0, to_door = 0;
    for (int c = 0; c < cells; c++) {
        if (l->t[c] != t->gate || c == player || dist[c] < 0) continue;
        reach = 1;
        if (lv_nearest(l, c / l->w, c % l->w, TILE_DOOR) >= 0) to_door = 1;
    }
    int treasure = lv_first(l, TILE_TREASURE);
    if (!reach) m->gate_unreached++;
    else if (!to_door) m->gate_no_door++;
    else if (ev->player_treasure < 0) m->treasure_unreached++;
    else if (dist[treasure] >= 0) m->door_not_separating++;
    else m->gate_unreached++; /* not reached: counted with the gate */
}

/* A level with a solution Player -> Key -> Door: its route length, or the
 * enemies met on it. */
static void count_solved(const target_t *t, const eval_level_t *ev, author_metrics *m)
{
    m->solved++;
    if (t->kind == TARGET_PATHLENGTH && target_is_two_leg(t)) {
        m->key_short += ev->route_key < t->leg_key - t->tolerance;
        m->key_long += ev->route_key > t->leg_key + t->tolerance;
        m->door_short += ev->route_door < t->leg_door - t->tolerance;
        m->door_long += ev->route_door > t->leg_door + t->tolerance;
        if (ev->score < 1.0) {
            if (ev->route < t->length - t->tolerance) m->route_short++;
            else m->route_long++;
        }
        return;
    }
    if (t->kind == TARGET_PATHLENGTH) {
        if (ev->score < 1.0) {
            if (ev->route < t->length - t->tolerance) m->route_short++;
            else m->route_long++;
        }
        return;
    }
    for (int e = 0; e < TARGET_N_ENEMIES; e++) {
        m->met[e] += ev->met[e] != 0;
        m->present[e] += ev->counts[TILE_BAT + e] > 0;
    }
}

/* A level with no solution Player -> Key -> Door: why not. */
static void count_unsolved(const level_t *l, const eval_level_t *ev, author_metrics *m)
{
    if (!ev->counts[TILE_KEY]) {
        m->no_key++;
        return;
    }
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    int cells = l->h * l->w, player = lv_first(l, TILE_PLAYER);
    lv_bfs_rows(l, player, PCG_BLOCK_DEFAULT, -1, -1, dist, queue);
    short dist_d[PCG_MAX_CELLS];
    int door = lv_first(l, TILE_DOOR);
    lv_bfs_rows(l, door, PCG_BLOCK_DEFAULT, -1, -1, dist_d, queue);
    int reach = 0, to_door = 0;
    for (int c = 0; c < cells; c++) {
        if (l->t[c] != TILE_KEY || dist[c] <= 0) continue;
        reach = 1;
        if (dist_d[c] > 0) to_door = 1;
    }
    if (!reach) m->key_unreached++;
    else if (!to_door) m->door_unreached++;
    else m->blocked_by_keys++;
}

void author_metrics_compute(const target_t *t, const level_t *levels, int n, author_metrics *m)
{
    memset(m, 0, sizeof *m);
    m->n = n;
    eval_scenario_t sc;
    target_to_scenario(t, NULL, &sc);
    double total = 0;
    for (int i = 0; i < n; i++) {
        const level_t *l = &levels[i];
        eval_level_t ev;
        eval_level(&sc, l, &ev);
        total += ev.score;
        if (ev.missing) m->missing++;
        else if (t->kind == TARGET_KEYDOOR) count_keydoor(t, l, &ev, m);
        else if (ev.solutions > 0) count_solved(t, &ev, m);
        else count_unsolved(l, &ev, m);
    }
    m->fitness = n > 0 ? total / n : 0;
}
