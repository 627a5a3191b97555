/* A roofline model of one GPU for the simulation's work counters
 * (backend.h, pcg_cuda_work): the seconds a device would take for the
 * bytes, FLOPs, launches and host synchronisations the simulation counted.
 * Its rates are ones measured on that kind of device, never data-sheet
 * peaks, and the first measurement of this engine on the device corrects
 * them (docs/cuda.md, "Work counters and the H200 model"). */
#ifndef PCG_DEVICE_MODEL_H
#define PCG_DEVICE_MODEL_H
#include "backend.h"

typedef struct {
    const char *device;
    double copy_bytes_s;        /* device-to-device copy: bytes read + written per second */
    double gemm_flop_s[3];      /* a large GEMM, by matmul mode (PCG_MATH_*) */
    double blas_share;          /* cuBLAS at the trainer's shapes: share of gemm_flop_s and of the copy rate */
    double kernel_share;        /* the engine's own kernels: share of the copy rate and of the fp32 rate (of the
                                 * TF32 or bf16 rate for tensor-core kernels) */
    double launch_s;            /* per launch (a kernel, a cuBLAS call, a copy or a set) */
    double graph_launch_s;      /* per launch that a CUDA graph's launch makes */
    double sync_s;              /* per host synchronisation */
    /* integer work of one thread per environment (a reward kernel's
     * searches, device_model_threads) */
    int sms;                    /* streaming multiprocessors */
    double clock_hz;            /* boost clock */
    int int32_lanes_per_sm;     /* INT32 lanes per SM */
    int threads_per_sm;         /* resident threads per SM */
    double int_share;           /* share of the INT32 rate such a kernel gets (divergent warps) */
    double int_dep_cycles;      /* cycles from a dependent integer instruction to the next */
    double l1_cycles;           /* a load that hits L1 */
    double l2_cycles;           /* a load that hits L2 */
} device_model;

extern const device_model device_model_h200;

/* What an entry is, from its name (backend.h's PCG_WORK_*). */
enum { WORK_KERNEL, WORK_TENSOR_KERNEL, WORK_BF16_KERNEL, WORK_BLAS, WORK_COPY, WORK_SYNC, WORK_NOTE };
int device_model_kind(const pcg_cuda_work *w);

/* The launches' share of an entry's seconds: launch_s for each launch the
 * host made, graph_launch_s for each a graph made. */
double device_model_launch_seconds(const device_model *m, const pcg_cuda_work *w);

/* Seconds of one entry in matmul mode math: for work, max(bytes / bandwidth,
 * FLOPs / rate) + its launches' seconds; for synchronisations, their number
 * x sync_s; 0 for a note.  A kernel's rate is kernel_share of the fp32 rate,
 * a tensor-core kernel's kernel_share of the TF32 rate in every mode (its
 * fragments are TF32; bf16 operands ride on them), and one on bf16
 * fragments (WORK_BF16_KERNEL) kernel_share of the bf16 rate. */
double device_model_seconds(const device_model *m, const pcg_cuda_work *w, int math);

/* The same for n entries, and the launches among them (copies, sets and
 * cuBLAS calls included). */
double device_model_total(const device_model *m, const pcg_cuda_work *w, int n, int math, uint64_t *launches);

/* One thread per environment doing integer work (a reward kernel), per
 * launch of E threads: */
typedef struct {
    double ops_mean;    /* 32-bit integer instructions per thread, mean over the threads */
    double ops_chain;   /* the slowest thread's, all dependent one on the next */
    double loads_chain; /* its loads that hit L1 (each waited for) */
    double l2_loads;    /* its loads that go to L2 (its inputs' first touch) */
} thread_work;

typedef struct {
    double latency_s;    /* waves x the slowest thread's chain */
    double throughput_s; /* E x ops_mean / (SMs x INT32 lanes x clock x int_share) */
    double launch_s;     /* one launch */
    double seconds;      /* max(latency, throughput) + launch */
    double waves;        /* ceil(E / resident threads) */
} thread_time;

/* The time of one launch of envs threads of work w.  The chain is
 * (ops_chain x int_dep_cycles + loads_chain x l1_cycles + l2_loads x
 * l2_cycles) / clock, once per wave of resident threads. */
thread_time device_model_threads(const device_model *m, const thread_work *w, double envs);

#endif
