/* Guarded directories: a run, a grid, a training folder or a policy may
 * come from someone else (zipped, shared, downloaded with a paper's
 * artifacts), so nothing the engine opens, writes, lists or moves beneath
 * one is reached through a symbolic link at any level, and no ".." leads
 * out of it.  Where the kernel has openat2, RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS does the resolving; elsewhere a walk of openat calls
 * with O_NOFOLLOW, one component at a time, does the same.  The directory
 * itself, as the user named it, is trusted.
 *
 * The file functions of util.h call dirguard_resolve for every path, so a
 * command only registers its directories (dirguard_add); paths outside
 * every guarded directory behave as ordinary paths.  docs/sandbox.md holds
 * the threat table. */
#ifndef PCG_DIRGUARD_H
#define PCG_DIRGUARD_H
#include <limits.h>

#define DIRGUARD_MAX 16

/* Guard dir (it must exist) from now on in this process; what names it in
 * refusals ("run directory").  With scan, the directory is first searched
 * for symbolic links: one found anywhere beneath it is a refusal naming
 * it.  0, or -1 with one line in err. */
int dirguard_add(const char *dir, const char *what, int scan, char *err, int errlen);
/* For a command: guard dir if it exists (scanned when scan); a missing
 * one is left to the command to create or report.  0, or 1 after one line
 * "pcgrllm: CMD: ...". */
int dirguard_command_dir(const char *cmd, const char *dir, const char *what, int scan);
/* Forget every guarded directory (tests). */
void dirguard_reset(void);
/* 1: resolve by the openat walk even where openat2 exists (tests). */
void dirguard_force_walk(int on);

/* Where path's last component lives: fd is the directory holding it (or
 * AT_FDCWD for a path outside every guarded directory, or the guarded
 * directory itself), leaf its name relative to fd.  guarded: path lies
 * strictly beneath a guarded directory, so the caller opens the leaf with
 * O_NOFOLLOW / AT_SYMLINK_NOFOLLOW. */
typedef struct {
    int fd;
    int guarded;
    const char *leaf;
    char name[NAME_MAX + 1];
    char what[64];          /* the guarded directory's kind, for messages */
    char root[PATH_MAX];    /* and the path it was named by */
} dirguard_at;

/* 0, or -1 with errno set and one line in err: a symbolic link on the
 * way (ELOOP), a ".." (EXDEV), a missing or unreadable directory. */
int dirguard_resolve(const char *path, dirguard_at *at, char *err, int errlen);
void dirguard_release(dirguard_at *at);
/* mkdir -p beneath a guarded directory without following a link; other
 * paths as mkdir -p.  0, or -1 with errno and err. */
int dirguard_make_dirs(const char *path, char *err, int errlen);
/* The refusal for a symbolic link found at path: one line in err,
 * errno = ELOOP, returns -1. */
int dirguard_link_refusal(const dirguard_at *at, const char *path, char *err, int errlen);
/* The refusal for a file with more than one name (nlink) beneath a guarded
 * directory: a hard link may be another name of a file outside it (an
 * archive unpacked by a tool that keeps absolute link targets), read or
 * appended to through it.  One line in err, errno = EMLINK, returns -1. */
int dirguard_hard_link_refusal(const dirguard_at *at, const char *path, long nlink, char *err, int errlen);

#endif
