/* expect: line 4: ';' expected at the end of this line (found "}" on line 5 instead) */
float compute_reward(const level_t *prev, const level_t *curr)
{
    return count_tiles(curr, KEY) - count_tiles(prev, KEY)
}
