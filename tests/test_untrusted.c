/* Run and grid directories from someone else, end to end: a tampered
 * config.json or grid.json cannot send the key to a server it names or
 * choose the variable the key is read from (a second fake server on
 * 127.0.0.1 records that it receives nothing, and the command says in one
 * line what to do); naming the server again, or confirming it on a
 * terminal, goes on.  Symlinked files and node directories inside a run
 * directory are refused before anything is read or written, the folder a
 * link points at is left as it was, and no page or file shows a canary from
 * outside.  Report pages escape what came from a model or a file. */
#include "harness.h"
#include "util.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEY_ENV "PCG_UNTRUSTED_TEST_KEY"
#define TEST_KEY "sk-untrusted-5d1c2b3a4f6e7d8c9b0a1f2e3d4c5b6a"
#define VICTIM_ENV "PCG_UNTRUSTED_VICTIM"
#define VICTIM_KEY "sk-victim-0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d"
#define CANARY "canary-private-3e8d1f0a-should-stay-home"
#define BUDGET "--preset small --steps 512 --envs 2 --threads 1 --align 1 --check-envs 4 --levels 4 --quiet"
#define FAST_LLM "--llm-retries 1 --llm-backoff 0.01 --llm-timeout 20"

static int count_of(const char *s, const char *needle) { return s ? pcg_test_count_of(s, needle) : 0; }

/* Requests a fake server received (0 when it wrote no log: none). */
static int requests(const pcg_fake_srv *s)
{
    char *log = pcg_test_slurp(s->log);
    int n = count_of(log, "\"path\":");
    free(log);
    return n;
}

/* 1 when the file at path (it must exist) holds needle. */
static int file_holds(const char *path, const char *needle)
{
    char *text = pcg_test_slurp(path);
    assert_non_null(text);
    int n = strstr(text, needle) != NULL;
    free(text);
    return n;
}

static int key_sent(const pcg_fake_srv *s)
{
    char *log = pcg_test_slurp(s->log);
    int n = count_of(log, "\"auth\": \"match\"");
    free(log);
    return n;
}

static void one_line(const char *what, const char *out, const char *a, const char *b)
{
    if (pcg_test_count_lines(out) != 1 || !strstr(out, a) || (b && !strstr(out, b)))
        fail_msg("%s: expected one line with '%s'%s%s, got '%s'", what, a, b ? " and " : "", b ? b : "", out);
}

/* Edit a JSON file in place with a Python expression over j. */
static void edit_json(const char *path, const char *python)
{
    char out[2048];
    if (pcg_test_sh(out, sizeof out, "python3 -c 'import json; p=\"%s\"; j=json.load(open(p)); %s; "
                                     "json.dump(j, open(p, \"w\"), indent=2)'",
                    path, python))
        fail_msg("editing %s: %s", path, out);
}

static void servers(pcg_fake_srv *mine, pcg_fake_srv *other, const char *name)
{
    char a[64], b[64];
    snprintf(a, sizeof a, "%s-mine", name);
    snprintf(b, sizeof b, "%s-other", name);
    pcg_test_use_source_prompts();
    setenv(KEY_ENV, TEST_KEY, 1);
    setenv(VICTIM_ENV, VICTIM_KEY, 1);
    unsetenv("OPENAI_API_KEY");
    pcg_test_srv_start(mine, "tests/fake_openai_run.json", a, KEY_ENV);
    /* the other server expects the victim's key: a "match" there is the leak */
    pcg_test_srv_start(other, "tests/fake_openai_run.json", b, VICTIM_ENV);
}

/* A finished one-node run against srv in dir. */
static void openai_run(const pcg_fake_srv *srv, const char *dir)
{
    static char out[1 << 15];
    int rc = pcg_test_sh(out, sizeof out,
                         "%s run --llm openai --base-url %s --model fake-coder --api-key-env %s " FAST_LLM
                         " --scenario 1 " BUDGET " --iterations 1 --out %s </dev/null",
                         pcg_test_binary(), srv->url, KEY_ENV, dir);
    if (rc != 0) fail_msg("run against the fake server exited %d: %s", rc, out);
}

/* config.json names another server and another key variable, and asks for
 * one more node: a plain resume sends nothing and says how to go on; "no"
 * on a terminal sends nothing; --base-url naming the server goes on, and
 * the stored variable is never read; "yes" on a terminal goes on too. */
static void untrusted_config_cannot_move_the_key(void **state)
{
    (void)state;
    pcg_fake_srv mine, other;
    servers(&mine, &other, "cfg");
    char dir[PATH_MAX], cfg[PATH_MAX + 16], edit[1024], want[256];
    static char out[1 << 15];
    snprintf(dir, sizeof dir, "%s/untrusted-cfg", pcg_test_tmpdir());
    openai_run(&mine, dir);
    assert_int_equal(key_sent(&mine), requests(&mine));
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    snprintf(edit, sizeof edit, "j[\"llm\"][\"base_url\"]=\"%s\"; j[\"llm\"][\"api_key_env\"]=\"%s\"; j[\"iterations\"]=2",
             other.url, VICTIM_ENV);
    edit_json(cfg, edit);
    int rc = pcg_test_sh(out, sizeof out, "%s run --resume --out %s --quiet </dev/null", pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    snprintf(want, sizeof want, "resume with --base-url %s", other.url);
    one_line("a resume of a tampered config.json", out, "names the model server", want);
    rc = pcg_test_sh(out, sizeof out, "printf 'n\\n' | script -qec '%s run --resume --out %s --quiet' /dev/null",
                     pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "Send them there? [y/N]"));
    assert_int_equal(requests(&other), 0);
    rc = pcg_test_sh(out, sizeof out, "%s run --resume --out %s --quiet --base-url %s " FAST_LLM " </dev/null",
                     pcg_test_binary(), dir, other.url);
    if (rc != 0) fail_msg("resume with --base-url exited %d: %s", rc, out);
    int n = requests(&other);
    assert_true(n > 0);
    assert_int_equal(key_sent(&other), 0);
    edit_json(cfg, "j[\"iterations\"]=3");
    rc = pcg_test_sh(out, sizeof out, "printf 'y\\n' | script -qec '%s run --resume --out %s --quiet " FAST_LLM "' /dev/null",
                     pcg_test_binary(), dir);
    if (rc != 0) fail_msg("resume confirmed on a terminal exited %d: %s", rc, out);
    assert_true(requests(&other) > n);
    assert_int_equal(key_sent(&other), 0);
    pcg_test_srv_stop(&mine);
    pcg_test_srv_stop(&other);
    /* config.json no longer records the variable at all */
    char *c = pcg_test_slurp(cfg);
    assert_non_null(c);
    assert_null(strstr(c, KEY_ENV));
    free(c);
}

/* A one-cell grid of the fake model on srv, its batch script written. */
static void script_only_grid(const pcg_fake_srv *srv, const char *dir)
{
    char out[8192];
    int rc = pcg_test_sh(out, sizeof out,
                         "%s grid --out %s --models fake-coder@%s --ablations zs --api-key-env %s --slurm-script-only "
                         "-- " BUDGET " " FAST_LLM " </dev/null",
                         pcg_test_binary(), dir, srv->url, KEY_ENV);
    if (rc != 0) fail_msg("grid --slurm-script-only exited %d: %s", rc, out);
}

/* grid.json's model server and a key variable among its run flags: a plain
 * restart sends nothing and says what to do; --base-url naming the server
 * goes on, with the key variable given to grid; a new grid refuses a key
 * variable among its run flags, and its batch script names what the tasks
 * need. */
static void untrusted_grid_json_cannot_move_the_key(void **state)
{
    (void)state;
    pcg_fake_srv mine, other;
    servers(&mine, &other, "grid");
    char dir[PATH_MAX], path[PATH_MAX + 64], edit[1024], want[1024];
    static char out[1 << 15];
    snprintf(dir, sizeof dir, "%s/untrusted-grid", pcg_test_tmpdir());
    script_only_grid(&mine, dir);
    int rc;
    snprintf(path, sizeof path, "%s/slurm/grid.sbatch", dir);
    char *script = pcg_test_slurp(path);
    assert_non_null(script);
    snprintf(want, sizeof want, "--base-url '%s' --api-key-env '%s' --cell", mine.url, KEY_ENV);
    if (!strstr(script, want)) fail_msg("the batch script lacks '%s':\n%s", want, script);
    free(script);
    snprintf(path, sizeof path, "%s/grid.json", dir);
    snprintf(edit, sizeof edit, "j[\"models\"][0][\"base_url\"]=\"%s\"; j[\"run_flags\"] += [\"--api-key-env\", \"%s\"]",
             other.url, VICTIM_ENV);
    edit_json(path, edit);
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --base-url %s </dev/null", pcg_test_binary(), dir, other.url);
    assert_int_equal(rc, 1);
    one_line("a grid.json naming a key variable", out, "name the key variable " VICTIM_ENV, "grid --api-key-env");
    edit_json(path, "j[\"run_flags\"] = j[\"run_flags\"][:-2]");
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --api-key-env %s </dev/null", pcg_test_binary(), dir, KEY_ENV);
    assert_int_equal(rc, 1);
    snprintf(want, sizeof want, "give grid --base-url %s", other.url);
    one_line("a grid.json naming another server", out, "names the model server", want);
    assert_int_equal(requests(&other), 0);
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --base-url %s </dev/null", pcg_test_binary(), dir, other.url);
    if (rc != 0) fail_msg("grid with --base-url exited %d: %s", rc, out);
    assert_true(requests(&other) > 0);
    assert_int_equal(key_sent(&other), 0);
    pcg_test_srv_stop(&mine);
    pcg_test_srv_stop(&other);
    snprintf(dir, sizeof dir, "%s/untrusted-grid-new", pcg_test_tmpdir());
    rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --slurm-script-only -- --api-key-env %s </dev/null",
                     pcg_test_binary(), dir, VICTIM_ENV);
    assert_int_equal(rc, 2);
    one_line("a key variable among a new grid's run flags", out, "never stored", "grid --api-key-env");
}

/* Run flags in grid.json where "--seed" is the value of the flag before it:
 * a cell drops "--seed" and the word after it (it gets its own seed), so
 * what reads as a bad value on its own is, for the cells, the victim's key
 * variable.  The requests are judged on the flags the cells get: the
 * restart is refused in one line and the other server hears nothing. */
static void untrusted_grid_flags_read_as_the_cells_read_them(void **state)
{
    (void)state;
    pcg_fake_srv mine, other;
    servers(&mine, &other, "gridseed");
    char dir[PATH_MAX], path[PATH_MAX + 64], edit[1024];
    static char out[1 << 15];
    snprintf(dir, sizeof dir, "%s/untrusted-grid-seed", pcg_test_tmpdir());
    script_only_grid(&mine, dir);
    snprintf(path, sizeof path, "%s/grid.json", dir);
    snprintf(edit, sizeof edit,
             "j[\"models\"][0][\"base_url\"]=\"%s\"; j[\"run_flags\"] += [\"--api-key-env\", \"--seed\", \"5\", \"%s\"]",
             other.url, VICTIM_ENV);
    edit_json(path, edit);
    int rc = pcg_test_sh(out, sizeof out, "%s grid --out %s </dev/null", pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    one_line("run flags hiding a key variable behind --seed", out, "name the key variable " VICTIM_ENV, NULL);
    assert_int_equal(requests(&other), 0);
    assert_int_equal(requests(&mine), 0);
    pcg_test_srv_stop(&mine);
    pcg_test_srv_stop(&other);
}

/* A cell of an offline grid whose config.json was changed to the default
 * server with a model of its choosing: the restart would have spent your
 * key's budget on that model, with the author line only in the cell's own
 * log.  The grid names each resumed cell's author (--llm, --model) and the
 * resume refuses a stored author that differs; nothing reaches run.log. */
static void untrusted_grid_cell_keeps_the_grids_author(void **state)
{
    (void)state;
    char dir[PATH_MAX], cell[PATH_MAX + 64], path[PATH_MAX + 96];
    static char out[1 << 15];
    pcg_test_use_source_prompts();
    snprintf(dir, sizeof dir, "%s/untrusted-grid-author", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --models offline --ablations full -- " BUDGET
                                          " --iterations 2 </dev/null",
                         pcg_test_binary(), dir);
    if (rc != 0) fail_msg("offline grid exited %d: %s", rc, out);
    snprintf(cell, sizeof cell, "%s/cells/s1-cot-full-r0", dir);
    snprintf(path, sizeof path, "%s/config.json", cell);
    edit_json(path, "j[\"author\"]=\"openai\"; j[\"iterations\"]=3; j[\"llm\"]={\"base_url\": "
                    "\"https://api.openai.com/v1\", \"model\": \"costly-model\", \"temperature\": 0}");
    rc = pcg_test_sh(out, sizeof out, "OPENAI_API_KEY=sk-x %s grid --out %s </dev/null", pcg_test_binary(), dir);
    assert_int_not_equal(rc, 0);
    snprintf(path, sizeof path, "%s.log", cell);
    assert_true(file_holds(path, "names the openai author; --llm offline differs"));
    snprintf(path, sizeof path, "%s/run.log", cell);
    assert_false(file_holds(path, "costly-model"));
}

/* ---- links inside a run directory ---------------------------------------------------- */

static char offline_ref[PATH_MAX];

static const char *offline_run(void)
{
    if (offline_ref[0]) return offline_ref;
    pcg_test_use_source_prompts();
    snprintf(offline_ref, sizeof offline_ref, "%s/untrusted-offline", pcg_test_tmpdir());
    char out[8192];
    int rc = pcg_test_sh(out, sizeof out, "%s run --scenario 1 --llm offline " BUDGET " --iterations 2 --out %s",
                         pcg_test_binary(), offline_ref);
    if (rc != 0) fail_msg("offline run exited %d: %s", rc, out);
    return offline_ref;
}

static void copy_of(const char *name, char *dir, size_t len)
{
    char out[1024];
    snprintf(dir, len, "%s/%s", pcg_test_tmpdir(), name);
    if (pcg_test_sh(out, sizeof out, "rm -rf '%s' && cp -a '%s' '%s'", dir, offline_run(), dir)) fail_msg("cp: %s", out);
}

/* copy_of, then file of the copy edited by python (edit_json). */
static void copy_and_edit(const char *name, char *dir, size_t len, const char *file, const char *python)
{
    char path[PATH_MAX + 64];
    copy_of(name, dir, len);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    edit_json(path, python);
}

/* copy_of, and a private file beside the copy holding the canary (its
 * path in secret). */
static void copy_with_canary(const char *name, char *dir, size_t len, char *secret, size_t slen)
{
    copy_of(name, dir, len);
    snprintf(secret, slen, "%s-secret.txt", dir);
    assert_int_equal(write_file_atomic(secret, CANARY "\n", strlen(CANARY) + 1), 0);
}

/* nodes/000/reward.c a link to a private file, its checksums gone and its
 * fitness raised so that it would be the parent: every command that reads
 * the directory refuses in one line naming the link, and the canary is in
 * no file of the run. */
static void untrusted_linked_file_is_not_read(void **state)
{
    (void)state;
    char dir[PATH_MAX], secret[PATH_MAX + 16], path[PATH_MAX + 32], want[PATH_MAX + 64];
    static char out[1 << 14];
    copy_with_canary("untrusted-link-file", dir, sizeof dir, secret, sizeof secret);
    assert_int_equal(pcg_test_sh(out, sizeof out, "rm '%s/nodes/000/reward.c' && ln -s '%s' '%s/nodes/000/reward.c'",
                                 dir, secret, dir),
                     0);
    snprintf(path, sizeof path, "%s/graph.json", dir);
    edit_json(path, "j[\"nodes\"][0].pop(\"files\", None); j[\"nodes\"][0][\"fitness\"]=1.0; "
                    "j[\"nodes\"][0][\"status\"]=\"ok\"");
    snprintf(path, sizeof path, "%s/config.json", dir);
    edit_json(path, "j[\"iterations\"]=3");
    snprintf(want, sizeof want, "%s/nodes/000/reward.c: is a symbolic link inside the run directory", dir);
    const char *cmds[] = {"run --resume --quiet --out", "report", "export --minecraft --out /dev/null/x"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        int rc = pcg_test_sh(out, sizeof out, "%s %s %s </dev/null", pcg_test_binary(), cmds[i], dir);
        assert_int_equal(rc, 1);
        one_line(cmds[i], out, want, "links there are not followed");
    }
    /* grep -r follows no link below the directory it is given */
    int rc = pcg_test_sh(out, sizeof out, "grep -rl '%s' '%s'", CANARY, dir);
    if (rc != 1) fail_msg("the canary reached the run directory: %s", out);
    /* the link gone but the checksums still missing: a node later nodes
     * were built on cannot be trusted, so the resume is refused */
    assert_int_equal(pcg_test_sh(out, sizeof out, "rm '%s/nodes/000/reward.c' && cp '%s/nodes/000/reward.c' '%s/nodes/000/'",
                                 dir, offline_run(), dir),
                     0);
    rc = pcg_test_sh(out, sizeof out, "%s run --resume --quiet --out %s </dev/null", pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    one_line("a node without checksums", out, "node 0: graph.json records no checksums", "cannot be redone");
}

/* graph.json's "files" of a finished node emptied ({}) rather than removed:
 * no file of it has a checksum any more, so it is as damaged as a node
 * without the record, and refused as one when later nodes were built on
 * it. */
static void untrusted_emptied_checksums_are_damage(void **state)
{
    (void)state;
    char dir[PATH_MAX], path[PATH_MAX + 32];
    static char out[1 << 14];
    copy_and_edit("untrusted-empty-files", dir, sizeof dir, "graph.json", "j[\"nodes\"][0][\"files\"]={}");
    snprintf(path, sizeof path, "%s/config.json", dir);
    edit_json(path, "j[\"iterations\"]=3");
    int rc = pcg_test_sh(out, sizeof out, "%s run --resume --quiet --out %s </dev/null", pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    one_line("a node with an empty checksum record", out, "node 0: graph.json records no checksum of", "cannot be redone");
}

/* nodes/001 a link to a folder elsewhere: refused before anything is
 * written, and that folder is exactly as it was. */
static void untrusted_linked_node_dir_is_not_written(void **state)
{
    (void)state;
    char dir[PATH_MAX], elsewhere[PATH_MAX + 16], want[PATH_MAX + 64], path[PATH_MAX + 32];
    static char out[1 << 14], before[1 << 14], after[1 << 14];
    copy_of("untrusted-link-dir", dir, sizeof dir);
    snprintf(elsewhere, sizeof elsewhere, "%s-elsewhere", dir);
    assert_int_equal(pcg_test_sh(out, sizeof out, "rm -rf '%s' && mv '%s/nodes/001' '%s' && ln -s '%s' '%s/nodes/001'",
                                 elsewhere, dir, elsewhere, elsewhere, dir),
                     0);
    snprintf(path, sizeof path, "%s/config.json", dir);
    edit_json(path, "j[\"iterations\"]=3");
    assert_int_equal(pcg_test_sh(before, sizeof before, "cd '%s' && find . -printf '%%p %%s %%T@\\n' | sort", elsewhere), 0);
    snprintf(want, sizeof want, "%s/nodes/001: is a symbolic link inside the run directory", dir);
    int rc = pcg_test_sh(out, sizeof out, "%s run --resume --quiet --out %s </dev/null", pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    one_line("a linked node directory", out, want, NULL);
    assert_int_equal(pcg_test_sh(after, sizeof after, "cd '%s' && find . -printf '%%p %%s %%T@\\n' | sort", elsewhere), 0);
    assert_string_equal(before, after);
}

/* config.json's model name carries a carriage return and terminal control
 * sequences that would redraw the question as one about the default
 * server: the question shows them as '?', so the terminal draws what the
 * file says, and "no" sends nothing. */
static void untrusted_question_shows_no_control_characters(void **state)
{
    (void)state;
    char dir[PATH_MAX];
    static char out[1 << 14];
    copy_and_edit("untrusted-question", dir, sizeof dir, "config.json", "j[\"author\"]=\"openai\"; j[\"iterations\"]=3; j[\"llm\"]={\"base_url\": "
                    "\"https://elsewhere.invalid/v1\", \"model\": \"m\\r\\u001b[2Krun: resuming at "
                    "https://api.openai.com/v1\\u009b2K\", \"temperature\": 0}");
    int rc = pcg_test_sh(out, sizeof out, "printf 'n\\n' | script -qec '%s run --resume --out %s --quiet' /dev/null",
                         pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "Send them there? [y/N]"));
    assert_non_null(strstr(out, "elsewhere.invalid"));
    if (strchr(out, '\033') || strstr(out, "\302\233")) fail_msg("the question holds a control sequence: %s", out);
    assert_non_null(strstr(out, "model m??[2Krun: resuming"));
}

/* config.json names a file:// "server": curl would read the private file
 * as the model's reply and the run would keep it (and send it back in the
 * next request).  A stored server is http:// or https:// as --base-url
 * must be, refused at once even when a terminal would say yes, and the
 * canary is in no file of the run. */
static void untrusted_stored_server_is_http(void **state)
{
    (void)state;
    char dir[PATH_MAX], path[PATH_MAX + 32], secret[PATH_MAX + 16], edit[PATH_MAX + 256];
    static char out[1 << 14];
    copy_with_canary("untrusted-file-server", dir, sizeof dir, secret, sizeof secret);
    snprintf(path, sizeof path, "%s/config.json", dir);
    snprintf(edit, sizeof edit,
             "j[\"author\"]=\"openai\"; j[\"iterations\"]=3; j[\"llm\"]={\"base_url\": \"file://%s#\", "
             "\"model\": \"m\", \"temperature\": 0}",
             secret);
    edit_json(path, edit);
    int rc = pcg_test_sh(out, sizeof out,
                         "printf 'y\\n' | script -qec '%s run --resume --out %s --quiet --llm-retries 0' /dev/null",
                         pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "'llm.base_url' must be an http:// or https:// address"));
    rc = pcg_test_sh(out, sizeof out, "grep -rl '%s' '%s'", CANARY, dir);
    if (rc != 1) fail_msg("the canary reached the run directory: %s", out);
}

/* Hard links to a private file, as Python's tarfile (shutil.unpack_archive)
 * makes them from an archive member whose link target is an absolute
 * path: run.log one of them, so that the resume would append its lines
 * (a model name with a newline and a shell command in it) to the private
 * file, and nodes/000/reward.c another, so that report would copy it into
 * report.html.  Both are refused in one line naming the file, and the
 * private file is as it was. */
static void untrusted_hard_link_is_not_used(void **state)
{
    (void)state;
    char dir[PATH_MAX], secret[PATH_MAX + 16], path[PATH_MAX + 32], want[PATH_MAX + 64];
    static char out[1 << 14];
    copy_with_canary("untrusted-hard-link", dir, sizeof dir, secret, sizeof secret);
    assert_int_equal(pcg_test_sh(out, sizeof out, "cd '%s' && rm run.log && ln '%s' run.log", dir, secret), 0);
    snprintf(path, sizeof path, "%s/config.json", dir);
    edit_json(path, "j[\"iterations\"]=3");
    int rc = pcg_test_sh(out, sizeof out, "%s run --resume --quiet --out %s </dev/null", pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    snprintf(want, sizeof want, "%s/run.log: is a hard link", dir);
    one_line("a hard-linked run.log", out, want, "inside the run directory");
    char *kept = pcg_test_slurp(secret);
    assert_non_null(kept);
    assert_string_equal(kept, CANARY "\n");
    free(kept);
    assert_int_equal(pcg_test_sh(out, sizeof out, "cd '%s' && rm run.log && rm nodes/000/reward.c && ln '%s' "
                                                  "nodes/000/reward.c", dir, secret), 0);
    rc = pcg_test_sh(out, sizeof out, "%s report %s </dev/null", pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    snprintf(want, sizeof want, "%s/nodes/000/reward.c: is a hard link", dir);
    one_line("a hard-linked reward.c", out, want, NULL);
    rc = pcg_test_sh(out, sizeof out, "grep -rl '%s' '%s' --exclude=reward.c", CANARY, dir);
    if (rc != 1) fail_msg("the canary reached the run directory: %s", out);
}

/* Settings past what the flags allow: 10000 levels (the run reads 64 of
 * them, and generating the rest is work the projected cost does not
 * count, so a long resume would start without asking), 1e300 seconds of
 * reward checks, a target fitness of 2.  Each is refused in one line
 * naming it, before anything runs. */
static void untrusted_config_keeps_the_flags_ranges(void **state)
{
    (void)state;
    static const char *const edits[][2] = {
        {"levels", "10000"},      {"check_envs", "1048576"}, {"iterations", "1024"},
        {"check_timeout", "1e300"}, {"train_timeout", "-1"},   {"target_fitness", "2"},
    };
    char dir[PATH_MAX], path[PATH_MAX + 32], edit[256], want[64];
    static char out[1 << 14];
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        copy_of("untrusted-ranges", dir, sizeof dir);
        snprintf(path, sizeof path, "%s/config.json", dir);
        snprintf(edit, sizeof edit, "j[\"%s\"]=%s", edits[i][0], edits[i][1]);
        edit_json(path, edit);
        int rc = pcg_test_sh(out, sizeof out, "%s run --resume --quiet --yes --out %s </dev/null", pcg_test_binary(), dir);
        if (rc != 1) fail_msg("config.json %s: exited %d: %s", edit, rc, out);
        snprintf(want, sizeof want, "config.json: '%s'", edits[i][0]);
        one_line(edit, out, want, "out of range");
    }
}

/* Text from a model or a file reaches report.html escaped: a reward, its
 * feedback, the story and the names config.json gives the search and the
 * training (report reads them as stored) carrying script and onerror=
 * payloads. */
static void untrusted_report_escapes_payloads(void **state)
{
    (void)state;
    char dir[PATH_MAX], path[PATH_MAX + 32];
    static char out[1 << 14];
    copy_of("untrusted-report", dir, sizeof dir);
    const char *payload = "</pre></script><script>alert(1)</script><img src=x onerror=alert(2)>";
    char text[512];
    snprintf(text, sizeof text, "/* %s */\n", payload);
    snprintf(path, sizeof path, "%s/nodes/001/reward.c", dir);
    char *code = pcg_test_slurp(path), all[1 << 14];
    assert_non_null(code);
    snprintf(all, sizeof all, "%s%s", text, code);
    free(code);
    assert_int_equal(write_file_atomic(path, all, strlen(all)), 0);
    snprintf(path, sizeof path, "%s/graph.json", dir);
    edit_json(path, "j[\"nodes\"][1][\"feedback\"]=\"Problem: </pre><script>alert(3)</script><img src=x onerror=alert(4)>\"");
    snprintf(path, sizeof path, "%s/config.json", dir);
    edit_json(path, "j[\"story\"]=\"A bat <script>alert(5)</script><svg onload=alert(6)>\"; "
                    "j.update({k: \"<script>alert(7)</script><img src=x onerror=alert(8)>\" for k in "
                    "(\"pe\", \"ablation\", \"feedback\", \"preset\", \"backend\")})");
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s report %s >/dev/null", pcg_test_binary(), dir), 0);
    snprintf(path, sizeof path, "%s/report.html", dir);
    char *page = pcg_test_slurp(path);
    assert_non_null(page);
    /* escaped, onerror= is only text: what must not appear is a tag */
    const char *raw[] = {"<script>alert", "<img src=x", "<svg onload", "</pre></script>"};
    for (size_t i = 0; i < sizeof raw / sizeof *raw; i++)
        if (strstr(page, raw[i])) fail_msg("report.html holds '%s' unescaped", raw[i]);
    assert_true(count_of(page, "&lt;script&gt;alert(") >= 7);
    free(page);
}

PCG_TESTS(untrusted, cmocka_unit_test(untrusted_config_cannot_move_the_key),
          cmocka_unit_test(untrusted_grid_json_cannot_move_the_key),
          cmocka_unit_test(untrusted_grid_flags_read_as_the_cells_read_them),
          cmocka_unit_test(untrusted_grid_cell_keeps_the_grids_author), cmocka_unit_test(untrusted_linked_file_is_not_read),
          cmocka_unit_test(untrusted_emptied_checksums_are_damage),
          cmocka_unit_test(untrusted_linked_node_dir_is_not_written), cmocka_unit_test(untrusted_report_escapes_payloads),
          cmocka_unit_test(untrusted_question_shows_no_control_characters),
          cmocka_unit_test(untrusted_stored_server_is_http),
          cmocka_unit_test(untrusted_hard_link_is_not_used),
          cmocka_unit_test(untrusted_config_keeps_the_flags_ranges))
