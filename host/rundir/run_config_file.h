/* run --config FILE (docs/loop.md#starting-from-a-config-file): a run
 * started from a config.json an earlier run wrote, or one written by hand
 * with only some of its keys.  The file's settings go over the defaults,
 * the command line's flags over the file's.  Its keys are those config.json
 * holds, nothing else; its values are checked as a resume checks them.  A
 * file never sends requests anywhere on its own: a model server other than
 * the default is used only when the command line names it too; nor does it
 * read a file on its own: an initial reward it names is read only when
 * --init-reward names it too (the reward's text goes into the run
 * directory and, rejected, into the model's prompts). */
#ifndef PCG_RUN_CONFIG_FILE_H
#define PCG_RUN_CONFIG_FILE_H
#include "run_config.h"

typedef struct {
    int has_task;    /* the file names a scenario or a story */
    int has_author;  /* the file names the author */
    char server[1024]; /* the server the file names, "" when none */
    char init_reward[1024]; /* the initial reward it names, "" when none */
} run_config_file_info;

/* The file over c.  0, or -1 with one line naming the file. */
int run_config_file_load(const char *path, run_config *c, run_config_file_info *info, char *err, int errlen);

/* After the flags: a server or an initial reward the file names but the
 * command line does not repeat (base_url_set, init_reward_set: the flags
 * were given) is refused.  0, or -1 with one line. */
int run_config_file_check(const char *path, const run_config_file_info *info, const run_config *c, int base_url_set,
                          int init_reward_set, char *err, int errlen);

#endif
