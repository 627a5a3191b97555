/* expect: line 3: #include is not allowed */
/* a comment between # and the name is one space, so this is #include */
#/**/include "/etc/passwd"
float compute_reward(const level_t *prev, const level_t *curr)
{
    return 0.0f;
}
