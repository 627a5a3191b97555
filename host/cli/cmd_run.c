/* pcgrllm run / pcgrllm report: flags of the reward-design loop. */
#include "commands.h"
#include "nn.h"
#include "run.h"
#include "util.h"
#include "dirguard.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm run (--scenario N | --story TEXT | --story-file F) [options]\n"
            "  Designs a reward for the story with a language model (or the rule-based offline\n"
            "  author), proves each design by training on it, and searches over designs.\n"
            "task:\n"
            "  --scenario N          paper scenario 1..4 (docs/method.md#scenarios)\n"
            "  --story TEXT          a custom story; --story-file F reads it from a file\n"
            "  --init-reward FILE    start from this reward: iteration 1 trains it as it is (no\n"
            "                        generation, no alignment), later iterations refine it\n"
            "author:\n"
            "  --llm offline|openai  offline: the rule-based baseline author, no network, not a\n"
            "                        language model (default unless --base-url is given or\n"
            "                        $OPENAI_API_KEY is set); openai: any OpenAI-compatible server\n"
            "%s"
            "  --prompts paper|rich  what the model is shown: the paper's prompts (paper), or the\n"
            "                        engine's richer ones: target line, environment facts, the\n"
            "                        API document with an example (docs/llm.md)\n"
            "  --reward-api minimal|full  the API functions the prompts list: the accessors only, or\n"
            "                        also the path and region searches (minimal; full with rich)\n"
            "search (docs/method.md#the-reward-design-loop):\n"
            "  --pe cot|tot|got      chain, tree or graph of thoughts (cot)\n"
            "  --iterations Y        thought nodes (6)       --align Z    self-alignment rounds (5)\n"
            "  --breadth B           children per node for tot/got (2)\n"
            "  --got-best K          got: show the K best other rewards as references (2)\n"
            "  --got-worst K         got: and the K worst (0); the previous iteration is never a\n"
            "                        reference (0..4 each)\n"
            "  --got-refs reference|engine  got: the parent may be a reference and each shows its\n"
            "                        evaluation summary (reference), or the parent is left out\n"
            "                        and each shows its fitness (engine) (reference; engine with rich)\n"
            "  --ablation zs|sa|fb|full   zero-shot, +self-alignment, +feedback, both (full);\n"
            "                        zs and sa make one node\n"
            "  --feedback specific|generic|none  (specific)\n"
            "  --fitness heuristic|llm           parent choice by the evaluator or the model (heuristic)\n"
            "  --evaluator-rules     also tell the model how the evaluator scores levels (off: as\n"
            "                        in the paper, the prompts state the story and the tiles)\n"
            "  --feedback-input text|image       levels shown as text grids or a picture (text)\n"
            "  --trials N            generation trials per node (3)   --fixes N  code fixes per trial (3)\n"
            "  --node-time SEC       wall time a node's model calls may take, all together (1800;\n"
            "                        0: no limit); training has --train-timeout\n"
            "  --target-fitness F    stop once a node reaches fitness F (none: never, the default)\n"
            "  --accept always|improve  which revisions the search builds on: every one, as in the\n"
            "                        paper (always), or only better ones (improve): cot refines the\n"
            "                        best node so far, tot/got expand only nodes that scored above\n"
            "                        their parent (always)\n"
            "  --quick               a run that shows the method working on a CPU in minutes: the\n"
            "                        flags %s\n"
            "                        (flags given with it override them; docs/loop.md)\n"
            "  --config FILE         start from a config.json (an earlier run's, or by hand with some of\n"
            "                        its keys); flags given with it override it; a model server it names\n"
            "                        is used only with --base-url naming it too\n"
            "training, for every node:\n"
            "  --steps S (50000000)  --envs E (600)  --preset paper|small|tiny (paper)\n"
            "  --backend cpu|cuda|auto (auto)  --seed K (0)  --threads T (all)\n"
            "  --matmul fp32|tf32|bf16  matmuls of the device trainer (fp32)\n"
            "  --train-timeout SEC   end a node's training after SEC seconds (none)\n"
            "  --levels N            levels generated per node (30)   --eval-seed S\n"
            "  --check-envs E        environments of the reward check (64)\n"
            "  --check-timeout SEC   time limit of one reward check (60)\n"
            "  --obs-centre last|next  --terminal-reward env|designed  --final-level edits767|edits768\n"
            "  --conv-init lecun|orthogonal   details of train and generate (defaults: the reference\n"
            "                        code's; docs/training.md#reference-details)\n"
            "  --node-seeds same|offset  every node trains with --seed, as the reference code's (same),\n"
            "                        or node n with seed + n (offset)\n"
            "run directory:\n"
            "  --out DIR             (default runs/YYYYmmdd-HHMMSS)\n"
            "  --resume              continue the run in --out DIR from where it stopped\n"
            "  --quiet               no progress lines (the log is still written)\n"
            "  --yes                 go on with a job projected at over 3 hours on the CPU without asking\n"
            "Exit codes: 0 done, 1 error or no node produced a reward, 2 bad flags, 3 story refused,\n"
            "4 the model server failed (nothing was made of it; --resume goes on once it is back).\n"
            "See docs/loop.md and docs/llm.md.\n",
            llm_flags_help(), run_profile_flags("quick"));
}

int cmd_run(int argc, char **argv)
{
    run_config c;
    run_config_defaults(&c);
    c.scenario = -1;
    run_flags_seen seen;
    char err[512];
#define BAD(...) return die_msg("run: " __VA_ARGS__), 2
    if (run_flags_parse(&c, argc, argv, &seen, err, sizeof err)) BAD("%s", err);
    if (seen.help) {
        run_usage(stdout);
        return 0;
    }
    if (run_flags_check(&c, &seen, err, sizeof err)) BAD("%s", err);
    int looped, rc = run_main(&c, &looped);
    /* the search is over: its table and report.html */
    if (looped && run_report(c.out, 1, c.quiet) && rc == 0) rc = 1;
    return rc;
#undef BAD
}

int cmd_report(int argc, char **argv)
{
    if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc == 2 ? stdout : stderr,
                "usage: pcgrllm report DIR\n"
                "  Prints the node table and the best reward's path of the run in DIR, and writes\n"
                "  DIR/report.html: a self-contained page (graph of thoughts, each node's reward,\n"
                "  feedback and levels) that opens in a browser without a server.\n");
        return argc == 2 ? 0 : 2;
    }
    if (dirguard_command_dir("report", argv[1], "run directory", 1)) return 1;
    return run_report(argv[1], 1, 0);
}
