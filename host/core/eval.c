/* The evaluator of docs/evaluator.md.  Every search is a BFS of the level core
 * (host/core/level.h) on stack scratch: no allocation per level.  Distances
 * come from the bit-row search (lv_bfs_rows, the queue BFS's values); the
 * queue BFS itself runs only where its visiting order breaks a tie. */
#include "eval.h"
#include "dungeon.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const eval_scenario_t scenarios[] = {
    {1,
     "The 'Player' needs to obtain the Key and escape through the 'Door'. To pick up the key, the player must "
     "encounter one of monsters: BAT.",
     "Player -> Bat -> Key -> Door", VARIANT_DUNGEON, EVAL_ENCOUNTER, {1, 0, 0}, 0, 0, 0, 0, 0, 0},
    {2,
     "The 'Player' needs to obtain the Key and escape through the 'Door'. To pick up the key, the player must "
     "encounter both of monsters: BAT, SCORPION.",
     "Player -> Bat & Scorpion -> Key -> Door", VARIANT_DUNGEON, EVAL_ENCOUNTER, {1, 1, 0}, 0, 0, 0, 0, 0, 0},
    {3, "The player must pick up the KEY to unlock the door and discover the treasure inside.",
     "Player -> Key -> Door -> Treasure", VARIANT_TREASURE, EVAL_KEYDOOR, {0, 0, 0}, TILE_KEY, 0, 0, 0, 0, 0},
    {4, "The BAT holds the key, and only by defeating it can the player open the door and reach the treasure.",
     "Player -> Bat -> Door -> Treasure", VARIANT_TREASURE, EVAL_KEYDOOR, {0, 0, 0}, TILE_BAT, 0, 0, 0, 0, 0},
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

/* 1 when the evaluator takes an h x w level: both sides positive and at
 * most PCG_MAX_CELLS cells, asked without the product, which overflows int
 * on sides no level has (641 x 6700417 would read as one cell). */
static int level_fits(const level_t *l)
{
    return l->h > 0 && l->w > 0 && l->h <= PCG_MAX_CELLS / l->w;
}

/* Bit e: an enemy of type e lies within Chebyshev distance 2 of a cell of
 * the path (the 5x5 windows of docs/evaluator.md#encounter-scenarios-1-2).
 * Each cell's window is read where the path passes, stopping once every
 * type is met: a level holds far more enemies than a route has cells. */
static unsigned enemies_near_path(const level_t *l, const short *path, int n, unsigned met, unsigned all)
{
    const int h = l->h, w = l->w;
    int r = n > 0 ? path[0] / w : 0, c = n > 0 ? path[0] % w : 0;
    for (int i = 0; i < n && met != all; i++) {
        if (i > 0) { /* the next cell is a neighbour: no division */
            int step = path[i] - path[i - 1];
            if (step == w) r++;
            else if (step == -w) r--;
            else c += step;
        }
        int r0 = r - 2 > 0 ? r - 2 : 0, r1 = r + 2 < h ? r + 2 : h - 1;
        int c0 = c - 2 > 0 ? c - 2 : 0, c1 = c + 2 < w ? c + 2 : w - 1;
        for (int nr = r0; nr <= r1; nr++)
            for (int nc = c0; nc <= c1; nc++) {
                int t = l->t[nr * w + nc];
                if (is_enemy(t)) met |= 1u << (t - TILE_BAT);
            }
    }
    return met;
}

/* The searches of scenarios 1-2 (docs/evaluator.md#encounter-scenarios-1-2), shared by the score
 * and by eval_routes so that both follow the same routes; path-length
 * targets score the length of the same shortest solution route instead of
 * the enemies.
 *
 * Two shortcuts keep this at a few searches per level, both exact:
 * - d2 comes from one BFS from the door (distances are symmetric).
 * - d1' and the key-avoiding path come from one BFS with every KEY blocking
 *   instead of one per key with that key allowed: cells closer than d1'
 *   have the same distance in both searches (passing k cannot shorten a
 *   path to a cell nearer than k), so d1' = 1 + the least distance of k's
 *   neighbours, and rebuilding the path from k reads only those cells.
 * tests/test_eval.c checks both against the one-search-per-key reading. */
typedef struct {
    const level_t *l;
    int player, door;
    short dist_p[PCG_MAX_CELLS]; /* from the player, walls blocking */
    short dist_d[PCG_MAX_CELLS]; /* from the door, walls blocking */
    short dist_b[PCG_MAX_CELLS]; /* from the player, walls and keys blocking */
    int keys_searched;           /* dist_b is filled */
} encounter_search;

/* The player's search.  0, or the missing tile (PLAYER or DOOR).  The
 * door's search is read at keys alone, and so is the player's unless
 * every_cell (objective paths and routes read it elsewhere; the score
 * reads it at keys and the door). */
static int encounter_begin(encounter_search *e, const level_t *l, short *queue, int every_cell)
{
    e->l = l;
    e->keys_searched = 0;
    e->player = lv_first(l, TILE_PLAYER);
    e->door = lv_first(l, TILE_DOOR);
    if (e->player < 0) return TILE_PLAYER;
    if (e->door < 0) return TILE_DOOR;
    if (every_cell) lv_bfs_rows(l, e->player, PCG_BLOCK_DEFAULT, -1, -1, e->dist_p, queue);
    else lv_bfs_rows_at(l, e->player, PCG_BLOCK_DEFAULT, (1u << TILE_KEY) | (1u << TILE_DOOR), e->dist_p, queue);
    if (e->dist_p[e->door] >= 0) lv_bfs_rows_at(l, e->door, PCG_BLOCK_DEFAULT, 1u << TILE_KEY, e->dist_d, queue);
    return 0;
}

/* d1 when KEY cell k gives a solution (d1 > 0, d2 > 0, d1' == d1), else -1.
 * Call only when the player reaches the door: d1 > 0 and d2 > 0 put player,
 * key and door in one region, so without that path no key gives one. */
static int encounter_solution(encounter_search *e, int k, short *queue)
{
    const level_t *l = e->l;
    const int h = l->h, w = l->w;
    int d1 = e->dist_p[k], d2 = e->dist_d[k];
    if (d1 <= 0 || d2 <= 0) return -1;
    if (!e->keys_searched) {
        lv_bfs_rows(l, e->player, PCG_BLOCK_DEFAULT | (1u << TILE_KEY), -1, -1, e->dist_b, queue);
        e->keys_searched = 1;
    }
    /* d1': every other KEY blocks, k is entered from its nearest neighbour.
     * No neighbour reached is nearer than d1 - 1 (walls alone give d1), so
     * d1' == d1 when one of them is at d1 - 1 with the keys blocking. */
    const short *b = e->dist_b;
    int r = k / w, c = k % w, near = d1 - 1;
    int found = (r > 0 && b[k - w] == near) || (c > 0 && b[k - 1] == near) || (c + 1 < w && b[k + 1] == near) ||
                (r + 1 < h && b[k + w] == near);
    return found ? d1 : -1;
}

/* The key-avoiding route player -> solution key k, rebuilt from k. */
static int encounter_leg_to_key(encounter_search *e, int k, short *path)
{
    e->dist_b[k] = e->dist_p[k];
    int n = lv_path(e->l, e->dist_b, k, path);
    e->dist_b[k] = -1;
    return n;
}

/* k -> door with only walls blocking, rebuilt from the door (the search
 * stops at the door: the rebuild reads only nearer cells). */
static int encounter_leg_to_door(encounter_search *e, int k, short *path, short *dist, short *queue)
{
    lv_bfs_rows(e->l, k, PCG_BLOCK_DEFAULT, -1, e->door, dist, queue);
    return lv_path(e->l, dist, e->door, path);
}

static void objective_paths(const eval_scenario_t *s, const level_t *l, const short *dist_p, eval_level_t *m);

static void eval_encounter(const eval_scenario_t *s, const level_t *l, eval_level_t *m, int full)
{
    encounter_search e;
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS], path[PCG_MAX_CELLS];
    const int cells = l->h * l->w;
    const unsigned all_met = (1u << EVAL_N_ENEMIES) - 1;

    if ((m->missing = encounter_begin(&e, l, queue, full))) return;
    if (full) objective_paths(s, l, e.dist_p, m);
    m->player_door = e.dist_p[e.door];
    m->playable = m->player_door > 0;
    if (m->player_door < 0) return;
    unsigned met = 0;
    for (int k = 0; k < cells; k++) {
        if (l->t[k] != TILE_KEY) continue;
        int d1 = encounter_solution(&e, k, queue);
        if (d1 < 0) continue;
        int d2 = e.dist_d[k];
        m->solutions++;
        if (m->route < 0 || d1 + d2 < m->route) {
            m->route = d1 + d2;
            m->route_key = d1;
            m->route_door = d2;
        }
        if (met == all_met || s->kind == EVAL_PATHLENGTH) continue; /* nothing to add to p */
        int n = encounter_leg_to_key(&e, k, path);
        met = enemies_near_path(l, path, n, met, all_met);
        if (met == all_met) continue;
        n = encounter_leg_to_door(&e, k, path, dist, queue);
        met = enemies_near_path(l, path, n, met, all_met);
    }
    if (m->solutions == 0) return;
    if (s->kind == EVAL_PATHLENGTH) {
        m->score = eval_pathlength_score(s, m->route_key, m->route_door);
        int enemies = m->counts[TILE_BAT] + m->counts[TILE_SCORPION] + m->counts[TILE_SPIDER];
        int exact = s->leg_key > 0 ? m->route_key == s->leg_key && m->route_door == s->leg_door
                                   : m->route == s->length;
        m->perfect = exact && (s->enemy_count == 0 || enemies == s->enemy_count);
        return;
    }
    int match = 0;
    for (int e_ = 0; e_ < EVAL_N_ENEMIES; e_++) {
        m->met[e_] = (met >> e_) & 1u;
        match += m->met[e_] == (s->enemies[e_] != 0);
    }
    m->score = match / 3.0;
}

/* The searches of scenarios 3-4 (Player -> G -> Door -> Treasure), shared
 * by the score and by eval_routes.  Every G reachable from the player with
 * doors blocking lies in the player's sealed region, so a DOOR reachable
 * from one of them is reachable from all: one search from the nearest G
 * decides for every G. */
typedef struct {
    int player, treasure;
    int door;                       /* the nearest DOOR from the player (walls blocking), -1 */
    int gate;                       /* the nearest G with doors blocking, -1 */
    int gate_door;                  /* the nearest DOOR from that G (walls blocking), -1 */
    int gates;                      /* Gs reachable with doors blocking */
    short dist_open[PCG_MAX_CELLS];   /* from the player, walls blocking */
    short dist_sealed[PCG_MAX_CELLS]; /* from the player, walls and doors blocking */
    short dist_gate[PCG_MAX_CELLS];   /* from the nearest G, walls blocking */
} keydoor_search;

/* The nearest cell holding tile by dist (a search from src, walls
 * blocking), ties broken as the queue BFS visits cells: the first in its
 * queue.  -1 if none is reached.  Only a tie runs the queue BFS. */
static int nearest_in_bfs_order(const level_t *l, const short *dist, int src, int tile, short *queue)
{
    const int cells = l->h * l->w;
    int best = -1, ties = 0;
    for (int i = 0; i < cells; i++) {
        if (l->t[i] != tile || dist[i] < 0) continue;
        if (best < 0 || dist[i] < dist[best]) best = i, ties = 0;
        else if (dist[i] == dist[best]) ties++;
    }
    if (!ties) return best;
    short order[PCG_MAX_CELLS];
    int n = lv_bfs(l, src, PCG_BLOCK_DEFAULT, -1, order, queue);
    for (int i = 0; i < n; i++)
        if (l->t[queue[i]] == tile) return queue[i];
    return -1; /* not reached: best was */
}

/* 0, or the missing tile (PLAYER or TREASURE); with the TREASURE missing
 * the player's search and door are still filled. */
static int keydoor_run(const eval_scenario_t *s, const level_t *l, keydoor_search *k, short *queue)
{
    const int cells = l->h * l->w;
    k->door = k->gate = k->gate_door = -1;
    k->gates = 0;
    k->player = lv_first(l, TILE_PLAYER);
    k->treasure = lv_first(l, TILE_TREASURE);
    if (k->player < 0) return TILE_PLAYER;
    lv_bfs_rows(l, k->player, PCG_BLOCK_DEFAULT, -1, -1, k->dist_open, queue);
    k->door = nearest_in_bfs_order(l, k->dist_open, k->player, TILE_DOOR, queue);
    if (k->treasure < 0) return TILE_TREASURE;
    lv_bfs_rows(l, k->player, PCG_BLOCK_DEFAULT | (1u << TILE_DOOR), -1, -1, k->dist_sealed, queue);
    for (int g = 0; g < cells; g++) {
        if (l->t[g] != s->gate || g == k->player || k->dist_sealed[g] < 0) continue;
        k->gates++;
        if (k->gate < 0 || k->dist_sealed[g] < k->dist_sealed[k->gate]) k->gate = g;
    }
    if (k->gate >= 0) {
        /* the nearest door's distance is the same whether other doors block
         * or not (a shortest path to the nearest door passes no other door) */
        lv_bfs_rows(l, k->gate, PCG_BLOCK_DEFAULT, -1, -1, k->dist_gate, queue);
        k->gate_door = nearest_in_bfs_order(l, k->dist_gate, k->gate, TILE_DOOR, queue);
        if (k->gate_door < 0) k->gates = 0;
    }
    return 0;
}

static void eval_keydoor(const eval_scenario_t *s, const level_t *l, eval_level_t *m, int full)
{
    keydoor_search k;
    short queue[PCG_MAX_CELLS];
    m->missing = keydoor_run(s, l, &k, queue);
    if (m->missing == TILE_PLAYER) return;
    if (full) objective_paths(s, l, k.dist_open, m);
    if (k.door >= 0) m->player_door = k.dist_open[k.door];
    if (m->missing) return;
    m->player_treasure = k.dist_open[k.treasure];
    if (k.gates > 0) {
        m->player_gate = k.dist_sealed[k.gate];
        m->gate_door = k.dist_gate[k.gate_door];
    }
    m->playable = k.dist_sealed[k.treasure] < 0 && k.gates > 0 && m->player_treasure >= 0;
    m->solutions = m->playable ? k.gates : 0;
    m->score = m->playable ? 1.0 : 0.0;
}

/* ---- Word2Minecraft's level metrics (docs/evaluator.md) ---- */

int eval_objective_tiles(const eval_scenario_t *s, int *tiles)
{
    int n = 0;
    if (s->kind == EVAL_ENCOUNTER || s->kind == EVAL_PATHLENGTH) {
        for (int e = 0; e < EVAL_N_ENEMIES && s->kind == EVAL_ENCOUNTER; e++)
            if (s->enemies[e]) tiles[n++] = TILE_BAT + e;
        tiles[n++] = TILE_KEY;
        tiles[n++] = TILE_DOOR;
    } else {
        tiles[n++] = s->gate;
        if (s->gate != TILE_DOOR) tiles[n++] = TILE_DOOR;
        if (s->gate != TILE_TREASURE) tiles[n++] = TILE_TREASURE;
    }
    return n;
}

/* From the player's search (walls blocking): the level is valid when it
 * holds every objective tile type and reaches every objective cell; its
 * objective path is then the mean distance to them. */
static void objective_paths(const eval_scenario_t *s, const level_t *l, const short *dist_p, eval_level_t *m)
{
    int tiles[EVAL_N_ENEMIES + 3], nt = eval_objective_tiles(s, tiles);
    /* objective[t]: 1 + tile t's index among the objectives, else 0; by
     * byte, since a gate or a cell may hold any id and a mask names 0..31 */
    unsigned char objective[256] = {0};
    for (int i = 0; i < nt; i++) {
        if (tiles[i] < 0 || tiles[i] > 255) return; /* a type no cell holds */
        objective[tiles[i]] = (unsigned char)(i + 1);
    }
    unsigned seen = 0;
    long sum = 0;
    int n = 0;
    const int cells = l->h * l->w;
    for (int c = 0; c < cells; c++) {
        int k = objective[l->t[c]];
        if (!k) continue;
        if (dist_p[c] < 0) return; /* an objective the player cannot reach */
        seen |= 1u << (k - 1);
        sum += dist_p[c];
        n++;
    }
    if (seen != (1u << nt) - 1) return;
    m->objectives_reachable = 1;
    m->objective_path = (double)sum / n;
}

int eval_important_tiles(const eval_scenario_t *s, int *tiles)
{
    int n = 0;
    if (s->kind == EVAL_ENCOUNTER)
        for (int e = 0; e < EVAL_N_ENEMIES; e++)
            if (s->enemies[e]) tiles[n++] = TILE_BAT + e;
    if (s->kind == EVAL_KEYDOOR && is_enemy(s->gate)) tiles[n++] = s->gate;
    return n;
}

void eval_reference_level(const eval_scenario_t *s, const level_t *l, int *solvable, double *reachable)
{
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS];
    int tiles[EVAL_N_ENEMIES], nt = eval_important_tiles(s, tiles), reached = 0;
    *solvable = 0;
    *reachable = nt ? 0.0 : 1.0;
    if (!level_fits(l)) return;
    int player = lv_first(l, TILE_PLAYER), cells = l->h * l->w;
    if (player < 0) return;
    lv_bfs_rows(l, player, PCG_BLOCK_DEFAULT, -1, -1, dist, queue);
    int door = lv_first(l, TILE_DOOR), key = lv_first(l, TILE_KEY);
    *solvable = door >= 0 && dist[door] >= 0 && key >= 0 && dist[key] > 0;
    for (int i = 0; i < nt; i++) {
        int seen = 0;
        for (int c = 0; c < cells && !seen; c++) seen = l->t[c] == tiles[i] && dist[c] > 0;
        reached += seen;
    }
    if (nt) *reachable = (double)reached / nt;
}

double eval_route_score(int route, int length, int tolerance)
{
    if (route < 0 || length <= 0) return 0.0;
    int off = abs(route - length) - (tolerance > 0 ? tolerance : 0);
    if (off <= 0) return 1.0;
    double s = 1.0 - (double)off / length;
    return s > 0 ? s : 0.0;
}

double eval_pathlength_score(const eval_scenario_t *s, int to_key, int to_door)
{
    if (to_key < 0 || to_door < 0) return 0.0;
    if (s->leg_key <= 0) return eval_route_score(to_key + to_door, s->length, s->tolerance);
    return 0.5 * (eval_route_score(to_key, s->leg_key, s->tolerance) +
                  eval_route_score(to_door, s->leg_door, s->tolerance));
}

/* eval_level; with full 0 only what the score needs (no entropy, wall
 * share or objective paths), for eval_score_batch. */
static void eval_level_part(const eval_scenario_t *s, const level_t *l, eval_level_t *m, int full)
{
    memset(m, 0, sizeof *m);
    m->player_door = m->route = m->route_key = m->route_door = m->player_gate = m->gate_door = m->player_treasure = -1;
    m->objective_path = -1;
    if (!level_fits(l)) return;
    int cells = l->h * l->w;
    for (int i = 0; i < cells; i++)
        if (l->t[i] < N_TILES) m->counts[l->t[i]]++;
    if (full) {
        for (int t = 0; t < N_TILES; t++) {
            if (!m->counts[t]) continue;
            double p = (double)m->counts[t] / cells;
            m->entropy -= p * log2(p);
        }
        m->entropy = fabs(m->entropy); /* no -0 for a one-tile level */
        m->wall_share = (double)m->counts[TILE_WALL] / cells;
    }
    if (s->kind == EVAL_KEYDOOR) eval_keydoor(s, l, m, full);
    else eval_encounter(s, l, m, full);
}

void eval_level(const eval_scenario_t *s, const level_t *l, eval_level_t *m) { eval_level_part(s, l, m, 1); }

/* Every path behind a distance or a solution the evaluator reports, in
 * the order it takes them (see eval.h). */
static int routes_encounter(const level_t *l, eval_route_fn fn, void *ctx)
{
    encounter_search e;
    short dist[PCG_MAX_CELLS], queue[PCG_MAX_CELLS], path[PCG_MAX_CELLS];
    if (encounter_begin(&e, l, queue, 1) || e.dist_p[e.door] < 0) return 0;
    eval_leg_t leg = {EVAL_LEG_PLAYER_DOOR, e.player, e.door, path, lv_path(l, e.dist_p, e.door, path)};
    int rc = fn(ctx, &leg);
    for (int k = 0; k < l->h * l->w && !rc; k++) {
        if (l->t[k] != TILE_KEY || encounter_solution(&e, k, queue) < 0) continue;
        leg = (eval_leg_t){EVAL_LEG_PLAYER_KEY, e.player, k, path, encounter_leg_to_key(&e, k, path)};
        if ((rc = fn(ctx, &leg))) break;
        leg = (eval_leg_t){EVAL_LEG_KEY_DOOR, k, e.door, path, encounter_leg_to_door(&e, k, path, dist, queue)};
        rc = fn(ctx, &leg);
    }
    return rc;
}

static int routes_keydoor(const eval_scenario_t *s, const level_t *l, eval_route_fn fn, void *ctx)
{
    keydoor_search k;
    short queue[PCG_MAX_CELLS], path[PCG_MAX_CELLS];
    int missing = keydoor_run(s, l, &k, queue), rc = 0;
    if (missing == TILE_PLAYER) return 0;
    eval_leg_t leg;
    if (k.door >= 0) {
        leg = (eval_leg_t){EVAL_LEG_PLAYER_DOOR, k.player, k.door, path, lv_path(l, k.dist_open, k.door, path)};
        if ((rc = fn(ctx, &leg))) return rc;
    }
    if (missing) return 0;
    if (k.dist_open[k.treasure] >= 0) {
        leg = (eval_leg_t){EVAL_LEG_PLAYER_TREASURE, k.player, k.treasure, path,
                           lv_path(l, k.dist_open, k.treasure, path)};
        if ((rc = fn(ctx, &leg))) return rc;
    }
    if (k.gates > 0) {
        leg = (eval_leg_t){EVAL_LEG_PLAYER_GATE, k.player, k.gate, path, lv_path(l, k.dist_sealed, k.gate, path)};
        if ((rc = fn(ctx, &leg))) return rc;
        leg = (eval_leg_t){EVAL_LEG_GATE_DOOR, k.gate, k.gate_door, path, lv_path(l, k.dist_gate, k.gate_door, path)};
        rc = fn(ctx, &leg);
    }
    return rc;
}

int eval_routes(const eval_scenario_t *s, const level_t *l, eval_route_fn fn, void *ctx)
{
    if (!level_fits(l)) return 0;
    return s->kind == EVAL_KEYDOOR ? routes_keydoor(s, l, fn, ctx) : routes_encounter(l, fn, ctx);
}

const char *eval_leg_name(int kind)
{
    static const char *const names[] = {"player -> door", "player -> key", "key -> door", "player -> gate",
                                        "gate -> door", "player -> treasure"};
    return kind >= 0 && kind < (int)(sizeof names / sizeof names[0]) ? names[kind] : "?";
}

double eval_score_batch(const eval_scenario_t *s, const level_t *levels, int n, float *scores)
{
    double *each = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1)), total = 0;
    if (!each) abort();
#pragma omp parallel for schedule(dynamic, 8) if (n >= 32)
    for (int i = 0; i < n; i++) {
        double score;
        if (!eval_score_small(s, &levels[i], &score)) {
            eval_level_t m;
            eval_level_part(s, &levels[i], &m, 0);
            score = m.score;
        }
        if (scores) scores[i] = (float)score;
        each[i] = score;
    }
    for (int i = 0; i < n; i++) total += each[i]; /* in level order, whatever the threads */
    free(each);
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
        int h = lv[i].h, w = lv[i].w, members = 0;
        int cells = level_fits(&lv[i]) ? h * w : 0; /* not a valid level: counts as empty */
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
    double total = 0, walls = 0, solutions = 0, entropy = 0, all_walls = 0, valid_walls = 0, paths = 0, reach = 0;
    int playable = 0, valid = 0, solvable = 0;
    for (int i = 0; i < n; i++) {
        eval_level_t local, *m = per ? &per[i] : &local;
        eval_level(s, &levels[i], m);
        if (sum) {
            int sv;
            double rv;
            eval_reference_level(s, &levels[i], &sv, &rv);
            solvable += sv;
            reach += rv;
        }
        total += m->score;
        solutions += m->solutions;
        entropy += m->entropy;
        all_walls += m->wall_share;
        if (m->objectives_reachable) {
            valid++;
            valid_walls += m->wall_share;
            paths += m->objective_path;
        }
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
        sum->n_valid = valid;
        sum->aspao = valid ? paths / valid : -1.0;
        sum->utr = n > 0 ? all_walls / n : 0.0;
        sum->vutr = n > 0 ? valid_walls / n : 0.0;
        sum->solvability = n > 0 ? (double)solvable / n : 0.0;
        sum->important_reachable = n > 0 ? reach / n : 0.0;
        double cells_sum, share_sum;
        if (n >= 2 && !diversity_sums(levels, n, &cells_sum, &share_sum)) {
            double pairs = (double)n * (n - 1) / 2;
            sum->diversity = cells_sum / pairs;
            sum->diversity_share = share_sum / pairs;
        }
    }
    return fitness;
}
