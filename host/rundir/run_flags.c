/* run's flag parser (`pcgrllm run`, and the grid reading its cells'
 * flags): see run_config.h. */
#include "run_config.h"
#include "run_config_file.h"
#include "nn.h"
#include "util.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    O_SCENARIO = 256, O_STORY, O_STORY_FILE, O_LLM, O_PE, O_ITER, O_ALIGN, O_BREADTH, O_ABL, O_FB, O_FIT,
    O_FBIN, O_TRIALS, O_FIXES, O_TARGET, O_STEPS, O_ENVS, O_PRESET, O_BACKEND, O_SEED, O_THREADS, O_TTIMEOUT,
    O_LEVELS, O_EVALSEED, O_CENVS, O_CTIMEOUT, O_OUT, O_RESUME, O_QUIET, O_HELP, O_MATMUL, O_GOT_BEST,
    O_GOT_WORST, O_INIT_REWARD, O_EVAL_RULES, O_NODETIME, O_YES, O_QUICK, O_PROMPTS, O_REWARD_API, O_GOT_REFS,
    O_ACCEPT, O_CONFIG
};

static const struct option run_opts[] = {
    {"scenario", required_argument, 0, O_SCENARIO}, {"story", required_argument, 0, O_STORY},
    {"story-file", required_argument, 0, O_STORY_FILE}, {"llm", required_argument, 0, O_LLM},
    {"pe", required_argument, 0, O_PE}, {"iterations", required_argument, 0, O_ITER},
    {"align", required_argument, 0, O_ALIGN}, {"breadth", required_argument, 0, O_BREADTH},
    {"ablation", required_argument, 0, O_ABL}, {"feedback", required_argument, 0, O_FB},
    {"fitness", required_argument, 0, O_FIT}, {"feedback-input", required_argument, 0, O_FBIN},
    {"trials", required_argument, 0, O_TRIALS}, {"fixes", required_argument, 0, O_FIXES},
    {"target-fitness", required_argument, 0, O_TARGET}, {"steps", required_argument, 0, O_STEPS},
    {"envs", required_argument, 0, O_ENVS}, {"preset", required_argument, 0, O_PRESET},
    {"backend", required_argument, 0, O_BACKEND}, {"seed", required_argument, 0, O_SEED},
    {"threads", required_argument, 0, O_THREADS}, {"train-timeout", required_argument, 0, O_TTIMEOUT},
    {"levels", required_argument, 0, O_LEVELS}, {"eval-seed", required_argument, 0, O_EVALSEED},
    {"check-envs", required_argument, 0, O_CENVS}, {"check-timeout", required_argument, 0, O_CTIMEOUT},
    {"out", required_argument, 0, O_OUT}, {"resume", no_argument, 0, O_RESUME},
    {"quiet", no_argument, 0, O_QUIET}, {"help", no_argument, 0, O_HELP},
    {"matmul", required_argument, 0, O_MATMUL}, {"got-best", required_argument, 0, O_GOT_BEST},
    {"got-worst", required_argument, 0, O_GOT_WORST}, {"init-reward", required_argument, 0, O_INIT_REWARD},
    {"evaluator-rules", no_argument, 0, O_EVAL_RULES}, {"node-time", required_argument, 0, O_NODETIME},
    {"yes", no_argument, 0, O_YES}, {"quick", no_argument, 0, O_QUICK},
    {"prompts", required_argument, 0, O_PROMPTS}, {"reward-api", required_argument, 0, O_REWARD_API},
    {"got-refs", required_argument, 0, O_GOT_REFS}, {"accept", required_argument, 0, O_ACCEPT},
    {"config", required_argument, 0, O_CONFIG}, {0, 0, 0, 0}};
#define N_RUN_OPTS (sizeof run_opts / sizeof run_opts[0] - 1)

/* The reference details run passes to train (O_DETAIL + PPO_DETAIL_*),
 * then --node-seeds. */
enum { O_DETAIL = 1000, O_NODE_SEEDS = O_DETAIL + PPO_N_DETAILS };
static const struct option detail_opts[] = {
    {"obs-centre", required_argument, 0, O_DETAIL + PPO_DETAIL_OBS_CENTRE},
    {"terminal-reward", required_argument, 0, O_DETAIL + PPO_DETAIL_TERMINAL_REWARD},
    {"final-level", required_argument, 0, O_DETAIL + PPO_DETAIL_FINAL_LEVEL},
    {"conv-init", required_argument, 0, O_DETAIL + PPO_DETAIL_CONV_INIT},
    {"node-seeds", required_argument, 0, O_NODE_SEEDS},
};
#define N_DETAIL_OPTS (sizeof detail_opts / sizeof detail_opts[0])

/* run's own flags, then the LLM flags (llm_flag_names, handed to
 * llm_config_flag as 'L'), then the end. */
static struct option all_opts[N_RUN_OPTS + N_DETAIL_OPTS + 48];

static const struct option *run_options(void)
{
    memcpy(all_opts, run_opts, N_RUN_OPTS * sizeof run_opts[0]);
    memcpy(all_opts + N_RUN_OPTS, detail_opts, sizeof detail_opts);
    size_t n = N_RUN_OPTS + N_DETAIL_OPTS;
    for (int i = 0; llm_flag_names[i] && n < sizeof all_opts / sizeof all_opts[0] - 1; i++)
        all_opts[n++] = (struct option){llm_flag_names[i], required_argument, 0, 'L'};
    all_opts[n] = (struct option){0, 0, 0, 0};
    return all_opts;
}

/* The flags in groups, each taking what is its own: 0 taken, 1 not this
 * group's, -1 refused with one line in err. */
#define BAD(...) return snprintf(err, (size_t)errlen, __VA_ARGS__), -1

/* The task: --scenario, --story, --story-file, --init-reward.  0 taken, 1 not
 * this group's, -1 refused (err says why). */
static int task_flag(run_config *c, int ch, const char *optarg, int *have_task, char *err, int errlen)
{
    long v;
    switch (ch) {
    case O_SCENARIO:
        if (parse_int(optarg, 1, 4, &v)) BAD("--scenario must be 1, 2, 3 or 4 (or use --story)");
        c->scenario = (int)v;
        (*have_task)++;
        break;
    case O_STORY:
        if (strlen(optarg) > STORY_MAX_LEN) BAD("--story is longer than %d characters", STORY_MAX_LEN);
        snprintf(c->story, sizeof c->story, "%s", optarg);
        c->scenario = 0;
        (*have_task)++;
        break;
    case O_STORY_FILE: {
        long len;
        char why[400];
        char *t = read_file(optarg, STORY_MAX_LEN, &len, why, sizeof why);
        if (!t) BAD("--story-file: %s", why);
        snprintf(c->story, sizeof c->story, "%s", t);
        free(t);
        c->scenario = 0;
        (*have_task)++;
        break;
    }
    case O_INIT_REWARD: {
        long len;
        char why[400];
        char *t = read_file(optarg, 64L << 10, &len, why, sizeof why); /* the sandbox's size limit */
        if (!t) BAD("--init-reward: %s", why);
        free(t);
        if (strlen(optarg) >= sizeof c->init_reward) BAD("--init-reward: path too long");
        snprintf(c->init_reward, sizeof c->init_reward, "%s", optarg);
        break;
    }
    default: return 1;
    }
    return 0;
}

/* The search and its authors' settings.  0 taken, 1 not this group's, -1
 * refused (err says why). */
static int search_flag(run_config *c, int ch, const char *optarg, char *err, int errlen)
{
    long v;
    double d;
    switch (ch) {
    case O_PE:
        if ((c->pe = graph_pe_from_name(optarg)) < 0) BAD("--pe must be cot, tot or got");
        break;
    case O_ITER:
        if (parse_int(optarg, 1, RUN_ITERATIONS_MAX, &v)) BAD("--iterations must be 1..%d", RUN_ITERATIONS_MAX);
        c->iterations = (int)v;
        break;
    case O_ALIGN:
        if (parse_int(optarg, 0, 100, &v)) BAD("--align must be 0..100");
        c->align = (int)v;
        break;
    case O_BREADTH:
        if (parse_int(optarg, 1, 16, &v)) BAD("--breadth must be 1..16");
        c->breadth = (int)v;
        break;
    case O_GOT_BEST:
    case O_GOT_WORST:
        if (parse_int(optarg, 0, GRAPH_MAX_REF_KIND, &v))
            BAD("--got-%s must be 0..%d", ch == O_GOT_BEST ? "best" : "worst", GRAPH_MAX_REF_KIND);
        *(ch == O_GOT_BEST ? &c->got_best : &c->got_worst) = (int)v;
        break;
    case O_PROMPTS:
        if ((c->prompts = run_parse_prompts(optarg)) < 0) BAD("--prompts must be paper or rich");
        break;
    case O_REWARD_API:
        if ((c->reward_api = run_parse_reward_api(optarg)) < 0) BAD("--reward-api must be minimal or full");
        break;
    case O_GOT_REFS:
        if ((c->got_refs = run_parse_got_refs(optarg)) < 0) BAD("--got-refs must be reference or engine");
        break;
    case O_ABL:
        if ((c->ablation = run_parse_ablation(optarg)) < 0) BAD("--ablation must be zs, sa, fb or full");
        break;
    case O_FB:
        if ((c->feedback = run_parse_feedback(optarg)) < 0) BAD("--feedback must be specific, generic or none");
        break;
    case O_FIT:
        if ((c->fitness_mode = run_parse_fitness(optarg)) < 0) BAD("--fitness must be heuristic or llm");
        break;
    case O_FBIN:
        if ((c->feedback_input = run_parse_feedback_input(optarg)) < 0) BAD("--feedback-input must be text or image");
        break;
    case O_TRIALS:
        if (parse_int(optarg, 1, 100, &v)) BAD("--trials must be 1..100");
        c->trials = (int)v;
        break;
    case O_FIXES:
        if (parse_int(optarg, 0, 100, &v)) BAD("--fixes must be 0..100");
        c->fixes = (int)v;
        break;
    case O_EVAL_RULES: c->evaluator_rules = 1; break;
    case O_TARGET:
        if (!strcmp(optarg, "none")) d = -1; /* the default, named: a grid axis can hold it */
        else if (parse_double(optarg, 0, 1, &d)) BAD("--target-fitness must be in [0, 1], or none");
        c->target_fitness = d;
        break;
    case O_ACCEPT:
        if ((c->accept = run_parse_accept(optarg)) < 0) BAD("--accept must be always or improve");
        break;
    default: return 1;
    }
    return 0;
}

/* Training, levels and reward checks.  0 taken, 1 not this group's, -1
 * refused (err says why). */
static int training_flag(run_config *c, int ch, const char *optarg, char *err, int errlen)
{
    long v;
    double d;
    switch (ch) {
    case O_STEPS:
        if (parse_int(optarg, 1, (long)1 << 50, &v)) BAD("--steps must be a positive integer");
        c->steps = v;
        break;
    case O_ENVS:
        if (parse_int(optarg, 1, 1 << 24, &v)) BAD("--envs must be a positive integer");
        c->envs = (int)v;
        break;
    case O_PRESET:
        if (!nn_preset_known(optarg)) BAD("--preset must be " NN_PRESETS);
        snprintf(c->preset, sizeof c->preset, "%s", optarg);
        break;
    case O_BACKEND:
        if (strcmp(optarg, "cpu") && strcmp(optarg, "cuda") && strcmp(optarg, "auto"))
            BAD("--backend must be cpu, cuda or auto");
        snprintf(c->backend, sizeof c->backend, "%s", optarg);
        break;
    case O_MATMUL:
        if (strcmp(optarg, "fp32") && strcmp(optarg, "tf32") && strcmp(optarg, "bf16"))
            BAD("--matmul must be fp32, tf32 or bf16");
        snprintf(c->matmul, sizeof c->matmul, "%s", optarg);
        break;
    case O_SEED:
        if (parse_u64(optarg, &c->seed) || c->seed > (1ull << 62)) BAD("--seed must be a non-negative integer");
        break;
    case O_THREADS:
        if (parse_int(optarg, 1, 4096, &v)) BAD("--threads must be 1..4096");
        c->threads = (int)v;
        break;
    case O_TTIMEOUT:
        if (parse_double(optarg, 0, RUN_SECONDS_MAX, &d)) BAD("--train-timeout must be seconds >= 0");
        c->train_timeout = d;
        break;
    case O_NODETIME:
        if (parse_double(optarg, 0, RUN_SECONDS_MAX, &d)) BAD("--node-time must be seconds >= 0 (0: no limit)");
        c->node_time = d;
        break;
    case O_LEVELS:
        if (parse_int(optarg, 1, RUN_LEVELS_MAX, &v)) BAD("--levels must be 1..%d", RUN_LEVELS_MAX);
        c->n_levels = (int)v;
        break;
    case O_EVALSEED:
        if (parse_u64(optarg, &c->eval_seed) || c->eval_seed > (1ull << 62)) BAD("--eval-seed must be a non-negative integer");
        break;
    case O_CENVS:
        if (parse_int(optarg, 1, RUN_CHECK_ENVS_MAX, &v)) BAD("--check-envs must be 1..%d", RUN_CHECK_ENVS_MAX);
        c->check_envs = (int)v;
        break;
    case O_CTIMEOUT:
        if (parse_double(optarg, RUN_CHECK_TIMEOUT_MIN, RUN_CHECK_TIMEOUT_MAX, &d))
            BAD("--check-timeout must be %g..%g seconds", RUN_CHECK_TIMEOUT_MIN, RUN_CHECK_TIMEOUT_MAX);
        c->check_timeout = d;
        break;
    default: return 1;
    }
    return 0;
}

/* The reference details and --node-seeds.  0 taken, 1 not this group's,
 * -1 refused (err says why). */
static int detail_flag(run_config *c, int ch, const char *optarg, char *err, int errlen)
{
    if (ch == O_NODE_SEEDS) {
        if ((c->node_seeds = run_parse_node_seeds(optarg)) < 0) BAD("--node-seeds must be same or offset");
        return 0;
    }
    int k = ch - O_DETAIL;
    if (k < 0 || k >= PPO_N_DETAILS) return 1;
    if ((c->details[k] = ppo_detail_parse(k, optarg)) < 0)
        BAD("--%s must be %s or %s", ppo_details[k].flag, ppo_details[k].names[0], ppo_details[k].names[1]);
    return 0;
}

#undef BAD

/* Without --llm: a language model when a server is named or a key is
 * there, else the offline author. */
static void default_author(run_config *c, int llm_set, int base_url_set)
{
    if (llm_set) return;
    const char *key = getenv(c->llm.api_key_env[0] ? c->llm.api_key_env : "OPENAI_API_KEY");
    c->offline = !(base_url_set || (key && *key));
}

/* The checks that need every flag, and the defaults that depend on them.
 * 0, or -1 with err. */
static int check_run(run_config *c, int have_task, int llm_set, int base_url_set, char *err, int errlen)
{
#define BAD(...) return snprintf(err, (size_t)errlen, __VA_ARGS__), -1
    if (c->resume && c->profile[0]) BAD("--quick starts a run; --resume continues one with its stored settings");
    if (c->resume) {
        if (!c->out[0]) BAD("--resume needs --out DIR of the run to continue");
        return 0;
    }
    if (have_task != 1) BAD("give exactly one of --scenario N, --story TEXT, --story-file F");
    if (c->scenario == 0 && !c->story[0]) BAD("the story is empty");
    default_author(c, llm_set, base_url_set);
    if (strcmp(c->matmul, "fp32") && !strcmp(c->backend, "cpu"))
        BAD("--matmul %s needs the CUDA trainer (--backend cuda or auto); the CPU computes in fp32", c->matmul);
    if (c->offline && c->fitness_mode == FIT_LLM)
        BAD("--fitness llm asks a language model to judge the levels; use it with --llm openai");
    if (!c->out[0]) {
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(c->out, sizeof c->out, "runs/%Y%m%d-%H%M%S", &tm);
    }
    return 0;
#undef BAD
}


/* Parse argv's flags into c.  0, or -1 with err. */
static int parse_run_flags(run_config *c, int argc, char **argv, run_flags_seen *seen, char *err, int errlen)
{
#define BAD(...) return snprintf(err, (size_t)errlen, __VA_ARGS__), -1
    const struct option *opts = run_options();
    int ch, idx, r;
    optind = 1;
    opterr = 0; /* one line of our own for a bad flag, below */
    while ((ch = getopt_full(argc, argv, ":", opts, &idx)) != -1) {
        if ((r = task_flag(c, ch, optarg, &seen->have_task, err, errlen)) <= 0 ||
            (r = search_flag(c, ch, optarg, err, errlen)) <= 0 ||
            (r = training_flag(c, ch, optarg, err, errlen)) <= 0 ||
            (r = detail_flag(c, ch, optarg, err, errlen)) <= 0) {
            if (r < 0) return -1;
            continue;
        }
        switch (ch) {
        case O_LLM:
            if (!strcmp(optarg, "offline")) c->offline = 1;
            else if (!strcmp(optarg, "openai")) c->offline = 0;
            else BAD("--llm must be offline or openai");
            seen->llm_set = c->llm_given = 1;
            break;
        case O_OUT:
            if (strlen(optarg) >= sizeof c->out - 64) BAD("--out path too long");
            snprintf(c->out, sizeof c->out, "%s", optarg);
            break;
        case O_RESUME: c->resume = 1; break;
        case O_QUIET: c->quiet = 1; break;
        case O_YES: c->yes = 1; break;
        case O_QUICK: seen->quick = 1; break; /* applied before the other flags, by run_flags */
        case O_CONFIG: seen->config = optarg; break; /* read before the other flags, by run_flags */
        case O_HELP: seen->help = 1; break;
        case 'L': {
            char flag[64];
            snprintf(flag, sizeof flag, "--%s", opts[idx].name);
            if (llm_config_flag(&c->llm, flag, optarg, err, errlen) < 0) return -1;
            if (!strcmp(opts[idx].name, "base-url")) seen->base_url_set = c->base_url_given = 1;
            if (!strcmp(opts[idx].name, "model")) c->model_given = 1;
            break;
        }
        case ':': BAD("%s needs a value (pcgrllm run --help)", argv[optind - 1]);
        default: BAD("unknown option '%s' (pcgrllm run --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) BAD("unexpected argument '%s'", argv[optind]);
    return 0;
#undef BAD
}

/* --quick: parse the profile's flags first, so that the command line's own
 * override them.  0, or -1 with err. */
static int apply_profile(run_config *c, const char *name, char *err, int errlen)
{
    char buf[256], *argv[32] = {"run"};
    int argc = 1 + run_profile_argv(name, buf, sizeof buf, argv + 1, 30);
    run_flags_seen ignored = {0};
    if (parse_run_flags(c, argc, argv, &ignored, err, errlen)) return -1;
    snprintf(c->profile, sizeof c->profile, "%s", name);
    return 0;
}

/* The settings a --config file gives, then the flags over them: a task or
 * an author the file names counts as given unless a flag gives its own. */
static int apply_config_file(run_config *c, int resume, const char *path, run_config_file_info *info, char *err,
                             int errlen)
{
    if (resume) {
        snprintf(err, (size_t)errlen, "--config starts a run; --resume continues one with its stored settings");
        return -1;
    }
    return run_config_file_load(path, c, info, err, errlen);
}

/* argv's flags over c: a config file first (--config), then a profile
 * (--quick), then the flags as given.  0, or -1 with err. */
int run_flags_parse(run_config *c, int argc, char **argv, run_flags_seen *seen, char *err, int errlen)
{
    memset(seen, 0, sizeof *seen);
    /* a first pass finds --config and --quick as getopt sees them (not as another flag's value) */
    run_config scratch = *c;
    run_flags_seen first = {0};
    run_config_file_info info = {0};
    if (parse_run_flags(&scratch, argc, argv, &first, err, errlen)) return -1;
    if (first.config && apply_config_file(c, scratch.resume, first.config, &info, err, errlen)) return -1;
    if (first.quick && apply_profile(c, "quick", err, errlen)) return -1;
    if (parse_run_flags(c, argc, argv, seen, err, errlen)) return -1;
    run_config_follow_profile(c);
    if (!first.config) return 0;
    if (!seen->have_task && info.has_task) seen->have_task = 1;
    if (!seen->llm_set && info.has_author) seen->llm_set = 1;
    /* scratch started from c before the file: an initial reward there came from the flags */
    return run_config_file_check(first.config, &info, c, seen->base_url_set, scratch.init_reward[0] != 0, err, errlen);
}

int run_config_from_flags(run_config *c, int argc, char **argv, char *err, int errlen)
{
    run_flags_seen seen;
    if (run_flags_parse(c, argc, argv, &seen, err, errlen)) return -1;
    default_author(c, seen.llm_set, seen.base_url_set);
    return 0;
}

int run_flags_check(run_config *c, const run_flags_seen *seen, char *err, int errlen)
{
    return check_run(c, seen->have_task, seen->llm_set, seen->base_url_set, err, errlen);
}
