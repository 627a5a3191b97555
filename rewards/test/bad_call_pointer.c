/* expect: called an address that is not code (a bad function pointer?) */
typedef float (*score_fn)(const level_t *l);
float compute_reward(const level_t *prev, const level_t *curr)
{
    score_fn f = (score_fn)(0x123456789L + count_tiles(curr, KEY));
    return f(curr);
}
