/* expect: returned to an address that is not code (a smashed return address */
float compute_reward(const level_t *prev, const level_t *curr)
{
    int n = count_tiles(curr, WALL);
    int a[4];
    /* 12 writes into a 4-int array: past it lie the saved frame pointer
     * and compute_reward's return address */
    for (int i = 0; i < 12; i++) a[i] = n;
    return (float)a[0];
}
