/* Contracts on hand-built level pairs: see contracts.h. */
#include "contracts.h"
#include "author_experience.h"
#include "dungeon.h"
#include "levelio.h"
#include "reward_jit.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S CONTRACT_SIDE
#define CELLS (S * S)

/* The levels, drawn: each pair keeps its player, key and door where they
 * are and changes only the feature named. */
static const char *const winding[S] = {"@.......", "#######.", "k.......", ".#######",
                                       "........", "#######.", "........", "D#######"};
static const char *const winding_forks[S] = {"@.......", "##.#.##.", "k.......", ".#.##.##",
                                             "........", "#######.", "........", "D#######"};
static const char *const spiral[S] = {"@.#.....", "#.#.###.", "#.#.#k#.", "#...#.#.",
                                      "#####.#.", "D.......", "#######.", "........"};
static const char *const spiral_forks[S] = {"@.#.....", "#.#.###.", "#.#.#k#.", "#...#.#.",
                                            "#####.#.", "D.......", "#.#.#.#.", "........"};
static const char *const ring[S] = {"@......k", ".######.", ".#....#.", ".#.##.#.",
                                    ".#.##.#.", ".#....#.", ".######.", "D......."};
static const char *const ring_cut_low[S] = {"@......k", ".######.", ".#....#.", ".#.##.#.",
                                            ".#.##.#.", ".#....#.", ".######.", "D...#..."};
static const char *const ring_cut_right[S] = {"@......k", ".######.", ".#....#.", ".#.##.#.",
                                              ".#.##.##", ".#....#.", ".######.", "D......."};
static const char *const ring_open[S] = {"@......k", ".######.", ".#....#.", ".#....#.",
                                         ".#....#.", ".#....#.", ".######.", "D......."};
static const char *const winding_open[S] = {"@.......", "#######.", "k.......", "....####",
                                            "........", "#######.", "........", "D#######"};
static const char *const ring_bat_far[S] = {"@......k", ".######.", ".#....#.", ".#.##.#.",
                                            ".#.##.#.", ".#....#.", ".######.", "D.....b."};
static const char *const ring_bat_key[S] = {"@......k", ".######.", ".#....#b", ".#.##.#.",
                                            ".#.##.#.", ".#....#.", ".######.", "D......."};
static const char *const ring_spider_far[S] = {"@......k", ".######.", ".#....#.", ".#.##.#.",
                                               ".#.##.#.", ".#....#.", ".######.", "D..x...."};
static const char *const ring_spider_key[S] = {"@...x..k", ".######.", ".#....#.", ".#.##.#.",
                                               ".#.##.#.", ".#....#.", ".######.", "D......."};

static const struct {
    int kind;
    const char *const *less, *const *more;
} pairs[] = {
    {AT_EXP_FORKS, winding, winding_forks},         {AT_EXP_FORKS, spiral, spiral_forks},
    {AT_EXP_DEAD_ENDS, ring, ring_cut_low},         {AT_EXP_DEAD_ENDS, ring, ring_cut_right},
    {AT_EXP_OPEN, ring, ring_open},                 {AT_EXP_OPEN, winding, winding_open},
    {AT_EXP_GUARD, ring_bat_far, ring_bat_key},     {AT_EXP_GUARD, ring_spider_far, ring_spider_key},
};
#define N_PAIRS ((int)(sizeof pairs / sizeof pairs[0]))

/* The k-th pair of kind, or -1. */
static int pair_index(int kind, int k)
{
    for (int i = 0; i < N_PAIRS; i++)
        if (pairs[i].kind == kind && k-- == 0) return i;
    return -1;
}

int contract_pairs(int kind)
{
    int n = 0;
    while (pair_index(kind, n) >= 0) n++;
    return n;
}

static void draw(const char *const *rows, unsigned char *map)
{
    for (int r = 0; r < S; r++)
        for (int c = 0; c < S; c++) map[r * S + c] = (unsigned char)tile_of_char(rows[r][c]);
}

void contract_pair_maps(int kind, int k, unsigned char *less, unsigned char *more)
{
    int i = pair_index(kind, k);
    draw(pairs[i].less, less);
    draw(pairs[i].more, more);
}

/* The action that places tile (dungeon_action_tile's inverse; only the
 * tiles the pairs change). */
static unsigned char action_of(int tile)
{
    for (int a = 0; a < 7; a++)
        if (dungeon_action_tile(a) == tile) return (unsigned char)a;
    return 0;
}

/* Episode 2k edits pair k's "less" level into its "more" one, cell by cell
 * in the environment's order, episode 2k+1 back; cells the two share are
 * frozen. */
static void pair_episodes(int kind, int n, unsigned char *maps, unsigned char *frozen, unsigned char *actions)
{
    for (int k = 0; k < n; k++) {
        unsigned char less[CELLS], more[CELLS];
        contract_pair_maps(kind, k, less, more);
        for (int dir = 0; dir < 2; dir++) {
            int e = 2 * k + dir;
            const unsigned char *from = dir ? more : less, *to = dir ? less : more;
            memcpy(maps + e * CELLS, from, CELLS);
            for (int c = 0; c < CELLS; c++) {
                frozen[e * CELLS + c] = from[c] == to[c];
                actions[e * CELLS + c] = from[c] == to[c] ? 0 : action_of(to[c]);
            }
        }
    }
}

/* How much src prefers each pair's "more" level: the rewards of the edits
 * towards it less those of the edits back. */
static int preferences(const char *src, int variant, int kind, int n, double *pref, char *err, int errlen)
{
    unsigned char maps[2 * CONTRACT_MAX_PAIRS * CELLS] = {0}, frozen[sizeof maps] = {0}, actions[sizeof maps] = {0};
    float values[sizeof maps];
    pair_episodes(kind, n, maps, frozen, actions);
    if (reward_values_edits(src, variant, S, S, 2 * n, CELLS, maps, frozen, actions, 30, values, err, errlen))
        return -1;
    for (int k = 0; k < n; k++) {
        double there = 0, back = 0;
        for (int t = 0; t < CELLS; t++) {
            there += values[(2 * k) * CELLS + t];
            back += values[(2 * k + 1) * CELLS + t];
        }
        pref[k] = there - back;
    }
    return 0;
}

int contract_check(const char *parent_src, const char *revised_src, int variant, const char *dim_id, int direction,
                   contract_result *res, char *err, int errlen)
{
    memset(res, 0, sizeof *res);
    int sign, kind = author_experience_lever(dim_id, &sign);
    int n = kind < 0 ? 0 : contract_pairs(kind);
    if (n == 0) return 1;
    if (n > CONTRACT_MAX_PAIRS) n = CONTRACT_MAX_PAIRS;
    double before[CONTRACT_MAX_PAIRS], after[CONTRACT_MAX_PAIRS];
    char why[700];
    if (preferences(parent_src, variant, kind, n, before, why, sizeof why)) {
        say_to(err, errlen, "the original reward on the contract pairs: %s", why);
        return -2;
    }
    if (preferences(revised_src, variant, kind, n, after, why, sizeof why)) {
        say_to(err, errlen, "the revised reward on the contract pairs: %s", why);
        return -1;
    }
    res->pairs = n;
    for (int k = 0; k < n; k++) {
        res->shift[k] = (double)(direction * sign) * (after[k] - before[k]);
        res->held += res->shift[k] > 1e-6;
    }
    return 0;
}
