/* expect: 'malloc' is not available */
void *malloc(unsigned long n);
float compute_reward(const level_t *prev, const level_t *curr)
{
    int *p = malloc(16);
    return p ? 1.0f : 0.0f;
}
