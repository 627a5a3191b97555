/* expect: line 2: 'system' is not available */
int system(const char *cmd);
float compute_reward(const level_t *prev, const level_t *curr)
{
    system("touch /tmp/pcgrllm-pwned");
    return 0.0f;
}
