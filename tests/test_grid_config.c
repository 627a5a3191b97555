/* grid --config FILE: a grid started from another grid's grid.json with
 * one flag changed differs from it only in that field (and the cells that
 * follow from it); keys grid.json does not hold, and servers the command
 * line does not name, refused. */
#include "harness.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TINY_CELL "--llm offline --preset small --steps 256 --envs 2 --align 0 --check-envs 4 --levels 4 --iterations 1"

static json_t *grid_json(const char *dir) { return pcg_test_json_in(dir, "grid.json"); }

static void grid_config_round_trip(void **state)
{
    (void)state;
    char a[600], b[600], out[1 << 14];
    snprintf(a, sizeof a, "%s/gcfg-a", pcg_test_tmpdir());
    snprintf(b, sizeof b, "%s/gcfg-b", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s grid --out %s --scenarios 1 --ablations zs -- " TINY_CELL, pcg_test_binary(), a);
    if (rc) fail_msg("grid %d: %s", rc, out);
    /* one flag over the file: the repeats; and a run flag after -- goes after the file's */
    rc = pcg_test_sh(out, sizeof out, "%s grid --config %s/grid.json --out %s --repeats 2 -- --levels 3",
                     pcg_test_binary(), a, b);
    if (rc) fail_msg("grid --config %d: %s", rc, out);
    json_t *ja = grid_json(a), *jb = grid_json(b);
    const char *key;
    json_t *v;
    json_object_foreach(ja, key, v) {
        if (json_equal(v, json_object_get(jb, key))) continue;
        if (strcmp(key, "repeats") && strcmp(key, "cells") && strcmp(key, "run_flags")) fail_msg("'%s' differs", key);
    }
    assert_int_equal(json_integer_value(json_object_get(jb, "repeats")), 2);
    assert_int_equal(json_array_size(json_object_get(jb, "cells")), 2);
    json_t *fa = json_object_get(ja, "run_flags"), *fb = json_object_get(jb, "run_flags");
    assert_int_equal(json_array_size(fb), json_array_size(fa) + 2);
    assert_string_equal(json_string_value(json_array_get(fb, json_array_size(fb) - 1)), "3");
    json_decref(ja);
    json_decref(jb);
}

static void grid_config_refused(void **state)
{
    (void)state;
    char path[600], dir[600], out[8192];
    snprintf(path, sizeof path, "%s/gcfg-bad.json", pcg_test_tmpdir());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"format\": 3, \"scenarios\": [1], \"repeats\": 1, \"colour\": \"blue\"}", f);
    fclose(f);
    snprintf(dir, sizeof dir, "%s/gcfg-bad-run", pcg_test_tmpdir());
    int rc = pcg_test_sh(out, sizeof out, "%s grid --config %s --out %s 2>&1", pcg_test_binary(), path, dir);
    assert_int_equal(rc, 2);
    assert_int_equal(pcg_test_count_lines(out), 1);
    assert_non_null(strstr(out, "unknown key 'colour'"));
    /* a key given twice is refused as such, and does not hide an unknown one */
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"format\": 3, \"scenarios\": [1], \"repeats\": 1, \"colour\": \"blue\", \"repeats\": 1}", f);
    fclose(f);
    rc = pcg_test_sh(out, sizeof out, "%s grid --config %s --out %s 2>&1", pcg_test_binary(), path, dir);
    assert_int_equal(rc, 2);
    assert_int_equal(pcg_test_count_lines(out), 1);
    assert_non_null(strstr(out, "duplicate object key"));
    /* a model server named in the file but not on the command line */
    snprintf(path, sizeof path, "%s/gcfg-server.json", pcg_test_tmpdir());
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"format\": 3, \"scenarios\": [1], \"models\": [{\"name\": \"m\", \"base_url\": \"http://127.0.0.1:9/v1\"}],"
          " \"pe\": [\"cot\"], \"ablations\": [\"zs\"], \"feedbacks\": [], \"feedback_inputs\": [], \"got_best\": [],"
          " \"got_worst\": [], \"prompt_profiles\": [], \"reward_apis\": [], \"fitnesses\": [], \"accept\": [],"
          " \"target_fitness\": [], \"human\": null, \"repeats\": 1, \"run_flags\": []}",
          f);
    fclose(f);
    snprintf(dir, sizeof dir, "%s/gcfg-server-run", pcg_test_tmpdir());
    rc = pcg_test_sh(out, sizeof out, "%s grid --config %s --out %s 2>&1 </dev/null", pcg_test_binary(), path, dir);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "127.0.0.1:9"));
    assert_non_null(strstr(out, "--base-url"));
    snprintf(path, sizeof path, "%s/cells", dir);
    assert_false(pcg_test_exists(path));
}

PCG_TESTS(grid_config, cmocka_unit_test(grid_config_round_trip), cmocka_unit_test(grid_config_refused))
