/* pcgrllm bench confine: what confining training costs.  Each preset
 * trains the same updates twice with the engine's own scenario-1 reward:
 * in this process with no sandbox (the trainer of earlier versions: the
 * reward in process, a checkpoint file after every update), and the way
 * `pcgrllm train` does it now (an exec'ed worker under seccomp, every
 * update's metrics and checkpoint sent to this process, checked and
 * written here).  Same settings, same machine, one run: the ratio is the
 * cost of the confinement. */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"
#include "checkpoint.h"
#include "reward_jit.h"
#include "train_worker.h"
#include "util.h"

#define CONFINE_REWARD "rewards/engine/scenario1.c"

static void bench_config(ppo_config *cfg, const char *preset, int envs, int rollout)
{
    ppo_config_default(cfg);
    snprintf(cfg->preset, sizeof cfg->preset, "%s", preset);
    cfg->n_envs = envs;
    cfg->n_steps = rollout;
}

/* Steps/s of `updates` updates in this process, a checkpoint after each. */
static double in_process(const ppo_config *cfg, const char *src, int updates, int threads, const char *dir)
{
    char err[700], path[4200];
    reward_prog *prog = reward_compile_cpu(src, err, sizeof err);
    ppo_t p;
    if (!prog || ppo_init(&p, cfg, reward_prog_call, prog, err, sizeof err)) {
        fprintf(stderr, "bench confine: %s\n", err);
        if (prog) reward_prog_free(prog);
        return -1;
    }
    nn_set_threads(threads);
    snprintf(path, sizeof path, "%s/checkpoint.bin", dir);
    double t0 = now_seconds();
    for (int u = 0; u < updates; u++) {
        ppo_metrics m;
        if (ppo_train_update(&p, &m) || checkpoint_save(&p, path, err, sizeof err)) {
            fprintf(stderr, "bench confine: in-process update failed %s\n", err);
            break;
        }
    }
    double sps = (double)updates * cfg->n_steps * cfg->n_envs / (now_seconds() - t0);
    ppo_free(&p);
    reward_prog_free(prog);
    return sps;
}

/* Steps/s of the same updates through the confined worker. */
static double confined(const ppo_config *cfg, const char *src, int updates, int threads, const char *dir)
{
    train_settings s;
    memset(&s, 0, sizeof s);
    s.cfg = *cfg;
    s.steps = (int64_t)updates * cfg->n_steps * cfg->n_envs;
    s.threads = threads;
    s.quiet = 1;
    s.watchdog = 600;
    char err[700];
    fflush(stdout);
    int saved = dup(1), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) dup2(null, 1); /* its final line */
    fflush(stdout);
    double t0 = now_seconds();
    int rc = train_in_worker(&s, src, NULL, 0, dir, NULL, err, sizeof err);
    double el = now_seconds() - t0;
    fflush(stdout);
    if (saved >= 0) dup2(saved, 1), close(saved);
    if (null >= 0) close(null);
    if (rc) {
        fprintf(stderr, "bench confine: confined training failed: %s\n", err);
        return -1;
    }
    return (double)s.steps / el;
}

int bench_confine(int argc, char **argv)
{
    static const struct option opts[] = {{"threads", required_argument, 0, 't'}, {"updates", required_argument, 0, 'u'},
                                         {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    long threads = 0, updates = 3, v;
    int c;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        if (c == 't' && !parse_int(optarg, 1, 1024, &v)) threads = v;
        else if (c == 'u' && !parse_int(optarg, 1, 1000, &v)) updates = v;
        else if (c == 'h') return printf("usage: pcgrllm bench confine [--updates N (3)] [--threads T]\n"), 0;
        else return die_msg("bench confine: --updates wants 1..1000, --threads 1..1024"), 2;
    }
    char err[700];
    long len;
    char *src = read_file(CONFINE_REWARD, REWARD_MAX_SOURCE, &len, err, sizeof err);
    if (!src) return die_msg("bench confine: %s (run it from the source tree)", err), 1;
    char dir[] = "/tmp/pcgrllm-bench-confine-XXXXXX";
    if (!mkdtemp(dir)) return free(src), die_msg("bench confine: cannot make a scratch directory"), 1;
    printf("\ntraining steps/s, in this process without a sandbox vs the confined worker (%ld updates each,\n"
           "16 envs, rollout 128, the paper's epochs and minibatches, reward %s, a checkpoint every update)\n",
           updates, CONFINE_REWARD);
    printf("%-7s %14s %14s %8s\n", "preset", "in-process", "confined", "ratio");
    static const char *presets[] = {"small", "paper"};
    int rc = 0;
    for (int i = 0; i < 2; i++) {
        ppo_config cfg;
        bench_config(&cfg, presets[i], 16, 128);
        double a = in_process(&cfg, src, (int)updates, (int)threads, dir);
        double b = confined(&cfg, src, (int)updates, (int)threads, dir);
        if (a <= 0 || b <= 0) {
            rc = 1;
            continue;
        }
        printf("%-7s %14.0f %14.0f %7.3fx\n", presets[i], a, b, b / a);
        fflush(stdout);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench confine: could not remove %s\n", dir);
    free(src);
    return rc;
}
