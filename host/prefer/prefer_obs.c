/* Observations for the preference models, read from assess's output
 * (prefer_fit.h pref_read).  The files are untrusted: bounded, checked
 * line by line, and a rating or score out of range is refused, never
 * clipped. */
#include "prefer_fit.h"
#include "util.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define OBS_FILE_MAX (256L << 20)

/* The index of name in a growing table, added when new; -1 when full. */
static int name_index(char (**names)[160], int *n, int max, const char *name, size_t width)
{
    for (int i = 0; i < *n; i++)
        if (!strncmp((*names)[i], name, width - 1)) return i;
    if (*n >= max) return -1;
    if (*n % 64 == 0) {
        void *grown = realloc(*names, sizeof **names * (size_t)(*n + 64));
        if (!grown) return -1;
        *names = grown;
    }
    snprintf((*names)[*n], width, "%s", name);
    return (*n)++;
}

/* The trajectory's folder: plays of one generator's levels live together.
 * 0, or -1 when it does not fit out. */
static int folder_of(const char *path, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(out, len, ".");
    else if ((size_t)(slash - path) >= len) return -1;
    else snprintf(out, len, "%.*s", (int)(slash - path), path);
    return 0;
}

int pref_scores_json(const json_t *dims, double *x, int *missing, char *err, int errlen)
{
    *missing = 0;
    if (!json_is_object(dims)) {
        say_to(err, errlen, "no 'dimensions' object");
        return -1;
    }
    for (int j = 0; j < PREFER_N_DIMS; j++) {
        const json_t *score = json_object_get(json_object_get(dims, dim_id(j)), "score");
        if (!score || json_is_null(score)) {
            x[j] = NAN;
            (*missing)++;
            continue;
        }
        double v = json_number_value(score);
        if (!json_is_number(score) || v < 1 || v > 5) {
            say_to(err, errlen, "%s: the score must be a number 1..5", dim_id(j));
            return -1;
        }
        x[j] = v;
    }
    return 0;
}

/* One assessment line; 1 when kept, 0 when skipped, -1 when malformed. */
static int read_obs(const json_t *a, pref_data *d, char (**personas)[160], char *err, int errlen)
{
    const char *persona = json_string_value(json_object_get(a, "persona"));
    const json_t *overall = json_object_get(a, "overall");
    if (!persona || !json_is_number(overall)) return 0; /* neutral, or no rating: nothing to fit */
    double y = json_number_value(overall);
    if (y < 1 || y > 10) {
        say_to(err, errlen, "overall must be 1..10");
        return -1;
    }
    const char *gen = json_string_value(json_object_get(a, "generator"));
    const char *traj = json_string_value(json_object_get(a, "trajectory"));
    char folder[160];
    /* the tables keep names to a width: two longer ones alike up to the
     * cut would be taken for one generator (a held-out fold that is not)
     * or one persona */
    if ((!gen && folder_of(traj ? traj : "", folder, sizeof folder)) || (gen && strlen(gen) >= sizeof folder) ||
        strlen(persona) >= sizeof **personas) {
        say_to(err, errlen, "the generator (the 'generator' field, else the trajectory's folder) or the persona is "
                            "longer than %zu bytes", sizeof folder - 1);
        return -1;
    }
    if (!gen) gen = folder;
    pref_obs o = {0};
    int missing;
    if (pref_scores_json(json_object_get(a, "dimensions"), o.x, &missing, err, errlen)) return -1;
    if (missing == PREFER_N_DIMS) return 0;
    o.y = y;
    o.generator = name_index(&d->generators, &d->n_generators, PREFER_MAX_OBS, gen, sizeof *d->generators);
    o.persona = name_index(personas, &d->n_personas, 32, persona, sizeof **personas);
    if (o.generator < 0 || o.persona < 0) {
        say_to(err, errlen, "too many generators or personas (at most 32 personas)");
        return -1;
    }
    d->n_incomplete += missing > 0;
    d->obs[d->n++] = o;
    return 1;
}

typedef struct {
    pref_data *d;
    char (**personas)[160];
    int *skipped;
} obs_ctx;

static int obs_line(const json_t *o, int line, void *ctx, char *err, int errlen)
{
    obs_ctx *c = ctx;
    (void)line;
    if (c->d->n >= PREFER_MAX_OBS) {
        say_to(err, errlen, "more than %d observations", PREFER_MAX_OBS);
        return -1;
    }
    int kept = read_obs(o, c->d, c->personas, err, errlen);
    *c->skipped += kept == 0;
    return kept < 0 ? -1 : 0;
}

int pref_read(char **paths, int n_paths, pref_data *d, int *skipped, char *err, int errlen)
{
    memset(d, 0, sizeof *d);
    *skipped = 0;
    char (*personas)[160] = NULL;
    d->obs = malloc(sizeof *d->obs * PREFER_MAX_OBS);
    int rc = d->obs ? 0 : -1;
    if (rc) say_to(err, errlen, "out of memory");
    obs_ctx ctx = {d, &personas, skipped};
    for (int i = 0; i < n_paths && !rc; i++) rc = read_jsonl_file(paths[i], OBS_FILE_MAX, obs_line, &ctx, err, errlen);
    d->personas = malloc(sizeof *d->personas * (size_t)(d->n_personas + 1));
    for (int p = 0; d->personas && p < d->n_personas; p++) snprintf(d->personas[p], sizeof *d->personas, "%s", personas[p]);
    free(personas);
    if (!rc && !d->personas) rc = -1;
    if (rc) pref_free(d);
    return rc;
}

void pref_free(pref_data *d)
{
    free(d->obs);
    free(d->generators);
    free(d->personas);
    memset(d, 0, sizeof *d);
}
