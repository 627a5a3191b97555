/* The only place the release is written.  PCG_COMMIT comes from the
 * Makefile, for this file alone, so that a new commit rebuilds version.o
 * and nothing else. */
#include "version.h"

#define PCG_VERSION "0.1.0"
#ifndef PCG_COMMIT
#define PCG_COMMIT ""
#endif

const char *pcg_version(void)
{
    return PCG_VERSION;
}

const char *pcg_commit(void)
{
    return PCG_COMMIT;
}
