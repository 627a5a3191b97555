/* expect: CPU compiler (libtcc, C) refuses it */
float compute_reward(const level_t *prev, const level_t *curr)
{
    bool more = count_tiles(curr, KEY) > count_tiles(prev, KEY);
    return more ? 1.0f : 0.0f;
}
