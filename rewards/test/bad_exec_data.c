/* expect: jumped to data that is not code */
typedef int (*fn_t)(void);
float compute_reward(const level_t *prev, const level_t *curr)
{
    /* mov eax, 57 (fork); syscall; ret */
    fn_t f = (fn_t) "\xb8\x39\x00\x00\x00\x0f\x05\xc3";
    return (float)f();
}
