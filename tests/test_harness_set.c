/* The harness benchmark's target set: the file in the repository is the
 * one its seed makes, every case is feasible, and a damaged set file is
 * refused in one line (host/harness/harness_set.h). */
#include "harness.h"
#include "feasible.h"
#include "harness_set.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static harness_case made[HARNESS_SET_MAX], read_back[HARNESS_SET_MAX];

static void harness_set_file_matches_seed(void **state)
{
    (void)state;
    int n = harness_set_make(HARNESS_SET_SEED, made), fixed = 0;
    /* 31 x 31 pairs; those with an even sum of at least 26 are feasible */
    int want = 0;
    for (int a = HARNESS_LEG_MIN; a <= HARNESS_LEG_MAX; a++)
        for (int b = HARNESS_LEG_MIN; b <= HARNESS_LEG_MAX; b++) want += a + b >= 26 && (a + b) % 2 == 0;
    assert_int_equal(n, want);
    char err[400] = "";
    int m = harness_set_read("bench/harness_targets.json", read_back, HARNESS_SET_MAX, &fixed, err, sizeof err);
    if (m < 0) fail_msg("%s", err);
    assert_int_equal(m, n);
    assert_int_equal(fixed, HARNESS_FIXED);
    assert_memory_equal(made, read_back, sizeof(harness_case) * (size_t)n);
    /* another seed, another order, the same pairs */
    static harness_case other[HARNESS_SET_MAX];
    assert_int_equal(harness_set_make(HARNESS_SET_SEED + 1, other), n);
    assert_memory_not_equal(made, other, sizeof(harness_case) * HARNESS_FIXED);
    target_t t;
    harness_case_target(&made[0], &t);
    assert_true(target_is_two_leg(&t));
    assert_int_equal(t.enemy_count, HARNESS_ENEMIES);
    assert_int_equal(t.tolerance, 0);
}

static int read_text(const char *name, const char *text, char *err, int errlen)
{
    char path[600];
    int fixed;
    snprintf(path, sizeof path, "%s/%s", pcg_test_tmpdir(), name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return harness_set_read(path, read_back, HARNESS_SET_MAX, &fixed, err, errlen);
}

static void harness_set_damaged_files(void **state)
{
    (void)state;
    static const char *const bad[][3] = {
        {"odd", "{\"seed\":1,\"fixed\":1,\"cases\":[{\"player_key\":10,\"key_door\":17,\"level_seed\":3}]}", "even"},
        {"short", "{\"seed\":1,\"fixed\":1,\"cases\":[{\"player_key\":10,\"key_door\":10,\"level_seed\":3}]}",
         "at least 26"},
        {"extra", "{\"seed\":1,\"fixed\":1,\"cases\":[{\"player_key\":10,\"key_door\":16,\"level_seed\":3,\"x\":1}]}",
         "case 0"},
        {"neg", "{\"seed\":1,\"fixed\":1,\"cases\":[{\"player_key\":10,\"key_door\":16,\"level_seed\":-3}]}",
         "level_seed"},
        {"fixed", "{\"seed\":1,\"fixed\":2,\"cases\":[{\"player_key\":10,\"key_door\":16,\"level_seed\":3}]}",
         "fixed part"},
        {"empty", "{\"seed\":1,\"fixed\":0,\"cases\":[]}", "fixed part"},
        {"text", "not json", "harness"},
        {"array", "[1,2]", "expected"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[400] = "", name[64];
        snprintf(name, sizeof name, "harness_%s.json", bad[i][0]);
        assert_int_equal(read_text(name, bad[i][1], err, sizeof err), -1);
        if (!strstr(err, bad[i][2])) fail_msg("%s: '%s' lacks '%s'", bad[i][0], err, bad[i][2]);
        assert_null(strchr(err, '\n'));
    }
    /* a valid set behind megabytes of blanks is refused by its size, not read */
    char err[400];
    char *padded = malloc((8u << 20) + 200);
    assert_non_null(padded);
    memset(padded, ' ', 8u << 20);
    strcpy(padded + (8u << 20), "{\"seed\":1,\"fixed\":1,\"cases\":[{\"player_key\":10,\"key_door\":16,\"level_seed\":3}]}");
    assert_int_equal(read_text("harness_padded.json", padded, err, sizeof err), -1);
    free(padded);
    if (!strstr(err, "too large")) fail_msg("padded: '%s'", err);
    assert_int_equal(read_text("harness_ok.json",
                               "{\"seed\":1,\"fixed\":1,\"cases\":[{\"player_key\":10,\"key_door\":16,\"level_seed\":3}]}",
                               err, sizeof err),
                     1);
}

/* bench harness --modes with no mode in it is refused, not run as the
 * builder's row alone. */
static void harness_modes_empty_refused(void **state)
{
    (void)state;
    char out[4096];
    int rc = pcg_test_sh(out, sizeof out, "%s bench harness --n 1 --steps 1 --modes ',,' 2>&1", pcg_test_binary());
    assert_int_equal(rc, 2);
    assert_int_equal(pcg_test_count_lines(out), 1);
    assert_non_null(strstr(out, "--modes takes"));
}

PCG_TESTS(harness_set, cmocka_unit_test(harness_set_file_matches_seed), cmocka_unit_test(harness_set_damaged_files),
          cmocka_unit_test(harness_modes_empty_refused))
