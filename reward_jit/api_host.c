/* The reward API on the host: the functions a CPU reward links against
 * (the level core of host/core/level.h), the math functions and the code
 * generator's helpers, added to each libtcc state by name. */
#include <libtcc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "jit_internal.h"
#include "level.h"
#include "memo.h"

__thread const char *jit_call_top;
void (*jit_find_tiles_overflow)(int max, int room);

/* The most ints an array at p can hold if it lies on the reward's stack
 * (below jit_call_top, where compute_reward's frames end): a max beyond
 * that is wrong whatever the array, so validation refuses it and training
 * writes no further. */
static int stack_room(const int *p, int max)
{
    const char *top = jit_call_top, *a = (const char *)p;
    if (!p || !top || a >= top || (size_t)(top - a) > (256u << 20)) return max;
    size_t room = (size_t)(top - a) / sizeof(int);
    if ((size_t)max <= room) return max;
    if (jit_find_tiles_overflow) jit_find_tiles_overflow(max, (int)room);
    return (int)room;
}

void (*jit_check_level)(const void *l, int api);

/* In validation, a level that is not one the engine passed is named
 * before it is read. */
#define LEVEL(l, api) (jit_check_level ? jit_check_level(l, api) : (void)0, (l))

static int api_level_height(const level_t *l) { return LEVEL(l, API_LEVEL_HEIGHT)->h; }
static int api_level_width(const level_t *l) { return LEVEL(l, API_LEVEL_WIDTH)->w; }
static int api_tile_at(const level_t *l, int r, int c) { return lv_get(LEVEL(l, API_TILE_AT), r, c); }
/* The answer to k on l: the memo's when this call's levels were asked it
 * one step earlier (memo.h), else computed by `expr` and kept.  Each
 * helper names its level to validation first, whatever the memo holds. */
#define MEMO_ANSWER(l, k, expr)                         \
    do {                                                \
        int value_;                                     \
        if (reward_memo_get((l), (k), &value_)) return value_; \
        value_ = (expr);                                \
        reward_memo_put((l), (k), value_);              \
        return value_;                                  \
    } while (0)

static int api_count_tiles(const level_t *l, int tile)
{
    l = LEVEL(l, API_COUNT_TILES);
    memo_key k = {MEMO_COUNT_TILES, {tile, 0, 0, 0, 0}};
    MEMO_ANSWER(l, &k, lv_count(l, tile));
}
static int api_find_tiles(const level_t *l, int tile, int *rows, int *cols, int max)
{
    if (max < 0) max = 0;
    max = stack_room(cols, stack_room(rows, max));
    return lv_find(LEVEL(l, API_FIND_TILES), tile, rows, cols, max);
}
static int api_path_length(const level_t *l, int r0, int c0, int r1, int c1)
{
    l = LEVEL(l, API_PATH_LENGTH);
    memo_key k = {MEMO_PATH_LENGTH, {r0, c0, r1, c1, 0}};
    MEMO_ANSWER(l, &k, lv_path_length(l, r0, c0, r1, c1));
}
static int api_nearest(const level_t *l, int r, int c, int tile)
{
    l = LEVEL(l, API_NEAREST_TILE_DISTANCE);
    memo_key k = {MEMO_NEAREST, {r, c, tile, 0, 0}};
    MEMO_ANSWER(l, &k, lv_nearest(l, r, c, tile));
}
static int api_count_regions(const level_t *l)
{
    l = LEVEL(l, API_COUNT_REGIONS);
    memo_key k = {MEMO_REGIONS, {0, 0, 0, 0, 0}};
    MEMO_ANSWER(l, &k, lv_regions(l));
}
static int api_path_through(const level_t *l, int r0, int c0, int r1, int c1, unsigned passable)
{
    l = LEVEL(l, API_PATH_LENGTH_THROUGH);
    memo_key k = {MEMO_PATH_THROUGH, {r0, c0, r1, c1, (int)passable}};
    MEMO_ANSWER(l, &k, lv_path_through(l, r0, c0, r1, c1, passable));
}

/* Conversions tcc calls into its runtime library for. */
static unsigned long long rt_fixunssfdi(float f) { return (unsigned long long)f; }
static unsigned long long rt_fixunsdfdi(double f) { return (unsigned long long)f; }
static unsigned long long rt_fixunsxfdi(long double f) { return (unsigned long long)f; }
static long long rt_fixsfdi(float f) { return (long long)f; }
static long long rt_fixdfdi(double f) { return (long long)f; }
static long long rt_fixxfdi(long double f) { return (long long)f; }
static float rt_floatundisf(unsigned long long u) { return (float)u; }
static double rt_floatundidf(unsigned long long u) { return (double)u; }
static long double rt_floatundixf(unsigned long long u) { return (long double)u; }

static const struct {
    const char *name;
    const void *fn;
} api_symbols[] = {
    {"level_height", (const void *)api_level_height},
    {"level_width", (const void *)api_level_width},
    {"tile_at", (const void *)api_tile_at},
    {"count_tiles", (const void *)api_count_tiles},
    {"find_tiles", (const void *)api_find_tiles},
    {"path_length", (const void *)api_path_length},
    {"nearest_tile_distance", (const void *)api_nearest},
    {"count_regions", (const void *)api_count_regions},
    {"path_length_through", (const void *)api_path_through},
    {"fabsf", (const void *)fabsf},
    {"sqrtf", (const void *)sqrtf},
    {"expf", (const void *)expf},
    {"logf", (const void *)logf},
    {"powf", (const void *)powf},
    {"fminf", (const void *)fminf},
    {"fmaxf", (const void *)fmaxf},
    {"tanhf", (const void *)tanhf},
    {"floorf", (const void *)floorf},
    {"ceilf", (const void *)ceilf},
    /* code generation helpers (struct copies, array initialisers, 64-bit
     * unsigned conversions), not names the reward may call */
    {"memset", (const void *)memset},
    {"memcpy", (const void *)memcpy},
    {"memmove", (const void *)memmove},
    {"__fixunssfdi", (const void *)rt_fixunssfdi},
    {"__fixunsdfdi", (const void *)rt_fixunsdfdi},
    {"__fixunsxfdi", (const void *)rt_fixunsxfdi},
    {"__fixsfdi", (const void *)rt_fixsfdi},
    {"__fixdfdi", (const void *)rt_fixdfdi},
    {"__fixxfdi", (const void *)rt_fixxfdi},
    {"__floatundisf", (const void *)rt_floatundisf},
    {"__floatundidf", (const void *)rt_floatundidf},
    {"__floatundixf", (const void *)rt_floatundixf},
};
#define N_API_SYMBOLS (int)(sizeof api_symbols / sizeof api_symbols[0])

int jit_is_api_symbol(const char *name)
{
    for (int i = 0; i < N_API_SYMBOLS; i++)
        if (!strcmp(api_symbols[i].name, name)) return 1;
    return 0;
}

void jit_add_api_symbols(TCCState *s, const reward_helper *helpers, int n)
{
    for (int i = 0; i < N_API_SYMBOLS; i++) {
        const void *fn = api_symbols[i].fn;
        for (int k = 0; k < n; k++)
            if (!strcmp(helpers[k].name, api_symbols[i].name)) fn = helpers[k].fn;
        tcc_add_symbol(s, api_symbols[i].name, fn);
    }
}
