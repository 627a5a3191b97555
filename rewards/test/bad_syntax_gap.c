/* expect: line 4: ';' expected at the end of this line (found "return" on line 7 instead) */
float compute_reward(const level_t *prev, const level_t *curr)
{
    int keys = count_tiles(curr, KEY) - count_tiles(prev, KEY)

    /* a comment and a blank line between the statement and the next */
    return (float)keys;
}
