/* The training job behind `pcgrllm train` (train_job.h): everything between
 * the flags and the confined worker, in the order a refusal must come --
 * the directory, the settings, the backend (a missing GPU is reported
 * before anything else runs), the sandbox, the cost, then the files. */
#include "train_job.h"
#include "backend.h"
#include "checkpoint.h"
#include "cpus.h"
#include "dirguard.h"
#include "reward_jit.h"
#include "train_estimate.h"
#include "train_worker.h"
#include "util.h"
#include "version.h"
#include <jansson.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void train_job_defaults(train_job *j)
{
    memset(j, 0, sizeof *j);
    ppo_config_default(&j->cfg);
    j->backend = "auto";
    j->save_every = -1;
    j->watchdog = 600;
}

static volatile int g_stop;

static void on_sigint(int sig)
{
    (void)sig;
    if (g_stop) _exit(130); /* a second Ctrl-C: stop now, the checkpoint on disk stays */
    g_stop = 1;
}

/* The threads this training uses and why: --threads, or the CPUs this
 * process may use that were idle at start-up (host/sys/cpus.h). */
static int train_threads(const train_job *j, char *why, size_t len)
{
    if (j->threads > 0) {
        snprintf(why, len, "--threads %d", j->threads);
        return j->threads;
    }
    cpu_budget cb = cpus_current();
    cpus_describe(&cb, why, (int)len);
    return omp_get_max_threads();
}

/* A float setting as the flags spell it (1e-4, not 9.99999975e-05). */
static json_t *real_as_given(float v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.7g", (double)v);
    return json_real(strtod(buf, NULL));
}

/* DIR/train.json: the settings (kept from the first session on a resume)
 * and this session's threads, version and commit. */
static int write_train_json(const train_job *j)
{
    char path[4096], err[4300], why[160];
    const ppo_config *c = &j->cfg;
    snprintf(path, sizeof path, "%s/train.json", j->out);
    json_t *o = j->resume && path_present(path) ? read_json_file(path, 1L << 20, err, sizeof err) : NULL;
    if (!json_is_object(o)) {
        json_decref(o);
        o = json_pack("{s:i, s:s, s:s, s:i, s:I, s:I, s:i, s:i, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s}",
                      "scenario", j->scenario, "variant", c->variant == VARIANT_TREASURE ? "treasure" : "dungeon",
                      "preset", c->preset, "envs", c->n_envs, "seed", (json_int_t)c->seed, "steps",
                      (json_int_t)j->steps, "rollout", c->n_steps, "epochs", c->n_epochs, "minibatches",
                      c->n_minibatches, "lr", real_as_given(c->lr), "gamma", real_as_given(c->gamma), "gae_lambda",
                      real_as_given(c->gae_lambda), "clip", real_as_given(c->clip_eps), "ent_coef",
                      real_as_given(c->ent_coef), "vf_coef", real_as_given(c->vf_coef), "max_grad_norm",
                      real_as_given(c->max_grad_norm), "adam_eps", real_as_given(c->adam_eps), "reward", "reward.c");
        if (!o) return set_write_error("out of memory"), -1;
    }
    json_object_set_new(o, "steps", json_integer((json_int_t)j->steps));
    for (int k = 0; k < PPO_N_DETAILS; k++) /* a resume's are the checkpoint's */
        json_object_set_new(o, ppo_details[k].key, json_string(ppo_details[k].names[ppo_detail_get(c, k)]));
    json_object_set_new(o, "backend", json_string(j->use_cuda ? "cuda" : "cpu"));
    json_object_set_new(o, "matmul", json_string(j->use_cuda ? backend_math_name(j->math) : "fp32"));
    int threads = train_threads(j, why, sizeof why);
    json_object_set_new(o, "threads", json_integer(threads));
    json_object_set_new(o, "threads_reason", json_string(why));
    json_object_set_new(o, "pcgrllm_version", json_string(pcg_version()));
    json_object_set_new(o, "pcgrllm_commit", pcg_commit()[0] ? json_string(pcg_commit()) : json_null());
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(7));
    json_decref(o);
    int rc = text ? write_file_atomic(path, text, strlen(text)) : (set_write_error("out of memory"), -1);
    free(text);
    return rc;
}

/* The projected wall time of the CPU job, said up front (from a short
 * warm-up); a job of many hours goes on only when asked.  0 to go on. */
static int project_cpu_cost(const train_job *j, int64_t start_step, double reward_us)
{
    double sps = train_estimate_sps(&j->cfg, reward_us);
    if (sps <= 0) return 0;
    double seconds = (double)(j->steps - start_step) / sps;
    char d[64];
    train_format_duration(seconds, d, sizeof d);
    if (!j->quiet)
        printf("projected: about %s for %lld steps on the CPU (%.0f steps/s in a short warm-up)\n", d,
               (long long)(j->steps - start_step), sps);
    if (seconds <= TRAIN_ASK_ABOVE_S || j->yes) return 0;
    return train_confirm_long_job("train", seconds,
                                  "fewer --steps, --preset small or --envs 64 shorten it, and a GPU (--backend "
                                  "cuda) is far faster")
               ? 0
               : -1;
}

/* A resume: the checkpoint's settings and step, and the reward the run
 * was trained with (a --reward given with it must be the same).  -1 to go
 * on with *src, else the exit status. */
static int load_resume(train_job *j, char **src, int64_t *start_step)
{
    char err[1024], path[4096];
    ppo_config stored;
    nn_t nn;
    int64_t step;
    long len;
    snprintf(path, sizeof path, "%s/%s", j->out, CHECKPOINT_FILE);
    if (checkpoint_load_policy(path, &stored, &nn, &step, err, sizeof err))
        return die_msg("train: cannot resume: %s", err), 1;
    nn_free(&nn);
    j->cfg = stored; /* the checkpoint's settings win */
    snprintf(path, sizeof path, "%s/reward.c", j->out);
    *src = read_file(j->reward_path ? j->reward_path : path, REWARD_MAX_SOURCE, &len, err, sizeof err);
    if (!*src) return die_msg("train: %s", err), 1;
    if (j->reward_path) {
        char *kept = read_file(path, REWARD_MAX_SOURCE, &len, err, sizeof err);
        int same = kept && !strcmp(kept, *src);
        free(kept);
        if (!same) return die_msg("train: --reward differs from %s, the reward this run was trained with", path), 2;
    }
    if (!j->steps) j->steps = step; /* nothing more unless asked */
    *start_step = step;
    if (j->steps <= step) {
        printf("the checkpoint already has %lld steps (asked for %lld); nothing to do\n", (long long)step,
               (long long)j->steps);
        return 0;
    }
    return -1;
}

/* A new run: its settings checked and its reward read.  -1 to go on with
 * *src, else the exit status. */
static int load_new(const train_job *j, char **src)
{
    char err[1024];
    long len;
    if (!j->reward_path || !j->scenario || !j->steps)
        return die_msg("train: --reward, --scenario, --steps and --out are required (pcgrllm train --help)"), 2;
    const char *why = ppo_config_check(&j->cfg);
    if (why) return die_msg("train: %s", why), 2;
    *src = read_file(j->reward_path, REWARD_MAX_SOURCE, &len, err, sizeof err);
    if (!*src) return die_msg("train: %s", err), 1;
    return -1;
}

/* --backend resolved in a child process, and the device trainer only
 * where NVRTC can build its reward kernel.  0, or -1 after the message. */
static int resolve_backend(train_job *j, backend_probe_result *pr)
{
    char err[700];
    if (backend_probe(j->backend, pr, err, sizeof err)) return die_msg("train: %s", err), -1;
    j->use_cuda = pr->backend == BACKEND_CUDA;
    char nv_why[300];
    if (j->use_cuda && !reward_nvrtc_available(nv_why, sizeof nv_why)) {
        if (strcmp(j->backend, "auto"))
            return die_msg("train: --backend cuda needs NVRTC for the reward kernel: %s", nv_why), -1;
        /* auto means the best that works here */
        fprintf(stderr, "train: --backend auto: a GPU is there but %s; training on the CPU\n", nv_why);
        j->use_cuda = 0;
    }
    if (!j->use_cuda && j->math)
        fprintf(stderr, "train: no usable GPU, training on the CPU in fp32 (--matmul %s ignored)\n",
                backend_math_name(j->math));
    if (j->save_every < 0) j->save_every = j->use_cuda ? 30 : 0;
    return 0;
}

/* On a GPU: the reward kernel for this architecture, sized for these
 * levels.  0, or -1 after the message. */
static int compile_kernel(const train_job *j, const backend_probe_result *pr, const char *src, char **cubin,
                          size_t *cubin_len)
{
    char arch[16], err[1024];
    snprintf(arch, sizeof arch, "sm_%d%d", pr->info.major, pr->info.minor);
    int side = j->cfg.map_h > j->cfg.map_w ? j->cfg.map_h : j->cfg.map_w;
    int rc = reward_compile_nvrtc_ex(src, arch, side < 5 ? 5 : side, cubin, cubin_len, err, sizeof err);
    if (rc)
        return die_msg("train: %s %s", rc == -2 ? "NVRTC is needed for the CUDA trainer:" : "NVRTC refused the reward:",
                       err),
               -1;
    if (!j->quiet)
        printf("device: GPU %d, %s (%s), %s matmuls\n", pr->gpu, pr->info.name, arch, backend_math_name(j->math));
    return 0;
}

/* Everything before the worker starts: the backend, the sandbox, the
 * cost, the kernel, the directory and its files.  -1 to go on, else the
 * exit status. */
static int prepare(train_job *j, int64_t start_step, const char *src, backend_probe_result *pr, char **cubin,
                   size_t *cubin_len)
{
    char err[1024], path[4096];
    if (resolve_backend(j, pr)) return 1;
    /* the sandbox first: a refused reward never reaches training */
    reward_stats st;
    if (reward_validate(src, j->cfg.variant, 64, j->cfg.seed, 60.0, &st, err, sizeof err))
        return die_msg("train: reward refused: %s", err), 1;
    if (!j->use_cuda && project_cpu_cost(j, start_step, st.us_per_call)) return 1;
    if (j->use_cuda && compile_kernel(j, pr, src, cubin, cubin_len)) return 1;
    if (make_dirs(j->out) || dirguard_command_dir("train", j->out, "training directory", 0))
        return die_msg("train: cannot create directory %s", j->out), 1;
    snprintf(path, sizeof path, "%s/reward.c", j->out);
    if ((!j->resume && write_file_atomic(path, src, strlen(src))) || write_train_json(j))
        return die_msg("train: cannot write into %s: %s", j->out, write_error()), 1;
    return -1;
}

/* The confined worker, with Ctrl-C and SIGTERM passed on to it while it
 * runs. */
static int run_worker(const train_job *j, int gpu, const char *src, const char *cubin, size_t cubin_len)
{
    char err[1024];
    train_settings ts = {j->cfg, j->steps, j->resume, j->threads, j->use_cuda, j->math, gpu, j->quiet,
                         j->save_every, j->watchdog, j->report};
    if (!j->quiet && !j->use_cuda) {
        char why[160];
        int threads = train_threads(j, why, sizeof why);
        if (j->threads > 0) printf("cpu: %d thread%s, as --threads asks\n", threads, threads == 1 ? "" : "s");
        else printf("cpu: %s\n", why);
    }
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int rc = train_in_worker(&ts, src, cubin, cubin_len, j->out, &g_stop, err, sizeof err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (rc == 1) die_msg("train: training failed: %s", err);
    return rc;
}

int train_job_run(train_job *j)
{
    if (dirguard_command_dir("train", j->out, "training directory", j->resume)) return 1;
    char *src = NULL, *cubin = NULL;
    size_t cubin_len = 0;
    int64_t start_step = 0;
    int rc = j->resume ? load_resume(j, &src, &start_step) : load_new(j, &src);
    backend_probe_result pr;
    if (rc < 0) rc = prepare(j, start_step, src, &pr, &cubin, &cubin_len);
    if (rc < 0) rc = run_worker(j, pr.gpu, src, cubin, cubin_len);
    free(src);
    free(cubin);
    return rc;
}
