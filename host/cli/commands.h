/* Every subcommand of pcgrllm: int cmd_NAME(int argc, char **argv), where
 * argv[0] is the subcommand name.  Return the process exit code. */
#ifndef PCG_COMMANDS_H
#define PCG_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_grid(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_ask(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_check_reward(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_levels(int argc, char **argv);
int cmd_play(int argc, char **argv);
int cmd_assess(int argc, char **argv);
int cmd_prefer(int argc, char **argv);
int prefer_refine(int argc, char **argv); /* cmd_prefer_refine.c */
int cmd_build(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_device(int argc, char **argv);
int cmd_edit(int argc, char **argv);

#endif
