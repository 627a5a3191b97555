/* Dungeon problem rules (docs/method.md#environment) for one environment, written once for the
 * CPU backend and the CUDA kernels.  State lives in caller-owned flat arrays;
 * these functions see one environment's slices. */
#ifndef PCG_DUNGEON_H
#define PCG_DUNGEON_H
#include "level.h"
#include "philox.h"

enum { VARIANT_DUNGEON = 0, VARIANT_TREASURE = 1 };

/* Observation byte: tile id in the low bits, frozen flag in this bit. */
#define OBS_FROZEN_BIT 0x10
#define OBS_TILE_MASK 0x0f
/* Channels the network sees: one-hot over the tile ids, then frozen. */
#define OBS_CHANNELS (N_TILES + 1)

/* Initial-map weights in hundredths (docs/method.md#environment: sum 1.13). */
#define DG_W_EMPTY 58
#define DG_W_WALL 50
#define DG_W_KEY 2
#define DG_W_BAT 1
#define DG_W_SCORPION 1
#define DG_W_SPIDER 1
#define DG_W_SUM 113

/* Details in which the paper's reference code and this engine's first
 * design differ (docs/method.md#environment).  Value 0 is the reference's,
 * so a zeroed config reproduces it.
 * obs_centre: LAST centres the observation on the cell just edited (the
 *   first observation of an episode on cell 0, about to be edited), so the
 *   policy choosing the tile of cell t sees a window centred on cell t-1;
 *   NEXT centres it on the cell about to be edited.
 * terminal_reward: ENV gives the last step of an episode the environment's
 *   own reward, 0, in place of the designed reward; DESIGNED gives the
 *   designed reward on every step.
 * final_level: the level an evaluation episode keeps, the map after 767 of
 *   the 768 edits (the last edit is lost with the reference's auto-reset)
 *   or after all of them. */
enum { OBS_CENTRE_LAST = 0, OBS_CENTRE_NEXT = 1 };
enum { TERMINAL_REWARD_ENV = 0, TERMINAL_REWARD_DESIGNED = 1 };
enum { FINAL_LEVEL_767 = 0, FINAL_LEVEL_768 = 1 };
typedef struct {
    int obs_centre, terminal_reward, final_level;
} env_rules;

typedef struct {
    int h, w;          /* map size */
    int variant;       /* VARIANT_DUNGEON or VARIANT_TREASURE */
    int n_actions;     /* 6 or 7 */
    int episode_len;   /* 3*h*w */
    int crop_h, crop_w;/* 2h-1, 2w-1 */
    int pad_h, pad_w;  /* padded map: 3h-2, 3w-2 */
    pcg_u64 seed;
    env_rules rules;   /* the reference's unless changed after init */
} dungeon_cfg;

PCG_HD void dungeon_cfg_init(dungeon_cfg *c, int h, int w, int variant, pcg_u64 seed)
{
    c->h = h;
    c->w = w;
    c->variant = variant;
    c->n_actions = variant == VARIANT_TREASURE ? 7 : 6;
    c->episode_len = 3 * h * w;
    c->crop_h = 2 * h - 1;
    c->crop_w = 2 * w - 1;
    c->pad_h = 3 * h - 2;
    c->pad_w = 3 * w - 2;
    c->seed = seed;
    c->rules.obs_centre = OBS_CENTRE_LAST;
    c->rules.terminal_reward = TERMINAL_REWARD_ENV;
    c->rules.final_level = FINAL_LEVEL_767;
}

/* Tile written by action a (narrow representation). */
PCG_HD int dungeon_action_tile(int a)
{
    /* EMPTY, WALL, BAT, SCORPION, SPIDER, KEY, DOOR */
    return a == 0 ? TILE_EMPTY : a == 1 ? TILE_WALL : a == 5 ? TILE_KEY : a == 6 ? TILE_DOOR : TILE_BAT + (a - 2);
}

PCG_HD int dungeon_draw_tile(pcg_u32 r)
{
    pcg_u32 x = philox_below(r, DG_W_SUM);
    if (x < DG_W_EMPTY) return TILE_EMPTY;
    x -= DG_W_EMPTY;
    if (x < DG_W_WALL) return TILE_WALL;
    x -= DG_W_WALL;
    if (x < DG_W_KEY) return TILE_KEY;
    x -= DG_W_KEY;
    if (x < DG_W_BAT) return TILE_BAT;
    x -= DG_W_BAT;
    if (x < DG_W_SCORPION) return TILE_SCORPION;
    return TILE_SPIDER;
}

/* Draws used by one reset: the corner, then one per cell. */
PCG_HD pcg_u64 dungeon_reset_draws(const dungeon_cfg *c)
{
    return 1 + (pcg_u64)c->h * c->w;
}

/* Corner k (0..3) of the fixed tiles: (1,1), (1,W-2), (H-2,W-2), (H-2,1). */
PCG_HD int dungeon_corner(const dungeon_cfg *c, int k)
{
    int r = (k == 0 || k == 1) ? 1 : c->h - 2;
    int col = (k == 0 || k == 3) ? 1 : c->w - 2;
    return r * c->w + col;
}

PCG_HD void dungeon_set_cell(const dungeon_cfg *c, unsigned char *map, unsigned char *frozen,
                             unsigned char *pad, int cell, int tile, int fz)
{
    int r = cell / c->w, col = cell % c->w;
    map[cell] = (unsigned char)tile;
    frozen[cell] = (unsigned char)fz;
    pad[(r + c->h - 1) * c->pad_w + col + c->w - 1] = (unsigned char)(tile | (fz ? OBS_FROZEN_BIT : 0));
}

/* Fill the padded map's border ring (BORDER, frozen).  Done once per env. */
PCG_HD void dungeon_init_pad(const dungeon_cfg *c, unsigned char *pad)
{
    for (int i = 0; i < c->pad_h * c->pad_w; i++) pad[i] = TILE_BORDER | OBS_FROZEN_BIT;
}

/* New episode for environment env, drawing from stream position *rng_pos. */
PCG_HD void dungeon_reset(const dungeon_cfg *c, int env, pcg_u64 *rng_pos, unsigned char *map,
                          unsigned char *frozen, unsigned char *pad)
{
    philox_stream s;
    philox_stream_init(&s, c->seed, (pcg_u64)env, *rng_pos);
    int corner = (int)philox_below(philox_next(&s), 4);
    int cells = c->h * c->w;
    for (int i = 0; i < cells; i++) dungeon_set_cell(c, map, frozen, pad, i, dungeon_draw_tile(philox_next(&s)), 0);
    *rng_pos = s.pos;
    int fixed[2] = {dungeon_corner(c, corner), dungeon_corner(c, (corner + 2) & 3)};
    int tiles[2] = {TILE_PLAYER, c->variant == VARIANT_TREASURE ? TILE_TREASURE : TILE_DOOR};
    for (int f = 0; f < 2; f++) {
        int fr = fixed[f] / c->w, fc = fixed[f] % c->w;
        for (int dr = -1; dr <= 1; dr++)
            for (int dc = -1; dc <= 1; dc++) {
                int r = fr + dr, cc = fc + dc;
                if (r < 0 || cc < 0 || r >= c->h || cc >= c->w) continue;
                dungeon_set_cell(c, map, frozen, pad, r * c->w + cc, TILE_EMPTY, 1);
            }
    }
    for (int f = 0; f < 2; f++) dungeon_set_cell(c, map, frozen, pad, fixed[f], tiles[f], 1);
}

/* Apply action a at the cell visited at step (row-major, three scans).
 * Returns 1 if the map changed. */
PCG_HD int dungeon_apply(const dungeon_cfg *c, int step, int a, unsigned char *map, unsigned char *frozen,
                         unsigned char *pad)
{
    int cell = step % (c->h * c->w);
    int tile = dungeon_action_tile(a);
    if (frozen[cell] || map[cell] == tile) return 0; /* frozen edits are reverted */
    dungeon_set_cell(c, map, frozen, pad, cell, tile, 0);
    return 1;
}

/* The cell the observation before the edit of step is centred on: that
 * step's cell, or under OBS_CENTRE_LAST the previous step's (step 0 of an
 * episode has none and takes its own). */
PCG_HD int dungeon_obs_cell(const dungeon_cfg *c, int step)
{
    int lag = c->rules.obs_centre == OBS_CENTRE_LAST && step > 0;
    return (step - lag) % (c->h * c->w);
}

/* n bytes from src to dst, which do not overlap: the restrict qualifiers
 * let the host compiler make the loop one library copy. */
PCG_HD void dungeon_copy(unsigned char *__restrict__ dst, const unsigned char *__restrict__ src, int n)
{
    for (int i = 0; i < n; i++) dst[i] = src[i];
}

/* Compact observation: the crop the policy sees before the edit of step,
 * centred on dungeon_obs_cell. */
PCG_HD void dungeon_observe(const dungeon_cfg *c, int step, const unsigned char *pad, unsigned char *obs)
{
    int cell = dungeon_obs_cell(c, step);
    /* the sizes in locals: obs is bytes, which may alias *c as far as the
     * compiler knows, so it would read them again after every byte */
    int crop_h = c->crop_h, crop_w = c->crop_w, pad_w = c->pad_w;
    const unsigned char *src = pad + (cell / c->w) * pad_w + cell % c->w;
    for (int i = 0; i < crop_h; i++, src += pad_w, obs += crop_w) dungeon_copy(obs, src, crop_w);
}

#endif
