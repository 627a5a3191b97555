/* expect: line 2: '__has_include' */
#if __has_include("/etc/passwd")
float compute_reward(const level_t *prev, const level_t *curr)
{
    return 1.0f;
}
#else
float compute_reward(const level_t *prev, const level_t *curr)
{
    return 0.0f;
}
#endif
