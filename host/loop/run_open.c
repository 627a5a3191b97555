/* Opening a run: its config.json (new, or read back for --resume), the
 * model server it may use, the target from the story, what its training
 * will cost.  See loop_internal.h. */
#include "loop_internal.h"
#include "author.h"
#include "backend.h"
#include "dirguard.h"
#include "ppo.h"
#include "prompts.h"
#include "train_estimate.h"
#include "trust.h"
#include "util.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int setup_target(run_state *R)
{
    run_config *c = R->c;
    char path[1200], reason[1024];
    snprintf(path, sizeof path, "%s/target.json", c->out);
    if (c->scenario >= 1) {
        target_scenario(c->scenario, &R->target);
        R->esc = *eval_scenario(c->scenario);
    } else {
        int rc;
        char *stored = run_read_text(path);
        if (stored) {
            rc = target_from_json(stored, &R->target, reason, sizeof reason) == STORY_OK ? 0 : -1;
            free(stored);
        } else
            rc = au_target(R, c->out, &R->target, reason, sizeof reason);
        if (rc == 3) {
            fprintf(stderr, "pcgrllm: story refused: %s\n", reason);
            if (R->log) fprintf(R->log, "story refused: %s\n", reason);
            return 3;
        }
        if (rc) {
            die_msg("run: target extraction failed: %s", reason);
            return R->halted[0] ? RUN_EXIT_SERVER : 1;
        }
        target_to_scenario(&R->target, c->story, &R->esc);
    }
    target_describe(&R->target, R->flow, sizeof R->flow);
    if (c->evaluator_rules) {
        /* only on request: the paper's prompts do not state the scoring rules */
        char *t = prompt_load(run_prompts_name(c->prompts),
                              R->esc.kind == EVAL_KEYDOOR ? "evaluator_rules_keydoor" : "evaluator_rules_encounter",
                              reason, sizeof reason);
        if (!t) return die_msg("run: %s", reason), 1;
        snprintf(R->evaluator_rules, sizeof R->evaluator_rules, "%s", t);
        free(t);
    }
    R->esc.flow = R->flow;
    char js[512];
    if (target_to_json(&R->target, js, sizeof js) > 0 && !path_present(path)) {
        size_t n = strlen(js);
        js[n] = '\n';
        js[n + 1] = 0;
        run_write_text(path, js);
    }
    return 0;
}

/* The run keeps its own copy of the --init-reward file, so that a resume
 * or an audit does not depend on the original.  0, or 1 (printed). */
static int copy_init_reward(const run_config *c)
{
    char path[1200], err[1400];
    long len;
    char *code = read_file(c->init_reward, 64L << 10, &len, err, sizeof err);
    if (!code) return die_msg("run: --init-reward: %s", err), 1;
    snprintf(path, sizeof path, "%s/init_reward.c", c->out);
    int rc = write_file_atomic_msg(path, code, (size_t)len, err, sizeof err);
    free(code);
    if (rc) die_msg("run: %s", err);
    return rc ? 1 : 0;
}

/* --resume: where the stored run's requests go.  A server named now
 * (--base-url) wins; a stored one other than the default is used only
 * when confirmed on a terminal (host/llm/trust.h).  1 to go on, 0 refused
 * (printed). */
static int resume_server(const run_config *given, run_config *stored, const char *config_path)
{
    if (given->base_url_given) {
        if (!trust_same_server(stored->llm.base_url, given->llm.base_url))
            printf("run: %s named the model server %s; requests go to %s as --base-url says\n", config_path,
                   stored->llm.base_url, given->llm.base_url);
        snprintf(stored->llm.base_url, sizeof stored->llm.base_url, "%s", given->llm.base_url);
        return 1;
    }
    if (trust_default_server(stored->llm.base_url)) return 1;
    char how[700];
    snprintf(how, sizeof how, "resume with --base-url %.600s", stored->llm.base_url);
    return trust_stored_server("run", config_path, stored->llm.base_url, stored->llm.model, how);
}

/* --resume with --llm or --model: they name the author the run must have
 * (a grid's cell is the grid's), so a stored one that differs is refused.
 * 1 to go on, 0 refused (printed). */
static int resume_author(const run_config *given, const run_config *stored, const char *config_path)
{
    const char *had = stored->offline ? "offline" : "openai", *named = given->offline ? "offline" : "openai";
    if (given->llm_given && given->offline != stored->offline)
        return die_msg("run: --resume: %s names the %s author; --llm %s differs (a run keeps its author: start a new "
                       "one, or move this one away)",
                       config_path, had, named),
               0;
    if (given->model_given && !stored->offline && strcmp(given->llm.model, stored->llm.model))
        return die_msg("run: --resume: %s names the model %s; --model %s differs (a run keeps its author: start a new "
                       "one, or move this one away)",
                       config_path, stored->llm.model, given->llm.model),
               0;
    return 1;
}

/* config.json: read back for --resume (the stored settings win, but for
 * the run directory, --quiet, the key's variable, which only the command
 * line gives, and the server: resume_server), or written for a new run.
 * 0, or 1 (printed). */
int open_config(run_config *c)
{
    char path[1200], err[1024];
    snprintf(path, sizeof path, "%s/config.json", c->out);
    if (c->resume) {
        struct stat st;
        if (stat(c->out, &st) != 0 || !S_ISDIR(st.st_mode) || !path_present(path)) {
            die_msg("run: --resume: %s holds no run (no readable config.json)", c->out);
            return 1;
        }
        /* a run directory may come from someone else: nothing in it is
         * followed out of it (host/sys/dirguard.h) */
        if (dirguard_add(c->out, "run directory", 1, err, sizeof err)) {
            die_msg("run: --resume: %s", err);
            return 1;
        }
        json_t *j = read_json_file(path, 1L << 20, err, sizeof err);
        if (!j) {
            die_msg("run: --resume: %s", err);
            return 1;
        }
        run_config stored = *c;
        int rc = run_config_from_json(j, &stored, err, sizeof err);
        json_decref(j);
        if (rc) {
            die_msg("run: --resume: %s", err);
            return 1;
        }
        snprintf(stored.out, sizeof stored.out, "%s", c->out);
        if (!resume_author(c, &stored, path) || (!stored.offline && !resume_server(c, &stored, path))) return 1;
        stored.resume = 1;
        stored.quiet = c->quiet;
        *c = stored;
    } else {
        if (c->scenario >= 1) /* the prompts quote the paper's story */
            snprintf(c->story, sizeof c->story, "%s", story_scenario_text(c->scenario));
        if (make_dirs_msg(c->out, err, sizeof err) || dirguard_add(c->out, "run directory", 0, err, sizeof err)) {
            die_msg("run: %s", err);
            return 1;
        }
        if (path_present(path)) {
            die_msg("run: %s already holds a run; continue it with --resume or choose another --out", c->out);
            return 1;
        }
        if (run_write_json(path, run_config_to_json(c))) {
            die_msg("run: cannot write %s", path);
            return 1;
        }
        if (c->init_reward[0] && copy_init_reward(c)) return 1;
    }
    return 0;
}

/* The backend (probed in a child: this process forks and must not hold a
 * CUDA context) and, on the CPU, the projected wall time of the run's
 * training from a short warm-up; a run of many hours goes on only when
 * asked.  The line goes into line[] for run.log.  0, or 2 (refused). */
int say_cost(run_config *c, char *line, int len)
{
    backend_probe_result pr;
    char err[700];
    if (backend_probe(c->backend, &pr, err, sizeof err)) {
        die_msg("run: %s", err);
        return 2;
    }
    if (pr.backend == BACKEND_CUDA) {
        snprintf(c->backend, sizeof c->backend, "cuda");
        snprintf(line, (size_t)len, "backend: cuda, GPU %d (%s); the training time shows after each node's first "
                 "update", pr.gpu, pr.info.name);
        if (!c->quiet) printf("%s\n", line);
        return 0;
    }
    snprintf(c->backend, sizeof c->backend, "cpu");
    ppo_config cfg;
    ppo_config_default(&cfg);
    cfg.n_envs = c->envs;
    snprintf(cfg.preset, sizeof cfg.preset, "%s", c->preset);
    /* a reward of about 10 us a call, as the human rewards take */
    double sps = train_estimate_sps(&cfg, 10.0);
    int nodes = run_node_count(c);
    double seconds = sps > 0 ? (double)nodes * (double)c->steps / sps : -1;
    char d[64];
    train_format_duration(seconds, d, sizeof d);
    snprintf(line, (size_t)len,
             "backend: cpu; projected: about %s of training for %d node%s of %lld steps (%s preset, %d envs, %.0f "
             "steps/s in a short warm-up; model calls not counted)",
             d, nodes, nodes == 1 ? "" : "s", (long long)c->steps, c->preset, c->envs, sps);
    if (!c->quiet) printf("%s\n", line);
    if (seconds <= TRAIN_ASK_ABOVE_S || c->yes) return 0;
    return train_confirm_long_job("run", seconds,
                                  "--quick shows the method working in minutes; fewer --steps, a smaller --preset, "
                                  "--envs or --iterations shorten it, and a GPU (--backend cuda) is far faster")
               ? 0
               : 2;
}

/* DIR/halted.txt: why the run stopped for its model server (the grid shows
 * it), or removed when the run goes on. */
void note_halt(const run_config *c, const char *why)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/halted.txt", c->out);
    if (!why) {
        path_unlink(path);
        return;
    }
    char line[1600];
    snprintf(line, sizeof line, "%s\n", why);
    run_write_text(path, line);
}

/* Before anything is spent: the model server answers (host/llm/llm.h), and a
 * new run's --out holds no run yet.  0, or an exit code (printed). */
int preflight(run_state *R)
{
    run_config *c = R->c;
    char path[1200], err[1400];
    snprintf(path, sizeof path, "%s/config.json", c->out);
    if (!c->resume && path_present(path))
        return die_msg("run: %s already holds a run; continue it with --resume or choose another --out", c->out), 1;
    if (c->offline || !llm_check_server(&c->llm, err, sizeof err)) return 0;
    die_msg("run: %s", err);
    if (c->resume) note_halt(c, err);
    return RUN_EXIT_SERVER;
}
