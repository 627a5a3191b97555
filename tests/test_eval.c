/* The evaluator (docs/evaluator.md) on hand-built levels whose scores are worked out
 * by hand in the comments, and the eval command. */
#include "harness.h"
#include "eval.h"
#include "dungeon.h"
#include "eval_reference.h"
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* . EMPTY  # WALL  @ PLAYER  b BAT  s SCORPION  x SPIDER  k KEY  D DOOR  T TREASURE */
typedef pcg_test_grid grid_t;
#define GRID PCG_GRID

static const double third = 1.0 / 3.0;


static eval_level_t score(int scenario, const grid_t *g)
{
    eval_level_t m;
    const eval_scenario_t *s = eval_scenario(scenario);
    assert_non_null(s);
    eval_level(s, &g->l, &m);
    return m;
}

static double score_of(int scenario, const grid_t *g)
{
    return score(scenario, g).score;
}

static void eval_presets(void **state)
{
    (void)state;
    assert_int_equal(eval_n_scenarios(), 4);
    assert_null(eval_scenario(0));
    assert_null(eval_scenario(5));
    const eval_scenario_t *s1 = eval_scenario(1), *s2 = eval_scenario(2), *s3 = eval_scenario(3),
                          *s4 = eval_scenario(4);
    assert_int_equal(s1->kind, EVAL_ENCOUNTER);
    assert_int_equal(s1->variant, VARIANT_DUNGEON);
    assert_true(s1->enemies[0] == 1 && s1->enemies[1] == 0 && s1->enemies[2] == 0);
    assert_true(s2->enemies[0] == 1 && s2->enemies[1] == 1 && s2->enemies[2] == 0);
    assert_non_null(strstr(s2->story, "both of monsters: BAT, SCORPION"));
    assert_int_equal(s3->kind, EVAL_KEYDOOR);
    assert_int_equal(s3->variant, VARIANT_TREASURE);
    assert_int_equal(s3->gate, TILE_KEY);
    assert_int_equal(s4->gate, TILE_BAT);
    assert_non_null(strstr(s4->story, "The BAT holds the key"));
    for (int i = 1; i <= 4; i++) assert_int_equal(eval_scenario(i)->number, i);
}

/* The paper's example: truth [1,0,0], prediction [1,1,0] -> 2/3. */
static void eval_paper_example(void **state)
{
    (void)state;
    grid_t g;
    /* route: row 1 from the player (1,1) over the key (1,5) to the door
     * (1,9); BAT (3,2) and SCORPION (3,8) are two rows below it */
    GRID(g, "###########",
            "#@...k...D#",
            "###########",
            "##b#####s##",
            "###########");
    eval_level_t m = score(1, &g);
    assert_true(m.met[0] && m.met[1] && !m.met[2]);
    assert_int_equal(m.solutions, 1);
    assert_true(m.playable);
    assert_int_equal(m.route, 8);
    assert_int_equal(m.player_door, 8);
    assert_near(m.score, 2 * third, 1e-12);
    assert_near(score_of(2, &g), 1.0, 1e-12);
    /* the scorpion three rows away is not met: [1,0,0] */
    GRID(g, "###########",
            "#@...k...D#",
            "###########",
            "##b########",
            "########s##");
    m = score(1, &g);
    assert_true(m.met[0] && !m.met[1] && !m.met[2]);
    assert_near(m.score, 1.0, 1e-12);
    assert_near(score_of(2, &g), 2 * third, 1e-12);
}

/* The 5x5 window: Chebyshev distance 2 counts, also diagonally; 3 does not;
 * an enemy on the route itself is met. */
static void eval_enemy_window(void **state)
{
    (void)state;
    grid_t g;
    /* route (0,0)..(0,3); spider (2,5) is 2 rows and 2 columns from the door */
    GRID(g, "@k.D...",
            "#######",
            "#####x#");
    eval_level_t m = score(1, &g);
    assert_true(!m.met[0] && !m.met[1] && m.met[2]);
    assert_near(m.score, third, 1e-12); /* [0,0,1] vs [1,0,0] */
    GRID(g, "@k.D...",
            "#######",
            "######x");
    m = score(1, &g);
    assert_true(!m.met[2]);
    assert_near(m.score, 2 * third, 1e-12); /* [0,0,0] vs [1,0,0] */
    /* enemies standing on the route: passable and met */
    GRID(g, "@bks.D");
    m = score(2, &g);
    assert_true(m.met[0] && m.met[1] && !m.met[2]);
    assert_int_equal(m.solutions, 1);
    assert_int_equal(m.route, 5);
    assert_near(m.score, 1.0, 1e-12);
    /* ... and past the door, beyond the window: not met */
    GRID(g, "@k.D...b");
    assert_false(score(1, &g).met[0]);
    GRID(g, "@k.D.b..");
    assert_true(score(1, &g).met[0]);
}

/* p_e is an OR over all solutions: here only the second key's route
 * passes near the bat. */
static void eval_enemy_on_any_solution(void **state)
{
    (void)state;
    grid_t g;
    /* key (0,2): route along row 0.  Key (3,1): down column 1, d1 = 4 = d1',
     * and the bat (5,1) is 2 rows below it. */
    GRID(g, "@.k.D",
            "#.###",
            "#.###",
            "#k###",
            "#####",
            "#b###");
    eval_level_t m = score(1, &g);
    assert_int_equal(m.solutions, 2);
    assert_int_equal(m.route, 4);
    assert_true(m.met[0]);
    assert_near(m.score, 1.0, 1e-12);
}

/* A key behind another key is no solution of its own: its bat is not met. */
static void eval_key_behind_key(void **state)
{
    (void)state;
    grid_t g;
    /* k1 (1,3): d1 = 2 = d1', d2 = 5 -> solution, route (1,1..3) and back
     * down column 1 to the door (3,2).  k2 (1,5): d1 = 4 through k1, and no
     * route avoids k1 -> not a solution.  The bat (1,7) is 2 from k2 but 4
     * from every cell of k1's route. */
    GRID(g, "#########",
            "#@.k.k.b#",
            "#.#######",
            "#.D.....#",
            "#########");
    eval_level_t m = score(1, &g);
    assert_int_equal(m.solutions, 1);
    assert_false(m.met[0]);
    assert_int_equal(m.route, 7);
    assert_int_equal(m.player_door, 3);
    assert_near(m.score, 2 * third, 1e-12); /* [0,0,0] vs [1,0,0] */
    assert_near(score_of(2, &g), third, 1e-12);
    /* a corridor: the second key is only reachable over the first */
    GRID(g, "@.k.k.D");
    m = score(1, &g);
    assert_int_equal(m.solutions, 1);
    assert_int_equal(m.route, 6);
    /* a longer key-free detour does not help: d1' = 12 != d1 = 4 */
    GRID(g, "#########",
            "#@.k.k.b#",
            "#.#####.#",
            "#.......#",
            "####D####");
    m = score(1, &g);
    assert_int_equal(m.solutions, 1);
    assert_false(m.met[0]);
    assert_near(m.score, 2 * third, 1e-12);
}

/* The player->key leg is the key-avoiding route, not the plain shortest path
 * rebuilt on the unblocked search. */
static void eval_key_avoiding_route(void **state)
{
    (void)state;
    grid_t g;
    /* Player (0,0), door (1,0).  Keys: k'' (0,2) -> solution (d1 = d1' = 2);
     * k' (0,4) -> no solution (only over k'').  K (6,8): d1 = 14 over the top
     * row or along row 4; the up-first rebuild on the unblocked search would
     * climb column 8 and run along row 0, but row 0 is blocked by keys, so
     * the key-avoiding route runs along row 4: d1' = 14 = d1 -> solution.
     * The bat (1,6) sits in a pocket next to row 0, 3 rows from row 4. */
    GRID(g, "@.k.k....",
            "D#####b#.",
            ".#######.",
            ".#######.",
            ".........",
            "########.",
            "########k");
    eval_level_t m = score(1, &g);
    assert_int_equal(m.solutions, 2);
    assert_false(m.met[0]);
    assert_int_equal(m.route, 5); /* k'': 2 + 3 */
    assert_int_equal(m.player_door, 1);
    assert_near(m.score, 2 * third, 1e-12);
}

static void eval_no_solution(void **state)
{
    (void)state;
    grid_t g;
    /* the key is walled off: p would be [0,0,0] (2/3) but there is no solution */
    GRID(g, "@..#k.D");
    eval_level_t m = score(1, &g);
    assert_int_equal(m.solutions, 0);
    assert_false(m.playable);
    assert_int_equal(m.player_door, -1);
    assert_int_equal(m.route, -1);
    assert_near(m.score, 0.0, 0);
    /* door reachable but no key at all: playable, still no solution */
    GRID(g, "@b..D");
    m = score(1, &g);
    assert_true(m.playable);
    assert_int_equal(m.solutions, 0);
    assert_false(m.met[0]); /* no route, nothing is met */
    assert_near(m.score, 0.0, 0);
    /* the key is reachable but the door is not */
    GRID(g, "@.k#.D");
    m = score(2, &g);
    assert_int_equal(m.solutions, 0);
    assert_near(m.score, 0.0, 0);
    /* the only key is shut in by walls next to the player */
    GRID(g, "@.#k#",
            "..###",
            "....D");
    assert_near(score_of(1, &g), 0.0, 0);
}

/* Tie order of the path rule decides which enemy is met. */
static void eval_tie_up_before_left(void **state)
{
    (void)state;
    grid_t g;
    /* from the key (6,6) back to the player (0,0) up comes first: the path
     * climbs column 6 and runs along row 0.  The bat (6,2) is 4 columns from
     * column 6; a left-first rebuild (row 6, column 0) would meet it. */
    GRID(g, "@......",
            ".......",
            ".......",
            ".......",
            ".......",
            "......D",
            "..b...k");
    eval_level_t m = score(1, &g);
    assert_int_equal(m.solutions, 1);
    assert_false(m.met[0]);
    assert_near(m.score, 2 * third, 1e-12);
    /* the same bat moved next to column 6 (2 columns away) is met */
    GRID(g, "@......",
            ".......",
            "....b..",
            ".......",
            ".......",
            "......D",
            "......k");
    m = score(1, &g);
    assert_true(m.met[0]);
    assert_near(m.score, 1.0, 1e-12);
}

static void eval_tie_up_before_down(void **state)
{
    (void)state;
    grid_t g;
    /* player (3,0), key (3,6) behind a wall in column 3: over the top and
     * under the bottom both take 12 steps; up wins, so the route goes over
     * the top (and hugs its left corner).  The bat (1,1) is met; the
     * scorpion (6,3) under the wall is 3 from the door (4,6) and from (3,0). */
    GRID(g, ".......",
            ".b.#...",
            "...#...",
            "@..#..k",
            "...#..D",
            "...#...",
            "...s...");
    eval_level_t m = score(2, &g);
    assert_true(m.met[0]);
    assert_false(m.met[1]);
    assert_int_equal(m.route, 13);
    assert_near(m.score, 2 * third, 1e-12); /* [1,0,0] vs [1,1,0] */
    assert_near(score_of(1, &g), 1.0, 1e-12);
}

static void eval_tie_left_before_right(void **state)
{
    (void)state;
    grid_t g;
    /* player (0,3), key (6,3) under a wall in row 3: around either end in 12
     * steps; at (4,3) left wins over right.  The spider (2,6) is 3 from
     * every cell of that route; a right-first rebuild would meet it. */
    GRID(g, "...@...",
            ".......",
            "......x",
            ".#####.",
            ".......",
            ".......",
            "...kD..");
    eval_level_t m = score(1, &g);
    assert_int_equal(m.solutions, 1);
    assert_false(m.met[2]);
    assert_near(m.score, 2 * third, 1e-12);
}

/* Duplicates of PLAYER and DOOR: the first in row-major order is used. */
static void eval_duplicates(void **state)
{
    (void)state;
    grid_t g;
    /* the first player (0,0) is shut in; the second would have a solution */
    GRID(g, "@#k.D",
            "##...",
            "@....");
    eval_level_t m = score(1, &g);
    assert_int_equal(m.solutions, 0);
    assert_false(m.playable);
    assert_near(m.score, 0.0, 0);
    /* the first player has the solution, the second is shut in */
    GRID(g, "@.k.D",
            "#####",
            "@#...");
    m = score(1, &g);
    assert_int_equal(m.solutions, 1);
    assert_near(m.score, 2 * third, 1e-12);
    /* two doors: the route ends at the first (0,4); the bat (4,2) is 2 from
     * the second door (4,4) but 4 rows from the first route */
    GRID(g, "@.k.D",
            ".....",
            ".....",
            ".....",
            "..b.D");
    m = score(1, &g);
    assert_int_equal(m.player_door, 4);
    assert_int_equal(m.route, 4);
    assert_false(m.met[0]);
    assert_near(m.score, 2 * third, 1e-12);
    /* a second door is passable like any tile but WALL */
    GRID(g, "@.D.k.D");
    m = score(1, &g);
    assert_int_equal(m.player_door, 2);
    assert_int_equal(m.solutions, 1);
    assert_int_equal(m.route, 6); /* 4 to the key, 2 back to the first door */
}

static void eval_missing_tiles(void **state)
{
    (void)state;
    grid_t g;
    GRID(g, "..k.D");
    eval_level_t m = score(1, &g);
    assert_int_equal(m.missing, TILE_PLAYER);
    assert_near(m.score, 0.0, 0);
    assert_int_equal(m.player_door, -1);
    GRID(g, "@.k.b");
    m = score(2, &g);
    assert_int_equal(m.missing, TILE_DOOR);
    assert_near(m.score, 0.0, 0);
    /* treasure scenarios need PLAYER and TREASURE */
    GRID(g, "@k#..",
            "..D..");
    m = score(3, &g);
    assert_int_equal(m.missing, TILE_TREASURE);
    assert_false(m.playable);
    assert_near(m.score, 0.0, 0);
    GRID(g, ".k#T.",
            "..D..");
    m = score(3, &g);
    assert_int_equal(m.missing, TILE_PLAYER);
    assert_near(m.score, 0.0, 0);
    GRID(g, "@.k.D");
    assert_int_equal(score(1, &g).missing, 0);
}

/* Key-door scenarios: Player -> G -> Door -> Treasure. */
static void eval_treasure_playable(void **state)
{
    (void)state;
    grid_t g;
    /* doors blocking: the player's room is columns 0-3, with the key; the
     * treasure (1,6) is behind the door (2,4) */
    GRID(g, "@.k.#...",
            "....#.T.",
            "....D...",
            "....#...");
    eval_level_t m = score(3, &g);
    assert_true(m.playable);
    assert_int_equal(m.solutions, 1);
    assert_int_equal(m.player_gate, 2);
    assert_int_equal(m.gate_door, 4);
    assert_int_equal(m.player_treasure, 9);
    assert_int_equal(m.player_door, 6);
    assert_near(m.score, 1.0, 0);
    /* scenario 4 wants a bat as the gate: none here */
    m = score(4, &g);
    assert_false(m.playable);
    assert_near(m.score, 0.0, 0);
    /* with a bat in the room instead of the key, and a key in the treasure room */
    GRID(g, "@...#...",
            "..b.#.T.",
            "....D.k.",
            "....#...");
    assert_near(score_of(4, &g), 1.0, 0);
    assert_near(score_of(3, &g), 0.0, 0);
    /* two gates in the room: both count as solutions; the nearest is reported */
    GRID(g, "@.k.#...",
            "....#.T.",
            "...kD...",
            "....#...");
    m = score(3, &g);
    assert_int_equal(m.solutions, 2);
    assert_int_equal(m.player_gate, 2);
}

static void eval_treasure_unplayable(void **state)
{
    (void)state;
    grid_t g;
    /* the key is inside the treasure room */
    GRID(g, "@...#...",
            "....#.T.",
            "....D.k.",
            "....#...");
    eval_level_t m = score(3, &g);
    assert_false(m.playable);
    assert_int_equal(m.solutions, 0);
    assert_int_equal(m.player_gate, -1);
    assert_near(m.score, 0.0, 0);
    /* a gap in the wall: the treasure is reachable without the door */
    GRID(g, "@.k.#...",
            "....#.T.",
            "....D...",
            ".......#");
    m = score(3, &g);
    assert_false(m.playable);
    assert_near(m.score, 0.0, 0);
    /* no door at all: the treasure is shut in */
    GRID(g, "@.k.#...",
            "....#.T.",
            "....#...",
            "....#...");
    m = score(3, &g);
    assert_int_equal(m.player_treasure, -1);
    assert_near(m.score, 0.0, 0);
    /* the key is reachable only through a first door: with doors blocking
     * it is not reachable, so the level is not playable */
    GRID(g, "@.#...#...",
            "..D.k.D.T.",
            "..#...#...");
    m = score(3, &g);
    assert_false(m.playable);
    assert_near(m.score, 0.0, 0);
    /* the door is walled off from the treasure */
    GRID(g, "@.k.#.##",
            "....D#T.",
            "....#.##");
    assert_near(score_of(3, &g), 0.0, 0);
}

/* The first TREASURE in row-major order is the one that counts. */
static void eval_treasure_duplicates(void **state)
{
    (void)state;
    grid_t g;
    /* first treasure (0,6) is behind the door, the second (3,1) is in the
     * player's room: the first decides -> playable */
    GRID(g, "@.k.#.T.",
            "....#...",
            "....D...",
            ".T..#...");
    assert_near(score_of(3, &g), 1.0, 0);
    /* first treasure (0,1) in the player's room -> not playable */
    GRID(g, "@T..#...",
            "..k.#.T.",
            "....D...",
            "....#...");
    assert_near(score_of(3, &g), 0.0, 0);
}

static void eval_metrics(void **state)
{
    (void)state;
    grid_t g;
    /* EMPTY 2, WALL 1, PLAYER 1: shares 1/2, 1/4, 1/4 -> 1.5 bits */
    GRID(g, "@.", ".#");
    eval_level_t m = score(1, &g);
    assert_int_equal(m.counts[TILE_EMPTY], 2);
    assert_int_equal(m.counts[TILE_WALL], 1);
    assert_int_equal(m.counts[TILE_PLAYER], 1);
    assert_int_equal(m.counts[TILE_KEY], 0);
    assert_near(m.entropy, 1.5, 1e-12);
    assert_near(m.wall_share, 0.25, 1e-12);
    GRID(g, "....");
    m = score(1, &g);
    assert_near(m.entropy, 0.0, 0);
    assert_false(signbit(m.entropy));
    /* eight tile types, equal shares -> 3 bits */
    GRID(g, "@bsxkDT#");
    assert_near(score(1, &g).entropy, 3.0, 1e-12);
}

/* Diversity = mean pairwise Hamming distance. */
static void eval_diversity_hamming(void **state)
{
    (void)state;
    grid_t a, b, c, d;
    GRID(a, "..", "..");
    GRID(b, ".#", "..");  /* 1 from a */
    GRID(c, "##", "@.");  /* 3 from a, 2 from b */
    GRID(d, ".", ".", "."); /* another size: differs in all 4 cells of the larger */
    level_t set[4] = {a.l, b.l, c.l, d.l};
    assert_near(eval_diversity(set, 3), 2.0, 1e-12);
    assert_near(eval_diversity(set, 4), 18.0 / 6, 1e-12);
    assert_near(eval_diversity(set, 1), 0.0, 0);
    level_t same[3] = {c.l, c.l, c.l};
    assert_near(eval_diversity(same, 3), 0.0, 0);
    eval_summary_t sum;
    eval_levels(eval_scenario(1), set, 3, NULL, &sum);
    assert_near(sum.diversity, 2.0, 1e-12);
    assert_near(sum.diversity_share, 0.5, 1e-12);
    eval_levels(eval_scenario(1), set, 4, NULL, &sum);
    /* shares: 1/4 3/4 2/4 and three pairs of 1 */
    assert_near(sum.diversity_share, 4.5 / 6, 1e-12);
}

/* The counting shortcut agrees with the plain pairwise sum on random sets. */
static void eval_diversity_random(void **state)
{
    (void)state;
    enum { N = 23, H = 6, W = 5 };
    static unsigned char tiles[N][H * W];
    level_t set[N];
    unsigned x = 12345;
    for (int i = 0; i < N; i++) {
        for (int c = 0; c < H * W; c++) {
            x = x * 1103515245u + 12345u;
            tiles[i][c] = (unsigned char)(1 + (x >> 16) % 4); /* few tiles: many equal cells */
        }
        set[i].h = H, set[i].w = W, set[i].t = tiles[i];
    }
    double total = 0;
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            for (int c = 0; c < H * W; c++) total += tiles[i][c] != tiles[j][c];
    double expect = total / (N * (N - 1) / 2);
    assert_true(expect > 5 && expect < H * W);
    assert_near(eval_diversity(set, N), expect, 1e-9);
}

static void eval_fitness_and_summary(void **state)
{
    (void)state;
    grid_t g1, g2, g3;
    GRID(g1, "@bk.D"); /* [1,0,0] met, scenario 1 -> 1 */
    GRID(g2, "@sk.D"); /* [0,1,0] -> 1/3 */
    GRID(g3, "@#k.D"); /* no solution -> 0, not playable */
    level_t set[3] = {g1.l, g2.l, g3.l};
    eval_level_t per[3];
    eval_summary_t sum;
    double f = eval_levels(eval_scenario(1), set, 3, per, &sum);
    assert_near(f, (1.0 + third) / 3, 1e-12);
    assert_near(sum.fitness, f, 0);
    assert_near(per[0].score, 1.0, 1e-12);
    assert_near(per[1].score, third, 1e-12);
    assert_near(per[2].score, 0.0, 0);
    assert_int_equal(sum.n, 3);
    assert_int_equal(sum.n_playable, 2);
    assert_near(sum.playable_share, 2.0 / 3, 1e-12);
    assert_near(sum.playable_wall_share, 0.0, 0); /* the playable ones have no walls */
    assert_near(sum.mean_solutions, 2.0 / 3, 1e-12);
    /* scenario 2 on the same set: [1,0,0] -> 2/3, [0,1,0] -> 2/3 */
    assert_near(eval_levels(eval_scenario(2), set, 3, NULL, NULL), 4.0 / 9, 1e-12);
    /* nothing playable: the wall share of playable levels is undefined (-1) */
    eval_levels(eval_scenario(1), set + 2, 1, NULL, &sum);
    assert_int_equal(sum.n_playable, 0);
    assert_near(sum.playable_wall_share, -1.0, 0);
    assert_near(eval_levels(eval_scenario(1), set, 0, NULL, &sum), 0.0, 0);
}

/* The batch scorer (parallel) agrees with the per-level scorer. */
static void eval_batch_matches(void **state)
{
    (void)state;
    enum { N = 200, S = 16 };
    static unsigned char tiles[N][S * S];
    level_t set[N];
    float scores[N];
    unsigned x = 777;
    for (int i = 0; i < N; i++) {
        for (int c = 0; c < S * S; c++) {
            x = x * 1103515245u + 12345u;
            unsigned v = (x >> 16) % 100;
            tiles[i][c] = v < 55 ? TILE_EMPTY : v < 85 ? TILE_WALL : v < 90 ? TILE_KEY : (unsigned char)(TILE_BAT + v % 3);
        }
        tiles[i][1 * S + 1] = TILE_PLAYER;
        tiles[i][(S - 2) * S + S - 2] = i % 2 ? TILE_DOOR : TILE_TREASURE;
        if (i % 2 == 0) tiles[i][7 * S + 8] = TILE_DOOR;
        set[i].h = set[i].w = S, set[i].t = tiles[i];
    }
    for (int sc = 1; sc <= 4; sc++) {
        const eval_scenario_t *s = eval_scenario(sc);
        double mean = eval_score_batch(s, set, N, scores), total = 0;
        int nonzero = 0;
        for (int i = 0; i < N; i++) {
            eval_level_t m;
            eval_level(s, &set[i], &m);
            assert_true(fabs(scores[i] - m.score) < 1e-6);
            total += m.score;
            nonzero += m.score > 0;
        }
        assert_near(mean, total / N, 1e-9);
        if (sc <= 2) assert_true(nonzero > 0); /* the set exercises real solutions */
    }
}

static void eval_matches_reference(void **state)
{
    (void)state;
    static unsigned char t[PCG_MAX_CELLS];
    unsigned x = 2024;
    int solved[5] = {0}, nonzero[5] = {0}, partial = 0;
    for (int it = 0; it < 6000; it++) {
        int h = it % 3 ? 16 : 4 + (int)(x % 13), w = it % 3 ? 16 : 3 + (int)((x >> 4) % 17);
        random_level(&x, t, h, w);
        level_t l = {h, w, t};
        for (int sc = 1; sc <= 4; sc++) {
            const eval_scenario_t *s = eval_scenario(sc);
            eval_level_t m;
            eval_level(s, &l, &m);
            int sol, met[3];
            double expect = sc <= 2 ? ref_encounter(s, &l, &sol, met) : ref_keydoor(s, &l, &sol);
            if (fabs(m.score - expect) > 1e-12 || m.solutions != sol)
                fail_msg("level %d scenario %d: score %g solutions %d, expected %g and %d", it, sc, m.score,
                         m.solutions, expect, sol);
            if (sc <= 2 && sol) assert_memory_equal(m.met, met, sizeof met);
            solved[sc] += sol > 0;
            nonzero[sc] += m.score > 0;
            partial += sc <= 2 && m.score > 0 && m.score < 1;
        }
    }
    /* the random set reaches every outcome */
    for (int sc = 1; sc <= 2; sc++) assert_true(solved[sc] > 1000 && nonzero[sc] > 1000);
    for (int sc = 3; sc <= 4; sc++) assert_true(solved[sc] > 300);
    assert_true(partial > 1000);
}

/* The batch scorer reads only what the score needs (its searches write
 * distances at keys and doors alone): its scores equal eval_level's on
 * random levels of many shapes, rows wider than a bit-row word among them,
 * for the four scenarios and a path-length target. */
static void eval_batch_matches_shapes(void **state)
{
    (void)state;
    enum { N = 64 };
    static unsigned char t[N][PCG_MAX_CELLS];
    eval_scenario_t path = {0, "", "Player -> Key -> Door", VARIANT_DUNGEON, EVAL_PATHLENGTH, {0, 0, 0}, 0, 10, 2, 0, 0, 0};
    static const int shapes[][2] = {{16, 16}, {5, 7}, {13, 29}, {64, 64}, {3, 100}, {1, 300}, {40, 33}, {9, 64}};
    unsigned x = 99;
    int nonzero = 0;
    for (int round = 0; round < 40; round++) {
        level_t set[N];
        float scores[N];
        for (int i = 0; i < N; i++) {
            int h = shapes[(round + i) % 8][0], w = shapes[(round + i) % 8][1];
            random_level(&x, t[i], h, w);
            set[i] = (level_t){h, w, t[i]};
        }
        for (int sc = 0; sc <= 4; sc++) {
            const eval_scenario_t *s = sc ? eval_scenario(sc) : &path;
            eval_score_batch(s, set, N, scores);
            for (int i = 0; i < N; i++) {
                eval_level_t m;
                eval_level(s, &set[i], &m);
                if (scores[i] != (float)m.score)
                    fail_msg("round %d level %d (%dx%d) scenario %d: batch %g, eval_level %g", round, i, set[i].h,
                             set[i].w, sc, scores[i], m.score);
                nonzero += m.score > 0;
            }
        }
    }
    assert_true(nonzero > 1000); /* the set has solutions to agree on */
}

/* --- Word2Minecraft's metrics and the routes behind the distances --- */

static void eval_w2m_objectives(void **state)
{
    (void)state;
    int t[8];
    assert_int_equal(eval_objective_tiles(eval_scenario(1), t), 3);
    assert_true(t[0] == TILE_BAT && t[1] == TILE_KEY && t[2] == TILE_DOOR);
    assert_int_equal(eval_objective_tiles(eval_scenario(2), t), 4);
    assert_true(t[0] == TILE_BAT && t[1] == TILE_SCORPION && t[2] == TILE_KEY && t[3] == TILE_DOOR);
    assert_int_equal(eval_objective_tiles(eval_scenario(3), t), 3);
    assert_true(t[0] == TILE_KEY && t[1] == TILE_DOOR && t[2] == TILE_TREASURE);
    assert_int_equal(eval_objective_tiles(eval_scenario(4), t), 3);
    assert_true(t[0] == TILE_BAT && t[1] == TILE_DOOR && t[2] == TILE_TREASURE);
}

static void eval_w2m_metrics(void **state)
{
    (void)state;
    grid_t a, b, c;
    /* scenario 1's objectives BAT, KEY, DOOR at 2, 2 and 5 steps: ASPAO 3 */
    GRID(a, "@.b.",
            ".##.",
            "k..D");
    eval_level_t m = score(1, &a);
    assert_true(m.objectives_reachable);
    assert_near(m.objective_path, 3.0, 1e-12);
    /* scenario 2 also wants a SCORPION: not valid */
    m = score(2, &a);
    assert_false(m.objectives_reachable);
    assert_near(m.objective_path, -1.0, 0);
    /* a second BAT sealed off: every objective cell counts, so not valid */
    GRID(b, "@.k#b",
            "...#.",
            "D..##");
    m = score(1, &b);
    assert_false(m.objectives_reachable);
    /* key-door: KEY 2, DOOR 4, TREASURE 6 steps (through the door) */
    GRID(c, "@.k#T",
            "...D.");
    m = score(3, &c);
    assert_true(m.objectives_reachable);
    assert_near(m.objective_path, 4.0, 1e-12);
    assert_false(score(4, &c).objectives_reachable); /* no BAT */

    /* the set: ASPAO over the valid levels, UTR over all, VUTR with the
     * invalid ones counting 0 */
    level_t set[2] = {a.l, b.l};
    eval_summary_t sum;
    eval_levels(eval_scenario(1), set, 2, NULL, &sum);
    assert_int_equal(sum.n_valid, 1);
    assert_near(sum.aspao, 3.0, 1e-12);
    assert_near(sum.utr, (2.0 / 12 + 4.0 / 15) / 2, 1e-12);
    assert_near(sum.vutr, (2.0 / 12) / 2, 1e-12);
    eval_levels(eval_scenario(2), set, 2, NULL, &sum);
    assert_int_equal(sum.n_valid, 0);
    assert_near(sum.aspao, -1.0, 0);
    assert_near(sum.vutr, 0.0, 0);
}

/* Objective tiles and cells outside the tile set: a gate id no cell
 * holds is an objective type the level lacks (not valid), and a byte past
 * 31 is no objective whatever its low bits (39 is KEY's id plus 32). */
static void eval_w2m_ids_past_31(void **state)
{
    (void)state;
    grid_t g;
    GRID(g, "@.D.T");
    eval_scenario_t s = *eval_scenario(3);
    eval_level_t m;
    for (int gate = 32; gate < 40; gate++) {
        s.gate = gate;
        eval_level(&s, &g.l, &m);
        if (m.objectives_reachable) fail_msg("gate %d, which no cell holds, counts as reached", gate);
        assert_near(m.objective_path, -1.0, 0);
    }
    s.gate = 300;
    eval_level(&s, &g.l, &m);
    assert_false(m.objectives_reachable);
    GRID(g, "@k.DT",
            "#.###");
    g.t[6] = TILE_KEY + 32;
    eval_level(eval_scenario(3), &g.l, &m);
    assert_true(m.objectives_reachable);
    assert_near(m.objective_path, (1 + 3 + 4) / 3.0, 1e-12);
}

typedef struct {
    int n;
    int kind[600], from[600], to[600], len[600];
    short cells[8][PCG_MAX_CELLS];
} legs_seen;

static int collect_leg(void *ctx, const eval_leg_t *leg)
{
    legs_seen *s = ctx;
    assert_true(s->n < 600);
    s->kind[s->n] = leg->kind;
    s->from[s->n] = leg->from;
    s->to[s->n] = leg->to;
    s->len[s->n] = leg->n;
    if (s->n < 8) memcpy(s->cells[s->n], leg->cells, sizeof(short) * (size_t)leg->n);
    s->n++;
    return 0;
}

static void eval_routes_hand(void **state)
{
    (void)state;
    static legs_seen s;
    grid_t g;
    GRID(g, "@.b.",
            ".##.",
            "k..D");
    memset(&s, 0, sizeof s);
    assert_int_equal(eval_routes(eval_scenario(1), &g.l, collect_leg, &s), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.kind[0], EVAL_LEG_PLAYER_DOOR);
    /* rebuilt from the door taking up before left: over the top row */
    static const short top[6] = {0, 1, 2, 3, 7, 11};
    assert_int_equal(s.len[0], 6);
    assert_memory_equal(s.cells[0], top, sizeof top);
    assert_int_equal(s.kind[1], EVAL_LEG_PLAYER_KEY);
    assert_true(s.from[1] == 0 && s.to[1] == 8 && s.len[1] == 3);
    assert_int_equal(s.kind[2], EVAL_LEG_KEY_DOOR);
    assert_true(s.from[2] == 8 && s.to[2] == 11 && s.len[2] == 4);
    assert_string_equal(eval_leg_name(EVAL_LEG_KEY_DOOR), "key -> door");
    /* key-door: door, treasure (through the door), gate, gate -> door */
    GRID(g, "@.k#T",
            "...D.");
    memset(&s, 0, sizeof s);
    assert_int_equal(eval_routes(eval_scenario(3), &g.l, collect_leg, &s), 0);
    assert_int_equal(s.n, 4);
    int want[4] = {EVAL_LEG_PLAYER_DOOR, EVAL_LEG_PLAYER_TREASURE, EVAL_LEG_PLAYER_GATE, EVAL_LEG_GATE_DOOR};
    for (int i = 0; i < 4; i++) assert_int_equal(s.kind[i], want[i]);
    assert_true(s.to[1] == 4 && s.len[1] == 7);
    int through = 0;
    for (int i = 0; i < s.len[1]; i++) through |= s.cells[1][i] == 8;
    assert_true(through);
    assert_true(s.from[3] == 2 && s.to[3] == 8 && s.len[3] == 3);
}

static int stop_at_once(void *ctx, const eval_leg_t *leg)
{
    (void)leg;
    ++*(int *)ctx;
    return 7;
}

/* On random levels every leg is a walkable 4-connected path between its
 * ends, and the legs' lengths are the distances eval_level reports. */
static void eval_routes_match_metrics(void **state)
{
    (void)state;
    static unsigned char t[PCG_MAX_CELLS];
    static legs_seen s;
    unsigned x = 77;
    for (int it = 0; it < 1500; it++) {
        int h = 16, w = 16;
        random_level(&x, t, h, w);
        level_t l = {h, w, t};
        for (int sc = 1; sc <= 4; sc++) {
            const eval_scenario_t *sce = eval_scenario(sc);
            eval_level_t m;
            eval_level(sce, &l, &m);
            s.n = 0;
            assert_int_equal(eval_routes(sce, &l, collect_leg, &s), 0);
            int keys = 0, best = -1, door = -1, gate = -1, gate_door = -1, treasure = -1;
            for (int i = 0; i < s.n; i++) {
                int len = s.len[i] - 1;
                if (s.kind[i] == EVAL_LEG_PLAYER_DOOR) door = len;
                if (s.kind[i] == EVAL_LEG_PLAYER_KEY) {
                    keys++;
                    int total = len + s.len[i + 1] - 1;
                    assert_int_equal(s.kind[i + 1], EVAL_LEG_KEY_DOOR);
                    if (best < 0 || total < best) best = total;
                }
                if (s.kind[i] == EVAL_LEG_PLAYER_GATE) gate = len;
                if (s.kind[i] == EVAL_LEG_GATE_DOOR) gate_door = len;
                if (s.kind[i] == EVAL_LEG_PLAYER_TREASURE) treasure = len;
            }
            assert_int_equal(door, m.player_door);
            if (sc <= 2) {
                assert_int_equal(keys, m.solutions);
                assert_int_equal(best, m.route);
            } else {
                assert_int_equal(gate, m.player_gate);
                assert_int_equal(gate_door, m.gate_door);
                if (!m.missing) assert_int_equal(treasure, m.player_treasure);
            }
            int stops = 0; /* a stop from the callback ends the walk and is returned */
            assert_int_equal(eval_routes(sce, &l, stop_at_once, &stops), s.n ? 7 : 0);
            assert_int_equal(stops, s.n ? 1 : 0);
            /* walkable and connected, checked on the first eight legs kept */
            for (int i = 0; i < s.n && i < 8; i++) {
                assert_int_equal(s.cells[i][0], s.from[i]);
                assert_int_equal(s.cells[i][s.len[i] - 1], s.to[i]);
                for (int k = 0; k < s.len[i]; k++) {
                    int cell = s.cells[i][k];
                    assert_int_not_equal(t[cell], TILE_WALL);
                    if (k) {
                        int prev = s.cells[i][k - 1];
                        assert_int_equal(abs(cell / w - prev / w) + abs(cell % w - prev % w), 1);
                    }
                }
            }
        }
    }
}

/* --- the command --- */

static const char *write_level(const char *name, const char *text)
{
    static char paths[8][512];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 512, "%s/%s", pcg_test_tmpdir(), name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static void eval_cli_json(void **state)
{
    (void)state;
    /* the paper example (2/3 for scenario 1) and a level without solution */
    const char *a = write_level("eval_a.txt", "# paper example\n"
                                              "2 2 2 2 2 2 2 2 2 2 2\n"
                                              "2 3 1 1 1 7 1 1 1 8 2\n"
                                              "2 2 2 2 2 2 2 2 2 2 2\n"
                                              "2 2 4 2 2 2 2 2 5 2 2\n"
                                              "2 2 2 2 2 2 2 2 2 2 2\n");
    const char *b = write_level("eval_b.txt", "3 1 2 7 1 8\n");
    static char out[65536];
    int rc = pcg_test_sh(out, sizeof out, "%s eval --scenario 1 --json %s %s 2>/dev/null", pcg_test_binary(), a, b);
    assert_int_equal(rc, 0);
    json_error_t jerr;
    json_t *doc = json_loads(out, 0, &jerr);
    if (!doc) fail_msg("eval --json printed invalid JSON: %s\n%s", jerr.text, out);
    assert_int_equal(json_integer_value(json_object_get(doc, "scenario")), 1);
    assert_near(json_real_value(json_object_get(doc, "fitness")), third, 1e-12);
    json_t *levels = json_object_get(doc, "levels");
    assert_int_equal(json_array_size(levels), 2);
    json_t *l0 = json_array_get(levels, 0), *l1 = json_array_get(levels, 1);
    assert_string_equal(json_string_value(json_object_get(l0, "file")), a);
    assert_near(json_real_value(json_object_get(l0, "score")), 2 * third, 1e-12);
    assert_int_equal(json_integer_value(json_object_get(l0, "solutions")), 1);
    assert_true(json_is_true(json_object_get(l0, "playable")));
    assert_true(json_is_true(json_object_get(json_object_get(l0, "met"), "SCORPION")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(l0, "counts"), "WALL")), 44);
    assert_string_equal(json_string_value(json_object_get(l1, "file")), b);
    assert_near(json_real_value(json_object_get(l1, "score")), 0.0, 0);
    assert_int_equal(json_integer_value(json_object_get(l1, "solutions")), 0);
    assert_true(json_is_false(json_object_get(l1, "playable")));
    assert_true(json_is_null(json_object_get(l1, "route")));
    assert_true(json_is_number(json_object_get(doc, "diversity")));
    /* Word2Minecraft: the BAT is walled in and b has none, so no valid level */
    assert_true(json_is_false(json_object_get(l0, "objectives_reachable")));
    assert_true(json_is_null(json_object_get(l0, "aspao")));
    assert_int_equal(json_integer_value(json_object_get(doc, "n_valid")), 0);
    assert_true(json_is_null(json_object_get(doc, "aspao")));
    assert_near(json_real_value(json_object_get(doc, "utr")), (44.0 / 55 + 1.0 / 6) / 2, 1e-12);
    assert_near(json_real_value(json_object_get(doc, "vutr")), 0.0, 0);
    json_decref(doc);

    /* a directory stands for its *.txt files in name order */
    rc = pcg_test_sh(out, sizeof out,
                     "d=%s/eval_dir && rm -rf $d && mkdir -p $d/empty && cp %s $d/level_1.txt && cp %s $d/level_0.txt && "
                     "touch $d/notes.md && %s eval --scenario 1 --json $d 2>/dev/null",
                     pcg_test_tmpdir(), a, b, pcg_test_binary());
    assert_int_equal(rc, 0);
    doc = json_loads(out, 0, &jerr);
    if (!doc) fail_msg("eval --json DIR printed invalid JSON: %s\n%s", jerr.text, out);
    levels = json_object_get(doc, "levels");
    assert_int_equal(json_array_size(levels), 2);
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(levels, 0), "file")), "level_0.txt"));
    assert_near(json_real_value(json_object_get(json_array_get(levels, 1), "score")), 2 * third, 1e-12);
    assert_near(json_real_value(json_object_get(doc, "fitness")), third, 1e-12);
    json_decref(doc);
    rc = pcg_test_sh(out, sizeof out, "%s eval --scenario 1 %s/eval_dir/empty", pcg_test_binary(), pcg_test_tmpdir());
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "holds no level files"));
    /* the table names the files and the fitness */
    rc = pcg_test_sh(out, sizeof out, "%s eval --scenario 2 %s", pcg_test_binary(), a);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "eval_a.txt"));
    assert_non_null(strstr(out, "fitness 1.0000"));
    /* a custom target equal to scenario 2 scores the same, as scenario 0 */
    rc = pcg_test_sh(out, sizeof out, "%s eval --json --target '{\"kind\":\"encounter\",\"enemies\":[\"BAT\",\"SCORPION\"]}' %s %s",
                     pcg_test_binary(), a, b);
    assert_int_equal(rc, 0);
    doc = json_loads(out, 0, &jerr);
    assert_non_null(doc);
    assert_int_equal(json_integer_value(json_object_get(doc, "scenario")), 0);
    assert_near(json_real_value(json_object_get(doc, "fitness")), 0.5, 1e-12); /* (1 + 0) / 2 */
    json_decref(doc);
    /* only the spider wanted: [1,1,0] against [0,0,1] -> 0 for the first level */
    rc = pcg_test_sh(out, sizeof out, "%s eval --target '{\"kind\":\"encounter\",\"enemies\":[\"SPIDER\"]}' %s",
                     pcg_test_binary(), a);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "custom target"));
    assert_non_null(strstr(out, "fitness 0.0000"));
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s eval --target '{\"kind\":\"dragon\"}' %s", pcg_test_binary(), a), 2);
    assert_non_null(strstr(out, "--target"));
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s eval --scenario 1 --target '{}' %s", pcg_test_binary(), a), 2);
    /* treasure scenario */
    const char *t = write_level("eval_t.txt", "3 1 7 2 1 1\n1 1 1 8 1 9\n1 1 1 2 1 1\n");
    rc = pcg_test_sh(out, sizeof out, "%s eval --scenario 3 --json %s", pcg_test_binary(), t);
    assert_int_equal(rc, 0);
    doc = json_loads(out, 0, &jerr);
    assert_non_null(doc);
    assert_near(json_real_value(json_object_get(doc, "fitness")), 1.0, 0);
    /* KEY 2, DOOR 4, TREASURE 6 steps: ASPAO 4; two walls in 18 cells */
    assert_true(json_is_true(json_object_get(json_array_get(json_object_get(doc, "levels"), 0), "objectives_reachable")));
    assert_int_equal(json_integer_value(json_object_get(doc, "n_valid")), 1);
    assert_near(json_real_value(json_object_get(doc, "aspao")), 4.0, 1e-12);
    assert_near(json_real_value(json_object_get(doc, "utr")), 2.0 / 18, 1e-12);
    assert_near(json_real_value(json_object_get(doc, "vutr")), 2.0 / 18, 1e-12);
    json_decref(doc);
    rc = pcg_test_sh(out, sizeof out, "%s eval --scenario 3 %s", pcg_test_binary(), t);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "Word2Minecraft: ASPAO 4.00 steps over 1 valid level (every objective reachable), "
                                "UTR 0.111, VUTR 0.111"));
    rc = pcg_test_sh(out, sizeof out, "%s eval --json --target '{\"kind\":\"keydoor\",\"gate\":\"KEY\"}' %s",
                     pcg_test_binary(), t);
    assert_int_equal(rc, 0);
    doc = json_loads(out, 0, &jerr);
    assert_non_null(doc);
    assert_near(json_real_value(json_object_get(doc, "fitness")), 1.0, 0);
    json_decref(doc);
    rc = pcg_test_sh(out, sizeof out, "%s eval --json --target '{\"kind\":\"keydoor\",\"gate\":\"BAT\"}' %s",
                     pcg_test_binary(), t);
    doc = json_loads(out, 0, &jerr);
    assert_non_null(doc);
    assert_near(json_real_value(json_object_get(doc, "fitness")), 0.0, 0);
    json_decref(doc);
}

static void eval_cli_errors(void **state)
{
    (void)state;
    static char out[8192];
    const char *bin = pcg_test_binary();
    const char *good = write_level("eval_good.txt", "3 7 8\n");
    const char *bad = write_level("eval_bad.txt", "3 7 8\n3 7\n");
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s eval --help", bin), 0);
    assert_non_null(strstr(out, "--scenario"));
    assert_non_null(strstr(out, "Player -> Bat -> Door -> Treasure"));
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s eval %s", bin, good), 2);
    assert_non_null(strstr(out, "--scenario N"));
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s eval --scenario 5 %s", bin, good), 2);
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s eval --scenario x %s", bin, good), 2);
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s eval --scenario 1", bin), 2);
    assert_non_null(strstr(out, "no level files"));
    /* a malformed file: one line naming file and line, nothing on stdout */
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s eval --scenario 1 --json %s %s 2>&1 >/dev/null", bin, good, bad),
                     1);
    char expect[600];
    snprintf(expect, sizeof expect, "%s:2:", bad);
    assert_non_null(strstr(out, expect));
    assert_int_equal((int)(strchr(out, '\n') - out) + 1, (int)strlen(out));
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s eval --scenario 1 --json %s %s 2>/dev/null", bin, good, bad), 1);
    assert_string_equal(out, "");
    /* a file name JSON cannot hold */
    char odd[600];
    snprintf(odd, sizeof odd, "%s/bad\xff.txt", pcg_test_tmpdir());
    FILE *f = fopen(odd, "w");
    assert_non_null(f);
    fputs("3 7 8\n", f);
    fclose(f);
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s eval --scenario 1 --json '%s'", bin, odd), 2);
    assert_non_null(strstr(out, "not valid UTF-8"));
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s eval --scenario 1 '%s'", bin, odd), 0);
    /* a missing file */
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s eval --scenario 1 %s/none.txt", bin, pcg_test_tmpdir()), 1);
    assert_non_null(strstr(out, "none.txt: cannot open"));
}


/* Path-length targets score the shortest solution route by hand-counted
 * steps: 1 within the tolerance, then linearly down to 0 at `length`
 * further steps off. */
static void eval_path_length(void **state)
{
    (void)state;
    eval_scenario_t s = {0, "", "Player -> Key -> Door", VARIANT_DUNGEON, EVAL_PATHLENGTH, {0, 0, 0}, 0, 10, 2, };
    grid_t g;
    eval_level_t m;
    /* a corridor: player (0,0) -> key (0,6) = 6 steps, key -> door (0,10) = 4: route 10 */
    GRID(g, "@.....k...D");
    eval_level(&s, &g.l, &m);
    assert_int_equal(m.solutions, 1);
    assert_int_equal(m.route, 10);
    assert_near(m.score, 1.0, 0);
    /* the key behind the player: 2 steps back, 2 + 2 + 4 = 8 to the door... */
    GRID(g, "k.@...D");
    eval_level(&s, &g.l, &m);
    assert_int_equal(m.route, 2 + 6); /* 2 to the key, 6 back past the player to the door */
    assert_near(m.score, 1.0, 0);     /* 8 is within 10 +- 2 */
    /* a detour: the wall makes player -> key 8 steps; key -> door 2: route 10... */
    GRID(g, "@#k.D",
            ".#.#.",
            ".#.#.",
            ".....");
    eval_level(&s, &g.l, &m);
    assert_int_equal(m.route, 8 + 2);
    assert_near(m.score, 1.0, 0);
    /* too short: route 4, 6 off, 4 beyond the tolerance: 1 - 4/10 */
    GRID(g, "@.k.D");
    eval_level(&s, &g.l, &m);
    assert_int_equal(m.route, 4);
    assert_near(m.score, 0.6, 1e-12);
    /* far too long: 0, never negative */
    s.length = 3, s.tolerance = 0;
    GRID(g, "@.....k...D");
    eval_level(&s, &g.l, &m);
    assert_near(m.score, 0.0, 0);
    /* no solution: 0 */
    s.length = 10, s.tolerance = 2;
    GRID(g, "@..#k.D");
    eval_level(&s, &g.l, &m);
    assert_int_equal(m.route, -1);
    assert_near(m.score, 0.0, 0);
    /* two keys: the shorter solution route counts */
    GRID(g, "@.k..k...D");
    eval_level(&s, &g.l, &m);
    assert_int_equal(m.solutions, 1); /* the far key is only reached over the near one */
    assert_int_equal(m.route, 9);
    assert_near(m.score, 1.0, 0);
    assert_near(eval_route_score(13, 10, 2), 0.9, 1e-12);
    assert_near(eval_route_score(-1, 10, 2), 0.0, 0);
}

static void eval_cli_path_length_target(void **state)
{
    (void)state;
    char dir[512], path[600], out[8192];
    snprintf(dir, sizeof dir, "%s/eval-path", pcg_test_tmpdir());
    assert_int_equal(pcg_test_sh(out, sizeof out, "mkdir -p %s", dir), 0);
    snprintf(path, sizeof path, "%s/a.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("3 1 1 1 1 1 7 1 1 1 8\n", f); /* route 10 */
    fclose(f);
    int rc = pcg_test_sh(out, sizeof out, "%s eval --json --target '{\"kind\":\"pathlength\",\"length\":12,"
                                          "\"tolerance\":1}' %s",
                         pcg_test_binary(), path);
    assert_int_equal(rc, 0);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    assert_near(json_number_value(json_object_get(j, "fitness")), 1.0 - 1.0 / 12, 1e-9);
    json_t *t = json_object_get(j, "target");
    assert_string_equal(json_string_value(json_object_get(t, "kind")), "pathlength");
    assert_int_equal(json_integer_value(json_object_get(t, "length")), 12);
    json_t *l0 = json_array_get(json_object_get(j, "levels"), 0);
    assert_int_equal(json_integer_value(json_object_get(l0, "route")), 10);
    json_decref(j);
    rc = pcg_test_sh(out, sizeof out, "%s eval --target '{\"kind\":\"pathlength\",\"length\":12}' %s",
                     pcg_test_binary(), path);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "route Player -> Key -> Door 12 steps, give or take 1"));
    rc = pcg_test_sh(out, sizeof out, "%s eval --target '{\"kind\":\"pathlength\",\"length\":1}' %s 2>&1",
                     pcg_test_binary(), path);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(out, "length must be"));
}

/* The reference implementation's summary (eval_reference_level): a level
 * is solvable when the player reaches the door and the first key in
 * reading order, only walls blocking; the important enemies count when
 * one of each kind is there and reachable. */
static void eval_reference_summary(void **state)
{
    (void)state;
    int tiles[EVAL_N_ENEMIES], solvable;
    double reach;
    assert_int_equal(eval_important_tiles(eval_scenario(1), tiles), 1);
    assert_int_equal(tiles[0], TILE_BAT);
    assert_int_equal(eval_important_tiles(eval_scenario(2), tiles), 2);
    assert_int_equal(tiles[1], TILE_SCORPION);
    assert_int_equal(eval_important_tiles(eval_scenario(3), tiles), 0); /* the gate is a KEY */
    assert_int_equal(eval_important_tiles(eval_scenario(4), tiles), 1); /* the gate is a BAT */
    assert_int_equal(tiles[0], TILE_BAT);
    grid_t a, b, c, d, e;
    GRID(a, "@bk.D");          /* door and key reachable, walking over the bat; the bat too */
    GRID(b, "@#k.D");          /* the wall cuts the player off: nothing reachable */
    GRID(c, "k#.k", "#@.D");   /* the first key is walled in, the second is not: not solvable */
    GRID(d, "@b#sD");          /* the bat reachable, the scorpion and the door not */
    GRID(e, "@.k.D", "..#..");
    eval_reference_level(eval_scenario(1), &a.l, &solvable, &reach);
    assert_int_equal(solvable, 1);
    assert_near(reach, 1.0, 0);
    eval_reference_level(eval_scenario(1), &b.l, &solvable, &reach);
    assert_int_equal(solvable, 0);
    assert_near(reach, 0.0, 0);
    eval_reference_level(eval_scenario(1), &c.l, &solvable, &reach);
    assert_int_equal(solvable, 0);
    eval_reference_level(eval_scenario(2), &d.l, &solvable, &reach);
    assert_int_equal(solvable, 0);
    assert_near(reach, 0.5, 0);
    eval_reference_level(eval_scenario(2), &a.l, &solvable, &reach);
    assert_near(reach, 0.5, 0); /* no scorpion */
    eval_reference_level(eval_scenario(3), &e.l, &solvable, &reach);
    assert_int_equal(solvable, 1);
    assert_near(reach, 1.0, 0); /* nothing asked for: nothing missing */
    /* the summary's means */
    level_t set[3] = {a.l, b.l, c.l};
    eval_summary_t sum;
    eval_levels(eval_scenario(1), set, 3, NULL, &sum);
    assert_near(sum.solvability, 1.0 / 3, 1e-12);
    assert_near(sum.important_reachable, 1.0 / 3, 1e-12);
}

PCG_TESTS(eval, cmocka_unit_test(eval_presets), cmocka_unit_test(eval_path_length),
          cmocka_unit_test(eval_cli_path_length_target), cmocka_unit_test(eval_paper_example),
          cmocka_unit_test(eval_enemy_window), cmocka_unit_test(eval_enemy_on_any_solution),
          cmocka_unit_test(eval_key_behind_key),
          cmocka_unit_test(eval_key_avoiding_route), cmocka_unit_test(eval_no_solution),
          cmocka_unit_test(eval_tie_up_before_left), cmocka_unit_test(eval_tie_up_before_down),
          cmocka_unit_test(eval_tie_left_before_right), cmocka_unit_test(eval_duplicates),
          cmocka_unit_test(eval_missing_tiles), cmocka_unit_test(eval_treasure_playable),
          cmocka_unit_test(eval_treasure_unplayable), cmocka_unit_test(eval_treasure_duplicates),
          cmocka_unit_test(eval_metrics), cmocka_unit_test(eval_diversity_hamming),
          cmocka_unit_test(eval_diversity_random), cmocka_unit_test(eval_fitness_and_summary),
          cmocka_unit_test(eval_batch_matches), cmocka_unit_test(eval_matches_reference),
          cmocka_unit_test(eval_batch_matches_shapes), cmocka_unit_test(eval_w2m_objectives),
          cmocka_unit_test(eval_w2m_metrics), cmocka_unit_test(eval_w2m_ids_past_31),
          cmocka_unit_test(eval_routes_hand),
          cmocka_unit_test(eval_routes_match_metrics), cmocka_unit_test(eval_cli_json), cmocka_unit_test(eval_cli_errors),
          cmocka_unit_test(eval_reference_summary))
