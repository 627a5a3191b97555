#include "checkpoint.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util.h"

static const char MAGIC[8] = {'P', 'C', 'G', 'R', 'L', 'C', 'K', 'P'};
#define HEADER_SIZE 24
#define MAX_CHECKPOINT (1l << 34)

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* ---- a growable byte buffer and a bounds-checked reader ---- */

typedef struct {
    unsigned char *p;
    size_t n, cap;
    int oom;
} wbuf;

static void put(wbuf *b, const void *src, size_t n)
{
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1 << 16;
        while (cap < b->n + n) cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q, b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}
static void put_u32(wbuf *b, uint32_t v) { put(b, &v, 4); }
static void put_i32(wbuf *b, int32_t v) { put(b, &v, 4); }
static void put_u64(wbuf *b, uint64_t v) { put(b, &v, 8); }
static void put_i64(wbuf *b, int64_t v) { put(b, &v, 8); }
static void put_f32(wbuf *b, float v) { put(b, &v, 4); }
static void put_f64(wbuf *b, double v) { put(b, &v, 8); }

typedef struct {
    const unsigned char *p;
    size_t n, at;
    int bad;
    uint32_t version; /* of the checkpoint being read */
} rbuf;

static void get(rbuf *r, void *dst, size_t n)
{
    if (r->bad || r->at > r->n || n > r->n - r->at) {
        r->bad = 1;
        memset(dst, 0, n);
        return;
    }
    memcpy(dst, r->p + r->at, n);
    r->at += n;
}
static int32_t get_i32(rbuf *r) { int32_t v; get(r, &v, 4); return v; }
static uint64_t get_u64(rbuf *r) { uint64_t v; get(r, &v, 8); return v; }
static int64_t get_i64(rbuf *r) { int64_t v; get(r, &v, 8); return v; }
static float get_f32(rbuf *r) { float v; get(r, &v, 4); return v; }
static double get_f64(rbuf *r) { double v; get(r, &v, 8); return v; }

static void put_config(wbuf *b, const ppo_config *c)
{
    put_i32(b, c->map_h), put_i32(b, c->map_w), put_i32(b, c->variant), put_i32(b, c->n_envs);
    put(b, c->preset, sizeof c->preset);
    put_i32(b, c->n_steps), put_i32(b, c->n_epochs), put_i32(b, c->n_minibatches);
    put_f32(b, c->lr), put_f32(b, c->adam_b1), put_f32(b, c->adam_b2), put_f32(b, c->adam_eps);
    put_f32(b, c->gamma), put_f32(b, c->gae_lambda), put_f32(b, c->clip_eps), put_f32(b, c->ent_coef);
    put_f32(b, c->vf_coef), put_f32(b, c->max_grad_norm);
    put_i32(b, c->chunk);
    put_u64(b, c->seed);
    for (int k = 0; k < PPO_N_DETAILS; k++) put_i32(b, ppo_detail_get(c, k));
}

static void get_config(rbuf *r, ppo_config *c)
{
    memset(c, 0, sizeof *c);
    c->map_h = get_i32(r), c->map_w = get_i32(r), c->variant = get_i32(r), c->n_envs = get_i32(r);
    get(r, c->preset, sizeof c->preset);
    c->preset[sizeof c->preset - 1] = 0;
    c->n_steps = get_i32(r), c->n_epochs = get_i32(r), c->n_minibatches = get_i32(r);
    c->lr = get_f32(r), c->adam_b1 = get_f32(r), c->adam_b2 = get_f32(r), c->adam_eps = get_f32(r);
    c->gamma = get_f32(r), c->gae_lambda = get_f32(r), c->clip_eps = get_f32(r), c->ent_coef = get_f32(r);
    c->vf_coef = get_f32(r), c->max_grad_norm = get_f32(r);
    c->chunk = get_i32(r);
    c->seed = get_u64(r);
    /* version 1 holds no details: it was trained the engine's first way */
    for (int k = 0; k < PPO_N_DETAILS; k++) ppo_detail_set(c, k, r->version >= 2 ? get_i32(r) : 1);
}

size_t checkpoint_param_count(const ppo_config *cfg)
{
    nn_config nc;
    size_t size[NN_NTENSORS], off[NN_NTENSORS];
    int n_actions = cfg->variant == VARIANT_TREASURE ? 7 : 6;
    if (nn_preset_config(cfg->preset, 2 * cfg->map_h - 1, 2 * cfg->map_w - 1, n_actions, &nc)) return 0;
    return nn_param_layout(&nc, size, off);
}

int checkpoint_encode(const checkpoint_state *s, unsigned char **out, size_t *out_len)
{
    wbuf b = {0};
    size_t np = s->n_params, cells = (size_t)s->n_envs * s->cells;
    put(&b, MAGIC, 8);
    put_u32(&b, CHECKPOINT_VERSION);
    put_u32(&b, 0);
    put_u64(&b, 0); /* size, patched below */
    put_config(&b, &s->cfg);
    put_u64(&b, np);
    put(&b, s->params, np * sizeof(float));
    put(&b, s->adam_m, np * sizeof(float));
    put(&b, s->adam_v, np * sizeof(float));
    put_i64(&b, s->adam_t), put_i64(&b, s->step), put_i64(&b, s->update);
    put_f64(&b, s->last_episode_reward);
    put_i32(&b, s->n_envs), put_i32(&b, s->cells);
    put(&b, s->maps, cells);
    put(&b, s->frozen, cells);
    for (int i = 0; i < s->n_envs; i++) put_i32(&b, s->steps[i]);
    for (int i = 0; i < s->n_envs; i++) put_u64(&b, s->rng_pos[i]);
    for (int i = 0; i < s->n_envs; i++) put_f32(&b, s->returns[i]);
    put_u64(&b, 0); /* checksum, patched below */
    if (b.oom) {
        free(b.p);
        return -1;
    }
    uint64_t size = b.n;
    memcpy(b.p + 16, &size, 8);
    uint64_t sum = fnv1a(b.p, b.n - 8);
    memcpy(b.p + b.n - 8, &sum, 8);
    *out = b.p;
    *out_len = b.n;
    return 0;
}

int checkpoint_write(const checkpoint_state *s, const char *path, char *err, int errlen)
{
    unsigned char *buf;
    size_t len;
    if (checkpoint_encode(s, &buf, &len)) {
        snprintf(err, (size_t)errlen, "%s: out of memory writing the checkpoint", path);
        return -1;
    }
    int rc = write_file_atomic(path, buf, len);
    free(buf);
    if (rc) {
        snprintf(err, (size_t)errlen, "%s: cannot write checkpoint: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

checkpoint_state checkpoint_view(const ppo_t *p)
{
    const env_t *e = &p->env;
    checkpoint_state s = {p->cfg,         p->nn.n_params, p->nn.params, p->adam_m,   p->adam_v,
                          p->adam_t,      p->step,        p->update,    p->last_episode_reward,
                          e->n,           e->cells,       e->maps,      e->frozen,   e->steps,
                          e->rng_pos,     e->returns};
    return s;
}

int checkpoint_save(const ppo_t *p, const char *path, char *err, int errlen)
{
    checkpoint_state s = checkpoint_view(p);
    return checkpoint_write(&s, path, err, errlen);
}

/* Version 1 lacks the reference details; it is read as the engine's
 * first design. */
static int version_readable(uint32_t v) { return v >= 1 && v <= CHECKPOINT_VERSION; }

/* Check a checkpoint's framing (magic, version, size, checksum); on
 * success r covers the body after the header.  name is what messages call
 * it. */
static int check_bytes(const unsigned char *p, size_t len, const char *name, rbuf *r, char *err, int errlen)
{
    if (len < HEADER_SIZE || memcmp(p, MAGIC, 8)) {
        snprintf(err, (size_t)errlen, "%s: not a pcgrllm checkpoint (bad magic)", name);
        return -1;
    }
    uint32_t version;
    memcpy(&version, p + 8, 4);
    if (!version_readable(version)) {
        snprintf(err, (size_t)errlen, "%s: checkpoint format version %u, this build reads versions 1 to %d", name,
                 version, CHECKPOINT_VERSION);
        return -1;
    }
    uint64_t size;
    memcpy(&size, p + 16, 8);
    if ((uint64_t)len < size) {
        snprintf(err, (size_t)errlen, "%s: truncated checkpoint (%zu of %llu bytes)", name, len,
                 (unsigned long long)size);
        return -1;
    }
    if ((uint64_t)len != size || size < HEADER_SIZE + 8) {
        snprintf(err, (size_t)errlen, "%s: corrupt checkpoint (size field %llu, file %zu bytes)", name,
                 (unsigned long long)size, len);
        return -1;
    }
    uint64_t sum;
    memcpy(&sum, p + size - 8, 8);
    if (sum != fnv1a(p, size - 8)) {
        snprintf(err, (size_t)errlen, "%s: corrupt checkpoint (checksum mismatch)", name);
        return -1;
    }
    r->p = p;
    r->n = size - 8;
    r->at = HEADER_SIZE;
    r->bad = 0;
    r->version = version;
    return 0;
}

unsigned char *checkpoint_file_bytes(const char *path, size_t *len, char *err, int errlen)
{
    /* the header first: a huge or foreign file is refused before it is read */
    int fd = open_regular(path, err, errlen);
    if (fd < 0) return NULL;
    unsigned char hdr[HEADER_SIZE];
    struct stat st;
    ssize_t n = pread(fd, hdr, HEADER_SIZE, 0);
    int stat_ok = fstat(fd, &st) == 0;
    close(fd);
    uint32_t version = 0;
    uint64_t size = 0;
    if (n == HEADER_SIZE) memcpy(&version, hdr + 8, 4), memcpy(&size, hdr + 16, 8);
    if (n != HEADER_SIZE || memcmp(hdr, MAGIC, 8)) {
        snprintf(err, (size_t)errlen, "%s: not a pcgrllm checkpoint (bad magic)", path);
        return NULL;
    }
    if (!version_readable(version)) {
        snprintf(err, (size_t)errlen, "%s: checkpoint format version %u, this build reads versions 1 to %d", path,
                 version, CHECKPOINT_VERSION);
        return NULL;
    }
    if (!stat_ok || size > (uint64_t)MAX_CHECKPOINT || (uint64_t)st.st_size != size) {
        snprintf(err, (size_t)errlen, "%s: %s checkpoint (size field %llu, file %lld bytes)", path,
                 stat_ok && (uint64_t)st.st_size < size ? "truncated" : "corrupt", (unsigned long long)size,
                 (long long)(stat_ok ? st.st_size : -1));
        return NULL;
    }
    long got = 0;
    unsigned char *raw = (unsigned char *)read_file(path, (long)size, &got, err, errlen);
    if (raw) *len = (size_t)got;
    return raw;
}

/* Read and check the file; on success r covers the body after the header. */
static unsigned char *read_checked(const char *path, rbuf *r, char *err, int errlen)
{
    size_t len = 0;
    unsigned char *raw = checkpoint_file_bytes(path, &len, err, errlen);
    if (!raw) return NULL;
    if (check_bytes(raw, len, path, r, err, errlen)) {
        free(raw);
        return NULL;
    }
    return raw;
}

/* No weight of a trained network comes near this: Adam moves a weight by
 * about lr per step (1e-4), so a 50M-step run moves it by a few units. */
#define CHECKPOINT_MAX_WEIGHT 1e6

static double largest_magnitude(const float *a, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i]));
    return m;
}

/* Index of the first non-finite value of a[0..n), or n. */
static size_t first_non_finite(const float *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(a[i])) return i;
    return n;
}

static int read_config(rbuf *r, const char *path, ppo_config *cfg, char *err, int errlen)
{
    get_config(r, cfg);
    const char *why = r->bad ? "cut short" : ppo_config_check(cfg);
    if (why) {
        snprintf(err, (size_t)errlen, "%s: corrupt checkpoint (settings: %s)", path, why);
        return -1;
    }
    return 0;
}

void checkpoint_state_free(checkpoint_state *s)
{
    free(s->params), free(s->adam_m), free(s->adam_v);
    free(s->maps), free(s->frozen), free(s->steps), free(s->rng_pos), free(s->returns);
    memset(s, 0, sizeof *s);
}

int checkpoint_state_alloc(checkpoint_state *s, const ppo_config *cfg)
{
    memset(s, 0, sizeof *s);
    size_t np = checkpoint_param_count(cfg);
    if (!np || ppo_config_check(cfg)) return -1;
    s->cfg = *cfg;
    s->n_params = np;
    s->n_envs = cfg->n_envs;
    s->cells = cfg->map_h * cfg->map_w;
    s->last_episode_reward = NAN;
    size_t n = (size_t)s->n_envs, cells = n * (size_t)s->cells;
    s->params = calloc(np, sizeof(float));
    s->adam_m = calloc(np, sizeof(float));
    s->adam_v = calloc(np, sizeof(float));
    s->maps = calloc(cells, 1);
    s->frozen = calloc(cells, 1);
    s->steps = calloc(n, sizeof(int));
    s->rng_pos = calloc(n, sizeof(uint64_t));
    s->returns = calloc(n, sizeof(float));
    if (!s->params || !s->adam_m || !s->adam_v || !s->maps || !s->frozen || !s->steps || !s->rng_pos || !s->returns) {
        checkpoint_state_free(s);
        return -1;
    }
    return 0;
}

#define CORRUPT(...)                                                       \
    do {                                                                   \
        snprintf(err, (size_t)errlen, "%s: corrupt checkpoint (", path);   \
        size_t at_ = strlen(err);                                          \
        snprintf(err + at_, (size_t)errlen - at_, __VA_ARGS__);            \
        at_ = strlen(err);                                                 \
        snprintf(err + at_, (size_t)errlen - at_, ")");                    \
        goto bad;                                                          \
    } while (0)

int checkpoint_decode(checkpoint_state *s, const unsigned char *buf, size_t len, const char *path, char *err,
                      int errlen)
{
    memset(s, 0, sizeof *s);
    rbuf r;
    if (check_bytes(buf, len, path, &r, err, errlen)) return -1;
    if (read_config(&r, path, &s->cfg, err, errlen)) goto bad;
    ppo_config cfg = s->cfg;
    size_t np = checkpoint_param_count(&cfg);
    if (get_u64(&r) != np || np == 0) CORRUPT("parameter count does not match its preset");
    /* the arrays are sized by the settings; the file must hold exactly them */
    size_t n = (size_t)cfg.n_envs, cells = n * (size_t)cfg.map_h * cfg.map_w;
    size_t body = 3 * np * sizeof(float) + 3 * 8 + 8 + 2 * 4 + 2 * cells + n * (4 + 8 + 4);
    if (body != r.n - r.at) CORRUPT("%s", body > r.n - r.at ? "cut short" : "trailing bytes");
    if (checkpoint_state_alloc(s, &cfg)) {
        snprintf(err, (size_t)errlen, "%s: out of memory reading the checkpoint", path);
        goto bad;
    }
    get(&r, s->params, np * sizeof(float));
    get(&r, s->adam_m, np * sizeof(float));
    get(&r, s->adam_v, np * sizeof(float));
    s->adam_t = get_i64(&r), s->step = get_i64(&r), s->update = get_i64(&r);
    s->last_episode_reward = get_f64(&r);
    s->n_envs = get_i32(&r), s->cells = get_i32(&r);
    if (r.bad) CORRUPT("cut short");
    if (s->n_envs != cfg.n_envs || s->cells != cfg.map_h * cfg.map_w)
        CORRUPT("environment block does not match the settings");
    get(&r, s->maps, cells);
    get(&r, s->frozen, cells);
    for (size_t i = 0; i < n; i++) s->steps[i] = get_i32(&r);
    for (size_t i = 0; i < n; i++) s->rng_pos[i] = get_u64(&r);
    for (size_t i = 0; i < n; i++) s->returns[i] = get_f32(&r);
    if (r.bad || r.at != r.n) CORRUPT("%s", r.bad ? "cut short" : "trailing bytes");
    for (size_t i = 0; i < cells; i++)
        if (s->maps[i] < TILE_EMPTY || s->maps[i] >= N_TILES || s->frozen[i] > 1) CORRUPT("bad tile in a map");
    int episode_len = 3 * s->cfg.map_h * s->cfg.map_w;
    for (size_t i = 0; i < n; i++)
        if (s->steps[i] < 0 || s->steps[i] >= episode_len) CORRUPT("bad episode step");
    if (s->adam_t < 0 || s->step < 0 || s->update < 0) CORRUPT("negative counter");
    /* every update is one rollout of every environment and epochs x
     * minibatches optimiser steps: counters that disagree were edited */
    if (s->update > ((int64_t)1 << 40) || s->step != s->update * cfg.n_steps * cfg.n_envs ||
        s->adam_t != s->update * cfg.n_epochs * cfg.n_minibatches)
        CORRUPT("counters that do not agree: %lld updates, %lld steps, %lld optimiser steps", (long long)s->update,
                (long long)s->step, (long long)s->adam_t);
    if (first_non_finite(s->params, np) < np) {
        snprintf(err, (size_t)errlen,
                 "%s: the network weights are not finite (the training diverged); use an earlier checkpoint", path);
        goto bad;
    }
    if (largest_magnitude(s->params, np) > CHECKPOINT_MAX_WEIGHT)
        CORRUPT("weights beyond +-%g, which training at these settings cannot reach", CHECKPOINT_MAX_WEIGHT);
    if (first_non_finite(s->adam_m, np) < np || first_non_finite(s->adam_v, np) < np ||
        first_non_finite(s->returns, n) < n || isinf(s->last_episode_reward))
        CORRUPT("non-finite optimiser state or returns");
    return 0;
bad:
    checkpoint_state_free(s);
    return -1;
}

int checkpoint_read(checkpoint_state *s, const char *path, char *err, int errlen)
{
    memset(s, 0, sizeof *s);
    size_t len = 0;
    unsigned char *raw = checkpoint_file_bytes(path, &len, err, errlen);
    if (!raw) return -1;
    int rc = checkpoint_decode(s, raw, len, path, err, errlen);
    free(raw);
    return rc;
}

#undef CORRUPT

int checkpoint_to_ppo(ppo_t *p, const checkpoint_state *s, reward_fn reward, void *ctx, char *err, int errlen)
{
    if (ppo_init(p, &s->cfg, reward, ctx, err, errlen)) return -1;
    env_t *e = &p->env;
    if (p->nn.n_params != s->n_params || e->n != s->n_envs || e->cells != s->cells) {
        snprintf(err, (size_t)errlen, "corrupt checkpoint (sizes do not match the settings)");
        ppo_free(p);
        return -1;
    }
    size_t np = s->n_params, cells = (size_t)s->n_envs * s->cells;
    memcpy(p->nn.params, s->params, np * sizeof(float));
    memcpy(p->adam_m, s->adam_m, np * sizeof(float));
    memcpy(p->adam_v, s->adam_v, np * sizeof(float));
    p->adam_t = s->adam_t, p->step = s->step, p->update = s->update;
    p->last_episode_reward = s->last_episode_reward;
    memcpy(e->maps, s->maps, cells);
    memcpy(e->frozen, s->frozen, cells);
    memcpy(e->steps, s->steps, sizeof(int) * (size_t)s->n_envs);
    memcpy(e->rng_pos, s->rng_pos, sizeof(uint64_t) * (size_t)s->n_envs);
    memcpy(e->returns, s->returns, sizeof(float) * (size_t)s->n_envs);
    env_rebuild(e);
    return 0;
}

int checkpoint_load(ppo_t *p, const char *path, reward_fn reward, void *ctx, char *err, int errlen)
{
    checkpoint_state s;
    if (checkpoint_read(&s, path, err, errlen)) return -1;
    int rc = checkpoint_to_ppo(p, &s, reward, ctx, err, errlen);
    checkpoint_state_free(&s);
    return rc;
}

int checkpoint_load_policy(const char *path, ppo_config *cfg, nn_t *nn, int64_t *step, char *err, int errlen)
{
    rbuf r;
    unsigned char *raw = read_checked(path, &r, err, errlen);
    if (!raw) return -1;
    if (read_config(&r, path, cfg, err, errlen)) goto bad;
    nn_config nc;
    int n_actions = cfg->variant == VARIANT_TREASURE ? 7 : 6;
    nn_preset_config(cfg->preset, 2 * cfg->map_h - 1, 2 * cfg->map_w - 1, n_actions, &nc);
    if (nn_alloc(nn, &nc)) {
        snprintf(err, (size_t)errlen, "%s: out of memory", path);
        goto bad;
    }
    if (get_u64(&r) != nn->n_params) {
        snprintf(err, (size_t)errlen, "%s: corrupt checkpoint (parameter count does not match its preset)", path);
        nn_free(nn);
        goto bad;
    }
    get(&r, nn->params, nn->n_params * sizeof(float));
    size_t moments = 2 * nn->n_params * sizeof(float); /* skip the Adam moments */
    if (moments > r.n - r.at) r.bad = 1;
    else r.at += moments;
    get_i64(&r);
    int64_t s = get_i64(&r);
    if (r.bad) {
        snprintf(err, (size_t)errlen, "%s: corrupt checkpoint (cut short)", path);
        nn_free(nn);
        goto bad;
    }
    if (first_non_finite(nn->params, nn->n_params) < nn->n_params ||
        largest_magnitude(nn->params, nn->n_params) > CHECKPOINT_MAX_WEIGHT) {
        snprintf(err, (size_t)errlen,
                 "%s: the network weights are not finite or out of range (the training diverged); use an earlier "
                 "checkpoint",
                 path);
        nn_free(nn);
        goto bad;
    }
    if (step) *step = s;
    free(raw);
    return 0;
bad:
    free(raw);
    return -1;
}
