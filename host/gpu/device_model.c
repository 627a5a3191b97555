/* The H200 model: see device_model.h.  The constants are in this one
 * table, and the same table is in docs/cuda.md. */
#include "device_model.h"
#include <math.h>
#include <string.h>

/* Rates measured on an H200 (141 GB HBM3e): a device-to-device copy at
 * 4.3 TB/s; large GEMMs at 790 TFLOP/s in bf16, 400 in TF32, 50 in fp32.
 * The trainer's shapes are small and skinny next to those, so cuBLAS gets
 * half of them, and the engine's own kernels (plain loads and stores, no
 * tiling) half the copy rate.  Launch and synchronisation costs are what a
 * host enqueueing to an idle stream sees. */
const device_model device_model_h200 = {
    .device = "one H200",
    .copy_bytes_s = 4.3e12,
    .gemm_flop_s = {50e12, 400e12, 790e12},
    .blas_share = 0.5,
    .kernel_share = 0.5,
    .launch_s = 4e-6,
    .graph_launch_s = 2e-6,
    .sync_s = 10e-6,
    /* Data-sheet figures, not measurements: H200 SXM (GH100) has 132 SMs
     * and a 1.98 GHz boost clock; a Hopper SM has four partitions of 16
     * INT32 lanes (64 per SM) and holds 2048 resident threads.  A reward
     * kernel runs one thread per environment through data-dependent loops,
     * so its warps diverge: half the integer rate, as kernel_share gives
     * the engine's own kernels.  The latencies are assumptions of the
     * order that published Hopper micro-benchmarks report: about 4 cycles
     * from one dependent integer instruction to the next, about 33 for an
     * L1 hit and 260 for an L2 hit. */
    .sms = 132,
    .clock_hz = 1.98e9,
    .int32_lanes_per_sm = 64,
    .threads_per_sm = 2048,
    .int_share = 0.5,
    .int_dep_cycles = 4,
    .l1_cycles = 33,
    .l2_cycles = 260,
};

static int starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

int device_model_kind(const pcg_cuda_work *w)
{
    if (starts(w->name, PCG_WORK_NOTE)) return WORK_NOTE;
    if (!strcmp(w->name, PCG_WORK_SYNC)) return WORK_SYNC;
    if (starts(w->name, PCG_WORK_BLAS)) return WORK_BLAS;
    if (!strcmp(w->name, PCG_WORK_COPY) || !strcmp(w->name, PCG_WORK_SET)) return WORK_COPY;
    if (!strstr(w->name, PCG_WORK_TENSOR)) return WORK_KERNEL;
    return strstr(w->name, PCG_WORK_BF16) ? WORK_BF16_KERNEL : WORK_TENSOR_KERNEL;
}

double device_model_launch_seconds(const device_model *m, const pcg_cuda_work *w)
{
    uint64_t graph = w->graph_launches < w->launches ? w->graph_launches : w->launches;
    return (double)(w->launches - graph) * m->launch_s + (double)graph * m->graph_launch_s;
}

double device_model_seconds(const device_model *m, const pcg_cuda_work *w, int math)
{
    double bytes = (double)w->bytes_read + (double)w->bytes_written, flops = (double)w->flops;
    double bw = m->copy_bytes_s, rate = m->gemm_flop_s[PCG_MATH_FP32];
    switch (device_model_kind(w)) {
    case WORK_NOTE: return 0;
    case WORK_SYNC: return (double)w->launches * m->sync_s;
    case WORK_COPY: break;
    case WORK_BLAS:
        bw *= m->blas_share;
        rate = m->gemm_flop_s[math >= 0 && math < 3 ? math : PCG_MATH_FP32] * m->blas_share;
        break;
    case WORK_TENSOR_KERNEL:
        bw *= m->kernel_share;
        rate = m->gemm_flop_s[PCG_MATH_TF32] * m->kernel_share;
        break;
    case WORK_BF16_KERNEL:
        bw *= m->kernel_share;
        rate = m->gemm_flop_s[PCG_MATH_BF16] * m->kernel_share;
        break;
    default:
        bw *= m->kernel_share;
        rate *= m->kernel_share;
    }
    double t_mem = bytes / bw, t_flop = flops / rate;
    return (t_mem > t_flop ? t_mem : t_flop) + device_model_launch_seconds(m, w);
}

double device_model_total(const device_model *m, const pcg_cuda_work *w, int n, int math, uint64_t *launches)
{
    double t = 0;
    uint64_t l = 0;
    for (int i = 0; i < n; i++) {
        t += device_model_seconds(m, &w[i], math);
        int k = device_model_kind(&w[i]);
        if (k != WORK_SYNC && k != WORK_NOTE) l += w[i].launches;
    }
    if (launches) *launches = l;
    return t;
}

thread_time device_model_threads(const device_model *m, const thread_work *w, double envs)
{
    thread_time t;
    double resident = (double)m->sms * m->threads_per_sm;
    double chain_cycles = w->ops_chain * m->int_dep_cycles + w->loads_chain * m->l1_cycles + w->l2_loads * m->l2_cycles;
    t.waves = envs > 0 ? ceil(envs / resident) : 0;
    t.latency_s = t.waves * chain_cycles / m->clock_hz;
    t.throughput_s = envs * w->ops_mean / ((double)m->sms * m->int32_lanes_per_sm * m->clock_hz * m->int_share);
    t.launch_s = m->launch_s;
    t.seconds = (t.latency_s > t.throughput_s ? t.latency_s : t.throughput_s) + t.launch_s;
    return t;
}
