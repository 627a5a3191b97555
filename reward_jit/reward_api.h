/* The reward API: the only declarations a reward function sees.
 *
 * A reward is C source defining compute_reward.  It is compiled with libtcc
 * for the CPU backend and with NVRTC for the GPU backend, with no headers and
 * no C library: only the names below link.  #include, #pragma, _Pragma,
 * __attribute__, inline assembly and token pasting (##) are refused.
 * See docs/reward-api.md. */
#ifndef PCG_REWARD_API_H
#define PCG_REWARD_API_H

typedef struct level level_t; /* opaque */

/* Tile ids (the same numbers as in level files). */
enum { BORDER, EMPTY, WALL, PLAYER, BAT, SCORPION, SPIDER, KEY, DOOR, TREASURE };

int level_height(const level_t *l);
int level_width(const level_t *l);
/* Tile at (row, col); BORDER outside the map. */
int tile_at(const level_t *l, int row, int col);
int count_tiles(const level_t *l, int tile);
/* Row-major positions of a tile: returns the count, fills up to max. */
int find_tiles(const level_t *l, int tile, int *rows, int *cols, int max);
/* Steps of a shortest 4-connected path, WALL/BORDER block; -1 if none. */
int path_length(const level_t *l, int r0, int c0, int r1, int c1);
/* BFS steps from (row, col) to the nearest tile of that kind; -1 if none. */
int nearest_tile_distance(const level_t *l, int row, int col, int tile);
/* Number of connected regions of non-wall cells. */
int count_regions(const level_t *l);
/* Steps of a shortest 4-connected path through the cells whose tile's bit
 * is set in passable_mask (bit t = 1u << t, e.g. (1u << EMPTY) | (1u << DOOR));
 * 0 from a passable cell to itself; -1 if none, or if either end is outside
 * or not passable. */
int path_length_through(const level_t *l, int r0, int c0, int r1, int c1, unsigned passable_mask);

#ifndef __CUDACC_RTC__ /* NVRTC declares the math functions itself */
float fabsf(float x);
float sqrtf(float x);
float expf(float x);
float logf(float x);
float powf(float x, float y);
float fminf(float x, float y);
float fmaxf(float x, float y);
float tanhf(float x);
float floorf(float x);
float ceilf(float x);
#endif

/* Written by the reward designer: r_t = compute_reward(level_t, level_t+1). */
float compute_reward(const level_t *prev, const level_t *curr);

#endif
