/* expect: returned to an address that is not code (a smashed return address */
float compute_reward(const level_t *prev, const level_t *curr)
{
    int n = count_tiles(curr, WALL) + 0x41414141;
    int a[4];
    /* both halves of the return address become 0x4141...: not even a
     * canonical address, so the ret itself faults */
    for (int i = 0; i < 14; i++) a[i] = n;
    return (float)a[0];
}
