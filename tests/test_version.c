/* `pcgrllm --version`: one line naming the release and, for a build from a
 * git checkout, the commit it was built from, which must be the tree's own
 * (a stale binary, or a Makefile that stopped passing the commit, fails). */
#include "harness.h"
#include "version.h"
#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The commit the binary's line names ("" without one); the line must be
 * exactly "pcgrllm X.Y.Z" or "pcgrllm X.Y.Z (commit C)". */
static void read_version_line(char *commit, size_t len)
{
    char out[512];
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s --version", pcg_test_binary()), 0);
    regex_t re;
    regmatch_t m[4];
    assert_int_equal(regcomp(&re, "^pcgrllm ([0-9]+\\.[0-9]+\\.[0-9]+)( \\(commit ([A-Za-z0-9._+-]+)\\))?\n$",
                             REG_EXTENDED),
                     0);
    int rc = regexec(&re, out, 4, m, 0);
    regfree(&re);
    if (rc != 0) fail_msg("unexpected --version output: '%s'", out);
    /* the release is the one the library was built with */
    assert_int_equal((int)(m[1].rm_eo - m[1].rm_so), (int)strlen(pcg_version()));
    assert_memory_equal(out + m[1].rm_so, pcg_version(), strlen(pcg_version()));
    size_t n = m[3].rm_so < 0 ? 0 : (size_t)(m[3].rm_eo - m[3].rm_so);
    assert_true(n < len);
    memcpy(commit, out + (n ? m[3].rm_so : 0), n);
    commit[n] = 0;
}

static void version_line_format(void **state)
{
    (void)state;
    char commit[256];
    read_version_line(commit, sizeof commit);
    /* the binary and this test binary link the same version.o */
    assert_string_equal(commit, pcg_commit());
    /* the help's first line names the same release */
    char out[4096], want[64];
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s --help", pcg_test_binary()), 0);
    snprintf(want, sizeof want, "pcgrllm %s - ", pcg_version());
    assert_true(strncmp(out, want, strlen(want)) == 0);
}

static void version_commit_matches_git(void **state)
{
    (void)state;
    /* tests run from the source tree's root; the Makefile asks git the same */
    if (access(".git", F_OK) != 0) pcg_test_skip("version_commit_matches_git", "the source tree is not a git checkout");
    char git[256];
    if (pcg_test_sh(git, sizeof git, "git describe --always --dirty --abbrev=12 2>/dev/null | tr -cd 'A-Za-z0-9._+-'") != 0 ||
        !git[0])
        pcg_test_skip("version_commit_matches_git", "git describe gives no commit here");
    char commit[256];
    read_version_line(commit, sizeof commit);
    if (strcmp(commit, git) != 0)
        fail_msg("--version names commit '%s', the tree is at '%s' (rebuild with make)", commit, git);
}

PCG_TESTS(version, cmocka_unit_test(version_line_format), cmocka_unit_test(version_commit_matches_git));
