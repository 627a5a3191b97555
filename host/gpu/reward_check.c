/* check-reward's orchestration (reward_check.h): the sandbox, then with
 * cuda every NVRTC architecture, then the device run beside the CPU's
 * rewards.  The first refusal ends the check. */
#include "reward_check.h"
#include "env.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cubin into dir/ARCH.cubin.  0, or -1 with the reason. */
static int save_cubin(const char *dir, const char *arch, const char *cubin, size_t len, reward_check_result *r)
{
    char path[4200], err[600];
    snprintf(path, sizeof path, "%.4000s/%s.cubin", dir, arch);
    if (make_dirs_msg(dir, err, sizeof err) || write_file_atomic_msg(path, cubin, len, err, sizeof err)) {
        snprintf(r->reason, sizeof r->reason, "cannot write %.900s: %.500s", path, err);
        return -1;
    }
    return 0;
}

/* With cuda: every GPU architecture the engine builds for, each cubin
 * saved into cubin_dir when given.  0, or -1 with the reason. */
static int compile_every_arch(const char *src, const char *cubin_dir, reward_check_result *r)
{
    static const char *archs[] = REWARD_GPU_ARCHS;
    char err[1024];
    r->n_archs = (int)(sizeof archs / sizeof archs[0]);
    for (int a = 0; a < r->n_archs; a++) r->archs[a] = archs[a];
    for (int a = 0; a < r->n_archs; a++) {
        double ta = now_seconds();
        char *cubin = NULL;
        size_t len = 0;
        int rc = reward_compile_nvrtc(src, archs[a], cubin_dir ? &cubin : NULL, &len, err, sizeof err);
        r->arch_s[a] = now_seconds() - ta;
        if (rc) {
            snprintf(r->reason, sizeof r->reason, "the GPU compiler (NVRTC, %s) refuses it: %s", archs[a], err);
            return -1;
        }
        rc = cubin ? save_cubin(cubin_dir, archs[a], cubin, len, r) : 0;
        free(cubin);
        if (rc) return -1;
    }
    return 0;
}

/* With cuda: the device's rewards against cpu_values.  0, or -1 with the
 * reason. */
static int compare_device(const char *src, const reward_check_opts *o, const float *cpu_values,
                          reward_check_result *r)
{
    reward_gpu_result *g = &r->gpu;
    int rc = reward_gpu_check(src, o->variant, o->envs, o->seed, o->timeout_s, cpu_values, g, r->reason,
                              sizeof r->reason);
    if (rc == 0 && g->ran && g->max_diff > REWARD_GPU_TOLERANCE) {
        snprintf(r->reason, sizeof r->reason,
                 "the GPU and CPU rewards differ (relative difference %.3g at step %ld, tolerance %g)", g->max_diff,
                 g->diff_step, REWARD_GPU_TOLERANCE);
        rc = -1;
    }
    return rc;
}

int reward_check(const char *src, const reward_check_opts *o, reward_check_result *r)
{
    memset(r, 0, sizeof *r);
    int have_nvrtc = reward_nvrtc_available(r->nv_why, sizeof r->nv_why);
    if (o->cuda && !have_nvrtc) return -2;
    double t0 = now_seconds();
    /* cuda compares the device's rewards with these */
    int steps = 3 * PCG_DEFAULT_SIDE * PCG_DEFAULT_SIDE;
    float *cpu_values = o->cuda ? malloc(sizeof(float) * (size_t)o->envs * steps) : NULL;
    int rc;
    if (o->cuda && !cpu_values) {
        snprintf(r->reason, sizeof r->reason, "out of memory for %d environments", o->envs);
        rc = -1;
    } else if (o->cuda) {
        rc = reward_validate_values(src, o->variant, o->envs, o->seed, o->timeout_s, &r->stats, cpu_values,
                                    r->reason, sizeof r->reason);
        r->gpu_checked = 1;
    } else {
        rc = reward_validate_both(src, o->variant, o->envs, o->seed, o->timeout_s, 1, &r->stats, &r->gpu_checked,
                                  r->reason, sizeof r->reason);
    }
    r->check_s = now_seconds() - t0;
    if (rc == 0 && o->cuda) rc = compile_every_arch(src, o->cubin_dir, r);
    if (rc == 0 && o->cuda) rc = compare_device(src, o, cpu_values, r);
    free(cpu_values);
    return rc ? -1 : 0;
}
