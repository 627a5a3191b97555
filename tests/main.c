/* Runs every registered test in one cmocka group.  An optional argument is a
 * name filter (shell pattern, e.g. "env_*"); a second one names the tests
 * among those to leave out ("*nvrtc*"). */
#include "harness.h"
#include "backend.h"
#include "util.h"
#include "worker.h"
#include "worker_roles.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void pcg_test_use_source_prompts(void)
{
    char cwd[PATH_MAX - 16], dir[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) {
        fprintf(stderr, "tests: cannot read the working directory\n");
        abort();
    }
    snprintf(dir, sizeof dir, "%s/prompts", cwd);
    setenv("PCGRLLM_PROMPTS", dir, 1);
}

int pcg_test_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

char *pcg_test_slurp(const char *path)
{
    long len;
    char err[256];
    return read_file(path, 1L << 26, &len, err, sizeof err);
}

struct json_t *pcg_test_json_in(const char *dir, const char *name)
{
    char path[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    json_t *j = json_load_file(path, 0, NULL);
    if (!j) fail_msg("%s: not readable JSON", path);
    return j;
}

char *pcg_test_file_in(const char *dir, const char *name)
{
    char path[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *s = pcg_test_slurp(path);
    if (!s) fail_msg("no %s", path);
    return s;
}

int pcg_test_count_of(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

int pcg_test_count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

void pcg_test_grid_from(pcg_test_grid *g, const char *const *rows)
{
    const char *chars = " .#@bsxkDT";
    int h = 0, w = (int)strlen(rows[0]);
    for (; rows[h]; h++) {
        assert_int_equal((int)strlen(rows[h]), w);
        for (int c = 0; c < w; c++) {
            const char *p = strchr(chars, rows[h][c]);
            assert_non_null(p);
            g->t[h * w + c] = (unsigned char)(p - chars);
        }
    }
    g->l = (level_t){h, w, g->t};
}

void pcg_test_srv_start(pcg_fake_srv *s, const char *script_path, const char *name, const char *key_env)
{
    pcg_test_srv_start_on(s, script_path, name, key_env, 0);
}

void pcg_test_srv_start_on(pcg_fake_srv *s, const char *script_path, const char *name, const char *key_env, int port)
{
    memset(s, 0, sizeof *s);
    char port_path[PATH_MAX], port_arg[16];
    snprintf(port_arg, sizeof port_arg, "%d", port);
    snprintf(port_path, sizeof port_path, "%s/%s.port", pcg_test_tmpdir(), name);
    unlink(port_path); /* a server started before under this name wrote one */
    snprintf(s->log, sizeof s->log, "%s/%s.requests.jsonl", pcg_test_tmpdir(), name);
    assert_int_equal(access("tests/fake_openai.py", R_OK), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 1);
        execlp("python3", "python3", "tests/fake_openai.py", "--script", script_path, "--log", s->log, "--port-file",
               port_path, "--key-env", key_env, "--max-seconds", "300", "--port", port_arg, (char *)NULL);
        _exit(127);
    }
    s->pid = pid;
    for (int i = 0; i < 400 && !s->port; i++) {
        FILE *f = fopen(port_path, "r");
        if (f) {
            if (fscanf(f, "%d", &s->port) != 1) s->port = 0;
            fclose(f);
        }
        if (!s->port) usleep(25000);
    }
    assert_true(s->port > 0);
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d/v1", s->port);
}

int pcg_test_spawn(const char *cmd, const char *log)
{
    char full[4 * PATH_MAX + 64];
    snprintf(full, sizeof full, "exec %s >>%s 2>&1", cmd, log);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", full, (char *)NULL);
        _exit(127);
    }
    return pid;
}

int pcg_test_wait_for(const char *path, int pid, int *status)
{
    for (int i = 0; i < 60000; i++) {
        if (pcg_test_exists(path)) return 1;
        if (waitpid(pid, status, WNOHANG) == pid) return 0;
        usleep(2000);
    }
    fail_msg("%s did not appear within two minutes", path);
    return 0;
}

void pcg_test_srv_stop(pcg_fake_srv *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
}

void pcg_test_skip(const char *test, const char *why)
{
    const char *req = getenv("PCGRLLM_REQUIRE_DEVICE");
    if (req && *req && strcmp(req, "0")) fail_msg("%s: not skipped, a device is required here: %s", test, why);
    printf("%s: skipped, %s\n", test, why);
    skip();
}

int pcg_test_cuda_devices(char *why, int whylen)
{
    const char *lib = getenv("PCGRLLM_CUDA_LIB");
    if (lib && *lib) {
        const pcg_cuda_api *api = backend_cuda_load(why, whylen);
        if (api && api->simulated) return 1;
    }
    return backend_cuda_devices(why, whylen);
}

static struct CMUnitTest *all;
static size_t n_all, cap_all;
static char tmpdir[256];

void pcg_test_register(const struct CMUnitTest *tests, size_t n)
{
    if (n_all + n > cap_all) {
        cap_all = (n_all + n) * 2;
        all = realloc(all, cap_all * sizeof *all);
        if (!all) abort();
    }
    memcpy(all + n_all, tests, n * sizeof *tests);
    n_all += n;
}

const char *pcg_test_tmpdir(void)
{
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/pcgrllm-test-XXXXXX");
        if (!mkdtemp(tmpdir)) abort();
    }
    return tmpdir;
}

const char *pcg_test_binary(void)
{
    const char *b = getenv("PCGRLLM_BIN");
    return b && *b ? b : "./pcgrllm";
}

int pcg_test_sh(char *out, size_t outlen, const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char full[8300];
    snprintf(full, sizeof full, "(%s) 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p) return -1;
    size_t n = 0;
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, p)) > 0) {
        if (out && n + 1 < outlen) {
            size_t take = got < outlen - 1 - n ? got : outlen - 1 - n;
            memcpy(out + n, buf, take);
            n += take;
        }
    }
    if (out && outlen) out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int main(int argc, char **argv)
{
    /* the engine starts its workers from this binary too */
    worker_set_roles(pcg_worker_roles, pcg_n_worker_roles);
    int w = worker_dispatch(argc, argv);
    if (w >= 0) return w;
    if (argc > 1) cmocka_set_test_filter(argv[1]);
    if (argc > 2) cmocka_set_skip_filter(argv[2]);
    int failed = _cmocka_run_group_tests("pcgrllm", all, n_all, NULL, NULL);
    if (tmpdir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    }
    free(all);
    return failed ? 1 : 0;
}
