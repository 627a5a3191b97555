/* Test registration: each tests/test_*.c ends with
 *     PCG_TESTS(area, cmocka_unit_test(a), cmocka_unit_test(b), ...)
 * and tests/main.c runs every registered test as one cmocka group, so the
 * run ends with cmocka's single summary. */
#ifndef PCG_TEST_HARNESS_H
#define PCG_TEST_HARNESS_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "level.h"
#include <math.h>

/* cmocka 1.1 compares floats only: doubles within eps (0 = exactly). */
#define assert_near(a, b, eps)                                                               \
    do {                                                                                     \
        double a_ = (a), b_ = (b);                                                           \
        if (!(fabs(a_ - b_) <= (eps))) fail_msg("%s = %.17g, expected %.17g", #a, a_, b_); \
    } while (0)

void pcg_test_register(const struct CMUnitTest *tests, size_t n);

#define PCG_TESTS(area, ...)                                                             \
    static const struct CMUnitTest area##_tests[] = {__VA_ARGS__};                       \
    __attribute__((constructor)) static void area##_register(void)                       \
    {                                                                                    \
        pcg_test_register(area##_tests, sizeof area##_tests / sizeof area##_tests[0]);   \
    }

/* Skip the test with one line saying why (test: its name).  Where a device
 * must be there (PCGRLLM_REQUIRE_DEVICE set, as the device check sets it),
 * a skip would hide a failure: the test fails with the same line instead. */
void pcg_test_skip(const char *test, const char *why);

/* backend_cuda_devices, except that the simulation library named by
 * PCGRLLM_CUDA_LIB (docs/cuda.md) counts as one device: the device tests
 * run against it where there is no GPU. */
int pcg_test_cuda_devices(char *why, int whylen);

/* Path of a scratch directory unique to this test process (created). */
const char *pcg_test_tmpdir(void);
/* Path of the built binary, for end-to-end tests of the CLI. */
const char *pcg_test_binary(void);
/* Run a shell command, capture stdout+stderr into out (may be NULL); returns exit code. */
int pcg_test_sh(char *out, size_t outlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Point PCGRLLM_PROMPTS at the source tree's prompts/ (tests run from the
 * repository root), so subprocesses find the templates wherever the binary is. */
void pcg_test_use_source_prompts(void);
/* 1 if path exists (any kind of file). */
int pcg_test_exists(const char *path);
/* A whole file (malloc'd, NUL-terminated), or NULL. */
char *pcg_test_slurp(const char *path);
/* DIR/NAME parsed as JSON (fails the test when it is not). */
struct json_t *pcg_test_json_in(const char *dir, const char *name);
/* The text of dir/name (malloc'd); fails the test without it. */
char *pcg_test_file_in(const char *dir, const char *name);
/* Occurrences of needle in s, and of '\n'. */
int pcg_test_count_of(const char *s, const char *needle);
int pcg_test_count_lines(const char *s);

/* `sh -c CMD` in the background with its output appended to log; its pid. */
int pcg_test_spawn(const char *cmd, const char *log);
/* Poll for path: 1 once it exists, 0 if process pid ended first (its wait
 * status in *status); fails the test after two minutes. */
int pcg_test_wait_for(const char *path, int pid, int *status);

/* A level drawn as text rows, one character a tile:
 * . EMPTY  # WALL  @ PLAYER  b BAT  s SCORPION  x SPIDER  k KEY  D DOOR  T TREASURE
 * (space: BORDER).  PCG_GRID(g, "row", "row", ...) fills g. */
typedef struct {
    level_t l;
    unsigned char t[PCG_MAX_CELLS];
} pcg_test_grid;
void pcg_test_grid_from(pcg_test_grid *g, const char *const *rows);
#define PCG_GRID(g, ...) pcg_test_grid_from(&(g), (const char *const[]){__VA_ARGS__, NULL})

/* tests/fake_openai.py on loopback with a script file; name keys its port
 * and request-log files in the scratch directory; key_env names the
 * variable holding the key the server expects. */
typedef struct {
    int pid;
    int port;
    char log[4096];
    char url[128]; /* http://127.0.0.1:PORT/v1 */
} pcg_fake_srv;
void pcg_test_srv_start(pcg_fake_srv *s, const char *script_path, const char *name, const char *key_env);
/* The same on a given port (0: a free one), e.g. to bring a server back. */
void pcg_test_srv_start_on(pcg_fake_srv *s, const char *script_path, const char *name, const char *key_env, int port);
void pcg_test_srv_stop(pcg_fake_srv *s);

#endif
