/* What the engine reads and writes must be what it expects (docs/loop.md,
 * "Files"): a FIFO, device, socket or directory given as an input is
 * refused in one line, never waited on; an output never replaces a FIFO,
 * device, socket or directory; a symlink destination is replaced by the
 * new file and its target left alone.  Commands run under `timeout`, so a
 * regression fails the test instead of hanging the suite. */
#include "harness.h"
#include "levelio.h"
#include "util.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define LIMIT "timeout -s KILL 60 " /* exit 137 instead of a hang */

/* DIR/files/name, in one of 64 rotating buffers: copy a path kept long. */
static const char *tpath(const char *name)
{
    static char paths[64][600];
    static int next;
    char *p = paths[next++ % 64];
    snprintf(p, 600, "%s/files/%s", pcg_test_tmpdir(), name);
    return p;
}

/* The scratch directory with a good level, a FIFO, a socket and a directory. */
static void setup_dir(void)
{
    static int done;
    if (done) return;
    char out[256];
    assert_int_equal(pcg_test_sh(out, sizeof out, "mkdir -p '%s' '%s' '%s'", tpath(""), tpath("adir"), tpath("levels")), 0);
    assert_int_equal(write_file_atomic(tpath("good.txt"), "3 1 1\n1 7 1\n1 1 8\n", 18), 0);
    assert_int_equal(write_file_atomic(tpath("levels/a.txt"), "3 1 1\n1 7 1\n1 1 8\n", 18), 0);
    assert_int_equal(mkfifo(tpath("fifo.txt"), 0644), 0);
    assert_int_equal(mkfifo(tpath("levels/x.txt"), 0644), 0); /* eval DIR lists it */
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", tpath("sock"));
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    close(s);
    done = 1;
}

/* out holds exactly one line, containing every given phrase. */
static void one_line_with(const char *what, const char *out, const char *a, const char *b)
{
    const char *nl = strchr(out, '\n');
    if (!nl || nl[1]) fail_msg("%s: expected one line, got '%s'", what, out);
    if (!strstr(out, a) || (b && !strstr(out, b))) fail_msg("%s: '%s' lacks '%s' / '%s'", what, out, a, b ? b : "");
}

/* Every command that reads a level, a reward or a story refuses a FIFO at
 * once, naming it; eval refuses a FIFO among a directory's *.txt files. */
static void files_fifo_inputs_refused(void **state)
{
    (void)state;
    setup_dir();
    pcg_test_use_source_prompts();
    const char *bin = pcg_test_binary();
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s", tpath("fifo.txt"));
    const char *cmds[] = {"eval --scenario 1", "eval --scenario 1 --json", "show", "render -o /dev/null/x.png",
                          "check-reward", "check-reward --json"};
    static char out[8192];
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        int rc = pcg_test_sh(out, sizeof out, LIMIT "%s %s %s 2>&1 >/dev/null", bin, cmds[i], fifo);
        if (rc == 0 || rc == 137) fail_msg("%s FIFO: exit %d (137: it hung)", cmds[i], rc);
        one_line_with(cmds[i], out, fifo, "is a FIFO, not a regular file");
    }
    int rc = pcg_test_sh(out, sizeof out, LIMIT "%s eval --scenario 1 %s 2>&1 >/dev/null", bin, tpath("levels"));
    assert_int_equal(rc, 1);
    one_line_with("eval DIR", out, "levels/x.txt", "is a FIFO");
    rc = pcg_test_sh(out, sizeof out, LIMIT "%s run --llm offline --story-file %s --out %s", bin, fifo, tpath("run"));
    assert_int_equal(rc, 2);
    one_line_with("run --story-file", out, "--story-file", "is a FIFO");
    assert_false(pcg_test_exists(tpath("run")));
    /* the other kinds, named as what they are */
    const char *kinds[][2] = {{tpath("adir"), "is a directory"}, {tpath("sock"), "is a socket"},
                              {"/dev/null", "is a character device"}};
    for (int k = 0; k < 3; k++) {
        rc = pcg_test_sh(out, sizeof out, LIMIT "%s show %s", bin, kinds[k][0]);
        assert_int_equal(rc, 1);
        one_line_with("show", out, kinds[k][0], kinds[k][1]);
    }
}

/* The reader itself, in a child with an alarm: a FIFO with no writer is
 * refused at once rather than read. */
static void files_read_file_refuses_fifo(void **state)
{
    (void)state;
    setup_dir();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(20);
        char err[700];
        long len;
        char *t = read_file(tpath("fifo.txt"), 100, &len, err, sizeof err);
        _exit(!t && strstr(err, "is a FIFO") ? 0 : 1);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st)) fail_msg("read_file of a FIFO: status %d", st);
    char err[700];
    long len;
    assert_null(read_file(tpath("sock"), 100, &len, err, sizeof err));
    assert_non_null(strstr(err, "is a socket"));
    assert_null(read_file("/dev/zero", 100, &len, err, sizeof err));
    assert_non_null(strstr(err, "is a character device"));
    /* a symlink to a regular file is read */
    assert_int_equal(symlink(tpath("good.txt"), tpath("link.txt")), 0);
    char *t = read_file(tpath("link.txt"), 100, &len, err, sizeof err);
    assert_non_null(t);
    assert_int_equal(len, 18);
    free(t);
}

static int is_kind(const char *path, mode_t kind)
{
    struct stat st;
    return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

/* No leftover temporary files beside the destinations. */
static void no_temporaries(void)
{
    char out[1024];
    pcg_test_sh(out, sizeof out, "ls -a '%s' | grep -c '\\.tmp\\.'", tpath(""));
    if (atoi(out) != 0) fail_msg("temporary files left in %s", tpath(""));
}

/* render -o onto a FIFO, a directory or a socket: refused in one line, no
 * "wrote", the thing left as it was.  Onto a symlink: the link is replaced
 * by the PNG, its target untouched. */
static void files_render_output_kinds(void **state)
{
    (void)state;
    setup_dir();
    const char *bin = pcg_test_binary();
    char good[600];
    snprintf(good, sizeof good, "%s", tpath("good.txt"));
    static char out[4096];
    assert_int_equal(mkfifo(tpath("out.png"), 0644), 0);
    assert_int_equal(mkdir(tpath("outdir.png"), 0755), 0);
    const char *dests[][2] = {{tpath("out.png"), "is a FIFO; not overwriting it"},
                              {tpath("outdir.png"), "is a directory; not overwriting it"},
                              {tpath("sock"), "is a socket; not overwriting it"}};
    const mode_t kinds[] = {S_IFIFO, S_IFDIR, S_IFSOCK};
    for (int i = 0; i < 3; i++) {
        int rc = pcg_test_sh(out, sizeof out, LIMIT "%s render %s -o %s", bin, good, dests[i][0]);
        if (rc != 1) fail_msg("render -o %s: exit %d: %s", dests[i][0], rc, out);
        one_line_with("render", out, dests[i][0], dests[i][1]);
        assert_null(strstr(out, "wrote"));
        assert_true(is_kind(dests[i][0], kinds[i]));
    }
    /* a symlink: replaced by the picture; the file it pointed to is unchanged */
    assert_int_equal(write_file_atomic(tpath("target.png"), "keep", 4), 0);
    assert_int_equal(symlink(tpath("target.png"), tpath("link.png")), 0);
    int rc = pcg_test_sh(out, sizeof out, LIMIT "%s render %s -o %s", bin, good, tpath("link.png"));
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "wrote"));
    assert_true(is_kind(tpath("link.png"), S_IFREG));
    char err[700];
    long len;
    char *png = read_file(tpath("link.png"), 1 << 20, &len, err, sizeof err);
    assert_non_null(png);
    assert_true(len > 8 && !memcmp(png, "\x89PNG", 4));
    free(png);
    char *kept = read_file(tpath("target.png"), 100, &len, err, sizeof err);
    assert_non_null(kept);
    assert_string_equal(kept, "keep");
    free(kept);
    /* a directory that cannot hold the file: the reason, no "wrote" */
    rc = pcg_test_sh(out, sizeof out, LIMIT "%s render %s -o %s", bin, good, tpath("nodir/x.png"));
    assert_int_equal(rc, 1);
    one_line_with("render", out, "nodir/x.png", "cannot write");
    no_temporaries();
}

/* write_file_atomic and level_write follow the same rules, with the
 * reason in write_error(); `levels --out` onto a FIFO level file too. */
static void files_atomic_writes(void **state)
{
    (void)state;
    setup_dir();
    char err[700];
    assert_int_equal(write_file_atomic_msg(tpath("fifo.txt"), "x", 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "is a FIFO; not overwriting it"));
    assert_true(is_kind(tpath("fifo.txt"), S_IFIFO));
    assert_int_equal(write_file_atomic(tpath("adir"), "x", 1), -1);
    assert_non_null(strstr(write_error(), "is a directory; not overwriting it"));
    assert_true(is_kind(tpath("adir"), S_IFDIR));
    unsigned char t[4] = {3, 1, 1, 8};
    level_t l = {2, 2, t};
    assert_int_equal(level_write(tpath("fifo.txt"), &l, NULL), -1);
    assert_non_null(strstr(write_error(), "fifo.txt: is a FIFO"));
    /* a symlink is replaced, not followed */
    assert_int_equal(write_file_atomic(tpath("t2.txt"), "old", 3), 0);
    assert_int_equal(symlink(tpath("t2.txt"), tpath("l2.txt")), 0);
    assert_int_equal(write_file_atomic(tpath("l2.txt"), "new", 3), 0);
    assert_true(is_kind(tpath("l2.txt"), S_IFREG));
    long len;
    char *o = read_file(tpath("t2.txt"), 10, &len, err, sizeof err);
    assert_non_null(o);
    assert_string_equal(o, "old");
    free(o);
    /* through a command: levels refuses to replace a FIFO level file */
    char out[2048];
    assert_int_equal(pcg_test_sh(out, sizeof out, "mkdir -p '%s' && mkfifo '%s'", tpath("lv"), tpath("lv/level_001.txt")),
                     0);
    int rc = pcg_test_sh(out, sizeof out, LIMIT "%s levels --n 2 --seed 1 --out %s", pcg_test_binary(), tpath("lv"));
    assert_int_equal(rc, 1);
    one_line_with("levels", out, "level_001.txt", "is a FIFO; not overwriting it");
    assert_true(is_kind(tpath("lv/level_001.txt"), S_IFIFO));
    no_temporaries();
}

/* The checksum: FNV-1a 64's published values, and a file's equals its bytes'. */
static void files_fnv1a64(void **state)
{
    (void)state;
    setup_dir();
    assert_true(fnv1a64("", 0, FNV1A64_INIT) == 0xcbf29ce484222325ULL);
    assert_true(fnv1a64("a", 1, FNV1A64_INIT) == 0xaf63dc4c8601ec8cULL);
    assert_true(fnv1a64("foobar", 6, FNV1A64_INIT) == 0x85944171f73967e8ULL);
    uint64_t h = fnv1a64("foo", 3, FNV1A64_INIT);
    assert_true(fnv1a64("bar", 3, h) == 0x85944171f73967e8ULL);
    assert_int_equal(write_file_atomic(tpath("sum.txt"), "foobar", 6), 0);
    char err[700];
    uint64_t s;
    assert_int_equal(file_fnv1a64(tpath("sum.txt"), &s, err, sizeof err), 0);
    assert_true(s == 0x85944171f73967e8ULL);
    assert_int_equal(file_fnv1a64(tpath("adir"), &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "is a directory"));
}

/* An empty output path says so, before any write (build --out ''). */
static void files_empty_output_path(void **state)
{
    (void)state;
    char err[300] = "";
    assert_int_equal(check_output_path("", err, sizeof err), -1);
    assert_string_equal(err, "an empty path");
    char out[2048];
    int rc = pcg_test_sh(out, sizeof out, "%s build --target '{\"kind\":\"keydoor\",\"gate\":\"KEY\"}' --out '' 2>&1",
                         pcg_test_binary());
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "--out: an empty path"));
}

/* A file name holding a newline, a carriage return and a terminal escape
 * makes its error one line, the bytes written as escapes. */
static void files_control_bytes_in_names(void **state)
{
    (void)state;
    setup_dir();
    const char *bad = tpath("odd\nname\r\x1b[31m.txt");
    assert_int_equal(write_file_atomic(bad, "x\n", 2), 0);
    char out[2048];
    int rc = pcg_test_sh(out, sizeof out, "%s eval --scenario 1 '%s' 2>&1", pcg_test_binary(), bad);
    assert_int_equal(rc, 1);
    one_line_with("eval of a level named with control bytes", out, "odd\\nname\\r\\x1b[31m.txt", "unexpected character");
    assert_null(strchr(out, '\x1b'));
    assert_null(strchr(out, '\r'));
}

PCG_TESTS(files, cmocka_unit_test(files_fifo_inputs_refused), cmocka_unit_test(files_read_file_refuses_fifo),
          cmocka_unit_test(files_render_output_kinds), cmocka_unit_test(files_atomic_writes),
          cmocka_unit_test(files_fnv1a64), cmocka_unit_test(files_empty_output_path),
          cmocka_unit_test(files_control_bytes_in_names))
