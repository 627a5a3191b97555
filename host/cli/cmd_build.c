/* pcgrllm build: a level for a target from the deterministic builder
 * (docs/harness.md, "The builder"). */
#include "build.h"
#include "commands.h"
#include "levelio.h"
#include "story.h"
#include "target.h"
#include "util.h"
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

static void build_usage(FILE *f)
{
    fprintf(f, "usage: pcgrllm build (--target JSON | --story TEXT) [--seed S] [--side N] --out LEVEL [--json]\n"
               "  Builds a level that meets the target from certified pieces (corridor runs, turns,\n"
               "  detours, alcoves, sealed cells) on the generator's map, verifies it with the\n"
               "  evaluator and writes it to LEVEL.\n"
               "  --target JSON  the target, as pcgrllm eval takes it, e.g.\n"
               "                 '{\"kind\":\"pathlength\",\"player_key\":20,\"key_door\":30,\"tolerance\":0,\"enemy_count\":3}'\n"
               "                 '{\"kind\":\"pathlength\",\"length\":60,\"tolerance\":0}'\n"
               "                 '{\"kind\":\"encounter\",\"enemies\":[\"BAT\",\"SPIDER\"]}'  '{\"kind\":\"keydoor\",\"gate\":\"KEY\"}'\n"
               "  --story TEXT   a story, read into a target by the rule-based reader\n"
               "  --seed S       which corner the player starts in (S mod 4; S and S+2 share a diagonal)\n"
               "                 and where enemies go (default 0); the same inputs give the same level\n"
               "  --side N       map side, %d..%d (default %d)\n"
               "  --out LEVEL    the level file to write (atomically)\n"
               "  --json         print the level's evaluation as one JSON object\n"
               "Exit status: 0 built, 2 bad flags or target, 3 refused (infeasible or unsupported), 1 other errors.\n"
               "Pieces, certification and what is refused: docs/harness.md\n",
            BUILD_SIDE_MIN, PCG_MAX_SIDE, PCG_DEFAULT_SIDE);
}

static const char *yes_no(int v) { return v ? "yes" : "no"; }

static void print_summary(const target_t *t, const build_result_t *b, const char *out)
{
    char what[256];
    const eval_level_t *m = &b->eval;
    target_describe(t, what, sizeof what);
    printf("build: %s: ", what);
    if (t->kind == TARGET_KEYDOOR)
        printf("gate %d steps, gate -> door %d, treasure %d", m->player_gate, m->gate_door, m->player_treasure);
    else printf("legs %d + %d (route %d)", m->route_key, m->route_door, m->route);
    if (t->kind == TARGET_ENCOUNTER)
        printf(", met BAT %s, SCORPION %s, SPIDER %s", yes_no(m->met[0]), yes_no(m->met[1]), yes_no(m->met[2]));
    printf(", score %.3f, perfect %s -> %s\n", m->score, yes_no(b->perfect), out);
}

static json_t *opt_int(int v) { return v >= 0 ? json_integer(v) : json_null(); }

static int print_json(const target_t *t, const build_result_t *b, const char *out, uint64_t seed)
{
    const eval_level_t *m = &b->eval;
    json_t *o = json_object();
    json_object_set_new(o, "target", target_json(t));
    json_object_set_new(o, "out", json_string(out));
    json_object_set_new(o, "side", json_integer(b->side));
    json_object_set_new(o, "seed", json_integer((json_int_t)seed));
    json_object_set_new(o, "corner", json_integer(b->corner));
    json_object_set_new(o, "score", json_real(m->score));
    json_object_set_new(o, "route", opt_int(m->route));
    json_object_set_new(o, "route_key", opt_int(m->route_key));
    json_object_set_new(o, "route_door", opt_int(m->route_door));
    if (t->kind == TARGET_KEYDOOR) {
        json_object_set_new(o, "player_gate", opt_int(m->player_gate));
        json_object_set_new(o, "gate_door", opt_int(m->gate_door));
        json_object_set_new(o, "player_treasure", opt_int(m->player_treasure));
    }
    if (t->kind == TARGET_ENCOUNTER)
        json_object_set_new(o, "met", json_pack("{s:b, s:b, s:b}", "BAT", m->met[0], "SCORPION", m->met[1],
                                                "SPIDER", m->met[2]));
    json_object_set_new(o, "perfect", json_boolean(b->perfect));
    json_object_set_new(o, "pieces_certified", json_integer(b->pieces));
    int rc = json_dumpf(o, stdout, JSON_COMPACT) == 0 && putchar('\n') != EOF ? 0 : 1;
    json_decref(o);
    return rc;
}

/* The target of --target or --story; 0, or the exit status after the message. */
static int read_target(const char *json_text, const char *story, target_t *t)
{
    char why[512];
    if (story) {
        if (story_extract_offline(story, t, why, sizeof why) != STORY_OK)
            return die_msg("build: refused: %s", why), 3;
        return 0;
    }
    int rc = target_read_json(json_text, t, why, sizeof why);
    if (rc == STORY_REFUSED) return die_msg("build: refused: the target refuses: %s", why), 3;
    if (rc != STORY_OK) return die_msg("build: --target: %s", why), 2;
    return 0;
}

typedef struct {
    const char *target, *story, *out;
    uint64_t seed;
    long side;
    int json;
} build_flags_t;

/* 0, or the exit status after the message (or the help). */
static int parse_flags(int argc, char **argv, build_flags_t *f)
{
    static const struct option opts[] = {{"target", required_argument, 0, 't'}, {"story", required_argument, 0, 'y'},
                                         {"seed", required_argument, 0, 's'},   {"side", required_argument, 0, 'n'},
                                         {"out", required_argument, 0, 'o'},    {"json", no_argument, 0, 'j'},
                                         {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_full(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 't': f->target = optarg; break;
        case 'y': f->story = optarg; break;
        case 'o': f->out = optarg; break;
        case 'j': f->json = 1; break;
        case 's':
            if (parse_u64(optarg, &f->seed)) return die_msg("build: --seed must be a non-negative integer"), 2;
            break;
        case 'n':
            if (parse_int(optarg, BUILD_SIDE_MIN, PCG_MAX_SIDE, &f->side))
                return die_msg("build: --side must be an integer in %d..%d", BUILD_SIDE_MIN, PCG_MAX_SIDE), 2;
            break;
        case 'h': build_usage(stdout); return -1;
        default: return 2; /* getopt said which option, in one line */
        }
    }
    if (optind < argc) return die_msg("build: unexpected argument '%s' (pcgrllm build --help)", argv[optind]), 2;
    if (!f->target == !f->story)
        return die_msg("build: give exactly one of --target JSON and --story TEXT (pcgrllm build --help)"), 2;
    if (!f->out) return die_msg("build: --out LEVEL is required (pcgrllm build --help)"), 2;
    return 0;
}

int cmd_build(int argc, char **argv)
{
    build_flags_t f = {NULL, NULL, NULL, 0, PCG_DEFAULT_SIDE, 0};
    int rc = parse_flags(argc, argv, &f);
    if (rc) return rc < 0 ? 0 : rc;
    target_t t;
    if ((rc = read_target(f.target, f.story, &t))) return rc;
    char err[1024];
    if (check_output_path(f.out, err, sizeof err)) return die_msg("build: --out: %s", err), 1;
    static build_result_t b;
    rc = build_level(&t, (int)f.side, f.seed, &b, err, sizeof err);
    if (rc == BUILD_REFUSED) return die_msg("build: refused: %s", err), 3;
    if (rc != BUILD_OK) return die_msg("build: %s", err), 1;
    char comment[512], tj[256];
    if (target_to_json(&t, tj, sizeof tj) < 0) snprintf(tj, sizeof tj, "?");
    snprintf(comment, sizeof comment, "built by pcgrllm build for %s, seed %" PRIu64, tj, f.seed);
    if (level_write(f.out, &b.level, comment))
        return die_msg("build: %s", write_error()), 1;
    if (f.json) return print_json(&t, &b, f.out, f.seed);
    print_summary(&t, &b, f.out);
    return fflush(stdout) ? 1 : 0;
}
