/* expect: 'fopen' is not available */
typedef struct FILE FILE;
FILE *fopen(const char *path, const char *mode);
float compute_reward(const level_t *prev, const level_t *curr)
{
    FILE *f = fopen("/tmp/pcgrllm-pwned", "w");
    return f ? 1.0f : 0.0f;
}
