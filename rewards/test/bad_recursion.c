/* expect: stack overflow */
static int depth(const level_t *l, int n)
{
    int pad[64];
    pad[n & 63] = tile_at(l, n & 15, n & 15);
    return depth(l, n + 1) + pad[(n * 7) & 63];
}
float compute_reward(const level_t *prev, const level_t *curr)
{
    return (float)depth(curr, 0);
}
