/* pcgrllm train: PPO with a reward written against the reward API, on the
 * CPU (host/learn/ppo.c) or on a GPU (the CUDA backend's device trainer, the
 * same settings, streams and checkpoint file).  This file parses the flags;
 * the reward is validated in the sandbox (reward_jit/sandbox.c) and the
 * training runs in a confined worker process (host/train/train_worker.c) whose
 * messages this process checks before it writes anything.  This process
 * never initialises CUDA itself: the device is probed in a child.  Ctrl-C
 * is passed on to the worker: it stops, and the last checkpoint stays. */
#include "backend.h"
#include "checkpoint.h"
#include "child.h"
#include "commands.h"
#include "cpus.h"
#include "ppo.h"
#include "reward_jit.h"
#include "train_estimate.h"
#include "train_worker.h"
#include "util.h"
#include "dirguard.h"
#include "version.h"
#include <errno.h>
#include <jansson.h>
#include <omp.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void train_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm train --reward FILE --scenario N --steps S --out DIR [options]\n"
            "       pcgrllm train --resume --out DIR [--steps S]\n"
            "  Trains a PPO level generator with the reward in FILE (C, the reward API of docs/reward-api.md)\n"
            "  and writes DIR/checkpoint.bin (after every update), DIR/metrics.jsonl (one line per update),\n"
            "  DIR/reward.c and DIR/train.json.  Ctrl-C stops and keeps the last checkpoint.\n"
            "  --reward FILE       reward source (validated in the sandbox first)\n"
            "  --scenario N        1-2: dungeon variant, 3-4: treasure variant\n"
            "  --variant V         dungeon or treasure (instead of --scenario)\n"
            "  --steps S           total environment steps (all environments together)\n"
            "  --out DIR           run directory\n"
            "  --resume            continue the run in DIR up to --steps (settings from the checkpoint;\n"
            "                      other settings given with it are ignored)\n"
            "  --backend B         auto (default: cuda when a GPU is usable, else cpu), cpu, or cuda (the\n"
            "                      device trainer; PCGRLLM_GPU=k picks GPU k).  A checkpoint resumes on\n"
            "                      either backend.\n"
            "  --matmul M          cuda: fp32 (default), tf32 or bf16 tensor-core matmuls\n"
            "  --save-every SEC    seconds between checkpoints (default: every update on cpu, 30 on cuda;\n"
            "                      the last update is always saved)\n"
            "  --watchdog SEC      end the training if it shows no progress for SEC seconds (default 600)\n"
            "  --yes               go on with a job projected at over 3 hours on the CPU without asking\n"
            "  --quiet             only the final line and errors\n"
            "  --envs E            parallel environments (default 600)\n"
            "  --preset P          network: paper (the paper's, default), small (16/16 filters) or tiny (3x3\n"
            "                      convolutions on a 5x5 window; for a few CPU cores, docs/training.md)\n"
            "  --seed K            seed of maps, actions, initialisation and shuffles (default 0)\n"
            "  --threads T         OpenMP threads, each running OpenBLAS single-threaded (default: all cores)\n"
            "  PPO settings (defaults are the paper's):\n"
            "  --lr X (1e-4)  --rollout N (128)  --epochs N (10)  --minibatches N (4)  --gamma X (0.99)\n"
            "  --gae-lambda X (0.95)  --clip X (0.2)  --ent-coef X (0.01)  --vf-coef X (0.5)\n"
            "  --max-grad-norm X (0.5)  --adam-eps X (1e-5)  --chunk N (256, samples per forward/backward)\n"
            "exit status: 0 done, 1 refused or failed, 2 usage error, 130 interrupted\n");
}

typedef struct {
    const char *out, *src;
    ppo_config cfg;
    int resume, threads, scenario, quiet;
    int64_t steps;
    const char *backend; /* as asked: cpu, cuda or auto */
    int use_cuda;        /* as resolved by the probe */
    int math;            /* PCG_MATH_* (CUDA only) */
    double save_every;   /* seconds between checkpoints; 0 = every update */
} train_job;

static const char *const math_names[] = {"fp32", "tf32", "bf16"};

static volatile int g_stop;

static void on_sigint(int sig)
{
    (void)sig;
    if (g_stop) _exit(130); /* a second Ctrl-C: stop now, the checkpoint on disk stays */
    g_stop = 1;
}

/* Resolves --backend in a child process, so that this process never
 * initialises CUDA (the training child is forked from it). */
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
    json_object_set_new(o, "backend", json_string(j->use_cuda ? "cuda" : "cpu"));
    json_object_set_new(o, "matmul", json_string(j->use_cuda ? math_names[j->math] : "fp32"));
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
static int project_cpu_cost(const train_job *j, int64_t start_step, double reward_us, int yes)
{
    double sps = train_estimate_sps(&j->cfg, reward_us);
    if (sps <= 0) return 0;
    double seconds = (double)(j->steps - start_step) / sps;
    char d[64];
    train_format_duration(seconds, d, sizeof d);
    if (!j->quiet)
        printf("projected: about %s for %lld steps on the CPU (%.0f steps/s in a short warm-up)\n", d,
               (long long)(j->steps - start_step), sps);
    if (seconds <= TRAIN_ASK_ABOVE_S || yes) return 0;
    return train_confirm_long_job("train", seconds,
                                  "fewer --steps, --preset small or --envs 64 shorten it, and a GPU (--backend "
                                  "cuda) is far faster")
               ? 0
               : -1;
}

int cmd_train(int argc, char **argv)
{
    enum {
        O_LR = 256, O_ROLLOUT, O_EPOCHS, O_MB, O_GAMMA, O_LAMBDA, O_CLIP, O_ENT, O_VF, O_GN, O_EPS, O_CHUNK, O_MATH,
        O_SAVE, O_WATCHDOG, O_YES, O_REPORT
    };
    static const struct option opts[] = {
        {"reward", required_argument, 0, 'r'},     {"scenario", required_argument, 0, 'S'},
        {"steps", required_argument, 0, 'n'},      {"envs", required_argument, 0, 'e'},
        {"preset", required_argument, 0, 'p'},     {"seed", required_argument, 0, 's'},
        {"threads", required_argument, 0, 't'},    {"out", required_argument, 0, 'o'},
        {"resume", no_argument, 0, 'R'},           {"help", no_argument, 0, 'h'},
        {"variant", required_argument, 0, 'v'},    {"backend", required_argument, 0, 'b'},
        {"quiet", no_argument, 0, 'q'},
        {"lr", required_argument, 0, O_LR},        {"rollout", required_argument, 0, O_ROLLOUT},
        {"epochs", required_argument, 0, O_EPOCHS}, {"minibatches", required_argument, 0, O_MB},
        {"gamma", required_argument, 0, O_GAMMA},  {"gae-lambda", required_argument, 0, O_LAMBDA},
        {"clip", required_argument, 0, O_CLIP},    {"ent-coef", required_argument, 0, O_ENT},
        {"vf-coef", required_argument, 0, O_VF},   {"max-grad-norm", required_argument, 0, O_GN},
        {"adam-eps", required_argument, 0, O_EPS}, {"chunk", required_argument, 0, O_CHUNK},
        {"matmul", required_argument, 0, O_MATH},  {"save-every", required_argument, 0, O_SAVE},
        {"watchdog", required_argument, 0, O_WATCHDOG}, {"yes", no_argument, 0, O_YES},
        {"report-fd", required_argument, 0, O_REPORT},
        {0, 0, 0, 0}};
    train_job j;
    memset(&j, 0, sizeof j);
    ppo_config_default(&j.cfg);
    j.backend = "auto";
    j.save_every = -1;
    double watchdog = 600;
    int yes = 0;          /* a job of many hours on the CPU goes on without asking */
    int report_fd = 0;    /* progress frames for run on an inherited pipe */
    int64_t start_step = 0;
    const char *reward_path = NULL;
    long v;
    double d;
    int c, settings = 0; /* flags that change the config (refused with --resume) */
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        if (c != 'n' && c != 'o' && c != 'R' && c != 'h' && c != 't' && c != 'r' && c != 'q' && c != 'b' &&
            c != O_MATH && c != O_SAVE && c != O_WATCHDOG && c != O_YES && c != O_REPORT)
            settings++;
        switch (c) {
        case 'r': reward_path = optarg; break;
        case 'S':
            if (parse_int(optarg, 1, 4, &v)) return die_msg("train: --scenario must be 1, 2, 3 or 4"), 2;
            j.scenario = (int)v;
            j.cfg.variant = v >= 3 ? VARIANT_TREASURE : VARIANT_DUNGEON;
            break;
        case 'v':
            if (parse_variant(optarg, &j.cfg.variant)) return die_msg("train: --variant must be dungeon or treasure"), 2;
            if (!j.scenario) j.scenario = j.cfg.variant == VARIANT_TREASURE ? 3 : 1;
            break;
        case 'b':
            if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda") && strcmp(optarg, "auto"))
                return die_msg("train: --backend must be cpu, cuda or auto"), 2;
            j.backend = optarg;
            break;
        case O_MATH:
            for (j.math = 0; j.math < 3 && strcmp(optarg, math_names[j.math]); j.math++) continue;
            if (j.math == 3) return die_msg("train: --matmul must be fp32, tf32 or bf16"), 2;
            break;
        case O_SAVE:
            if (parse_double(optarg, 0, 1e7, &j.save_every))
                return die_msg("train: --save-every must be a number of seconds (0: every update)"), 2;
            break;
        case O_WATCHDOG:
            if (parse_double(optarg, 1, 1e7, &watchdog))
                return die_msg("train: --watchdog must be a number of seconds (at least 1)"), 2;
            break;
        case 'q': j.quiet = 1; break;
        case O_YES: yes = 1; break;
        case O_REPORT: /* run's pipe: progress frames for it to show (not in --help: run's own plumbing) */
            if (parse_int(optarg, 3, 1 << 20, &v) || fcntl((int)v, F_GETFD) < 0)
                return die_msg("train: --report-fd wants an open descriptor"), 2;
            child_attach((int)v);
            report_fd = 1;
            break;
        case 'n':
            if (parse_int(optarg, 1, (long)4e12, &v)) return die_msg("train: --steps must be a positive integer"), 2;
            j.steps = v;
            break;
        case 'e':
            if (parse_int(optarg, 1, 100000, &v)) return die_msg("train: --envs must be an integer in 1..100000"), 2;
            j.cfg.n_envs = (int)v;
            break;
        case 'p':
            if (!nn_preset_known(optarg)) return die_msg("train: --preset must be " NN_PRESETS), 2;
            snprintf(j.cfg.preset, sizeof j.cfg.preset, "%s", optarg);
            break;
        case 's':
            if (parse_u64(optarg, &j.cfg.seed)) return die_msg("train: --seed must be a non-negative integer"), 2;
            break;
        case 't':
            if (parse_int(optarg, 1, 1024, &v)) return die_msg("train: --threads must be an integer in 1..1024"), 2;
            j.threads = (int)v;
            break;
        case 'o': j.out = optarg; break;
        case 'R': j.resume = 1; break;
        case 'h': train_usage(stdout); return 0;
#define FLOAT_FLAG(code, name, lo, hi, field)                                                                 \
    case code:                                                                                                \
        if (parse_double(optarg, lo, hi, &d)) return die_msg("train: --" name " must be a number in " #lo ".." #hi), 2; \
        j.cfg.field = (float)d;                                                                               \
        break;
#define INT_FLAG(code, name, lo, hi, field)                                                                   \
    case code:                                                                                                \
        if (parse_int(optarg, lo, hi, &v)) return die_msg("train: --" name " must be an integer in " #lo ".." #hi), 2; \
        j.cfg.field = (int)v;                                                                                 \
        break;
        FLOAT_FLAG(O_LR, "lr", 1e-8, 1.0, lr)
        FLOAT_FLAG(O_GAMMA, "gamma", 0.0, 1.0, gamma)
        FLOAT_FLAG(O_LAMBDA, "gae-lambda", 0.0, 1.0, gae_lambda)
        FLOAT_FLAG(O_CLIP, "clip", 0.001, 0.999, clip_eps)
        FLOAT_FLAG(O_ENT, "ent-coef", 0.0, 100.0, ent_coef)
        FLOAT_FLAG(O_VF, "vf-coef", 0.0, 100.0, vf_coef)
        FLOAT_FLAG(O_GN, "max-grad-norm", 1e-6, 1e6, max_grad_norm)
        FLOAT_FLAG(O_EPS, "adam-eps", 1e-12, 1.0, adam_eps)
        INT_FLAG(O_ROLLOUT, "rollout", 1, 100000, n_steps)
        INT_FLAG(O_EPOCHS, "epochs", 1, 1000, n_epochs)
        INT_FLAG(O_MB, "minibatches", 1, 100000, n_minibatches)
        INT_FLAG(O_CHUNK, "chunk", 1, 65536, chunk)
#undef FLOAT_FLAG
#undef INT_FLAG
        default: train_usage(stderr); return 2;
        }
    }
    if (optind < argc) return die_msg("train: unexpected argument '%s'", argv[optind]), 2;
    if (!j.out) return die_msg("train: --out DIR is required (pcgrllm train --help)"), 2;
    if (j.math && !strcmp(j.backend, "cpu"))
        return die_msg("train: --matmul %s needs the CUDA trainer (--backend cuda or auto); the CPU computes in fp32",
                       math_names[j.math]),
               2;
    if (dirguard_command_dir("train", j.out, "training directory", j.resume)) return 1;
    char err[1024], path[4096];
    char *src = NULL;
    long len;
    if (j.resume) {
        (void)settings; /* the checkpoint's settings win */
        ppo_config stored;
        nn_t nn;
        int64_t step;
        snprintf(path, sizeof path, "%s/%s", j.out, CHECKPOINT_FILE);
        if (checkpoint_load_policy(path, &stored, &nn, &step, err, sizeof err))
            return die_msg("train: cannot resume: %s", err), 1;
        nn_free(&nn);
        j.cfg = stored;
        snprintf(path, sizeof path, "%s/reward.c", j.out);
        src = read_file(reward_path ? reward_path : path, REWARD_MAX_SOURCE, &len, err, sizeof err);
        if (!src) return die_msg("train: %s", err), 1;
        if (reward_path) {
            char *kept = read_file(path, REWARD_MAX_SOURCE, &len, err, sizeof err);
            int same = kept && !strcmp(kept, src);
            free(kept);
            if (!same) {
                free(src);
                return die_msg("train: --reward differs from %s, the reward this run was trained with", path), 2;
            }
        }
        if (!j.steps) j.steps = step; /* nothing more unless asked */
        start_step = step;
        if (j.steps <= step) {
            printf("the checkpoint already has %lld steps (asked for %lld); nothing to do\n", (long long)step,
                   (long long)j.steps);
            free(src);
            return 0;
        }
    } else {
        if (!reward_path || !j.scenario || !j.steps)
            return die_msg("train: --reward, --scenario, --steps and --out are required (pcgrllm train --help)"), 2;
        const char *why = ppo_config_check(&j.cfg);
        if (why) return die_msg("train: %s", why), 2;
        src = read_file(reward_path, REWARD_MAX_SOURCE, &len, err, sizeof err);
        if (!src) return die_msg("train: %s", err), 1;
    }
    /* the backend next (a missing GPU is reported before anything else runs) */
    char err2[700];
    backend_probe_result pr;
    if (backend_probe(j.backend, &pr, err2, sizeof err2)) {
        free(src);
        return die_msg("train: %s", err2), 1;
    }
    j.use_cuda = pr.backend == BACKEND_CUDA;
    char nv_why[300];
    if (j.use_cuda && !reward_nvrtc_available(nv_why, sizeof nv_why)) {
        if (strcmp(j.backend, "auto")) {
            free(src);
            return die_msg("train: --backend cuda needs NVRTC for the reward kernel: %s", nv_why), 1;
        }
        /* auto means the best that works here */
        fprintf(stderr, "train: --backend auto: a GPU is there but %s; training on the CPU\n", nv_why);
        j.use_cuda = 0;
    }
    if (!j.use_cuda && j.math)
        fprintf(stderr, "train: no usable GPU, training on the CPU in fp32 (--matmul %s ignored)\n",
                math_names[j.math]);
    if (j.save_every < 0) j.save_every = j.use_cuda ? 30 : 0;
    /* the sandbox first: a refused reward never reaches training */
    reward_stats st;
    if (reward_validate(src, j.cfg.variant, 64, j.cfg.seed, 60.0, &st, err, sizeof err)) {
        free(src);
        return die_msg("train: reward refused: %s", err), 1;
    }
    if (!j.use_cuda && project_cpu_cost(&j, start_step, st.us_per_call, yes)) {
        free(src);
        return 1;
    }
    /* on a GPU: the reward kernel for this architecture, sized for these levels */
    char *cubin = NULL;
    size_t cubin_len = 0;
    if (j.use_cuda) {
        char arch[16];
        snprintf(arch, sizeof arch, "sm_%d%d", pr.info.major, pr.info.minor);
        int side = j.cfg.map_h > j.cfg.map_w ? j.cfg.map_h : j.cfg.map_w;
        int rc = reward_compile_nvrtc_ex(src, arch, side < 5 ? 5 : side, &cubin, &cubin_len, err, sizeof err);
        if (rc) {
            free(src);
            return die_msg("train: %s %s", rc == -2 ? "NVRTC is needed for the CUDA trainer:" : "NVRTC refused the reward:",
                           err),
                   1;
        }
        if (!j.quiet)
            printf("device: GPU %d, %s (%s), %s matmuls\n", pr.gpu, pr.info.name, arch, math_names[j.math]);
    }
    if (make_dirs(j.out) || dirguard_command_dir("train", j.out, "training directory", 0)) {
        free(src), free(cubin);
        return die_msg("train: cannot create directory %s", j.out), 1;
    }
    snprintf(path, sizeof path, "%s/reward.c", j.out);
    if ((!j.resume && write_file_atomic(path, src, strlen(src))) || write_train_json(&j)) {
        free(src), free(cubin);
        return die_msg("train: cannot write into %s: %s", j.out, write_error()), 1;
    }
    train_settings ts = {j.cfg, j.steps, j.resume, j.threads, j.use_cuda, j.math, pr.gpu, j.quiet, j.save_every,
                         watchdog, report_fd};
    if (!j.quiet && !j.use_cuda) {
        char why[160];
        int threads = train_threads(&j, why, sizeof why);
        if (j.threads > 0) printf("cpu: %d thread%s, as --threads asks\n", threads, threads == 1 ? "" : "s");
        else printf("cpu: %s\n", why);
    }
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int rc = train_in_worker(&ts, src, cubin, cubin_len, j.out, &g_stop, err, sizeof err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    free(src);
    free(cubin);
    if (rc == 1) die_msg("train: training failed: %s", err);
    return rc;
}
