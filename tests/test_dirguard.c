/* Guarded directories (host/sys/dirguard.h) through the file functions of
 * host/sys/util.h: beneath a guarded directory no symlink is followed at any
 * level and no ".." leads out, for reads, writes, logs, listings, moves and
 * directories alike, by openat2 and by the openat walk; outside it paths
 * behave as before.  Each refusal is one line naming the path, and the
 * folder a link points at is left exactly as it was. */
#include "harness.h"
#include "dirguard.h"
#include "util.h"
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CANARY "canary-7f3a91e2-not-for-the-run"

static char root[PATH_MAX], victim[PATH_MAX];

static const char *at_root(const char *name)
{
    static char paths[64][PATH_MAX + 64];
    static int next;
    char *p = paths[next++ % 64];
    snprintf(p, PATH_MAX + 64, "%s/%s", root, name);
    return p;
}

/* root/ holds a/ (a real folder), link -> victim/, a/leaf -> victim/secret.txt;
 * victim/ holds secret.txt with the canary. */
static void make_tree(const char *name)
{
    char out[1024];
    snprintf(root, sizeof root, "%s/%s/run", pcg_test_tmpdir(), name);
    snprintf(victim, sizeof victim, "%s/%s/victim", pcg_test_tmpdir(), name);
    if (pcg_test_sh(out, sizeof out,
                    "rm -rf '%s' '%s' && mkdir -p '%s/a' '%s' && printf '%s' > '%s/secret.txt' && "
                    "ln -s '%s' '%s/link' && ln -s '%s/secret.txt' '%s/a/leaf' && echo ok > '%s/a/plain.txt'",
                    root, victim, root, victim, CANARY, victim, victim, root, victim, root, root))
        fail_msg("setup: %s", out);
    dirguard_reset();
    char err[PATH_MAX + 256];
    if (dirguard_add(root, "run directory", 0, err, sizeof err)) fail_msg("dirguard_add: %s", err);
}

/* victim/ holds secret.txt and nothing else, unchanged. */
static void assert_victim_untouched(void)
{
    DIR *d = opendir(victim);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            if (strcmp(e->d_name, "secret.txt")) fail_msg("victim/%s was written through a link", e->d_name);
            n++;
        }
    closedir(d);
    assert_int_equal(n, 1);
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/secret.txt", victim);
    char *t = pcg_test_slurp(path);
    assert_non_null(t);
    assert_string_equal(t, CANARY);
    free(t);
}

/* went_through: the call succeeded, which it must not */
static void refused_at(int line, int went_through, const char *err, const char *path, const char *phrase)
{
    if (went_through) fail_msg("line %d: %s was not refused", line, path);
    if (!strstr(err, path) || !strstr(err, phrase) || strchr(err, '\n'))
        fail_msg("line %d: refusal of %s: expected one line with '%s', got '%s'", line, path, phrase, err);
}
#define assert_refused(went_through, err, path, phrase) refused_at(__LINE__, went_through, err, path, phrase)

#define LINK_PHRASE "is a symbolic link inside the run directory"

/* Every function of util.h refuses a link, at the leaf and above it. */
static void check_functions(void)
{
    char err[PATH_MAX * 2];
    long len;
    const char *through = at_root("link/secret.txt"), *leaf = at_root("a/leaf");
    err[0] = 0;
    char *t = read_file(through, 1 << 20, &len, err, sizeof err);
    assert_refused(t != NULL, err, at_root("link"), LINK_PHRASE);
    t = read_file(leaf, 1 << 20, &len, err, sizeof err);
    assert_refused(t != NULL, err, leaf, LINK_PHRASE);
    uint64_t sum;
    assert_refused(file_fnv1a64(through, &sum, err, sizeof err) == 0, err, at_root("link"), LINK_PHRASE);
    assert_refused(write_file_atomic_msg(at_root("link/new.txt"), "x", 1, err, sizeof err) == 0, err,
                   at_root("link"), LINK_PHRASE);
    assert_refused(write_file_atomic_msg(leaf, "x", 1, err, sizeof err) == 0, err, leaf, LINK_PHRASE);
    FILE *f = open_append(at_root("link/run.log"), err, sizeof err);
    assert_refused(f != NULL, err, at_root("link"), LINK_PHRASE);
    assert_refused(open_append_fd(leaf, err, sizeof err) >= 0, err, leaf, LINK_PHRASE);
    assert_refused(open_lock_file(at_root("link/x.lock"), err, sizeof err) >= 0, err, at_root("link"), LINK_PHRASE);
    assert_refused(make_dirs_msg(at_root("link/sub/deeper"), err, sizeof err) == 0, err, at_root("link"), LINK_PHRASE);
    DIR *d = open_dir(at_root("link"), err, sizeof err);
    assert_refused(d != NULL, err, at_root("link"), LINK_PHRASE);
    assert_refused(path_mkdir(at_root("link/made"), err, sizeof err) == 0, err, at_root("link"), LINK_PHRASE);
    assert_refused(path_rename(at_root("a/plain.txt"), at_root("link/moved.txt"), err, sizeof err) == 0, err,
                   at_root("link"), LINK_PHRASE);
    assert_refused(check_output_path(leaf, err, sizeof err) == 0, err, leaf, LINK_PHRASE);
    /* a link shows as one; nothing behind it is looked at */
    struct stat st;
    assert_int_equal(path_stat(leaf, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_false(path_is_file(leaf));
    assert_true(path_present(leaf));
    assert_int_equal(path_stat(at_root("link/secret.txt"), &st), -1);
    assert_int_equal(errno, ELOOP);
    /* ".." leads nowhere, even back inside */
    assert_refused(read_file(at_root("a/../../victim/secret.txt"), 1 << 20, &len, err, sizeof err) != NULL, err,
                   "a/../../victim/secret.txt", "'..' leads out of the run directory");
    assert_refused(read_file(at_root("a/../a/plain.txt"), 1 << 20, &len, err, sizeof err) != NULL, err,
                   "a/../a/plain.txt", "'..' leads out");
    assert_victim_untouched();
}

/* What is not a link works as before, named in any spelling, and paths
 * outside the guarded directory still follow links. */
static void check_ordinary_paths(void)
{
    char err[PATH_MAX * 2], path[PATH_MAX + 64];
    long len;
    snprintf(path, sizeof path, "%s//a/./plain.txt", root);
    char *t = read_file(path, 1 << 20, &len, err, sizeof err);
    if (!t) fail_msg("reading %s: %s", path, err);
    assert_string_equal(t, "ok\n");
    free(t);
    if (write_file_atomic_msg(at_root("b/c/new.txt"), "y", 1, err, sizeof err) == 0) fail_msg("no parent dir: written");
    if (make_dirs_msg(at_root("b/c"), err, sizeof err)) fail_msg("make_dirs: %s", err);
    if (write_file_atomic_msg(at_root("b/c/new.txt"), "y", 1, err, sizeof err)) fail_msg("write: %s", err);
    if (path_rename(at_root("b/c/new.txt"), at_root("b/moved.txt"), err, sizeof err)) fail_msg("rename: %s", err);
    assert_true(path_is_file(at_root("b/moved.txt")));
    FILE *f = open_append(at_root("b/run.log"), err, sizeof err);
    if (!f) fail_msg("open_append: %s", err);
    fclose(f);
    DIR *d = open_dir(at_root("b"), err, sizeof err);
    if (!d) fail_msg("open_dir: %s", err);
    closedir(d);
    assert_int_equal(path_unlink(at_root("b/moved.txt")), 0);
    /* the real path of the guarded directory is guarded too */
    char real[PATH_MAX], via_real[PATH_MAX + 64];
    assert_non_null(realpath(root, real));
    snprintf(via_real, sizeof via_real, "%s/a/leaf", real);
    assert_null(read_file(via_real, 1 << 20, &len, err, sizeof err));
    assert_non_null(strstr(err, LINK_PHRASE));
    /* outside: a link is followed as the user would expect */
    char outside[PATH_MAX + 64];
    snprintf(outside, sizeof outside, "%s/outside-link", victim);
    char cmd_out[256];
    assert_int_equal(pcg_test_sh(cmd_out, sizeof cmd_out, "ln -sf '%s/secret.txt' '%s'", victim, outside), 0);
    t = read_file(outside, 1 << 20, &len, err, sizeof err);
    if (!t) fail_msg("a link outside the guarded directory: %s", err);
    assert_string_equal(t, CANARY);
    free(t);
}

static void dirguard_openat2_refuses_links(void **state)
{
    (void)state;
    make_tree("g-openat2");
    dirguard_force_walk(0);
    check_functions();
    check_ordinary_paths();
    dirguard_reset();
}

static void dirguard_walk_refuses_links(void **state)
{
    (void)state;
    make_tree("g-walk");
    dirguard_force_walk(1);
    check_functions();
    check_ordinary_paths();
    dirguard_force_walk(0);
    dirguard_reset();
}

/* A scan finds a link anywhere beneath the directory and names it; a
 * directory without one passes. */
static void dirguard_scan_names_the_link(void **state)
{
    (void)state;
    make_tree("g-scan");
    dirguard_reset();
    char err[PATH_MAX * 2], out[512];
    assert_int_equal(pcg_test_sh(out, sizeof out, "rm '%s' '%s' && mkdir -p '%s/x/y/z' && ln -s /etc/passwd '%s/x/y/z/w'",
                                 at_root("link"), at_root("a/leaf"), root, root),
                     0);
    assert_int_equal(dirguard_add(root, "grid directory", 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "/x/y/z/w: is a symbolic link inside the grid directory"));
    assert_null(strchr(err, '\n'));
    assert_int_equal(pcg_test_sh(out, sizeof out, "rm '%s/x/y/z/w'", root), 0);
    if (dirguard_add(root, "grid directory", 1, err, sizeof err)) fail_msg("a clean directory: %s", err);
    dirguard_reset();
}

/* a/hard another name of victim/secret.txt, in a directory guarded
 * without a scan: reads, logs and a scan refuse it in one line, and the
 * private file is left as it was. */
static void dirguard_hard_link_is_refused(void **state)
{
    (void)state;
    make_tree("g-hard");
    char err[PATH_MAX * 2], out[512], path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/secret.txt", victim);
    assert_int_equal(pcg_test_sh(out, sizeof out, "ln '%s' '%s'", path, at_root("a/hard")), 0);
    const char *hard = at_root("a/hard");
    long len;
    char *t = read_file(hard, 1 << 20, &len, err, sizeof err);
    free(t);
    assert_refused(t != NULL, err, hard, "is a hard link (one of 2 names of the file) inside the run directory");
    FILE *f = open_append(hard, err, sizeof err);
    if (f) fputs("appended\n", f), fclose(f);
    assert_refused(f != NULL, err, hard, "is a hard link");
    assert_victim_untouched();
    /* replacing it is fine: the new file has one name, the private one is kept */
    assert_int_equal(write_file_atomic(hard, "new\n", 4), 0);
    assert_victim_untouched();
    assert_int_equal(pcg_test_sh(out, sizeof out, "rm -f '%s' '%s' && ln -f '%s' '%s'", at_root("link"), at_root("a/leaf"),
                                 path, at_root("a/hard")),
                     0);
    dirguard_reset();
    assert_int_equal(dirguard_add(root, "run directory", 1, err, sizeof err), -1);
    assert_refused(0, err, hard, "is a hard link");
    dirguard_reset();
}

PCG_TESTS(dirguard, cmocka_unit_test(dirguard_openat2_refuses_links), cmocka_unit_test(dirguard_walk_refuses_links),
          cmocka_unit_test(dirguard_scan_names_the_link), cmocka_unit_test(dirguard_hard_link_is_refused))
