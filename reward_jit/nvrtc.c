#define _GNU_SOURCE
/* GPU reward JIT: the reward source plus a device prelude compiled to a
 * cubin with NVRTC.  libnvrtc is loaded with dlopen on first use, so the
 * engine builds and runs where CUDA is absent.  Compiling needs no GPU. */
#include "reward_jit.h"
#include "jit_internal.h"
#include "cuda_libs.h"
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char pcg_embed_hd_h[];
extern const char pcg_embed_bitrows_h[];
extern const char pcg_embed_level_h[];
extern const char pcg_embed_reward_api_h[];

typedef struct _nvrtcProgram *nvrtcProgram;
typedef int nvrtcResult; /* NVRTC_SUCCESS = 0 */

static struct {
    void *lib;
    char why[256];
    char version[16];
    char path[4096]; /* the file it came from */
    const char *(*GetErrorString)(nvrtcResult);
    nvrtcResult (*Version)(int *, int *);
    nvrtcResult (*CreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                                 const char *const *);
    nvrtcResult (*DestroyProgram)(nvrtcProgram *);
    nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetProgramLog)(nvrtcProgram, char *);
    nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetCUBIN)(nvrtcProgram, char *);
} nv;
static pthread_once_t nv_once = PTHREAD_ONCE_INIT;

static void nv_load(void)
{
    const char *env = getenv("PCGRLLM_NVRTC");
    char why[600] = "";
    if (env && !strcmp(env, "off")) {
        snprintf(nv.why, sizeof nv.why, "NVRTC not available (turned off by PCGRLLM_NVRTC=off)");
        return;
    }
    if (env && *env) {
        nv.lib = cuda_open_file(env, nv.path, sizeof nv.path, why, sizeof why);
    } else {
        /* the loader's path, then a toolkit off it or the one a Python
         * framework brought (or only PCGRLLM_CUDA_LIB_PATH's folders) */
        static const char *const names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                            "/usr/local/cuda/lib64/libnvrtc.so", NULL};
        static const char *const parts[] = {"cuda_nvrtc", NULL};
        nv.lib = cuda_open_library(names, "libnvrtc.so.[0-9]*", parts, nv.path, sizeof nv.path, why, sizeof why);
    }
    if (!nv.lib) {
        if (env && *env)
            snprintf(nv.why, sizeof nv.why, "NVRTC not available (PCGRLLM_NVRTC: %.200s)", why);
        else if (getenv("PCGRLLM_CUDA_LIB_PATH"))
            snprintf(nv.why, sizeof nv.why, "NVRTC not available (%.200s)", why);
        else
            snprintf(nv.why, sizeof nv.why,
                     "NVRTC not available (libnvrtc.so not found in the loader's path, the CUDA toolkit's lib64 "
                     "or a Python environment's nvidia packages; install the CUDA toolkit or set PCGRLLM_NVRTC)");
        return;
    }
#define NV_SYM(f)                                                                  \
    do {                                                                           \
        *(void **)&nv.f = dlsym(nv.lib, "nvrtc" #f);                               \
        if (!nv.f) {                                                               \
            snprintf(nv.why, sizeof nv.why, "NVRTC not available (libnvrtc lacks nvrtc" #f ")"); \
            dlclose(nv.lib);                                                       \
            nv.lib = NULL;                                                         \
            return;                                                                \
        }                                                                          \
    } while (0)
    NV_SYM(GetErrorString);
    NV_SYM(Version);
    NV_SYM(CreateProgram);
    NV_SYM(DestroyProgram);
    NV_SYM(CompileProgram);
    NV_SYM(GetProgramLogSize);
    NV_SYM(GetProgramLog);
    NV_SYM(GetCUBINSize);
    NV_SYM(GetCUBIN);
#undef NV_SYM
    int major = 0, minor = 0;
    if (nv.Version(&major, &minor) == 0) snprintf(nv.version, sizeof nv.version, "%d.%d", major, minor);
}

int reward_nvrtc_available(char *err, int errlen)
{
    pthread_once(&nv_once, nv_load);
    if (!nv.lib && err && errlen > 0) snprintf(err, (size_t)errlen, "%s", nv.why);
    return nv.lib != NULL;
}

const char *reward_nvrtc_version(void)
{
    pthread_once(&nv_once, nv_load);
    return nv.lib ? nv.version : "";
}

const char *reward_nvrtc_path(void)
{
    pthread_once(&nv_once, nv_load);
    return nv.lib ? nv.path : "";
}

/* Device prelude: the level core and the API on top of it; the reward's
 * own functions become device functions (-default-device).  Each thread
 * keeps one search per level it passes to compute_reward (level.h,
 * lv_kept), found by the helpers through a shared table indexed by the
 * thread (REWARD_KERNEL_BLOCK of them, the block the kernel is built and
 * launched for); a level view the reward makes of other tiles is searched
 * afresh.  The kernel's own names start with __pcg, which rewards may not
 * use.  The searching helpers are
 * never inlined: one copy each, however often a reward calls them, keeps
 * NVRTC's time down. */
#define PRELUDE_STR2(x) #x
#define PRELUDE_STR(x) PRELUDE_STR2(x)
static const char device_prelude[] =
    "#include \"level.h\"\n"
    "extern \"C\" {\n"
    "#include \"reward_api.h\"\n"
    "}\n"
    "__shared__ lv_kept *__pcg_kept_of[" PRELUDE_STR(REWARD_KERNEL_BLOCK) "];\n"
    "static lv_kept *__pcg_kept(const level_t *l) { return lv_kept_of(__pcg_kept_of[threadIdx.x], 2, l); }\n"
    "int level_height(const level_t *l) { return l->h; }\n"
    "int level_width(const level_t *l) { return l->w; }\n"
    "int tile_at(const level_t *l, int r, int c) { return lv_get(l, r, c); }\n"
    "__noinline__ int count_tiles(const level_t *l, int tile) { return lv_count_kept(__pcg_kept(l), l, tile); }\n"
    "__noinline__ int find_tiles(const level_t *l, int tile, int *rows, int *cols, int max)\n"
    "{ return lv_find_kept(__pcg_kept(l), l, tile, rows, cols, max < 0 ? 0 : max); }\n"
    "__noinline__ int path_length(const level_t *l, int r0, int c0, int r1, int c1)\n"
    "{ return lv_path_through_kept(__pcg_kept(l), l, r0, c0, r1, c1, ~PCG_BLOCK_DEFAULT); }\n"
    "__noinline__ int nearest_tile_distance(const level_t *l, int r, int c, int tile)\n"
    "{ return lv_nearest_kept(__pcg_kept(l), l, r, c, tile); }\n"
    "__noinline__ int count_regions(const level_t *l) { return lv_regions(l); }\n"
    "__noinline__ int path_length_through(const level_t *l, int r0, int c0, int r1, int c1, unsigned m)\n"
    "{ return lv_path_through_kept(__pcg_kept(l), l, r0, c0, r1, c1, m); }\n"
    /* the kernel comes before the reward: the reward's own macros (say,
     * #define return) cannot reach code the preprocessor has passed */
    "extern \"C\" __global__ void __launch_bounds__(" PRELUDE_STR(REWARD_KERNEL_BLOCK) ")\n"
    "pcg_reward_kernel(int n, int h, int w, const unsigned char *prev,\n"
    "                                             const unsigned char *curr, float *out)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i >= n) return;\n"
    "    size_t off = (size_t)i * (size_t)h * (size_t)w;\n"
    "    level_t a = {h, w, (unsigned char *)prev + off}, b = {h, w, (unsigned char *)curr + off};\n"
    "    lv_kept kept[2];\n"
    "    lv_kept_init(&kept[0], &a);\n"
    "    lv_kept_init(&kept[1], &b);\n"
    "    __pcg_kept_of[threadIdx.x] = kept;\n"
    "    out[i] = compute_reward(&a, &b);\n"
    "}\n";

/* The token an NVRTC error points at: the log quotes the source line
 * under the error and marks the column with a caret on the line after. */
static int caret_token(const char *error_line, char *got, size_t len)
{
    const char *src_line = strchr(error_line, '\n'), *caret;
    if (!src_line || !(caret = strchr(++src_line, '\n'))) return 0;
    caret++;
    const char *mark = caret;
    while (*mark == ' ') mark++;
    size_t col = (size_t)(mark - caret), n = 0;
    if (*mark != '^' || (size_t)(caret - 1 - src_line) <= col) return 0;
    const char *t = src_line + col;
    while (n + 1 < len && (isalnum((unsigned char)t[n]) || t[n] == '_')) n++;
    if (n == 0 && (unsigned char)t[0] > ' ' && t[0] != '\n') n = 1;
    memcpy(got, t, n);
    got[n] = 0;
    return n > 0;
}

/* First error of an NVRTC log, "reward.c(12): error: x" -> "line 12: x". */
static void first_error(const char *src, const char *log, char *err, int errlen)
{
    const char *p = log, *pick = NULL;
    while (p && *p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (!pick && memmem(p, n, "error", 5)) pick = p;
        p = e ? e + 1 : NULL;
    }
    if (!pick) pick = log;
    const char *e = strchr(pick, '\n');
    size_t n = e ? (size_t)(e - pick) : strlen(pick);
    char line[512];
    if (n >= sizeof line) n = sizeof line - 1;
    memcpy(line, pick, n);
    line[n] = 0;
    size_t fl = strlen(REWARD_FILE_NAME);
    const char *ux = strstr(line, "Unresolved extern function '");
    if (ux) {
        /* the linker names a function nobody defines: demangle _Z<len><name> */
        const char *m = ux + 28;
        char name[128];
        int nl = 0;
        if (m[0] == '_' && m[1] == 'Z') {
            char *end;
            long k = strtol(m + 2, &end, 10);
            if (k > 0 && k < (long)sizeof name && strlen(end) >= (size_t)k) {
                nl = (int)k;
                memcpy(name, end, (size_t)nl);
            }
        }
        if (!nl) {
            while (m[nl] && m[nl] != '\'' && nl < (int)sizeof name - 1) { name[nl] = m[nl]; nl++; }
        }
        name[nl] = 0;
        if (!strcmp(name, "compute_reward"))
            snprintf(err, (size_t)errlen, "no compute_reward: define float compute_reward(const level_t *prev, "
                                          "const level_t *curr)");
        else
            snprintf(err, (size_t)errlen, "'%s' is not available: reward code links only the reward API", name);
        return;
    }
    if (!strncmp(line, REWARD_FILE_NAME "(", fl + 1)) {
        int ln = atoi(line + fl + 1), end;
        const char *q = strstr(line, "): ");
        q = q ? q + 3 : line;
        if (!strncmp(q, "error: ", 7)) q += 7;
        char got[64];
        if (!strcmp(q, "expected a \";\"") && caret_token(pick, got, sizeof got) && (end = jit_statement_end(src, ln, got)))
            snprintf(err, (size_t)errlen, "line %d: expected a \";\" at the end of this line (found \"%s\" on line %d "
                     "instead)", end, got, ln);
        else
            snprintf(err, (size_t)errlen, "line %d: %s", ln, q);
    } else {
        const char *q = strstr(line, "error: ");
        snprintf(err, (size_t)errlen, "%s", q ? q + 7 : line);
    }
}

int nvrtc_compile_here(const char *src, const char *arch, int max_side, int scan, char **cubin, size_t *cubin_len,
                       char *err, int errlen)
{
    if (cubin) *cubin = NULL;
    if (cubin_len) *cubin_len = 0;
    if (!reward_nvrtc_available(err, errlen)) return -2;
    if (scan && reward_scan(src, err, errlen)) return -1;
    if (max_side != 0 && (max_side < 5 || max_side > PCG_MAX_SIDE)) {
        snprintf(err, (size_t)errlen, "bad largest level side %d (5..%d)", max_side, PCG_MAX_SIDE);
        return -1;
    }
    if (!arch || strncmp(arch, "sm_", 3)) {
        snprintf(err, (size_t)errlen, "bad GPU architecture '%s' (expected sm_75, sm_86, sm_89, sm_90, ...)",
                 arch ? arch : "");
        return -1;
    }
    size_t total = sizeof device_prelude + strlen(src) + 64;
    char *full = malloc(total);
    if (!full) {
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
    }
    snprintf(full, total, "%s#line 1 \"%s\"\n%s\n", device_prelude, REWARD_FILE_NAME, src);
    const char *headers[] = {pcg_embed_hd_h, pcg_embed_bitrows_h, pcg_embed_level_h, pcg_embed_reward_api_h};
    const char *names[] = {"hd.h", "bitrows.h", "level.h", "reward_api.h"};
    nvrtcProgram prog = NULL;
    int rc = -1;
    nvrtcResult r = nv.CreateProgram(&prog, full, REWARD_FILE_NAME, (int)(sizeof names / sizeof names[0]), headers, names);
    free(full);
    if (r) {
        snprintf(err, (size_t)errlen, "NVRTC could not create the program: %s", nv.GetErrorString(r));
        return -1;
    }
    char archopt[64];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    char sideopt[48];
    snprintf(sideopt, sizeof sideopt, "-DPCG_MAX_SIDE=%d", max_side ? max_side : PCG_MAX_SIDE);
    /* no include path at all, not even the source's own directory */
    const char *opts[] = {archopt, "-default-device", "--fmad=false", "-w", sideopt, "--no-source-include"};
    r = nv.CompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);
    if (r) {
        size_t ls = 0;
        char *log = NULL;
        if (nv.GetProgramLogSize(prog, &ls) == 0 && ls > 0 && (log = malloc(ls + 1))) {
            if (nv.GetProgramLog(prog, log) == 0) {
                log[ls] = 0;
                first_error(src, log, err, errlen);
            } else {
                log[0] = 0;
            }
        }
        if (!log || !log[0]) snprintf(err, (size_t)errlen, "NVRTC: %s", nv.GetErrorString(r));
        free(log);
        goto out;
    }
    size_t n = 0;
    if (nv.GetCUBINSize(prog, &n) || n == 0) {
        snprintf(err, (size_t)errlen, "NVRTC produced no cubin for %s", arch);
        goto out;
    }
    char *bin = malloc(n);
    if (!bin) {
        snprintf(err, (size_t)errlen, "out of memory");
        goto out;
    }
    if (nv.GetCUBIN(prog, bin)) {
        free(bin);
        snprintf(err, (size_t)errlen, "NVRTC could not return the cubin");
        goto out;
    }
    if (cubin) *cubin = bin;
    else free(bin);
    if (cubin_len) *cubin_len = n;
    rc = 0;
out:
    nv.DestroyProgram(&prog);
    return rc;
}
