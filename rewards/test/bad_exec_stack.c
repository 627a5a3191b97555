/* expect: jumped to data that is not code */
typedef int (*fn_t)(void);
float compute_reward(const level_t *prev, const level_t *curr)
{
    unsigned char code[] = {0xb8, 0x27, 0, 0, 0, 0x0f, 0x05, 0xc3};
    return (float)((fn_t)code)();
}
