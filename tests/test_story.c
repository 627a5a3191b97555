/* Target extraction from stories and target JSON. */
#include "harness.h"
#include "dungeon.h"
#include "level.h"
#include "story.h"
#include "target.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect_encounter(const char *story, int bat, int scorpion, int spider)
{
    target_t t;
    char why[300];
    int rc = story_extract_offline(story, &t, why, sizeof why);
    if (rc != STORY_OK) fail_msg("refused \"%s\": %s", story, why);
    assert_int_equal(t.kind, TARGET_ENCOUNTER);
    assert_int_equal(t.variant, VARIANT_DUNGEON);
    if (t.enemies[0] != bat || t.enemies[1] != scorpion || t.enemies[2] != spider)
        fail_msg("\"%s\" -> g=[%d,%d,%d], want [%d,%d,%d]", story, t.enemies[0], t.enemies[1], t.enemies[2], bat,
                 scorpion, spider);
    assert_int_equal(target_validate(&t, why, sizeof why), 0);
}

static void expect_keydoor(const char *story, int gate)
{
    target_t t;
    char why[300];
    int rc = story_extract_offline(story, &t, why, sizeof why);
    if (rc != STORY_OK) fail_msg("refused \"%s\": %s", story, why);
    assert_int_equal(t.kind, TARGET_KEYDOOR);
    assert_int_equal(t.variant, VARIANT_TREASURE);
    assert_int_equal(t.gate, gate);
}

/* Refused, and the one-line reason contains `word`. */
static void expect_refused(const char *story, const char *word)
{
    target_t t;
    char why[300] = "";
    int rc = story_extract_offline(story, &t, why, sizeof why);
    if (rc != STORY_REFUSED) fail_msg("accepted \"%s\" as: %s", story ? story : "(null)", why);
    assert_non_null(strstr(why, word));
    assert_null(strchr(why, '\n'));
}

static void story_paper_scenarios(void **state)
{
    (void)state;
    for (int s = 1; s <= 4; s++) {
        target_t want, got;
        char why[300];
        assert_int_equal(target_scenario(s, &want), 0);
        assert_int_equal(story_extract_offline(story_scenario_text(s), &got, why, sizeof why), STORY_OK);
        if (!target_equal(&want, &got)) fail_msg("scenario %d read as: %s", s, why);
    }
    expect_encounter(story_scenario_text(1), 1, 0, 0);
    expect_encounter(story_scenario_text(2), 1, 1, 0);
    expect_keydoor(story_scenario_text(3), TILE_KEY);
    expect_keydoor(story_scenario_text(4), TILE_BAT);
    target_t t;
    assert_int_equal(target_scenario(0, &t), -1);
    assert_int_equal(target_scenario(5, &t), -1);
    assert_null(story_scenario_text(5));
}

/* The evaluator's scenario built from a target matches its built-in ones. */
static void story_target_to_scenario(void **state)
{
    (void)state;
    for (int s = 1; s <= 4; s++) {
        target_t t;
        eval_scenario_t got;
        const eval_scenario_t *want = eval_scenario(s);
        assert_non_null(want);
        target_scenario(s, &t);
        target_to_scenario(&t, story_scenario_text(s), &got);
        assert_int_equal(got.kind, want->kind);
        assert_int_equal(got.variant, want->variant);
        assert_int_equal(got.gate, want->gate);
        for (int e = 0; e < 3; e++) assert_int_equal(got.enemies[e], want->enemies[e]);
        assert_string_equal(got.story, want->story); /* the same verbatim text */
        assert_non_null(got.flow);
    }
}

static void story_custom_accepted(void **state)
{
    (void)state;
    expect_encounter("The player must sneak past a spider to get the key and reach the door", 0, 0, 1);
    expect_encounter("The player should meet a bat and a scorpion before taking the key to the exit.", 1, 1, 0);
    expect_encounter("On the way to the key the hero faces SPIDERS, then leaves through the door.", 0, 0, 1);
    expect_encounter("Get the key while avoiding the bat, but the scorpion must be met.", 0, 1, 0);
    expect_encounter("The spider must be avoided. The player meets the bat near the key.", 1, 0, 0);
    expect_encounter("Meet every monster except the spider on the way to the door.", 1, 1, 0);
    expect_encounter("The player encounters all three monsters before escaping through the door.", 1, 1, 1);
    expect_encounter("The player meets two monsters, a bat and a spider, then takes the key.", 1, 0, 1);
    expect_encounter("The key is guarded by a scorpion; take it and leave through the door.", 0, 1, 0);
    expect_encounter("The player must not meet a bat or a spider on the way to the key.", 0, 0, 0);
    expect_encounter("Neither the bat nor the scorpion may be met; the spider waits by the door.", 0, 0, 1);
    /* Decided: "no monster at all" is measurable (g = [0,0,0]). */
    expect_encounter("The player must not meet any monster on the way to the key and the door.", 0, 0, 0);
    expect_encounter("Get the key and escape through the door.", 0, 0, 0);
    expect_encounter("the player\xe2\x80\x99s path runs past the Bat's cave to the key", 1, 0, 0);
    expect_keydoor("The player finds the key, unlocks the door and takes the treasure.", TILE_KEY);
    expect_keydoor("A bat carries the key; defeat it to open the door to the treasure chest.", TILE_BAT);
    expect_keydoor("The key is held by a bat. Beat it, open the door, grab the treasure.", TILE_BAT);
    expect_keydoor("Defeat the bat to get into the treasure room.", TILE_BAT);
}

static void story_refused(void **state)
{
    (void)state;
    expect_refused("make a beautiful level", "beautiful");
    expect_refused("The player needs two keys to open the door", "two keys");
    expect_refused("The player meets 3 bats before the key", "3 bats");
    expect_refused("A dragon guards the door", "dragon");
    expect_refused("Avoid the bat but meet the bat on the way to the key", "both to meet and to avoid the BAT");
    expect_refused("A scorpion guards the key to the treasure room", "SCORPION");
    expect_refused("The spider holds the key to the door of the treasure room", "SPIDER");
    expect_refused("Meet a bat, then take the key and open the door to the treasure", "one gate");
    expect_refused("Avoid the spider, take the key and open the door to the treasure", "avoid");
    expect_refused("The player must meet a bat or a spider before the door", "choice");
    expect_refused("The player must encounter one of the monsters: BAT, SPIDER.", "choice");
    expect_refused("The player meets a monster before the key", "without naming");
    expect_refused("The player meets two monsters before the key", "without naming");
    expect_refused("The player meets three monsters, a bat and a spider", "3 monsters but names 2");
    expect_refused("Find the treasure", "what opens the door");
    expect_refused("The player walks around happily.", "nothing");
    expect_refused("Cross the lava to reach the key", "lava");
    expect_refused("Get the key and reach the door quickly.", "quickly");
    expect_refused("", "empty");
    expect_refused("  ...  !!! ", "empty");
    expect_refused(NULL, "no story");
    /* Very long and binary input: an answer, never a crash. */
    char *big = malloc(STORY_MAX_LEN + 100);
    memset(big, 'a', STORY_MAX_LEN + 99);
    big[STORY_MAX_LEN + 99] = 0;
    expect_refused(big, "characters long");
    for (int i = 0; i < STORY_MAX_LEN; i++) big[i] = (char)(1 + (i * 37) % 255);
    big[STORY_MAX_LEN] = 0;
    target_t t;
    char why[300];
    int rc = story_extract_offline(big, &t, why, sizeof why);
    assert_true(rc == STORY_OK || rc == STORY_REFUSED);
    free(big);
}

/* Word salads from the extractor's own vocabulary: every answer is a valid
 * target or a one-line refusal, and the same text gives the same answer. */
static void story_word_salad(void **state)
{
    (void)state;
    static const char *const words[] = {
        "the", "player", "must", "not", "meet", "avoid", "bat", "bats", "scorpion", "spider", "monster", "every",
        "key", "door", "treasure", "holds", "guards", "held", "by", "or", "one", "of", "two", "three", "but",
        "be", "is", "without", "except", "from", "away", "sneak", "past", "neither", "nor", ",", ".", ":", ";",
        "dragon", "quickly", "it", "and", "then", "all", "monsters", "either", "defeat", "chest", "no",
        "20 steps", "30", "beyond", "exactly", "钥匙", "门", "玩家", "步", "之后", "敌人", "不", "三个", "，"};
    const int nw = (int)(sizeof words / sizeof words[0]);
    unsigned x = 12345;
    int accepted = 0, refused = 0;
    for (int i = 0; i < 3000; i++) {
        char story[400] = "";
        int n = 1 + (int)((x >> 8) % 24);
        for (int k = 0; k < n; k++) {
            x = x * 1103515245u + 12345u;
            strcat(story, words[(x >> 16) % (unsigned)nw]);
            strcat(story, " ");
        }
        target_t a, b;
        char ra[300] = "", rb[300] = "";
        int rc = story_extract_offline(story, &a, ra, sizeof ra);
        assert_int_equal(story_extract_offline(story, &b, rb, sizeof rb), rc);
        assert_string_equal(ra, rb);
        assert_true(ra[0] != 0);
        assert_null(strchr(ra, '\n'));
        if (rc == STORY_OK) {
            accepted++;
            assert_int_equal(target_validate(&a, NULL, 0), 0);
            assert_true(target_equal(&a, &b));
        } else {
            assert_int_equal(rc, STORY_REFUSED);
            refused++;
        }
    }
    /* both answers occur: the salad exercises both paths */
    assert_true(accepted > 100);
    assert_true(refused > 100);
}

static void story_deterministic_reason(void **state)
{
    (void)state;
    target_t a, b;
    char ra[300], rb[300];
    const char *s = "The player must sneak past a spider to get the key and reach the door";
    assert_int_equal(story_extract_offline(s, &a, ra, sizeof ra), STORY_OK);
    assert_int_equal(story_extract_offline(s, &b, rb, sizeof rb), STORY_OK);
    assert_true(target_equal(&a, &b));
    assert_string_equal(ra, rb);
    assert_non_null(strstr(ra, "SPIDER"));
    /* A tiny reason buffer truncates, never overflows. */
    char small[8];
    memset(small, 'x', sizeof small);
    story_extract_offline("make a beautiful level", &a, small, sizeof small);
    assert_int_equal(small[7], 0);
}

static void story_json_round_trip(void **state)
{
    (void)state;
    char buf[200], why[300];
    for (int s = 1; s <= 4; s++) {
        target_t t, back;
        target_scenario(s, &t);
        assert_true(target_to_json(&t, buf, sizeof buf) > 0);
        assert_int_equal(target_from_json(buf, &back, why, sizeof why), STORY_OK);
        assert_true(target_equal(&t, &back));
    }
    target_t t;
    target_scenario(2, &t);
    target_to_json(&t, buf, sizeof buf);
    assert_string_equal(buf, "{\"kind\":\"encounter\",\"enemies\":[\"BAT\",\"SCORPION\"]}");
    target_scenario(4, &t);
    target_to_json(&t, buf, sizeof buf);
    assert_string_equal(buf, "{\"kind\":\"keydoor\",\"gate\":\"BAT\"}");
    assert_int_equal(target_to_json(&t, buf, 10), -1);
    /* Empty enemy set. */
    assert_int_equal(target_from_json("{\"kind\":\"encounter\",\"enemies\":[]}", &t, why, sizeof why), STORY_OK);
    assert_int_equal(t.enemies[0] + t.enemies[1] + t.enemies[2], 0);
}

static void story_json_model_replies(void **state)
{
    (void)state;
    target_t t;
    char why[300];
    /* Fenced, with prose around it and a reason field. */
    const char *reply = "Here is the target:\n```json\n{\"kind\": \"encounter\", \"enemies\": [\"spider\"], "
                        "\"reason\": \"the player sneaks past a spider {quietly}\"}\n```\nDone.";
    assert_int_equal(target_from_json(reply, &t, why, sizeof why), STORY_OK);
    assert_int_equal(t.kind, TARGET_ENCOUNTER);
    assert_int_equal(t.enemies[2], 1);
    assert_int_equal(t.enemies[0] + t.enemies[1], 0);
    /* Braces in the prose before the object. */
    assert_int_equal(target_from_json("Reading {the story}: {\"kind\":\"keydoor\",\"gate\":\"BAT\"}", &t, why,
                                      sizeof why),
                     STORY_OK);
    assert_int_equal(t.gate, TILE_BAT);
    assert_int_equal(target_from_json("{\"refuse\":\"a dragon is\\nnot a tile\"}", &t, why, sizeof why),
                     STORY_REFUSED);
    assert_string_equal(why, "a dragon is not a tile");
}

static void story_json_rejects_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *text, *word;
    } bad[] = {
        {"", "no JSON object"},
        {"no braces here", "no JSON object"},
        {"{\"kind\":\"encounter\",\"enemies\":[\"BAT\"]", "unterminated"},
        {"{\"kind\":\"encounter\" \"enemies\":[]}", "target JSON"},
        {"[1,2]", "no JSON object"},
        {"{\"kind\":\"dragon\"}", "unknown kind"},
        {"{\"kind\":3}", "kind"},
        {"{\"enemies\":[\"BAT\"]}", "kind"},
        {"{\"kind\":\"encounter\"}", "'enemies' array"},
        {"{\"kind\":\"encounter\",\"enemies\":\"BAT\"}", "'enemies' array"},
        {"{\"kind\":\"encounter\",\"enemies\":[\"DRAGON\"]}", "DRAGON"},
        {"{\"kind\":\"encounter\",\"enemies\":[\"KEY\"]}", "KEY"},
        {"{\"kind\":\"encounter\",\"enemies\":[4]}", "non-string"},
        {"{\"kind\":\"encounter\",\"enemies\":[\"BAT\",\"bat\"]}", "twice"},
        {"{\"kind\":\"encounter\",\"enemies\":[],\"gate\":\"KEY\"}", "no 'gate'"},
        {"{\"kind\":\"keydoor\"}", "gate"},
        {"{\"kind\":\"keydoor\",\"gate\":\"SPIDER\"}", "KEY or BAT"},
        {"{\"kind\":\"keydoor\",\"gate\":\"KEY\",\"enemies\":[]}", "no 'enemies'"},
        {"{\"kind\":\"keydoor\",\"gate\":\"KEY\",\"size\":16}", "unexpected field 'size'"},
        {"{\"kind\":\"keydoor\",\"kind\":\"encounter\",\"gate\":\"KEY\"}", "duplicate"},
        {"{\"refuse\":\"\"}", "non-empty"},
        {"{\"refuse\":5}", "non-empty"},
        {"{\"refuse\":\"x\",\"kind\":\"keydoor\"}", "beside 'refuse'"},
        {"{\"kind\":\"keydoor\",\"gate\":\"KEY\",\"reason\":7}", "'reason' must be a string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        target_t t;
        char why[300] = "";
        int rc = target_from_json(bad[i].text, &t, why, sizeof why);
        if (rc != STORY_INVALID) fail_msg("accepted %s", bad[i].text);
        if (!strstr(why, bad[i].word)) fail_msg("%s: reason '%s' lacks '%s'", bad[i].text, why, bad[i].word);
    }
    target_t t;
    char why[300];
    assert_int_equal(target_from_json(NULL, &t, why, sizeof why), STORY_INVALID);
    /* 60000 opening braces: refused quickly, not parsed 60000 times. */
    char *braces = malloc(60001);
    memset(braces, '{', 60000);
    braces[60000] = 0;
    assert_int_equal(target_from_json(braces, &t, why, sizeof why), STORY_INVALID);
    assert_non_null(strstr(why, "unterminated"));
    free(braces);
    /* An invalid struct is not serialised. */
    memset(&t, 0, sizeof t);
    t.kind = TARGET_KEYDOOR;
    t.gate = TILE_SPIDER;
    t.variant = VARIANT_TREASURE;
    char buf[100];
    assert_int_equal(target_to_json(&t, buf, sizeof buf), -1);
    assert_null(target_json(&t));
}


static void expect_length(const char *story, int length, int tolerance)
{
    target_t t;
    char why[300];
    int rc = story_extract_offline(story, &t, why, sizeof why);
    if (rc != STORY_OK) fail_msg("refused \"%s\": %s", story, why);
    assert_int_equal(t.kind, TARGET_PATHLENGTH);
    assert_int_equal(t.variant, VARIANT_DUNGEON);
    if (t.length != length || t.tolerance != tolerance)
        fail_msg("\"%s\" -> %d +- %d, want %d +- %d", story, t.length, t.tolerance, length, tolerance);
    assert_int_equal(target_validate(&t, why, sizeof why), 0);
}

static void story_path_length(void **state)
{
    (void)state;
    expect_length("The route from the player to the key and on to the door should be about 30 steps long.", 30, 3);
    expect_length("The player walks exactly 24 steps to the key and then to the door.", 24, 0);
    expect_length("Between 20 and 30 steps from the player past the key to the door.", 25, 5);
    expect_length("The path by the key to the door is 40 steps, give or take 6.", 40, 6);
    expect_length("A route of twenty steps to the key and the door.", 20, 2);
    /* vague, one-sided, combined or unmeasurable lengths are refused with the reason */
    expect_refused("A long and winding route from the player to the key and the door.", "number of steps");
    expect_refused("The path to the key and the door must be at least 40 steps.", "one side");
    expect_refused("The route to the key and the door is at most 40 steps.", "one side");
    expect_refused("The route to the key and the door is 30 steps and the player meets a bat.", "one target");
    expect_refused("The path from the player to the door is 30 steps.", "Player -> Key -> Door");
    expect_refused("The route to the key is 30 steps and the route to the door 12 steps.", "ambiguous");
    expect_refused("The route to the treasure behind the key and the door is 30 steps.", "one target");
    expect_refused("The route to the key and the door is 5000 steps.", "scores lengths");
}

static void story_path_length_json(void **state)
{
    (void)state;
    target_t t, back;
    char why[300], buf[256];
    assert_int_equal(target_from_json("{\"kind\":\"pathlength\",\"length\":30,\"tolerance\":3}", &t, why, sizeof why),
                     STORY_OK);
    assert_int_equal(t.kind, TARGET_PATHLENGTH);
    assert_int_equal(t.length, 30);
    assert_int_equal(t.tolerance, 3);
    assert_true(target_to_json(&t, buf, sizeof buf) > 0);
    assert_int_equal(target_from_json(buf, &back, why, sizeof why), STORY_OK);
    assert_true(target_equal(&t, &back));
    /* the tolerance defaults to 10% */
    assert_int_equal(target_from_json("{\"kind\":\"pathlength\",\"length\":45}", &t, why, sizeof why), STORY_OK);
    assert_int_equal(t.tolerance, 5);
    target_describe(&t, buf, sizeof buf);
    assert_non_null(strstr(buf, "45 steps long, give or take 5"));
    eval_scenario_t sc;
    target_to_scenario(&t, "s", &sc);
    assert_int_equal(sc.kind, EVAL_PATHLENGTH);
    assert_int_equal(sc.length, 45);
    assert_int_equal(sc.tolerance, 5);
    static const char *const bad[] = {
        "{\"kind\":\"pathlength\"}",
        "{\"kind\":\"pathlength\",\"length\":\"30\"}",
        "{\"kind\":\"pathlength\",\"length\":30,\"tolerance\":30}",
        "{\"kind\":\"pathlength\",\"length\":1}",
        "{\"kind\":\"pathlength\",\"length\":30,\"enemies\":[]}",
        "{\"kind\":\"encounter\",\"enemies\":[],\"length\":30}",
        NULL,
    };
    for (int i = 0; bad[i]; i++)
        if (target_from_json(bad[i], &t, why, sizeof why) != STORY_INVALID) fail_msg("accepted %s", bad[i]);
}


static void expect_legs(const char *story, int a, int b, int tolerance, int enemies)
{
    target_t t;
    char why[600];
    if (story_extract_offline(story, &t, why, sizeof why) != STORY_OK) fail_msg("refused \"%s\": %s", story, why);
    if (!target_is_two_leg(&t) || t.leg_key != a || t.leg_door != b || t.tolerance != tolerance ||
        t.enemy_count != enemies)
        fail_msg("\"%s\" -> %s", story, why);
    assert_int_equal(target_validate(&t, why, sizeof why), 0);
    assert_int_equal(story_check_target(story, &t, why, sizeof why), 0);
}

/* Refused under category cat, and the reason names word. */
static void expect_category(const char *story, const char *cat, const char *word)
{
    target_t t;
    char why[600] = "";
    if (story_extract_offline(story, &t, why, sizeof why) != STORY_REFUSED) fail_msg("accepted \"%s\": %s", story, why);
    if (!story_refusal_category(why) || strcmp(story_refusal_category(why), cat) || !strstr(why, word))
        fail_msg("\"%s\": '%s', want %s with '%s'", story, why, cat, word);
}

static void story_two_legs(void **state)
{
    (void)state;
    expect_legs("the key about 20 steps from the player and the door 30 beyond", 20, 30, 2, 0);
    expect_legs("key 20 steps from the start, door 30 steps after the key, exactly", 20, 30, 0, 0);
    expect_legs("player to key 15 steps, key to door 25 steps", 15, 25, 2, 0);
    expect_legs("From the player to the key, 20 steps; from the key to the door, 30 steps.", 20, 30, 2, 0);
    expect_legs("The key lies 16 steps from the player, then 20 more steps to the door, give or take 1", 16, 20, 1, 0);
    /* the total and one leg give the other */
    expect_legs("player to key 15 steps and 40 steps in total", 15, 25, 2, 0);
    expect_legs("three enemies; the key 20 steps from the player, the door 30 steps after the key", 20, 30, 2, 3);
    expect_legs("one enemy, the key 20 steps from the player and the door 30 beyond", 20, 30, 2, 1);
    expect_legs("钥匙距离玩家20步，门在钥匙之后30步", 20, 30, 2, 0);
    expect_legs("钥匙距离玩家二十步，门在钥匙之后三十步，三个敌人", 20, 30, 2, 3);
    expect_legs("钥匙 about 20 steps from the player，门 30 steps after the key", 20, 30, 2, 0);
    expect_length("路线大约30步", 30, 3);
    expect_length("the route about 30 steps", 30, 3);
    expect_length("The route to the key and the door is 30 steps exactly.", 30, 0);

    static const struct {
        const char *story, *category, *word;
    } refused[] = {
        {"从玩家到钥匙大约20步", "incomplete", "player -> key"},
        {"the door 30 steps after the key", "incomplete", "key -> door"},
        {"the key 20 steps from the player and the door 30 beyond, and a spider", "incomplete", "SPIDER"},
        {"key 20 steps from the player, key 25 steps from the start, door 30 after the key", "contradictory", "two lengths"},
        {"player to key 15 steps, key to door 25 steps, 50 steps in total", "contradictory", "add up"},
        {"two enemies, and four enemies; the route about 30 steps", "contradictory", "2 monsters and for 4"},
        {"the key exactly 20 steps from the player and the door 30 beyond", "ambiguous", "one leg only"},
        {"the key 20 steps from the player and 30 steps", "ambiguous", "which part"},
        {"the key a few steps from the player and the door 30 beyond", "ambiguous", "few"},
        {"make the route 30 steps, whatever is convenient", "ambiguous", "whatever"},
        {"The route to the key and the door should be as long as it feels natural", "ambiguous", "feels"},
        {"enemies on the way, the route about 30 steps", "ambiguous", "how many"},
        {"no enemies, the route about 30 steps", "unsupported", "forbid"},
        {"a second door after the key, 30 steps", "unsupported", "second door"},
        {"a 20x20 map, the route about 30 steps", "unsupported", "20x20"},
        {"a 32 by 32 level, the route about 30 steps", "unsupported", "32x32"},
        {"map size 20, the route about 30 steps", "unsupported", "20x20"},
        {"the route to the key and the door is 30 steps or more", "unsupported", "one side"},
        {"key 20 steps from the player, door 30 after the key, give or take 2, give or take 3 steps", "unsupported", "steps"},
        {"钥匙离玩家20步，门在钥匙之后30步，不要太远", "unsupported", "太"},
        {"钥匙离玩家几步", "ambiguous", "few"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        expect_category(refused[i].story, refused[i].category, refused[i].word);
    /* the engine's own size is no refusal */
    expect_legs("on a 16x16 map, the key 20 steps from the player and the door 30 beyond", 20, 30, 2, 0);
}

PCG_TESTS(story, cmocka_unit_test(story_paper_scenarios), cmocka_unit_test(story_path_length), cmocka_unit_test(story_two_legs),
          cmocka_unit_test(story_path_length_json), cmocka_unit_test(story_target_to_scenario), cmocka_unit_test(story_custom_accepted),
          cmocka_unit_test(story_refused), cmocka_unit_test(story_word_salad), cmocka_unit_test(story_deterministic_reason),
          cmocka_unit_test(story_json_round_trip), cmocka_unit_test(story_json_model_replies),
          cmocka_unit_test(story_json_rejects_malformed))
