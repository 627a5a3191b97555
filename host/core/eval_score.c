/* The score alone of a level that fits four bit-row words (bitrows4.h),
 * for eval_score_batch: the same score as eval_level by fewer searches,
 * none of which writes a distance per cell
 * (docs/evaluator.md#the-score-only-pass).  tests/test_eval_score.c
 * compares it with eval_level and with the one-search-per-key reading on
 * random levels. */
#include "eval.h"
#include "bitrows4.h"

/* Scenarios 1-2.  One search from the player (walls blocking) finds each
 * key's d1; beside it, layer by layer, run the cells that a shortest path
 * reaches with no KEY before them.  A KEY among those is a solution
 * (d1' == d1: a shortest path reaches it over key-free cells), and the
 * key-free cells of each layer are what lv_path reads on the search with
 * the keys blocking, so the leg to the key is rebuilt from them. */
typedef struct {
    br4_shape g;
    pcg_u64 pass[BR4_WORDS], keys[BR4_WORDS];
    pcg_u64 key_free[BR4_CELLS][BR4_WORDS]; /* [d]: key-free cells at distance d reached key-free */
    pcg_u64 leg[BR4_CELLS][BR4_WORDS];      /* [d]: cells at distance d from a key */
    pcg_u64 sol[BR4_CELLS][BR4_WORDS];      /* [d]: the keys giving a solution with d1 = d */
    int layers, any_sol;                    /* sol[1..layers) filled; any key set there */
} encounter_fast;

/* The player's search.  1 when it reaches the door, which it may leave
 * unknown (0) when no key gives a solution. */
static int player_search(encounter_fast *e, int pr, int pc, int dr, int dc)
{
    const br4_shape *g = &e->g;
    pcg_u64 seen[BR4_WORDS] = {0}, fresh[BR4_WORDS] = {0};
    br4_set(g, fresh, pr, pc);
    for (int j = 0; j < BR4_WORDS; j++) seen[j] = e->key_free[0][j] = fresh[j];
    int key_free = 1, door = 0;
    e->layers = 1;
    e->any_sol = 0;
    for (int d = 1; br4_step(g, e->pass, seen, fresh); d++) {
        if (key_free) {
            key_free = br4_step_free(g, fresh, e->keys, e->key_free[d - 1], e->key_free[d], e->sol[d]) != 0;
            const pcg_u64 *sol = e->sol[d];
            e->any_sol |= (sol[0] | sol[1] | sol[2] | sol[3]) != 0;
            e->layers = d + 1;
        }
        if (!door) door = br4_has(g, seen, dr, dc);
        if (!key_free && (door || !e->any_sol)) break;
    }
    return door;
}

/* The leg key -> door as lv_path rebuilds it from the door on a search
 * from the key (walls blocking), into path.  The door is reached: the
 * player reaches both. */
static void door_leg(encounter_fast *e, int kr, int kc, int dr, int dc, pcg_u64 *path)
{
    const br4_shape *g = &e->g;
    pcg_u64 seen[BR4_WORDS] = {0}, fresh[BR4_WORDS] = {0};
    br4_set(g, fresh, kr, kc);
    for (int j = 0; j < BR4_WORDS; j++) seen[j] = e->leg[0][j] = fresh[j];
    int d = 0;
    while (!br4_has(g, fresh, dr, dc)) {
        if (!br4_step(g, e->pass, seen, fresh)) return;
        d++;
        for (int j = 0; j < BR4_WORDS; j++) e->leg[d][j] = fresh[j];
    }
    br4_path(g, (const pcg_u64(*)[BR4_WORDS])e->leg, d, dr, dc, path);
}

/* met plus bit e for each enemy type e whose 5x5 windows (near[e]) hold a
 * cell of path. */
static unsigned meets(const pcg_u64 (*near)[BR4_WORDS], const pcg_u64 *path, unsigned met)
{
    for (int t = 0; t < EVAL_N_ENEMIES; t++) {
        pcg_u64 any = 0;
        for (int j = 0; j < BR4_WORDS; j++) any |= path[j] & near[t][j];
        if (any) met |= 1u << t;
    }
    return met;
}

/* p of docs/evaluator.md#encounter-scenarios-1-2 over the solutions the
 * player's search found: both legs of each, until every type is met. */
static unsigned enemies_met(encounter_fast *e, const level_t *l, int dr, int dc)
{
    const br4_shape *g = &e->g;
    static const unsigned char types[EVAL_N_ENEMIES] = {TILE_BAT, TILE_SCORPION, TILE_SPIDER};
    const unsigned all = (1u << EVAL_N_ENEMIES) - 1;
    pcg_u64 near[EVAL_N_ENEMIES][BR4_WORDS];
    br4_masks(g, l->t, 0, types, EVAL_N_ENEMIES, near);
    for (int t = 0; t < EVAL_N_ENEMIES; t++) br4_window5(g, near[t], near[t]);
    unsigned met = 0;
    for (int d = 1; d < e->layers; d++)
        for (int j = 0; j < BR4_WORDS; j++)
            for (pcg_u64 keys = e->sol[d][j]; keys; keys &= keys - 1) {
                int bit = br_low_bit(keys), q = bit / g->w, kr = j * g->per + q, kc = bit - q * g->w;
                pcg_u64 path[BR4_WORDS] = {0};
                br4_path(g, (const pcg_u64(*)[BR4_WORDS])e->key_free, d, kr, kc, path);
                met = meets((const pcg_u64(*)[BR4_WORDS])near, path, met);
                if (met == all) return met;
                for (int i = 0; i < BR4_WORDS; i++) path[i] = 0;
                door_leg(e, kr, kc, dr, dc, path);
                met = meets((const pcg_u64(*)[BR4_WORDS])near, path, met);
                if (met == all) return met;
            }
    return met;
}

static double encounter_score(const eval_scenario_t *s, const level_t *l)
{
    encounter_fast e;
    int player = lv_first(l, TILE_PLAYER), door = lv_first(l, TILE_DOOR);
    if (player < 0 || door < 0) return 0.0;
    const unsigned char key = TILE_KEY;
    br4_shape_init(&e.g, l->h, l->w);
    br4_masks(&e.g, l->t, e.pass, &key, 1, &e.keys);
    int dr = door / l->w, dc = door % l->w;
    if (!player_search(&e, player / l->w, player % l->w, dr, dc) || !e.any_sol) return 0.0;
    unsigned met = enemies_met(&e, l, dr, dc);
    int match = 0;
    for (int t = 0; t < EVAL_N_ENEMIES; t++) match += (int)((met >> t) & 1u) == (s->enemies[t] != 0);
    return match / 3.0;
}

/* Scenarios 3-4: only reachability counts (docs/evaluator.md#key-door-
 * scenarios-3-4).  The level scores 1 when, with every DOOR blocking, the
 * player reaches some G but not the treasure, and with the doors open
 * reaches the treasure; the door after G (condition 3) then always
 * exists.  One flood with the doors blocking, carried on through them. */
static double keydoor_score(const eval_scenario_t *s, const level_t *l)
{
    br4_shape g;
    int player = lv_first(l, TILE_PLAYER), treasure = lv_first(l, TILE_TREASURE);
    if (player < 0 || treasure < 0 || s->gate < 0 || s->gate > 255) return 0.0;
    const unsigned char tiles[2] = {TILE_DOOR, (unsigned char)s->gate};
    pcg_u64 pass[BR4_WORDS], m[2][BR4_WORDS], sealed[BR4_WORDS], seen[BR4_WORDS] = {0}, fresh[BR4_WORDS] = {0};
    br4_shape_init(&g, l->h, l->w);
    br4_masks(&g, l->t, pass, tiles, 2, m);
    int pr = player / l->w, pc = player % l->w, tr = treasure / l->w, tc = treasure % l->w;
    br4_set(&g, fresh, pr, pc);
    m[1][g.row_word[pr]] &= ~fresh[g.row_word[pr]]; /* the player's own cell is no G */
    for (int j = 0; j < BR4_WORDS; j++) sealed[j] = pass[j] & ~m[0][j], seen[j] = fresh[j];
    while (br4_step(&g, sealed, seen, fresh))
        if (br4_has(&g, fresh, tr, tc)) return 0.0;
    pcg_u64 gates = 0;
    for (int j = 0; j < BR4_WORDS; j++) gates |= seen[j] & m[1][j], fresh[j] = seen[j];
    if (!gates) return 0.0;
    while (br4_step(&g, pass, seen, fresh))
        if (br4_has(&g, fresh, tr, tc)) return 1.0;
    return 0.0;
}

int eval_score_small(const eval_scenario_t *s, const level_t *l, double *score)
{
    if (!br4_fits(l->h, l->w) || (s->kind != EVAL_ENCOUNTER && s->kind != EVAL_KEYDOOR)) return 0;
    *score = s->kind == EVAL_ENCOUNTER ? encounter_score(s, l) : keydoor_score(s, l);
    return 1;
}
