/* The simulation's work counters: one entry per kernel name (or cuBLAS call
 * shape, copy, set, host reward), in the order first seen.  A kernel's
 * entry takes its launches and threads from the grid, its bytes from the
 * counting build's hooks (cuda/sim/count.cpp) and its FLOPs from the table
 * below. */
#include "sim.h"
#include "env_rules.h"
#include "nn_shapes.h"
#include <cmath>
#include <fnmatch.h>
#include <mutex>
#include <stdio.h>
#include <string.h>
#include <unordered_map>
#include <vector>

static std::mutex work_lock;
static std::vector<pcg_cuda_work> work;

static pcg_cuda_work &entry(const char *name)
{
    for (pcg_cuda_work &w : work)
        if (!strncmp(w.name, name, sizeof w.name - 1)) return w;
    pcg_cuda_work w;
    memset(&w, 0, sizeof w);
    snprintf(w.name, sizeof w.name, "%s", name);
    work.push_back(w);
    return work.back();
}

/* ---- FLOPs of the hand-written kernels ----
 *
 * These are DECLARED counts, not measured: each row was written by reading
 * the kernel in cuda/ (and the host/ functions it calls) and counting, per
 * thread that does work, its floating-point operations: add, subtract,
 * multiply, divide, compare, sqrt, exp and log one each, float and double
 * alike; conversions, negations, fabs and integer work none.  A row gives
 * the launch's total from its arguments (the loops' trip counts are
 * arguments), exact where the work does not depend on the data; where it
 * does, the row says which bound it takes.  A kernel without a row, or
 * whose row reads an argument the kernel does not have, adds the note
 * "note: no FLOP row for NAME" or "note: FLOP row misfits NAME" (a test
 * fails on either). */

namespace {

struct view {
    dim3 grid, block;
    const pcg_sim::launch_args &a;
    mutable bool misfit;
    double num(int k) const
    {
        if (k >= a.n) misfit = true;
        return k < a.n ? a.num[k] : 0;
    }
    /* argument k as a T: a row that reads the wrong type marks the launch */
    template <class T> const T &as(int k) const
    {
        static const T none = {};
        if (k >= a.n || a.size[k] != sizeof(T)) {
            misfit = true;
            return none;
        }
        return *(const T *)a.bytes[k];
    }
};

/* Output positions times taps that fall inside the input, over one axis:
 * sum over o < out of the k taps with 0 <= o*stride - pad + tap < in. */
double taps_inside(int out, int in, int k, int stride, int pad)
{
    double n = 0;
    for (int o = 0; o < out; o++)
        for (int t = 0; t < k; t++) {
            int i = o * stride - pad + t;
            n += i >= 0 && i < in;
        }
    return n;
}

double conv_adds(const nn_conv_shape &s)
{
    return taps_inside(s.OH, s.H, s.k, s.stride, s.pad) * taps_inside(s.OW, s.W, s.k, s.stride, s.pad);
}

/* The implicit input gradient's pixel-tap pairs along one axis: per phase
 * p < stride, the inputs p + stride*i times the taps ky = p + pad (mod
 * stride); padding taps included, as the kernel multiplies them. */
double phase_pairs(int in, int k, int stride, int pad)
{
    double n = 0;
    for (int p = 0; p < stride; p++) {
        int ky0 = (p + pad) % stride;
        int pixels = p < in ? (in - p + stride - 1) / stride : 0, taps = ky0 < k ? (k - ky0 + stride - 1) / stride : 0;
        n += (double)pixels * taps;
    }
    return n;
}

/* Conv 2's implicit GEMMs (cuda/conv.cu): a multiply and an add per
 * product term, padding taps included (a tensor core's multiply-add
 * counts two as an FMA does); the bias add and the fused ReLU's compare
 * (forward), the add into dW (one span), the mask's compare (input
 * gradient).  The FMA kernels and the tensor-core ones take the same
 * arguments. */
/* `products` times the products' FLOPs: 3 for the staged kernels' fp32
 * split, which multiplies each pair of operands as three TF32 products */
double conv_fwd_flops_times(const view &v, double products)
{
    const nn_conv_shape &s = v.as<nn_conv_shape>(5);
    double outs = v.num(4) * s.OH * s.OW * s.O;
    return outs * (products * 2.0 * s.k * s.k * s.C + 1 + (v.num(7) != 0));
}

double conv_wgrad_flops_times(const view &v, double products)
{
    const nn_conv_shape &s = v.as<nn_conv_shape>(4);
    double w = (double)s.k * s.k * s.C * s.O;
    return w * (products * 2.0 * v.num(3) * s.OH * s.OW + v.num(7));
}

double conv_dgrad_flops_times(const view &v, double products)
{
    const nn_conv_shape &s = v.as<nn_conv_shape>(4);
    double mask = v.as<const float *>(6) ? v.num(3) * s.H * s.W * s.C : 0;
    return products * 2.0 * v.num(3) * s.C * s.O * phase_pairs(s.H, s.k, s.stride, s.pad) *
               phase_pairs(s.W, s.k, s.stride, s.pad) +
           mask;
}

double conv_fwd_flops(const view &v)
{
    return conv_fwd_flops_times(v, 1);
}

double conv_wgrad_flops(const view &v)
{
    return conv_wgrad_flops_times(v, 1);
}

double conv_dgrad_flops(const view &v)
{
    return conv_dgrad_flops_times(v, 1);
}

/* ppo_stream_sample (host/learn/ppo_streams.h) on A logits, the inverse-CDF
 * loop counted to its end (an upper bound: it stops at the sampled action),
 * plus philox_unit's multiply: max 1 per logit after the first, sum 3 per
 * logit (subtract, exp, add), target 1, CDF 4 per logit, logp 3. */
double sample_flops(double A)
{
    return 1 + (A - 1) + 3 * A + 1 + 4 * A + 3;
}

/* ppo_loss_one (host/learn/ppo_loss.h) on A logits: max A-1, log-sum-exp
 * 3A + 2, entropy 4A, log ratio and ratio 3, ratio clip 4, policy terms 3
 * and their derivative 2, value clip 3, squared errors 5, value loss 2 and
 * its derivative 1, logit gradients 9A, value gradient 2, the six terms 7. */
double loss_flops(double A)
{
    return (A - 1) + (3 * A + 2) + 4 * A + 3 + 4 + 3 + 2 + 3 + 5 + 2 + 1 + 9 * A + 2 + 7;
}

/* grid-stride sums: per element f's own FLOPs and one add, then 255 adds
 * of the tree over 256 threads in each block */
double reduce_flops(const view &v, double per_element)
{
    return v.num(1) * (per_element + 1) + (double)v.grid.x * 255;
}

struct flop_row {
    const char *pattern; /* fnmatch(3) pattern over the launch's name */
    double (*flops)(const view &);
};

const flop_row flop_table[] = {
    /* cuda/env.cu: the rules are integer work; batch_finish adds the
     * reward into the return (1).  The episode's end adds the return into
     * the log once per episode (not counted: one step in episode_len). */
    {"init_kernel", [](const view &) { return 0.0; }},
    {"(step_kernel<*, false, *>)", [](const view &v) { return (double)v.as<env_batch>(0).n; }},
    {"(step_kernel<*, true, *>)", [](const view &) { return 0.0; }},
    {"finish_kernel<*>", [](const view &v) { return (double)v.as<env_batch>(0).n; }},
    {"rebuild_kernel", [](const view &) { return 0.0; }},
    {"observe_warp_kernel", [](const view &) { return 0.0; }},
    {"curand_draws_kernel", [](const view &) { return 0.0; }},
    /* cuda/nn.cu */
    {"relu_fwd_kernel", [](const view &v) { return v.num(1); }}, /* a compare per element */
    {"relu_bwd_kernel", [](const view &v) { return v.num(2); }},
    {"bias_rows_kernel", [](const view &) { return 0.0; }},
    /* rows x O adds, each chunk's rows by its own thread */
    /* cuda/conv_staged.cu's bf16 weights: a rounding each, no FLOPs */
    {"bf16_pack_kernel", [](const view &) { return 0.0; }},
    {"col_sums_kernel", [](const view &v) { return v.num(2) * v.num(3); }},
    {"add_sums_kernel", [](const view &v) { return v.num(2) * v.num(3); }},
    /* both of the above in one: an add per entry, then one per chunk sum */
    {"col_sums_short_kernel",
     [](const view &v) { return v.num(2) * v.num(3) + std::ceil(v.num(2) / 256) * v.num(3); }},
    /* B x O outputs, an add per window cell (a frozen cell's second add,
     * data-dependent, is not counted: a lower bound) */
    {"dense_onehot_fwd_tiled_kernel<*>",
     [](const view &v) {
         const nn_obs_view &w = v.as<nn_obs_view>(2);
         return v.num(5) * v.num(7) * w.h * w.w;
     }},
    /* cells x O threads, an add per sample (frozen cells as above) */
    {"dense_onehot_bwd_tiled_kernel",
     [](const view &v) {
         const nn_obs_view &w = v.as<nn_obs_view>(3);
         return (double)w.h * w.w * v.num(6) * v.num(4);
     }},
    {"onehot_table_kernel", [](const view &v) { return v.num(2) * (v.num(3) - 1) * v.num(4); }},
    /* an add per tap inside the input, per output */
    {"conv_onehot_fwd_kernel",
     [](const view &v) {
         const nn_conv_shape &s = v.as<nn_conv_shape>(6);
         return v.num(5) * s.O * (conv_adds(s) + (v.num(7) != 0) * s.OH * s.OW); /* + the fused ReLU's compare */
     }},
    /* the same (sample, output position, tap) triples, summed per tap, and
     * an add per (sample, output position) for the bias */
    {"conv_onehot_bwd_kernel",
     [](const view &v) {
         const nn_conv_shape &s = v.as<nn_conv_shape>(6);
         return v.num(5) * s.O * (conv_adds(s) + s.OH * s.OW);
     }},
    /* the same adds with the table slice and the gradients in shared memory */
    {"conv_onehot_fwd_tiled_kernel",
     [](const view &v) {
         const nn_conv_shape &s = v.as<nn_conv_shape>(6);
         return v.num(5) * s.O * (conv_adds(s) + (v.num(7) != 0) * s.OH * s.OW);
     }},
    {"conv_onehot_bwd_tiled_kernel",
     [](const view &v) {
         const nn_conv_shape &s = v.as<nn_conv_shape>(6);
         return v.num(5) * s.O * (conv_adds(s) + s.OH * s.OW);
     }},
    /* per (tap, output): per tile class 2 adds per chunk, then 3; per
     * output an add per chunk for the bias, and its own */
    {"conv_onehot_fold_kernel",
     [](const view &v) {
         const nn_conv_shape &s = v.as<nn_conv_shape>(5);
         return (double)s.k * s.k * s.O * (s.C - 1) * (2 * v.num(4) + 3) + s.O * (v.num(4) + 1);
     }},
    {"im2col_kernel", [](const view &) { return 0.0; }},
    /* an add per (output position, tap) inside the input, per channel */
    {"col2im_kernel",
     [](const view &v) {
         const nn_conv_shape &s = v.as<nn_conv_shape>(3);
         return v.num(2) * s.C * conv_adds(s);
     }},
    /* cuda/conv.cu, conv_staged.cu and conv_wgrad.cu: the FMA kernels and their tensor-core twins alike */
    {"conv_fwd_kernel", conv_fwd_flops},
    {"conv_fwd_tc_kernel", conv_fwd_flops},
    {"conv_fwd_staged_tc_kernel<*, split>", [](const view &v) { return conv_fwd_flops_times(v, 3); }},
    {"conv_fwd_staged_tc_kernel<*>", conv_fwd_flops},
    {"conv_wgrad_kernel", conv_wgrad_flops},
    {"conv_wgrad_tc_kernel", conv_wgrad_flops},
    {"conv_wgrad_staged_tc_kernel<split>", [](const view &v) { return conv_wgrad_flops_times(v, 3); }},
    {"conv_wgrad_staged_tc_kernel", conv_wgrad_flops},
    {"conv_dgrad_kernel", conv_dgrad_flops},
    {"conv_dgrad_tc_kernel", conv_dgrad_flops},
    {"conv_dgrad_staged_tc_kernel<*, split>", [](const view &v) { return conv_dgrad_flops_times(v, 3); }},
    {"conv_dgrad_staged_tc_kernel<*>", conv_dgrad_flops},
    {"ppo_loss_kernel", [](const view &v) { return v.num(7) * loss_flops(v.num(8)); }},
    /* six threads add B terms each; one scales */
    {"ppo_sum_kernel", [](const view &v) { return 6 * v.num(1) + 1; }},
    /* cuda/ppo.cu */
    {"reduce_kernel<red_float>", [](const view &v) { return reduce_flops(v, 0); }},
    {"reduce_kernel<red_square>", [](const view &v) { return reduce_flops(v, 1); }},
    {"reduce_kernel<red_gather>", [](const view &v) { return reduce_flops(v, 0); }},
    {"reduce_kernel<red_deviation>", [](const view &v) { return reduce_flops(v, 2); }},
    /* one thread: nb adds, a divide, an add when accumulating */
    {"reduce_final_kernel", [](const view &v) { return v.num(1) + 1 + (v.num(3) != 0); }},
    {"sample_kernel", [](const view &v) { return v.num(2) * sample_flops(v.num(1)); }},
    /* per environment gamma*lambda once, then per step 4 for delta, 3 for
     * the advantage, 1 for the return */
    {"gae_kernel", [](const view &v) { return v.num(1) * (8 * v.num(0) + 1); }},
    {"inv_std_kernel", [](const view &) { return 3.0; }}, /* sqrt, add, divide */
    {"gather_kernel", [](const view &v) { return 2 * v.num(1); }}, /* subtract, multiply */
    {"gather_obs_kernel", [](const view &) { return 0.0; }},
    {"add_chunk_kernel", [](const view &) { return 6.0; }},
    {"norm_kernel", [](const view &) { return 2.0; }}, /* sqrt, add */
    /* sqrt, compare, and when clipping (counted: an upper bound) divide and
     * multiply */
    {"clip_kernel", [](const view &v) { return 4 * v.num(1); }},
    /* first moment 4, second 5, the step 7 */
    {"adam_kernel", [](const view &v) { return 16 * v.num(4); }},
    /* cuda/play.cu */
    {"play_sample_kernel", [](const view &v) { return v.num(2) * sample_flops(v.num(1)); }},
    {"play_last_kernel", [](const view &) { return 0.0; }},
};

/* The row of a launch name (names are string literals: one lookup each). */
std::unordered_map<const char *, const flop_row *> row_of;

const flop_row *find_row(const char *name)
{
    auto it = row_of.find(name);
    if (it != row_of.end()) return it->second;
    const flop_row *row = NULL;
    for (const flop_row &r : flop_table)
        if (!fnmatch(r.pattern, name, 0)) {
            row = &r;
            break;
        }
    row_of[name] = row;
    return row;
}

} // namespace

void pcg_sim_work_launch(const char *name, dim3 g, dim3 b, const pcg_sim_bytes &bytes,
                         const pcg_sim::launch_args &args)
{
    std::lock_guard<std::mutex> lk(work_lock);
    const char *not_counted = pcg_sim_count_enabled();
    if (not_counted) entry(not_counted);
    const flop_row *row = find_row(name);
    view v = {g, b, args, false};
    double flops = row ? row->flops(v) : 0;
    if (!row || v.misfit) {
        char why[sizeof(pcg_cuda_work{}.name)];
        snprintf(why, sizeof why, PCG_WORK_NOTE "%s %s", row ? "FLOP row misfits" : "no FLOP row for", name);
        entry(why);
    }
    pcg_cuda_work &w = entry(name);
    w.launches++;
    w.graph_launches += pcg_sim_in_graph();
    w.threads += (uint64_t)g.x * g.y * g.z * b.x * b.y * b.z;
    w.bytes_read += bytes.read.load();
    w.bytes_written += bytes.written.load();
    w.flops += (uint64_t)(flops + 0.5);
}

void pcg_sim_work_add(const char *name, uint64_t threads, uint64_t bytes_read, uint64_t bytes_written,
                      uint64_t flops)
{
    std::lock_guard<std::mutex> g(work_lock);
    pcg_cuda_work &w = entry(name);
    w.launches++;
    w.graph_launches += pcg_sim_in_graph();
    w.threads += threads;
    w.bytes_read += bytes_read;
    w.bytes_written += bytes_written;
    w.flops += flops;
}

void pcg_sim_work_sync(void)
{
    std::lock_guard<std::mutex> g(work_lock);
    entry(PCG_WORK_SYNC).launches++;
}

const pcg_cuda_work *pcg_sim_work_counters(int *count)
{
    std::lock_guard<std::mutex> g(work_lock);
    *count = (int)work.size();
    return work.data();
}

void pcg_sim_work_reset(void)
{
    std::lock_guard<std::mutex> g(work_lock);
    work.clear();
}
