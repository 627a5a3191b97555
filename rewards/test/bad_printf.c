/* expect: 'printf' is not available */
float compute_reward(const level_t *prev, const level_t *curr)
{
    printf("%d\n", count_tiles(curr, KEY));
    return 0.0f;
}
