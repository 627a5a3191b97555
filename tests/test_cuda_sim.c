/* The simulation catches what it is there to catch: bugs planted in small
 * kernels (tests/sim/plants.cu, built by make cuda-sim beside the
 * simulation library), each run as the simulation runs the backend's. */
#include "harness.h"
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include "worker.h"

/* BUILD/DIR/sim_plants beside the test binary, or NULL. */
static const char *plants(const char *dir, char *path, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return NULL;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash) *slash = 0;
    snprintf(path, len, "%s/%s/sim_plants", self, dir);
    return access(path, X_OK) == 0 ? path : NULL;
}

static void sim_plants_caught(void **state)
{
    (void)state;
    char path[PATH_MAX + 32], out[8192];
    if (!plants("sim", path, sizeof path)) fail_msg("sim_plants_caught: %s not built (make cuda-sim)", path);
    /* launches past a device's limits are refused, naming the limit */
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s limits", path), 0);
    assert_non_null(strstr(out, "grid-y: refused: invalid configuration argument (simulated launch of "
                                "nothing_kernel: gridDim.y 70000 outside 1..65535)"));
    assert_non_null(strstr(out, "block: refused: "));
    assert_non_null(strstr(out, "blockDim.x 2048 outside 1..1024"));
    assert_non_null(strstr(out, "shared: refused: "));
    /* with its barriers a reduction is right in both thread orders; the
     * missing barrier gives a wrong sum in the forward one; a barrier half
     * the block skips fails the launch */
    assert_int_equal(pcg_test_sh(out, sizeof out, "PCGRLLM_SIM_ORDER=forward %s reduce", path), 0);
    assert_non_null(strstr(out, "reduce: sum 32896 of 32896 (no error)"));
    assert_null(strstr(out, "no-barrier: sum 32896 "));
    assert_non_null(strstr(out, "divergent: failed: "));
    assert_int_equal(pcg_test_sh(out, sizeof out, "PCGRLLM_SIM_ORDER=reverse %s reduce", path), 0);
    assert_non_null(strstr(out, "reduce: sum 32896 of 32896 (no error)"));
    /* a swapped transpose flag shows against a plain loop */
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s transpose", path), 0);
    assert_non_null(strstr(out, "transpose right: max error 0 "));
    assert_null(strstr(out, "transpose swapped: max error 0 "));
    /* a capture runs nothing, refuses a synchronisation and an allocation, and its graph
     * runs the kernel, the set and the product again at each launch */
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s capture", path), 0);
    assert_non_null(strstr(out, "capture-sync: synchronise operation not permitted when stream is capturing, end "
                                "operation failed due to a previous error during capture, graph none"));
    assert_non_null(strstr(out, "capture-alloc: allocate operation not permitted when stream is capturing, end "
                                "operation failed due to a previous error during capture, graph none"));
    assert_non_null(strstr(out, "capture-legacy: begin operation not permitted when stream is capturing"));
    assert_non_null(strstr(out, "capture: end no error; before a launch x 0 y 0"));
    assert_non_null(strstr(out, "capture: after two launches x 2 y 2"));
    /* one element past an array: only the sanitizer build (make cuda-sim
     * SAN=1) can see it, and does */
    if (plants("sim-san", path, sizeof path)) {
        int rc = pcg_test_sh(out, sizeof out, "ASAN_OPTIONS=detect_leaks=0 %s one-past 2>&1", path);
        assert_int_not_equal(rc, 0);
        assert_non_null(strstr(out, "heap-buffer-overflow"));
        assert_non_null(strstr(out, "one_past_kernel"));
        assert_null(strstr(out, "ran to the end"));
    } else {
        printf("sim_plants_caught: the one-past read needs the sanitizer build (make cuda-sim SAN=1): not built\n");
    }
}

/* The simulation's own variables take only what docs/cuda.md names: any
 * other value is refused with one line where the device is counted,
 * rather than quietly taking the default, and workers are given both. */
static void sim_env_values_refused(void **state)
{
    (void)state;
    char lib[PATH_MAX + 64], out[4096];
    if (!plants("sim", lib, sizeof lib)) fail_msg("sim_env_values_refused: %s not built (make cuda-sim)", lib);
    strcpy(strrchr(lib, '/'), "/libpcgrllm_cuda_sim.so");
    static const char *const bad[] = {"PCGRLLM_SIM_THREADS=abc", "PCGRLLM_SIM_THREADS=0", "PCGRLLM_SIM_THREADS=-2",
                                      "PCGRLLM_SIM_THREADS=4x", "PCGRLLM_SIM_THREADS=257",
                                      "PCGRLLM_SIM_THREADS=99999999999999999999", "PCGRLLM_SIM_ORDER=revers",
                                      "PCGRLLM_SIM_SMS=0",  "PCGRLLM_SIM_SMS=133",  "PCGRLLM_SIM_SMS=12a"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = pcg_test_sh(out, sizeof out, "%s PCGRLLM_CUDA_LIB=%s %s device --backend cuda", bad[i], lib,
                             pcg_test_binary());
        if (rc != 1 || pcg_test_count_lines(out) != 1 || !strstr(out, bad[i]))
            fail_msg("%s: exit %d: %s", bad[i], rc, out);
    }
    /* a value holding a newline is quoted on the one line with '?' for it */
    int nl = pcg_test_sh(out, sizeof out, "PCGRLLM_SIM_ORDER='re\nverse' PCGRLLM_CUDA_LIB=%s %s device --backend cuda",
                         lib, pcg_test_binary());
    if (nl != 1 || pcg_test_count_lines(out) != 1 || !strstr(out, "PCGRLLM_SIM_ORDER=re?verse"))
        fail_msg("a newline in PCGRLLM_SIM_ORDER: exit %d: %s", nl, out);
    static const char *const good[] = {"PCGRLLM_SIM_THREADS=3",     "PCGRLLM_SIM_THREADS=", "PCGRLLM_SIM_ORDER=reverse",
                                       "PCGRLLM_SIM_ORDER=forward", "PCGRLLM_SIM_SMS=1",    "PCGRLLM_SIM_SMS=132"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int rc = pcg_test_sh(out, sizeof out, "%s PCGRLLM_CUDA_LIB=%s %s device --backend cuda", good[i], lib,
                             pcg_test_binary());
        if (rc != 0 || !strstr(out, "simulated device")) fail_msg("%s: exit %d: %s", good[i], rc, out);
    }
    /* the worker that trains or checks loads the library: it gets them all */
    setenv("PCGRLLM_SIM_ORDER", "reverse", 1);
    setenv("PCGRLLM_SIM_THREADS", "3", 1);
    setenv("PCGRLLM_SIM_SMS", "20", 1);
    int seen = 0;
    for (char *const *e = worker_environment(); *e; e++)
        seen += !strcmp(*e, "PCGRLLM_SIM_ORDER=reverse") + !strcmp(*e, "PCGRLLM_SIM_THREADS=3") +
                !strcmp(*e, "PCGRLLM_SIM_SMS=20");
    unsetenv("PCGRLLM_SIM_ORDER");
    unsetenv("PCGRLLM_SIM_THREADS");
    unsetenv("PCGRLLM_SIM_SMS");
    assert_int_equal(seen, 3);
}

PCG_TESTS(cuda_sim, cmocka_unit_test(sim_plants_caught), cmocka_unit_test(sim_env_values_refused))
