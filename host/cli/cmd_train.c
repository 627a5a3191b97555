/* pcgrllm train: PPO with a reward written against the reward API, on the
 * CPU (host/learn/ppo.c) or on a GPU (the CUDA backend's device trainer, the
 * same settings, streams and checkpoint file).  This file parses the flags;
 * the job (host/train/train_job.c) validates the reward in the sandbox
 * (reward_jit/sandbox.c) and trains in a confined worker process
 * (host/train/train_worker.c) whose messages this process checks before it
 * writes anything.  This process never initialises CUDA itself: the device
 * is probed in a child.  Ctrl-C is passed on to the worker: it stops, and
 * the last checkpoint stays. */
#include "backend.h"
#include "child.h"
#include "commands.h"
#include "ppo.h"
#include "train_job.h"
#include "util.h"
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

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
            "  Details of the environment and the network (defaults are the reference code's;\n"
            "  docs/training.md#reference-details):\n"
            "  --obs-centre C      last (the cell just edited) or next (the cell about to be edited)\n"
            "  --terminal-reward R env (0 on the last step of an episode) or designed (the reward there too)\n"
            "  --final-level L     the level generate keeps: edits767 (after 767 of 768 edits) or edits768\n"
            "  --conv-init I       the convolutions' init: lecun (LeCun normal) or orthogonal\n"
            "exit status: 0 done, 1 refused or failed, 2 usage error, 130 interrupted\n");
}

/* --obs-centre and the other reference details: O_DETAIL + PPO_DETAIL_* */
enum { O_DETAIL = 1000 };

enum {
    O_LR = 256, O_ROLLOUT, O_EPOCHS, O_MB, O_GAMMA, O_LAMBDA, O_CLIP, O_ENT, O_VF, O_GN, O_EPS, O_CHUNK, O_MATH,
    O_SAVE, O_WATCHDOG, O_YES, O_REPORT
};

/* A flag of how the job runs (not of what it trains).  0, 2 after a bad
 * value, -1 when c is not one of them. */
static int job_flag(int c, train_job *j)
{
    long v;
    switch (c) {
    case 'r': j->reward_path = optarg; return 0;
    case 'b':
        if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda") && strcmp(optarg, "auto"))
            return die_msg("train: --backend must be cpu, cuda or auto"), 2;
        j->backend = optarg;
        return 0;
    case O_MATH:
        if ((j->math = backend_math_from_name(optarg)) < 0)
            return die_msg("train: --matmul must be fp32, tf32 or bf16"), 2;
        return 0;
    case O_SAVE:
        if (parse_double(optarg, 0, 1e7, &j->save_every))
            return die_msg("train: --save-every must be a number of seconds (0: every update)"), 2;
        return 0;
    case O_WATCHDOG:
        if (parse_double(optarg, 1, 1e7, &j->watchdog))
            return die_msg("train: --watchdog must be a number of seconds (at least 1)"), 2;
        return 0;
    case 'q': j->quiet = 1; return 0;
    case O_YES: j->yes = 1; return 0;
    case O_REPORT: /* run's pipe: progress frames for it to show (not in --help: run's own plumbing) */
        if (parse_int(optarg, 3, 1 << 20, &v) || fcntl((int)v, F_GETFD) < 0)
            return die_msg("train: --report-fd wants an open descriptor"), 2;
        child_attach((int)v);
        j->report = 1;
        return 0;
    case 'n':
        if (parse_int(optarg, 1, (long)4e12, &v)) return die_msg("train: --steps must be a positive integer"), 2;
        j->steps = v;
        return 0;
    case 't':
        if (parse_int(optarg, 1, 1024, &v)) return die_msg("train: --threads must be an integer in 1..1024"), 2;
        j->threads = (int)v;
        return 0;
    case 'o': j->out = optarg; return 0;
    case 'R': j->resume = 1; return 0;
    default: return -1;
    }
}

/* A flag of the training's settings (a resume takes the checkpoint's and
 * ignores these).  0, 2 after a bad value, -1 when c is not one of them. */
static int setting_flag(int c, train_job *j)
{
    long v;
    double d;
    switch (c) {
    case 'S':
        if (parse_int(optarg, 1, 4, &v)) return die_msg("train: --scenario must be 1, 2, 3 or 4"), 2;
        j->scenario = (int)v;
        j->cfg.variant = v >= 3 ? VARIANT_TREASURE : VARIANT_DUNGEON;
        return 0;
    case 'v':
        if (parse_variant(optarg, &j->cfg.variant)) return die_msg("train: --variant must be dungeon or treasure"), 2;
        if (!j->scenario) j->scenario = j->cfg.variant == VARIANT_TREASURE ? 3 : 1;
        return 0;
    case 'e':
        if (parse_int(optarg, 1, 100000, &v)) return die_msg("train: --envs must be an integer in 1..100000"), 2;
        j->cfg.n_envs = (int)v;
        return 0;
    case 'p':
        if (!nn_preset_known(optarg)) return die_msg("train: --preset must be " NN_PRESETS), 2;
        snprintf(j->cfg.preset, sizeof j->cfg.preset, "%s", optarg);
        return 0;
    case 's':
        if (parse_u64(optarg, &j->cfg.seed)) return die_msg("train: --seed must be a non-negative integer"), 2;
        return 0;
#define FLOAT_FLAG(code, name, lo, hi, field)                                                                 \
    case code:                                                                                                \
        if (parse_double(optarg, lo, hi, &d)) return die_msg("train: --" name " must be a number in " #lo ".." #hi), 2; \
        j->cfg.field = (float)d;                                                                              \
        return 0;
#define INT_FLAG(code, name, lo, hi, field)                                                                   \
    case code:                                                                                                \
        if (parse_int(optarg, lo, hi, &v)) return die_msg("train: --" name " must be an integer in " #lo ".." #hi), 2; \
        j->cfg.field = (int)v;                                                                                \
        return 0;
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
    default: break;
    }
    int k = c - O_DETAIL;
    if (k < 0 || k >= PPO_N_DETAILS) return -1;
    int value = ppo_detail_parse(k, optarg);
    if (value < 0)
        return die_msg("train: --%s must be %s or %s", ppo_details[k].flag, ppo_details[k].names[0],
                       ppo_details[k].names[1]),
               2;
    ppo_detail_set(&j->cfg, k, value);
    return 0;
}

/* -1 to go on with the job, else the exit status. */
static int parse_train_flags(int argc, char **argv, train_job *j)
{
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
        {"obs-centre", required_argument, 0, O_DETAIL + PPO_DETAIL_OBS_CENTRE},
        {"terminal-reward", required_argument, 0, O_DETAIL + PPO_DETAIL_TERMINAL_REWARD},
        {"final-level", required_argument, 0, O_DETAIL + PPO_DETAIL_FINAL_LEVEL},
        {"conv-init", required_argument, 0, O_DETAIL + PPO_DETAIL_CONV_INIT},
        {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'h') return train_usage(stdout), 0;
        int rc = job_flag(c, j);
        if (rc < 0) rc = setting_flag(c, j);
        if (rc < 0) return train_usage(stderr), 2;
        if (rc) return rc;
    }
    if (optind < argc) return die_msg("train: unexpected argument '%s'", argv[optind]), 2;
    return -1;
}

int cmd_train(int argc, char **argv)
{
    train_job j;
    train_job_defaults(&j);
    int rc = parse_train_flags(argc, argv, &j);
    if (rc >= 0) return rc;
    if (!j.out) return die_msg("train: --out DIR is required (pcgrllm train --help)"), 2;
    if (j.math && !strcmp(j.backend, "cpu"))
        return die_msg("train: --matmul %s needs the CUDA trainer (--backend cuda or auto); the CPU computes in fp32",
                       backend_math_name(j.math)),
               2;
    return train_job_run(&j);
}
