/* Reward JIT: source scan, libtcc compilation and the API against the level
 * core, JIT vs gcc on the human rewards, protections of the compiled image,
 * NVRTC compilation. */
#define _GNU_SOURCE
#include "harness.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "child.h"
#include "env.h"
#include "reward_jit.h"
#include "util.h"

/* ---- the human rewards compiled natively by gcc, for the differential ---- */
#define level_height nat_level_height
#define level_width nat_level_width
#define tile_at nat_tile_at
#define count_tiles nat_count_tiles
#define find_tiles nat_find_tiles
#define path_length nat_path_length
#define nearest_tile_distance nat_nearest_tile_distance
#define count_regions nat_count_regions
#define path_length_through nat_path_length_through
#define compute_reward nat_compute_reward_decl
#include "reward_api.h"
#undef compute_reward
int nat_level_height(const level_t *l) { return l->h; }
int nat_level_width(const level_t *l) { return l->w; }
int nat_tile_at(const level_t *l, int r, int c) { return lv_get(l, r, c); }
int nat_count_tiles(const level_t *l, int t) { return lv_count(l, t); }
int nat_find_tiles(const level_t *l, int t, int *rows, int *cols, int max)
{
    return lv_find(l, t, rows, cols, max < 0 ? 0 : max);
}
int nat_path_length(const level_t *l, int r0, int c0, int r1, int c1) { return lv_path_length(l, r0, c0, r1, c1); }
int nat_nearest_tile_distance(const level_t *l, int r, int c, int t) { return lv_nearest(l, r, c, t); }
int nat_count_regions(const level_t *l) { return lv_regions(l); }
int nat_path_length_through(const level_t *l, int r0, int c0, int r1, int c1, unsigned m)
{
    return lv_path_through(l, r0, c0, r1, c1, m);
}

#define compute_reward nat_s1
#define loss s1_loss
#define outside s1_outside
#include "../rewards/engine/scenario1.c"
#undef compute_reward
#undef loss
#undef outside
#define compute_reward nat_s2
#define loss s2_loss
#define outside s2_outside
#include "../rewards/engine/scenario2.c"
#undef compute_reward
#undef loss
#undef outside
#define compute_reward nat_s3
#define loss s3_loss
#define outside s3_outside
#define flood s3_flood
#define reached s3_reached
#define door_after_gate s3_door_after_gate
#include "../rewards/engine/scenario3.c"
#undef compute_reward
#undef loss
#undef outside
#undef flood
#undef reached
#undef door_after_gate
#undef GATE
#undef MAX_CELLS
#define compute_reward nat_s4
#define loss s4_loss
#define outside s4_outside
#define flood s4_flood
#define reached s4_reached
#define door_after_gate s4_door_after_gate
#include "../rewards/engine/scenario4.c"
#undef compute_reward
#undef loss
#undef outside
#undef flood
#undef reached
#undef door_after_gate
#undef GATE
#undef MAX_CELLS

/* the reference's ports: the same helpers in both files, named after PORT */
#define PORT_CAT2(a, b) a##b
#define PORT_CAT(a, b) PORT_CAT2(a, b)
#define compute_reward PORT_CAT(nat_, PORT)
#define ref_walkable PORT_CAT(PORT, _walkable)
#define ref_flood PORT_CAT(PORT, _flood)
#define ref_first PORT_CAT(PORT, _first)
#define ref_access PORT_CAT(PORT, _access)
#define ref_tile_loss PORT_CAT(PORT, _tile_loss)
#define PORT r1
#include "../rewards/human/scenario1.c"
#undef PORT
#define PORT r2
#include "../rewards/human/scenario2.c"
#undef PORT
#undef compute_reward
#undef ref_walkable
#undef ref_flood
#undef ref_first
#undef ref_access
#undef ref_tile_loss

/* rewards/engine/scenario1-4.c, then rewards/human/scenario1-2.c (the
 * human scenario 3 and 4 are copies of the engine's) */
#define N_NATIVE 6
static float (*const native_human[N_NATIVE])(const level_t *, const level_t *) = {nat_s1, nat_s2, nat_s3,
                                                                                 nat_s4, nat_r1, nat_r2};
static const char *const native_path[N_NATIVE] = {"rewards/engine/scenario1.c", "rewards/engine/scenario2.c",
                                                  "rewards/engine/scenario3.c", "rewards/engine/scenario4.c",
                                                  "rewards/human/scenario1.c",  "rewards/human/scenario2.c"};

static char *load(const char *path)
{
    char err[512];
    long len;
    char *s = read_file(path, REWARD_MAX_SOURCE, &len, err, sizeof err);
    if (!s) fail_msg("%s", err);
    return s;
}

static reward_prog *compile_ok(const char *src)
{
    char err[1024];
    reward_prog *p = reward_compile_cpu(src, err, sizeof err);
    if (!p) fail_msg("compile failed: %s\nsource:\n%s", err, src);
    return p;
}

/* A 6x7 level with walls splitting it, for API checks. */
static const char *test_map[] = {
    "1 1 2 1 1 1 1", "1 3 2 1 7 1 1", "1 1 2 2 2 1 1", "1 1 1 1 2 4 1", "2 2 2 1 2 1 8", "6 1 1 1 1 1 1",
};
static unsigned char map_tiles[6 * 7];
static level_t make_level(void)
{
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 7; c++) map_tiles[r * 7 + c] = (unsigned char)(test_map[r][2 * c] - '0');
    level_t l = {6, 7, map_tiles};
    return l;
}

/* ---- source scan ---- */

static void jit_scan_refuses(void **state)
{
    (void)state;
    static const struct {
        const char *src, *expect;
    } bad[] = {
        {"float x;\n#include <stdio.h>\n", "line 2: #include is not allowed"},
        {"\n\n   #  include \"x.h\"\n", "line 3: #include"},
        {"#inc\\\nlude <stdio.h>\n", "line 1: #include"},
        {"int a;\n%:include <stdio.h>\n", "line 2: the digraph"},
        {"#pragma once\n", "line 1: #pragma is not allowed"},
        {"int f(void) { _Pragma(\"x\") return 0; }\n", "'_Pragma'"},
        {"int f(void) { asm(\"int3\"); return 0; }\n", "inline assembly"},
        {"int f(void) { __asm__ volatile(\"\"); return 0; }\n", "inline assembly"},
        {"int f(void) { __as\\\nm__(\"\"); return 0; }\n", "line 1: '__asm__'"},
        {"static int g __attribute__((used));\n", "attributes are not allowed"},
        {"#define J(a,b) a##b\n", "token pasting"},
        {"int x = 1 ?\?= 2;\n", "trigraphs"},
        {"int f(void) { return __builtin_trap(), 0; }\n", "compiler builtins"},
        {"int __pcg_data_lo;\n", "reserved"},
        {"float f(float x) { return (float)__fixunssfdi(x); }\n", "line 1: '__fixunssfdi': names starting with __"},
        {"void f(int *a) { memset(a, 0, 8); }\n", "line 1: 'memset' is not available"},
        {"\nvoid f(int *a, int *b) { memcpy(a, b, 8); }\n", "line 2: 'memcpy' is not available"},
        {"_Thread_local int t;\n", "thread-local"},
        {"/* never closed\nfloat compute_reward(const level_t *a, const level_t *b) { return 0; }\n",
         "unterminated"},
        {"", "empty"},
        {"\nconst char _etext[8192] = {1};\n", "line 2: '_etext' is reserved by the linker"},
        {"const char *s = R\"(\" /*)\";\n#include \"/etc/passwd\"\n/* */\n", "line 1: raw string literals"},
        {"const char *s = u8R\"x(a)x\";\n", "raw string literals"},
    };
    char err[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        int rc = reward_scan(bad[i].src, err, sizeof err);
        if (rc != -1 || !strstr(err, bad[i].expect))
            fail_msg("case %zu: rc %d, err '%s', expected '%s'", i, rc, err, bad[i].expect);
    }
    /* too long */
    char *big = malloc(REWARD_MAX_SOURCE + 2);
    memset(big, ' ', REWARD_MAX_SOURCE + 1);
    big[REWARD_MAX_SOURCE + 1] = 0;
    assert_int_equal(reward_scan(big, err, sizeof err), -1);
    assert_non_null(strstr(err, "too long"));
    free(big);
}

static void jit_scan_accepts(void **state)
{
    (void)state;
    static const char *good[] = {
        "/* #include <stdio.h> and asm() in a comment */\nint x;\n",
        "// #pragma once\nint y;\n",
        /* (a trigraph is refused even here: phase 1 comes before literals) */
        "const char *s = \"#include <x> asm __attribute__ ## ?\? %:\";\n",
        "char c = '#'; const char *r = \"R\", *q = L\"x\"; int R = 1; int xR = R;\nint plasma_asm = 1, my_attribute__ = 2, x__asm = 3;\n",
        "#define SQ(x) ((x) * (x))\n#if 1\nint z = SQ(3);\n#endif\n",
        "float f = 1.5e-3f + 0x1p+4;\n",
        "int line = __LINE__; const char *fn(void) { return __func__; }\n",
    };
    char err[512];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (reward_scan(good[i], err, sizeof err)) fail_msg("case %zu refused: %s", i, err);
}

/* Every spelling of a directive a preprocessor reads, and the lexing tricks
 * that could hide one from a scan: each is refused with a message naming
 * the model's own line (the line of the # for a directive). */
static void jit_scan_directive_spellings_refused(void **state)
{
    (void)state;
    static const struct {
        const char *src;
        int line;
        const char *what;
    } bad[] = {
        /* a comment or odd whitespace between # and the name */
        {"int a;\n#/**/include <stdio.h>\n", 2, "#include is not allowed: reward code gets no headers"},
        {"#\vinclude <stdio.h>\n", 1, "#include is not allowed"},
        {"\n#\finclude <stdio.h>\n", 2, "#include is not allowed"},
        {"#/**/pragma pack(1)\n", 1, "#pragma is not allowed in reward code"},
        {"\n\n#/**/pragma comment(option, \"-run\")\n", 3, "#pragma is not allowed"},
        {"# /* multi\nline */ include <stdio.h>\n", 1, "#include is not allowed"},
        {"  #  /* c */\t pragma once\n", 1, "#pragma is not allowed"},
        /* splices, also between the parts of a comment */
        {"#inc\\\nlude <stdio.h>\n", 1, "#include is not allowed"},
        {"int a;\n#/\\\n* c *\\\n/include <stdio.h>\n", 2, "#include is not allowed"},
        {"#pra\\\r\ngma once\n", 1, "#pragma is not allowed"},
        /* digraph and trigraph spellings of # */
        {"int a;\n%:include <stdio.h>\n", 2, "the digraph %: is not allowed"},
        {"%:/**/pragma once\n", 1, "the digraph %:"},
        {"?\?=include <stdio.h>\n", 1, "trigraphs (?\?=)"},
        {"int a;\nconst char *s = \"?\?/\" /* \";\n#include <stdio.h>\n/* */\n", 2, "trigraphs (?\?/)"},
        /* what counts as the start of a line */
        {"int a;\r#include <stdio.h>\n", 1, "#include is not allowed"},
        {"int a;\n/**/ #include <stdio.h>\n", 2, "#include is not allowed"},
        {"int a;\n \t/* x */ #  include <stdio.h>\n", 2, "#include is not allowed"},
        {"int a; /*\n*/ #include <stdio.h>\n", 2, "#include is not allowed"},
        {"// c\r#include <stdio.h>\n", 1, "#include is not allowed"},
        {"int a;\n#\n#pragma once\n", 3, "#pragma is not allowed"},
        /* a // comment continued by a splice */
        {"int a;\n// a comment \\\n/*\n#include <stdio.h>\n// */\n", 2, "a // comment ending in a backslash"},
        {"// note \\\n#include <stdio.h>\n", 1, "a // comment ending in a backslash"},
        {"int a; \\ \n#include <stdio.h>\n", 1, "a backslash followed by spaces"},
        {"// a \\\r#include <stdio.h>\n", 1, "a backslash followed by spaces"},
        /* the engine appends its own code after the source: no splice onto it */
        {"int a;\n// x \\", 2, "the source ends in a backslash"},
        {"#define X 1 \\ ", 1, "the source ends in a backslash"},
        /* literals: a comment opener inside one, unterminated ones */
        {"const char *s = \"/*\";\n#include <stdio.h>\n/* */\n", 2, "#include is not allowed"},
        {"int c = '/*';\n#include <stdio.h>\n// */\n", 2, "#include is not allowed"},
        {"int a;\nconst char *s = \"abc;\n#include <stdio.h>\n\"\n", 2, "unterminated string literal"},
        {"int c = 'a;\n", 1, "unterminated character constant"},
        {"const char *s = \"a\rb\";\n", 1, "unterminated string literal"},
        {"int a = 1'000;\n", 1, "digit separators"},
        {"int \\u00e9a;\n", 1, "a backslash outside a string"},
        {"#def\\u0069ne X 1\n", 1, "#def is not allowed"},
        /* _Pragma, also through a macro; pasting */
        {"int f(void) { _Pragma(\"once\") return 0; }\n", 1, "'_Pragma': pragmas are not allowed"},
        {"#define P _Pragma\nP(\"once\")\n", 1, "'_Pragma'"},
        {"#define P(x) _Pra##x\n", 1, "token pasting (##)"},
        {"#define P(x) _Pra%:%:x\n", 1, "the digraph %:"},
        /* file probes and every directive outside the allow-list */
        {"#if __has_include(<stdio.h>)\n#endif\n", 1, "'__has_include'"},
        {"\n#if __has_include_next(<stdio.h>)\n#endif\n", 2, "'__has_include_next'"},
        {"int a;\n#line 1 \"x.c\"\n", 2, "#line is not allowed in reward code (it would change the line"},
        {"# 7 \"x.c\"\n", 1, "#7 is not allowed"},
        {"#error boom\n", 1, "#error is not allowed"},
        {"#warning boom\n", 1, "#warning is not allowed"},
        {"#ident \"x\"\n", 1, "#ident is not allowed"},
        {"#sccs \"x\"\n", 1, "#sccs is not allowed"},
        {"#assert machine(x86)\n", 1, "#assert is not allowed"},
        {"#unassert machine\n", 1, "#unassert is not allowed"},
        {"#embed \"/etc/passwd\"\n", 1, "#embed is not allowed: reward code gets no headers"},
        {"#import <stdio.h>\n", 1, "#import is not allowed: reward code gets no headers"},
        {"#include_next <stdio.h>\n", 1, "#include_next is not allowed: reward code gets no headers"},
        {"#elifdef X\n", 1, "#elifdef is not allowed"},
        {"#elifndef X\n", 1, "#elifndef is not allowed"},
        {"#frobnicate\n", 1, "#frobnicate is not allowed in reward code; only #define"},
        {"#\"x\"\n", 1, "#\"x\" is not allowed"},
        /* groups not taken and macro arguments are checked all the same */
        {"#if 0\n#include <stdio.h>\n#endif\n", 2, "#include is not allowed"},
        {"#define S(x) #x\nconst char *s = S(\n#include <stdio.h>\n);\n", 3, "#include is not allowed"},
    };
    char err[512], head[32];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        int rc = reward_scan(bad[i].src, err, sizeof err);
        snprintf(head, sizeof head, "line %d: ", bad[i].line);
        if (rc != -1 || strncmp(err, head, strlen(head)) || !strstr(err, bad[i].what) || strchr(err, '\n'))
            fail_msg("case %zu: rc %d, err '%s', expected '%s%s'", i, rc, err, head, bad[i].what);
    }
}

/* What a preprocessor allows reward code still passes: the allow-listed
 * directives, the null directive, stringizing, and # or directive names
 * inside comments and literals. */
static void jit_scan_preprocessor_accepted(void **state)
{
    (void)state;
    static const char *good[] = {
        "#define W 2\n#ifdef W\n#undef W\n#define W 3\n#elif 0\n#else\n#endif\n"
        "#ifndef H\n#define H(x) ((x) + W)\n#endif\n"
        "#if defined(W) && !defined(Q) && W > 1\n"
        "float compute_reward(const level_t *prev, const level_t *curr) { return (float)H(1); }\n"
        "#endif\n",
        "#\nint a;\n  #  \nint b;\n# /* nothing */\n#",
        "/* # include <stdio.h> */\nint c;\n",
        "/* a comment\n   # include <stdio.h>\n*/\nint d;\n",
        "const char *s = \"#include <stdio.h>\";\nchar h = '#';\n",
        "int e; // #pragma once\n// # include <stdio.h>\n",
        "#define STR(x) #x\nconst char *t = STR(a + b);\n",
        "#define A 1\r\nint f = A;\r\n#define B \\\r\n  2\r\nint g = B;\r\n",
        "const char *u = \"a\\\\\", *v = \"\\\"#include\\\"\";\nchar w = '\\'', x = '\\\\';\n",
        "const char *y = \"what?\", *z = \"x ?\? y\";\nint q(int a) { return a ? 1 : 2; }\n",
        "float k = 1.5e+3f, m = .5e-2f, o = 0x1p-3;\n",
        "#define LONG_MACRO(a, b) \\\n    ((a) > (b) ? (a) : (b))\nint r = LONG_MACRO(1, 2);\n",
    };
    char err[512];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (reward_scan(good[i], err, sizeof err)) fail_msg("case %zu refused: %s", i, err);
}

/* ---- CPU compilation ---- */

#define WALK_MASK (1u << TILE_EMPTY | 1u << TILE_PLAYER | 1u << TILE_DOOR)

static void jit_api_matches_level_core(void **state)
{
    (void)state;
    level_t l = make_level();
    /* expected values worked out by hand on test_map, and the level core's */
    const struct {
        const char *expr;
        int want, core;
    } cases[] = {
        {"level_height(curr)", 6, l.h},
        {"level_width(curr)", 7, l.w},
        {"tile_at(curr, 1, 1)", TILE_PLAYER, lv_get(&l, 1, 1)},
        {"tile_at(curr, -1, 0)", TILE_BORDER, lv_get(&l, -1, 0)},
        {"tile_at(curr, 0, 7)", TILE_BORDER, lv_get(&l, 0, 7)},
        {"tile_at(curr, 4, 6)", TILE_DOOR, lv_get(&l, 4, 6)},
        {"count_tiles(curr, WALL)", 10, lv_count(&l, TILE_WALL)},
        {"count_tiles(curr, 99)", 0, 0},
        {"path_length(curr, 1, 1, 1, 4)", 13, lv_path_length(&l, 1, 1, 1, 4)},
        {"path_length(curr, 1, 1, 4, 6)", 10, lv_path_length(&l, 1, 1, 4, 6)},
        {"path_length(curr, 1, 1, 1, 1)", 0, lv_path_length(&l, 1, 1, 1, 1)},
        {"path_length(curr, 0, 2, 1, 1)", -1, lv_path_length(&l, 0, 2, 1, 1)},
        {"path_length(curr, 1, 1, 99, 1)", -1, lv_path_length(&l, 1, 1, 99, 1)},
        {"nearest_tile_distance(curr, 1, 1, KEY)", 13, lv_nearest(&l, 1, 1, TILE_KEY)},
        {"nearest_tile_distance(curr, 1, 1, SPIDER)", 9, lv_nearest(&l, 1, 1, TILE_SPIDER)},
        {"nearest_tile_distance(curr, 1, 1, TREASURE)", -1, lv_nearest(&l, 1, 1, TILE_TREASURE)},
        {"count_regions(curr)", 1, lv_regions(&l)},
        /* only EMPTY, PLAYER, DOOR: the way down the left and along the bottom */
        {"path_length_through(curr, 1, 1, 4, 6, WALK)", 10, lv_path_through(&l, 1, 1, 4, 6, WALK_MASK)},
        /* the key cannot be walked on */
        {"path_length_through(curr, 1, 1, 1, 4, WALK)", -1, lv_path_through(&l, 1, 1, 1, 4, WALK_MASK)},
        /* with KEY: the BAT at (3,5) blocks, round through the door */
        {"path_length_through(curr, 1, 1, 1, 4, WALK | 1u << KEY)", 15,
         lv_path_through(&l, 1, 1, 1, 4, WALK_MASK | 1u << TILE_KEY)},
        {"path_length_through(curr, 1, 1, 1, 4, WALK & ~(1u << DOOR) | 1u << KEY)", -1,
         lv_path_through(&l, 1, 1, 1, 4, (WALK_MASK & ~(1u << TILE_DOOR)) | 1u << TILE_KEY)},
        /* all but walls: path_length's answer */
        {"path_length_through(curr, 1, 1, 1, 4, ~(1u << WALL | 1u << BORDER))", 13,
         lv_path_through(&l, 1, 1, 1, 4, ~PCG_BLOCK_DEFAULT)},
        {"path_length_through(curr, 1, 1, 1, 1, 1u << PLAYER)", 0, lv_path_through(&l, 1, 1, 1, 1, 1u << TILE_PLAYER)},
        {"path_length_through(curr, 1, 1, 1, 1, 1u << EMPTY)", -1, lv_path_through(&l, 1, 1, 1, 1, 1u << TILE_EMPTY)},
        {"path_length_through(curr, 1, 1, 6, 0, ~0u)", -1, lv_path_through(&l, 1, 1, 6, 0, ~0u)},
        {"find_tiles(curr, EMPTY, rows, cols, 0)", 27, lv_count(&l, TILE_EMPTY)},
        {"find_tiles(curr, KEY, rows, cols, 4) * 100 + rows[0] * 10 + cols[0]", 114, 114},
        {"find_tiles(curr, EMPTY, rows, cols, -5)", 27, lv_count(&l, TILE_EMPTY)},
        {"BORDER + EMPTY * 10 + WALL * 100 + PLAYER * 1000", 3210, 3210},
        {"BAT == 4 && SCORPION == 5 && SPIDER == 6 && KEY == 7 && DOOR == 8 && TREASURE == 9", 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char src[512];
        snprintf(src, sizeof src,
                 "#define WALK (1u << EMPTY | 1u << PLAYER | 1u << DOOR)\n"
                 "float compute_reward(const level_t *prev, const level_t *curr)\n"
                 "{\n    int rows[64], cols[64];\n    rows[0] = cols[0] = 0;\n    return (float)(%s);\n}\n",
                 cases[i].expr);
        reward_prog *p = compile_ok(src);
        int got = (int)reward_prog_call(&l, &l, p);
        if (got != cases[i].want || cases[i].core != cases[i].want)
            fail_msg("%s: JIT %d, level core %d, expected %d", cases[i].expr, got, cases[i].core, cases[i].want);
        reward_prog_free(p);
    }
}

static void jit_math_matches_libm(void **state)
{
    (void)state;
    static const char *fns1[] = {"fabsf", "sqrtf", "expf", "logf", "tanhf", "floorf", "ceilf"};
    static float (*const ref1[])(float) = {fabsf, sqrtf, expf, logf, tanhf, floorf, ceilf};
    static const char *fns2[] = {"powf", "fminf", "fmaxf"};
    static float (*const ref2[])(float, float) = {powf, fminf, fmaxf};
    level_t l = make_level();
    for (size_t i = 0; i < 7; i++) {
        char src[256];
        snprintf(src, sizeof src,
                 "float compute_reward(const level_t *p, const level_t *c)\n{ return %s(2.75f); }\n", fns1[i]);
        reward_prog *p = compile_ok(src);
        assert_true(reward_prog_call(&l, &l, p) == ref1[i](2.75f));
        reward_prog_free(p);
    }
    for (size_t i = 0; i < 3; i++) {
        char src[256];
        snprintf(src, sizeof src,
                 "float compute_reward(const level_t *p, const level_t *c)\n{ return %s(2.75f, 1.5f); }\n",
                 fns2[i]);
        reward_prog *p = compile_ok(src);
        assert_true(reward_prog_call(&l, &l, p) == ref2[i](2.75f, 1.5f));
        reward_prog_free(p);
    }
}

/* Code that makes tcc call its runtime helpers: struct copies, zeroed
 * arrays, 64-bit unsigned conversions, long double. */
static void jit_codegen_helpers(void **state)
{
    (void)state;
    const char *src = "struct big { int v[40]; float f; };\n"
                      "static const int weights[4] = {3, 5, 7, 11};\n"
                      "static struct big fill(int k) { struct big b = {{0}}; b.v[39] = k; b.f = 0.5f; return b; }\n"
                      "float compute_reward(const level_t *prev, const level_t *curr)\n"
                      "{\n"
                      "    int zeros[100] = {0};\n"
                      "    struct big a = fill(weights[2]), b;\n"
                      "    b = a;\n"
                      "    unsigned long long u = (unsigned long long)(3.0e9f);\n"
                      "    unsigned long long v = (unsigned long long)(5.0e9);\n"
                      "    double d = (double)u + (double)v;\n"
                      "    float f = (float)u;\n"
                      "    long double x = 2.5;\n"
                      "    unsigned long long w = (unsigned long long)x;\n"
                      "    return (float)(b.v[39] + zeros[57] + weights[3]) + b.f + (float)(d / 1e9) + f / 3e9f + "
                      "(float)w;\n"
                      "}\n";
    reward_prog *p = compile_ok(src);
    level_t l = make_level();
    float got = reward_prog_call(&l, &l, p);
    float want = (float)(7 + 0 + 11) + 0.5f + (float)(8.0e9 / 1e9) + (float)3.0e9 / 3e9f + 2.0f;
    assert_float_equal(got, want, 1e-5);
    reward_prog_free(p);
}

static void jit_errors_carry_source_lines(void **state)
{
    (void)state;
    static const struct {
        const char *src, *expect;
    } cases[] = {
        {"float compute_reward(const level_t *p, const level_t *c)\n{\n    int x = 1\n    return x;\n}\n",
         "line 3: ';' expected at the end of this line (found \"return\" on line 4 instead)"},
        {"\n\nfloat compute_reward(const level_t *p, const level_t *c)\n{\n    return undeclared_thing;\n}\n",
         "line 5:"},
        {"int puts(const char *s);\nfloat compute_reward(const level_t *p, const level_t *c)\n{\n"
         "    return (float)puts(\"hi\");\n}\n",
         "line 1: 'puts' is not available"},
        {"float compute_reward(const level_t *p, const level_t *c)\n{\n    return (float)system(\"ls\");\n}\n",
         "line 3: 'system' is not available"},
        {"float other(const level_t *p, const level_t *c) { return 0; }\n", "no compute_reward"},
        {"float compute_reward(const level_t *p, const level_t *c);\nfloat f(void) { return "
         "compute_reward(0, 0); }\n",
         "compute_reward is declared but not defined"},
        {"double compute_reward(const level_t *p, const level_t *c) { return 0; }\n", "line 1:"},
        {"int count_tiles(const level_t *l, int t) { return 0; }\n"
         "float compute_reward(const level_t *p, const level_t *c) { return 0; }\n",
         "line 1: 'count_tiles' is already defined by the reward API"},
        {"\nfloat compute_reward(const level_t *p, const level_t *c) { return (float)c->h; }\n",
         "line 2: field not found: h; level_t is opaque"},
    };
    char err[1024];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        err[0] = 0;
        reward_prog *p = reward_compile_cpu(cases[i].src, err, sizeof err);
        if (p || !strstr(err, cases[i].expect))
            fail_msg("case %zu: %s: got '%s', expected '%s'", i, p ? "compiled" : "refused", err, cases[i].expect);
        assert_null(strchr(err, '\n'));
    }
}

/* compute_reward's type is read off the source before either compiler
 * runs: a wrong one gets the one line that says what it must be; what the
 * check cannot read (a typedef, a macro) is left to the compilers. */
static void jit_signature_checked(void **state)
{
    (void)state;
    static const char *const want = "compute_reward must return float and take (const level_t *prev, const "
                                    "level_t *curr); ";
    static const struct {
        const char *src, *expect; /* NULL: the scan accepts it */
    } cases[] = {
        {"double compute_reward(const level_t *prev, const level_t *curr) { return 0; }", "line 1: %sit returns double"},
        {"\nint\ncompute_reward(const level_t *a, const level_t *b) { return 0; }", "line 3: %sit returns int"},
        {"float *compute_reward(const level_t *a, const level_t *b);", "line 1: %sit returns float *"},
        {"float compute_reward(level_t *prev, level_t *curr) { return 0; }",
         "line 1: %sit takes (level_t *prev, level_t *curr)"},
        {"float compute_reward(const level_t *curr) { return 0; }", "line 1: %sit takes (const level_t *curr)"},
        {"float compute_reward(void) { return 0; }", "line 1: %sit takes (void)"},
        {"float compute_reward() { return 0; }", "line 1: %sit takes no parameters"},
        {"float compute_reward(const level_t *a, const level_t *b, int k) { return 0; }",
         "line 1: %sit takes (const level_t *a, const level_t *b, int k)"},
        {"unsigned long compute_reward(const level_t *a, level_t *b) { return 0; }",
         "line 1: %sit returns unsigned long and takes (const level_t *a, level_t *b)"},
        /* right, in the spellings C allows */
        {"float compute_reward(const level_t *prev, const level_t *curr) { return 0; }", NULL},
        {"static inline float compute_reward(level_t const *p, const struct level *const c) { return 0; }", NULL},
        {"float compute_reward(const level_t *, const level_t *restrict);\n"
         "float compute_reward(const level_t *p, const level_t *c) { return compute_reward(p, c) * 0; }",
         NULL},
        /* names this check does not know: the compiler decides */
        {"typedef const level_t lv;\nfloat compute_reward(lv *p, lv *c) { return 0; }", NULL},
        {"#define REAL float\nREAL compute_reward(const level_t *p, const level_t *c) { return 0; }", NULL},
        /* not declarations of it */
        {"float f(const level_t *p) { return compute_reward(p, p); }\n"
         "float compute_reward(const level_t *p, const level_t *c) { return 0; }",
         NULL},
        {"/* double compute_reward(int x) */\nfloat compute_reward(const level_t *p, const level_t *c) { return 0; }",
         NULL},
    };
    char err[1024], expect[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        err[0] = 0;
        int rc = reward_scan(cases[i].src, err, sizeof err);
        if (!cases[i].expect) {
            if (rc) fail_msg("case %zu refused: %s", i, err);
            continue;
        }
        snprintf(expect, sizeof expect, cases[i].expect, want);
        if (rc == 0 || strcmp(err, expect)) fail_msg("case %zu: got '%s', expected '%s'", i, err, expect);
        /* the CPU compile says the same (it scans first) */
        reward_prog *p = reward_compile_cpu(cases[i].src, err, sizeof err);
        assert_null(p);
        assert_string_equal(err, expect);
    }
}

/* A missing ';' is reported on the line where the statement ended, when
 * the token after it starts a later line; otherwise the compiler's line
 * stays. */
static void jit_missing_semicolon_line(void **state)
{
    (void)state;
    static const struct {
        const char *src, *expect;
    } cases[] = {
        {"float compute_reward(const level_t *p, const level_t *c)\n{\n    int k = count_tiles(c, KEY)\n\n"
         "    // the next statement\n    return (float)k;\n}\n",
         "line 3: ';' expected at the end of this line (found \"return\" on line 6 instead)"},
        {"float compute_reward(const level_t *p, const level_t *c)\n{\n    return 1.0f\n}\n",
         "line 3: ';' expected at the end of this line (found \"}\" on line 4 instead)"},
        {"#define ONE 1\nfloat compute_reward(const level_t *p, const level_t *c)\n{\n    int k = ONE\n"
         "#define TWO 2\n    return (float)k;\n}\n",
         "line 4: ';' expected at the end of this line (found \"return\" on line 6 instead)"},
        /* the token after the missing ';' is on its line: the line stays */
        {"float compute_reward(const level_t *p, const level_t *c)\n{\n    int a = 1 int b = 2;\n"
         "    return (float)(a + b);\n}\n",
         "line 3: ';' expected (got \"int\")"},
        /* the token is not the first of its line: the line stays */
        {"float compute_reward(const level_t *p, const level_t *c)\n{\n    int a = 1\n    ; int b = 2 int c2;\n"
         "    return 0;\n}\n",
         "line 4: ';' expected (got \"int\")"},
    };
    char err[1024];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        err[0] = 0;
        reward_prog *p = reward_compile_cpu(cases[i].src, err, sizeof err);
        if (p || strcmp(err, cases[i].expect)) fail_msg("case %zu: got '%s', expected '%s'", i, err, cases[i].expect);
    }
    char nv[256];
    if (!reward_nvrtc_available(nv, sizeof nv)) return;
    /* NVRTC's caret names the token: the same line */
    if (reward_compile_nvrtc(cases[0].src, "sm_90", NULL, NULL, err, sizeof err) != -1 ||
        strcmp(err, "line 3: expected a \";\" at the end of this line (found \"return\" on line 6 instead)"))
        fail_msg("nvrtc: got '%s'", err);
}

/* JIT (libtcc) against gcc -O2 on the same human reward source, on every
 * transition of an episode of random play. */
static void jit_human_rewards_match_gcc(void **state)
{
    (void)state;
    for (int s = 0; s < N_NATIVE; s++) {
        const char *path = native_path[s];
        char *src = load(path);
        reward_prog *p = compile_ok(src);
        free(src);
        env_t e;
        int n = 3, variant = s == 2 || s == 3 ? VARIANT_TREASURE : VARIANT_DUNGEON;
        assert_int_equal(env_alloc(&e, n, 16, 16, variant, 40 + (uint64_t)s), 0);
        unsigned char prev[256];
        long nonzero = 0;
        /* one episode per environment, replayed serially with the env rules */
        for (int i = 0; i < n; i++) {
            level_t b = env_level(&e, i);
            unsigned char *pad = e.pad + (size_t)i * e.cfg.pad_h * e.cfg.pad_w;
            for (int t = 0; t < e.cfg.episode_len; t++) {
                memcpy(prev, b.t, (size_t)e.cells);
                int act = (int)philox_below(philox_block(9, (1ull << 32) + (pcg_u64)i, (pcg_u64)t >> 2).v[t & 3],
                                            (pcg_u32)e.cfg.n_actions);
                dungeon_apply(&e.cfg, t, act, b.t, e.frozen + (size_t)i * e.cells, pad);
                level_t a = {16, 16, prev};
                float j = reward_prog_call(&a, &b, p), g = native_human[s](&a, &b);
                if (fabsf(j - g) > 1e-5f * (1.0f + fabsf(g)))
                    fail_msg("%s step %d env %d: JIT %.9g, gcc %.9g", path, t, i, (double)j, (double)g);
                nonzero += g != 0.0f;
            }
        }
        assert_true(nonzero > 100); /* the rewards do react to edits */
        env_free(&e);
        reward_prog_free(p);
    }
}

/* The compiled reward as env.h's reward callback, called from OpenMP
 * threads inside env_step, against the native one. */
static float native_s1_cb(const level_t *prev, const level_t *curr, void *ctx)
{
    (void)ctx;
    return nat_s1(prev, curr);
}

static void jit_in_env_step_threads(void **state)
{
    (void)state;
    char *src = load("rewards/engine/scenario1.c");
    reward_prog *p = compile_ok(src);
    free(src);
    env_t a, b;
    int n = 8;
    assert_int_equal(env_alloc(&a, n, 16, 16, VARIANT_DUNGEON, 5), 0);
    assert_int_equal(env_alloc(&b, n, 16, 16, VARIANT_DUNGEON, 5), 0);
    env_set_reward(&a, reward_prog_call, p);
    env_set_reward(&b, native_s1_cb, NULL);
    int *acts = malloc(sizeof(int) * (size_t)n);
    for (int t = 0; t < a.cfg.episode_len + 10; t++) {
        env_random_actions(&a, 3, (uint64_t)t, acts);
        env_step(&a, acts);
        env_step(&b, acts);
        for (int i = 0; i < n; i++)
            if (fabsf(a.rewards[i] - b.rewards[i]) > 1e-5f)
                fail_msg("step %d env %d: %g vs %g", t, i, (double)a.rewards[i], (double)b.rewards[i]);
    }
    assert_true(fabs(a.log.episode_return - b.log.episode_return) < 1e-3);
    free(acts);
    env_free(&a);
    env_free(&b);
    reward_prog_free(p);
}

/* In a child: call a compiled reward once. */
typedef struct {
    const char *src;
} call_job;
static int call_once(void *arg)
{
    const call_job *j = arg;
    char err[512];
    reward_prog *p = reward_compile_cpu(j->src, err, sizeof err);
    if (!p) {
        child_fail(err);
        return 1;
    }
    level_t l = make_level();
    float r = reward_prog_call(&l, &l, p);
    child_send(&r, sizeof r);
    return 0;
}

/* Static state cannot be written and data cannot be run, even outside the
 * sandbox (here in a plain child, so the fault is the only protection). */
static void jit_image_protected(void **state)
{
    (void)state;
    char reason[512];
    call_job j = {"float compute_reward(const level_t *p, const level_t *c)\n"
                  "{ static int calls; calls++; return (float)calls; }\n"};
    assert_int_equal(child_run(call_once, &j, 20, reason, sizeof reason), -1);
    assert_non_null(strstr(reason, "SIGSEGV"));
    call_job k = {"float compute_reward(const level_t *p, const level_t *c)\n"
                  "{ typedef float (*fn)(void); return ((fn)\"\\xc3\")(); }\n"};
    assert_int_equal(child_run(call_once, &k, 20, reason, sizeof reason), -1);
    assert_non_null(strstr(reason, "SIGSEGV"));
    /* reading static constant data is fine */
    call_job ok = {"static const float w[3] = {0.5f, 1.5f, 2.5f};\n"
                   "float compute_reward(const level_t *p, const level_t *c) { return w[2] + w[tile_at(c, 1, 1) - 3]; }\n"};
    void *blob = NULL;
    size_t len = 0;
    child_opts o = {.timeout_s = 20};
    assert_int_equal(child_run_ex(call_once, &ok, &o, &blob, &len, reason, sizeof reason), 0);
    assert_int_equal(len, sizeof(float));
    assert_float_equal(*(float *)blob, 3.0f, 0);
    free(blob);
}

/* ---- NVRTC ---- */

static void need_nvrtc(const char *test)
{
    char why[256];
    if (!reward_nvrtc_available(why, sizeof why)) pcg_test_skip(test, why);
}

static void jit_nvrtc_human_rewards_all_archs(void **state)
{
    (void)state;
    need_nvrtc("jit_nvrtc_human_rewards_all_archs");
    static const char *archs[] = REWARD_GPU_ARCHS;
    char err[1024];
    for (int s = 0; s < N_NATIVE; s++) {
        const char *path = native_path[s];
        char *src = load(path);
        /* every architecture for one reward, sm_90 for the others (time) */
        int n_arch = s == 0 ? 4 : 1;
        for (int a = 0; a < n_arch; a++) {
            const char *arch = s == 0 ? archs[a] : "sm_90";
            char *cubin = NULL;
            size_t len = 0;
            int rc = reward_compile_nvrtc(src, arch, &cubin, &len, err, sizeof err);
            if (rc) fail_msg("%s for %s: %s", path, arch, err);
            assert_true(len > 1000);
            assert_memory_equal(cubin, "\177ELF", 4);
            assert_non_null(memmem(cubin, len, REWARD_KERNEL_NAME, strlen(REWARD_KERNEL_NAME)));
            free(cubin);
        }
        free(src);
    }
}

static void jit_nvrtc_errors(void **state)
{
    (void)state;
    need_nvrtc("jit_nvrtc_errors");
    char err[1024];
    char *cubin = (char *)1;
    size_t len = 1;
    const char *bad = "\n\nfloat compute_reward(const level_t *p, const level_t *c)\n{\n    return nope;\n}\n";
    assert_int_equal(reward_compile_nvrtc(bad, "sm_90", &cubin, &len, err, sizeof err), -1);
    assert_null(cubin);
    assert_int_equal(len, 0);
    if (!strstr(err, "line 5:")) fail_msg("got '%s'", err);
    assert_int_equal(reward_compile_nvrtc("#include <x>\n", "sm_90", &cubin, &len, err, sizeof err), -1);
    assert_non_null(strstr(err, "#include"));
    const char *undef = "int system(const char *);\n"
                        "float compute_reward(const level_t *p, const level_t *c) { return (float)system(\"x\"); }\n";
    assert_int_equal(reward_compile_nvrtc(undef, "sm_90", NULL, NULL, err, sizeof err), -1);
    if (!strstr(err, "'system' is not available")) fail_msg("got '%s'", err);
    assert_int_equal(reward_compile_nvrtc("float compute_reward(const level_t *p, const level_t *c) { return 0; }",
                                          "gfx90a", NULL, NULL, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "architecture"));
    /* a smaller largest side (less local memory per thread) compiles; one
     * outside 5..64 is refused */
    char *small = NULL, *big = NULL;
    size_t ls = 0, lb = 0;
    char *src = load("rewards/human/scenario1.c");
    assert_int_equal(reward_compile_nvrtc_ex(src, "sm_90", 16, &small, &ls, err, sizeof err), 0);
    assert_int_equal(reward_compile_nvrtc_ex(src, "sm_90", 0, &big, &lb, err, sizeof err), 0);
    assert_true(ls > 1000 && lb > 1000);
    assert_int_equal(reward_compile_nvrtc_ex(src, "sm_90", 100, NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "largest level side"));
    free(small);
    free(big);
    free(src);
}

/* Without libnvrtc the engine still runs: one line, and the CPU path works. */
static void jit_nvrtc_missing_library(void **state)
{
    (void)state;
    char out[4096];
    const char *bin = pcg_test_binary();
    int rc = pcg_test_sh(out, sizeof out,
                         "PCGRLLM_NVRTC=/nonexistent/libnvrtc.so %s check-reward --backend cuda --envs 2 "
                         "rewards/human/scenario1.c",
                         bin);
    assert_int_equal(rc, 1);
    if (!strstr(out, "error: --backend cuda: NVRTC not available")) fail_msg("got: %s", out);
    rc = pcg_test_sh(out, sizeof out,
                     "PCGRLLM_NVRTC=/nonexistent/libnvrtc.so %s check-reward --envs 2 rewards/human/scenario1.c", bin);
    assert_int_equal(rc, 0);
    if (!strstr(out, "gpu: not checked: NVRTC not available")) fail_msg("got: %s", out);
}

/* check-reward --backend cuda --save-cubins DIR leaves one cubin per
 * architecture, each the reward kernel's module (what make cuda packs for a
 * machine without NVRTC); the flag alone is a usage error. */
static void jit_nvrtc_save_cubins(void **state)
{
    (void)state;
    need_nvrtc("jit_nvrtc_save_cubins");
    char out[4096], dir[600], path[700];
    const char *bin = pcg_test_binary();
    snprintf(dir, sizeof dir, "%s/cubins", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s check-reward --save-cubins %s rewards/human/scenario1.c", bin, dir);
    assert_int_equal(rc, 2);
    if (!strstr(out, "--save-cubins needs --backend cuda")) fail_msg("got: %s", out);
    assert_false(pcg_test_exists(dir));
    rc = pcg_test_sh(out, sizeof out, "%s check-reward --backend cuda --envs 2 --save-cubins %s rewards/human/scenario1.c",
                     bin, dir);
    if (rc) fail_msg("check-reward --save-cubins: %s", out);
    static const char *archs[] = REWARD_GPU_ARCHS;
    for (size_t a = 0; a < sizeof archs / sizeof archs[0]; a++) {
        snprintf(path, sizeof path, "%s/%s.cubin", dir, archs[a]);
        long len = 0;
        char err[256], *cubin = read_file(path, 1 << 26, &len, err, sizeof err);
        if (!cubin) fail_msg("%s: %s", path, err);
        assert_true(len > 1000);
        assert_memory_equal(cubin, "\177ELF", 4);
        assert_non_null(memmem(cubin, (size_t)len, REWARD_KERNEL_NAME, strlen(REWARD_KERNEL_NAME)));
        free(cubin);
    }
}

PCG_TESTS(reward_jit, cmocka_unit_test(jit_scan_refuses), cmocka_unit_test(jit_scan_accepts),
          cmocka_unit_test(jit_scan_directive_spellings_refused), cmocka_unit_test(jit_scan_preprocessor_accepted),
          cmocka_unit_test(jit_api_matches_level_core), cmocka_unit_test(jit_math_matches_libm),
          cmocka_unit_test(jit_codegen_helpers), cmocka_unit_test(jit_errors_carry_source_lines),
          cmocka_unit_test(jit_signature_checked), cmocka_unit_test(jit_missing_semicolon_line),
          cmocka_unit_test(jit_human_rewards_match_gcc), cmocka_unit_test(jit_in_env_step_threads),
          cmocka_unit_test(jit_image_protected), cmocka_unit_test(jit_nvrtc_human_rewards_all_archs),
          cmocka_unit_test(jit_nvrtc_errors), cmocka_unit_test(jit_nvrtc_missing_library),
          cmocka_unit_test(jit_nvrtc_save_cubins))
