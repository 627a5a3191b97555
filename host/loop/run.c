/* The reward-design loop: run directory, thought nodes, resume.  See run.h. */
#include "run.h"
#include "checkpoint.h"
#include "child.h"
#include "backend.h"
#include "train_estimate.h"
#include "train_worker.h"
#include "worker.h"
#include "dungeon.h"
#include "levelio.h"
#include "ppo.h"
#include "prompts.h"
#include "render.h"
#include "reward_jit.h"
#include "author.h"
#include "run_state.h"
#include "util.h"
#include "dirguard.h"
#include "trust.h"
#include "cpus.h"
#include "version.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- the run */

/* ---------------------------------------------------------------- subprocesses */

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
 * called it wrongly, and every further node would fail the same way. */
#define RUN_FATAL (-2)
/* The same with the child's progress frames (train --report-fd) handed to
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

/* ---------------------------------------------------------------- levels */

static json_t *eval_json(const run_state *R, const level_set *ls)
{
    static const char *const enemy[3] = {"BAT", "SCORPION", "SPIDER"};
    json_t *o = json_object();
    json_object_set_new(o, "fitness", json_real(ls->sum.fitness));
    json_object_set_new(o, "diversity", json_real(ls->sum.diversity));
    json_object_set_new(o, "playable_share", json_real(ls->sum.playable_share));
    json_object_set_new(o, "playable_wall_share", json_real(ls->sum.playable_wall_share));
    json_object_set_new(o, "mean_solutions", json_real(ls->sum.mean_solutions));
    json_object_set_new(o, "n_valid", json_integer(ls->sum.n_valid));
    json_object_set_new(o, "aspao", ls->sum.n_valid ? json_real(ls->sum.aspao) : json_null());
    json_object_set_new(o, "utr", json_real(ls->sum.utr));
    json_object_set_new(o, "vutr", json_real(ls->sum.vutr));
    json_object_set_new(o, "mean_entropy", json_real(ls->sum.mean_entropy));
    json_object_set_new(o, "diversity_share", json_real(ls->sum.diversity_share));
    json_t *arr = json_array();
    for (int i = 0; i < ls->n; i++) {
        const eval_level_t *m = &ls->per[i];
        json_t *l = json_object();
        char f[32];
        snprintf(f, sizeof f, "level_%03d.txt", i);
        json_object_set_new(l, "file", json_string(f));
        json_object_set_new(l, "score", json_real(m->score));
        json_object_set_new(l, "solutions", json_integer(m->solutions));
        json_object_set_new(l, "playable", json_boolean(m->playable));
        if (R->esc.kind == EVAL_PATHLENGTH) json_object_set_new(l, "route", json_integer(m->route));
        if (R->esc.kind == EVAL_ENCOUNTER) {
            json_t *met = json_object();
            for (int e = 0; e < 3; e++) json_object_set_new(met, enemy[e], json_boolean(m->met[e]));
            json_object_set_new(l, "met", met);
        }
        json_array_append_new(arr, l);
    }
    json_object_set_new(o, "levels", arr);
    return o;
}

/* ---------------------------------------------------------------- checks */

static json_t *check_json(int accepted, const char *reason, const reward_stats *st)
{
    json_t *o = json_object();
    json_object_set_new(o, "accepted", json_boolean(accepted));
    if (!accepted) json_object_set_new(o, "reason", json_string(reason));
    if (accepted) {
        json_t *s = json_object();
        json_object_set_new(s, "mean", json_real(st->mean));
        json_object_set_new(s, "std", json_real(st->std));
        json_object_set_new(s, "min", json_real(st->min));
        json_object_set_new(s, "max", json_real(st->max));
        json_object_set_new(s, "zero_share", json_real(st->zero_share));
        json_object_set_new(s, "us_per_call", json_real(st->us_per_call));
        json_object_set_new(s, "n", json_integer(st->n));
        json_object_set_new(o, "stats", s);
        char warning[512];
        if (reward_stats_warning(st, warning, sizeof warning)) json_object_set_new(o, "warning", json_string(warning));
    }
    return o;
}

/* Sandboxed check of code; writes NAME.c and NAME.json in ndir. */
static int check_reward(run_state *R, const char *ndir, const char *name, const char *code, reward_stats *st,
                        char *reason, int len)
{
    char path[2048];
    run_path(path, sizeof path, ndir, "%s.c", name);
    run_write_text(path, code);
    /* a run that may train on the GPU also needs the reward to compile with NVRTC */
    int gpu = strcmp(R->c->backend, "cpu") != 0, gpu_checked = 0;
    int rc = reward_validate_both(code, R->esc.variant, R->c->check_envs, R->c->seed + 1, R->c->check_timeout, gpu, st,
                                  &gpu_checked, reason, len);
    /* for the run's summary: how far the rewards got */
    char why[256];
    char warning[512];
    if (rc == 0 && reward_stats_warning(st, warning, sizeof warning)) run_say(R, "  warning: %s", warning);
    if (rc == 0) R->tally.validated++, R->tally.compiled++;
    else if (reward_check_compile_cpu(code, R->c->check_timeout, why, sizeof why) == 0) R->tally.compiled++;
    run_path(path, sizeof path, ndir, "%s.json", name);
    run_write_json(path, check_json(rc == 0, reason, st));
    return rc;
}

static int read_stats(const char *path, reward_stats *st)
{
    char err[1200];
    json_t *j = read_json_file(path, 1L << 20, err, sizeof err);
    json_t *s = json_object_get(j, "stats");
    if (!json_is_object(s)) {
        json_decref(j);
        return -1;
    }
    st->mean = json_number_value(json_object_get(s, "mean"));
    st->std = json_number_value(json_object_get(s, "std"));
    st->min = json_number_value(json_object_get(s, "min"));
    st->max = json_number_value(json_object_get(s, "max"));
    st->zero_share = json_number_value(json_object_get(s, "zero_share"));
    st->us_per_call = json_number_value(json_object_get(s, "us_per_call"));
    st->n = (long)json_integer_value(json_object_get(s, "n"));
    json_decref(j);
    return 0;
}

/* ---------------------------------------------------------------- node steps */

/* Step 1 of the node that trains the --init-reward reward: the run's copy
 * (DIR/init_reward.c) must pass the sandbox as it is; nobody fixes it. */
static int step_init_reward(run_state *R, const char *ndir, const char *gen_path, char *reason, int len)
{
    char path[1200], why[1024];
    snprintf(path, sizeof path, "%s/init_reward.c", R->c->out);
    char *code = run_read_text(path);
    if (!code) return snprintf(reason, (size_t)len, "cannot read the initial reward %.1000s", path), -1;
    reward_stats st;
    int rc = check_reward(R, ndir, "reward_init", code, &st, why, sizeof why);
    if (rc) {
        snprintf(reason, (size_t)len, "the initial reward (--init-reward %.300s) was rejected: %s", R->c->init_reward,
                 why);
    } else {
        run_say(R, "  initial reward accepted: mean %.4g std %.4g zero share %.2f, %.1f us/call", st.mean, st.std,
                st.zero_share, st.us_per_call);
        char sp[2048];
        run_path(sp, sizeof sp, ndir, "reward_gen.json");
        run_write_json(sp, check_json(1, "", &st));
        rc = run_write_text(gen_path, code);
    }
    free(code);
    return rc ? -1 : 0;
}

/* Step 1: a valid reward, within trials x (1 + fixes) attempts.  Writes
 * ndir/reward_gen.c.  0, or -1 with the last rejection in reason. */
static int step_generate(run_state *R, int id, const char *ndir, char *reason, int len)
{
    char path[2048], err[1024], name[64];
    run_path(path, sizeof path, ndir, "reward_gen.c");
    if (path_present(path)) return 0;
    if (run_init_node(R, id)) return step_init_reward(R, ndir, path, reason, len);
    for (int trial = 0; trial < R->c->trials; trial++) {
        char *code = au_generate(R, id, ndir, trial + 1, trial ? reason : NULL, err, sizeof err);
        if (R->halted[0]) return free(code), RUN_FATAL;
        if (!code) {
            snprintf(reason, (size_t)len, "author: %s", err);
            run_say(R, "  trial %d: %s", trial + 1, reason);
            continue;
        }
        for (int fix = 0;; fix++) {
            reward_stats st;
            snprintf(name, sizeof name, "reward_t%d_f%d", trial + 1, fix);
            if (check_reward(R, ndir, name, code, &st, reason, len) == 0) {
                run_say(R, "  reward accepted (trial %d, fix %d): mean %.4g std %.4g zero share %.2f, %.1f us/call",
                        trial + 1, fix, st.mean, st.std, st.zero_share, st.us_per_call);
                char sp[2048];
                run_path(sp, sizeof sp, ndir, "reward_gen.json");
                run_write_json(sp, check_json(1, "", &st));
                int rc = run_write_text(path, code);
                free(code);
                return rc;
            }
            run_say(R, "  trial %d fix %d rejected: %s", trial + 1, fix, reason);
            if (fix >= R->c->fixes) break;
            char *fixed = au_fix(R, id, ndir, code, reason, trial + 1, fix + 1, err, sizeof err);
            free(code);
            code = fixed;
            if (R->halted[0]) return free(code), RUN_FATAL;
            if (!code) {
                snprintf(reason, (size_t)len, "author: %s", err);
                break;
            }
        }
        free(code);
    }
    return -1;
}

/* Step 2: self-alignment rounds.  Writes align_K.c/.json and reward.c. */
static int step_align(run_state *R, int id, const char *ndir, char *reason, int len)
{
    char path[2048], final_path[2048], err[1024], name[64];
    run_path(final_path, sizeof final_path, ndir, "reward.c");
    if (path_present(final_path)) return 0;
    run_path(path, sizeof path, ndir, "reward_gen.c");
    char *code = run_read_text(path);
    if (!code) return snprintf(reason, (size_t)len, "cannot read %.1000s", path), -1;
    /* the --init-reward node trains the given reward as it is */
    int rounds = (R->c->ablation == ABL_SA || R->c->ablation == ABL_FULL) && !run_init_node(R, id) ? R->c->align : 0;
    for (int k = 1; k <= rounds; k++) {
        run_path(path, sizeof path, ndir, "align_%d.c", k);
        if (path_present(path)) {
            free(code);
            code = run_read_text(path);
            if (!code) return snprintf(reason, (size_t)len, "cannot read %.1000s", path), -1;
            continue;
        }
        /* statistics of the current reward, from its accepted check */
        reward_stats st;
        char sp[2048];
        if (k == 1) run_path(sp, sizeof sp, ndir, "reward_gen.json");
        else run_path(sp, sizeof sp, ndir, "align_%d.json", k - 1);
        if (read_stats(sp, &st)) {
            free(code);
            return snprintf(reason, (size_t)len, "cannot read the statistics in %.1000s", sp), -1;
        }
        char *next = au_align(R, id, ndir, code, &st, k, err, sizeof err);
        if (R->halted[0]) return free(code), free(next), RUN_FATAL;
        int accepted = 0, same = next && !strcmp(next, code);
        if (same) run_say(R, "  align %d/%d: reward unchanged", k, rounds);
        for (int fix = 0; next && !same && fix <= R->c->fixes; fix++) {
            reward_stats st2;
            char why[1024];
            snprintf(name, sizeof name, "align_%d_f%d", k, fix);
            if (check_reward(R, ndir, name, next, &st2, why, sizeof why) == 0) {
                accepted = 1;
                run_say(R, "  align %d/%d: mean %.4g std %.4g zero share %.2f -> mean %.4g std %.4g zero share %.2f", k,
                        rounds, st.mean, st.std, st.zero_share, st2.mean, st2.std, st2.zero_share);
                st = st2;
                break;
            }
            run_say(R, "  align %d/%d fix %d rejected: %s", k, rounds, fix, why);
            if (fix == R->c->fixes) break;
            char *f = au_fix(R, id, ndir, next, why, 100 + k, fix + 1, err, sizeof err);
            free(next);
            next = f;
            if (R->halted[0]) return free(code), free(next), RUN_FATAL;
        }
        if (!next) run_say(R, "  align %d/%d: author gave no reward (%s); keeping the previous one", k, rounds, err);
        else if (!accepted && !same)
            run_say(R, "  align %d/%d: no valid aligned reward; keeping the previous one", k, rounds);
        if (accepted) {
            free(code);
            code = next;
        } else
            free(next);
        run_path(sp, sizeof sp, ndir, "align_%d.json", k);
        run_write_json(sp, check_json(1, "", &st)); /* before the .c: the .c marks the round done */
        run_write_text(path, code);
    }
    int rc = run_write_text(final_path, code);
    free(code);
    return rc;
}

static const char *variant_name(int v)
{
    return v == VARIANT_TREASURE ? "treasure" : "dungeon";
}

/* Step 3: train a policy on reward.c in a subprocess. */
static int step_train(run_state *R, int id, const char *ndir, char *reason, int len)
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
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)(R->c->seed + (uint64_t)id));
    snprintf(threads, sizeof threads, "%d", R->c->threads);
    char *argv[32];
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
static int step_generate_levels(run_state *R, const char *ndir, char *reason, int len)
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
    char *argv[16];
    int k = 0;
    argv[k++] = "pcgrllm";
    argv[k++] = "generate";
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

/* Step 5: fitness (heuristic evaluator, or the model's judgement). */
static int step_fitness(run_state *R, int id, const char *ndir, level_set *ls, double *fitness, char *reason,
                        int len)
{
    char dir[2048], path[2048], err[1024];
    run_path(dir, sizeof dir, ndir, "levels");
    if (run_load_levels(dir, R->c->n_levels, ls, err, sizeof err)) {
        snprintf(reason, (size_t)len, "generated levels: %s", err);
        return -1;
    }
    eval_levels(&R->esc, ls->levels, ls->n, ls->per, &ls->sum);
    run_path(path, sizeof path, ndir, "eval.json");
    if (!path_present(path) && run_write_json(path, eval_json(R, ls))) {
        snprintf(reason, (size_t)len, "%s", write_error());
        return -1;
    }
    run_path(path, sizeof path, ndir, "levels.png");
    if (!path_present(path)) levels_render_grid_png(ls->levels, ls->n, 6, NULL, path, 12);
    *fitness = ls->sum.fitness;
    if (R->c->fitness_mode == FIT_LLM) {
        double f;
        if (au_fitness(R, id, ndir, ls, &f, err, sizeof err)) {
            snprintf(reason, (size_t)len, "fitness judgement: %s", err);
            return R->halted[0] ? RUN_FATAL : -1;
        }
        run_say(R, "  fitness (model's judgement) %.3f; heuristic %.3f", f, ls->sum.fitness);
        *fitness = f;
    }
    return 0;
}

/* Step 6: feedback on the levels (specific), or the fixed texts. */
static char *step_feedback(run_state *R, int id, const char *ndir, const level_set *ls, char *reason, int len)
{
    char path[2048], err[1024];
    run_path(path, sizeof path, ndir, "feedback.txt");
    char *fb = run_read_text(path);
    if (fb) return fb;
    if (R->c->feedback == FB_SPECIFIC) {
        char code_path[2048];
        run_path(code_path, sizeof code_path, ndir, "reward.c");
        char *code = run_read_text(code_path);
        if (!code) return snprintf(reason, (size_t)len, "cannot read %.1000s", code_path), NULL;
        fb = au_feedback(R, id, ndir, code, ls, err, sizeof err);
        free(code);
    } else {
        fb = prompt_load(R->c->feedback == FB_GENERIC ? "feedback_generic" : "feedback_none", err, sizeof err);
    }
    if (!fb) {
        snprintf(reason, (size_t)len, "feedback: %s", err);
        return NULL;
    }
    if (run_write_text(path, fb)) {
        snprintf(reason, (size_t)len, "%s", write_error());
        free(fb);
        return NULL;
    }
    return fb;
}

/* ---------------------------------------------------------------- node files */

/* A node's steps in order, as far as its files go: a redo starts at one
 * step and takes every later one with it, and always the outcome. */
enum { STEP_AUTHOR, STEP_TRAIN, STEP_LEVELS, STEP_FITNESS, STEP_FEEDBACK, STEP_OUTCOME };
static const char *const step_names[] = {"reward", "training", "levels", "fitness", "feedback"};
enum { KIND_TEXT, KIND_CHECKPOINT, KIND_LEVEL, KIND_EVAL };

/* A file of a node that --resume relies on.  Its FNV-1a 64 goes into
 * graph.json when the node finishes, and is checked before a resumed run
 * builds on the node. */
typedef struct {
    char name[GRAPH_FILE_NAME_MAX]; /* relative to the node directory */
    int step, kind;
    const char *marker;             /* a "done" file that says it must exist, or NULL */
    int needed_ok;                  /* a node that finished ok must have it */
} node_file;
#define NODE_FILES_MAX (RUN_MAX_LEVELS + 4)

static int node_files(const run_state *R, node_file *f)
{
    int n = 0, feedback = R->c->ablation == ABL_FB || R->c->ablation == ABL_FULL;
    int levels = R->c->n_levels < RUN_MAX_LEVELS ? R->c->n_levels : RUN_MAX_LEVELS;
    f[n++] = (node_file){"reward.c", STEP_AUTHOR, KIND_TEXT, NULL, 1};
    f[n++] = (node_file){"train/" CHECKPOINT_FILE, STEP_TRAIN, KIND_CHECKPOINT, "train.done", 1};
    for (int i = 0; i < levels; i++) {
        f[n] = (node_file){"", STEP_LEVELS, KIND_LEVEL, "levels.done", 1};
        snprintf(f[n++].name, GRAPH_FILE_NAME_MAX, "levels/level_%03d.txt", i);
    }
    f[n++] = (node_file){"eval.json", STEP_FITNESS, KIND_EVAL, NULL, 1};
    f[n++] = (node_file){"feedback.txt", STEP_FEEDBACK, KIND_TEXT, NULL, feedback};
    return n;
}

/* DIR/nodes/NNN/name */
static void node_path(char *out, size_t len, const run_state *R, int id, const char *name)
{
    snprintf(out, len, "%s/nodes/%03d/%.*s", R->c->out, id, GRAPH_FILE_NAME_MAX - 1, name);
}

/* Does the file read as what it should be?  0, or -1 with one line. */
static int file_parses(const char *path, int kind, char *err, int errlen)
{
    unsigned char tiles[PCG_MAX_CELLS];
    level_t l;
    checkpoint_state cs;
    long len;
    if (kind == KIND_LEVEL) return level_read(path, &l, tiles, err, errlen);
    if (kind == KIND_CHECKPOINT) {
        if (checkpoint_read(&cs, path, err, errlen)) return -1;
        checkpoint_state_free(&cs);
        return 0;
    }
    if (kind == KIND_EVAL) {
        json_t *j = read_json_file(path, 8L << 20, err, errlen);
        if (!j) return -1;
        json_t *f = json_object_get(j, "fitness");
        int ok = json_is_number(f) && json_number_value(f) >= 0 && json_number_value(f) <= 1;
        json_decref(j);
        return ok ? 0 : (snprintf(err, (size_t)errlen, "%s: no fitness in [0,1]", path), -1);
    }
    char *t = read_file(path, 8L << 20, &len, err, errlen);
    int ok = t && len > 0 && strlen(t) == (size_t)len;
    free(t);
    if (t && !ok) snprintf(err, (size_t)errlen, "%s: %s", path, len ? "holds binary data" : "is empty");
    return ok ? 0 : -1;
}

/* Missing, changed since the node finished (sum != NULL), or unreadable as
 * its kind: 0 when sound, else -1 with one line naming the file. */
static int file_damaged(const char *path, int kind, const graph_file *rec, char *err, int errlen)
{
    uint64_t sum;
    if (!path_present(path)) return snprintf(err, (size_t)errlen, "%s is missing", path), -1;
    if (file_fnv1a64(path, &sum, err, errlen)) return -1;
    if (rec && sum != rec->fnv1a)
        return snprintf(err, (size_t)errlen, "%s does not match the checksum recorded in graph.json", path), -1;
    return file_parses(path, kind, err, errlen);
}

/* The first step of node id whose files cannot be trusted, with the
 * reason; -1 when they are sound.  A file is checked when the node
 * recorded it, when the node finished ok and needs it, when its step's
 * "done" file says it was made, or simply when it is there. */
static int node_damage(const run_state *R, int id, char *why, int len)
{
    const thought_node *nd = &R->g.nodes[id];
    /* without checksums nothing shows the files are the node's own */
    if (nd->status != NODE_PENDING && nd->n_files < 0)
        return snprintf(why, (size_t)len, "graph.json records no checksums of its files (an older format, or they were "
                                          "removed)"),
               STEP_AUTHOR;
    node_file f[NODE_FILES_MAX];
    int n = node_files(R, f);
    for (int i = 0; i < n; i++) {
        char path[1200], marker[1200];
        node_path(path, sizeof path, R, id, f[i].name);
        node_path(marker, sizeof marker, R, id, f[i].marker ? f[i].marker : "");
        const graph_file *rec = graph_find_file(nd, f[i].name);
        /* a node records every file it finished with: one it needs but
         * did not record is as unproven as a node without the record */
        if (!rec && nd->status == NODE_OK && f[i].needed_ok)
            return snprintf(why, (size_t)len, "graph.json records no checksum of %.200s", f[i].name), f[i].step;
        int needed = rec || (f[i].marker && path_present(marker));
        if (!needed && !path_present(path)) continue;
        if (file_damaged(path, f[i].kind, rec, why, len)) return f[i].step;
    }
    return -1;
}

/* Checksums of the node's files as they are now that it has finished. */
static void record_files(run_state *R, int id)
{
    node_file f[NODE_FILES_MAX];
    graph_file rec[NODE_FILES_MAX];
    int n = node_files(R, f), k = 0;
    for (int i = 0; i < n; i++) {
        char path[1200], err[1400];
        node_path(path, sizeof path, R, id, f[i].name);
        if (!path_present(path) || file_fnv1a64(path, &rec[k].fnv1a, err, sizeof err)) continue;
        snprintf(rec[k++].name, GRAPH_FILE_NAME_MAX, "%.*s", GRAPH_FILE_NAME_MAX - 1, f[i].name);
    }
    graph_set_files(&R->g, id, rec, k); /* out of memory: left unrecorded, checked for readability only */
}

/* What each step leaves in the node directory.  Stored model replies about
 * the levels go with the levels; the author's stored exchanges stay, so a
 * redone reward is the same reward. */
static const struct {
    int step;
    const char *name;
} step_outputs[] = {
    {STEP_AUTHOR, "reward.c"},           {STEP_TRAIN, "train.done"},
    {STEP_TRAIN, "train"},               {STEP_LEVELS, "levels.done"},
    {STEP_LEVELS, "levels"},             {STEP_LEVELS, "llm/fitness.request.json"},
    {STEP_LEVELS, "llm/fitness.reply.txt"}, {STEP_LEVELS, "llm/fitness.outcome.json"},
    {STEP_LEVELS, "llm/feedback.request.json"}, {STEP_LEVELS, "llm/feedback.reply.txt"},
    {STEP_LEVELS, "llm/feedback.outcome.json"}, {STEP_FITNESS, "eval.json"},
    {STEP_FITNESS, "levels.png"},        {STEP_FEEDBACK, "feedback.txt"},
    {STEP_OUTCOME, "failed.txt"},
};

/* Move the outputs of steps >= step into ndir/damaged-K, kept for
 * inspection, not deleted.  0, or -1 with one line. */
static int set_aside(const char *ndir, int step, char *why, int len)
{
    char aside[1400], from[1600], to[1700];
    int k = 1;
    do snprintf(aside, sizeof aside, "%s/damaged-%d", ndir, k++);
    while (path_present(aside) && k < 10000);
    int made = 0;
    for (size_t i = 0; i < sizeof step_outputs / sizeof step_outputs[0]; i++) {
        const char *name = step_outputs[i].name;
        if (step_outputs[i].step < step) continue;
        snprintf(from, sizeof from, "%s/%s", ndir, name);
        if (!path_present(from)) continue;
        if (!made && path_mkdir(aside, why, len) != 0) return -1;
        made = 1;
        int n = snprintf(to, sizeof to, "%s/", aside);
        for (const char *c = name; *c && n < (int)sizeof to - 1; c++) to[n++] = *c == '/' ? '_' : *c;
        to[n] = 0;
        if (path_rename(from, to, why, len) != 0) return -1;
    }
    return 0;
}

/* One line on stderr (it matters even with --quiet) and in run.log. */
static void run_warn(run_state *R, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void run_warn(run_state *R, const char *fmt, ...)
{
    char line[3000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    die_msg("%s", line);
    if (R->log) {
        fprintf(R->log, "[%8.1fs] %s\n", now_seconds() - R->t_start, line);
        fflush(R->log);
    }
}

/* If node id has damaged files, set its outputs from the first damaged
 * step on aside, so that run_node redoes those steps, and say so.  0
 * nothing damaged, 1 set aside, -1 error (printed). */
static int redo_damaged(run_state *R, int id)
{
    char ndir[1200], why[2600], err[2000];
    snprintf(ndir, sizeof ndir, "%s/nodes/%03d", R->c->out, id);
    int step = node_damage(R, id, why, sizeof why);
    if (step < 0) return 0;
    run_warn(R, "run: node %d: %s; redoing it from its %s step", id, why, step_names[step]);
    if (set_aside(ndir, step, err, sizeof err)) {
        die_msg("run: node %d: %s", id, err);
        return -1;
    }
    return 1;
}

/* --resume: the finished nodes' files must be what they were when the
 * nodes finished.  The last node may be redone from its first damaged step
 * (nothing was chosen after it); an earlier one cannot, since later
 * parents, references and feedback were chosen knowing its outcome, so the
 * resume is refused.  0, or -1 (printed). */
static int check_finished_nodes(run_state *R, const char *graph_path)
{
    for (int id = 0; id < R->g.n; id++) {
        thought_node *nd = &R->g.nodes[id];
        if (nd->status == NODE_PENDING) continue; /* run_node checks what it had reached */
        char why[2600];
        if (id < R->g.n - 1) {
            if (node_damage(R, id, why, sizeof why) < 0) continue;
            die_msg("run: --resume: node %d: %s; later nodes were built on it, so it cannot be redone "
                    "(restore what was changed, or start a new run)",
                    id, why);
            return -1;
        }
        int rc = redo_damaged(R, id);
        if (rc < 0) return -1;
        if (rc == 0) continue;
        graph_reopen(&R->g, id); /* the loop continues it like an interrupted node */
        if (graph_save(&R->g, graph_path)) return die_msg("run: %s", write_error()), -1;
    }
    return 0;
}

/* Seconds spent in each step of a node, added up over the processes that
 * worked on it (a resumed node adds to what its first attempt measured),
 * in ndir/times.json for the grid's rows.  Returns the time now, where the
 * next step's clock starts. */
static double add_step_time(const char *ndir, const char *key, double since)
{
    double now = now_seconds();
    char path[1400], err[1500];
    snprintf(path, sizeof path, "%s/times.json", ndir);
    json_t *o = path_present(path) ? read_json_file(path, 1L << 16, err, sizeof err) : NULL;
    if (!json_is_object(o)) {
        json_decref(o);
        o = json_object();
    }
    double before = json_number_value(json_object_get(o, key));
    json_object_set_new(o, key, json_real(before + (now - since)));
    run_write_json(path, o); /* a lost update costs a timing, not the run */
    return now;
}

/* One thought node, from whatever step it had reached.  0, or RUN_FATAL
 * (reason printed; the node stays pending for a --resume). */
static int run_node(run_state *R, int id)
{
    thought_node *nd = &R->g.nodes[id];
    char ndir[1200], reason[2048];
    snprintf(ndir, sizeof ndir, "%s/nodes/%03d", R->c->out, id);
    if (make_dirs_msg(ndir, reason, sizeof reason)) {
        die_msg("run: node %d: %s", id, reason);
        return RUN_FATAL;
    }
    if (redo_damaged(R, id) < 0) return RUN_FATAL;
    double t0 = now_seconds();
    llm_usage u0 = R->usage;
    /* the node's model calls share one wall-time budget; training and level
     * generation run as subprocesses with limits of their own */
    R->c->llm.deadline = R->c->node_time > 0 ? t0 + R->c->node_time : 0;
    run_say(R, "node %d: iteration %d of %d, %s", id, nd->iteration, run_node_count(R->c),
            run_init_node(R, id) ? "the given initial reward, trained as it is"
            : nd->parent < 0     ? "from the empty template"
                                 : "refining a parent");
    if (nd->parent >= 0) run_say(R, "  parent node %d (fitness %.3f)", nd->parent, R->g.nodes[nd->parent].fitness);
    level_set *ls = calloc(1, sizeof *ls);
    double fitness = 0;
    int rc = ls ? 0 : (snprintf(reason, sizeof reason, "out of memory"), -1);
    double ts = now_seconds();
#define TIMED(key, call) if (!rc) rc = (call), ts = add_step_time(ndir, key, ts)
    TIMED("reward_s", step_generate(R, id, ndir, reason, sizeof reason));
    TIMED("align_s", step_align(R, id, ndir, reason, sizeof reason));
    TIMED("train_s", step_train(R, id, ndir, reason, sizeof reason));
    TIMED("levels_s", step_generate_levels(R, ndir, reason, sizeof reason));
    TIMED("fitness_s", step_fitness(R, id, ndir, ls, &fitness, reason, sizeof reason));
    int ok = rc == 0;
    char *fb = NULL;
    if (ok && (R->c->ablation == ABL_FB || R->c->ablation == ABL_FULL)) {
        fb = step_feedback(R, id, ndir, ls, reason, sizeof reason);
        ts = add_step_time(ndir, "feedback_s", ts);
        if (!fb) ok = 0;
    }
#undef TIMED
    if (R->halted[0]) rc = RUN_FATAL, snprintf(reason, sizeof reason, "%s", R->halted);
    if (rc == RUN_FATAL) {
        /* the node stays pending: a --resume continues it */
        run_say(R, "  stopping: %s", reason);
        die_msg("run: node %d: %s", id, reason);
        free(fb);
        free(ls);
        return RUN_FATAL;
    }
    char path[1400];
    if (ok) {
        snprintf(nd->reward_path, sizeof nd->reward_path, "nodes/%03d/reward.c", id);
        graph_finish(&R->g, id, NODE_OK, fitness);
        graph_set_feedback(&R->g, id, fb);
        record_files(R, id);
        run_say(R, "  fitness %.4f (playable %d/%d, diversity %.1f)", fitness, ls->sum.n_playable, ls->n,
                ls->sum.diversity);
        if (fb) {
            int n = (int)strcspn(fb, "\n"); /* its first line; feedback.txt holds the rest */
            run_say(R, "  feedback: %.*s%s", n < 300 ? n : 300, fb, fb[n] && fb[n + 1] ? " ..." : "");
        }
    } else {
        nd->reward_path[0] = 0;
        graph_finish(&R->g, id, NODE_FAILED, 0);
        snprintf(path, sizeof path, "%s/failed.txt", ndir);
        char line[2100];
        snprintf(line, sizeof line, "%s\n", reason);
        run_write_text(path, line);
        record_files(R, id);
        run_say(R, "  node %d failed: %s", id, reason);
    }
    free(fb);
    free(ls);
    R->c->llm.deadline = 0;
    nd->tokens_prompt += R->usage.prompt_tokens - u0.prompt_tokens;
    nd->tokens_completion += R->usage.completion_tokens - u0.completion_tokens;
    nd->wall_s += now_seconds() - t0;
    return 0;
}

/* ---------------------------------------------------------------- usage */

static void save_usage(run_state *R)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/usage.json", R->c->out);
    json_t *o = json_object();
    json_object_set_new(o, "prompt_tokens", json_integer(R->usage.prompt_tokens));
    json_object_set_new(o, "completion_tokens", json_integer(R->usage.completion_tokens));
    json_object_set_new(o, "total_tokens", json_integer(R->usage.total_tokens));
    json_object_set_new(o, "requests", json_integer(R->usage.requests));
    json_object_set_new(o, "replies", json_integer(R->usage.replies));
    json_object_set_new(o, "failures", json_integer(R->usage.failures));
    json_object_set_new(o, "cut", json_integer(R->usage.cut));
    json_object_set_new(o, "seconds", json_real(R->usage.seconds));
    const run_tally *t = &R->tally;
    json_object_set_new(o, "tally",
                        json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:f}", "calls", t->calls,
                                  "replies", t->replies, "cut_loop", t->cut_loop, "cut_time", t->cut_time,
                                  "cut_length", t->cut_length, "early_stops", t->early_stops, "rewards_held",
                                  t->rewards_held, "compiled", t->compiled, "validated", t->validated, "trained",
                                  t->trained, "call_seconds", t->call_seconds));
    run_write_json(path, o);
}

static void load_usage(run_state *R)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/usage.json", R->c->out);
    char err[1400];
    json_t *o = read_json_file(path, 1L << 20, err, sizeof err); /* counts only: a bad file starts them again */
    if (!o) return;
    R->usage.prompt_tokens = (long)json_integer_value(json_object_get(o, "prompt_tokens"));
    R->usage.completion_tokens = (long)json_integer_value(json_object_get(o, "completion_tokens"));
    R->usage.total_tokens = (long)json_integer_value(json_object_get(o, "total_tokens"));
    R->usage.requests = (long)json_integer_value(json_object_get(o, "requests"));
    R->usage.replies = (long)json_integer_value(json_object_get(o, "replies"));
    R->usage.failures = (long)json_integer_value(json_object_get(o, "failures"));
    R->usage.cut = (long)json_integer_value(json_object_get(o, "cut"));
    R->usage.seconds = json_number_value(json_object_get(o, "seconds"));
    json_t *t = json_object_get(o, "tally");
    run_tally *y = &R->tally;
#define TALLY(f) y->f = (int)json_integer_value(json_object_get(t, #f))
    TALLY(calls), TALLY(replies), TALLY(cut_loop), TALLY(cut_time), TALLY(cut_length), TALLY(early_stops);
    TALLY(rewards_held), TALLY(compiled), TALLY(validated), TALLY(trained);
#undef TALLY
    y->call_seconds = json_number_value(json_object_get(t, "call_seconds"));
    json_decref(o);
}

/* ---------------------------------------------------------------- main */

/* ---------------------------------------------------------------- the model */

/* A search in which the model wrote no reward at all for this many nodes
 * in a row ends: more of the same prompts will not change that. */
#define RUN_HOPELESS_NODES 2

/* The server's context size, read or flagged, and what follows from it. */
static void say_context(run_state *R)
{
    char from[64];
    R->server.context = llm_probe_context(&R->c->llm, from, sizeof from);
    snprintf(R->server.context_from, sizeof R->server.context_from, "%s", from);
    if (R->server.context > 0)
        run_say(R, "model server context: %ld tokens (%s); prompts are fitted to it", R->server.context, from);
    else
        run_say(R, "model server context: not reported by the server; give --llm-context N to have prompts "
                   "fitted to it and too long ones refused before they are sent");
}

/* What the model's replies came to, and a clear end for a run without a reward. */
static void say_summary(run_state *R, int best)
{
    const run_tally *t = &R->tally;
    if (!R->c->offline && t->calls > 0) {
        run_say(R, "model: %d call%s in %.0f s (%.1f s each), %d with a reply; cut: %d loop%s, %d out of time, %d at "
                   "the token limit; %d stopped early once complete",
                t->calls, t->calls == 1 ? "" : "s", t->call_seconds, t->call_seconds / t->calls, t->replies,
                t->cut_loop, t->cut_loop == 1 ? "" : "s", t->cut_time, t->cut_length, t->early_stops);
        run_say(R, "rewards: %d held a reward function, %d compiled, %d passed validation, %d trained",
                t->rewards_held, t->compiled, t->validated, t->trained);
    }
    if (best < 0)
        run_warn(R, "run: no node produced a reward; why each failed: %s/nodes/*/failed.txt, what the model wrote: "
                    "%s/nodes/*/llm/*.reply.txt",
                 R->c->out, R->c->out);
}

static int setup_target(run_state *R)
{
    run_config *c = R->c;
    char path[1200], reason[1024];
    snprintf(path, sizeof path, "%s/target.json", c->out);
    if (c->scenario >= 1) {
        target_scenario(c->scenario, &R->target);
        R->esc = *eval_scenario(c->scenario);
    } else {
        int rc;
        char *stored = run_read_text(path);
        if (stored) {
            rc = target_from_json(stored, &R->target, reason, sizeof reason) == STORY_OK ? 0 : -1;
            free(stored);
        } else
            rc = au_target(R, c->out, &R->target, reason, sizeof reason);
        if (rc == 3) {
            fprintf(stderr, "pcgrllm: story refused: %s\n", reason);
            if (R->log) fprintf(R->log, "story refused: %s\n", reason);
            return 3;
        }
        if (rc) {
            die_msg("run: target extraction failed: %s", reason);
            return R->halted[0] ? RUN_EXIT_SERVER : 1;
        }
        target_to_scenario(&R->target, c->story, &R->esc);
    }
    target_describe(&R->target, R->flow, sizeof R->flow);
    if (c->evaluator_rules) {
        /* only on request: the paper's prompts do not state the scoring rules */
        char *t = prompt_load(R->esc.kind == EVAL_KEYDOOR ? "evaluator_rules_keydoor" : "evaluator_rules_encounter",
                              reason, sizeof reason);
        if (!t) return die_msg("run: %s", reason), 1;
        snprintf(R->evaluator_rules, sizeof R->evaluator_rules, "%s", t);
        free(t);
    }
    R->esc.flow = R->flow;
    char js[512];
    if (target_to_json(&R->target, js, sizeof js) > 0 && !path_present(path)) {
        size_t n = strlen(js);
        js[n] = '\n';
        js[n + 1] = 0;
        run_write_text(path, js);
    }
    return 0;
}

/* The run keeps its own copy of the --init-reward file, so that a resume
 * or an audit does not depend on the original.  0, or 1 (printed). */
static int copy_init_reward(const run_config *c)
{
    char path[1200], err[1400];
    long len;
    char *code = read_file(c->init_reward, 64L << 10, &len, err, sizeof err);
    if (!code) return die_msg("run: --init-reward: %s", err), 1;
    snprintf(path, sizeof path, "%s/init_reward.c", c->out);
    int rc = write_file_atomic_msg(path, code, (size_t)len, err, sizeof err);
    free(code);
    if (rc) die_msg("run: %s", err);
    return rc ? 1 : 0;
}

/* --resume: where the stored run's requests go.  A server named now
 * (--base-url) wins; a stored one other than the default is used only
 * when confirmed on a terminal (host/llm/trust.h).  1 to go on, 0 refused
 * (printed). */
static int resume_server(const run_config *given, run_config *stored, const char *config_path)
{
    if (given->base_url_given) {
        if (!trust_same_server(stored->llm.base_url, given->llm.base_url))
            printf("run: %s named the model server %s; requests go to %s as --base-url says\n", config_path,
                   stored->llm.base_url, given->llm.base_url);
        snprintf(stored->llm.base_url, sizeof stored->llm.base_url, "%s", given->llm.base_url);
        return 1;
    }
    if (trust_default_server(stored->llm.base_url)) return 1;
    char how[700];
    snprintf(how, sizeof how, "resume with --base-url %.600s", stored->llm.base_url);
    return trust_stored_server("run", config_path, stored->llm.base_url, stored->llm.model, how);
}

/* --resume with --llm or --model: they name the author the run must have
 * (a grid's cell is the grid's), so a stored one that differs is refused.
 * 1 to go on, 0 refused (printed). */
static int resume_author(const run_config *given, const run_config *stored, const char *config_path)
{
    const char *had = stored->offline ? "offline" : "openai", *named = given->offline ? "offline" : "openai";
    if (given->llm_given && given->offline != stored->offline)
        return die_msg("run: --resume: %s names the %s author; --llm %s differs (a run keeps its author: start a new "
                       "one, or move this one away)",
                       config_path, had, named),
               0;
    if (given->model_given && !stored->offline && strcmp(given->llm.model, stored->llm.model))
        return die_msg("run: --resume: %s names the model %s; --model %s differs (a run keeps its author: start a new "
                       "one, or move this one away)",
                       config_path, stored->llm.model, given->llm.model),
               0;
    return 1;
}

/* config.json: read back for --resume (the stored settings win, but for
 * the run directory, --quiet, the key's variable, which only the command
 * line gives, and the server: resume_server), or written for a new run.
 * 0, or 1 (printed). */
static int open_config(run_config *c)
{
    char path[1200], err[1024];
    snprintf(path, sizeof path, "%s/config.json", c->out);
    if (c->resume) {
        struct stat st;
        if (stat(c->out, &st) != 0 || !S_ISDIR(st.st_mode) || !path_present(path)) {
            die_msg("run: --resume: %s holds no run (no readable config.json)", c->out);
            return 1;
        }
        /* a run directory may come from someone else: nothing in it is
         * followed out of it (host/sys/dirguard.h) */
        if (dirguard_add(c->out, "run directory", 1, err, sizeof err)) {
            die_msg("run: --resume: %s", err);
            return 1;
        }
        json_t *j = read_json_file(path, 1L << 20, err, sizeof err);
        if (!j) {
            die_msg("run: --resume: %s", err);
            return 1;
        }
        run_config stored = *c;
        int rc = run_config_from_json(j, &stored, err, sizeof err);
        json_decref(j);
        if (rc) {
            die_msg("run: --resume: %s", err);
            return 1;
        }
        snprintf(stored.out, sizeof stored.out, "%s", c->out);
        if (!resume_author(c, &stored, path) || (!stored.offline && !resume_server(c, &stored, path))) return 1;
        stored.resume = 1;
        stored.quiet = c->quiet;
        *c = stored;
    } else {
        if (c->scenario >= 1) /* the prompts quote the paper's story */
            snprintf(c->story, sizeof c->story, "%s", story_scenario_text(c->scenario));
        if (make_dirs_msg(c->out, err, sizeof err) || dirguard_add(c->out, "run directory", 0, err, sizeof err)) {
            die_msg("run: %s", err);
            return 1;
        }
        if (path_present(path)) {
            die_msg("run: %s already holds a run; continue it with --resume or choose another --out", c->out);
            return 1;
        }
        if (run_write_json(path, run_config_to_json(c))) {
            die_msg("run: cannot write %s", path);
            return 1;
        }
        if (c->init_reward[0] && copy_init_reward(c)) return 1;
    }
    return 0;
}

/* The backend (probed in a child: this process forks and must not hold a
 * CUDA context) and, on the CPU, the projected wall time of the run's
 * training from a short warm-up; a run of many hours goes on only when
 * asked.  The line goes into line[] for run.log.  0, or 2 (refused). */
static int say_cost(run_config *c, char *line, int len)
{
    backend_probe_result pr;
    char err[700];
    if (backend_probe(c->backend, &pr, err, sizeof err)) {
        die_msg("run: %s", err);
        return 2;
    }
    if (pr.backend == BACKEND_CUDA) {
        snprintf(c->backend, sizeof c->backend, "cuda");
        snprintf(line, (size_t)len, "backend: cuda, GPU %d (%s); the training time shows after each node's first "
                 "update", pr.gpu, pr.info.name);
        if (!c->quiet) printf("%s\n", line);
        return 0;
    }
    snprintf(c->backend, sizeof c->backend, "cpu");
    ppo_config cfg;
    ppo_config_default(&cfg);
    cfg.n_envs = c->envs;
    snprintf(cfg.preset, sizeof cfg.preset, "%s", c->preset);
    /* a reward of about 10 us a call, as the human rewards take */
    double sps = train_estimate_sps(&cfg, 10.0);
    int nodes = run_node_count(c);
    double seconds = sps > 0 ? (double)nodes * (double)c->steps / sps : -1;
    char d[64];
    train_format_duration(seconds, d, sizeof d);
    snprintf(line, (size_t)len,
             "backend: cpu; projected: about %s of training for %d node%s of %lld steps (%s preset, %d envs, %.0f "
             "steps/s in a short warm-up; model calls not counted)",
             d, nodes, nodes == 1 ? "" : "s", (long long)c->steps, c->preset, c->envs, sps);
    if (!c->quiet) printf("%s\n", line);
    if (seconds <= TRAIN_ASK_ABOVE_S || c->yes) return 0;
    return train_confirm_long_job("run", seconds,
                                  "--quick shows the method working in minutes; fewer --steps, a smaller --preset, "
                                  "--envs or --iterations shorten it, and a GPU (--backend cuda) is far faster")
               ? 0
               : 2;
}

/* DIR/halted.txt: why the run stopped for its model server (the grid shows
 * it), or removed when the run goes on. */
static void note_halt(const run_config *c, const char *why)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/halted.txt", c->out);
    if (!why) {
        path_unlink(path);
        return;
    }
    char line[1600];
    snprintf(line, sizeof line, "%s\n", why);
    run_write_text(path, line);
}

/* Before anything is spent: the model server answers (host/llm/llm.h), and a
 * new run's --out holds no run yet.  0, or an exit code (printed). */
static int preflight(run_state *R)
{
    run_config *c = R->c;
    char path[1200], err[1400];
    snprintf(path, sizeof path, "%s/config.json", c->out);
    if (!c->resume && path_present(path))
        return die_msg("run: %s already holds a run; continue it with --resume or choose another --out", c->out), 1;
    if (c->offline || !llm_check_server(&c->llm, err, sizeof err)) return 0;
    die_msg("run: %s", err);
    if (c->resume) note_halt(c, err);
    return RUN_EXIT_SERVER;
}

int run_main(run_config *c, int *looped)
{
    if (looped) *looped = 0;
    run_state R0, *R = &R0;
    memset(R, 0, sizeof R0);
    R->c = c;
    /* this process is the only one that holds the key */
    worker_env_deny(c->llm.api_key_env);
    worker_env_deny(LLM_DEFAULT_KEY_ENV);
    R->t_start = now_seconds();
    char path[1200], err[1024];
    if (prompts_check(err, sizeof err)) {
        die_msg("run: %s", err);
        return 1;
    }
    c->llm.usage = &R->usage;
    c->llm.server = &R->server;
    c->llm.progress = !c->quiet;
    char cost[512] = "";
    int rc = 0;
    if (!c->resume && ((rc = preflight(R)) || (rc = say_cost(c, cost, sizeof cost)))) return rc;
    if (open_config(c)) return 1;
    if (c->resume && ((rc = preflight(R)) || (rc = say_cost(c, cost, sizeof cost)))) return rc;
    snprintf(path, sizeof path, "%s/run.log", c->out);
    if (!(R->log = open_append(path, err, sizeof err))) {
        die_msg("run: %s", err);
        return 1;
    }
    rc = setup_target(R);
    if (rc) {
        if (R->log) fclose(R->log);
        return rc;
    }
    int iterations = run_node_count(c);
    if (R->log && cost[0]) fprintf(R->log, "[%8.1fs] %s\n", now_seconds() - R->t_start, cost);
    run_say(R, "%s run %s: %s", c->resume ? "resuming" : "starting", c->out, R->flow);
    if (!c->offline) say_context(R);
    int aligned = c->ablation == ABL_SA || c->ablation == ABL_FULL ? c->align : 0;
    if (c->offline)
        run_say(R, "author: rule-based offline author (baseline, not a language model)");
    else
        run_say(R, "author: model %s at %s", c->llm.model, c->llm.base_url);
    run_say(R, "search %s, %d iteration%s, align %d, breadth %d, ablation %s, feedback %s", graph_pe_name(c->pe),
            iterations, iterations == 1 ? "" : "s", aligned, c->breadth, run_ablation_name(c->ablation),
            run_feedback_name(c->feedback));
    if (c->profile[0]) run_say(R, "profile --%s: %s (flags given with it override them)", c->profile, run_profile_flags(c->profile));
    snprintf(path, sizeof path, "%s/graph.json", c->out);
    if (c->resume && path_present(path)) {
        if (graph_load(path, &R->g, err, sizeof err)) {
            die_msg("run: --resume: %s", err);
            fclose(R->log);
            return 1;
        }
        if (check_finished_nodes(R, path)) {
            fclose(R->log);
            graph_free(&R->g);
            return 1;
        }
        load_usage(R);
    } else if (graph_init(&R->g, c->pe, c->pe == PE_COT ? 1 : c->breadth)) {
        die_msg("run: invalid search settings");
        fclose(R->log);
        return 1;
    }
    int hopeless = 0; /* nodes in a row in which the model wrote no reward at all */
    char stopped[1200];
    snprintf(stopped, sizeof stopped, "%s/stopped.txt", c->out);
    path_unlink(stopped); /* a resumed search goes on */
    note_halt(c, NULL);
    for (;;) {
        int best = graph_best(&R->g);
        if (!c->offline && hopeless >= RUN_HOPELESS_NODES) {
            run_warn(R, "run: stopping: the model wrote no reward function in %d nodes in a row (%d calls); its "
                        "replies are in %s/nodes/*/llm/",
                     hopeless, R->tally.calls, c->out);
            /* the search is over, for `grid` too; --resume goes on with it */
            snprintf(path, sizeof path, "%s/stopped.txt", c->out);
            run_write_text(path, "the model wrote no reward function in two nodes in a row\n");
            snprintf(path, sizeof path, "%s/graph.json", c->out);
            break;
        }
        if (c->target_fitness >= 0 && best >= 0 && R->g.nodes[best].fitness >= c->target_fitness) {
            run_say(R, "target fitness %.3f reached by node %d: stopping", c->target_fitness, best);
            break;
        }
        int id;
        if (R->g.n > 0 && R->g.nodes[R->g.n - 1].status == NODE_PENDING) {
            id = R->g.n - 1; /* interrupted: continue it */
        } else {
            if (R->g.n >= iterations) break;
            int parent = graph_select_parent(&R->g);
            /* references are chosen before the node exists: "the previous
             * iteration" is the latest node so far */
            int refs[GRAPH_MAX_REFS], kinds[GRAPH_MAX_REFS], nr = 0;
            if (c->pe == PE_GOT && parent >= 0)
                nr = graph_references(&R->g, parent, c->got_best, c->got_worst, refs, kinds);
            id = graph_add(&R->g, R->g.n + 1, parent);
            if (id < 0) {
                die_msg("run: thought graph full");
                break;
            }
            thought_node *nd = &R->g.nodes[id];
            nd->n_refs = nr;
            for (int k = 0; k < nr; k++) {
                nd->refs[k] = refs[k];
                nd->ref_kind[k] = kinds[k];
                nd->ref_fitness[k] = R->g.nodes[refs[k]].fitness;
            }
            graph_save(&R->g, path); /* the parent choice survives a kill */
        }
        int held = R->tally.rewards_held;
        if (run_node(R, id) == RUN_FATAL) {
            if (R->halted[0]) note_halt(c, R->halted);
            save_usage(R);
            fclose(R->log);
            graph_free(&R->g);
            return R->halted[0] ? RUN_EXIT_SERVER : 1;
        }
        hopeless = R->g.nodes[id].status == NODE_FAILED && R->tally.rewards_held == held ? hopeless + 1 : 0;
        save_usage(R);
        if (graph_save(&R->g, path)) {
            die_msg("run: cannot write %s", path);
            fclose(R->log);
            graph_free(&R->g);
            return 1;
        }
    }
    save_usage(R);
    int best = graph_best(&R->g);
    graph_free(&R->g);
    say_summary(R, best);
    fclose(R->log);
    R->log = NULL;
    if (looped) *looped = 1;
    /* a run that produced no reward has nothing to show: not a success */
    return best < 0 ? 1 : 0;
}
