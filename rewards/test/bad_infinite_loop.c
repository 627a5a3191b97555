/* expect: the first call of compute_reward did not return within */
float compute_reward(const level_t *prev, const level_t *curr)
{
    int n = 0;
    while (count_tiles(curr, PLAYER) >= 0) n++;
    return (float)n;
}
