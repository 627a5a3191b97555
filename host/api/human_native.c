/* The reward API for the natively compiled human rewards: the names
 * reward_jit/reward_api.h declares, over the level core as
 * reward_jit/api_host.c gives them to libtcc.  Hidden, so that the
 * library exports none of these short names. */
#include "human_native.h"
#include "level.h"
#include <stddef.h>

#define API __attribute__((visibility("hidden")))
API int level_height(const level_t *l);
API int level_width(const level_t *l);
API int tile_at(const level_t *l, int r, int c);
API int count_tiles(const level_t *l, int tile);
API int find_tiles(const level_t *l, int tile, int *rows, int *cols, int max);
API int path_length(const level_t *l, int r0, int c0, int r1, int c1);
API int nearest_tile_distance(const level_t *l, int r, int c, int tile);
API int count_regions(const level_t *l);
API int path_length_through(const level_t *l, int r0, int c0, int r1, int c1, unsigned passable);

int level_height(const level_t *l) { return l->h; }
int level_width(const level_t *l) { return l->w; }
int tile_at(const level_t *l, int r, int c) { return lv_get(l, r, c); }
int count_tiles(const level_t *l, int tile) { return lv_count(l, tile); }
int find_tiles(const level_t *l, int tile, int *rows, int *cols, int max)
{
    return lv_find(l, tile, rows, cols, max < 0 ? 0 : max);
}
int path_length(const level_t *l, int r0, int c0, int r1, int c1) { return lv_path_length(l, r0, c0, r1, c1); }
int nearest_tile_distance(const level_t *l, int r, int c, int tile) { return lv_nearest(l, r, c, tile); }
int count_regions(const level_t *l) { return lv_regions(l); }
int path_length_through(const level_t *l, int r0, int c0, int r1, int c1, unsigned passable)
{
    return lv_path_through(l, r0, c0, r1, c1, passable);
}

/* compute_reward of rewards/human/scenarioN.c, renamed by the Makefile */
#define HUMAN(n)                                                                                      \
    API float pcg_human_reward_##n(const level_t *prev, const level_t *curr);                        \
    static float human_##n(const level_t *prev, const level_t *curr, void *ctx)                      \
    {                                                                                                 \
        (void)ctx;                                                                                    \
        return pcg_human_reward_##n(prev, curr);                                                      \
    }
HUMAN(1)
HUMAN(2)
HUMAN(3)
HUMAN(4)

reward_fn human_native_reward(int scenario)
{
    static const reward_fn fns[HUMAN_NATIVE_SCENARIOS] = {human_1, human_2, human_3, human_4};
    return scenario >= 1 && scenario <= HUMAN_NATIVE_SCENARIOS ? fns[scenario - 1] : NULL;
}
