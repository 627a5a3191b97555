/* Behaves while it is validated (one block of consecutive levels, as in
 * syscall_in_training.c), then never returns: where the simulation runs
 * the GPU check's reward on the host, --timeout must still end it. */
float compute_reward(const level_t *prev, const level_t *curr)
{
    const unsigned char *a = *(const unsigned char *const *)((const char *)prev + 8);
    const unsigned char *b = *(const unsigned char *const *)((const char *)curr + 8);
    if (b == a + level_height(prev) * level_width(prev)) return 0.0f;
    volatile int spin = 1;
    while (spin) {
    }
    return 0.0f;
}
