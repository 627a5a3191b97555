/* The evaluator of SPEC §5.  Every search is a BFS of the level core
 * (host/level.h) on stack scratch: no allocation per level. */
#include "eval.h"
#include "dungeon.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const eval_scenario_t scenarios[] = {
    {1,
     "The 'Player' needs to obtain the Key and escape through the 'Door'. To pick up the key, the player must "
     "encounter one of monsters: BAT.",
     "Player -> Bat -> Key -> Door", VARIANT_DUNGEON, EVAL_ENCOUNTER, {1, 0, 0}, 0, 0, 0},
    {2,
     "The 'Player' needs to obtain the Key and escape through the 'Door'. To pick up the key, the player must "
     "encounter both of monsters: BAT, SCORPION.",
     "Player -> Bat & Scorpion -> Key -> Door", VARIANT_DUNGEON, EVAL_ENCOUNTER, {1, 1, 0}, 0, 0, 0},
    {3, "The player must pick up the KEY to unlock the door and discover the treasure inside.",
     "Player -> Key -> Door -> Treasure", VARIANT_TREASURE, EVAL_KEYDOOR, {0, 0, 0}, TILE_KEY, 0, 0},
    {4, "The BAT holds the key, and only by defeating it can the player open the door and reach the treasure.",
     "Player -> Bat -> Door -> Treasure", VARIANT_TREASURE, EVAL_KEYDOOR, {0, 0, 0}, TILE_BAT, 0, 0},
};

int eval_n_scenarios(void)
{
    return (int)(sizeof scenarios / sizeof scenarios[0]);
}

const eval_scenario_t *eval_scenario(int number)
{
    return number >= 1 && number <= eval_n_scenarios() ? &scenarios[number - 1] : NULL;
}

static int is_enemy(int tile)
{
    return tile == TILE_BAT || tile == TILE_SCORPION || tile == TILE_SPIDER;
}

/* Bit e of near[c]: an enemy of type e lies within Chebyshev distance 2 of
 * cell c (the 5x5 window of SPEC §5). */
static void enemy_windows(const level_t *l, unsigned char *near)
{
    const int h = l->h, w = l->w;
    memset(near, 0, (size_t)(h * w));
    for (int i = 0; i < h * w; i++) {
        int t = l->t[i];
        if (!is_enemy(t)) continue;
        int r = i / w, c = i % w;
        unsigned char bit = (unsigned char)(1u << (t - TILE_BAT));
        for (int nr = r - 2 > 0 ? r - 2 : 0; nr <= r + 2 && nr < h; nr++)
            for (int nc = c - 2 > 0 ? c - 2 : 0; nc <= c + 2 && nc < w; nc++) near[nr * w + nc] |= bit;
    }
}

/* Scenarios 1-2 (SPEC §5 steps 1-4), and path-length targets, which score
 * the length of the same shortest solution route instead of the enemies.
 *
 * Two shortcuts keep this at a few searches per level, both exact:
 * - d2 comes from one BFS from the door (distances are symmetric).
 * - d1' and the key-avoiding path come from one BFS with every KEY blocking
 *   instead of one per key with that key allowed: cells closer than d1'
 *   have the same distance in both searches (passing k cannot shorten a
 *   path to a cell nearer than k), so d1' = 1 + the least distance of k's
 *   neighbours, and rebuilding the path from k reads only those cells.
 * tests/test_eval.c checks both against the one-search-per-key reading. */
static void eval_encounter(const eval_scenario_t *s, const level_t *l, eval_level_t *m)
{
    short dist_p[PCG_MAX_CELLS], dist_d[PCG_MAX_CELLS], dist_b[PCG_MAX_CELLS], dist[PCG_MAX_CELLS];
    short queue[PCG_MAX_CELLS], path[PCG_MAX_CELLS];
    unsigned char near[PCG_MAX_CELLS];
    const int h = l->h, w = l->w, cells = h * w;
    const unsigned all_met = (1u << EVAL_N_ENEMIES) - 1;

    int player = lv_first(l, TILE_PLAYER), door = lv_first(l, TILE_DOOR);
    if (player < 0) {
        m->missing = TILE_PLAYER;
        return;
    }
    if (door < 0) {
        m->missing = TILE_DOOR;
        return;
    }
    lv_bfs(l, player, PCG_BLOCK_DEFAULT, -1, dist_p, queue);
    m->player_door = dist_p[door];
    m->playable = m->player_door > 0;
    /* d1 > 0 and d2 > 0 put player, key and door in one region: without a
     * player-door path no key can give a solution. */
    if (m->player_door < 0) return;
    lv_bfs(l, door, PCG_BLOCK_DEFAULT, -1, dist_d, queue);
    int searched = 0;
    unsigned met = 0;
    for (int k = 0; k < cells; k++) {
        if (l->t[k] != TILE_KEY) continue;
        int d1 = dist_p[k], d2 = dist_d[k];
        if (d1 <= 0 || d2 <= 0) continue;
        if (!searched) {
            lv_bfs(l, player, PCG_BLOCK_DEFAULT | (1u << TILE_KEY), -1, dist_b, queue);
            enemy_windows(l, near);
            searched = 1;
        }
        /* d1': every other KEY blocks, k is entered from its nearest neighbour */
        int r = k / w, c = k % w, best = -1;
        for (int q = 0; q < 4; q++) {
            int nr = r + PCG_DR(q), nc = c + PCG_DC(q);
            if (nr < 0 || nc < 0 || nr >= h || nc >= w) continue;
            int d = dist_b[nr * w + nc];
            if (d >= 0 && (best < 0 || d < best)) best = d;
        }
        if (best < 0 || best + 1 != d1) continue;
        m->solutions++;
        if (m->route < 0 || d1 + d2 < m->route) m->route = d1 + d2;
        if (met == all_met || s->kind == EVAL_PATHLENGTH) continue; /* nothing to add to p */
        /* the key-avoiding route player -> k, rebuilt from k */
        dist_b[k] = (short)d1;
        int n = lv_path(l, dist_b, k, path);
        dist_b[k] = -1;
        for (int i = 0; i < n; i++) met |= near[path[i]];
        if (met == all_met) continue;
        /* k -> door with only walls blocking, rebuilt from the door */
        lv_bfs(l, k, PCG_BLOCK_DEFAULT, -1, dist, queue);
        n = lv_path(l, dist, door, path);
        for (int i = 0; i < n; i++) met |= near[path[i]];
    }
    if (m->solutions == 0) return;
    if (s->kind == EVAL_PATHLENGTH) {
        m->score = eval_route_score(m->route, s->length, s->tolerance);
        return;
    }
    int match = 0;
    for (int e = 0; e < EVAL_N_ENEMIES; e++) {
        m->met[e] = (met >> e) & 1u;
        match += m->met[e] == (s->enemies[e] != 0);
    }
    m->score = match / 3.0;
}

/* Scenarios 3-4: Player -> G -> Door -> Treasure.  Every G reachable from
 * the player with doors blocking lies in the player's sealed region, so a
 * DOOR reachable from one of them is reachable from all: one search from
 * the nearest G decides for every G. */
static void eval_keydoor(const eval_scenario_t *s, const level_t *l, eval_level_t *m)
{
    short dist_sealed[PCG_MAX_CELLS], dist_open[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    const int w = l->w, cells = l->h * l->w;
    int player = lv_first(l, TILE_PLAYER), treasure = lv_first(l, TILE_TREASURE);
    if (player < 0) {
        m->missing = TILE_PLAYER;
        return;
    }
    /* the nearest DOOR from the player, walls blocking: the first door in BFS order */
    int reached = lv_bfs(l, player, PCG_BLOCK_DEFAULT, -1, dist_open, queue);
    for (int i = 0; i < reached; i++)
        if (l->t[queue[i]] == TILE_DOOR) {
            m->player_door = dist_open[queue[i]];
            break;
        }
    if (treasure < 0) {
        m->missing = TILE_TREASURE;
        return;
    }
    m->player_treasure = dist_open[treasure];
    lv_bfs(l, player, PCG_BLOCK_DEFAULT | (1u << TILE_DOOR), -1, dist_sealed, queue);
    int gates = 0, nearest = -1;
    for (int g = 0; g < cells; g++) {
        if (l->t[g] != s->gate || g == player || dist_sealed[g] < 0) continue;
        gates++;
        if (nearest < 0 || dist_sealed[g] < dist_sealed[nearest]) nearest = g;
    }
    if (nearest >= 0) {
        /* some DOOR reachable from G; the nearest door's distance is the same
         * whether other doors block or not (a shortest path to the nearest
         * door passes no other door) */
        int gd = lv_nearest(l, nearest / w, nearest % w, TILE_DOOR);
        if (gd >= 0) {
            m->player_gate = dist_sealed[nearest];
            m->gate_door = gd;
        } else gates = 0;
    }
    m->playable = dist_sealed[treasure] < 0 && gates > 0 && m->player_treasure >= 0;
    m->solutions = m->playable ? gates : 0;
    m->score = m->playable ? 1.0 : 0.0;
}

double eval_route_score(int route, int length, int tolerance)
{
    if (route < 0 || length <= 0) return 0.0;
    int off = abs(route - length) - (tolerance > 0 ? tolerance : 0);
    if (off <= 0) return 1.0;
    double s = 1.0 - (double)off / length;
    return s > 0 ? s : 0.0;
}

void eval_level(const eval_scenario_t *s, const level_t *l, eval_level_t *m)
{
    memset(m, 0, sizeof *m);
    m->player_door = m->route = m->player_gate = m->gate_door = m->player_treasure = -1;
    int cells = l->h * l->w;
    if (l->h <= 0 || l->w <= 0 || cells > PCG_MAX_CELLS) return;
    for (int i = 0; i < cells; i++)
        if (l->t[i] < N_TILES) m->counts[l->t[i]]++;
    for (int t = 0; t < N_TILES; t++) {
        if (!m->counts[t]) continue;
        double p = (double)m->counts[t] / cells;
        m->entropy -= p * log2(p);
    }
    m->entropy = fabs(m->entropy); /* no -0 for a one-tile level */
    m->wall_share = (double)m->counts[TILE_WALL] / cells;
    if (s->kind == EVAL_KEYDOOR) eval_keydoor(s, l, m);
    else eval_encounter(s, l, m);
}

double eval_score_batch(const eval_scenario_t *s, const level_t *levels, int n, float *scores)
{
    double total = 0;
#pragma omp parallel for schedule(dynamic, 8) reduction(+ : total) if (n >= 32)
    for (int i = 0; i < n; i++) {
        eval_level_t m;
        eval_level(s, &levels[i], &m);
        if (scores) scores[i] = (float)m.score;
        total += m.score;
    }
    return n > 0 ? total / n : 0.0;
}

/* Sum over pairs of the Hamming distance (and of its share of the cells)
 * by counting, per cell, the pairs of same-size levels holding the same
 * tile: O(n * cells) instead of O(n^2 * cells). */
static int diversity_sums(const level_t *lv, int n, double *sum_cells, double *sum_share)
{
    unsigned char *grouped = calloc((size_t)n, 1);
    int *group_n = malloc(sizeof(int) * (size_t)n), *group_cells = malloc(sizeof(int) * (size_t)n);
    int *hist = malloc(sizeof(int) * PCG_MAX_CELLS * (N_TILES + 1));
    int groups = 0;
    if (!grouped || !group_n || !group_cells || !hist) {
        free(grouped), free(group_n), free(group_cells), free(hist);
        return -1;
    }
    *sum_cells = *sum_share = 0;
    for (int i = 0; i < n; i++) {
        if (grouped[i]) continue;
        int h = lv[i].h, w = lv[i].w, cells = h * w, members = 0;
        if (cells > PCG_MAX_CELLS || cells < 0) cells = 0; /* not a valid level: counts as empty */
        memset(hist, 0, sizeof(int) * (size_t)cells * (N_TILES + 1));
        for (int j = i; j < n; j++) {
            if (grouped[j] || lv[j].h != h || lv[j].w != w) continue;
            grouped[j] = 1;
            members++;
            for (int c = 0; c < cells; c++) {
                int t = lv[j].t[c];
                hist[c * (N_TILES + 1) + (t < N_TILES ? t : N_TILES)]++;
            }
        }
        double pairs = (double)members * (members - 1) / 2, differ = 0;
        for (int c = 0; c < cells; c++) {
            double same = 0;
            for (int t = 0; t <= N_TILES; t++) {
                double k = hist[c * (N_TILES + 1) + t];
                same += k * (k - 1) / 2;
            }
            differ += pairs - same;
        }
        *sum_cells += differ;
        if (cells) *sum_share += differ / cells;
        group_n[groups] = members;
        group_cells[groups] = cells;
        groups++;
    }
    /* pairs of different sizes differ in every cell of the larger */
    for (int a = 0; a < groups; a++)
        for (int b = a + 1; b < groups; b++) {
            double pairs = (double)group_n[a] * group_n[b];
            *sum_cells += pairs * (group_cells[a] > group_cells[b] ? group_cells[a] : group_cells[b]);
            *sum_share += pairs;
        }
    free(grouped), free(group_n), free(group_cells), free(hist);
    return 0;
}

double eval_diversity(const level_t *levels, int n)
{
    double cells_sum, share_sum;
    if (n < 2 || diversity_sums(levels, n, &cells_sum, &share_sum)) return 0.0;
    return cells_sum / ((double)n * (n - 1) / 2);
}

double eval_levels(const eval_scenario_t *s, const level_t *levels, int n, eval_level_t *per, eval_summary_t *sum)
{
    double total = 0, walls = 0, solutions = 0, entropy = 0;
    int playable = 0;
    for (int i = 0; i < n; i++) {
        eval_level_t local, *m = per ? &per[i] : &local;
        eval_level(s, &levels[i], m);
        total += m->score;
        solutions += m->solutions;
        entropy += m->entropy;
        if (m->playable) {
            playable++;
            walls += m->wall_share;
        }
    }
    double fitness = n > 0 ? total / n : 0.0;
    if (sum) {
        memset(sum, 0, sizeof *sum);
        sum->n = n;
        sum->fitness = fitness;
        sum->n_playable = playable;
        sum->playable_share = n > 0 ? (double)playable / n : 0.0;
        sum->playable_wall_share = playable ? walls / playable : -1.0;
        sum->mean_solutions = n > 0 ? solutions / n : 0.0;
        sum->mean_entropy = n > 0 ? entropy / n : 0.0;
        double cells_sum, share_sum;
        if (n >= 2 && !diversity_sums(levels, n, &cells_sum, &share_sum)) {
            double pairs = (double)n * (n - 1) / 2;
            sum->diversity = cells_sum / pairs;
            sum->diversity_share = share_sum / pairs;
        }
    }
    return fitness;
}
