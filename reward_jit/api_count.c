/* The reward API's helpers with their work counted: see api_count.h.
 * BR_WORK is defined before the level core is included, so this file's
 * copies of the searches (static inline, like all of the level core)
 * carry the hooks and no other file's do. */
#include <stdint.h>
extern uint64_t search_work_counts[];
#define BR_WORK(kind, n) (search_work_counts[(kind)] += (uint64_t)(n))
#include "api_count.h"
#include "level.h"
#include <string.h>

uint64_t search_work_counts[BR_WORK_KINDS];
static uint64_t helper_calls;
/* the call's kept searches, one per level, as the device's kernel keeps them */
static lv_kept kept[2];
static int kept_n;

void search_work_levels(const level_t *prev, const level_t *curr)
{
    kept_n = prev && curr ? 2 : 0;
    if (!kept_n) return;
    lv_kept_init(&kept[0], prev);
    lv_kept_init(&kept[1], curr);
}

static lv_kept *kept_for(const level_t *l)
{
    return lv_kept_of(kept_n ? kept : NULL, kept_n, l);
}

void search_work_get(search_work *out)
{
    out->calls = helper_calls;
    for (int k = 0; k < BR_WORK_KINDS; k++) out->n[k] = search_work_counts[k];
}

void search_work_reset(void)
{
    helper_calls = 0;
    memset(search_work_counts, 0, sizeof(uint64_t) * BR_WORK_KINDS);
}

/* The API's helpers as the device prelude of nvrtc.c writes them, each
 * call counted (tile_at and the sizes too: a call and a byte read); the
 * searches from the call's kept ones where search_work_levels named the
 * levels. */
static int count_level_height(const level_t *l) { return helper_calls++, l->h; }
static int count_level_width(const level_t *l) { return helper_calls++, l->w; }
static int count_tile_at(const level_t *l, int r, int c) { return helper_calls++, lv_get(l, r, c); }
static int count_count_tiles(const level_t *l, int tile) { return helper_calls++, lv_count_kept(kept_for(l), l, tile); }
static int count_find_tiles(const level_t *l, int tile, int *rows, int *cols, int max)
{
    return helper_calls++, lv_find_kept(kept_for(l), l, tile, rows, cols, max < 0 ? 0 : max);
}
static int count_path_length(const level_t *l, int r0, int c0, int r1, int c1)
{
    return helper_calls++, lv_path_through_kept(kept_for(l), l, r0, c0, r1, c1, ~PCG_BLOCK_DEFAULT);
}
static int count_nearest(const level_t *l, int r, int c, int tile)
{
    return helper_calls++, lv_nearest_kept(kept_for(l), l, r, c, tile);
}
static int count_count_regions(const level_t *l) { return helper_calls++, lv_regions(l); }
static int count_path_through(const level_t *l, int r0, int c0, int r1, int c1, unsigned passable)
{
    return helper_calls++, lv_path_through_kept(kept_for(l), l, r0, c0, r1, c1, passable);
}

static const reward_helper counting_helpers[] = {
    {"level_height", (const void *)count_level_height},
    {"level_width", (const void *)count_level_width},
    {"tile_at", (const void *)count_tile_at},
    {"count_tiles", (const void *)count_count_tiles},
    {"find_tiles", (const void *)count_find_tiles},
    {"path_length", (const void *)count_path_length},
    {"nearest_tile_distance", (const void *)count_nearest},
    {"count_regions", (const void *)count_count_regions},
    {"path_length_through", (const void *)count_path_through},
};

const reward_helper *search_work_helpers(int *n)
{
    *n = (int)(sizeof counting_helpers / sizeof counting_helpers[0]);
    return counting_helpers;
}

/* 32-bit integer instructions per counted unit, read off bitrows.h as
 * nvcc would lower it (a 64-bit logic op or shift by a constant is two
 * instructions, a 64-bit multiply three).  Estimates, not disassembly,
 * except the loads, read off nvcc 13.0's SASS for sm_90 of br_load alone
 * (the same SASS has 17 instructions for one tile test and its gather, so
 * the compare's estimate stands):
 *  - a load: the address (two), the alignment test and its branch, one
 *    64-bit load;
 *  - a split load: the address, the three alignment tests and branches,
 *    eight byte loads and the thirteen instructions that join them, and
 *    the branch out;
 *  - a compare: br_bytes_eq (xor, and, add, two ors, not) and the gather
 *    or count that follows it (shift, multiply, shift);
 *  - a round: br_step's bounds, the sides read out of the mask, the loop
 *    and the caller's test of the layer;
 *  - a round's word: br_around (six shifts, two and-nots, five ors), the
 *    grow and mask tests, the mask word's built bit, seen and fresh
 *    stored, lo and hi kept;
 *  - a scanned word: the fresh test, the target word's built bit, an and;
 *  - a kept search's distance-plane word: its address, a 64-bit load,
 *    and or and-not, a 64-bit store or or-reduce, the loop;
 *  - the tile planes, counted from nvcc 13.0's PTX for sm_90 at two
 *    instructions a 64-bit operation: a transpose of eight cells
 *    (br_transpose8: 21 such operations) and its loop (the load is
 *    counted apart); a whole word's planes from its eight transposes
 *    (br_planes_full: 83 operations, six stores); a short word's
 *    transpose shifted into the planes byte by byte (28 operations);
 *  - a tile-plane word: seven 64-bit words read from local memory, the
 *    five selects and ands and the and-not of the high plane on both
 *    halves, and what the caller does with it (a count, an or);
 *  - a call: the call, br_mask_init (64 / w, the column masks, the tile
 *    list) and br_start clearing its words (an upper figure where the
 *    call's kept entry answers without a new mask or search). */
#define OPS_LOAD 5
#define OPS_SPLIT_LOAD 31
#define OPS_COMPARE 18
#define OPS_ROUND 20
#define OPS_STEP_WORD 45
#define OPS_SCAN_WORD 8
#define OPS_KEPT_WORD 8
#define OPS_TRANSPOSE 45
#define OPS_PLANE_FULL 172
#define OPS_PLANE_BYTES 60
#define OPS_PLANE_WORD 45
#define OPS_CALL 80

double search_work_ops(const search_work *w)
{
    return (double)w->calls * OPS_CALL + (double)w->n[BR_WORK_LOADS] * OPS_LOAD +
           (double)w->n[BR_WORK_SPLIT_LOADS] * OPS_SPLIT_LOAD + (double)w->n[BR_WORK_COMPARES] * OPS_COMPARE +
           (double)w->n[BR_WORK_ROUNDS] * OPS_ROUND +
           (double)w->n[BR_WORK_STEP_WORDS] * OPS_STEP_WORD + (double)w->n[BR_WORK_SCAN_WORDS] * OPS_SCAN_WORD +
           (double)w->n[BR_WORK_KEPT_WORDS] * OPS_KEPT_WORD + (double)w->n[BR_WORK_TRANSPOSES] * OPS_TRANSPOSE +
           (double)w->n[BR_WORK_PLANE_FULL] * OPS_PLANE_FULL + (double)w->n[BR_WORK_PLANE_BYTES] * OPS_PLANE_BYTES +
           (double)w->n[BR_WORK_PLANE_WORDS] * OPS_PLANE_WORD;
}

double search_work_loads(const search_work *w)
{
    return (double)w->n[BR_WORK_LOADS] + (double)w->n[BR_WORK_SPLIT_LOADS];
}
