/* What `pcgrllm device` prints and measures once its flags are read: the
 * backend --backend selects and its device; with the CUDA backend the
 * sgemm rate (fp32, TF32, bf16), the device trainer's steps/s, the device
 * environment's steps/s per observation thread mapping, and the matmul
 * modes compared on the fitness of trained policies. */
#ifndef PCG_DEVICE_BENCH_H
#define PCG_DEVICE_BENCH_H
#include <stdint.h>

enum { DEVICE_BENCH_MAX_ENVS = 16 };

typedef struct {
    const char *backend;     /* cpu, cuda or auto */
    const char *reward_path; /* a reward module or source launched every step; NULL: none */
    int bench, sgemm, train; /* the tables asked for */
    int compare;             /* --compare-math: the scenario; 0: not asked */
    int compare_seeds;
    long compare_steps;
    int envs[DEVICE_BENCH_MAX_ENVS], n_envs; /* environment counts of the env table */
    int mappings[2], n_map;  /* PCG_OBS_* of the env table */
    double seconds;          /* time per measurement */
    uint64_t seed;
} device_bench_opts;

/* Prints the backend and device lines, then the tables asked for.  Each
 * failure is one line "device: ..." on stderr.  The exit status: 0, or 1
 * (no device to measure, a device error, a refused --reward, a failed
 * measurement). */
int device_bench_run(const device_bench_opts *o);

/* --libraries: glibc's version and the file of each library the CUDA
 * backend would use (driver, backend library, cuBLAS, NVRTC) or why there
 * is none, one line each, on stdout.  Needs no device.  Returns 0. */
int device_libraries(void);

#endif
