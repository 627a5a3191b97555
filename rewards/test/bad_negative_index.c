/* expect: an access far below the stack (a negative index into a local array?) */
float compute_reward(const level_t *prev, const level_t *curr)
{
    int a[4];
    a[0] = count_tiles(curr, KEY);
    return (float)a[-(1 << 24)];
}
