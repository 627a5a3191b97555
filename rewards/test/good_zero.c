/* expect: accepted; always zero */
float compute_reward(const level_t *prev, const level_t *curr)
{
    return 0.0f;
}
