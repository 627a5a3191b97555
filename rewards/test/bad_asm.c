/* expect: inline assembly is not allowed */
float compute_reward(const level_t *prev, const level_t *curr)
{
    long ret;
    __asm__ volatile("mov $39, %%eax\n syscall" : "=a"(ret));
    return (float)ret;
}
