/* The release and the source commit of this build, for --version and for
 * the files that record how a result was made. */
#ifndef PCG_VERSION_H
#define PCG_VERSION_H

/* The release, e.g. "0.1.0". */
const char *pcg_version(void);
/* `git describe --always --dirty --abbrev=12` of the tree this binary was
 * built from, or "" when it was not built from a git checkout (a tarball,
 * or no git at build time). */
const char *pcg_commit(void);

#endif
