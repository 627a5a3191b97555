/* The builder's pieces (docs/harness.md, "The builder"): small stretches
 * of route laid by a turtle on an otherwise walled map, each with a claim
 * of the steps it adds to the leg it lies on and of the enemy it makes the
 * player meet.  A piece is certified by playing it in fixed contexts with
 * the evaluator and comparing what the evaluator measures with the claim;
 * the builder uses a piece only once its kind is certified for the map. */
#ifndef PCG_PIECES_H
#define PCG_PIECES_H
#include "level.h"

/* Headings of the turtle. */
enum { DIR_N = 0, DIR_E = 1, DIR_S = 2, DIR_W = 3 };

enum {
    PIECE_RUN,    /* n cells straight ahead: n steps */
    PIECE_TURN,   /* a quarter turn to the side, no cell: 0 steps */
    PIECE_DETOUR, /* a U of depth n to the side over two cells of advance: 2n + 2 steps */
    PIECE_ALCOVE, /* an enemy in a dead-end cell beside the route: 0 steps, met */
    PIECE_SEALED, /* an enemy walled in n cells to the side: 0 steps, not met when n >= 3 */
    PIECE_KINDS
};
enum { SIDE_LEFT = 0, SIDE_RIGHT = 1 };

typedef struct {
    int kind; /* PIECE_* */
    int n;    /* run length, detour depth, sealed distance */
    int side; /* SIDE_LEFT or SIDE_RIGHT of the heading (turn, detour, alcove, sealed) */
    int tile; /* alcove and sealed: the enemy tile */
} piece_t;

/* What a piece adds: steps to the leg it lies on, and whether its enemy is
 * met (within two cells of the route). */
typedef struct {
    int steps;
    int met;
} piece_claim_t;

/* A route in the making: cells in walking order (route[0] is the
 * player's), the cells beside it that hold an enemy, and the heading. */
typedef struct {
    int n;
    short r[PCG_MAX_CELLS], c[PCG_MAX_CELLS];
    int n_extra;
    short er[PCG_MAX_CELLS], ec[PCG_MAX_CELLS];
    unsigned char etile[PCG_MAX_CELLS];
    int dir;
} lay_t;

/* What a rendered cell is: wall, route or an enemy beside it. */
enum { LAY_WALL = 0, LAY_ROUTE = 1, LAY_EXTRA = 2 };

void lay_start(lay_t *l, int r, int c, int dir);
/* Lay one piece at the turtle.  -1 when the route would outgrow the arrays. */
int piece_lay(lay_t *l, const piece_t *p);
/* Add an enemy at (r, c), the builder's own choice of an alcove or sealed cell. */
int lay_extra(lay_t *l, int r, int c, int tile);
/* Walls everywhere, the route EMPTY (PLAYER on its first cell), the enemies
 * in their cells, shifted by (dr, dc) onto a side x side map.  kind gets
 * LAY_* per cell.  -1 when a cell falls off the map or is laid twice. */
int lay_render(const lay_t *l, int side, int dr, int dc, unsigned char *tiles, unsigned char *kind);

/* The placement rules the claims hold under, on a rendered kind map:
 * an alcove is a wall cell with exactly one open 4-neighbour, a route
 * cell; a sealed cell has no open 4-neighbour and no route cell within
 * Chebyshev distance 2 (the evaluator's window). */
int lay_alcove_fits(const unsigned char *kind, int side, int r, int c);
int lay_sealed_fits(const unsigned char *kind, int side, int r, int c);

/* The claim the builder counts on for p. */
piece_claim_t piece_claim(const piece_t *p);
/* "detour 3 left" etc. */
void piece_describe(const piece_t *p, char *buf, int len);

/* Play p in every fixed context that fits a side x side walled map (each
 * heading, the piece laid near either end of the map): a player, two
 * cells, the piece, two cells and the key, one cell and the door.  It
 * passes when in every context the evaluator finds one solution whose
 * player -> key leg is 4 + claim->steps, key -> door 1, the route it walks
 * is the laid one cell by cell, the piece's enemy is met exactly as
 * claimed, and the placement rule holds.  Returns the contexts played
 * (> 0), or -1 and the first disagreement in reason. */
int piece_certify(const piece_t *p, const piece_claim_t *claim, int side, char *reason, int len);

/* Certify every piece the builder may use on a side x side map against its
 * own claim: runs 1 and 2, both turns, detours of each depth 1..side - 2
 * to both sides, alcoves and sealed cells (distance 3) of each enemy to
 * both sides.  Done once per side and remembered (the first call for a
 * side is not thread-safe: call it before starting threads).  Returns the pieces
 * certified, or -1 and the first failure in reason. */
int pieces_certify_all(int side, char *reason, int len);

#endif
