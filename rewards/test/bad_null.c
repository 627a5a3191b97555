/* expect: null pointer dereference */
float compute_reward(const level_t *prev, const level_t *curr)
{
    int *p = 0;
    if (count_tiles(curr, PLAYER) >= 0) p = (int *)0;
    return (float)*p;
}
