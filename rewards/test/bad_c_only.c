/* expect: GPU compiler (NVRTC, CUDA C++) refuses it */
float compute_reward(const level_t *prev, const level_t *curr)
{
    int new = count_tiles(curr, KEY) - count_tiles(prev, KEY);
    return (float)new;
}
