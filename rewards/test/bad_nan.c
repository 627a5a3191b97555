/* expect: returned NaN */
float compute_reward(const level_t *prev, const level_t *curr)
{
    float d = (float)(count_tiles(curr, KEY) - count_tiles(prev, KEY));
    return sqrtf(-1.0f - d * d);
}
