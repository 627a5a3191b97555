/* The loop's subprocesses: training and level generation run as
 * `pcgrllm train` and `pcgrllm generate` (this same binary), so the loop
 * itself never executes reward code.  See loop_internal.h. */
#include "loop_internal.h"
#include "checkpoint.h"
#include "child.h"
#include "dungeon.h"
#include "train_estimate.h"
#include "train_worker.h"
#include "worker.h"
#include "util.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char **argv;
    int log_fd;
    char *const *envp;
    char *fd_slot; /* an argv entry that receives the pipe's number: the child reports on it */
} exec_args;

static int exec_self(void *arg)
{
    exec_args *a = arg;
    dup2(a->log_fd, 1);
    dup2(a->log_fd, 2);
    close(a->log_fd);
    /* train and generate need no secret: the environment of a worker
     * (built before the fork), and none of this process's descriptors */
    if (a->fd_slot) { /* digits without stdio: this runs between fork and exec */
        char tmp[12];
        int v = child_fd(), k = 0, i = 0;
        do tmp[k++] = (char)('0' + v % 10), v /= 10;
        while (v > 0 && k < 11);
        while (k > 0) a->fd_slot[i++] = tmp[--k];
        a->fd_slot[i] = 0;
    }
    child_exec("/proc/self/exe", a->argv, a->envp, -1, a->fd_slot != NULL);
    fprintf(stderr, "cannot run /proc/self/exe: %s\n", strerror(errno));
    return 127;
}

/* Run `pcgrllm ARGS...` (this same binary) with output appended to log_path.
 * 0, or -1 with a one-line reason (including the last line of the log), or
 * RUN_FATAL when the command refused its flags (exit status 2): the loop
 * called it wrongly, and every further node would fail the same way.
 * Here with the child's progress frames (train --report-fd) handed to
 * on_data; fd_slot is the argv entry for the pipe's number. */
static int run_self_reporting(char **argv, char *fd_slot, const char *log_path, double timeout_s,
                              int (*on_data)(void *, const unsigned char *, size_t, char *, int), void *ctx,
                              char *reason, int len)
{
    /* the log is opened here, as every file of the run directory is (a
     * regular file, reached without a symlink): after the fork only exec runs */
    char why[1400];
    int log_fd = open_append_fd(log_path, why, sizeof why);
    if (log_fd < 0) return snprintf(reason, (size_t)len, "%s", why), -1;
    exec_args a = {argv, log_fd, worker_environment(), fd_slot};
    child_opts o = {.timeout_s = timeout_s, .on_data = on_data, .data_ctx = ctx};
    fflush(NULL);
    int rc = child_run_ex(exec_self, &a, &o, NULL, NULL, why, sizeof why);
    close(log_fd);
    if (rc == 0) return 0;
    rc = strcmp(why, "exited with status 2") ? -1 : RUN_FATAL;
    snprintf(reason, (size_t)len, "pcgrllm %s %s", argv[1], why);
    /* the child's last words are usually the useful part */
    char *log = run_read_text(log_path);
    if (log) {
        size_t n = strlen(log);
        while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == '\r')) log[--n] = 0;
        char *last = strrchr(log, '\n');
        last = last ? last + 1 : log;
        /* progress lines overwrite with \r: keep the text after the last one */
        char *cr = strrchr(last, '\r');
        if (cr) last = cr + 1;
        if (*last) {
            size_t used = strlen(reason);
            snprintf(reason + used, (size_t)len - used, ": %.300s", last);
        }
        free(log);
    }
    return rc;
}

/* The same, for a child without progress frames. */
static int run_self(char **argv, const char *log_path, double timeout_s, char *reason, int len)
{
    return run_self_reporting(argv, NULL, log_path, timeout_s, NULL, NULL, reason, len);
}

/* A node's training progress, relayed from train: a live line on a
 * terminal, a line every 30 s otherwise. */
typedef struct {
    run_state *R;
    int tty, drawn;
    double last_line;
} train_relay;

static int relay_training(void *ctx, const unsigned char *data, size_t len, char *why, int whylen)
{
    train_relay *t = ctx;
    train_report r;
    if (len != sizeof r || data[0] != 'T') return CHILD_DATA_OK; /* not ours to judge: train is trusted */
    memcpy(&r, data, sizeof r);
    char eta[32], rew[32];
    train_format_duration(r.eta_s, eta, sizeof eta);
    if (isnan(r.episode_reward)) snprintf(rew, sizeof rew, "n/a");
    else snprintf(rew, sizeof rew, "%.3g", r.episode_reward);
    double pct = r.target > 0 ? 100.0 * (double)r.step / (double)r.target : 0;
    if (t->tty) {
        printf("\r\033[K  training: step %lld/%lld (%.0f%%), %.0f steps/s, mean episode reward %s, %s left",
               (long long)r.step, (long long)r.target, pct, r.steps_per_s, rew, eta);
        fflush(stdout);
        t->drawn = 1;
    } else if (now_seconds() - t->last_line >= 30) {
        run_say(t->R, "  training: step %lld/%lld (%.0f%%), %.0f steps/s, mean episode reward %s, %s left",
                (long long)r.step, (long long)r.target, pct, r.steps_per_s, rew, eta);
        t->last_line = now_seconds();
    }
    (void)why, (void)whylen;
    return CHILD_DATA_OK;
}

static const char *variant_name(int v)
{
    return v == VARIANT_TREASURE ? "treasure" : "dungeon";
}

/* Step 3: train a policy on reward.c in a subprocess. */
int step_train(run_state *R, int id, const char *ndir, char *reason, int len)
{
    char done[2048], reward[2048], out[2048], log[2048];
    run_path(done, sizeof done, ndir, "train.done");
    if (path_present(done)) return 0;
    run_path(reward, sizeof reward, ndir, "reward.c");
    run_path(out, sizeof out, ndir, "train");
    run_path(log, sizeof log, ndir, "train.log");
    char steps[32], envs[32], seed[32], threads[32];
    snprintf(steps, sizeof steps, "%lld", R->c->steps);
    snprintf(envs, sizeof envs, "%d", R->c->envs);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)run_node_seed(R->c, id));
    snprintf(threads, sizeof threads, "%d", R->c->threads);
    char *argv[48];
    int n = 0;
    argv[n++] = "pcgrllm";
    argv[n++] = "train";
    argv[n++] = "--reward";
    argv[n++] = reward;
    argv[n++] = "--variant";
    argv[n++] = (char *)variant_name(R->esc.variant);
    argv[n++] = "--steps";
    argv[n++] = steps;
    argv[n++] = "--envs";
    argv[n++] = envs;
    argv[n++] = "--preset";
    argv[n++] = R->c->preset;
    argv[n++] = "--seed";
    argv[n++] = seed;
    argv[n++] = "--backend";
    argv[n++] = R->c->backend;
    if (strcmp(R->c->backend, "cpu") && strcmp(R->c->matmul, "fp32")) {
        argv[n++] = "--matmul";
        argv[n++] = R->c->matmul;
    }
    if (R->c->threads > 0) {
        argv[n++] = "--threads";
        argv[n++] = threads;
    }
    char detail_flags[PPO_N_DETAILS][24];
    for (int k = 0; k < PPO_N_DETAILS; k++) { /* every one, so that train's defaults never decide */
        snprintf(detail_flags[k], sizeof detail_flags[k], "--%s", ppo_details[k].flag);
        argv[n++] = detail_flags[k];
        argv[n++] = (char *)ppo_details[k].names[R->c->details[k]];
    }
    argv[n++] = "--out";
    argv[n++] = out;
    char ckpt[2200];
    run_path(ckpt, sizeof ckpt, out, "%s", CHECKPOINT_FILE);
    if (path_present(ckpt)) argv[n++] = "--resume";
    argv[n++] = "--quiet";
    argv[n++] = "--yes"; /* the run's own cost was said up front */
    char fd_slot[16] = "";
    argv[n++] = "--report-fd";
    argv[n++] = fd_slot;
    argv[n] = NULL;
    double t0 = now_seconds();
    run_say(R, "  training: %s steps, %s envs, preset %s, backend %s", steps, envs, R->c->preset, R->c->backend);
    train_relay relay = {R, !R->c->quiet && stdout_is_tty(), 0, now_seconds()};
    int rc = run_self_reporting(argv, fd_slot, log, R->c->train_timeout, relay_training, &relay, reason, len);
    if (relay.drawn) printf("\r\033[K"), fflush(stdout);
    if (rc) return rc;
    run_say(R, "  trained in %.1f s", now_seconds() - t0);
    R->tally.trained++;
    return run_write_text(done, "ok\n");
}

/* Step 4: generate the evaluation levels from the trained policy. */
int step_generate_levels(run_state *R, const char *ndir, char *reason, int len)
{
    char done[2048], policy[2048], out[2048], log[2048], n[16], seed[32], threads[32];
    run_path(done, sizeof done, ndir, "levels.done");
    if (path_present(done)) return 0;
    run_path(policy, sizeof policy, ndir, "train");
    run_path(out, sizeof out, ndir, "levels");
    run_path(log, sizeof log, ndir, "generate.log");
    snprintf(n, sizeof n, "%d", R->c->n_levels);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)R->c->eval_seed);
    snprintf(threads, sizeof threads, "%d", R->c->threads);
    char *argv[20];
    int k = 0;
    argv[k++] = "pcgrllm";
    argv[k++] = "generate";
    argv[k++] = "--final-level";
    argv[k++] = (char *)ppo_details[PPO_DETAIL_FINAL_LEVEL].names[R->c->details[PPO_DETAIL_FINAL_LEVEL]];
    argv[k++] = "--policy";
    argv[k++] = policy;
    argv[k++] = "--n";
    argv[k++] = n;
    argv[k++] = "--seed";
    argv[k++] = seed;
    argv[k++] = "--out";
    argv[k++] = out;
    argv[k++] = "--backend"; /* the episode on the run's backend, as its training */
    argv[k++] = R->c->backend;
    if (R->c->threads > 0) {
        argv[k++] = "--threads";
        argv[k++] = threads;
    }
    argv[k] = NULL;
    double t0 = now_seconds();
    run_say(R, "  generating %d levels (one episode of the trained policy on the evaluation maps)", R->c->n_levels);
    int rc = run_self(argv, log, 3600, reason, len);
    if (rc == 0) run_say(R, "  generated in %.1f s", now_seconds() - t0);
    if (rc) return rc;
    return run_write_text(done, "ok\n");
}
