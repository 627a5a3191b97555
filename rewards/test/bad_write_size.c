/* expect: writes into the level */
float compute_reward(const level_t *prev, const level_t *curr)
{
    ((int *)curr)[0] = 1000;
    return (float)count_tiles(curr, KEY);
}
