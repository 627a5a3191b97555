/* The evaluator's results as the JSON document of `pcgrllm eval --json`
 * (docs/evaluator.md), shared by the command and the library's C ABI. */
#include "eval_json.h"
#include "levelio.h"

static const char *const enemy_names[EVAL_N_ENEMIES] = {"BAT", "SCORPION", "SPIDER"};

static json_t *opt_int(int v)
{
    return v >= 0 ? json_integer(v) : json_null();
}

json_t *eval_json_level(const eval_scenario_t *s, const char *file, const level_t *l, const eval_level_t *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "file", json_string(file));
    json_object_set_new(o, "score", json_real(m->score));
    json_object_set_new(o, "solutions", json_integer(m->solutions));
    json_object_set_new(o, "playable", json_boolean(m->playable));
    json_object_set_new(o, "missing", m->missing ? json_string(tile_name(m->missing)) : json_null());
    json_object_set_new(o, "height", json_integer(l->h));
    json_object_set_new(o, "width", json_integer(l->w));
    if (s->kind == EVAL_ENCOUNTER || s->kind == EVAL_PATHLENGTH) {
        if (s->kind == EVAL_ENCOUNTER) {
            json_t *met = json_object();
            for (int e = 0; e < EVAL_N_ENEMIES; e++)
                json_object_set_new(met, enemy_names[e], json_boolean(m->met[e]));
            json_object_set_new(o, "met", met);
        }
        json_object_set_new(o, "player_door", opt_int(m->player_door));
        json_object_set_new(o, "route", opt_int(m->route));
        json_object_set_new(o, "route_key", opt_int(m->route_key));
        json_object_set_new(o, "route_door", opt_int(m->route_door));
        if (s->kind == EVAL_PATHLENGTH) json_object_set_new(o, "perfect", json_boolean(m->perfect));
    } else {
        json_object_set_new(o, "player_gate", opt_int(m->player_gate));
        json_object_set_new(o, "gate_door", opt_int(m->gate_door));
        json_object_set_new(o, "player_treasure", opt_int(m->player_treasure));
        json_object_set_new(o, "player_door", opt_int(m->player_door));
    }
    json_t *counts = json_object();
    for (int t = 1; t < N_TILES; t++) json_object_set_new(counts, tile_name(t), json_integer(m->counts[t]));
    json_object_set_new(o, "counts", counts);
    json_object_set_new(o, "entropy", json_real(m->entropy));
    json_object_set_new(o, "wall_share", json_real(m->wall_share));
    json_object_set_new(o, "objectives_reachable", json_boolean(m->objectives_reachable));
    json_object_set_new(o, "aspao", m->objectives_reachable ? json_real(m->objective_path) : json_null());
    return o;
}

json_t *eval_json_doc(const eval_scenario_t *s, const char *const *files, const level_t *lv, const eval_level_t *per,
                      const eval_summary_t *sum)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "scenario", json_integer(s->number));
    json_object_set_new(doc, "fitness", json_real(sum->fitness));
    json_t *arr = json_array();
    for (int i = 0; i < sum->n; i++) json_array_append_new(arr, eval_json_level(s, files[i], &lv[i], &per[i]));
    json_object_set_new(doc, "levels", arr);
    json_object_set_new(doc, "n", json_integer(sum->n));
    json_object_set_new(doc, "diversity", json_real(sum->diversity));
    json_object_set_new(doc, "diversity_share", json_real(sum->diversity_share));
    json_object_set_new(doc, "n_playable", json_integer(sum->n_playable));
    json_object_set_new(doc, "playable_share", json_real(sum->playable_share));
    json_object_set_new(doc, "playable_wall_share",
                        sum->n_playable ? json_real(sum->playable_wall_share) : json_null());
    json_object_set_new(doc, "mean_solutions", json_real(sum->mean_solutions));
    json_object_set_new(doc, "mean_entropy", json_real(sum->mean_entropy));
    json_object_set_new(doc, "n_valid", json_integer(sum->n_valid));
    json_object_set_new(doc, "aspao", sum->n_valid ? json_real(sum->aspao) : json_null());
    json_object_set_new(doc, "utr", json_real(sum->utr));
    json_object_set_new(doc, "vutr", json_real(sum->vutr));
    json_t *target = json_object();
    if (s->kind == EVAL_ENCOUNTER) {
        json_object_set_new(target, "kind", json_string("encounter"));
        json_t *g = json_array();
        for (int e = 0; e < EVAL_N_ENEMIES; e++) json_array_append_new(g, json_integer(s->enemies[e]));
        json_object_set_new(target, "enemies", g);
    } else if (s->kind == EVAL_PATHLENGTH) {
        json_object_set_new(target, "kind", json_string("pathlength"));
        json_object_set_new(target, "length", json_integer(s->length));
        if (s->leg_key > 0) {
            json_object_set_new(target, "player_key", json_integer(s->leg_key));
            json_object_set_new(target, "key_door", json_integer(s->leg_door));
        }
        json_object_set_new(target, "tolerance", json_integer(s->tolerance));
        if (s->enemy_count) json_object_set_new(target, "enemy_count", json_integer(s->enemy_count));
    } else {
        json_object_set_new(target, "kind", json_string("key-door"));
        json_object_set_new(target, "gate", json_string(tile_name(s->gate)));
    }
    json_object_set_new(doc, "target", target);
    return doc;
}

