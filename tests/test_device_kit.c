/* The device kit and what makes a device run trustworthy without a device
 * here: CUDA's libraries found inside a Python environment or only where
 * PCGRLLM_CUDA_LIB_PATH says, the libraries `device --libraries` reports,
 * skips that turn into failures where a device is required, and the kit
 * run from a copy outside the source tree: its library lines, its
 * deadline, cuBLAS and NVRTC hidden (docs/cuda.md). */
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
 * version in the active environment's nvidia/ folders is found, each
 * library on its own (a CUDA 12 wheel layout keeps cuBLAS and NVRTC in
 * separate folders, neither holding the other). */
static void device_kit_libs_in_python_env(void **state)
{
    (void)state;
    char venv[PATH_MAX], dir[PATH_MAX + 128], path[PATH_MAX + 160], found[4096], blas[4096];
    snprintf(venv, sizeof venv, "%s/venv", pcg_test_tmpdir());
    const char *parts[] = {"nvidia", "nvidia/cu13", "nvidia/cu13/lib", "nvidia/cuda_nvrtc",
                           "nvidia/cuda_nvrtc/lib", "nvidia/cublas", "nvidia/cublas/lib"};
    char base[PATH_MAX + 64];
    snprintf(base, sizeof base, "%s/lib/python3.11/site-packages", venv);
    assert_int_equal(pcg_test_sh(NULL, 0, "mkdir -p '%s'", base), 0);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        snprintf(dir, sizeof dir, "%s/%s", base, parts[i]);
        mkdir(dir, 0755);
    }
    static const char *const files[] = {"cu13/lib/libnvrtc.so.98", "cuda_nvrtc/lib/libnvrtc.so.99",
                                        "cublas/lib/libcublas.so.12"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/nvidia/%s", base, files[i]);
        touch(path);
    }
    const char *old = getenv("VIRTUAL_ENV");
    char *saved = old ? strdup(old) : NULL;
    setenv("VIRTUAL_ENV", venv, 1);
    static const char *const nvrtc_parts[] = {"cuda_nvrtc", NULL}, *const blas_parts[] = {"cublas", NULL};
    int rc = cuda_find_library("libnvrtc.so.[0-9]*", nvrtc_parts, found, sizeof found);
    int rc_blas = cuda_find_library("libcublas.so.12", blas_parts, blas, sizeof blas);
    int none = cuda_find_library("libnvrtc.so.nothing*", nvrtc_parts, dir, sizeof dir);
    if (saved) setenv("VIRTUAL_ENV", saved, 1);
    else unsetenv("VIRTUAL_ENV");
    free(saved);
    assert_int_equal(rc, 0);
    if (!strstr(found, "/nvidia/cuda_nvrtc/lib/libnvrtc.so.99")) fail_msg("found %s", found);
    assert_int_equal(rc_blas, 0);
    if (!strstr(blas, "/nvidia/cublas/lib/libcublas.so.12")) fail_msg("found %s", blas);
    assert_int_equal(none, -1);
}

/* PCGRLLM_CUDA_LIB_PATH is the only place looked in when it is set: a
 * file there is the one opened (an empty file: the loader's reason names
 * it), and set empty it hides the library, with one line saying so. */
static void device_kit_lib_path_searched_alone(void **state)
{
    (void)state;
    char dir[PATH_MAX], path[PATH_MAX + 64], got[4096], why[700];
    snprintf(dir, sizeof dir, "%s/libpath", pcg_test_tmpdir());
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/libcublas.so.77", dir);
    touch(path);
    static const char *const names[] = {"libc.so.6", NULL}; /* the loader would find this one */
    char list[PATH_MAX + 32];
    snprintf(list, sizeof list, "/nonexistent:%s", dir);
    setenv("PCGRLLM_CUDA_LIB_PATH", list, 1);
    void *h = cuda_open_library(names, "libcublas.so.[0-9]*", NULL, got, sizeof got, why, sizeof why);
    assert_null(h);
    if (!strstr(why, path)) fail_msg("want the loader's reason for %s, got: %s", path, why);
    setenv("PCGRLLM_CUDA_LIB_PATH", "", 1);
    h = cuda_open_library(names, "libcublas.so.[0-9]*", NULL, got, sizeof got, why, sizeof why);
    unsetenv("PCGRLLM_CUDA_LIB_PATH");
    assert_null(h);
    assert_string_equal(why, "no libcublas.so.[0-9]* in PCGRLLM_CUDA_LIB_PATH (set empty)");
    /* unset: the loader's own search */
    h = cuda_open_library(names, "libcublas.so.[0-9]*", NULL, got, sizeof got, why, sizeof why);
    assert_non_null(h);
    assert_non_null(strstr(got, "libc.so.6"));
}

/* A library named by a variable must be a plain file: a FIFO (which the
 * loader would wait on forever), a directory or a loop of links is one
 * line naming it, for the backend library, NVRTC and cuBLAS alike. */
static void device_kit_library_not_a_file(void **state)
{
    (void)state;
    char fifo[PATH_MAX], loop[PATH_MAX], loop2[PATH_MAX], why[700], got[4096], out[8192];
    const char *tmp = pcg_test_tmpdir(), *bin = pcg_test_binary();
    snprintf(fifo, sizeof fifo, "%s/lib-fifo.so", tmp);
    snprintf(loop, sizeof loop, "%s/lib-loop.so", tmp);
    snprintf(loop2, sizeof loop2, "%s/lib-loop2.so", tmp);
    unlink(fifo), unlink(loop), unlink(loop2);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(symlink(loop2, loop), 0);
    assert_int_equal(symlink(loop, loop2), 0);
    assert_null(cuda_open_file(fifo, got, sizeof got, why, sizeof why));
    if (!strstr(why, "lib-fifo.so: not a regular file")) fail_msg("FIFO: %s", why);
    assert_null(cuda_open_file(tmp, got, sizeof got, why, sizeof why));
    if (!strstr(why, ": not a regular file")) fail_msg("directory: %s", why);
    assert_null(cuda_open_file(loop, got, sizeof got, why, sizeof why));
    if (!strstr(why, "lib-loop.so: Too many levels of symbolic links")) fail_msg("loop: %s", why);
    const char *files[] = {fifo, loop};
    for (int i = 0; i < 2; i++) {
        int rc = pcg_test_sh(out, sizeof out, "PCGRLLM_CUDA_LIB=%s timeout 30 %s device --backend cuda", files[i], bin);
        if (rc != 1 || pcg_test_count_lines(out) != 1 || !strstr(out, files[i]))
            fail_msg("PCGRLLM_CUDA_LIB=%s: exit %d: %s", files[i], rc, out);
    }
    assert_int_equal(pcg_test_sh(out, sizeof out, "PCGRLLM_NVRTC=%s PCGRLLM_CUBLAS=%s timeout 30 %s device --libraries",
                                 fifo, fifo, bin),
                     0);
    if (!strstr(out, "NVRTC: not found: NVRTC not available (PCGRLLM_NVRTC: ") || !strstr(out, "lib-fifo.so: not a regular file)"))
        fail_msg("NVRTC from a FIFO: %s", out);
    assert_non_null(strstr(out, "\ncuBLAS: not found: "));
    assert_non_null(strstr(out, "lib-fifo.so: not a regular file; the built-in tiled sgemm stands in\n"));
    unlink(fifo), unlink(loop), unlink(loop2);
}

/* device --libraries: glibc's version and one line per library, each the
 * file it comes from or why there is none; PCGRLLM_CUBLAS=off and
 * PCGRLLM_NVRTC=off, or an empty PCGRLLM_CUDA_LIB_PATH, take them away. */
static void device_kit_libraries_lines(void **state)
{
    (void)state;
    char out[8192];
    const char *bin = pcg_test_binary();
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s device --libraries", bin), 0);
    static const char *const heads[] = {"glibc: ", "driver: ", "backend: ", "cuBLAS: ", "NVRTC: "};
    const char *p = out;
    for (int i = 0; i < 5; i++, p = strchr(p, '\n') + 1)
        if (strncmp(p, heads[i], strlen(heads[i])) || !strchr(p, '\n')) fail_msg("line %d is not '%s...': %s", i + 1, heads[i], out);
    assert_int_equal(*p, 0);
    assert_int_equal(pcg_test_sh(out, sizeof out, "PCGRLLM_CUBLAS=off PCGRLLM_NVRTC=off %s device --libraries", bin), 0);
    assert_non_null(strstr(out, "\ncuBLAS: not found: turned off by PCGRLLM_CUBLAS=off; the built-in tiled sgemm stands in\n"));
    assert_non_null(strstr(out, "\nNVRTC: not found: NVRTC not available (turned off by PCGRLLM_NVRTC=off)\n"));
    assert_int_equal(pcg_test_sh(out, sizeof out, "PCGRLLM_CUDA_LIB_PATH= %s device --libraries", bin), 0);
    assert_non_null(strstr(out, "\ncuBLAS: not found: no libcublas.so."));
    assert_non_null(strstr(out, "\nNVRTC: not found: NVRTC not available (no libnvrtc.so.[0-9]* in PCGRLLM_CUDA_LIB_PATH (set empty))\n"));
}

/* With PCGRLLM_REQUIRE_DEVICE set (as the device check runs the tests), a
 * device test that cannot run fails with its reason instead of skipping. */
static void device_kit_skips_fail_where_required(void **state)
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

/* The kit copied away from the source tree (once per test process), or
 * skip when it is not built; its path in copy. */
static void kit_copy_or_skip(const char *test, char *copy, size_t len)
{
    static int copied;
    if (!pcg_test_exists("devkit/device_check.sh")) pcg_test_skip(test, "devkit/ not built (make devkit)");
    snprintf(copy, len, "%s/kit-copy", pcg_test_tmpdir());
    char out[4096];
    if (!copied && pcg_test_sh(out, sizeof out, "rm -rf '%s' && cp -r devkit '%s'", copy, copy))
        fail_msg("cannot copy the kit: %s", out);
    copied = 1;
}

/* The check's JSON summary as "STATUS stage:status,stage:status,...". */
static void summary_of(const char *copy, char *out, size_t len)
{
    char cmd[PATH_MAX + 400];
    snprintf(cmd, sizeof cmd, "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d[\"status\"], "
             "\",\".join(s[\"name\"] + \":\" + s[\"status\"] for s in d[\"stages\"]))' '%s/out/device_check.json'", copy);
    assert_int_equal(pcg_test_sh(out, len, "%s", cmd), 0);
}

/* The lines before the first stage: glibc (with what the kit needs), the
 * driver, the backend library, cuBLAS and NVRTC, the kit's libraries. */
static const char *after_library_lines(const char *out)
{
    static const char *const heads[] = {"device_check: glibc: ", "device_check: driver: ", "device_check: backend: ",
                                        "device_check: cuBLAS: ", "device_check: NVRTC: ", "device_check: kit: "};
    const char *p = out;
    for (int i = 0; i < 6; i++) {
        if (strncmp(p, heads[i], strlen(heads[i])) || !strchr(p, '\n'))
            fail_msg("line %d is not '%s...': %s", i + 1, heads[i], out);
        p = strchr(p, '\n') + 1;
    }
    if (!strstr(out, "(the kit needs 2.")) fail_msg("no glibc version the kit needs: %s", out);
    return p;
}

/* The kit, copied away from the source tree and run with a bare
 * environment, finds its own libraries and, with no GPU, says so in one
 * line with exit status 3 and a JSON summary naming every stage. */
static void device_kit_runs_outside_tree(void **state)
{
    (void)state;
    char copy[PATH_MAX], out[8192];
    kit_copy_or_skip("device_kit_runs_outside_tree", copy, sizeof copy);
    int rc = pcg_test_sh(out, sizeof out, "cd / && env -i PATH=/usr/bin:/bin HOME=/tmp bash '%s/device_check.sh' '%s/out'",
                         copy, copy);
    if (rc == 0) {
        /* a GPU machine: the check ran and passed */
        assert_non_null(strstr(out, "device_check: passed"));
        return;
    }
    assert_int_equal(rc, 3);
    const char *last = after_library_lines(out);
    if (strncmp(last, "device_check: no CUDA device: ", 30) || strchr(last, '\n') != last + strlen(last) - 1)
        fail_msg("want one line 'device_check: no CUDA device: ...' after the libraries, got: %s", out);
    summary_of(copy, out, sizeof out);
    assert_string_equal(out, "no-device device:failed,tests:skipped: no device,nvrtc-tests:skipped: no device,"
                             "env:skipped: no device,train:skipped: no device,e2e:skipped: no device\n");
    /* its libraries come from the kit, not from this machine, without
     * LD_LIBRARY_PATH: the binaries' RPATH serves the libraries' own
     * dependencies too */
    assert_int_equal(pcg_test_sh(out, sizeof out, "env -i ldd '%s/pcgrllm' | grep -c '%s/.*lib/'", copy, copy), 0);
    assert_true(atoi(out) >= 15);
    assert_int_not_equal(pcg_test_sh(out, sizeof out, "env -i ldd '%s/pcgrllm' '%s/pcgrllm_tests' | grep 'not found'",
                                     copy, copy), 0);
    assert_int_equal(pcg_test_sh(out, sizeof out, "env -i '%s/pcgrllm' --version", copy), 0);
}

/* One deadline for the whole check: with none left, every stage is
 * recorded as skipped for it (exit 4, nothing was checked).  With cuBLAS
 * and NVRTC hidden (an empty PCGRLLM_CUDA_LIB_PATH), the library lines say
 * so and the stages that need NVRTC are skipped for that, whatever else
 * happens, never failed. */
static void device_kit_deadline_and_hidden_libraries(void **state)
{
    (void)state;
    char copy[PATH_MAX], out[8192];
    kit_copy_or_skip("device_kit_deadline_and_hidden_libraries", copy, sizeof copy);
    int rc = pcg_test_sh(out, sizeof out, "cd / && env -i PATH=/usr/bin:/bin HOME=/tmp DEVICE_CHECK_DEADLINE=0 "
                         "bash '%s/device_check.sh' '%s/out'", copy, copy);
    assert_int_equal(rc, 4);
    const char *rest = after_library_lines(out);
    static const char want[] = "device_check: device: skipped: deadline\n"
                               "device_check: deadline: 0 s were not enough to reach the device stage; ";
    if (strncmp(rest, want, sizeof want - 1) || pcg_test_count_lines(rest) != 2)
        fail_msg("want the device stage skipped and the deadline line, got: %s", rest);
    summary_of(copy, out, sizeof out);
    assert_string_equal(out, "deadline device:skipped: deadline,tests:skipped: deadline,nvrtc-tests:skipped: deadline,"
                             "env:skipped: deadline,train:skipped: deadline,e2e:skipped: deadline\n");
    /* hidden libraries, and again no time: quick and the same with a GPU */
    rc = pcg_test_sh(out, sizeof out, "cd / && env -i PATH=/usr/bin:/bin HOME=/tmp PCGRLLM_CUDA_LIB_PATH= "
                     "DEVICE_CHECK_DEADLINE=0 bash '%s/device_check.sh' '%s/out'", copy, copy);
    assert_int_equal(rc, 4);
    after_library_lines(out);
    assert_non_null(strstr(out, "\ndevice_check: cuBLAS: not found: "));
    assert_non_null(strstr(out, "\ndevice_check: NVRTC: not found: "));
    summary_of(copy, out, sizeof out);
    assert_string_equal(out, "deadline device:skipped: deadline,tests:skipped: deadline,nvrtc-tests:skipped: no NVRTC,"
                             "env:skipped: deadline,train:skipped: deadline,e2e:skipped: no NVRTC\n");
}

/* DEVICE_CHECK_DEADLINE is read in base 10 (08 is eight seconds, not an
 * octal error) and refused, one line and exit 1, when it is not a whole
 * number or has more digits than the arithmetic should carry.  The script
 * from the tree, not the kit: all of this happens before a stage runs. */
static void device_kit_deadline_values(void **state)
{
    (void)state;
    char out[8192];
    const char *tmp = pcg_test_tmpdir();
    static const char *const bad[] = {"-5", "1e3", " 5", "9999999", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = pcg_test_sh(out, sizeof out, "DEVICE_CHECK_DEADLINE='%s' bash bench/device_check.sh '%s/dl-out' 2>&1",
                             bad[i], tmp);
        if (rc != 1 || pcg_test_count_lines(out) != 1 || !strstr(out, "DEVICE_CHECK_DEADLINE must be a whole number"))
            fail_msg("DEVICE_CHECK_DEADLINE='%s': exit %d: %s", bad[i], rc, out);
    }
    int rc = pcg_test_sh(out, sizeof out, "DEVICE_CHECK_DEADLINE=08 bash bench/device_check.sh '%s/dl-out' 2>&1", tmp);
    if (rc != 4 || !strstr(out, "deadline: 8 s were not enough") || strstr(out, "octal"))
        fail_msg("DEVICE_CHECK_DEADLINE=08: exit %d: %s", rc, out);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/dl-out/device_check.json", tmp);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    fclose(f);
    out[n] = 0;
    if (!strstr(out, "\"deadline_s\": 8,")) fail_msg("the summary's deadline: %s", out);
}

/* The kit from a copy outside the tree with cuBLAS and NVRTC hidden,
 * against the simulation library instead of a GPU: the library loads (the
 * device stage passes), the stages that need NVRTC say so, and no stage
 * fails (a stage the deadline cuts short is timed out or skipped). */
static void device_kit_hidden_libraries_on_the_simulation(void **state)
{
    (void)state;
    char copy[PATH_MAX], out[8192];
    kit_copy_or_skip("device_kit_hidden_libraries_on_the_simulation", copy, sizeof copy);
    if (!pcg_test_exists("build/sim/libpcgrllm_cuda_sim.so"))
        fail_msg("build/sim/libpcgrllm_cuda_sim.so not built (make cuda-sim)");
    assert_int_equal(pcg_test_sh(out, sizeof out, "cp build/sim/libpcgrllm_cuda_sim.so '%s/'", copy), 0);
    pcg_test_sh(out, sizeof out,
                "cd / && env -i PATH=/usr/bin:/bin HOME=/tmp PCGRLLM_CUDA_LIB_PATH= "
                "PCGRLLM_CUDA_LIB='%s/libpcgrllm_cuda_sim.so' DEVICE_CHECK_DEADLINE=40 "
                "bash '%s/device_check.sh' '%s/out'",
                copy, copy, copy);
    assert_non_null(strstr(out, "\ndevice_check: cuBLAS: not found: "));
    assert_non_null(strstr(out, "\ndevice_check: NVRTC: not found: "));
    summary_of(copy, out, sizeof out);
    if (!strstr(out, "device:passed,") || !strstr(out, "nvrtc-tests:skipped: no NVRTC") ||
        !strstr(out, "e2e:skipped: no NVRTC") || strstr(out, ":failed"))
        fail_msg("want the device stage passed, the NVRTC stages skipped for it and no stage failed: %s", out);
}

PCG_TESTS(device_kit, cmocka_unit_test(device_kit_libs_in_python_env), cmocka_unit_test(device_kit_lib_path_searched_alone),
          cmocka_unit_test(device_kit_libraries_lines), cmocka_unit_test(device_kit_library_not_a_file),
          cmocka_unit_test(device_kit_skips_fail_where_required),
          cmocka_unit_test(device_kit_runs_outside_tree), cmocka_unit_test(device_kit_deadline_and_hidden_libraries),
          cmocka_unit_test(device_kit_deadline_values),
          cmocka_unit_test(device_kit_hidden_libraries_on_the_simulation))
