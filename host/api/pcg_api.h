/* The C ABI of libpcgrllm.so (make lib), which the Python package in
 * python/ reaches through ctypes (docs/python.md).  Plain types only: ints,
 * byte and float arrays, NUL-terminated strings.  Every call that can fail
 * returns non-zero (or NULL) and writes one line into err. */
#ifndef PCG_API_H
#define PCG_API_H
#include <stdint.h>

/* The ABI's version; a caller refuses a library with another. */
#define PCG_API_VERSION 2
int pcg_api_version(void);

/* A batch of n environments, map side `size`, variant "dungeon" or
 * "treasure", starting from seed. */
typedef struct pcg_vec pcg_vec;
pcg_vec *pcg_vec_new(int n, int size, const char *variant, uint64_t seed, char *err, int errlen);
void pcg_vec_free(pcg_vec *v);

/* Shape and rules, in this order: n, h, w, obs_h, obs_w, n_actions,
 * episode_len, variant (0 dungeon, 1 treasure).  Writes 8 ints. */
void pcg_vec_shape(const pcg_vec *v, int *out);

/* The arrays the batch owns (valid until pcg_vec_free or a reset with a
 * seed): observations n*obs_h*obs_w, the maps n*h*w, the last maps of the
 * episodes the last step ended n*h*w, rewards n, dones n, steps n. */
unsigned char *pcg_vec_obs(pcg_vec *v);
unsigned char *pcg_vec_maps(pcg_vec *v);
unsigned char *pcg_vec_final_maps(pcg_vec *v);
float *pcg_vec_rewards(pcg_vec *v);
unsigned char *pcg_vec_dones(pcg_vec *v);
int *pcg_vec_steps(pcg_vec *v);

/* New episodes for every environment: from the stream where it stands
 * (has_seed 0), or from a new seed (the arrays are allocated anew: fetch
 * them again).  0, or -1 with err. */
int pcg_vec_reset(pcg_vec *v, int has_seed, uint64_t seed, char *err, int errlen);
/* One step of every environment with actions[n] (caller-owned, read
 * only); out-of-range actions are refused.  0, or -1 with err. */
int pcg_vec_step(pcg_vec *v, const int32_t *actions, char *err, int errlen);
/* `pcgrllm levels --policy random`'s actions for step t of seed. */
void pcg_vec_random_actions(const pcg_vec *v, uint64_t seed, uint64_t t, int32_t *actions);
/* The episode log since the last call with clear: finished episodes, the
 * sum of their returns, edits that changed a cell.  Writes 3 doubles. */
void pcg_vec_log(pcg_vec *v, double *out, int clear);
/* Score every step with the human reward of scenario 1..4 (the reference's
 * own, rewards/human/scenarioN.c, compiled into the library), or with none
 * (scenario 0: every reward 0).  0, or -1 with err. */
int pcg_vec_set_human_reward(pcg_vec *v, int scenario, char *err, int errlen);
/* Score every step with the reward in src (C, the reward API; checked
 * already by `pcgrllm check-reward`), which runs only in a confined worker
 * process of the pcgrllm binary at `binary` (reward_jit/batch_reward.h),
 * never in this one; watchdog_s: the longest a step's rewards may take
 * (<= 0: 10 s).  A worker that crashes, is stopped by the filter or the
 * watchdog, or returns a non-finite reward makes pcg_vec_step fail with
 * one line; the step is still finished (rewards 0 when the worker failed).
 * 0, or -1 with err (the worker could not be started). */
int pcg_vec_set_reward_file(pcg_vec *v, const char *binary, const char *src, double watchdog_s, char *err,
                            int errlen);
/* The C loop's own rate: steps per second of random actions on this
 * batch for about `seconds` (the batch is reset afterwards). */
double pcg_vec_bench(pcg_vec *v, double seconds);

/* The evaluator on n levels (level i: hs[i] x ws[i] tiles at
 * tiles + offsets[i]) against target: "1".."4" for a scenario, or target
 * JSON as `pcgrllm eval --target` takes it.  names (NULL: "0", "1", ...)
 * fill the documents' "file" fields.  The JSON document of
 * `pcgrllm eval --json`, malloc'd (free with pcg_free), or NULL with err. */
char *pcg_eval(const char *target, int n, const int *hs, const int *ws, const unsigned char *tiles,
               const long *offsets, const char *const *names, char *err, int errlen);
void pcg_free(void *p);

/* Level files: read (tiles: PCG_MAX_CELLS bytes; *h, *w set), parse text,
 * write atomically (comment may be NULL), render a PNG.  0, or -1 with err. */
int pcg_level_read(const char *path, unsigned char *tiles, int *h, int *w, char *err, int errlen);
int pcg_level_parse(const char *text, long len, unsigned char *tiles, int *h, int *w, char *err, int errlen);
int pcg_level_write(const char *path, int h, int w, const unsigned char *tiles, const char *comment, char *err,
                    int errlen);
int pcg_render_png(const char *path, int h, int w, const unsigned char *tiles, int cell_px, char *err, int errlen);
/* The largest map side; tile ids are 1..9 in a map. */
int pcg_max_side(void);

#endif
