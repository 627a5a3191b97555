/* Containment of reward code wherever it runs (docs/sandbox.md, the threat
 * table): the hostile rewards of tests/hostile/ in training as well as in
 * validation, forged verdicts, the API key, processes that try to outlive
 * their run, NVRTC without files, and non-finite training. */
#define _GNU_SOURCE
#include "harness.h"
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "checkpoint.h"
#include "child.h"
#include "jit_internal.h"
#include "reward_jit.h"
#include "util.h"
#include "worker.h"

#define SECRET "sk-PCGRLLM-TEST-SECRET-4242"

/* A reward the validation accepts but that makes a system call once it
 * runs in training: the trainer's seccomp filter must stop it. */
static void contain_syscall_in_training(void **state)
{
    (void)state;
    char out[4096];
    const char *bin = pcg_test_binary(), *dir = pcg_test_tmpdir();
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s check-reward --envs 4 tests/hostile/syscall_in_training.c", bin),
                     0);
    int rc = pcg_test_sh(out, sizeof out,
                         "%s train --reward tests/hostile/syscall_in_training.c --scenario 1 --steps 256 --envs 2 "
                         "--preset small --out %s/syscall_train",
                         bin, dir);
    assert_int_equal(rc, 1);
    if (!strstr(out, "the reward made a forbidden system call during training")) fail_msg("got: %s", out);
}

/* The simulation runs check-reward's device pass on the host, inside a
 * step where no device timeout can reach: a reward that hangs only there
 * is stopped by --timeout's CPU budget, not after the worker's 2T + 180 s. */
static void contain_sim_check_hang(void **state)
{
    (void)state;
    char out[4096], nv[256];
    if (!reward_nvrtc_available(nv, sizeof nv)) {
        pcg_test_skip("contain_sim_check_hang", nv);
        return;
    }
    if (!pcg_test_exists("build/sim/libpcgrllm_cuda_sim.so")) fail_msg("build/sim/libpcgrllm_cuda_sim.so not built (make cuda-sim)");
    double t0 = now_seconds();
    int rc = pcg_test_sh(out, sizeof out,
                         "PCGRLLM_CUDA_LIB=build/sim/libpcgrllm_cuda_sim.so timeout 100 %s check-reward --backend cuda "
                         "--envs 2 --timeout 2 tests/hostile/hang_after_validation.c 2>&1",
                         pcg_test_binary());
    assert_int_equal(rc, 1);
    if (!strstr(out, "error: the GPU check crashed with SIGXCPU (CPU time limit exceeded)\n")) fail_msg("got: %s", out);
    assert_true(now_seconds() - t0 < 60);
}

/* A reward that never returns in training but writes heartbeat frames to
 * the message pipe (found from its own argv) does not keep training alive:
 * the watchdog believes only progress the train command can check. */
static void contain_forged_heartbeats(void **state)
{
    (void)state;
    char out[4096];
    double t0 = now_seconds();
    int rc = pcg_test_sh(out, sizeof out,
                         "timeout 120 %s train --reward tests/hostile/heartbeat_hang.c --scenario 1 --steps 512 "
                         "--envs 2 --preset small --watchdog 1 --out %s/heartbeat",
                         pcg_test_binary(), pcg_test_tmpdir());
    assert_int_equal(rc, 1);
    if (!strstr(out, "stopped responding for 1 s (hung; killed)")) fail_msg("got: %s", out);
    assert_true(now_seconds() - t0 < 60);
}

/* Training with rewards so large that the returns overflow stops with the
 * cause and writes no checkpoint; a checkpoint with NaN weights is refused
 * by generate and train --resume. */
static void contain_non_finite_training(void **state)
{
    (void)state;
    char out[4096], dir[512];
    const char *bin = pcg_test_binary();
    snprintf(dir, sizeof dir, "%s/huge", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out,
                         "%s train --reward tests/hostile/huge_reward.c --scenario 1 --steps 1024 --envs 2 --preset "
                         "small --out %s",
                         bin, dir);
    assert_int_equal(rc, 1);
    if (!strstr(out, "training stopped at update 1 (step 256): the returns are not finite")) fail_msg("got: %s", out);
    char path[600];
    snprintf(path, sizeof path, "%s/checkpoint.bin", dir);
    assert_false(pcg_test_exists(path));

    /* a diverged run's checkpoint, as the old trainer would have saved it */
    ppo_config cfg;
    ppo_config_default(&cfg);
    cfg.n_envs = 2;
    snprintf(cfg.preset, sizeof cfg.preset, "small");
    checkpoint_state st;
    assert_int_equal(checkpoint_state_alloc(&st, &cfg), 0);
    memset(st.maps, TILE_EMPTY, (size_t)st.n_envs * st.cells);
    st.params[st.n_params / 2] = NAN;
    char err[600];
    assert_int_equal(checkpoint_write(&st, path, err, sizeof err), 0);
    checkpoint_state_free(&st);
    assert_int_not_equal(pcg_test_sh(out, sizeof out, "%s generate --policy %s --n 2 --out %s/lv", bin, dir, dir), 0);
    assert_non_null(strstr(out, "the network weights are not finite"));
    assert_int_not_equal(pcg_test_sh(out, sizeof out, "%s train --resume --out %s --steps 4096", bin, dir), 0);
    assert_non_null(strstr(out, "the network weights are not finite"));
    checkpoint_state back;
    assert_int_equal(checkpoint_read(&back, path, err, sizeof err), -1);
    assert_non_null(strstr(err, "not finite"));
}

/* The key is in no worker's environment, so a reward that searches its
 * stack for it finds nothing (and this one then runs off the stack). */
static void contain_key_not_in_workers(void **state)
{
    (void)state;
    setenv("OPENAI_API_KEY", SECRET, 1);
    setenv("PCGRLLM_TEST_SECRET", SECRET, 1);
    worker_env_deny("PCGRLLM_GPU"); /* a key variable that would otherwise pass */
    setenv("PCGRLLM_GPU", SECRET, 1);
    for (char *const *e = worker_environment(); *e; e++)
        if (strstr(*e, SECRET)) fail_msg("passed on: %s", *e);
    char reason[600];
    reward_stats st;
    long len;
    char *src = read_file("tests/hostile/key_scan.c", REWARD_MAX_SOURCE, &len, reason, sizeof reason);
    assert_non_null(src);
    int rc = reward_validate(src, VARIANT_DUNGEON, 2, 0, 20, &st, reason, sizeof reason);
    free(src);
    unsetenv("PCGRLLM_GPU");
    unsetenv("OPENAI_API_KEY");
    unsetenv("PCGRLLM_TEST_SECRET");
    /* 's' + 256 'k' + 65536 '-': the first bytes of the secret */
    if (rc == 0) assert_true(st.max != 2976627.0 && st.min != 2976627.0);
    else assert_null(strstr(reason, SECRET));
}

/* Whatever the validation process sends besides raw values -- a result
 * blob, a failure text, too few values -- is refused, never echoed. */
static void contain_forged_verdict(void **state)
{
    (void)state;
    char reason[600];
    assert_int_equal(reward_sandbox_probe(REWARD_PROBE_FORGE_VERDICT, reason, sizeof reason), -1);
    assert_string_equal(reason, "the validation process sent a malformed message");
}

static int ch_setsid_grandchild(void *arg)
{
    (void)arg;
    pid_t g = fork();
    if (g == 0) {
        setsid(); /* out of the child's session and process group */
        for (;;) pause();
    }
    child_send(&g, sizeof g);
    return 0;
}

static int alive(pid_t pid)
{
    char p[64], st[512] = "";
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "r");
    if (!f) return 0;
    int live = 1;
    if (fgets(st, sizeof st, f)) {
        const char *rp = strrchr(st, ')');
        if (rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X')) live = 0;
    }
    fclose(f);
    return live;
}

/* A process that leaves its session still dies with the child that
 * started it (the reaper is its subreaper). */
static void contain_setsid_grandchild_killed(void **state)
{
    (void)state;
    child_opts o = {.timeout_s = 10};
    void *blob = NULL;
    size_t len = 0;
    char reason[300];
    assert_int_equal(child_run_ex(ch_setsid_grandchild, NULL, &o, &blob, &len, reason, sizeof reason), 0);
    assert_int_equal(len, sizeof(pid_t));
    pid_t g = *(pid_t *)blob;
    free(blob);
    for (int i = 0; i < 200 && alive(g); i++) {
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
    }
    assert_false(alive(g));
}

/* NVRTC itself opens no file: a source that reached it with an #include
 * (past the scan, which refuses every spelling of one) only gets an error
 * that shows nothing of the file. */
static void contain_nvrtc_opens_no_file(void **state)
{
    (void)state;
    char why[800];
    if (!reward_nvrtc_available(why, sizeof why)) pcg_test_skip("contain_nvrtc_opens_no_file", why);
    const char *src = "#include \"/etc/passwd\"\nfloat compute_reward(const level_t *p, const level_t *c) { return 0; }\n";
    nvrtc_job j;
    memset(&j, 0, sizeof j);
    snprintf(j.arch, sizeof j.arch, "sm_90");
    j.unscanned = 1;
    j.timeout_s = 60;
    size_t n = strlen(src);
    unsigned char *job = malloc(sizeof j + n);
    memcpy(job, &j, sizeof j);
    memcpy(job + sizeof j, src, n);
    child_opts o = {.timeout_s = 60};
    int rc = worker_run("compile-cuda", job, sizeof j + n, &o, NULL, NULL, why, sizeof why);
    free(job);
    assert_int_equal(rc, -1);
    if (!strstr(why, "cannot open source file")) fail_msg("got: %s", why);
    assert_null(strstr(why, "root"));
}

/* Every file under dir holding needle: the first one's path in hit. */
static char hit[4096];
static const char *g_needle;
static int find_needle(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)ftw;
    if (type != FTW_F || hit[0]) return 0;
    long len;
    char err[256];
    char *t = read_file(path, 1l << 28, &len, err, sizeof err);
    if (t && memmem(t, (size_t)len, g_needle, strlen(g_needle))) snprintf(hit, sizeof hit, "%s", path);
    free(t);
    return 0;
}

static int children_of(pid_t parent, pid_t except)
{
    char cmd[128], out[256];
    snprintf(cmd, sizeof cmd, "ps -o pid= --ppid %d | grep -v -w %d | wc -l", (int)parent, (int)except);
    pcg_test_sh(out, sizeof out, "%s", cmd);
    return atoi(out) - 1; /* the ps pipeline's own shell */
}

/* A whole run against a model that answers with escape attempts: a reward
 * that searches memory for the key (the key's variable is the one it looks
 * for), then one that behaves in validation and makes a system call in
 * training.  The key reaches no file, output or prompt; the training
 * stops with the reason; nothing is left running. */
static void contain_run_hostile_model(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    setenv("PCGRLLM_TEST_SECRET", SECRET, 1);
    prctl(PR_SET_CHILD_SUBREAPER, 1); /* orphans of the run come to us */
    pcg_fake_srv srv;
    pcg_test_srv_start(&srv, "tests/fake_openai_hostile.json", "contain", "PCGRLLM_TEST_SECRET");
    char dir[600];
    snprintf(dir, sizeof dir, "%s/hostile-run", pcg_test_tmpdir());
    static char out[1 << 16];
    pcg_test_sh(out, sizeof out,
                "%s run --llm openai --base-url http://127.0.0.1:%d/v1 --model fake --api-key-env PCGRLLM_TEST_SECRET "
                "--llm-retries 1 --llm-backoff 0.01 --llm-timeout 20 --scenario 1 --preset small --steps 512 "
                "--envs 2 --threads 1 --align 1 --check-envs 4 --levels 4 --iterations 1 --out %s",
                pcg_test_binary(), srv.port, dir);
    int left = children_of(getpid(), srv.pid);
    prctl(PR_SET_CHILD_SUBREAPER, 0); /* later tests count their own children */
    pcg_test_srv_stop(&srv);
    unsetenv("PCGRLLM_TEST_SECRET");
    assert_int_equal(left, 0);
    assert_null(strstr(out, SECRET));
    g_needle = SECRET;
    hit[0] = 0;
    assert_int_equal(nftw(dir, find_needle, 16, FTW_PHYS), 0);
    if (hit[0]) fail_msg("the key is in %s", hit);
    /* the prompts the model saw (the server's log holds the request bodies) */
    assert_int_equal(nftw(srv.log, find_needle, 16, FTW_PHYS), 0);
    if (hit[0]) fail_msg("the key went into a prompt");
    /* the reward was stopped in training, and said so */
    g_needle = "forbidden system call during training";
    assert_int_equal(nftw(dir, find_needle, 16, FTW_PHYS), 0);
    if (!hit[0]) fail_msg("no file of the run names the stopped training; output: %s", out);
}

/* A preloaded runtime (the simulation's sanitizer build) reaches the
 * workers, the worker that trains and loads the library among them. */
static void contain_preload_reaches_workers(void **state)
{
    (void)state;
    const char *old = getenv("LD_PRELOAD");
    char *saved = old ? strdup(old) : NULL;
    setenv("LD_PRELOAD", "/nonexistent/libpreloaded.so", 1);
    setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
    int preload = 0, options = 0;
    for (char *const *e = worker_environment(); *e; e++) {
        preload += !strcmp(*e, "LD_PRELOAD=/nonexistent/libpreloaded.so");
        options += !strcmp(*e, "ASAN_OPTIONS=detect_leaks=0");
    }
    if (saved) setenv("LD_PRELOAD", saved, 1);
    else unsetenv("LD_PRELOAD");
    free(saved);
    unsetenv("ASAN_OPTIONS");
    assert_int_equal(preload, 1);
    assert_int_equal(options, 1);
}

PCG_TESTS(contain, cmocka_unit_test(contain_syscall_in_training), cmocka_unit_test(contain_sim_check_hang),
          cmocka_unit_test(contain_forged_heartbeats), cmocka_unit_test(contain_non_finite_training),
          cmocka_unit_test(contain_key_not_in_workers),
          cmocka_unit_test(contain_preload_reaches_workers), cmocka_unit_test(contain_forged_verdict),
          cmocka_unit_test(contain_setsid_grandchild_killed), cmocka_unit_test(contain_nvrtc_opens_no_file),
          cmocka_unit_test(contain_run_hostile_model))
