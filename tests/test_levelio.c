/* Level text files (docs/method.md#level-files): every kind of malformed file is refused with
 * one line naming the file and the line, in the library and through the
 * commands that read levels; a written level reads back the same. */
#include "harness.h"
#include "levelio.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;   /* file name in the scratch directory */
    const char *text;   /* contents (len bytes; -1: strlen) */
    long len;
    int line;           /* line named in the message, 0 for none */
    const char *phrase; /* part of the message */
} bad_case;

static char big_rows[80 * 4];
static char big_cols[200];

static const bad_case bad_cases[] = {
    {"width.txt", "1 1 1\n1 1 1\n1 1\n", -1, 3, "row has 2 tiles, earlier rows have 3"},
    {"width_long.txt", "# c\n1 1\n1 1 1\n", -1, 3, "row has 3 tiles, earlier rows have 2"},
    {"unknown.txt", "1 1 1\n1 12 1\n", -1, 2, "unknown tile id 12"},
    {"ten.txt", "1 10\n", -1, 1, "unknown tile id 10"},
    {"zero.txt", "1 1\n0 1\n", -1, 2, "unknown tile id 0"},
    {"longnum.txt", "1 123456\n", -1, 1, "unknown tile id 123456"},
    {"empty.txt", "", -1, 0, "empty file"},
    {"comments.txt", "# only\n#comments\n\n   \n", -1, 0, "no rows of tile ids"},
    {"binary.txt", "1 1\n1 \x01\xfe\n", 9, 2, "binary data (byte 0x01)"},
    {"nul.txt", "1 1\n\0\0\0\n", 8, 2, "binary data (byte 0x00)"},
    {"high.txt", "1 1\n1 1\n\xc3\xa9 1\n", -1, 3, "binary data (byte 0xc3)"},
    {"double_space.txt", "1  1\n", -1, 1, "separated by single spaces"},
    {"tab.txt", "1\t1\n", -1, 1, "separated by single spaces"},
    {"comma.txt", "1,1\n", -1, 1, "separated by single spaces"},
    {"comma_lead.txt", ",1 1\n", -1, 1, "unexpected character ','"},
    {"trailing.txt", "1 1\n1 1 \n", -1, 2, "separated by single spaces"},
    {"leading.txt", "1 1\n 1 1\n", -1, 2, "unexpected character ' '"},
    {"letters.txt", "1 1\nk 1\n", -1, 2, "unexpected character 'k'"},
    {"negative.txt", "1 -1\n", -1, 1, "unexpected character '-'"},
    {"rows.txt", big_rows, -1, 65, "more than 64 rows"},
    {"cols.txt", big_cols, -1, 1, "more than 64 columns"},
};
#define N_BAD (int)(sizeof bad_cases / sizeof bad_cases[0])

static void fill_big(void)
{
    char *p = big_rows;
    for (int r = 0; r < 65; r++) p += sprintf(p, "1 2\n");
    p = big_cols;
    for (int c = 0; c < 65; c++) p += sprintf(p, c ? " 1" : "1");
    *p++ = '\n';
    *p = 0;
}

static long case_len(const bad_case *b)
{
    return b->len >= 0 ? b->len : (long)strlen(b->text);
}

static const char *scratch(const char *name)
{
    static char paths[4][600];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, 600, "%s/%s", pcg_test_tmpdir(), name);
    return p;
}

static const char *write_bytes(const char *name, const char *data, long len)
{
    const char *path = scratch(name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    return path;
}

/* err names the file, then the line (if any), then the phrase. */
static void check_message(const char *err, const char *file, int line, const char *phrase)
{
    char head[700];
    if (line) snprintf(head, sizeof head, "%s:%d: ", file, line);
    else snprintf(head, sizeof head, "%s: ", file);
    if (strncmp(err, head, strlen(head)) != 0) fail_msg("message '%s' does not start with '%s'", err, head);
    if (!strstr(err, phrase)) fail_msg("message '%s' lacks '%s'", err, phrase);
    assert_null(strchr(err, '\n'));
}

static void levelio_parse_errors(void **state)
{
    (void)state;
    fill_big();
    static unsigned char tiles[PCG_MAX_CELLS];
    for (int i = 0; i < N_BAD; i++) {
        const bad_case *b = &bad_cases[i];
        level_t l = {0, 0, NULL};
        char err[512] = "";
        int rc = level_parse(b->name, b->text, case_len(b), &l, tiles, err, sizeof err);
        if (rc != -1) fail_msg("%s: accepted", b->name);
        check_message(err, b->name, b->line, b->phrase);
        assert_null(l.t);
    }
}

/* Everything the format allows. */
static void levelio_parse_accepts(void **state)
{
    (void)state;
    static unsigned char tiles[PCG_MAX_CELLS];
    level_t l;
    char err[512];
    /* comments anywhere, blank lines, CRLF, no final newline */
    const char *text = "# a level\r\n3 1 2\r\n\r\n  # indented comment\n7 8 9\n4 5 6";
    assert_int_equal(level_parse("ok", text, (long)strlen(text), &l, tiles, err, sizeof err), 0);
    assert_int_equal(l.h, 3);
    assert_int_equal(l.w, 3);
    const unsigned char expect[9] = {3, 1, 2, 7, 8, 9, 4, 5, 6};
    assert_memory_equal(l.t, expect, 9);
    /* one cell */
    assert_int_equal(level_parse("one", "5\n", 2, &l, tiles, err, sizeof err), 0);
    assert_int_equal(l.h * l.w, 1);
    assert_int_equal(l.t[0], 5);
    /* the largest side, 64x64, is accepted */
    static char full[64 * 64 * 2 + 1];
    char *p = full;
    for (int r = 0; r < 64; r++)
        for (int c = 0; c < 64; c++) *p++ = (char)('1' + (r + c) % 9), *p++ = c == 63 ? '\n' : ' ';
    assert_int_equal(level_parse("full", full, (long)(p - full), &l, tiles, err, sizeof err), 0);
    assert_int_equal(l.h, 64);
    assert_int_equal(l.w, 64);
    assert_int_equal(l.t[63 * 64 + 63], 1 + (63 + 63) % 9);
    assert_int_equal(l.t[64 + 0], 2);
}

static void levelio_read_errors(void **state)
{
    (void)state;
    static unsigned char tiles[PCG_MAX_CELLS];
    level_t l;
    char err[700];
    const char *missing = scratch("no_such_level.txt");
    assert_int_equal(level_read(missing, &l, tiles, err, sizeof err), -1);
    check_message(err, missing, 0, "cannot open");
    assert_int_equal(level_read(pcg_test_tmpdir(), &l, tiles, err, sizeof err), -1);
    check_message(err, pcg_test_tmpdir(), 0, "is a directory");
    /* over 1 MiB: refused before parsing */
    long n = (1L << 20) + 16;
    char *huge = malloc((size_t)n);
    assert_non_null(huge);
    memset(huge, '#', (size_t)n);
    const char *path = write_bytes("huge.txt", huge, n);
    free(huge);
    assert_int_equal(level_read(path, &l, tiles, err, sizeof err), -1);
    check_message(err, path, 0, "file too large");
}

static void levelio_round_trip(void **state)
{
    (void)state;
    static unsigned char tiles[PCG_MAX_CELLS], back[PCG_MAX_CELLS];
    const int sizes[][2] = {{16, 16}, {5, 7}, {1, 1}, {64, 64}, {3, 64}};
    for (int s = 0; s < 5; s++) {
        level_t l = {sizes[s][0], sizes[s][1], tiles};
        for (int i = 0; i < l.h * l.w; i++) tiles[i] = (unsigned char)(1 + (i * 7 + s) % 9);
        const char *path = scratch("round.txt");
        assert_int_equal(level_write(path, &l, "round trip, seed 3"), 0);
        level_t r;
        char err[700];
        if (level_read(path, &r, back, err, sizeof err)) fail_msg("%s", err);
        assert_int_equal(r.h, l.h);
        assert_int_equal(r.w, l.w);
        assert_memory_equal(r.t, l.t, (size_t)(l.h * l.w));
    }
    /* the written text: comment line, then rows of ids and single spaces */
    level_t small = {2, 3, tiles};
    const unsigned char t[6] = {3, 1, 2, 9, 8, 7};
    memcpy(tiles, t, 6);
    const char *path = scratch("small.txt");
    assert_int_equal(level_write(path, &small, "hello"), 0);
    static char out[256];
    assert_int_equal(pcg_test_sh(out, sizeof out, "cat %s", path), 0);
    assert_string_equal(out, "# hello\n3 1 2\n9 8 7\n");
    assert_int_equal(level_write(path, &small, NULL), 0);
    assert_int_equal(pcg_test_sh(out, sizeof out, "cat %s", path), 0);
    assert_string_equal(out, "3 1 2\n9 8 7\n");
    char buf[16];
    assert_int_equal(level_format(&small, buf, sizeof buf), 12);
    assert_int_equal(level_format(&small, buf, 8), -1);
    /* an unwritable place fails without leaving files behind */
    assert_int_equal(level_write(scratch("no/such/dir/x.txt"), &small, NULL), -1);
    assert_string_equal(tile_name(TILE_TREASURE), "TREASURE");
    assert_string_equal(tile_name(42), "?");
}

/* Through the commands: non-zero exit, exactly one line naming file and line. */
static void levelio_cli_errors(void **state)
{
    (void)state;
    fill_big();
    static char out[8192];
    const char *bin = pcg_test_binary();
    char good[600];
    snprintf(good, sizeof good, "%s", write_bytes("good.txt", "3 7 8\n", 6));
    for (int i = 0; i < N_BAD; i++) {
        const bad_case *b = &bad_cases[i];
        const char *path = write_bytes(b->name, b->text, case_len(b));
        const char *cmds[] = {"eval --scenario 1", "eval --scenario 3 --json", "show"};
        for (int c = 0; c < 3; c++) {
            /* eval also gets a good file first: only the bad one is reported */
            int rc = pcg_test_sh(out, sizeof out, "%s %s %s %s 2>&1 >/dev/null", bin, cmds[c], c < 2 ? good : "",
                                 path);
            if (rc == 0) fail_msg("%s %s: exit 0", cmds[c], b->name);
            char *nl = strchr(out, '\n');
            if (!nl || nl[1]) fail_msg("%s %s: expected one line, got '%s'", cmds[c], b->name, out);
            *nl = 0;
            const char *msg = strstr(out, path);
            if (!msg) fail_msg("%s %s: '%s' does not name the file", cmds[c], b->name, out);
            check_message(msg, path, b->line, b->phrase);
        }
    }
    /* the reader's refusals of whole files */
    const char *missing = scratch("absent.txt");
    assert_true(pcg_test_sh(out, sizeof out, "%s show %s", bin, missing) != 0);
    assert_non_null(strstr(out, "absent.txt: cannot open"));
}

PCG_TESTS(levelio, cmocka_unit_test(levelio_parse_errors), cmocka_unit_test(levelio_parse_accepts),
          cmocka_unit_test(levelio_read_errors), cmocka_unit_test(levelio_round_trip),
          cmocka_unit_test(levelio_cli_errors))
