/* Folders of plain-text data shipped with the binary (prompts/, the
 * Minecraft block mapping in minecraft/), which users may edit.
 *
 * A folder SUB is found as: the directory named by the environment
 * variable ENV if set; otherwise beside the binary (resolved through
 * /proc/self/exe): BINDIR/SUB (the source tree), BINDIR/../SUB (a build
 * folder one level down), BINDIR/../share/pcgrllm/SUB (installed), the
 * first that holds the file MARKER. */
#ifndef PCG_DATADIR_H
#define PCG_DATADIR_H
#include <stddef.h>

typedef struct {
    const char *sub;    /* folder name, e.g. "prompts" */
    const char *marker; /* a file that must be in it, e.g. "system.txt" */
    const char *what;   /* for messages, e.g. "prompt templates" */
    const char *env;    /* the overriding variable, e.g. "PCGRLLM_PROMPTS" */
} datadir_spec;

/* The folder for a binary at exe.  0, or -1 with one line in err naming
 * where it looked and the variable to set. */
int datadir_for_exe(const datadir_spec *d, const char *exe, char *out, size_t outlen, char *err, int errlen);
/* $ENV, or the folder beside this binary.  0 or -1 with err. */
int datadir_find(const datadir_spec *d, char *out, size_t outlen, char *err, int errlen);

#endif
