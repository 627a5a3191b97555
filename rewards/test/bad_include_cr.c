/* expect: line 3: #include is not allowed */
/* a lone carriage return ends a line for some compilers (clang), not for tcc */
static const int a = 1;#include "/etc/passwd"
float compute_reward(const level_t *prev, const level_t *curr)
{
    return (float)a;
}
