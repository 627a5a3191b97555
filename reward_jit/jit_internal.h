/* Internal to reward_jit/: the compilers as they run inside a worker
 * process (reward_jit/sandbox.c starts the workers), the fault handling of
 * the validation worker (reward_jit/fault.c) and the source diagnostics
 * shared by the scan and the libtcc messages (reward_jit/diagnose.c). */
#ifndef PCG_JIT_INTERNAL_H
#define PCG_JIT_INTERNAL_H
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include "reward_jit.h"

/* The job of the compile-cuda worker: this header, then the source (the
 * caller has scanned it: reward_scan). */
typedef struct {
    char arch[16];
    int32_t max_side;
    int32_t unscanned; /* 1: compile without reward_scan -- only the sandbox's
                        * tests set it, to show the filter alone keeps files shut */
    double timeout_s;
} nvrtc_job;

/* NVRTC in this process (reward_compile_nvrtc_ex's contract).  Only a
 * confined worker calls it. */
int nvrtc_compile_here(const char *src, const char *arch, int max_side, int scan, char **cubin, size_t *cubin_len,
                       char *err, int errlen);

/* ---- the source as the preprocessor reads it (reward_jit.c) ---- */

typedef struct {
    char *text; /* source with backslash-newline splices removed */
    int *line;  /* physical line number (1-based) of each byte of text */
    size_t len;
} spliced;
/* 0, or -1 when out of memory; free both arrays afterwards. */
int jit_splice(const char *src, spliced *s);

/* ---- diagnostics (diagnose.c) ---- */

/* The lexical check of compute_reward's declarations (both backends, from
 * reward_scan): 0, or -1 with "line N: compute_reward must return float
 * and take (...); it returns double". */
int jit_check_signature(const spliced *s, char *err, int errlen);
/* libtcc's first message made fit for the model (msg holds it, "line N:
 * ..." already): hints for opaque types and reserved names, and a missing
 * ';' moved to the line where the statement ended. */
void jit_explain(const char *src, char *msg, size_t len);
/* A compiler that misses a ';' reports the token after it, got, on line
 * `line`.  When got is the first token of that line and occurs once on
 * it, the statement ended on the line of the token before: that line is
 * returned; 0 when it is not so. */
int jit_statement_end(const char *src, int line, const char *got);
/* Line of the first use of identifier name outside comments and strings,
 * 0 if none (reward_jit.c). */
int jit_ident_line(const char *src, const char *name);
/* 1 if name is one of the reward API's symbols (api_host.c). */
int jit_is_api_symbol(const char *name);
/* Add them to a libtcc state (a TCCState *), those named in the n
 * helpers (reward_jit.h) as the helpers give them. */
struct TCCState;
void jit_add_api_symbols(struct TCCState *s, const reward_helper *helpers, int n);

/* ---- progress lines of a check (progress.c) ---- */

typedef struct {
    double t0, next;
} jit_progress;
void jit_progress_start(jit_progress *p);
/* A line saying where the check is (where: "compiling", ...) when the
 * interval of reward_check_progress has passed since the last. */
void jit_progress_tick(jit_progress *p, const char *where);

/* ---- what the validation worker knows while the reward runs ---- */

/* The reward's stack ends below this address while compute_reward runs
 * on this thread (reward_prog_call sets it, NULL otherwise): every array
 * of the reward lies below it. */
extern __thread const char *jit_call_top;
/* Called by find_tiles when max is larger than an array on the reward's
 * stack can be (room: the most ints that fit before jit_call_top); NULL
 * outside validation, where find_tiles then writes at most room ints. */
extern void (*jit_find_tiles_overflow)(int max, int room);

/* The API functions that take a level, in the order of api_names. */
enum { API_LEVEL_HEIGHT, API_LEVEL_WIDTH, API_TILE_AT, API_COUNT_TILES, API_FIND_TILES, API_PATH_LENGTH,
       API_NEAREST_TILE_DISTANCE, API_COUNT_REGIONS, API_PATH_LENGTH_THROUGH, N_API_LEVEL_FUNCTIONS };
/* Called by each of them with the level it was given; NULL outside
 * validation, where it checks that the level is one the worker passed. */
extern void (*jit_check_level)(const void *l, int api);

/* Fault kinds: classified in the worker (fault.c), worded by the caller. */
enum {
    FAULT_NONE,
    FAULT_COMPILER,    /* the compiler crashed on this source */
    FAULT_SYSCALL,
    FAULT_CPU_LIMIT,
    FAULT_DIV_ZERO,
    FAULT_DIV_OVERFLOW,
    FAULT_ARITHMETIC,
    FAULT_LEVEL_WRITE,
    FAULT_STATE_WRITE,
    FAULT_EXEC_DATA,
    FAULT_NULL,
    FAULT_STACK,
    FAULT_BAD_ADDRESS,
    FAULT_SIGNAL,      /* another signal; its number follows */
    FAULT_SETUP,       /* the worker could not confine itself */
    FAULT_NO_COMPILE,  /* accepted by the compile worker, refused here */
    FAULT_RETURN_SMASHED, /* a ret to an address that is not code */
    FAULT_CALL_BAD,       /* a call to an address that is not code */
    FAULT_PAST_STACK,     /* an access past the top of the stack */
    FAULT_BELOW_SP,       /* an access far below the stack pointer */
    FAULT_NEAR_LEVEL,     /* an access just outside the level's tiles or headers */
    FAULT_FIND_TILES_MAX, /* find_tiles' max larger than the arrays can be */
    FAULT_BAD_LEVEL,      /* an API function given a level the worker did not pass */
    N_FAULTS
};

/* The validation worker's fault message. */
#define MSG_FAULT 'F'
typedef struct {
    unsigned char tag, kind, sig, pad;
    int32_t a, b; /* FAULT_FIND_TILES_MAX: max, room; FAULT_BAD_LEVEL: API_* */
} fault_msg;

/* Memory the worker passes the reward, for the fault classification. */
typedef struct {
    const char *img_lo, *tiles_lo, *hdr_lo, *stack_top;
    size_t img_len, tiles_len, hdr_len;
} fault_map;
extern fault_map jit_fault_map;
/* 0 setup, 1 compiling, 2 running the reward. */
extern volatile sig_atomic_t jit_fault_phase;

/* Handlers for every crash signal on an alternate stack; each sends one
 * fault message and ends the process.  Also routes find_tiles' overflow
 * to a FAULT_FIND_TILES_MAX message.  0, or -1. */
int fault_install(void);
void fault_send(int kind, int sig, int a, int b);
/* The reason a fault gets, fit for the model. */
void fault_text(const fault_msg *f, char *buf, int len);

#endif
