/* expect: an access past the end of a local array ran off the top of the stack */
float compute_reward(const level_t *prev, const level_t *curr)
{
    int a[4];
    int s = 0;
    for (int i = 0; i < 4; i++) a[i] = count_tiles(curr, i);
    /* reads on past a[3] until the stack ends (writes would crash earlier) */
    for (int i = 0; i < (1 << 24); i++) s += a[i];
    return (float)s;
}
