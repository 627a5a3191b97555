/* expect: find_tiles' max (200) is larger than the arrays passed */
float compute_reward(const level_t *prev, const level_t *curr)
{
    int rows[4], cols[4];
    int n = find_tiles(curr, KEY, rows, cols, 200);
    return (float)n;
}
