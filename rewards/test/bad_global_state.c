/* expect: static or global variable */
float best;
float compute_reward(const level_t *prev, const level_t *curr)
{
    float k = (float)count_tiles(curr, KEY);
    if (k > best) best = k;
    return best;
}
