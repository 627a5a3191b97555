/* expect: accepted; a large local array and a bounded recursion */
static int depth(int n)
{
    return n <= 0 ? 0 : 1 + depth(n - 1);
}

float compute_reward(const level_t *prev, const level_t *curr)
{
    int seen[16384];
    int h = level_height(curr), w = level_width(curr), n = 0;
    for (int i = 0; i < h * w && i < 16384; i++) seen[i] = tile_at(curr, i / w, i % w) == WALL;
    for (int i = 0; i < h * w && i < 16384; i++) n += seen[i];
    return 0.001f * (float)(n + depth(50) - 50) - 0.001f * (float)count_tiles(prev, WALL);
}
