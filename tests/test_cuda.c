/* The CUDA backend: the library and its ABI, backend selection, and the
 * differential tests against the CPU backend (bit-exact environment state,
 * rewards, cuRAND streams, sgemm), which need a device and skip without one. */
#include "harness.h"
#include "backend.h"
#include "sim_reward.h"
#include "cuda_check.h"
#include "env.h"
#include "philox.h"
#include "reward_sample.h"
#include "reward_jit.h"
#include "nn.h"
#include "ppo.h"
#include "env_rules.h"
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The built library exports the entry point, its table is complete and its
 * host-side Philox (nvcc's host pass) equals gcc's. */
static void cuda_library_exports(void **state)
{
    (void)state;
    const pcg_cuda_api *api = cuda_library_or_skip("cuda_library_exports");
    void *h = dlopen(backend_cuda_path(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    assert_non_null(h);
    pcg_cuda_entry_fn entry = (pcg_cuda_entry_fn)dlsym(h, PCG_CUDA_ENTRY);
    assert_non_null(entry);
    assert_ptr_equal(entry(), api);
    dlclose(h);
    assert_int_equal(api->abi_version, PCG_CUDA_ABI_VERSION);
    assert_int_equal(api->size, (int)sizeof(pcg_cuda_api));
    /* every entry is filled in: the table is ints then function pointers */
    const char *p = (const char *)api + offsetof(pcg_cuda_api, last_error);
    size_t n_fn = (sizeof(pcg_cuda_api) - offsetof(pcg_cuda_api, last_error)) / sizeof(void *);
    for (size_t i = 0; i < n_fn; i++) {
        void *fn;
        memcpy(&fn, p + i * sizeof(void *), sizeof fn);
        assert_non_null(fn);
    }
    uint64_t seeds[] = {0, 1, 42, 0xdeadbeefcafef00dull};
    for (int s = 0; s < 4; s++)
        for (uint64_t sub = 0; sub < 40; sub += 3)
            for (uint64_t blk = 0; blk < 50; blk += 7) {
                uint64_t subseq = sub < 20 ? sub : (1ull << 32) + sub;
                uint32_t got[4];
                api->philox_host(seeds[s], subseq, blk, got);
                pcg_u32x4 want = philox_block(seeds[s], subseq, blk);
                for (int k = 0; k < 4; k++) assert_int_equal(got[k], want.v[k]);
            }
    char why[300];
    if (pcg_test_cuda_devices(why, sizeof why) <= 0) {
        /* without a device the library says so in one line */
        assert_true(api->device_count() < 0);
        assert_true(cuda_one_line(api->last_error()));
    }
}

/* --backend semantics: cpu always; auto = cuda when usable, else cpu; cuda
 * without a device is one line of error. */
static void cuda_backend_select(void **state)
{
    (void)state;
    char err[600] = "";
    assert_int_equal(backend_select("cpu", err, sizeof err), BACKEND_CPU);
    assert_int_equal(backend_select("gpu", err, sizeof err), -1);
    assert_true(cuda_one_line(err));
    assert_non_null(strstr(err, "gpu"));
    char why[300];
    int devices = pcg_test_cuda_devices(why, sizeof why);
    err[0] = 0;
    int cuda = backend_select("cuda", err, sizeof err);
    int autob = backend_select("auto", err, sizeof err);
    if (devices <= 0) {
        assert_int_equal(cuda, -1);
        assert_true(cuda_one_line(err) || !err[0]);
        err[0] = 0;
        assert_int_equal(backend_select("cuda", err, sizeof err), -1);
        assert_true(cuda_one_line(err));
        assert_non_null(strstr(err, "CUDA"));
        assert_int_equal(autob, BACKEND_CPU);
    } else if (backend_cuda()) {
        assert_int_equal(cuda, BACKEND_CUDA);
        /* auto never takes the simulation: it is for checking, not speed */
        assert_int_equal(autob, backend_cuda()->simulated ? BACKEND_CPU : BACKEND_CUDA);
    } else {
        /* a device but no library: cuda names the library, auto falls back */
        assert_int_equal(cuda, -1);
        assert_non_null(strstr(err, PCG_CUDA_LIB));
        assert_int_equal(autob, BACKEND_CPU);
    }
}

/* The command line: `device --backend cuda` fails with one line without a
 * device; `--backend auto` always works. */
static void cuda_cli_backend_flag(void **state)
{
    (void)state;
    char out[4096];
    char why[300];
    int devices = pcg_test_cuda_devices(why, sizeof why);
    int rc = pcg_test_sh(out, sizeof out, "%s device --backend auto", pcg_test_binary());
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "backend: "));
    rc = pcg_test_sh(out, sizeof out, "%s device --backend cuda 2>&1 >/dev/null", pcg_test_binary());
    if (devices <= 0) {
        assert_int_equal(rc, 1);
        assert_true(cuda_one_line(out));
        assert_non_null(strstr(out, "no usable CUDA device"));
    }
    rc = pcg_test_sh(out, sizeof out, "%s device --backend tpu", pcg_test_binary());
    assert_int_not_equal(rc, 0);
    assert_true(cuda_one_line(out));
}

/* cuRAND's Philox draws equal host/core/philox.h's from any subsequence/offset. */
static void cuda_curand_matches_philox(void **state)
{
    (void)state;
    const pcg_cuda_api *api = cuda_device_or_skip("cuda_curand_matches_philox");
    uint64_t seeds[] = {1, 3, 0x123456789abcdefull};
    uint64_t subs[] = {0, 1, 599, 65535, (1ull << 32), (1ull << 32) + 4095, 0xfffffffffull};
    uint64_t offs[] = {0, 1, 2, 3, 4, 5, 767, 1000003, (1ull << 40) + 7};
    uint32_t got[13];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 7; b++)
            for (int c = 0; c < 9; c++) {
                assert_int_equal(api->curand_draws(seeds[a], subs[b], offs[c], 13, got), 0);
                philox_stream s;
                philox_stream_init(&s, seeds[a], subs[b], offs[c]);
                for (int k = 0; k < 13; k++) assert_int_equal(got[k], philox_next(&s));
            }
}

typedef struct {
    unsigned char *maps, *frozen, *pad, *obs, *dones, *prev;
    int *steps, *actions;
    uint64_t *rng_pos;
    float *rewards, *returns;
    void *block;
} host_copy;

static void host_copy_alloc(host_copy *h, const env_t *e)
{
    size_t n = (size_t)e->n, pad = (size_t)e->cfg.pad_h * e->cfg.pad_w;
    size_t bytes = n * (3 * (size_t)e->cells + pad + (size_t)e->obs_size + 1 + 2 * sizeof(int) + 8 + 2 * sizeof(float));
    unsigned char *p = malloc(bytes);
    assert_non_null(p);
    h->block = p;
    h->rng_pos = (uint64_t *)p, p += n * 8;
    h->steps = (int *)p, p += n * sizeof(int);
    h->actions = (int *)p, p += n * sizeof(int);
    h->rewards = (float *)p, p += n * sizeof(float);
    h->returns = (float *)p, p += n * sizeof(float);
    h->maps = p, p += n * e->cells;
    h->frozen = p, p += n * e->cells;
    h->prev = p, p += n * e->cells;
    h->pad = p, p += n * pad;
    h->obs = p, p += n * e->obs_size;
    h->dones = p;
}

/* An env_batch over host arrays, as the kernels see one environment batch,
 * with its episode log in counts[2n] and ep_ret[n] and the streams, rewards,
 * dones and previous maps cleared (batch_init comes next). */
static void host_env_view(env_batch *d, host_copy *hc, int n, int h, int w, int variant, uint64_t seed,
                          unsigned int *counts, double *ep_ret)
{
    size_t N = (size_t)n;
    memset(d, 0, sizeof *d);
    dungeon_cfg_init(&d->c, h, w, variant, seed);
    d->n = n;
    d->cells = h * w;
    d->obs_size = d->c.crop_h * d->c.crop_w;
    d->pad_size = d->c.pad_h * d->c.pad_w;
    d->maps = hc->maps, d->frozen = hc->frozen, d->prev = hc->prev, d->pad = hc->pad, d->obs = hc->obs;
    d->dones = hc->dones, d->steps = hc->steps, d->actions = hc->actions;
    d->rng_pos = (unsigned long long *)hc->rng_pos, d->rewards = hc->rewards, d->returns = hc->returns;
    d->episodes = counts, d->changed = counts + N, d->episode_return = ep_ret;
    memset(hc->rng_pos, 0, N * 8);
    memset(hc->prev, 0, N * d->cells);
    memset(hc->rewards, 0, N * sizeof(float));
    memset(hc->dones, 0, N);
}

/* Everything the GPU holds equals the CPU env; rewards within tolerance. */
static void compare_arrays(const env_t *e, const host_copy *h, const int *actions, int with_reward, const char *what)
{
    size_t n = (size_t)e->n, pad = (size_t)e->cfg.pad_h * e->cfg.pad_w;
    struct {
        const char *name;
        const void *a, *b;
        size_t bytes;
    } cmp[] = {{"maps", h->maps, e->maps, n * e->cells},        {"frozen", h->frozen, e->frozen, n * e->cells},
               {"pad", h->pad, e->pad, n * pad},                 {"obs", h->obs, e->obs, n * e->obs_size},
               {"steps", h->steps, e->steps, n * sizeof(int)},   {"rng_pos", h->rng_pos, e->rng_pos, n * 8},
               {"dones", h->dones, e->dones, n},                 {"actions", h->actions, actions, actions ? n * sizeof(int) : 0},
               {"prev", h->prev, e->scratch, with_reward ? n * e->cells : 0}};
    for (size_t k = 0; k < sizeof cmp / sizeof cmp[0]; k++) {
        if (cmp[k].bytes && memcmp(cmp[k].a, cmp[k].b, cmp[k].bytes)) {
            size_t i = 0;
            while (((const unsigned char *)cmp[k].a)[i] == ((const unsigned char *)cmp[k].b)[i]) i++;
            fail_msg("%s: GPU %s differs from the CPU at byte %zu", what, cmp[k].name, i);
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (fabsf(h->rewards[i] - e->rewards[i]) > 1e-5f * (1 + fabsf(e->rewards[i])))
            fail_msg("%s: reward of env %zu: GPU %.9g CPU %.9g", what, i, h->rewards[i], e->rewards[i]);
        if (fabsf(h->returns[i] - e->returns[i]) > 1e-4f * (1 + fabsf(e->returns[i])))
            fail_msg("%s: return of env %zu: GPU %.9g CPU %.9g", what, i, h->returns[i], e->returns[i]);
    }
}

static void compare_state(const pcg_cuda_api *api, pcg_cuda_env *g, const env_t *e, host_copy *h, const int *actions,
                          int with_reward, const char *what)
{
    pcg_cuda_env_host o = {h->maps, h->frozen, h->pad, h->obs, h->dones, with_reward ? h->prev : NULL,
                           h->steps, h->actions, h->rng_pos, h->rewards, h->returns};
    assert_int_equal(api->env_copy(g, &o), 0);
    compare_arrays(e, h, actions, with_reward, what);
}

static float sample_reward_cb(const level_t *prev, const level_t *curr, void *ctx)
{
    (void)ctx;
    return sample_reward(prev, curr);
}

/* The device kernels' per-environment work (host/core/env_rules.h) run on the
 * host in the kernels' order, for every step path: fused step, split step
 * around a reward, observation by the thread or by 32 warp lanes; under
 * rules (observation centre, last step's reward). */
static void emulate_on_host(int n, int h, int w, int variant, int mapping, int random, int with_reward, int steps,
                            env_rules rules)
{
    char what[200];
    snprintf(what, sizeof what, "host emulation n=%d %dx%d variant=%d mapping=%s actions=%s reward=%s centre=%s "
             "terminal=%s", n, h, w, variant, mapping == PCG_OBS_WARP ? "warp" : "thread", random ? "random" : "given",
             with_reward ? "yes" : "no", ppo_details[PPO_DETAIL_OBS_CENTRE].names[rules.obs_centre],
             ppo_details[PPO_DETAIL_TERMINAL_REWARD].names[rules.terminal_reward]);
    uint64_t seed = 2000 + (uint64_t)n, aseed = 91;
    env_t e;
    assert_int_equal(env_alloc(&e, n, h, w, variant, seed), 0);
    env_set_rules(&e, &rules);
    if (with_reward) env_set_reward(&e, sample_reward_cb, NULL);
    host_copy hc;
    host_copy_alloc(&hc, &e);
    size_t N = (size_t)n;
    unsigned int *counts = calloc(N * 2, sizeof(unsigned int));
    double *ep_ret = calloc(N, sizeof(double));
    int *actions = malloc(N * sizeof(int));
    assert_true(counts && ep_ret && actions);
    env_batch d;
    host_env_view(&d, &hc, n, h, w, variant, seed, counts, ep_ret);
    d.c.rules = rules;
    int thread_obs = mapping == PCG_OBS_THREAD;
    for (int i = 0; i < n; i++) batch_init(&d, i, 1, thread_obs);
    if (!thread_obs)
        for (int i = 0; i < n; i++)
            for (int lane = 0; lane < 32; lane++) batch_observe_lane(&d, i, lane, 32);
    compare_arrays(&e, &hc, NULL, 0, what);
    for (int t = 0; t < steps; t++) {
        env_random_actions(&e, aseed, (uint64_t)t, actions);
        if (!random)
            for (int i = 0; i < n; i += 5) actions[i] = (t * 3 + i) % 13 - 3;
        env_step(&e, actions);
        if (!random) memcpy(hc.actions, actions, N * sizeof(int));
        for (int i = 0; i < n; i++) batch_edit(&d, i, random, aseed, (uint64_t)t, with_reward);
        if (with_reward) {
            for (int i = 0; i < n; i++) {
                level_t p = {h, w, hc.prev + (size_t)i * d.cells}, c = {h, w, hc.maps + (size_t)i * d.cells};
                hc.rewards[i] = sample_reward(&p, &c);
            }
            for (int i = 0; i < n; i++) batch_finish(&d, i, hc.rewards[i], thread_obs);
        } else {
            for (int i = 0; i < n; i++) batch_finish(&d, i, 0.0f, thread_obs);
        }
        if (!thread_obs)
            for (int i = 0; i < n; i++)
                for (int lane = 0; lane < 32; lane++) batch_observe_lane(&d, i, lane, 32);
        compare_arrays(&e, &hc, actions, with_reward, what);
    }
    /* a checkpoint restore: padded maps and observations rebuilt from maps,
     * frozen masks and steps, as env_rebuild does on the CPU */
    memset(hc.pad, 0x5a, N * d.pad_size);
    memset(hc.obs, 0x5a, N * d.obs_size);
    for (int i = 0; i < n; i++) batch_rebuild(&d, i, thread_obs);
    if (!thread_obs)
        for (int i = 0; i < n; i++)
            for (int lane = 0; lane < 32; lane++) batch_observe_lane(&d, i, lane, 32);
    env_rebuild(&e);
    compare_arrays(&e, &hc, NULL, with_reward, what);
    double episodes = 0, changed = 0, ret = 0;
    for (size_t i = 0; i < N; i++) episodes += counts[i], changed += counts[N + i], ret += ep_ret[i];
    assert_true(episodes == e.log.episodes);
    assert_true(changed == e.log.changed);
    assert_true(fabs(ret - e.log.episode_return) <= 1e-3 * (1 + fabs(e.log.episode_return)));
    free(counts);
    free(ep_ret);
    free(actions);
    free(hc.block);
    env_free(&e);
}

static void cuda_env_rules_on_host(void **state)
{
    (void)state;
    for (int mapping = 0; mapping < 2; mapping++)
        for (int random = 0; random < 2; random++) {
            /* each observation centre and last-step reward on every path */
            env_rules r = {mapping, random, FINAL_LEVEL_767}, swapped = {random, mapping, FINAL_LEVEL_767};
            emulate_on_host(37, 16, 16, VARIANT_DUNGEON, mapping, random, 0, 800, r);
            emulate_on_host(13, 7, 5, VARIANT_TREASURE, mapping, random, 0, 3 * 7 * 5 * 2 + 4, swapped);
            emulate_on_host(9, 16, 16, VARIANT_DUNGEON, mapping, random, 1, 800, r);
            emulate_on_host(5, 12, 20, VARIANT_TREASURE, mapping, random, 1, 3 * 12 * 20 + 9, swapped);
        }
}

/* One differential run: n envs of h x w, `steps` steps (past the first
 * auto-reset), random actions drawn on the device or given from the host. */
static void run_differential_fn(const pcg_cuda_api *api, int n, int h, int w, int variant, int mapping,
                                int device_random, const void *reward, reward_fn cpu_fn, void *cpu_ctx, int steps,
                                const char *label, env_rules rules)
{
    char what[240];
    snprintf(what, sizeof what, "n=%d %dx%d variant=%d mapping=%s actions=%s reward=%s centre=%s terminal=%s", n, h,
             w, variant, mapping == PCG_OBS_WARP ? "warp" : "thread", device_random ? "device" : "host", label,
             ppo_details[PPO_DETAIL_OBS_CENTRE].names[rules.obs_centre],
             ppo_details[PPO_DETAIL_TERMINAL_REWARD].names[rules.terminal_reward]);
    uint64_t seed = 1000 + (uint64_t)n, aseed = 77;
    env_t e;
    assert_int_equal(env_alloc(&e, n, h, w, variant, seed), 0);
    env_set_rules(&e, &rules);
    if (reward) env_set_reward(&e, cpu_fn, cpu_ctx);
    size_t mark = api->arena_mark();
    pcg_cuda_env *g = api->env_alloc(n, h, w, variant, seed, mapping);
    if (!g) fail_msg("%s: env_alloc: %s", what, api->last_error());
    if (api->env_set_rules(g, &rules)) fail_msg("%s: env_set_rules: %s", what, api->last_error());
    if (reward && api->env_set_reward(g, reward)) fail_msg("%s: env_set_reward: %s", what, api->last_error());
    if (reward && sim_reward_use(api, cpu_fn, cpu_ctx)) fail_msg("%s: host reward: %s", what, api->last_error());
    host_copy hc;
    host_copy_alloc(&hc, &e);
    int *actions = malloc(sizeof(int) * (size_t)n);
    assert_non_null(actions);
    compare_state(api, g, &e, &hc, NULL, 0, what);
    int episode = 3 * h * w;
    for (int t = 0; t < steps; t++) {
        env_random_actions(&e, aseed, (uint64_t)t, actions);
        if (!device_random)
            for (int i = 0; i < n; i += 7) actions[i] = (t + i) % 11 - 2; /* out-of-range actions are clamped */
        env_step(&e, actions);
        int rc = device_random ? api->env_step_random(g, aseed, (uint64_t)t, 1) : api->env_step(g, actions);
        if (rc) fail_msg("%s: step %d: %s", what, t, api->last_error());
        if (t % 97 == 0 || t == episode - 2 || t == episode - 1 || t == episode || t == steps - 1)
            compare_state(api, g, &e, &hc, actions, reward != NULL, what);
    }
    if (device_random) { /* many steps in one call: nothing returns to the host in between */
        for (int t = steps; t < steps + 50; t++) {
            env_random_actions(&e, aseed, (uint64_t)t, actions);
            env_step(&e, actions);
        }
        if (api->env_step_random(g, aseed, (uint64_t)steps, 50)) fail_msg("%s: 50 steps: %s", what, api->last_error());
        compare_state(api, g, &e, &hc, actions, reward != NULL, what);
    }
    pcg_cuda_env_log gl;
    assert_int_equal(api->env_get_log(g, &gl), 0);
    assert_true(gl.episodes == e.log.episodes);
    assert_true(gl.changed == e.log.changed);
    assert_true(fabs(gl.episode_return - e.log.episode_return) <= 1e-3 * (1 + fabs(e.log.episode_return)));
    free(actions);
    free(hc.block);
    api->env_free(g);
    api->arena_release(mark);
    env_free(&e);
}

/* rule k (0..3) of the observation centres x last-step rewards */
static env_rules rules_number(int k)
{
    env_rules r = {k & 1, (k >> 1) & 1, FINAL_LEVEL_767};
    return r;
}

static void run_differential(const pcg_cuda_api *api, int n, int h, int w, int variant, int mapping, int device_random,
                             const void *reward, int steps, int rules)
{
    run_differential_fn(api, n, h, w, variant, mapping, device_random, reward, sample_reward_cb, NULL, steps,
                        reward ? "sample" : "none", rules_number(rules));
}

/* Same seed, same actions: bit-identical maps, frozen masks, padded maps,
 * observations, steps and stream positions, at several env counts, both
 * thread mappings, both action paths, across an auto-reset. */
static void cuda_env_matches_cpu(void **state)
{
    (void)state;
    const pcg_cuda_api *api = cuda_device_or_skip("cuda_env_matches_cpu");
    /* the simulation runs every thread on the CPU: 1100 environments (nine
     * blocks, the last part full) stand in for the device's 4096 */
    int counts[] = {1, 37, 600, api->simulated ? 1100 : 4096};
    for (int c = 0; c < 4; c++)
        for (int m = 0; m < 2; m++)
            run_differential(api, counts[c], 16, 16, VARIANT_DUNGEON, m, (c + m) & 1, NULL, 800, c);
    run_differential(api, 129, 12, 20, VARIANT_TREASURE, PCG_OBS_WARP, 1, NULL, 3 * 12 * 20 + 30, 1);
    run_differential(api, 129, 7, 5, VARIANT_DUNGEON, PCG_OBS_THREAD, 0, NULL, 3 * 7 * 5 * 2 + 3, 0);
}

/* The prebuilt sample reward module (make cuda); the simulation runs
 * its kernel as the same reward on the host. */
static void *sample_module_or_skip(const char *test)
{
    void *img = cuda_prebuilt_module_or_skip(test, "cuda/reward_sample.fatbin");
    const pcg_cuda_api *api = backend_cuda();
    if (api && sim_reward_use(api, sample_reward_cb, NULL)) fail_msg("%s: %s", test, api->last_error());
    return img;
}

/* A reward module launched every step gives the CPU's rewards (float
 * tolerance) and leaves every integer state bit-identical. */
static void cuda_env_reward_matches_cpu(void **state)
{
    (void)state;
    const pcg_cuda_api *api = cuda_device_or_skip("cuda_env_reward_matches_cpu");
    void *img = sample_module_or_skip("cuda_env_reward_matches_cpu");
    for (int k = 0; k < 4; k++) /* the last step's reward both ways, each centre */
        run_differential(api, k < 2 ? (api->simulated ? 300 : 600) : 257, 16, 16, VARIANT_DUNGEON,
                         k < 2 ? PCG_OBS_THREAD : PCG_OBS_WARP,
                         k < 2, img, 800, k);
    /* a module without the entry point, and garbage, are refused with a message */
    size_t mark = api->arena_mark();
    pcg_cuda_env *g = api->env_alloc(4, 16, 16, VARIANT_DUNGEON, 1, PCG_OBS_THREAD);
    assert_non_null(g);
    static const char junk[] = "not a module";
    assert_int_equal(api->env_set_reward(g, junk), -1);
    assert_true(cuda_one_line(api->last_error()));
    api->env_free(g);
    api->arena_release(mark);
    free(img);
}

/* The reward at path (rewards/<dir>/scenarioN.c) run on the device from
 * module and by libtcc on the host: the same rewards on 51,200 transitions
 * (64 environments x 800 steps, across an auto-reset; the designed reward
 * on every step, the last of an episode included), the state bit-identical. */
static void reward_module_matches_libtcc(const pcg_cuda_api *api, const char *path, int sc, const void *module)
{
    char err[600];
    long len;
    char *src = cuda_read_all(path, &len);
    if (!src) fail_msg("cannot read %s (run from the source tree)", path);
    reward_prog *prog = reward_compile_cpu(src, err, sizeof err);
    if (!prog) fail_msg("%s: libtcc: %s", path, err);
    int variant = sc >= 3 ? VARIANT_TREASURE : VARIANT_DUNGEON;
    run_differential_fn(api, 64, 16, 16, variant, sc & 1, sc & 1, module, reward_prog_call, prog, 800, path,
                        rules_number(2 + (sc & 1)));
    reward_prog_free(prog);
    free(src);
}

/* The human rewards compiled by NVRTC for this device and by libtcc give
 * the same rewards on the same transitions (float tolerance). */
static void cuda_human_rewards_nvrtc_match_libtcc(void **state)
{
    (void)state;
    const char *test = "cuda_human_rewards_nvrtc_match_libtcc";
    const pcg_cuda_api *api = cuda_device_or_skip(test);
    char err[600];
    if (!reward_nvrtc_available(err, sizeof err)) {
        pcg_test_skip(test, err);
    }
    pcg_cuda_device_info info;
    assert_int_equal(api->device_info(0, &info), 0);
    char arch[16];
    snprintf(arch, sizeof arch, "sm_%d%d", info.major, info.minor);
    /* the engine's four, and the reference's two ports (rewards/human's
     * scenario 3 and 4 are copies of the engine's) */
    for (int k = 0; k < 6; k++) {
        int sc = k < 4 ? k + 1 : k - 3;
        char path[64];
        snprintf(path, sizeof path, "rewards/%s/scenario%d.c", k < 4 ? "engine" : "human", sc);
        long len;
        char *src = cuda_read_all(path, &len), *cubin = NULL;
        if (!src) fail_msg("%s: cannot read %s (run from the source tree)", test, path);
        size_t cubin_len = 0;
        if (reward_compile_nvrtc(src, arch, &cubin, &cubin_len, err, sizeof err))
            fail_msg("%s: NVRTC for %s: %s", path, arch, err);
        reward_module_matches_libtcc(api, path, sc, cubin);
        free(cubin);
        free(src);
    }
}

/* The human rewards as the modules make cuda builds ahead of time (NVRTC
 * on the build machine, one cubin per architecture in a fatbin), which is
 * how a GPU machine without NVRTC runs them: the device loads the cubin
 * for itself and gives libtcc's rewards. */
static void cuda_human_rewards_prebuilt_match_libtcc(void **state)
{
    (void)state;
    const char *test = "cuda_human_rewards_prebuilt_match_libtcc";
    const pcg_cuda_api *api = cuda_device_or_skip(test);
    for (int sc = 1; sc <= 4; sc++) {
        char path[64], rel[64];
        snprintf(path, sizeof path, "rewards/human/scenario%d.c", sc);
        snprintf(rel, sizeof rel, "cuda/human/scenario%d.fatbin", sc);
        void *module = cuda_prebuilt_module_or_skip(test, rel);
        reward_module_matches_libtcc(api, path, sc, module);
        free(module);
    }
}

/* A preset, or two shapes beside them: "odd", conv 1, conv 2 and the
 * critic's one-hot layer with outputs that fill a tiled kernel's output
 * group only in part, and "wide", a 9x9
 * kernel past the tiled kernels' tables (the untiled one-hot kernels). */
static int nn_test_config(const char *name, int crop_h, int crop_w, int n_actions, nn_config *cfg)
{
    int odd = !strcmp(name, "odd"), wide = !strcmp(name, "wide");
    if (nn_preset_config(odd || wide ? "small" : name, crop_h, crop_w, n_actions, cfg)) return -1;
    if (odd) cfg->c1 = 12, cfg->c2 = 20, cfg->critic_hidden = 40;
    if (wide) cfg->k = 9, cfg->pad = 4;
    return nn_config_finish(cfg);
}

/* dev (n floats on the device) equal to host bit for bit. */
static void expect_same_bits(const pcg_cuda_api *api, const float *dev, const float *host, size_t n, const char *what)
{
    float *got = malloc(n * sizeof(float));
    assert_non_null(got);
    assert_int_equal(api->copy_to_host(got, dev, n * sizeof(float)), 0);
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &host[i], sizeof(float)))
            fail_msg("%s: entry %zu: GPU %.9g CPU %.9g", what, i, got[i], host[i]);
    free(got);
}

/* Every layer's forward and backward of one shape at batch size B on the
 * device against host/learn/nn.c (relative error under 1e-4 in fp32); the
 * gathers that add in the CPU's order (conv 1 and the critic's one-hot
 * layer forward, the latter's weight gradient) bit for bit. */
static void nn_case_matches_cpu(const pcg_cuda_api *api, const char *preset, int p, int B)
{
    env_t e;
    assert_int_equal(env_alloc(&e, B, 16, 16, VARIANT_DUNGEON, 11), 0);
    int *act = malloc(sizeof(int) * B);
    assert_non_null(act);
    for (int t = 0; t < 300; t++) { /* varied observations, frozen cells included */
        env_random_actions(&e, 5, (uint64_t)t, act);
        env_step(&e, act);
    }
    nn_config cfg;
    assert_int_equal(nn_test_config(preset, e.cfg.crop_h, e.cfg.crop_w, e.cfg.n_actions, &cfg), 0);
    nn_t nn;
    assert_int_equal(nn_alloc(&nn, &cfg), 0);
    nn_init(&nn, 7, CONV_INIT_LECUN);
    /* non-zero biases so that their paths are checked too */
    philox_stream r;
    philox_stream_init(&r, 9, (uint64_t)p, 0);
    for (int t = 1; t < NN_NTENSORS; t += 2)
        for (size_t i = 0; i < nn.size[t]; i++) nn.params[nn.off[t] + i] = philox_unit(philox_next(&r)) * 0.2f - 0.1f;
    nn_acts a;
    assert_int_equal(nn_acts_alloc(&a, &cfg, B), 0);
    nn_forward(&nn, &a, e.obs, B);

    size_t mark = api->arena_mark();
    float *dP = cuda_to_device(api, nn.params, nn.n_params * sizeof(float));
    nn_zero_grad(&nn);
    float *dG = cuda_to_device(api, nn.grads, nn.n_params * sizeof(float));
    unsigned char *dobs = cuda_to_device(api, e.obs, (size_t)B * e.obs_size);
    nn_acts da;
    if (api->nn_acts_alloc(&da, &cfg, B)) fail_msg("nn_acts_alloc: %s", api->last_error());
    if (api->nn_forward(&cfg, nn.off, dP, &da, dobs, B)) fail_msg("nn_forward: %s", api->last_error());
    size_t n1 = (size_t)B * cfg.h1 * cfg.w1 * cfg.c1, n2 = (size_t)B * cfg.h2 * cfg.w2 * cfg.c2;
    char what[96];
#define CLOSE(dev, host, n, tol, name)                                              \
    snprintf(what, sizeof what, "%s preset, %d samples: %s", preset, B, name);    \
    cuda_expect_close(api, dev, host, n, tol, what)
    CLOSE(da.c1, a.c1, n1, 1e-5, "conv1 forward");
    CLOSE(da.c2, a.c2, n2, 1e-4, "conv2 forward");
    CLOSE(da.a1, a.a1, (size_t)B * cfg.actor_hidden, 1e-4, "actor dense forward");
    CLOSE(da.logits, a.logits, (size_t)B * cfg.n_actions, 1e-4, "logits");
    CLOSE(da.v1, a.v1, (size_t)B * cfg.critic_hidden, 1e-5, "critic one-hot dense forward");
    snprintf(what, sizeof what, "%s preset, %d samples: conv1 forward bits", preset, B);
    expect_same_bits(api, da.c1, a.c1, n1, what);
    snprintf(what, sizeof what, "%s preset, %d samples: critic one-hot forward bits", preset, B);
    expect_same_bits(api, da.v1, a.v1, (size_t)B * cfg.critic_hidden, what);
    CLOSE(da.v2, a.v2, (size_t)B * cfg.critic_hidden, 1e-4, "critic dense forward");
    CLOSE(da.value, a.value, (size_t)B, 1e-4, "value");

    /* the PPO loss on the CPU's outputs, then backward from its gradients */
    float *old_logp = malloc(sizeof(float) * B * 5);
    assert_non_null(old_logp);
    float *adv = old_logp + B, *old_value = adv + B, *ret = old_value + B;
    for (int n = 0; n < B; n++) {
        act[n] = (int)philox_below(philox_next(&r), (uint32_t)cfg.n_actions);
        old_logp[n] = -1.8f + (philox_unit(philox_next(&r)) - 0.5f) * 0.6f;
        adv[n] = philox_unit(philox_next(&r)) * 4 - 2;
        old_value[n] = a.value[n] + (philox_unit(philox_next(&r)) - 0.5f) * 0.8f;
        ret[n] = a.value[n] + (philox_unit(philox_next(&r)) - 0.5f) * 2;
    }
    nn_loss_stats st;
    memset(&st, 0, sizeof st);
    double loss = nn_ppo_loss(&a, B, cfg.n_actions, act, old_logp, adv, old_value, ret, 0.2, 0.5, 0.01,
                              1.0 / B, &st);
    assert_int_equal(api->copy_to_device(da.logits, a.logits, sizeof(float) * B * cfg.n_actions), 0);
    assert_int_equal(api->copy_to_device(da.value, a.value, sizeof(float) * B), 0);
    int *dact = cuda_to_device(api, act, sizeof(int) * B);
    float *dext = cuda_to_device(api, old_logp, sizeof(float) * B * 4);
    double *dout = api->arena_alloc(6 * sizeof(double)), got[6];
    assert_non_null(dout);
    if (api->nn_ppo_loss(&da, B, cfg.n_actions, dact, dext, dext + B, dext + 2 * B, dext + 3 * B, 0.2, 0.5,
                         0.01, 1.0 / B, dout))
        fail_msg("nn_ppo_loss: %s", api->last_error());
    assert_int_equal(api->copy_to_host(got, dout, sizeof got), 0);
    double want[6] = {loss, st.policy, st.value, st.entropy, st.approx_kl, st.clipped};
    for (int k = 0; k < 6; k++)
        if (fabs(got[k] - want[k]) > 1e-9 * (1 + fabs(want[k])))
            fail_msg("%s preset: PPO loss term %d: GPU %.12g CPU %.12g", preset, k, got[k], want[k]);
    CLOSE(da.dlogits, a.dlogits, (size_t)B * cfg.n_actions, 1e-6, "PPO dlogits");
    CLOSE(da.dvalue, a.dvalue, (size_t)B, 1e-6, "PPO dvalue");
    assert_int_equal(api->copy_to_device(da.dlogits, a.dlogits, sizeof(float) * B * cfg.n_actions), 0);
    assert_int_equal(api->copy_to_device(da.dvalue, a.dvalue, sizeof(float) * B), 0);
    /* Backward from the CPU's activations: an output a rounding away from 0
     * may sit on the other side of its ReLU on the device, and the
     * gradients below it would then differ by more than rounding. */
    const float *host_acts[] = {a.c2, a.a1, a.v1, a.v2};
    float *dev_acts[] = {da.c2, da.a1, da.v1, da.v2};
    size_t act_n[] = {n2, (size_t)B * cfg.actor_hidden, (size_t)B * cfg.critic_hidden, (size_t)B * cfg.critic_hidden};
    for (int k = 0; k < 4; k++) assert_int_equal(api->copy_to_device(dev_acts[k], host_acts[k], act_n[k] * 4), 0);

    nn_backward(&nn, &a, e.obs, B);
    if (api->nn_backward(&cfg, nn.off, dP, dG, &da, dobs, B)) fail_msg("nn_backward: %s", api->last_error());
    static const char *names[NN_NTENSORS] = {"conv1 W", "conv1 b", "conv2 W", "conv2 b", "actor dense W",
                                             "actor dense b", "logits W", "logits b", "critic 1 W",
                                             "critic 1 b", "critic 2 W", "critic 2 b", "value W", "value b"};
    for (int t = 0; t < NN_NTENSORS; t++) {
        char name[64];
        snprintf(name, sizeof name, "gradient of %s", names[t]);
        CLOSE(dG + nn.off[t], nn.grads + nn.off[t], nn.size[t], 1e-4, name);
    }
    snprintf(what, sizeof what, "%s preset, %d samples: critic 1 W gradient bits", preset, B);
    expect_same_bits(api, dG + nn.off[NN_V1W], nn.grads + nn.off[NN_V1W], nn.size[NN_V1W], what);
#undef CLOSE
    api->arena_release(mark);
    free(old_logp);
    free(act);
    nn_acts_free(&a);
    nn_free(&nn);
    env_free(&e);
}

/* The three presets (tiny: its layers read a window of the observation),
 * the two shapes above, and the PPO loss, at 130 samples. */
static void cuda_nn_matches_cpu(void **state)
{
    (void)state;
    const pcg_cuda_api *api = cuda_device_or_skip("cuda_nn_matches_cpu");
    const char *presets[] = {"small", "paper", "tiny", "odd", "wide"};
    for (int p = 0; p < 5; p++) nn_case_matches_cpu(api, presets[p], p, 130);
    /* one simulated multiprocessor: the critic's one-hot layer takes 128
     * samples a block, as the update's passes do on a device (the same
     * bits; the second block holds 2) */
    if (api->simulated) {
        setenv("PCGRLLM_SIM_SMS", "1", 1);
        api->work_reset();
        nn_case_matches_cpu(api, "paper", 1, 130);
        unsetenv("PCGRLLM_SIM_SMS");
        int n = 0, seen = 0;
        const pcg_cuda_work *w = api->work_counters(&n);
        for (int i = 0; i < n; i++) seen += !strcmp(w[i].name, "dense_onehot_fwd_tiled_kernel<128>");
        assert_int_equal(seen, 1);
    }

    /* more input channels than the one-hot kernels hold: refused, both ways */
    nn_config cfg;
    assert_int_equal(nn_test_config("small", 31, 31, 6, &cfg), 0);
    size_t mark = api->arena_mark();
    nn_acts da;
    if (api->nn_acts_alloc(&da, &cfg, 2)) fail_msg("nn_acts_alloc: %s", api->last_error());
    cfg.in_ch = OBS_CHANNELS + 1;
    size_t off[NN_NTENSORS] = {0};
    assert_int_equal(api->nn_forward(&cfg, off, NULL, &da, NULL, 2), -1);
    assert_string_equal(api->last_error(), "nn_forward: 12 input channels, at most 11");
    assert_int_equal(api->nn_backward(&cfg, off, NULL, NULL, &da, NULL, 2), -1);
    assert_string_equal(api->last_error(), "nn_backward: 12 input channels, at most 11");
    api->arena_release(mark);
}

/* Batch sizes around the tiled one-hot kernels' sample groups (16 and 64
 * forward, chunks of 64 and tiles of 128 backward) and a lone sample, on
 * the small shapes (PCGRLLM_TEST_NN_BATCHES: a comma list instead;
 * PCGRLLM_TEST_NN_PRESET: one of them, or small or paper, alone). */
static void cuda_nn_matches_cpu_batches(void **state)
{
    (void)state;
    const pcg_cuda_api *api = cuda_device_or_skip("cuda_nn_matches_cpu_batches");
    const char *presets[] = {"tiny", "odd", "wide", "small", "paper"};
    int sizes[16] = {1, 17, 65}, ns = 3;
    const char *env = getenv("PCGRLLM_TEST_NN_BATCHES");
    if (env && *env) {
        ns = 0;
        for (const char *q = env; *q && ns < 16; q++) {
            sizes[ns++] = atoi(q);
            while (*q && *q != ',') q++;
            if (!*q) break;
        }
    }
    const char *only = getenv("PCGRLLM_TEST_NN_PRESET");
    for (int p = 0; p < 5; p++)
        for (int k = 0; k < ns; k++)
            if (only && *only ? !strcmp(only, presets[p]) : p < 3) nn_case_matches_cpu(api, presets[p], p, sizes[k]);
}

static void expect_near(double got, double want, double rel, const char *what)
{
    if (!(fabs(got - want) <= rel * (1 + fabs(want)))) fail_msg("%s: GPU %.9g CPU %.9g", what, got, want);
}

/* One rollout and one full PPO update (2 epochs x 2 minibatches) of the
 * device trainer against host/learn/ppo.c from the same network and seed;
 * the device's 256-sample minibatches in three passes (passes of at most
 * 100 samples: PCGRLLM_CUDA_PASS_MOST), the CPU's in one. */
static void cuda_ppo_matches_cpu(void **state)
{
    (void)state;
    const char *test = "cuda_ppo_matches_cpu";
    const pcg_cuda_api *api = cuda_device_or_skip(test);
    void *img = sample_module_or_skip(test);
    ppo_config cfg;
    ppo_config_default(&cfg);
    cfg.n_envs = 32;
    cfg.n_steps = 16;
    cfg.n_epochs = 2;
    cfg.n_minibatches = 2;
    cfg.seed = 3;
    snprintf(cfg.preset, sizeof cfg.preset, "small");
    char err[300];
    ppo_t cp;
    if (ppo_init(&cp, &cfg, sample_reward_cb, NULL, err, sizeof err)) fail_msg("ppo_init: %s", err);
    size_t mark = api->arena_mark();
    setenv("PCGRLLM_CUDA_PASS_MOST", "100", 1);
    pcg_cuda_ppo *gp = api->ppo_init(&cfg, &cp.nn.cfg, cp.nn.off, cp.nn.n_params, cp.nn.params, img);
    unsetenv("PCGRLLM_CUDA_PASS_MOST");
    if (!gp) fail_msg("device ppo_init: %s", api->last_error());
    size_t N = (size_t)cfg.n_steps * cfg.n_envs, os = (size_t)cp.env.obs_size, P = cp.nn.n_params;
    ppo_metrics mc, mg;
    memset(&mc, 0, sizeof mc);
    memset(&mg, 0, sizeof mg);
    ppo_rollout(&cp, &mc);
    if (api->ppo_rollout(gp, &mg)) fail_msg("device rollout: %s", api->last_error());
    unsigned char *obs = malloc(N * os), *dones = malloc(N);
    int *actions = malloc(N * sizeof(int));
    float *f = malloc(N * 5 * sizeof(float));
    assert_true(obs && dones && actions && f);
    pcg_cuda_rollout_host ro = {obs, dones, actions, f, f + N, f + 2 * N, f + 3 * N, f + 4 * N};
    assert_int_equal(api->ppo_get_rollout(gp, &ro), 0);
    for (size_t i = 0; i < N; i++)
        if (actions[i] != cp.actions[i])
            fail_msg("rollout sample %zu (step %zu, env %zu): GPU action %d, CPU %d (logits differ at a sampling "
                     "boundary, or the streams differ)", i, i / cfg.n_envs, i % cfg.n_envs, actions[i], cp.actions[i]);
    assert_memory_equal(obs, cp.obs, N * os);
    assert_memory_equal(dones, cp.dones, N);
    assert_true(cuda_tensor_err(ro.logp, cp.logp, N) < 1e-4);
    assert_true(cuda_tensor_err(ro.values, cp.values, N) < 1e-4);
    assert_true(cuda_tensor_err(ro.rewards, cp.rewards, N) < 1e-5);
    assert_true(cuda_tensor_err(ro.adv, cp.adv, N) < 1e-3);
    assert_true(cuda_tensor_err(ro.ret, cp.ret, N) < 1e-3);
    assert_true(mg.episodes == mc.episodes);
    expect_near(mg.step_reward, mc.step_reward, 1e-5, "mean step reward");

    assert_int_equal(ppo_update(&cp, &mc), 0);
    api->work_reset();
    if (api->ppo_update(gp, &mg)) fail_msg("device update: %s", api->last_error());
    if (api->simulated) { /* the loss once a pass: 3 passes x 2 minibatches x 2 epochs */
        int n = 0;
        const pcg_cuda_work *w = api->work_counters(&n);
        uint64_t losses = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(w[i].name, "ppo_loss_kernel")) losses = w[i].launches;
        assert_int_equal(losses, 3 * cfg.n_minibatches * cfg.n_epochs);
    }
    expect_near(mg.policy_loss, mc.policy_loss, 1e-3, "policy loss");
    expect_near(mg.value_loss, mc.value_loss, 1e-3, "value loss");
    expect_near(mg.entropy, mc.entropy, 1e-4, "entropy");
    expect_near(mg.approx_kl, mc.approx_kl, 1e-2, "approx KL");
    expect_near(mg.grad_norm, mc.grad_norm, 1e-3, "gradient norm");
    float *params = malloc(P * sizeof(float));
    assert_non_null(params);
    pcg_cuda_ppo_state gs;
    memset(&gs, 0, sizeof gs);
    gs.params = params;
    assert_int_equal(api->ppo_get_state(gp, &gs), 0);
    int64_t adam_t = gs.adam_t;
    assert_int_equal(adam_t, cp.adam_t);
    assert_true(gs.step == cp.step && gs.update == cp.update);
    /* Adam moves each weight by at most about lr per step: compare the moves */
    double worst = 0, tol = 0.05 * cfg.lr * (double)adam_t;
    size_t at = 0;
    for (size_t i = 0; i < P; i++)
        if (fabs((double)params[i] - cp.nn.params[i]) > worst) worst = fabs((double)params[i] - cp.nn.params[i]), at = i;
    if (worst > tol) fail_msg("parameter %zu after the update: GPU %.9g CPU %.9g (tolerance %.3g)", at, params[at],
                              cp.nn.params[at], tol);
    free(params);
    free(obs);
    free(dones);
    free(actions);
    free(f);
    api->ppo_free(gp);
    api->arena_release(mark);
    ppo_free(&cp);
    free(img);
}

/* A device trainer resumed from a CPU trainer's state (what a checkpoint
 * holds) continues exactly as the CPU trainer does. */
static void cuda_ppo_resume_from_cpu_state(void **state)
{
    (void)state;
    const char *test = "cuda_ppo_resume_from_cpu_state";
    const pcg_cuda_api *api = cuda_device_or_skip(test);
    void *img = sample_module_or_skip(test);
    ppo_config cfg;
    ppo_config_default(&cfg);
    cfg.n_envs = 24;
    cfg.n_steps = 300; /* the third rollout crosses the end of the first episodes */
    cfg.n_epochs = 1;
    cfg.n_minibatches = 2;
    cfg.seed = 8;
    snprintf(cfg.preset, sizeof cfg.preset, "small");
    char err[300];
    ppo_t cp;
    if (ppo_init(&cp, &cfg, sample_reward_cb, NULL, err, sizeof err)) fail_msg("ppo_init: %s", err);
    size_t mark = api->arena_mark();
    pcg_cuda_ppo *gp = api->ppo_init(&cfg, &cp.nn.cfg, cp.nn.off, cp.nn.n_params, cp.nn.params, img);
    if (!gp) fail_msg("device ppo_init: %s", api->last_error());
    ppo_metrics mc;
    for (int u = 0; u < 2; u++) assert_int_equal(ppo_train_update(&cp, &mc), 0);
    pcg_cuda_ppo_state st = {cp.nn.params, cp.adam_m, cp.adam_v, cp.adam_t, cp.step, cp.update, cp.env.maps,
                             cp.env.frozen, cp.env.steps, cp.env.rng_pos, cp.env.returns};
    if (api->ppo_set_state(gp, &st)) fail_msg("ppo_set_state: %s", api->last_error());
    /* the restored environments equal the CPU's, observations included
     * (the last step's rewards and dones are outputs, not state) */
    env_t *e = &cp.env;
    memset(e->rewards, 0, sizeof(float) * (size_t)e->n);
    memset(e->dones, 0, (size_t)e->n);
    host_copy hc;
    host_copy_alloc(&hc, e);
    compare_state(api, api->ppo_env(gp), e, &hc, NULL, 0, "restored environments");
    ppo_metrics mg;
    memset(&mg, 0, sizeof mg);
    ppo_rollout(&cp, &mc);
    if (api->ppo_rollout(gp, &mg)) fail_msg("device rollout: %s", api->last_error());
    size_t N = (size_t)cfg.n_steps * cfg.n_envs;
    int *actions = malloc(N * sizeof(int));
    assert_non_null(actions);
    pcg_cuda_rollout_host ro;
    memset(&ro, 0, sizeof ro);
    ro.actions = actions;
    assert_int_equal(api->ppo_get_rollout(gp, &ro), 0);
    for (size_t i = 0; i < N; i++)
        if (actions[i] != cp.actions[i])
            fail_msg("resumed rollout sample %zu: GPU action %d, CPU %d", i, actions[i], cp.actions[i]);
    assert_true(mg.step == mc.step);
    compare_state(api, api->ppo_env(gp), e, &hc, NULL, 0, "environments after the resumed rollout");
    free(actions);
    free(hc.block);
    api->ppo_free(gp);
    api->arena_release(mark);
    ppo_free(&cp);
    free(img);
}

/* cuda/play.cu's episode with the kernels' per-environment code run on the
 * host in kernel order (reset, then per step: policy forward, the sampled
 * action, edit + finish; under edits768 the last step the edit alone, as
 * play_last_kernel; under edits767 no last step) gives ppo_play_episode's
 * levels byte for byte, both variants, both observation centres, and leaves
 * every environment at step episode_len - 1 (no auto-reset). */
static void cuda_generate_rules_on_host(void **state)
{
    (void)state;
    for (int k = 0; k < 4; k++) {
        int variant = k & 1;
        env_rules rules = {k >> 1, TERMINAL_REWARD_ENV, (k >> 1) ^ (k & 1)};
        const int n = 5, h = 7, w = 5;
        const uint64_t seed = 61 + (uint64_t)variant, action_seed = 4;
        env_t e;
        assert_int_equal(env_alloc(&e, n, h, w, variant, seed), 0);
        host_copy hc;
        host_copy_alloc(&hc, &e);
        size_t N = (size_t)n;
        unsigned int *counts = calloc(N * 2, sizeof(unsigned int));
        double *ep_ret = calloc(N, sizeof(double));
        assert_true(counts && ep_ret);
        env_batch d;
        host_env_view(&d, &hc, n, h, w, variant, seed, counts, ep_ret);
        d.c.rules = rules;
        for (int i = 0; i < n; i++) batch_init(&d, i, 1, 1);
        nn_config cfg;
        assert_int_equal(nn_preset_config("small", d.c.crop_h, d.c.crop_w, d.c.n_actions, &cfg), 0);
        nn_t nn;
        assert_int_equal(nn_alloc(&nn, &cfg), 0);
        nn_init(&nn, 8, CONV_INIT_LECUN);
        nn_acts a;
        assert_int_equal(nn_acts_alloc(&a, &cfg, n), 0);
        int A = d.c.n_actions, T = d.c.episode_len;
        int steps = rules.final_level == FINAL_LEVEL_768 ? T : T - 1;
        for (int t = 0; t < steps; t++) {
            nn_forward(&nn, &a, d.obs, n);
            for (int i = 0; i < n; i++) {
                float lp;
                d.actions[i] = ppo_sample(a.logits + (size_t)i * A, A, ppo_action_draw(action_seed, i, (uint64_t)t), &lp);
                batch_edit(&d, i, 0, 0, 0, 0);
                if (t < T - 1) batch_finish(&d, i, 0.0f, 1);
            }
        }
        unsigned char *want = malloc(N * d.cells);
        assert_non_null(want);
        assert_int_equal(ppo_play_episode(&nn, n, h, w, variant, seed, action_seed, &rules, NULL, NULL, want, NULL), 0);
        assert_memory_equal(hc.maps, want, N * d.cells);
        for (int i = 0; i < n; i++) assert_int_equal(hc.steps[i], T - 1);
        free(want);
        nn_acts_free(&a);
        nn_free(&nn);
        free(counts);
        free(ep_ret);
        free(hc.block);
        env_free(&e);
    }
}

/* With every edit kept (edits768) the device's levels differ from its
 * edits767 levels (n of h x w in l767) at most in the last step's cell,
 * and the edit shows in some of them. */
static void expect_only_last_edit_differs(const pcg_cuda_api *api, const nn_t *nn, int n, int h, int w, uint64_t seed,
                                          uint64_t action_seed, const unsigned char *l767)
{
    env_rules all_edits = {OBS_CENTRE_LAST, TERMINAL_REWARD_ENV, FINAL_LEVEL_768};
    size_t cells = (size_t)h * w;
    unsigned char *l768 = malloc((size_t)n * cells);
    assert_non_null(l768);
    if (api->play_episode(&nn->cfg, nn->off, nn->n_params, nn->params, n, h, w, VARIANT_DUNGEON, seed, action_seed,
                          &all_edits, l768))
        fail_msg("play_episode (edits768): %s", api->last_error());
    int last_cell = (3 * h * w - 1) % (int)cells, changed = 0;
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < (int)cells; c++)
            if (c != last_cell && l768[i * cells + c] != l767[i * cells + c])
                fail_msg("level %d: edits768 differs from edits767 at cell %d, not only at the last edit's", i, c);
        changed += l768[i * cells + last_cell] != l767[i * cells + last_cell];
    }
    assert_true(changed > 0);
    free(l768);
}

/* Device generation (play_episode) against ppo_play_episode: the small
 * preset with a random-initialised network, 30 levels of one episode (767
 * steps each: the reference's level, the last edit not kept; then the
 * device's edits768 levels against its own; 8 x 8 levels in the simulation).
 *
 * The criterion.  Environments are independent and the device environment
 * is bit-exact (cuda_env_matches_cpu), so level i depends only on env i's
 * draws and on the logits its observations get.  The two runs can part only
 * where the device's logits for an observation sample another action than
 * the CPU's with the same draw (a float difference in the logits carrying
 * the draw across a sampling boundary); from that step on the episode, and
 * so the level, legitimately differs.  The test replays the CPU episode step
 * by step, forwards each of its observations on the device too, and marks
 * the levels where such a flip occurs.  Every unmarked level must be
 * identical byte for byte.  In fp32 the logits agree to about 1e-6, so a
 * flip needs a draw that close to a boundary: about 1e-5 per step, a few
 * hundredths of a level per run; more than 2 flipped levels of 30 means
 * the device network or the matmul mode is off, and fails too. */
static void cuda_generate_matches_cpu(void **state)
{
    (void)state;
    const char *test = "cuda_generate_matches_cpu";
    const pcg_cuda_api *api = cuda_device_or_skip(test);
    enum { N = 30 };
    /* the simulation steps every thread of every kernel on the CPU: an 8 x 8
     * map (191 steps, 15 x 15 crops) checks the same code paths in a
     * seventeenth of the time */
    const int h = api->simulated ? 8 : 16, w = h;
    const uint64_t seed = PPO_EVAL_SEED, action_seed = 5;
    env_t e;
    assert_int_equal(env_alloc(&e, N, h, w, VARIANT_DUNGEON, seed), 0);
    nn_config cfg;
    assert_int_equal(nn_preset_config("small", e.cfg.crop_h, e.cfg.crop_w, e.cfg.n_actions, &cfg), 0);
    nn_t nn;
    assert_int_equal(nn_alloc(&nn, &cfg), 0);
    nn_init(&nn, 21, CONV_INIT_LECUN);
    size_t cells = (size_t)h * w, os = (size_t)e.obs_size;
    int A = e.cfg.n_actions, T = e.cfg.episode_len;
    unsigned char *cpu = malloc(N * cells), *gpu = malloc(N * cells);
    float *glogits = malloc(sizeof(float) * N * A);
    int *act = malloc(sizeof(int) * N), flipped[N] = {0};
    assert_true(cpu && gpu && glogits && act);
    assert_int_equal(api->blas_set_math(PCG_MATH_FP32), 0);
    if (api->play_episode(&nn.cfg, nn.off, nn.n_params, nn.params, N, h, w, VARIANT_DUNGEON, seed, action_seed, NULL,
                          gpu))
        fail_msg("play_episode: %s", api->last_error());
    assert_int_equal(ppo_play_episode(&nn, N, h, w, VARIANT_DUNGEON, seed, action_seed, NULL, NULL, NULL, cpu, NULL), 0);

    /* the CPU episode again, with the device's logits beside the CPU's */
    nn_acts a, da;
    assert_int_equal(nn_acts_alloc(&a, &cfg, N), 0);
    size_t mark = api->arena_mark();
    float *dP = cuda_to_device(api, nn.params, nn.n_params * sizeof(float));
    unsigned char *dobs = api->arena_alloc(N * os);
    assert_non_null(dobs);
    if (api->nn_acts_alloc(&da, &cfg, N)) fail_msg("nn_acts_alloc: %s", api->last_error());
    for (int t = 0; t < T - 1; t++) { /* the reference's level: the last step is not kept */
        nn_forward(&nn, &a, e.obs, N);
        assert_int_equal(api->copy_to_device(dobs, e.obs, N * os), 0);
        if (api->nn_forward(&cfg, nn.off, dP, &da, dobs, N)) fail_msg("nn_forward: %s", api->last_error());
        assert_int_equal(api->copy_to_host(glogits, da.logits, sizeof(float) * N * A), 0);
        for (int i = 0; i < N; i++) {
            float lp, u = ppo_action_draw(action_seed, i, (uint64_t)t);
            act[i] = ppo_sample(a.logits + (size_t)i * A, A, u, &lp);
            if (ppo_sample(glogits + (size_t)i * A, A, u, &lp) != act[i]) flipped[i] = 1;
        }
        env_step(&e, act);
    }
    api->arena_release(mark);
    /* the replay is ppo_play_episode itself */
    assert_memory_equal(e.maps, cpu, N * cells);
    int n_flipped = 0, n_same = 0;
    for (int i = 0; i < N; i++) {
        int same = !memcmp(gpu + i * cells, cpu + i * cells, cells);
        n_flipped += flipped[i];
        n_same += same;
        if (!same && !flipped[i])
            fail_msg("level %d: the device's level differs from the CPU's, yet no action of its episode is near a "
                     "sampling boundary", i);
    }
    if (n_flipped > 2)
        fail_msg("%d of %d levels have an action that the device's logits sample differently (fp32 expects at most "
                 "a rare one)", n_flipped, N);
    if (n_same < N) printf("%s: %d of %d levels identical, the rest flipped at a sampling boundary\n", test, n_same, N);
    expect_only_last_edit_differs(api, &nn, N, h, w, seed, action_seed, gpu);
    /* a network that does not fit the environment is one line of error */
    nn_config bad = nn.cfg;
    bad.n_actions = A + 1;
    assert_int_equal(api->play_episode(&bad, nn.off, nn.n_params, nn.params, N, h, w, VARIANT_DUNGEON, seed,
                                       action_seed, NULL, gpu), -1);
    assert_true(cuda_one_line(api->last_error()));
    assert_int_equal(api->arena_mark(), mark);
    nn_acts_free(&a);
    nn_free(&nn);
    env_free(&e);
    free(cpu);
    free(gpu);
    free(glogits);
    free(act);
}

/* generate and bench --backend from the command line: without a device,
 * cuda is one line of error (exit 1) and auto runs on the CPU (the same
 * levels as --backend cpu); with one, generate --backend cuda runs on the
 * device.  An unknown backend is a usage error. */
static void cuda_cli_generate_bench_backend(void **state)
{
    (void)state;
    const char *bin = pcg_test_binary(), *tmp = pcg_test_tmpdir();
    char out[8192], path[1024], why[300];
    int devices = pcg_test_cuda_devices(why, sizeof why);
    snprintf(path, sizeof path, "%s/gen_walls.c", tmp);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("float compute_reward(const level_t *prev, const level_t *curr)\n"
          "{ return (float)(count_tiles(curr, WALL) - count_tiles(prev, WALL)); }\n", f);
    fclose(f);
    int rc = pcg_test_sh(out, sizeof out,
                         "%s train --reward %s --scenario 1 --steps 32 --envs 2 --rollout 16 --epochs 1 "
                         "--preset small --threads 1 --quiet --out %s/gen_run",
                         bin, path, tmp);
    if (rc) print_error("%s\n", out);
    assert_int_equal(rc, 0);
    rc = pcg_test_sh(out, sizeof out, "%s generate --policy %s/gen_run --n 1 --threads 1 --out %s/gen_cpu", bin, tmp,
                     tmp);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "generated on the cpu backend"));
    rc = pcg_test_sh(out, sizeof out,
                     "%s generate --policy %s/gen_run --n 1 --threads 1 --backend cuda --out %s/gen_cuda", bin, tmp,
                     tmp);
    if (devices <= 0) {
        assert_int_equal(rc, 1);
        assert_true(cuda_one_line(out));
        assert_non_null(strstr(out, "no usable CUDA device"));
    } else {
        if (rc) print_error("%s\n", out);
        assert_int_equal(rc, 0);
        assert_non_null(strstr(out, "generated on the cuda backend"));
    }
    rc = pcg_test_sh(out, sizeof out,
                     "%s generate --policy %s/gen_run --n 1 --threads 1 --backend auto --out %s/gen_auto", bin, tmp,
                     tmp);
    assert_int_equal(rc, 0);
    if (devices <= 0) {
        assert_non_null(strstr(out, "generated on the cpu backend"));
        assert_int_equal(pcg_test_sh(out, sizeof out, "cmp %s/gen_cpu/level_000.txt %s/gen_auto/level_000.txt", tmp,
                                     tmp), 0);
    }
    rc = pcg_test_sh(out, sizeof out, "%s generate --policy %s/gen_run --out %s/gen_x --backend tpu", bin, tmp, tmp);
    assert_int_equal(rc, 2);
    assert_true(cuda_one_line(out));
    /* bench: its help names the flag; cuda without a device is one line;
     * auto without one is the CPU (the env table's help: nothing measured) */
    assert_int_equal(pcg_test_sh(out, sizeof out, "%s bench --help", bin), 0);
    assert_non_null(strstr(out, "--backend cpu|cuda|auto"));
    if (devices <= 0) {
        rc = pcg_test_sh(out, sizeof out, "%s bench env --backend cuda", bin);
        assert_int_equal(rc, 1);
        assert_true(cuda_one_line(out));
        assert_non_null(strstr(out, "no usable CUDA device"));
        rc = pcg_test_sh(out, sizeof out, "%s bench env --backend auto --help", bin);
        assert_int_equal(rc, 0);
        assert_non_null(strstr(out, "backend: cpu"));
        assert_non_null(strstr(out, "usage: pcgrllm bench env"));
    }
    rc = pcg_test_sh(out, sizeof out, "%s bench train --backend=tpu", bin);
    assert_int_equal(rc, 2);
    assert_true(cuda_one_line(out));
}

/* The arena grows: a small first use does not pin it, an allocation past
 * its first block takes another, and a mark/alloc/release cycle reuses the
 * block it took instead of allocating again. */
static void cuda_arena_grows(void **state)
{
    (void)state;
    const pcg_cuda_api *api = cuda_device_or_skip("cuda_arena_grows");
    size_t mark = api->arena_mark(), used0, cap0, used1, cap1, cap2;
    void *small = api->arena_alloc(4096);
    assert_non_null(small);
    api->arena_stats(&used0, &cap0);
    /* more than what is left: a new block */
    void *big = api->arena_alloc(cap0 + ((size_t)64 << 20));
    if (!big) fail_msg("arena did not grow: %s", api->last_error());
    api->arena_stats(&used1, &cap1);
    assert_true(cap1 > cap0 && used1 > used0);
    api->arena_release(mark);
    assert_non_null(api->arena_alloc(4096));
    assert_non_null(api->arena_alloc(cap0 + ((size_t)64 << 20))); /* the kept block again */
    api->arena_stats(NULL, &cap2);
    assert_true(cap2 == cap1);
    api->arena_release(mark);
    assert_int_equal(api->arena_reserve((size_t)1 << 20), 0); /* never refused once in use */
}

/* --backend auto with a GPU but no NVRTC trains on the CPU with one line;
 * PCGRLLM_GPU is honoured by `device` (and an index past the GPUs is one
 * line). */
static void cuda_backend_choices(void **state)
{
    (void)state;
    const pcg_cuda_api *api = cuda_device_or_skip("cuda_backend_choices");
    const char *bin = pcg_test_binary(), *tmp = pcg_test_tmpdir();
    char out[8192];
    int rc;
    if (api->simulated) {
        /* auto never takes the simulation; cuda without NVRTC says so */
        rc = pcg_test_sh(out, sizeof out,
                         "PCGRLLM_NVRTC=/nonexistent/libnvrtc.so %s train --backend cuda --reward "
                         "rewards/human/scenario1.c --scenario 1 --steps 256 --envs 2 --preset small --out %s/sim-nonvrtc "
                         "2>&1 >/dev/null",
                         bin, tmp);
        assert_int_not_equal(rc, 0);
        assert_true(cuda_one_line(out));
        assert_non_null(strstr(out, "NVRTC"));
    }
    rc = pcg_test_sh(out, sizeof out,
                     "PCGRLLM_NVRTC=/nonexistent/libnvrtc.so %s train --backend auto --reward "
                         "rewards/human/scenario1.c --scenario 1 --steps 256 --envs 2 --preset small --out %s/auto-cpu",
                         bin, tmp);
    if (rc != 0) fail_msg("train --backend auto without NVRTC: %s", out);
    assert_non_null(strstr(out, api->simulated ? "cpu backend" : "training on the CPU"));
    assert_non_null(strstr(out, "cpu backend"));
    rc = pcg_test_sh(out, sizeof out, "PCGRLLM_GPU=0 %s device --backend cuda", bin);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "device: GPU 0, "));
    rc = pcg_test_sh(out, sizeof out, "PCGRLLM_GPU=999 %s device --backend cuda", bin);
    assert_int_not_equal(rc, 0);
    assert_true(cuda_one_line(out));
    assert_non_null(strstr(out, "PCGRLLM_GPU=999: not a device index"));
}

PCG_TESTS(cuda, cmocka_unit_test(cuda_library_exports), cmocka_unit_test(cuda_backend_select),
          cmocka_unit_test(cuda_cli_backend_flag), cmocka_unit_test(cuda_env_rules_on_host),
          cmocka_unit_test(cuda_curand_matches_philox),
          cmocka_unit_test(cuda_env_matches_cpu), cmocka_unit_test(cuda_env_reward_matches_cpu),
          cmocka_unit_test(cuda_human_rewards_nvrtc_match_libtcc),
          cmocka_unit_test(cuda_human_rewards_prebuilt_match_libtcc),
          cmocka_unit_test(cuda_nn_matches_cpu),
          cmocka_unit_test(cuda_nn_matches_cpu_batches),
          cmocka_unit_test(cuda_ppo_matches_cpu), cmocka_unit_test(cuda_ppo_resume_from_cpu_state),
          cmocka_unit_test(cuda_generate_rules_on_host), cmocka_unit_test(cuda_generate_matches_cpu),
          cmocka_unit_test(cuda_cli_generate_bench_backend), cmocka_unit_test(cuda_arena_grows),
          cmocka_unit_test(cuda_backend_choices))
