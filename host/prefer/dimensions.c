/* The experience dimensions' ids and their data file (dimensions.h). */
#include "dimensions.h"
#include "prompts.h"
#include "util.h"
#include <limits.h>
#include <stdio.h>
#include <string.h>

static const char *const ids[PREFER_N_DIMS] = {
    "goals_rules", "challenge_fit", "progress_feedback", "ease_of_control", "autonomy", "mastery",
    "curiosity", "meaning", "immersion", "cognitive_challenge", "decision_challenge", "emotional_challenge",
};

const char *dim_id(int j) { return j >= 0 && j < PREFER_N_DIMS ? ids[j] : NULL; }

int dim_index(const char *id)
{
    for (int j = 0; id && j < PREFER_N_DIMS; j++)
        if (!strcmp(ids[j], id)) return j;
    return -1;
}

static int check_entry(const json_t *d, int j, char *err, int errlen)
{
    const char *id = json_string_value(json_object_get(d, "id"));
    const char *inst = json_string_value(json_object_get(d, "instrument"));
    const json_t *anchors = json_object_get(d, "anchors");
    if (!id || strcmp(id, ids[j])) {
        say_to(err, errlen, "dimension %d must be '%s'", j + 1, ids[j]);
        return -1;
    }
    if (!inst || strcmp(inst, j < PREFER_N_PXI ? "PXI" : "CORGIS")) {
        say_to(err, errlen, "dimension '%s' belongs to %s", id, j < PREFER_N_PXI ? "PXI" : "CORGIS");
        return -1;
    }
    if (!json_is_string(json_object_get(d, "name")) || !json_is_string(json_object_get(d, "definition")) ||
        !json_is_string(json_object_get(anchors, "1")) || !json_is_string(json_object_get(anchors, "3")) ||
        !json_is_string(json_object_get(anchors, "5"))) {
        say_to(err, errlen, "dimension '%s' needs a name, a definition and anchors 1, 3 and 5", id);
        return -1;
    }
    return 0;
}

json_t *dim_load(char *err, int errlen)
{
    char dir[PATH_MAX], path[PATH_MAX + 64], why[PATH_MAX + 200];
    if (prompts_dir(dir, sizeof dir, err, errlen)) return NULL;
    snprintf(path, sizeof path, "%s/prefer/dimensions.json", dir);
    json_t *doc = read_json_file(path, 1L << 20, why, sizeof why);
    if (!doc) {
        say_to(err, errlen, "dimensions: %s", why);
        return NULL;
    }
    const json_t *dims = json_object_get(doc, "dimensions");
    int ok = json_is_array(dims) && json_array_size(dims) == PREFER_N_DIMS;
    if (!ok) say_to(err, errlen, "dimensions: %s must list %d dimensions", path, PREFER_N_DIMS);
    for (int j = 0; ok && j < PREFER_N_DIMS; j++) {
        char e[300];
        if (check_entry(json_array_get(dims, (size_t)j), j, e, sizeof e)) {
            say_to(err, errlen, "dimensions: %s: %s", path, e);
            ok = 0;
        }
    }
    if (!ok) json_decref(doc);
    return ok ? doc : NULL;
}

char *persona_load(const char *name, int *usage, char *err, int errlen)
{
    size_t n = strlen(name);
    *usage = 1;
    if (!n || n > 64 || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != n) {
        say_to(err, errlen, "a persona is a plain name (lower case, digits, _)");
        return NULL;
    }
    char dir[PATH_MAX], path[PATH_MAX + 128], why[PATH_MAX + 200];
    *usage = 0;
    if (prompts_dir(dir, sizeof dir, err, errlen)) return NULL;
    snprintf(path, sizeof path, "%s/prefer/personas/%s.txt", dir, name);
    if (!path_is_file(path)) {
        *usage = 1;
        say_to(err, errlen, "no persona '%s' (%s does not exist)", name, path);
        return NULL;
    }
    long len;
    char *text = read_file(path, 1L << 16, &len, why, sizeof why);
    if (!text) say_to(err, errlen, "%s", why);
    return text;
}
