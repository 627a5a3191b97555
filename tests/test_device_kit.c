/* The device kit and what makes a device run trustworthy without a device
 * here: CUDA's libraries found inside a Python environment, skips that
 * turn into failures where a device is required, and the kit run from a
 * copy outside the source tree (docs/cuda.md). */
#define _GNU_SOURCE
#include "harness.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cuda_libs.h"

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
}

/* NVRTC and cuBLAS as a pip-installed CUDA lays them out: the newest
 * version in the active environment's nvidia/ folders is found. */
static void cuda_libs_found_in_python_env(void **state)
{
    (void)state;
    char venv[PATH_MAX], dir[PATH_MAX + 128], path[PATH_MAX + 160], found[4096];
    snprintf(venv, sizeof venv, "%s/venv", pcg_test_tmpdir());
    const char *parts[] = {"nvidia", "nvidia/cu13", "nvidia/cu13/lib", "nvidia/cuda_nvrtc",
                           "nvidia/cuda_nvrtc/lib"};
    char base[PATH_MAX + 64];
    snprintf(base, sizeof base, "%s/lib/python3.11/site-packages", venv);
    assert_int_equal(pcg_test_sh(NULL, 0, "mkdir -p '%s'", base), 0);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        snprintf(dir, sizeof dir, "%s/%s", base, parts[i]);
        mkdir(dir, 0755);
    }
    snprintf(path, sizeof path, "%s/nvidia/cu13/lib/libnvrtc.so.98", base);
    touch(path);
    snprintf(path, sizeof path, "%s/nvidia/cuda_nvrtc/lib/libnvrtc.so.99", base);
    touch(path);
    const char *old = getenv("VIRTUAL_ENV");
    char *saved = old ? strdup(old) : NULL;
    setenv("VIRTUAL_ENV", venv, 1);
    static const char *const nvrtc_parts[] = {"cuda_nvrtc", NULL};
    int rc = cuda_find_library("libnvrtc.so.[0-9]*", nvrtc_parts, found, sizeof found);
    int none = cuda_find_library("libnvrtc.so.nothing*", nvrtc_parts, dir, sizeof dir);
    if (saved) setenv("VIRTUAL_ENV", saved, 1);
    else unsetenv("VIRTUAL_ENV");
    free(saved);
    assert_int_equal(rc, 0);
    if (!strstr(found, "/nvidia/cuda_nvrtc/lib/libnvrtc.so.99")) fail_msg("found %s", found);
    assert_int_equal(none, -1);
}

/* With PCGRLLM_REQUIRE_DEVICE set (as the device check runs the tests), a
 * device test that cannot run fails with its reason instead of skipping. */
static void device_required_turns_skips_into_failures(void **state)
{
    (void)state;
    char self[PATH_MAX], out[8192];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = 0;
    /* a library that is not there: the test cannot run, device or not */
    int rc = pcg_test_sh(out, sizeof out, "PCGRLLM_CUDA_LIB=/nonexistent/lib.so '%s' cuda_env_matches_cpu", self);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "cuda_env_matches_cpu: skipped, "));
    rc = pcg_test_sh(out, sizeof out,
                     "PCGRLLM_REQUIRE_DEVICE=1 PCGRLLM_CUDA_LIB=/nonexistent/lib.so '%s' cuda_env_matches_cpu", self);
    assert_int_not_equal(rc, 0);
    if (!strstr(out, "cuda_env_matches_cpu: not skipped, a device is required here: ")) fail_msg("got: %s", out);
}

/* The kit, copied away from the source tree and run with a bare
 * environment, finds its own libraries and, with no GPU, says so in one
 * line with exit status 3 and a JSON summary. */
static void devkit_runs_outside_tree(void **state)
{
    (void)state;
    if (!pcg_test_exists("devkit/device_check.sh")) pcg_test_skip("devkit_runs_outside_tree", "devkit/ not built (make devkit)");
    char copy[PATH_MAX], out[8192];
    snprintf(copy, sizeof copy, "%s/kit-copy", pcg_test_tmpdir());
    assert_int_equal(pcg_test_sh(out, sizeof out, "rm -rf '%s' && cp -r devkit '%s'", copy, copy), 0);
    int rc = pcg_test_sh(out, sizeof out, "cd / && env -i PATH=/usr/bin:/bin HOME=/tmp bash '%s/device_check.sh' '%s/out'",
                         copy, copy);
    if (rc == 0) {
        /* a GPU machine: the check ran and passed */
        assert_non_null(strstr(out, "device_check: passed"));
        return;
    }
    assert_int_equal(rc, 3);
    if (strncmp(out, "device_check: no CUDA device: ", 30) || strchr(out, '\n') != out + strlen(out) - 1)
        fail_msg("want one line 'device_check: no CUDA device: ...', got: %s", out);
    char json[PATH_MAX + 64];
    snprintf(json, sizeof json, "%s/out/device_check.json", copy);
    assert_int_equal(pcg_test_sh(out, sizeof out, "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
                                                  "print(d[\"status\"], d[\"stages\"][0][\"name\"])' '%s'", json),
                     0);
    assert_string_equal(out, "no-device device\n");
    /* its libraries come from the kit, not from this machine */
    assert_int_equal(pcg_test_sh(out, sizeof out, "env -i ldd '%s/pcgrllm' | grep -c '%s/lib/'", copy, copy), 0);
    assert_true(atoi(out) >= 5);
    assert_int_equal(pcg_test_sh(out, sizeof out, "env -i '%s/pcgrllm' --version", copy), 0);
}

PCG_TESTS(device_kit, cmocka_unit_test(cuda_libs_found_in_python_env),
          cmocka_unit_test(device_required_turns_skips_into_failures), cmocka_unit_test(devkit_runs_outside_tree))
