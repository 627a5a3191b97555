/* expect: line 5: */
float compute_reward(const level_t *prev, const level_t *curr)
{
    return count_tiles(curr, KEY) - count_tiles(prev, KEY)
}
