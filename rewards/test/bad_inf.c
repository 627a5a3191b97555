/* expect: returned inf */
float compute_reward(const level_t *prev, const level_t *curr)
{
    float zero = (float)(count_tiles(curr, PLAYER) - 1);
    return 1.0f / zero;
}
