/* Finite on every call, so validation accepts it, but so large that the
 * returns overflow: training must stop with the cause, not carry on with
 * NaN weights and exit 0. */
float compute_reward(const level_t *prev, const level_t *curr)
{
    return count_tiles(curr, WALL) > count_tiles(prev, WALL) ? 3e38f : -3e38f;
}
