/* pcgrllm bench train --backend cuda-sim: the device trainer's work for the
 * paper preset, counted by the simulation library's counting build, and the
 * time one H200 would take for it by the roofline model of
 * host/gpu/device_model.h.  Nothing here is a device measurement: every
 * modelled line says so.
 *
 * One paper rollout (600 environments x 128 steps) takes a quarter of an
 * hour or more in the counting build on a 2-core machine and one paper
 * update (10 epochs x 4 minibatches of 19,200 samples) hours, so by default
 * the phases are put together from pieces counted at the paper's own
 * shapes, scaled only by how many times the trainer repeats them:
 *
 *  - the rollout: counted for R and 2R steps of the paper's 600
 *    environments; every step repeats the same launches, so the rollout of
 *    128 steps is C(R) + (128 - R)/R (C(2R) - C(R));
 *  - the update: the network passes of a minibatch (forward, loss,
 *    backward: nn_forward, nn_ppo_loss, nn_backward of the table) counted
 *    at the pass size the paper's minibatch is cut into on an H200 (three
 *    passes of 6,400),
 *    and the rest of the update (gathers, statistics, clipping, Adam, the
 *    per-epoch and per-update work) counted on a trainer with minibatches
 *    of 64 samples in three shapes (1 epoch x 1 minibatch, 2 x 1, 1 x 2),
 *    which separate what happens once per update, per epoch and per
 *    minibatch.
 *
 * The trainer runs each minibatch as a CUDA graph where the device takes
 * one (cuda/graph.cu): the passes counted alone are priced as the counted
 * minibatch's launches were, inside its graph.
 *
 * The kernels differ by matmul mode, so both phases are counted once in
 * each of fp32, TF32 and bf16.
 *
 * What this does not make exact is said in docs/cuda.md; --full counts one
 * real rollout and one real update instead (on a machine that can wait). */
#include "backend.h"
#include "bench.h"
#include "bench_util.h"
#include "bench_work.h"
#include "device_model.h"
#include "nn.h"
#include "ppo.h"
#include "reward_jit.h"
#include "sim_reward.h"
#include "util.h"
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Samples per network pass in an update, as the trainer takes them on an
 * H200 (backend.h): its 141 GB never halve the largest (the paper
 * network's activations for 6,400 samples are some 6 GB). */
static int update_pass(const ppo_config *c)
{
    return pcg_pass_samples((size_t)c->n_envs * c->n_steps / c->n_minibatches, c->n_envs, PCG_PASS_MOST);
}
/* the kernel an update adds once per pass (cuda/ppo.cu) */
#define PER_PASS_KERNEL "add_chunk_kernel"
/* minibatch size of the trainers that count the update's own work */
#define SMALL_S 64

typedef struct {
    const pcg_cuda_api *api;
    ppo_config cfg; /* the paper's */
    nn_config nc;
    nn_t nn;
    char *cubin; /* the reward module, or NULL */
    reward_prog *prog;
    /* samples of a counted rollout, to feed the network passes */
    unsigned char *obs;
    int *act;
    float *logp, *val, *adv, *ret;
    size_t n_samples;
} model_run;

static int sim_fail(const model_run *r)
{
    die_msg("bench train: %s", r->api->last_error());
    return -1;
}

/* A trainer of the paper's settings with envs x steps, epochs and
 * minibatches of its own; NULL after the message. */
static pcg_cuda_ppo *trainer(const model_run *r, int envs, int steps, int epochs, int minibatches)
{
    ppo_config c = r->cfg;
    c.n_envs = envs, c.n_steps = steps, c.n_epochs = epochs, c.n_minibatches = minibatches;
    pcg_cuda_ppo *p = r->api->ppo_init(&c, &r->nc, r->nn.off, r->nn.n_params, r->nn.params, r->cubin);
    if (!p) sim_fail(r);
    return p;
}

/* The rollout's samples kept on the host for the network passes. */
static int keep_samples(model_run *r, pcg_cuda_ppo *p, size_t n)
{
    size_t os = (size_t)r->nc.crop_h * r->nc.crop_w;
    r->n_samples = n;
    void *old[] = {r->obs, r->act, r->logp, r->val, r->adv, r->ret}; /* the last family's */
    for (size_t i = 0; i < sizeof old / sizeof old[0]; i++) free(old[i]);
    r->obs = malloc(n * os);
    r->act = malloc(n * sizeof(int));
    float **f[4] = {&r->logp, &r->val, &r->adv, &r->ret};
    for (int i = 0; i < 4; i++) *f[i] = malloc(n * sizeof(float));
    if (!r->obs || !r->act || !r->logp || !r->val || !r->adv || !r->ret)
        return die_msg("bench train: out of host memory"), -1;
    pcg_cuda_rollout_host h;
    memset(&h, 0, sizeof h);
    h.obs = r->obs, h.actions = r->act, h.logp = r->logp, h.values = r->val, h.adv = r->adv, h.ret = r->ret;
    return r->api->ppo_get_rollout(p, &h) ? sim_fail(r) : 0;
}

/* f x the counts of one rollout of envs x steps (its samples kept when
 * keep).  0, or -1 after the message. */
static int count_rollout(model_run *r, int envs, int steps, int keep, work_set *out, double f)
{
    pcg_cuda_ppo *p = trainer(r, envs, steps, 1, 1);
    if (!p) return -1;
    ppo_metrics m;
    r->api->work_reset();
    int rc = r->api->ppo_rollout(p, &m) ? sim_fail(r) : work_set_take(out, r->api, f);
    if (!rc && keep) rc = keep_samples(r, p, (size_t)envs * steps);
    r->api->ppo_free(p);
    return rc;
}

/* The counts of one update (after an uncounted rollout) of a trainer of
 * envs x steps, epochs x minibatches.  0, or -1 after the message. */
static int count_update(const model_run *r, int envs, int steps, int epochs, int minibatches, work_set *out)
{
    pcg_cuda_ppo *p = trainer(r, envs, steps, epochs, minibatches);
    if (!p) return -1;
    ppo_metrics m;
    int rc = r->api->ppo_rollout(p, &m) ? sim_fail(r) : 0;
    r->api->work_reset();
    if (!rc) rc = r->api->ppo_update(p, &m) ? sim_fail(r) : work_set_take(out, r->api, 1);
    r->api->ppo_free(p);
    return rc;
}

/* Device copies of B of the kept samples (repeated as needed) for a pass. */
typedef struct {
    float *P, *G, *logp, *val, *adv, *ret;
    int *act;
    unsigned char *obs;
    double *out;
    nn_acts acts;
} pass_buffers;

static int pass_upload(const model_run *r, pass_buffers *b, int B)
{
    const pcg_cuda_api *api = r->api;
    size_t os = (size_t)r->nc.crop_h * r->nc.crop_w, n = r->n_samples, np = r->nn.n_params;
    b->P = api->arena_alloc(np * 4), b->G = api->arena_alloc(np * 4), b->out = api->arena_alloc(6 * 8);
    b->obs = api->arena_alloc((size_t)B * os), b->act = api->arena_alloc((size_t)B * 4);
    float **f[4] = {&b->logp, &b->val, &b->adv, &b->ret};
    const float *src[4] = {r->logp, r->val, r->adv, r->ret};
    for (int i = 0; i < 4; i++) *f[i] = api->arena_alloc((size_t)B * 4);
    if (!b->P || !b->G || !b->out || !b->obs || !b->act || !b->ret || api->nn_acts_alloc(&b->acts, &r->nc, B) ||
        api->copy_to_device(b->P, r->nn.params, np * 4))
        return sim_fail(r);
    float *zero = calloc(np, 4);
    int rc = !zero || api->copy_to_device(b->G, zero, np * 4);
    free(zero);
    for (int k = 0; !rc && k < B; k += (int)n) {
        size_t m = (size_t)(B - k) < n ? (size_t)(B - k) : n;
        rc = api->copy_to_device(b->obs + (size_t)k * os, r->obs, m * os) ||
             api->copy_to_device(b->act + k, r->act, m * 4);
        for (int i = 0; i < 4 && !rc; i++) rc = api->copy_to_device(*f[i] + k, src[i], m * 4);
    }
    return rc ? sim_fail(r) : 0;
}

/* out += f x the counts of one network pass of an update on B samples:
 * forward, PPO loss, backward, as cuda/ppo.cu runs them per chunk. */
static int count_pass(const model_run *r, int B, work_set *out, double f)
{
    const pcg_cuda_api *api = r->api;
    const ppo_config *c = &r->cfg;
    size_t mark = api->arena_mark();
    pass_buffers b;
    int rc = pass_upload(r, &b, B);
    if (!rc) {
        api->work_reset();
        rc = api->nn_forward(&r->nc, r->nn.off, b.P, &b.acts, b.obs, B) ||
             api->nn_ppo_loss(&b.acts, B, r->nc.n_actions, b.act, b.logp, b.adv, b.val, b.ret, c->clip_eps,
                              c->vf_coef, c->ent_coef, 1.0 / B, b.out) ||
             api->nn_backward(&r->nc, r->nn.off, b.P, b.G, &b.acts, b.obs, B);
        /* taken before the synchronisation, which the update's pass lacks
         * (the simulation's launches have ended when they return) */
        rc = rc ? sim_fail(r) : work_set_take(out, api, f);
        if (!rc && api->sync()) rc = sim_fail(r);
    }
    api->arena_release(mark);
    return rc;
}

/* The network work of a counted minibatch is the pass counted alone: the
 * same launches, threads and FLOPs (bytes follow the data). */
static int check_pass(const work_set *minibatch, const work_set *pass)
{
    for (int i = 0; i < pass->n; i++) {
        const work_row *a = &pass->r[i], *b = work_set_find(minibatch, a->name);
        if (!b || fabs(a->launches - b->launches) > 0.5 || fabs(a->threads - b->threads) > 0.5 ||
            fabs(a->flops - b->flops) > 0.5)
            return die_msg("bench train: an update's network pass is not nn_forward + nn_ppo_loss + nn_backward "
                           "(%s differs; cuda/ppo.cu changed?)",
                           a->name),
                   -1;
    }
    return 0;
}

/* The rollout of the paper's 600 x 128 from R and 2R steps. */
static int model_rollout(model_run *r, int R, work_set *roll)
{
    int T = r->cfg.n_steps, E = r->cfg.n_envs;
    double k = (double)(T - R) / R;
    if (count_rollout(r, E, R, 0, roll, 1 - k) || count_rollout(r, E, 2 * R, 1, roll, k)) return -1;
    const work_row *neg = work_set_negative(roll);
    if (neg) return die_msg("bench train: the rollout's %s does not grow with its length", neg->name), -1;
    return 0;
}

/* The paper's update: u + epochs p + epochs minibatches (the minibatch's
 * own work o, one extra PER_PASS_KERNEL per extra pass, the passes). */
static int model_update(model_run *r, work_set *upd)
{
    const ppo_config *c = &r->cfg;
    int S = c->n_envs * c->n_steps / c->n_minibatches, chunk = update_pass(c), full = S / chunk, rest = S % chunk;
    work_set u11 = {0}, u21 = {0}, u12 = {0}, q = {0}, p = {0}, u = {0}, small = {0}, o = {0}, passes = {0};
    int rc = -1;
    /* minibatches of SMALL_S samples: 8 x 8 for one, 16 x 8 for two */
    if (count_update(r, 8, 8, 1, 1, &u11) || count_update(r, 8, 8, 2, 1, &u21) || count_update(r, 16, 8, 1, 2, &u12))
        goto out;
    /* per minibatch q = U(1,2) - U(1,1); per epoch p = U(2,1) - U(1,1) - q; once u = U(1,1) - p - q */
    if (work_set_add(&q, &u12, 1) || work_set_add(&q, &u11, -1) || work_set_add(&p, &u21, 1) ||
        work_set_add(&p, &u11, -1) || work_set_add(&p, &q, -1) || work_set_add(&u, &u11, 1) ||
        work_set_add(&u, &p, -1) || work_set_add(&u, &q, -1))
        goto out;
    if (count_pass(r, SMALL_S, &small, 1) || check_pass(&q, &small) || work_set_without(&o, &q, &small)) goto out;
    const work_row *per_pass = work_set_find(&o, PER_PASS_KERNEL);
    if (!per_pass || per_pass->launches != 1) {
        die_msg("bench train: a minibatch of one pass does not launch %s once (cuda/ppo.cu changed?)", PER_PASS_KERNEL);
        goto out;
    }
    work_row extra = *per_pass;
    work_set extra_set = {&extra, 1, 1};
    if ((full && count_pass(r, chunk, &passes, full)) || (rest && count_pass(r, rest, &passes, 1)))
        goto out;
    /* the passes were counted as the host launches them: priced as the
     * counted minibatch launched its pass (inside its graph, where it had
     * one), whose own per-pass kernel says which */
    work_set_graph_share(&passes, extra.graph / extra.launches);
    if (work_set_add(&passes, &o, 1) || work_set_add(&passes, &extra_set, full + (rest > 0) - 1)) goto out;
    if (work_set_add(upd, &u, 1) || work_set_add(upd, &p, c->n_epochs) ||
        work_set_add(upd, &passes, (double)c->n_epochs * c->n_minibatches))
        goto out;
    const work_row *neg = work_set_negative(upd);
    if (neg) {
        die_msg("bench train: the update's %s came out negative (its pieces do not add up)", neg->name);
        goto out;
    }
    rc = 0;
out:;
    work_set *all[] = {&u11, &u21, &u12, &q, &p, &u, &small, &o, &passes};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) work_set_free(all[i]);
    return rc;
}

/* The reward of scenario 1 (rewards/engine/scenario1.c from the source
 * tree): compiled by NVRTC for an H200 as the module the trainer launches
 * every step, and for the CPU as the simulation's stand-in for its kernel.
 * Without either there is no reward kernel in the steps; the label says
 * which. */
static const char *load_reward(model_run *r)
{
    char err[1024];
    long len = 0;
    size_t cubin_len = 0;
    char *src = read_file("rewards/engine/scenario1.c", REWARD_MAX_SOURCE, &len, err, sizeof err);
    if (!src) return "none (rewards/engine/scenario1.c not found: run from the source tree)";
    const char *label = "rewards/engine/scenario1.c (one launch per step)";
    if (!reward_nvrtc_available(err, sizeof err)) label = "none (NVRTC not available)";
    else if (!(r->prog = reward_compile_cpu(src, err, sizeof err)) ||
             reward_compile_nvrtc(src, "sm_90", &r->cubin, &cubin_len, err, sizeof err) ||
             sim_reward_use(r->api, reward_prog_call, r->prog))
        label = "none (scenario 1 did not compile)";
    if (strncmp(label, "none", 4)) return free(src), label;
    free(r->cubin);
    r->cubin = NULL;
    free(src);
    return label;
}

const pcg_cuda_api *bench_counting_api(char *why, size_t len)
{
    char err[800];
    const pcg_cuda_api *api = backend_sim_load(err, sizeof err);
    if (!api) return snprintf(why, len, "%s", err), NULL;
    /* counting the device is where the simulation refuses its variables' odd values */
    if (api->device_count() <= 0) return snprintf(why, len, "%s", api->last_error()), NULL;
    /* one environment's reset shows whether the kernels' bytes are counted */
    api->work_reset();
    pcg_cuda_env *e = api->env_alloc(1, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE, VARIANT_DUNGEON, 1, PCG_OBS_THREAD);
    if (!e) return snprintf(why, len, "%s", api->last_error()), NULL;
    api->env_free(e);
    int n = 0;
    const pcg_cuda_work *w = api->work_counters(&n);
    for (int i = 0; i < n; i++)
        if (strstr(w[i].name, "not counted"))
            return snprintf(why, len, "%s: %s; the counting build is make cuda-sim COUNT=1", backend_cuda_path(),
                            w[i].name + strlen(PCG_WORK_NOTE)),
                   NULL;
    return api;
}

/* The simulation library, which must count kernel bytes.  NULL after the
 * message. */
static const pcg_cuda_api *counting_library(void)
{
    char why[1200];
    const pcg_cuda_api *api = bench_counting_api(why, sizeof why);
    if (!api) die_msg("bench train --backend cuda-sim: %s", why);
    return api;
}

int bench_model_ready(void)
{
    return counting_library() != NULL;
}

typedef struct {
    long rollout_steps;
    int full;
    int math; /* PCG_MATH_* to count and project alone, or -1 for every mode */
} model_opts;

static int model_usage(void)
{
    printf("usage: pcgrllm bench train --backend cuda-sim [--rollout-steps R] [--math MODE] [--full]\n"
           "  The device trainer's work for the paper preset (600 environments, rollout 128, 10 epochs x 4\n"
           "  minibatches), counted by the simulation library's counting build (make cuda-sim COUNT=1;\n"
           "  PCGRLLM_CUDA_LIB names another), per kernel, with the time one H200 would take for it by the\n"
           "  roofline model of docs/cuda.md -- a model, not a measurement -- and the 50M-step projection\n"
           "  per matmul mode.  The phases are put together from pieces counted at the paper's shapes:\n"
           "  --rollout-steps R  the rollout from R and 2R steps (1)\n"
           "  --math MODE        count one matmul mode only: fp32, tf32 or bf16 (default: all three; fp32's\n"
           "                     count takes most of the time)\n"
           "  --full             count one whole rollout and one whole update instead (hours on 2 cores)\n");
    return 0;
}

/* -1 to go on, else the exit status. */
static int model_parse(int argc, char **argv, model_opts *o)
{
    static const struct option opts[] = {{"rollout-steps", required_argument, 0, 'r'},
                                         {"full", no_argument, 0, 'f'},
                                         {"math", required_argument, 0, 'm'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    o->rollout_steps = 1, o->full = 0, o->math = -1;
    optind = 1;
    int c;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'r':
            if (parse_int(optarg, 1, 63, &o->rollout_steps))
                return die_msg("bench train: --rollout-steps must be in 1..63"), 2;
            break;
        case 'f': o->full = 1; break;
        case 'm':
            if ((o->math = backend_math_from_name(optarg)) < 0)
                return die_msg("bench train: --math takes fp32, tf32 or bf16"), 2;
            break;
        case 'h': return model_usage();
        default: return 2;
        }
    }
    return -1;
}

/* The kernels differ by matmul mode (conv 2 runs the tensor-core implicit
 * GEMMs where the tensor cores multiply, the staged split in fp32; in
 * bf16 its staged forward and input gradient run on bf16 fragments and
 * read packed bf16 weights), so each phase is counted in each mode (the
 * model prices each tensor-core kernel by its fragments' rate). */
#define MODES 3

/* Whether --math asks for mode m's count. */
static int mode_wanted(const model_opts *o, int m)
{
    return o->math < 0 || o->math == m;
}

/* The two phases' counts in matmul mode math; 0, or -1 after the
 * message. */
static int count_phases(model_run *r, const model_opts *o, int math, work_set *roll, work_set *upd)
{
    const ppo_config *c = &r->cfg;
    double t0 = now_seconds();
    if (r->api->blas_set_math(math)) return sim_fail(r);
    if (o->full) {
        if (count_rollout(r, c->n_envs, c->n_steps, 0, roll, 1) ||
            count_update(r, c->n_envs, c->n_steps, c->n_epochs, c->n_minibatches, upd))
            return -1;
    } else if (model_rollout(r, (int)o->rollout_steps, roll) || model_update(r, upd)) {
        return -1;
    }
    printf("counted in %s mode in %.0f s on this machine\n", backend_math_name(math), now_seconds() - t0);
    return 0;
}

/* One mode's two tables; their totals into t_roll[math] and t_upd[math]. */
static void print_mode(const model_run *r, const model_opts *o, int math, const work_set *roll, const work_set *upd,
                       double t_roll[3], double t_upd[3])
{
    const ppo_config *c = &r->cfg;
    char title[500], counted[80];
    snprintf(counted, sizeof counted, "counted in %s mode", backend_math_name(math));
    if (o->full)
        snprintf(title, sizeof title, "one rollout: %d environments x %d steps, counted whole, %s", c->n_envs,
                 c->n_steps, counted);
    else
        snprintf(title, sizeof title, "one rollout: %d environments x %d steps, from %ld and %ld steps %s", c->n_envs,
                 c->n_steps, o->rollout_steps, 2 * o->rollout_steps, counted);
    work_set_print(title, roll, math, math, t_roll);
    int S = c->n_envs * c->n_steps / c->n_minibatches;
    if (o->full)
        snprintf(title, sizeof title, "one update: %d epochs x %d minibatches of %d samples, counted whole, %s",
                 c->n_epochs, c->n_minibatches, S, counted);
    else {
        int pass = update_pass(c);
        char sizes[48];
        if (S % pass) snprintf(sizes, sizeof sizes, "%d and %d", pass, S % pass);
        else snprintf(sizes, sizeof sizes, "%d", pass);
        snprintf(title, sizeof title,
                 "one update: %d epochs x %d minibatches of %d samples, from passes of %s samples and minibatches "
                 "of %d %s",
                 c->n_epochs, c->n_minibatches, S, sizes, SMALL_S, counted);
    }
    work_set_print(title, upd, math, math, t_upd);
}

static void print_phases(const model_run *r, const model_opts *o, const work_set *roll, const work_set *upd)
{
    const ppo_config *c = &r->cfg;
    double t_roll[3], t_upd[3];
    for (int m = 0; m < MODES; m++)
        if (mode_wanted(o, m)) print_mode(r, o, m, &roll[m], &upd[m], t_roll, t_upd);
    double per = (double)c->n_envs * c->n_steps, updates = ceil(50e6 / per);
    printf("\n50M steps of the paper preset on one H200 (%.0f updates of %.0f steps; model, not a measurement):\n",
           updates, per);
    for (int m = 0; m < MODES; m++) {
        if (!mode_wanted(o, m)) continue;
        double s = updates * (t_roll[m] + t_upd[m]);
        printf("  %-5s %7.1f min  (rollout %.1f ms + update %.1f ms per update; %.0f steps/s)  (model, not a "
               "measurement)\n",
               backend_math_name(m), s / 60, t_roll[m] * 1e3, t_upd[m] * 1e3, per / (t_roll[m] + t_upd[m]));
    }
}

int bench_train_model(int argc, char **argv)
{
    model_opts o;
    int rc = model_parse(argc, argv, &o);
    if (rc >= 0) return rc;
    const char *most = getenv("PCGRLLM_CUDA_PASS_MOST");
    if (most && *most)
        return die_msg("bench train --backend cuda-sim: models the trainer's own passes (PCG_PASS_MOST samples); "
                       "unset PCGRLLM_CUDA_PASS_MOST"),
               2;
    model_run r;
    memset(&r, 0, sizeof r);
    if (!(r.api = counting_library())) return 1;
    ppo_config_default(&r.cfg);
    if (nn_preset_config(r.cfg.preset, 2 * r.cfg.map_h - 1, 2 * r.cfg.map_w - 1, 6, &r.nc) || nn_alloc(&r.nn, &r.nc))
        return die_msg("bench train: cannot build the %s network", r.cfg.preset), 1;
    nn_init(&r.nn, 1, r.cfg.conv_init);
    const char *reward = load_reward(&r);
    printf("device trainer's work counted by the simulation library %s; %s preset, %d environments, rollout %d, "
           "%d epochs x %d minibatches; reward kernel: %s\n",
           backend_cuda_path(), r.cfg.preset, r.cfg.n_envs, r.cfg.n_steps, r.cfg.n_epochs, r.cfg.n_minibatches,
           reward);
    bench_print_machine(stdout);
    fflush(stdout);
    work_set roll[MODES] = {{0}}, upd[MODES] = {{0}};
    rc = 0;
    for (int m = 0; m < MODES && !rc; m++)
        if (mode_wanted(&o, m)) rc = count_phases(&r, &o, m, &roll[m], &upd[m]) ? 1 : 0;
    if (!rc) print_phases(&r, &o, roll, upd);
    for (int m = 0; m < MODES; m++) work_set_free(&roll[m]), work_set_free(&upd[m]);
    void *owned[] = {r.cubin, r.obs, r.act, r.logp, r.val, r.adv, r.ret};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++) free(owned[i]);
    if (r.prog) reward_prog_free(r.prog);
    nn_free(&r.nn);
    return rc;
}
