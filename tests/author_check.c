/* The offline author's test helpers (author_check.h). */
#include "harness.h"
#include "author_check.h"
#include <stdlib.h>
#include <string.h>

#define CODE_MAX 65536

void make_level(test_level *tl, const char *const *rows, int h)
{
    int w = (int)strlen(rows[0]);
    tl->l.h = h;
    tl->l.w = w;
    tl->l.t = tl->t;
    for (int r = 0; r < h; r++) {
        assert_int_equal((int)strlen(rows[r]), w);
        for (int c = 0; c < w; c++) {
            const char *p = strchr(".#PBSXKDT", rows[r][c]);
            assert_non_null(p);
            tl->t[r * w + c] = (unsigned char)(TILE_EMPTY + (p - ".#PBSXKDT"));
        }
    }
}

void set_tile(test_level *tl, int r, int c, int tile) { tl->t[r * tl->l.w + c] = (unsigned char)tile; }

void copy_level(test_level *dst, const test_level *src)
{
    *dst = *src;
    dst->l.t = dst->t;
}

char *code_for(const author_reward *r)
{
    char *code = malloc(CODE_MAX);
    assert_non_null(code);
    int n = author_code(r, code, CODE_MAX);
    assert_true(n > 0);
    assert_int_equal((int)strlen(code), n);
    return code;
}

reward_prog *compile(const char *code)
{
    char err[512];
    reward_prog *p = reward_compile_cpu(code, err, sizeof err);
    if (!p) fail_msg("generated code does not compile: %s\n%s", err, code);
    return p;
}

float reward(reward_prog *p, const test_level *a, const test_level *b)
{
    return reward_prog_call(&a->l, &b->l, p);
}

