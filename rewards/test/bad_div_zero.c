/* expect: integer division by zero */
float compute_reward(const level_t *prev, const level_t *curr)
{
    int bats = count_tiles(curr, BAT) * 0;
    return (float)(count_tiles(curr, EMPTY) / bats);
}
