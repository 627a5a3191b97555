/* Reward JIT benchmark: calls per second of rewards compiled by libtcc
 * against the same source compiled by gcc -O2 into a shared object, the
 * libtcc compile time, and the NVRTC compile time per GPU architecture. */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench_util.h"
#include "env.h"
#include "reward_jit.h"
#include "worker.h"
#include "util.h"

extern const char pcg_embed_hd_h[];
extern const char pcg_embed_bitrows_h[];
extern const char pcg_embed_level_h[];
extern const char pcg_embed_reward_api_h[];

typedef float (*reward_c_fn)(const level_t *, const level_t *);

/* Transitions of one episode of random play on n environments. */
typedef struct {
    int n, cells;
    unsigned char *prev, *curr; /* count*cells */
    level_t *lp, *lc;
    long count;
} transitions;

static int make_transitions(transitions *tr, int n, int variant, uint64_t seed)
{
    env_t e;
    if (env_alloc(&e, n, PCG_DEFAULT_SIDE, PCG_DEFAULT_SIDE, variant, seed)) return -1;
    tr->n = n;
    tr->cells = e.cells;
    tr->count = (long)n * e.cfg.episode_len;
    tr->prev = malloc((size_t)tr->count * e.cells);
    tr->curr = malloc((size_t)tr->count * e.cells);
    tr->lp = malloc(sizeof(level_t) * (size_t)tr->count);
    tr->lc = malloc(sizeof(level_t) * (size_t)tr->count);
    if (!tr->prev || !tr->curr || !tr->lp || !tr->lc) {
        env_free(&e);
        return -1;
    }
    long k = 0;
    for (int i = 0; i < n; i++) {
        level_t l = env_level(&e, i);
        unsigned char *frozen = e.frozen + (size_t)i * e.cells;
        unsigned char *pad = e.pad + (size_t)i * e.cfg.pad_h * e.cfg.pad_w;
        for (int t = 0; t < e.cfg.episode_len; t++, k++) {
            unsigned char *p = tr->prev + (size_t)k * e.cells, *c = tr->curr + (size_t)k * e.cells;
            memcpy(p, l.t, (size_t)e.cells);
            int a = (int)philox_below(philox_block(seed, (1ull << 32) + (pcg_u64)i, (pcg_u64)t >> 2).v[t & 3],
                                      (pcg_u32)e.cfg.n_actions);
            dungeon_apply(&e.cfg, t, a, l.t, frozen, pad);
            memcpy(c, l.t, (size_t)e.cells);
            tr->lp[k] = (level_t){l.h, l.w, p};
            tr->lc[k] = (level_t){l.h, l.w, c};
        }
    }
    env_free(&e);
    return 0;
}

static void free_transitions(transitions *tr)
{
    free(tr->prev);
    free(tr->curr);
    free(tr->lp);
    free(tr->lc);
}

static float call_tcc(void *ctx, const level_t *a, const level_t *b) { return reward_prog_call(a, b, ctx); }
static float call_native(void *ctx, const level_t *a, const level_t *b) { return (*(reward_c_fn *)ctx)(a, b); }

/* Calls per second over the transitions, repeated for at least seconds;
 * *sum receives the sum of one pass (to compare the two compilers). */
static double rate(float (*call)(void *, const level_t *, const level_t *), void *ctx, const transitions *tr,
                   double seconds, double *sum)
{
    double s = 0;
    for (long k = 0; k < tr->count; k++) s += call(ctx, &tr->lp[k], &tr->lc[k]);
    *sum = s;
    long calls = 0;
    double t0 = now_seconds(), el;
    volatile float sink = 0;
    do {
        for (long k = 0; k < tr->count; k++) sink += call(ctx, &tr->lp[k], &tr->lc[k]);
        calls += tr->count;
        el = now_seconds() - t0;
    } while (el < seconds);
    (void)sink;
    return (double)calls / el;
}

/* The reward source plus a native prelude (the level core and the API),
 * compiled by gcc -O2 into dir/reward.so. */
static int build_native(const char *dir, const char *src, char *err, int errlen)
{
    static const char prelude[] =
        "#include <math.h>\n#include \"level.h\"\n#include \"reward_api.h\"\n"
        "int level_height(const level_t *l) { return l->h; }\n"
        "int level_width(const level_t *l) { return l->w; }\n"
        "int tile_at(const level_t *l, int r, int c) { return lv_get(l, r, c); }\n"
        "int count_tiles(const level_t *l, int t) { return lv_count(l, t); }\n"
        "int find_tiles(const level_t *l, int t, int *rows, int *cols, int max)\n"
        "{ return lv_find(l, t, rows, cols, max < 0 ? 0 : max); }\n"
        "int path_length(const level_t *l, int r0, int c0, int r1, int c1) { return lv_path_length(l, r0, c0, r1, c1); }\n"
        "int nearest_tile_distance(const level_t *l, int r, int c, int t) { return lv_nearest(l, r, c, t); }\n"
        "int count_regions(const level_t *l) { return lv_regions(l); }\n"
        "int path_length_through(const level_t *l, int r0, int c0, int r1, int c1, unsigned m)\n"
        "{ return lv_path_through(l, r0, c0, r1, c1, m); }\n"
        "#line 1 \"reward.c\"\n";
    char path[1400];
    const char *files[][2] = {{"hd.h", pcg_embed_hd_h},
                              {"bitrows.h", pcg_embed_bitrows_h},
                              {"level.h", pcg_embed_level_h},
                              {"reward_api.h", pcg_embed_reward_api_h}};
    for (int i = 0; i < (int)(sizeof files / sizeof files[0]); i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
        if (write_file_atomic(path, files[i][1], strlen(files[i][1]))) {
            snprintf(err, (size_t)errlen, "cannot write %.900s", path);
            return -1;
        }
    }
    size_t n = strlen(prelude) + strlen(src) + 2;
    char *full = malloc(n);
    if (!full) return -1;
    snprintf(full, n, "%s%s\n", prelude, src);
    snprintf(path, sizeof path, "%s/reward.c", dir);
    int w = write_file_atomic(path, full, strlen(full));
    free(full);
    if (w) {
        snprintf(err, (size_t)errlen, "cannot write %.900s", path);
        return -1;
    }
    char so[1400], inc[1400];
    snprintf(so, sizeof so, "%s/reward.so", dir);
    snprintf(inc, sizeof inc, "-I%s", dir);
    const char *cc = getenv("CC");
    if (!cc || !*cc) cc = "gcc";
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execlp(cc, cc, "-O2", "-fPIC", "-shared", "-fno-semantic-interposition", "-w", inc, "-o", so, path,
               "-lm", (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(err, (size_t)errlen, "%s failed (exit %d)", cc, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return -1;
    }
    return 0;
}

static void bench_reward_usage(FILE *f)
{
    fprintf(f, "usage: pcgrllm bench reward [--seconds S] [--envs N] [FILE...]\n"
               "  Reward calls per second (one thread) of each reward (default: rewards/engine/scenario1-4.c)\n"
               "  compiled by libtcc and by gcc -O2 into a shared object, the libtcc compile time and the\n"
               "  NVRTC compile time for sm_75, sm_86, sm_89 and sm_90.\n");
}

/* The same source built by gcc -O2 in dir/INDEX and timed over tr, its
 * sum checked against libtcc's; 0 when that build cannot run (said on
 * stderr). */
static double native_rate(const char *dir, int index, const char *file, const char *src, const transitions *tr,
                          double seconds, double sum_tcc)
{
    char err[1024], sub[1100];
    double sum_gcc = 0, r_gcc = 0;
    snprintf(sub, sizeof sub, "%s/%d", dir, index);
    make_dirs(sub);
    if (build_native(sub, src, err, sizeof err) != 0) {
        fprintf(stderr, "bench reward: %s: %s\n", file, err);
        return 0;
    }
    char so[1300];
    snprintf(so, sizeof so, "%s/reward.so", sub);
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    reward_c_fn fn = h ? (reward_c_fn)dlsym(h, "compute_reward") : NULL;
    if (fn) {
        r_gcc = rate(call_native, &fn, tr, seconds, &sum_gcc);
        if (fabs(sum_gcc - sum_tcc) > 1e-3 * (1 + fabs(sum_gcc)))
            fprintf(stderr, "bench reward: %s: tcc and gcc results differ (sums %g, %g)\n", file, sum_tcc, sum_gcc);
    } else {
        fprintf(stderr, "bench reward: %s: cannot load the gcc build: %s\n", file, dlerror());
    }
    if (h) dlclose(h);
    return r_gcc;
}

/* The NVRTC compile time for each architecture, as the row's last columns. */
static void print_nvrtc_times(const char *src)
{
    static const char *archs[] = REWARD_GPU_ARCHS;
    char err[1024];
    for (int a = 0; a < 4; a++) {
        double ta = now_seconds();
        size_t cl;
        /* sized for the benchmark's 16x16 levels, as training compiles it */
        int r = reward_compile_nvrtc_ex(src, archs[a], PCG_DEFAULT_SIDE, NULL, &cl, err, sizeof err);
        if (r) printf(" %8s", "error");
        else printf(" %7.2fs", now_seconds() - ta);
    }
}

/* The row of reward file `index`; an untrusted one must pass the sandbox
 * first.  0; 1 after a message (the next file still runs); -1 out of
 * memory (said). */
static int reward_row(const char *file, int index, int untrusted, long envs, double seconds, const char *dir, int nv)
{
    char err[1024];
    long len;
    char *src = read_file(file, REWARD_MAX_SOURCE, &len, err, sizeof err);
    if (!src) return die_msg("bench reward: %s", err), 1;
    /* scenario 3-4 rewards are about the treasure variant */
    int variant = strstr(file, "scenario3") || strstr(file, "scenario4") ? VARIANT_TREASURE : VARIANT_DUNGEON;
    reward_stats vs;
    if (untrusted && reward_validate(src, variant, 16, 0, 60, &vs, err, sizeof err)) {
        die_msg("bench reward: %s: refused by the sandbox: %s", file, err);
        free(src);
        return 1;
    }
    double t0 = now_seconds();
    reward_prog *p = reward_compile_cpu(src, err, sizeof err);
    double tcc_ms = (now_seconds() - t0) * 1e3;
    if (!p) {
        die_msg("bench reward: %s: %s", file, err);
        free(src);
        return 1;
    }
    transitions tr;
    if (make_transitions(&tr, (int)envs, variant, 3)) {
        die_msg("bench reward: out of memory");
        reward_prog_free(p);
        free(src);
        return -1;
    }
    double sum_tcc;
    double r_tcc = rate(call_tcc, p, &tr, seconds, &sum_tcc);
    double r_gcc = native_rate(dir, index, file, src, &tr, seconds, sum_tcc);
    const char *base = strrchr(file, '/');
    printf("%-28s %9.1f %12.0f %12.0f", base ? base + 1 : file, tcc_ms, r_tcc, r_gcc);
    if (r_gcc > 0) printf(" %8.2f", r_tcc / r_gcc);
    else printf(" %8s", "-");
    if (nv) print_nvrtc_times(src);
    printf("\n");
    fflush(stdout);
    free_transitions(&tr);
    reward_prog_free(p);
    free(src);
    return 0;
}

int bench_reward(int argc, char **argv)
{
    static const struct option opts[] = {{"seconds", required_argument, 0, 's'},
                                         {"envs", required_argument, 0, 'n'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    double seconds = 1.0;
    long envs = 8;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (parse_double(optarg, 0.01, 600, &seconds)) return die_msg("bench reward: --seconds in 0.01..600"), 2;
            break;
        case 'n':
            if (parse_int(optarg, 1, 4096, &envs)) return die_msg("bench reward: --envs in 1..4096"), 2;
            break;
        case 'h': bench_reward_usage(stdout); return 0;
        default: bench_reward_usage(stderr); return 2;
        }
    }
    static const char *defaults[] = {"rewards/engine/scenario1.c", "rewards/engine/scenario2.c",
                                     "rewards/engine/scenario3.c", "rewards/engine/scenario4.c"};
    const char **files = optind < argc ? (const char **)(argv + optind) : defaults;
    int n_files = optind < argc ? argc - optind : 4;
    /* the calls are timed in this process, with no sandbox around them:
     * first nothing here worth stealing, then only rewards the sandbox
     * accepts */
    if (optind < argc) worker_scrub_environment();
    char tmpl[] = "/tmp/pcgrllm-bench-reward-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir) return die_msg("bench reward: cannot create a temporary directory"), 1;
    static const char *archs[] = REWARD_GPU_ARCHS;
    char nv_why[256];
    int nv = reward_nvrtc_available(nv_why, sizeof nv_why);
    printf("\nreward calls per second, one thread, %ld environments x one episode of random play (16x16)\n", envs);
    bench_print_machine(stdout);
    printf("%-28s %9s %12s %12s %8s", "reward", "tcc ms", "tcc calls/s", "gcc calls/s", "tcc/gcc");
    if (nv)
        for (int a = 0; a < 4; a++) printf(" %8s", archs[a]);
    printf("\n");
    int rc = 0;
    for (int f = 0; f < n_files; f++) {
        int r = reward_row(files[f], f, optind < argc, envs, seconds, dir, nv);
        if (r < 0) return 1;
        rc |= r;
    }
    if (!nv) printf("NVRTC compile times not measured: %s\n", nv_why);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench reward: could not remove %s\n", dir);
    return rc;
}
