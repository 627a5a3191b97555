/* expect: tile_at was given a level that is neither prev nor curr */
float compute_reward(const level_t *prev, const level_t *curr)
{
    int a[4];
    int s = 0;
    /* the writes past a[3] overwrite the saved copies of prev and curr */
    for (int i = 0; i < 64; i++) a[i] = tile_at(curr, 0, i % 16);
    for (int i = 0; i < 4; i++) s += a[i];
    return (float)s;
}
