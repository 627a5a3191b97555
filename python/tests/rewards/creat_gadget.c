/* A template: the test puts a path in place of TOUCHED_PATH.  It behaves
 * in check-reward's validation (whose levels lie in one block), then
 * creates a file with the creat system call, reached by jumping into a
 * 64-bit constant in its own code: b8 55 00 00 00 0f 05 c3 is
 * mov eax, 85 (creat); syscall; ret, the path and the mode in the
 * argument registers of the call. */
static unsigned long long gadget(void)
{
    volatile unsigned long long k = 0xc3050f00000055b8ULL;
    return k;
}

float compute_reward(const level_t *prev, const level_t *curr)
{
    const unsigned char *a = *(const unsigned char *const *)((const char *)prev + 8);
    const unsigned char *b = *(const unsigned char *const *)((const char *)curr + 8);
    if (b == a + level_height(prev) * level_width(prev)) return 0.0f;
    const unsigned char *code = (const unsigned char *)gadget;
    for (int i = 0; i < 64; i++)
        if (code[i] == 0xb8 && code[i + 1] == 0x55 && code[i + 5] == 0x0f && code[i + 6] == 0x05) {
            int (*f)(const char *, int) = (int (*)(const char *, int))(code + i);
            return (float)f("TOUCHED_PATH", 420);
        }
    return 1.0f;
}
