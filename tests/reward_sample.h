/* A reward in the style of the human-written ones (path from the player to
 * the door, one key, one bat, few regions), written once against the level
 * core so that the CPU tests and the prebuilt device module
 * (tests/cuda/reward_sample.cu) compute the same function. */
#ifndef PCG_REWARD_SAMPLE_H
#define PCG_REWARD_SAMPLE_H
#include "level.h"

PCG_HD float sample_reward_score(const level_t *l)
{
    float score = 0.0f;
    int p = lv_first(l, TILE_PLAYER), d = lv_first(l, TILE_DOOR);
    if (p >= 0 && d >= 0) {
        int len = lv_path_length(l, p / l->w, p % l->w, d / l->w, d % l->w);
        score += len > 0 ? 0.1f * (float)len : -1.0f;
    }
    int keys = lv_count(l, TILE_KEY), bats = lv_count(l, TILE_BAT);
    score -= 0.5f * (float)(keys > 1 ? keys - 1 : 1 - keys);
    score += bats == 1 ? 0.5f : -0.25f * (float)bats;
    score -= 0.05f * (float)lv_regions(l);
    return score;
}

PCG_HD float sample_reward(const level_t *prev, const level_t *curr)
{
    return sample_reward_score(curr) - sample_reward_score(prev);
}

#endif
