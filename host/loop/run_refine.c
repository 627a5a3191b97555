/* A finished run's generators refined: see run_refine.h. */
#include "run_refine.h"
#include "loop_internal.h"
#include "backend.h"
#include "dirguard.h"
#include "ppo.h"
#include "train_estimate.h"
#include "util.h"
#include "target.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A story run's target.json: present and readable.  0, or -1 with one line. */
static int stored_target(const char *dir, char *err, int errlen)
{
    char path[1200], why[1024];
    long len;
    target_t t;
    snprintf(path, sizeof path, "%s/target.json", dir);
    char *text = read_file(path, 1L << 16, &len, why, sizeof why);
    int rc = text ? (target_from_json(text, &t, why, sizeof why) == STORY_OK ? 0 : -1) : -1;
    free(text);
    if (rc && text) say_to(err, errlen, "%s: the story's target: %s", path, why);
    else if (rc) say_to(err, errlen, "the story's target: %s", why);
    return rc;
}

int run_refine_open(run_state *R, run_config *c, thought_graph *g, const char *dir, const llm_config *llm,
                    int offline, FILE *log, char *err, int errlen)
{
    char path[1200], why[1024];
    memset(R, 0, sizeof *R);
    memset(g, 0, sizeof *g);
    run_config_defaults(c);
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (dirguard_add(dir, "run directory", 1, why, sizeof why)) return say_to(err, errlen, "%s", why), -1;
    json_t *j = read_json_file(path, 1L << 20, why, sizeof why);
    if (!j) return say_to(err, errlen, "%s holds no finished run: %s", dir, why), -1;
    int rc = run_config_from_json(j, c, why, sizeof why);
    json_decref(j);
    if (rc) return say_to(err, errlen, "%s: %s", path, why), -1;
    snprintf(c->out, sizeof c->out, "%s", dir);
    c->resume = 1;
    c->quiet = 0; /* training's progress lines, as a run shows them */
    c->offline = offline;
    if (llm) c->llm = *llm;
    c->llm.usage = &R->usage;
    c->llm.server = &R->server;
    R->c = c;
    R->log = log;
    R->t_start = now_seconds();
    /* a story's target was extracted when the run began: read, never extracted again */
    if (c->scenario < 1 && stored_target(dir, err, errlen)) return -1;
    if (setup_target(R)) return say_to(err, errlen, "%s: the run's target cannot be read", dir), -1;
    snprintf(path, sizeof path, "%s/graph.json", dir);
    if (graph_load(path, g, why, sizeof why)) return say_to(err, errlen, "%s", why), -1;
    return 0;
}

int run_refine_candidate(run_state *R, int id, const char *cdir, level_set *ls, double *fitness, char *err,
                         int errlen)
{
    char reason[2048], dir[2048], path[2048];
    if (step_train(R, id, cdir, reason, sizeof reason) || step_generate_levels(R, cdir, reason, sizeof reason))
        return say_to(err, errlen, "%s", reason), -1;
    run_path(dir, sizeof dir, cdir, "levels");
    if (run_load_levels(dir, R->c->n_levels, ls, reason, sizeof reason))
        return say_to(err, errlen, "generated levels: %s", reason), -1;
    eval_levels(&R->esc, ls->levels, ls->n, ls->per, &ls->sum);
    *fitness = ls->sum.fitness;
    run_path(path, sizeof path, cdir, "eval.json");
    if (!path_present(path) && run_write_json(path, run_eval_json(R, ls))) return say_to(err, errlen, "%s", write_error()), -1;
    return 0;
}

int run_refine_cost(const run_state *R, int candidates, int yes)
{
    const run_config *c = R->c;
    backend_probe_result pr;
    char err[700];
    /* a device trains far faster than the estimate; a probe that fails is
     * left to training to report */
    if (candidates < 1 || yes || backend_probe(c->backend, &pr, err, sizeof err) || pr.backend == BACKEND_CUDA) return 0;
    ppo_config cfg;
    ppo_config_default(&cfg);
    cfg.n_envs = c->envs;
    snprintf(cfg.preset, sizeof cfg.preset, "%s", c->preset);
    double sps = train_estimate_sps(&cfg, 10.0); /* a reward of about 10 us a call */
    double seconds = sps > 0 ? (double)candidates * (double)c->steps / sps : -1;
    if (seconds <= TRAIN_ASK_ABOVE_S) return 0;
    char advice[300];
    snprintf(advice, sizeof advice, "%d candidate%s of %lld steps each, as the run's config.json trains its nodes",
             candidates, candidates == 1 ? "" : "s", (long long)c->steps);
    return train_confirm_long_job("prefer refine", seconds, advice) ? 0 : 1;
}
