/* Recorded playthroughs (host/prefer/play.h): routes, events, failed
 * plays, the explorer's determinism, and the command's files and errors. */
#include "harness.h"
#include "play.h"
#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* Count the events of kind name over every step. */
static int events_of(const json_t *steps, const char *name)
{
    int n = 0;
    size_t i, k;
    json_t *st, *ev;
    json_array_foreach(steps, i, st) {
        json_array_foreach(json_object_get(st, "events"), k, ev) n += !strcmp(json_string_value(json_object_get(ev, "event")), name);
    }
    return n;
}

static void step_pos(const json_t *steps, int i, int *r, int *c)
{
    json_t *pos = json_object_get(json_array_get(steps, (size_t)i), "pos");
    *r = (int)json_integer_value(json_array_get(pos, 0));
    *c = (int)json_integer_value(json_array_get(pos, 1));
}

/* The route player walks the shortest solution, key first; the window
 * and the legal moves are those of the cell. */
static void play_route_golden(void **state)
{
    (void)state;
    pcg_test_grid g;
    PCG_GRID(g, "@..#", "##k#", ".b.D");
    play_opts o;
    play_opts_default(&o);
    json_t *steps = json_array();
    play_summary s;
    assert_int_equal(play_level(&g.l, &o, steps, &s), 0);
    assert_int_equal(s.end, PLAY_END_DOOR);
    assert_int_equal(s.steps, 5);
    assert_int_equal(s.key_step, 3);
    assert_int_equal(s.door_step, 5);
    assert_int_equal(s.enemies_seen, 1);
    assert_int_equal(s.backtracks, 0);
    assert_int_equal((int)json_array_size(steps), 6);
    static const int want[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 2}, {2, 2}, {2, 3}};
    for (int i = 0; i < 6; i++) {
        int r, c;
        step_pos(steps, i, &r, &c);
        assert_int_equal(r, want[i][0]);
        assert_int_equal(c, want[i][1]);
    }
    json_t *first = json_array_get(steps, 0);
    assert_string_equal(json_string_value(json_object_get(first, "move")), "right");
    assert_string_equal(json_string_value(json_array_get(json_object_get(first, "sees"), 2)), "  @..");
    assert_int_equal((int)json_array_size(json_object_get(first, "moves")), 1);
    assert_null(json_object_get(json_array_get(steps, 5), "move"));
    assert_int_equal(events_of(steps, "key"), 1);
    assert_int_equal(events_of(steps, "door"), 1);
    assert_int_equal(events_of(steps, "enemy"), 1);
    json_decref(steps);
}

/* Failed plays are complete records: no route, no player. */
static void play_failed_records(void **state)
{
    (void)state;
    pcg_test_grid g;
    play_opts o;
    play_opts_default(&o);
    play_summary s;
    json_t *steps = json_array();
    PCG_GRID(g, "@.#k.D");
    assert_int_equal(play_level(&g.l, &o, steps, &s), 0);
    assert_int_equal(s.end, PLAY_END_NO_ROUTE);
    assert_int_equal((int)json_array_size(steps), 1); /* the start, seen */
    json_decref(steps);
    /* the explorer on the same level explores its side and is stuck */
    o.player = PLAY_EXPLORER;
    steps = json_array();
    assert_int_equal(play_level(&g.l, &o, steps, &s), 0);
    assert_int_equal(s.end, PLAY_END_STUCK);
    assert_int_equal(s.visited, 2);
    assert_int_equal(s.key_step, -1);
    json_decref(steps);
    PCG_GRID(g, "..k.D");
    steps = json_array();
    assert_int_equal(play_level(&g.l, &o, steps, &s), 0);
    assert_int_equal(s.end, PLAY_END_INVALID);
    assert_int_equal((int)json_array_size(steps), 0);
    json_decref(steps);
    json_t *sum = play_summary_json(&s);
    assert_string_equal(json_string_value(json_object_get(sum, "end")), "invalid");
    json_decref(sum);
}

/* The explorer, curious, walks into the dead-end branch first and comes
 * back over cells it has seen: backtracks and a dead end are recorded;
 * the same seed gives the same record. */
static void play_explorer_events(void **state)
{
    (void)state;
    pcg_test_grid g;
    PCG_GRID(g, "#.###", "#.###", "@..kD", "#####");
    play_opts o;
    play_opts_default(&o);
    o.player = PLAY_EXPLORER;
    o.curiosity = 1.0; /* visit everything before heading for the goal */
    play_summary s;
    json_t *a = json_array(), *b = json_array();
    assert_int_equal(play_level(&g.l, &o, a, &s), 0);
    assert_int_equal(s.end, PLAY_END_DOOR);
    assert_int_equal(s.visited, 7);
    assert_true(s.dead_ends >= 1);
    assert_true(s.backtracks >= 2); /* back down the branch */
    assert_int_equal(events_of(a, "dead_end"), s.dead_ends);
    assert_int_equal(events_of(a, "backtrack"), s.backtracks);
    play_summary s2;
    assert_int_equal(play_level(&g.l, &o, b, &s2), 0);
    assert_true(json_equal(a, b));
    json_decref(a);
    json_decref(b);
    /* curiosity 0 heads for the key once seen: no detour */
    o.curiosity = 0.0;
    a = json_array();
    assert_int_equal(play_level(&g.l, &o, a, &s), 0);
    assert_int_equal(s.end, PLAY_END_DOOR);
    assert_int_equal(s.steps, 4);
    json_decref(a);
}

static void play_cli(void **state)
{
    (void)state;
    char dir[512], path[600], out[8192];
    snprintf(dir, sizeof dir, "%s/play", pcg_test_tmpdir());
    assert_int_equal(pcg_test_sh(out, sizeof out, "mkdir -p %s/in", dir), 0);
    snprintf(path, sizeof path, "%s/in/a.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("3 1 1 2\n2 2 7 2\n1 4 1 8\n", f);
    fclose(f);
    int rc = pcg_test_sh(out, sizeof out, "%s play --player route --out %s/out %s/in", pcg_test_binary(), dir, dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "a: door after 5 steps"));
    snprintf(path, sizeof path, "%s/out/a.jsonl", dir);
    char *text = pcg_test_slurp(path);
    assert_non_null(text);
    assert_int_equal(pcg_test_count_lines(text), 8); /* header, 6 positions, summary */
    assert_non_null(strstr(text, "\"end\":\"door\""));
    free(text);
    rc = pcg_test_sh(out, sizeof out, "%s play --player flying %s/in 2>&1", pcg_test_binary(), dir);
    assert_int_equal(rc, 2);
    assert_int_equal(pcg_test_count_lines(out), 1);
    rc = pcg_test_sh(out, sizeof out, "%s play --player route %s/missing.txt 2>&1", pcg_test_binary(), dir);
    assert_int_equal(rc, 1);
    assert_int_equal(pcg_test_count_lines(out), 1);
}

/* The model player against a scripted server: asked at the junction only
 * (corridors and the dead end by rule), its answer taken; an answer with
 * no legal move leaves it to the explorer's rule; a spent budget asks
 * nothing. */
static void play_llm_player(void **state)
{
    (void)state;
    pcg_test_use_source_prompts();
    pcg_fake_srv srv;
    pcg_test_srv_start(&srv, "tests/fake_openai_player.json", "player", "PCG_PLAYER_KEY");
    char dir[512], path[600], out[8192];
    snprintf(dir, sizeof dir, "%s/play-llm", pcg_test_tmpdir());
    assert_int_equal(pcg_test_sh(out, sizeof out, "mkdir -p %s", dir), 0);
    snprintf(path, sizeof path, "%s/t.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("7 1 3 1 8\n", f); /* k . @ . D: a junction at the start */
    fclose(f);
    const char *flags = "--base-url %s --model fake-player --api-key-env PCG_PLAYER_KEY --llm-retries 1";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "PCG_PLAYER_KEY=k %%s play --player llm --persona thrill_seeker %s --out %%s/a %%s",
             flags);
    int rc = pcg_test_sh(out, sizeof out, cmd, pcg_test_binary(), srv.url, dir, path);
    if (rc) fail_msg("play --player llm %d: %s", rc, out);
    assert_non_null(strstr(out, "t: door after 6 steps"));
    snprintf(path, sizeof path, "%s/a/t.jsonl", dir);
    char *text = pcg_test_slurp(path);
    assert_non_null(text);
    assert_int_equal(pcg_test_count_of(text, "\"asked\":\"yes\""), 1);
    assert_non_null(strstr(text, "the key is that way"));
    assert_non_null(strstr(text, "\"player\":\"llm\""));
    free(text);
    /* the second answer is prose: the explorer's rule moves */
    snprintf(path, sizeof path, "%s/t.txt", dir);
    rc = pcg_test_sh(out, sizeof out, cmd, pcg_test_binary(), srv.url, dir, path);
    snprintf(path, sizeof path, "%s/a/t.jsonl", dir);
    text = pcg_test_slurp(path);
    assert_non_null(text);
    if (rc) fail_msg("second play %d: %s", rc, out);
    assert_int_equal(pcg_test_count_of(text, "no legal move in the answer"), 1);
    assert_non_null(strstr(text, "\"end\":\"door\""));
    free(text);
    char *log = pcg_test_slurp(srv.log);
    pcg_test_srv_stop(&srv);
    /* one question per play (the log may also hold a probe of the server's context) */
    assert_int_equal(pcg_test_count_of(log, "You stand at a junction"), 2);
    assert_non_null(strstr(log, "Thrill Seeker"));
    free(log);
    /* a budget of no calls asks nothing */
    snprintf(path, sizeof path, "%s/t.txt", dir);
    rc = pcg_test_sh(out, sizeof out, "%s play --player llm --max-calls 0 --base-url http://127.0.0.1:9/v1 %s",
                     pcg_test_binary(), path);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "budget spent"));
}

PCG_TESTS(play, cmocka_unit_test(play_route_golden), cmocka_unit_test(play_failed_records),
          cmocka_unit_test(play_explorer_events), cmocka_unit_test(play_cli), cmocka_unit_test(play_llm_player))
