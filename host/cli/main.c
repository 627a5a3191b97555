/* pcgrllm: LLM-designed rewards for PCGRL, trained and proved on CPU or GPU.
 * Every command is listed here. */
#include "commands.h"
#include "cpus.h"
#include "version.h"
#include "worker.h"
#include "worker_roles.h"
#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"run", cmd_run, "design rewards for a story: generate, align, train, evaluate, feed back, search"},
    {"grid", cmd_grid, "many runs at once: scenarios x pe x ablations x repeats, on CPUs or GPUs, summarised"},
    {"report", cmd_report, "print a run's node table again and write its HTML report"},
    {"ask", cmd_ask, "send one prompt to the configured language model server and print the reply"},
    {"edit", cmd_edit, "edit a level toward a path-length target through checked tool calls (the harness)"},
    {"eval", cmd_eval, "score level files against a scenario (fitness, per-level metrics)"},
    {"check-reward", cmd_check_reward, "compile a reward, validate it in the sandbox, print its statistics"},
    {"train", cmd_train, "train a PPO level generator on a reward (CPU or GPU), with checkpoints and metrics"},
    {"generate", cmd_generate, "levels from a trained policy: one episode on the fixed evaluation maps"},
    {"levels", cmd_levels, "write starting maps, or maps after an episode of random play"},
    {"assess", cmd_assess, "rate recorded plays on twelve experience dimensions and overall (offline or model judge)"},
    {"prefer", cmd_prefer, "per-persona preference models (prefer fit), the judge benchmark (prefer bench), refinement for a persona (prefer refine)"},
    {"play", cmd_play, "record playthroughs of levels (route, explorer or model player) as JSON lines"},
    {"build", cmd_build, "a level for a target, joined from certified pieces and verified by the evaluator"},
    {"show", cmd_show, "print a level in the terminal with a legend"},
    {"render", cmd_render, "draw a level as a PNG"},
    {"export", cmd_export, "levels as a Minecraft datapack and structure files (--minecraft), to walk through"},
    {"bench", cmd_bench, "throughput tables: environment, evaluator, reward JIT, training"},
    {"device", cmd_device, "the compute backend (--backend cpu|cuda|auto), its GPU, device env steps/s"},
};
#define N_COMMANDS (int)(sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "pcgrllm %s - language-model reward design for PCGRL level generators\n\n", pcg_version());
    fprintf(f, "usage: pcgrllm COMMAND [options]    (pcgrllm COMMAND --help for its options)\n\ncommands:\n");
    for (int i = 0; i < N_COMMANDS; i++) fprintf(f, "  %-13s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nDocumentation: README.md and docs/ in the source tree.\n");
}

int main(int argc, char **argv)
{
    worker_set_roles(pcg_worker_roles, pcg_n_worker_roles);
    int w = worker_dispatch(argc, argv); /* the engine's own worker processes */
    if (w >= 0) return w;
    /* threads for the CPUs this process may use and that are free */
    cpus_apply_default();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        if (*pcg_commit())
            printf("pcgrllm %s (commit %s)\n", pcg_version(), pcg_commit());
        else
            printf("pcgrllm %s\n", pcg_version());
        return 0;
    }
    for (int i = 0; i < N_COMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "pcgrllm: unknown command '%s' (pcgrllm --help lists the commands)\n", argv[1]);
    return 2;
}
