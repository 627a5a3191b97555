/* expect: line 2: */
double compute_reward(level_t *prev, level_t *curr)
{
    return 0.0;
}
