/* Trajectories read back and the offline judge (host/prefer/): counts
 * recomputed from the steps, damaged files refused in one line, scores
 * in range and grounded, persona ratings following their planted weights. */
#include "harness.h"
#include "judge_offline.h"
#include "play.h"
#include "trajectory.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Play g with o and write the record as pcgrllm play does. */
static void record_play(const pcg_test_grid *g, const play_opts *o, const char *name, char *path, size_t len)
{
    play_summary s;
    snprintf(path, len, "%s/%s.jsonl", pcg_test_tmpdir(), name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(play_write_record(f, name, &g->l, o, &s), 0);
    assert_int_equal(fclose(f), 0);
}

static void trajectory_read_back(void **state)
{
    (void)state;
    pcg_test_grid g;
    PCG_GRID(g, "#.###", "#.###", "@..kD", "b####");
    play_opts o;
    play_opts_default(&o);
    o.player = PLAY_EXPLORER;
    o.curiosity = 1.0;
    char path[600], err[800];
    record_play(&g, &o, "branch", path, sizeof path);
    play_features f;
    assert_int_equal(traj_read(path, &f, err, sizeof err), 0);
    assert_string_equal(f.level, "branch");
    assert_string_equal(f.player, "explorer");
    assert_int_equal(f.end, PLAY_END_DOOR);
    assert_int_equal(f.visited, 7);
    assert_int_equal(f.steps, f.positions - 1);
    assert_true(f.backtracks >= 2);
    assert_true(f.dead_ends >= 1);
    assert_int_equal(f.enemies_seen, 1);
    assert_true(f.key_seen_step >= 0 && f.key_seen_step <= f.key_step);
    assert_true(f.door_step > f.key_step);
    int x[PREFER_N_DIMS];
    char why[PREFER_N_DIMS][JUDGE_WHY_LEN];
    judge_offline_dims(&f, x, why);
    for (int j = 0; j < PREFER_N_DIMS; j++) {
        assert_true(x[j] >= 1 && x[j] <= 5);
        assert_true(strlen(why[j]) > 10);
    }
    /* the route player walks straight: fewer backtracks, easier control */
    play_features r;
    o.player = PLAY_ROUTE;
    record_play(&g, &o, "branch_route", path, sizeof path);
    assert_int_equal(traj_read(path, &r, err, sizeof err), 0);
    assert_int_equal(r.backtracks, 0);
    int y[PREFER_N_DIMS];
    judge_offline_dims(&r, y, why);
    assert_true(y[DIM_EASE_OF_CONTROL] > x[DIM_EASE_OF_CONTROL]);
    assert_true(y[DIM_CURIOSITY] <= x[DIM_CURIOSITY]);
}

static void write_text(const char *name, const char *text, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", pcg_test_tmpdir(), name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void trajectory_damaged(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"{\"level\":\"a\",\"player\":\"route\"}\n{\"step\":0,\"pos\":[0,0],\"sees\":[],\"moves\":[],\"events\":[]}\n",
         "cut short"},
        {"{\"level\":\"a\",\"player\":\"route\"}\n{\"step\":0,\"pos\":[0],\"sees\":[],\"moves\":[],\"events\":[]}\n"
         "{\"end\":\"door\"}\n",
         "line 2"},
        {"{\"level\":\"a\",\"player\":\"route\"}\n{\"end\":\"flew away\"}\n", "line 2"},
        {"{\"level\":\"a\"}\n{\"end\":\"door\"}\n", "line 1"},
        {"{\"level\":\"a\",\"player\":\"route\"}\n{\"end\":\"door\"}\n{\"end\":\"door\"}\n", "after the summary"},
        {"not json\n", "line 1"},
        {"{\"level\":\"a\",\"player\":\"route\"}\n{\"step\":0,\"pos\":[999,0],\"sees\":[],\"moves\":[],\"events\":[]}\n"
         "{\"end\":\"door\"}\n",
         "line 2"},
        /* the header's map is 2x2: a step elsewhere is not on the level played */
        {"{\"level\":\"a\",\"player\":\"route\",\"map\":[\"@.\",\"kD\"]}\n"
         "{\"step\":0,\"pos\":[5,1],\"sees\":[],\"moves\":[],\"events\":[]}\n{\"end\":\"door\"}\n",
         "line 2: a step at (5,1) lies outside the header's 2x2 map"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char path[600], err[800] = "", name[32];
        snprintf(name, sizeof name, "bad_traj_%zu.jsonl", i);
        write_text(name, bad[i][0], path, sizeof path);
        play_features f;
        assert_int_equal(traj_read(path, &f, err, sizeof err), -1);
        if (!strstr(err, bad[i][1])) fail_msg("case %zu: '%s' lacks '%s'", i, err, bad[i][1]);
        assert_null(strchr(err, '\n'));
    }
}

/* A persona's rating moves with its planted weights: raising a dimension
 * it weighs positively never lowers the noise-free rating. */
static void persona_ratings_follow_weights(void **state)
{
    (void)state;
    for (int p = 0; p < PREFER_N_PERSONAS; p++) {
        double b;
        const double *w = persona_weights(p, &b);
        assert_non_null(w);
        assert_int_equal(persona_index(persona_name(p)), p);
        int pos = 0;
        for (int j = 0; j < PREFER_N_DIMS; j++) pos += w[j] > 0;
        assert_true(pos >= 3); /* every persona values several things */
    }
    assert_int_equal(persona_index("nobody"), -1);
    /* the thrill seeker weighs emotional challenge most, the efficiency
     * essentialist mastery */
    const double *t = persona_weights(4, NULL), *e = persona_weights(0, NULL);
    for (int j = 0; j < PREFER_N_DIMS; j++) {
        assert_true(t[DIM_EMOTIONAL] >= t[j]);
        assert_true(e[DIM_MASTERY] >= e[j]);
    }
    /* ratings are in 1..10 and the same for the same seed and repeat */
    pcg_test_grid g;
    PCG_GRID(g, "@..#", "##k#", ".b.D");
    play_opts o;
    play_opts_default(&o);
    char path[600], err[800];
    record_play(&g, &o, "small", path, sizeof path);
    play_features f;
    assert_int_equal(traj_read(path, &f, err, sizeof err), 0);
    for (int p = -1; p < PREFER_N_PERSONAS; p++) {
        int a = judge_offline_overall(&f, p, 7, 0);
        assert_true(a >= 1 && a <= 10);
        assert_int_equal(a, judge_offline_overall(&f, p, 7, 0));
    }
}

static void assess_cli(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    pcg_test_grid g;
    PCG_GRID(g, "@..#", "##k#", ".b.D");
    play_opts o;
    play_opts_default(&o);
    char path[600], out[16384];
    record_play(&g, &o, "cli", path, sizeof path);
    int rc = pcg_test_sh(out, sizeof out, "%s assess --judge offline --persona thrill_seeker --repeats 3 %s",
                         pcg_test_binary(), path);
    assert_int_equal(rc, 0);
    json_t *a = json_loads(out, 0, NULL);
    assert_non_null(a);
    assert_string_equal(json_string_value(json_object_get(a, "judge")), "offline (rule-based)");
    assert_int_equal((int)json_object_size(json_object_get(a, "dimensions")), PREFER_N_DIMS);
    assert_int_equal((int)json_array_size(json_object_get(a, "ratings")), 3);
    json_int_t y = json_integer_value(json_object_get(a, "overall"));
    assert_true(y >= 1 && y <= 10);
    json_decref(a);
    static const char *const bad[] = {"--judge oracle", "--judge offline --persona ../../etc",
                                      "--judge offline --persona nobody", "--judge offline --repeats 0", "--persona x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rc = pcg_test_sh(out, sizeof out, "%s assess %s %s 2>&1", pcg_test_binary(), bad[i], path);
        assert_int_equal(rc, 2);
        assert_int_equal(pcg_test_count_lines(out), 1);
    }
}


/* The model judge against a scripted server: three repeats, one answer in
 * prose, one with a score out of range and one missing; the rating asked
 * apart, never shown a score. */
static void assess_model_judge(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    pcg_fake_srv srv;
    pcg_test_srv_start(&srv, "tests/fake_openai_prefer.json", "prefer-judge", "PCG_PREFER_KEY");
    pcg_test_grid g;
    PCG_GRID(g, "@..#", "##k#", ".b.D");
    play_opts o;
    play_opts_default(&o);
    char path[600];
    static char out[65536];
    record_play(&g, &o, "judged", path, sizeof path);
    int rc = pcg_test_sh(out, sizeof out,
                         "PCG_PREFER_KEY=k %s assess --judge openai --persona thrill_seeker --repeats 3 --base-url %s "
                         "--model fake-judge --api-key-env PCG_PREFER_KEY --llm-retries 1 %s",
                         pcg_test_binary(), srv.url, path);
    char *log = pcg_test_slurp(srv.log);
    pcg_test_srv_stop(&srv);
    if (rc) fail_msg("assess exited %d: %s", rc, out);
    json_t *a = json_loads(out, 0, NULL);
    assert_non_null(a);
    json_t *dims = json_object_get(a, "dimensions");
    /* goals_rules: 1 (first answer) and 5 (third): the median of two */
    assert_near(json_number_value(json_object_get(json_object_get(dims, "goals_rules"), "score")), 3.0, 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(dims, "goals_rules"), "answers")), 2);
    /* mastery only in the first answer, autonomy's 7 refused */
    assert_int_equal(json_integer_value(json_object_get(json_object_get(dims, "mastery"), "answers")), 1);
    assert_near(json_number_value(json_object_get(json_object_get(dims, "mastery"), "score")), 1.0, 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(dims, "autonomy"), "answers")), 1);
    assert_false(json_is_true(json_object_get(a, "complete")));
    assert_near(json_number_value(json_object_get(a, "overall")), 7.0, 0); /* 6 and 8; the prose gives none */
    assert_int_equal(json_integer_value(json_object_get(a, "calls")), 6);
    assert_string_equal(json_string_value(json_object_get(a, "persona")), "thrill_seeker");
    json_decref(a);
    /* every rating request: the persona and the play, no dimension or score */
    assert_non_null(log);
    int ratings = 0;
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strstr(line, "How much would you want to play")) continue;
        ratings++;
        assert_non_null(strstr(line, "Thrill Seeker"));
        assert_null(strstr(line, "goals_rules"));
        assert_null(strstr(line, "\\\"score\\\""));
    }
    assert_int_equal(ratings, 3);
    free(log);
}

PCG_TESTS(assess, cmocka_unit_test(trajectory_read_back), cmocka_unit_test(trajectory_damaged),
          cmocka_unit_test(persona_ratings_follow_weights), cmocka_unit_test(assess_cli),
          cmocka_unit_test(assess_model_judge))
