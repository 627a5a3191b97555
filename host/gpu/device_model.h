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
                                 * TF32 rate for tensor-core kernels) */
    double launch_s;            /* per launch (a kernel, a cuBLAS call, a copy or a set) */
    double graph_launch_s;      /* per launch inside a CUDA graph (not built: for comparison) */
    double sync_s;              /* per host synchronisation */
} device_model;

extern const device_model device_model_h200;

/* What an entry is, from its name (backend.h's PCG_WORK_*). */
enum { WORK_KERNEL, WORK_TENSOR_KERNEL, WORK_BLAS, WORK_COPY, WORK_SYNC, WORK_NOTE };
int device_model_kind(const pcg_cuda_work *w);

/* Seconds of one entry in matmul mode math: for work, max(bytes / bandwidth,
 * FLOPs / rate) + launches x launch cost; for synchronisations, their number
 * x sync_s; 0 for a note.  A kernel's rate is kernel_share of the fp32 rate,
 * a tensor-core kernel's kernel_share of the TF32 rate in every mode (its
 * fragments are TF32; bf16 operands ride on them). */
double device_model_seconds(const device_model *m, const pcg_cuda_work *w, int math);

/* The same for n entries, and the launches among them (copies, sets and
 * cuBLAS calls included). */
double device_model_total(const device_model *m, const pcg_cuda_work *w, int n, int math, uint64_t *launches);

#endif
