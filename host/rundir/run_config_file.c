/* A run's settings from a config file (run_config_file.h). */
#include "run_config_file.h"
#include "trust.h"
#include "util.h"
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#define CONFIG_FILE_MAX (1L << 20)

/* Every key of file must be one of ref's, objects within objects alike. */
static int known_keys(const json_t *file, const json_t *ref, const char *where, char *err, int errlen)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)file, key, v) {
        const json_t *r = json_object_get(ref, key);
        if (!r) {
            say_to(err, errlen, "unknown key '%s%s%.60s' (the keys config.json holds: docs/loop.md)", where,
                   where[0] ? "." : "", key);
            return -1;
        }
        if (json_is_object(v) && json_is_object(r) && known_keys(v, r, key, err, errlen)) return -1;
        if (json_is_object(r) != json_is_object(v) && !json_is_null(v)) {
            say_to(err, errlen, "'%s' must be %s", key, json_is_object(r) ? "an object" : "a value, not an object");
            return -1;
        }
    }
    return 0;
}

/* The keys a config.json can hold: a model author's (with its server
 * settings) and a profile's included. */
static json_t *reference_keys(const run_config *c)
{
    run_config all = *c;
    all.offline = 0;
    snprintf(all.profile, sizeof all.profile, "quick");
    snprintf(all.init_reward, sizeof all.init_reward, "x");
    return run_config_to_json(&all);
}

/* file's values over base, objects merged key by key. */
static void overlay(json_t *base, const json_t *file)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)file, key, v) {
        json_t *b = json_object_get(base, key);
        if (json_is_object(v) && json_is_object(b)) overlay(b, v);
        else json_object_set(base, key, v);
    }
}

static void note_file(const json_t *file, run_config_file_info *info)
{
    memset(info, 0, sizeof *info);
    const json_t *sc = json_object_get(file, "scenario"), *st = json_object_get(file, "story");
    info->has_task = (json_is_integer(sc) && json_integer_value(sc) > 0) ||
                     (json_is_string(st) && json_string_value(st)[0]);
    info->has_author = json_object_get(file, "author") != NULL;
    const char *url = json_string_value(json_object_get(json_object_get(file, "llm"), "base_url"));
    if (url) snprintf(info->server, sizeof info->server, "%s", url);
    const char *init = json_string_value(json_object_get(file, "init_reward"));
    if (init) snprintf(info->init_reward, sizeof info->init_reward, "%s", init);
}

int run_config_file_load(const char *path, run_config *c, run_config_file_info *info, char *err, int errlen)
{
    char why[1400];
    json_t *file = read_json_file(path, CONFIG_FILE_MAX, why, sizeof why);
    if (!file) {
        say_to(err, errlen, "--config: %s", why);
        return -1;
    }
    int rc = -1;
    json_t *ref = reference_keys(c), *merged = run_config_to_json(c);
    if (!json_is_object(file)) say_to(why, sizeof why, "expected a JSON object");
    else if (!known_keys(file, ref, "", why, sizeof why)) {
        note_file(file, info);
        overlay(merged, file);
        rc = run_config_from_json(merged, c, why, sizeof why);
    }
    if (rc) say_to(err, errlen, "--config %s: %s", path, why);
    json_decref(file);
    json_decref(ref);
    json_decref(merged);
    return rc;
}

int run_config_file_check(const char *path, const run_config_file_info *info, const run_config *c, int base_url_set,
                          int init_reward_set, char *err, int errlen)
{
    if (info->init_reward[0] && !init_reward_set) {
        say_to(err, errlen, "--config %s reads the initial reward from %.300s; a config file never reads a file on its "
                            "own: give --init-reward %.300s to use it", path, info->init_reward, info->init_reward);
        return -1;
    }
    if (c->offline || !info->server[0] || base_url_set || trust_default_server(info->server)) return 0;
    say_to(err, errlen, "--config %s names the model server %.300s; a config file never picks a server on its own: "
                        "give --base-url %.300s to use it", path, info->server, info->server);
    return -1;
}
