/* expect: invalid memory access */
float compute_reward(const level_t *prev, const level_t *curr)
{
    const unsigned char *tiles = ((unsigned char *const *)curr)[1];
    return (float)tiles[-(1L << 40)];
}
