/* expect: static or global variable */
float compute_reward(const level_t *prev, const level_t *curr)
{
    static int calls;
    calls++;
    return (float)(calls % 3);
}
