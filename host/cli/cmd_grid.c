/* pcgrllm grid: the flags.  The grid itself is host/grid/grid_main.c and the
 * modules it names.  See docs/grid.md. */
#include "commands.h"
#include "graph.h"
#include "grid_main.h"
#include "grid_rows.h"
#include "llm.h"
#include "run.h"
#include "util.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void grid_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm grid --out DIR [AXES] [--repeats R] [--jobs J | --gpus N] [--cell K] [--list]\n"
            "                    [--summary] [--value final|best] [--slurm [SLURM OPTIONS]] [-- RUN FLAGS]\n"
            "  Runs one `pcgrllm run` per cell in DIR/cells/NAME (its output in DIR/cells/NAME.log) and\n"
            "  computes the paper's tables from every node of every cell (docs/grid.md).\n"
            "  --config FILE         the definition from a grid.json (an earlier grid's, or by hand); the\n"
            "                        axes and --repeats given override its own, run flags after -- follow\n"
            "                        its run flags; its model servers are used only when named with\n"
            "                        --base-url or confirmed on a terminal\n"
            "axes (a comma list each; defaults: what `run` uses, one repeat):\n"
            "  --scenarios LIST      1, 2, 3, 4 (1)           --pe LIST   cot, tot, got (cot)\n"
            "  --ablations LIST      zs, sa, fb, full (full); ZS (+SA) is iteration 1 of each method's fb\n"
            "                        (full) cells; without those, zs (sa) cells run once per scenario,\n"
            "                        model and seed, reported under each search method\n"
            "  --models LIST         NAME or NAME@BASE_URL each; offline = the rule-based offline author\n"
            "  --feedbacks LIST      specific, generic, none  --feedback-inputs LIST  text, image\n"
            "  --got-best LIST       GoT best references, 0..4  --got-worst LIST  worst references, 0..4\n"
            "  --prompt-profiles LIST paper, rich (run --prompts)  --reward-apis LIST  minimal, full\n"
            "                        (run --reward-api): what the prompts say and which helpers they list\n"
            "  --fitnesses LIST      heuristic, llm (run --fitness): what steers the +FB and full search\n"
            "                        (Table V compares the two)\n"
            "  --accept LIST         always, improve (run --accept): every revision is built on, or\n"
            "                        only better ones (the harness's target-prioritized acceptance)\n"
            "  --target-fitness LIST fitness values in [0, 1], or none (run --target-fitness): where\n"
            "                        the search stops early; both axes vary the +FB, full and Human cells\n"
            "  --human DIR           the Human row: DIR/scenarioN.c trained as it is, then refined with\n"
            "                        CoT (e.g. rewards/human)\n"
            "  --repeats R           seeds: repeat r runs with seed K + 1000*r in every cell (K: the run\n"
            "                        flags' --seed, 0)\n"
            "  -- RUN FLAGS          every further flag goes to each cell's `pcgrllm run`\n"
            "model servers (never stored in grid.json):\n"
            "  --api-key-env NAME    every cell reads the API key from $NAME (default: OPENAI_API_KEY)\n"
            "  --base-url URL        restarting a grid: send requests to this server that DIR/grid.json\n"
            "                        names (repeat for each); without it a stored server other than\n"
            "                        the default is asked about on a terminal, refused otherwise\n"
            "where it runs:\n"
            "  --yes                 go on with a grid projected at over 3 hours on the CPU without asking\n"
            "  --jobs J              at most J cells at once on the CPU, each with --threads\n"
            "                        max(1, idle CPUs/J) unless the run flags set --threads (1)\n"
            "  --gpus N              one cell per GPU at once, with PCGRLLM_GPU=k and --backend cuda\n"
            "                        (unless the run flags set --backend); not with --jobs > 1\n"
            "  --cell K              run only cell K (a batch-array task)\n"
            "  --slurm               write DIR/slurm/grid.sbatch (one array task per unfinished cell) and a\n"
            "                        summary job after it, submit both with sbatch, print the job ids\n"
            "  --slurm-script-only   write them without submitting\n"
            "  --partition P --time T --gres G --cpus-per-task C --mem M --max-parallel N --account A\n"
            "  --qos Q               their #SBATCH options (--gres gpu:1 runs each task with --gpus 1)\n"
            "  --sbatch 'OPTION'     one more #SBATCH line for both jobs (repeat; e.g. --sbatch --constraint=a100)\n"
            "  --prologue FILE       shell lines run before each task and the summary (module load, a\n"
            "                        virtual environment, PCGRLLM_CUDA_LIB=...)\n"
            "  --summary-partition P the summary job's partition (it needs no GPU and little time)\n"
            "results:\n"
            "  --list                the cells with their index, seed and state\n"
            "  --summary             only the summary of what is finished\n"
            "  --value final|best    final (the paper's): iteration 1 for ZS and +SA, the last iteration\n"
            "                        for +FB and PCGRLLM; best: the best fitness up to there (final)\n"
            "Rerunning the same command skips finished cells and resumes the others (run --resume);\n"
            "with no axis or run flag, the definition stored in DIR/grid.json is used.\n"
            "Writes DIR/grid.json, grid.log, summary.json, tables.md, summary.html, summary.txt, CSV\n"
            "files and plots/.  Exit codes: 0 every cell done, 1 a cell failed or error, 2 bad flags,\n"
            "4 a model server does not answer (no cell was started), 130 interrupted.  See docs/grid.md.\n");
}

enum {
    O_OUT = 256, O_SCEN, O_PE, O_ABL, O_MODELS, O_FBS, O_FBINS, O_GB, O_GW, O_PPS, O_RAS, O_FITS, O_ACCS, O_TFS, O_HUMAN, O_REP, O_JOBS, O_GPUS, O_CELL,
    O_LIST, O_SUMMARY, O_VALUE, O_SLURM, O_SLURM_ONLY, O_PART, O_TIME, O_GRES, O_CPT, O_MEM, O_ACCOUNT, O_QOS,
    O_SBATCH, O_PROLOGUE, O_SUMPART, O_MAXPAR, O_HELP, O_YES,
    O_BASE_URL, O_KEY_ENV, O_CONFIG
};

/* --base-url and --api-key-env: checked as `run` checks them.  0, or -1
 * with err. */
static int request_flag(int ch, const char *v, grid_opts *o, char *err, int errlen)
{
    llm_config scratch;
    llm_config_defaults(&scratch);
    if (ch == O_BASE_URL) {
        if (o->n_named == GRID_MAX_MODELS + 1)
            return snprintf(err, (size_t)errlen, "at most %d --base-url flags", GRID_MAX_MODELS + 1), -1;
        if (llm_config_flag(&scratch, "--base-url", v, err, errlen) < 0) return -1;
        snprintf(o->named[o->n_named++], sizeof o->named[0], "%s", v);
        return 0;
    }
    if (!v[0] || strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != strlen(v) ||
        strlen(v) >= sizeof o->d.api_key_env)
        return snprintf(err, (size_t)errlen, "--api-key-env needs the name of an environment variable"), -1;
    snprintf(o->d.api_key_env, sizeof o->d.api_key_env, "%s", v);
    return 0;
}

/* An axis flag: the list into o->d.  0, or -1 with err. */
static int axis_flag(int ch, const char *v, grid_opts *o, char *err, int errlen)
{
    typedef int (*parser)(const char *, grid_def *, char *, int);
    static const struct {
        int ch;
        parser parse;
    } axes[] = {{O_SCEN, grid_parse_scenarios},     {O_PE, grid_parse_pe},          {O_ABL, grid_parse_ablations},
                {O_MODELS, grid_parse_models},      {O_FBS, grid_parse_feedbacks}, {O_FBINS, grid_parse_feedback_inputs},
                {O_GB, grid_parse_got_best},        {O_GW, grid_parse_got_worst},
                {O_PPS, grid_parse_prompt_profiles}, {O_RAS, grid_parse_reward_apis},
                {O_FITS, grid_parse_fitnesses},      {O_ACCS, grid_parse_accept},
                {O_TFS, grid_parse_target_fitness}};
    for (size_t i = 0; i < sizeof axes / sizeof *axes; i++)
        if (axes[i].ch == ch) return o->def_given = 1, axes[i].parse(v, &o->d, err, errlen);
    return -1;
}

/* The #SBATCH options.  0, or -1 with err. */
static int slurm_flag(int ch, const char *v, grid_slurm_opts *s, char *err, int errlen)
{
    long n;
    switch (ch) {
    case O_PART: return grid_slurm_check_value("--partition", v, err, errlen) ? -1 : (snprintf(s->partition, sizeof s->partition, "%s", v), 0);
    case O_TIME: return grid_slurm_check_value("--time", v, err, errlen) ? -1 : (snprintf(s->time, sizeof s->time, "%s", v), 0);
    case O_GRES: return grid_slurm_check_value("--gres", v, err, errlen) ? -1 : (snprintf(s->gres, sizeof s->gres, "%s", v), 0);
    case O_MEM: return grid_slurm_check_value("--mem", v, err, errlen) ? -1 : (snprintf(s->mem, sizeof s->mem, "%s", v), 0);
    case O_ACCOUNT:
        return grid_slurm_check_value("--account", v, err, errlen) ? -1 : (snprintf(s->account, sizeof s->account, "%s", v), 0);
    case O_QOS: return grid_slurm_check_value("--qos", v, err, errlen) ? -1 : (snprintf(s->qos, sizeof s->qos, "%s", v), 0);
    case O_SUMPART:
        return grid_slurm_check_value("--summary-partition", v, err, errlen)
                   ? -1
                   : (snprintf(s->summary_partition, sizeof s->summary_partition, "%s", v), 0);
    case O_SBATCH: return grid_slurm_add_line(s, v, err, errlen);
    case O_PROLOGUE: return grid_slurm_read_prologue(s, v, err, errlen);
    case O_CPT:
        if (parse_int(v, 1, 4096, &n)) return snprintf(err, (size_t)errlen, "--cpus-per-task must be 1..4096"), -1;
        s->cpus_per_task = (int)n;
        return 0;
    default:
        if (parse_int(v, 1, 100000, &n)) return snprintf(err, (size_t)errlen, "--max-parallel must be 1..100000"), -1;
        s->max_parallel = (int)n;
        return 0;
    }
}

/* Every flag before "--" into o.  0, or -1 with err. */
static int parse_flags(int argc, char **argv, grid_opts *o, char *human, int *slurm_opts_given, char *err, int errlen)
{
    static const struct option opts[] = {
        {"out", required_argument, 0, O_OUT},          {"scenarios", required_argument, 0, O_SCEN},
        {"pe", required_argument, 0, O_PE},            {"ablations", required_argument, 0, O_ABL},
        {"models", required_argument, 0, O_MODELS},    {"feedbacks", required_argument, 0, O_FBS},
        {"feedback-inputs", required_argument, 0, O_FBINS}, {"got-best", required_argument, 0, O_GB},
        {"got-worst", required_argument, 0, O_GW},     {"human", required_argument, 0, O_HUMAN},
        {"prompt-profiles", required_argument, 0, O_PPS}, {"reward-apis", required_argument, 0, O_RAS},
        {"fitnesses", required_argument, 0, O_FITS},   {"accept", required_argument, 0, O_ACCS},
        {"target-fitness", required_argument, 0, O_TFS},
        {"repeats", required_argument, 0, O_REP},      {"jobs", required_argument, 0, O_JOBS},
        {"gpus", required_argument, 0, O_GPUS},        {"cell", required_argument, 0, O_CELL},
        {"yes", no_argument, 0, O_YES},                {"list", no_argument, 0, O_LIST},              {"summary", no_argument, 0, O_SUMMARY},
        {"value", required_argument, 0, O_VALUE},      {"slurm", no_argument, 0, O_SLURM},
        {"slurm-script-only", no_argument, 0, O_SLURM_ONLY}, {"partition", required_argument, 0, O_PART},
        {"time", required_argument, 0, O_TIME},        {"gres", required_argument, 0, O_GRES},
        {"cpus-per-task", required_argument, 0, O_CPT}, {"mem", required_argument, 0, O_MEM},
        {"max-parallel", required_argument, 0, O_MAXPAR}, {"help", no_argument, 0, O_HELP},
        {"account", required_argument, 0, O_ACCOUNT},  {"qos", required_argument, 0, O_QOS},
        {"sbatch", required_argument, 0, O_SBATCH},    {"prologue", required_argument, 0, O_PROLOGUE},
        {"summary-partition", required_argument, 0, O_SUMPART},
        {"base-url", required_argument, 0, O_BASE_URL}, {"api-key-env", required_argument, 0, O_KEY_ENV},
        {"config", required_argument, 0, O_CONFIG},    {0, 0, 0, 0}};
    int ch, idx;
    long v;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_full(argc, argv, ":", opts, &idx)) != -1) {
        if (axis_flag(ch, optarg, o, err, errlen) == 0) continue;
        if (ch >= O_SCEN && ch <= O_TFS) return -1; /* the axis said why */
        if (ch >= O_PART && ch <= O_MAXPAR) {
            *slurm_opts_given = 1;
            if (slurm_flag(ch, optarg, &o->slurm_opts, err, errlen)) return -1;
            continue;
        }
        if (ch == O_BASE_URL || ch == O_KEY_ENV) {
            if (request_flag(ch, optarg, o, err, errlen)) return -1;
            continue;
        }
        switch (ch) {
        case O_OUT:
            if (strlen(optarg) >= sizeof o->out - 64) return snprintf(err, (size_t)errlen, "--out path too long"), -1;
            snprintf(o->out, sizeof o->out, "%s", optarg);
            break;
        case O_HUMAN: snprintf(human, 1024, "%.1000s", optarg), o->def_given = 1; break;
        case O_REP:
            if (parse_int(optarg, 1, GRID_MAX_REPEATS, &v))
                return snprintf(err, (size_t)errlen, "--repeats must be 1..%d", GRID_MAX_REPEATS), -1;
            o->d.repeats = (int)v, o->def_given = 1;
            break;
        case O_JOBS:
            if (parse_int(optarg, 1, 1024, &o->jobs)) return snprintf(err, (size_t)errlen, "--jobs must be 1..1024"), -1;
            break;
        case O_GPUS:
            if (parse_int(optarg, 1, 64, &o->gpus)) return snprintf(err, (size_t)errlen, "--gpus must be 1..64"), -1;
            break;
        case O_CELL:
            if (parse_int(optarg, 0, 1L << 30, &o->cell))
                return snprintf(err, (size_t)errlen, "--cell must be a cell index (pcgrllm grid --list)"), -1;
            break;
        case O_LIST: o->list = 1; break;
        case O_YES: o->yes = 1; break;
        case O_SUMMARY: o->summary = 1; break;
        case O_VALUE:
            if (strcmp(optarg, "final") && strcmp(optarg, "best"))
                return snprintf(err, (size_t)errlen, "--value must be final or best"), -1;
            o->value = !strcmp(optarg, "best") ? GRID_VALUE_BEST : GRID_VALUE_FINAL;
            break;
        case O_SLURM: o->slurm = 1; break;
        case O_CONFIG: o->config = optarg; break; /* read before the other flags: load_config */
        case O_SLURM_ONLY: o->slurm = 1, o->slurm_opts.script_only = 1; break;
        case O_HELP: return 1;
        case ':': return snprintf(err, (size_t)errlen, "%s needs a value (pcgrllm grid --help)", argv[optind - 1]), -1;
        default:
            return snprintf(err, (size_t)errlen, "unknown option '%s' (pcgrllm grid --help; run flags go after --)",
                            argv[optind - 1]), -1;
        }
    }
    if (optind < argc) return snprintf(err, (size_t)errlen, "unexpected argument '%s' (run flags go after --)", argv[optind]), -1;
    return 0;
}

/* Flags that do not go together.  0, or -1 with err. */
static int check_flags(const grid_opts *o, int slurm_opts_given, char *err, int errlen)
{
    if (!o->out[0]) return snprintf(err, (size_t)errlen, "--out DIR is required"), -1;
    if (o->gpus && o->jobs > 1)
        return snprintf(err, (size_t)errlen, "--gpus and --jobs > 1 do not go together (--gpus N runs one cell per GPU)"), -1;
    if (o->list + o->summary + (o->cell >= 0) + o->slurm > 1)
        return snprintf(err, (size_t)errlen, "give at most one of --list, --summary, --cell K, --slurm"), -1;
    if (o->slurm && (o->gpus || o->jobs > 1))
        return snprintf(err, (size_t)errlen, "--slurm runs each cell as its own task; ask for GPUs with --gres gpu:1"), -1;
    if (slurm_opts_given && !o->slurm)
        return snprintf(err, (size_t)errlen, "--partition, --time, --gres, --cpus-per-task, --mem, --account, --qos, "
                                             "--sbatch, --prologue, --summary-partition and --max-parallel go "
                                             "with --slurm"), -1;
    return 0;
}

/* --config FILE, found before the flags are parsed so that they go over
 * it.  NULL without. */
static const char *config_arg(int n, char **argv)
{
    for (int i = 1; i < n; i++) {
        if (!strcmp(argv[i], "--config") && i + 1 < n) return argv[i + 1];
        if (!strncmp(argv[i], "--config=", 9)) return argv[i] + 9;
    }
    return NULL;
}

/* The run flags: the file's, then those after "--" (later ones win in
 * run's parser).  0, or -1 with err. */
static int run_flags_over_config(grid_opts *o, int n_run, char **given, char *err, int errlen)
{
    char *all[GRID_MAX_RUN_FLAGS * 2 + 1];
    int n = 0;
    for (int i = 0; i < o->d.n_run_flags && n < GRID_MAX_RUN_FLAGS * 2; i++) all[n++] = o->d.run_flags[i];
    for (int i = 0; i < n_run && n < GRID_MAX_RUN_FLAGS * 2; i++) all[n++] = given[i];
    char *copy[GRID_MAX_RUN_FLAGS * 2 + 1];
    int rc = 0;
    for (int i = 0; i < n; i++) /* grid_set_run_flags frees the file's */
        if (!(copy[i] = strdup(all[i]))) rc = -1;
    if (rc) snprintf(err, (size_t)errlen, "out of memory");
    else rc = grid_set_run_flags(&o->d, n, copy, &o->sets_threads, &o->sets_backend, err, errlen);
    for (int i = 0; i < n; i++) free(copy[i]);
    return rc;
}

int cmd_grid(int argc, char **argv)
{
    /* the run flags: everything after the first "--" */
    int n_grid = argc, n_run = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--")) {
            n_grid = i;
            n_run = argc - i - 1;
            break;
        }
    grid_opts o;
    memset(&o, 0, sizeof o);
    o.d.n_scen = 1, o.d.scen[0] = 1;
    o.d.n_pe = 1, o.d.pe[0] = PE_COT;
    o.d.n_abl = 1, o.d.abl[0] = ABL_FULL;
    o.d.repeats = 1;
    o.jobs = 1;
    o.cell = -1;
    char err[600], human[1024] = "";
    int slurm_opts_given = 0;
    const char *config = config_arg(n_grid, argv);
    if (config) {
        if (grid_def_from_file(config, &o.d, err, sizeof err)) return die_msg("grid: %s", err), 2;
        o.def_given = 1;
    }
    int rc = parse_flags(n_grid, argv, &o, human, &slurm_opts_given, err, sizeof err);
    if (rc == 1) return grid_usage(stdout), 0;
    if (!rc) rc = check_flags(&o, slurm_opts_given, err, sizeof err);
    if (!rc && human[0]) rc = grid_set_human(&o.d, human, err, sizeof err);
    if (n_run > 0) o.def_given = 1;
    if (!rc && config) rc = run_flags_over_config(&o, n_run, argv + n_grid + 1, err, sizeof err);
    else if (!rc)
        rc = grid_set_run_flags(&o.d, n_run, argv + n_grid + 1, &o.sets_threads, &o.sets_backend, err, sizeof err);
    if (rc) {
        grid_def_free(&o.d);
        die_msg("grid: %s", err);
        return 2;
    }
    o.slurm_opts.value_best = o.value == GRID_VALUE_BEST;
    return grid_main(&o);
}
