/* Environment throughput: random actions, compact observation written every
 * step, without a reward and then with scenario 1's human reward. */
#include "bench.h"
#include "bench_util.h"
#include "cpus.h"
#include "env.h"
#include "reward_jit.h"
#include "util.h"
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Steps per second for n envs with t threads over about `seconds`, each
 * step scored by prog when it is not NULL. */
static double env_rate_with(int n, int threads, double seconds, reward_prog *prog)
{
    omp_set_num_threads(threads);
    env_t e;
    if (env_alloc(&e, n, 16, 16, VARIANT_DUNGEON, 1)) return -1;
    if (prog) env_set_reward(&e, reward_prog_call, prog);
    int *act = malloc(sizeof(int) * (size_t)n);
    if (!act) {
        env_free(&e);
        return -1;
    }
    long steps = 0;
    uint64_t t = 0;
    for (int w = 0; w < 50; w++, t++) { /* warm-up */
        env_random_actions(&e, 3, t, act);
        env_step(&e, act);
    }
    double t0 = now_seconds(), el = 0;
    do {
        for (int k = 0; k < 64; k++, t++) {
            env_random_actions(&e, 3, t, act);
            env_step(&e, act);
        }
        steps += 64L * n;
        el = now_seconds() - t0;
    } while (el < seconds);
    free(act);
    env_free(&e);
    return (double)steps / el;
}

static double env_rate(int n, int threads, double seconds) { return env_rate_with(n, threads, seconds, NULL); }

/* The same with the human reward of scenario 1 (the reference's own,
 * ported), compiled by libtcc as training compiles it; nothing when the
 * source tree's rewards/ is not here. */
static void reward_rows(int maxt, double seconds)
{
    static const char path[] = "rewards/human/scenario1.c";
    char err[1024];
    long len;
    char *src = read_file(path, REWARD_MAX_SOURCE, &len, err, sizeof err);
    reward_prog *prog = src ? reward_compile_cpu(src, err, sizeof err) : NULL;
    free(src);
    if (!prog) {
        printf("\n(no reward rows: %s)\n", err);
        return;
    }
    printf("\nthe same with %s (libtcc) scoring every step\n", path);
    printf("%8s %16s %16s %8s\n", "envs", "1 thread", maxt > 1 ? "all threads" : "(1 core)", "speedup");
    int counts[2] = {64, 1024};
    for (int i = 0; i < 2; i++) {
        double r1 = env_rate_with(counts[i], 1, seconds, prog);
        double rn = maxt > 1 ? env_rate_with(counts[i], maxt, seconds, prog) : r1;
        printf("%8d %16.0f %16.0f %7.2fx\n", counts[i], r1, rn, rn / r1);
    }
    reward_prog_free(prog);
}

/* A process that keeps one core busy until it is killed. */
static pid_t busy_core(void)
{
    pid_t p = fork();
    if (p == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (volatile unsigned long x = 0;; x++) continue;
    }
    return p;
}

/* The same step rates with another process busy on one core: one thread,
 * every allowed CPU (what OpenMP does by default), and the engine's own
 * choice (host/sys/cpus.h), which must never fall below one thread. */
static void shared_machine_rows(double seconds)
{
    cpu_budget all = cpus_measure(0);
    if (all.affinity < 2) return;
    pid_t busy = busy_core();
    if (busy < 0) return;
    struct timespec settle = {0, 200000000};
    nanosleep(&settle, NULL);
    cpu_budget chosen = cpus_measure(0.2);
    printf("\nwith another process busy on one core: 1 thread, all %d CPUs, and the engine's choice (%d)\n",
           all.affinity, chosen.threads);
    printf("%8s %16s %16s %16s\n", "envs", "1 thread", "all CPUs", "engine's choice");
    int counts[2] = {64, 1024};
    for (int i = 0; i < 2; i++) {
        double r1 = env_rate(counts[i], 1, seconds), ra = env_rate(counts[i], all.affinity, seconds);
        double rc = chosen.threads == 1 ? r1 : chosen.threads == all.affinity ? ra : env_rate(counts[i], chosen.threads, seconds);
        printf("%8d %16.0f %16.0f %16.0f\n", counts[i], r1, ra, rc);
    }
    kill(busy, SIGKILL);
    waitpid(busy, NULL, 0);
}

int bench_env(int argc, char **argv)
{
    double seconds;
    int rc = bench_seconds_opts(argc, argv, "env", &seconds);
    if (rc >= 0) return rc;
    int maxt = cpus_measure(0).affinity, engine = omp_get_max_threads();
    int counts[4] = {1, 64, 1024, 4096};
    printf("\nenvironment steps/s (dungeon 16x16, random actions, 31x31 compact observation each step, no reward)\n");
    bench_print_machine(stdout);
    printf("%8s %16s %16s %8s\n", "envs", "1 thread", maxt > 1 ? "all threads" : "(1 core)", "speedup");
    for (int i = 0; i < 4; i++) {
        double r1 = env_rate(counts[i], 1, seconds);
        double rn = maxt > 1 ? env_rate(counts[i], maxt, seconds) : r1;
        printf("%8d %16.0f %16.0f %7.2fx\n", counts[i], r1, rn, rn / r1);
    }
    reward_rows(maxt, seconds);
    shared_machine_rows(seconds);
    omp_set_num_threads(engine);
    return 0;
}
