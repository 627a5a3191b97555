/* The layers of docs/architecture.md hold in the code: every #include of
 * host/, reward_jit/ and bench/ points down the table, header names are
 * unique, and every folder of host/ has its row (scripts/check-layers.py). */
#include "harness.h"
#include <stdio.h>
#include <string.h>

static void layers_point_down(void **state)
{
    (void)state;
    char out[16384];
    int rc = pcg_test_sh(out, sizeof out, "python3 scripts/check-layers.py");
    if (rc != 0) fail_msg("scripts/check-layers.py exited %d:\n%s", rc, out);
    assert_non_null(strstr(out, "every include points down"));
}

/* The check finds an include that points up (run on a copy of the tree
 * with one planted). */
static void layers_check_catches_an_upward_include(void **state)
{
    (void)state;
    char out[16384];
    const char *tmp = pcg_test_tmpdir();
    int rc = pcg_test_sh(out, sizeof out,
                         "rm -rf %s/layers && mkdir -p %s/layers && cp -r docs host reward_jit bench %s/layers/ && "
                         "printf '#include \"run.h\"\\n' >> %s/layers/host/core/eval.c && "
                         "python3 scripts/check-layers.py %s/layers",
                         tmp, tmp, tmp, tmp, tmp);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "host/core/eval.c:"));
    assert_non_null(strstr(out, "includes run.h (host/loop/), which is above host/core/"));
}

PCG_TESTS(layers, cmocka_unit_test(layers_point_down), cmocka_unit_test(layers_check_catches_an_upward_include))
