/* The reward-design loop: opening the run, the search over thought nodes,
 * its end.  See run.h; the parts are in loop_internal.h. */
#include "run.h"
#include "loop_internal.h"
#include "graph.h"
#include "prompts.h"
#include "util.h"
#include "worker.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A search in which the model wrote no reward at all for this many nodes
 * in a row ends: more of the same prompts will not change that. */
#define RUN_HOPELESS_NODES 2

/* One line on stderr (it matters even with --quiet) and in run.log. */
void run_warn(run_state *R, const char *fmt, ...)
{
    char line[3000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    die_msg("%s", line);
    if (R->log) {
        fprintf(R->log, "[%8.1fs] %s\n", now_seconds() - R->t_start, line);
        fflush(R->log);
    }
}

/* The state of a new run of c: the key stays in this process, the prompts
 * are there, the model client counts into the state.  0, or 1 (printed). */
static int start_state(run_state *R, run_config *c)
{
    memset(R, 0, sizeof *R);
    R->c = c;
    /* this process is the only one that holds the key */
    worker_env_deny(c->llm.api_key_env);
    worker_env_deny(LLM_DEFAULT_KEY_ENV);
    R->t_start = now_seconds();
    char err[1024];
    if (prompts_check(err, sizeof err)) {
        die_msg("run: %s", err);
        return 1;
    }
    c->llm.usage = &R->usage;
    c->llm.server = &R->server;
    c->llm.progress = !c->quiet;
    return 0;
}

/* Preflight and cost (a new run's before its directory is made, a resumed
 * one's once its stored settings are read), config.json, run.log and the
 * target.  The cost line goes into cost[] for run.log.  0, or the exit code
 * (printed). */
static int open_run(run_state *R, char *cost, int cost_len)
{
    run_config *c = R->c;
    char path[1200], err[1024];
    int rc = 0;
    if (!c->resume && ((rc = preflight(R)) || (rc = say_cost(c, cost, cost_len)))) return rc;
    if (open_config(c)) return 1;
    if (c->resume && ((rc = preflight(R)) || (rc = say_cost(c, cost, cost_len)))) return rc;
    snprintf(path, sizeof path, "%s/run.log", c->out);
    if (!(R->log = open_append(path, err, sizeof err))) {
        die_msg("run: %s", err);
        return 1;
    }
    rc = setup_target(R);
    if (rc) {
        if (R->log) fclose(R->log);
        return rc;
    }
    return 0;
}

/* The run's settings, on the terminal and in run.log. */
static void say_settings(run_state *R, const char *cost)
{
    run_config *c = R->c;
    int iterations = run_node_count(c);
    if (R->log && cost[0]) fprintf(R->log, "[%8.1fs] %s\n", now_seconds() - R->t_start, cost);
    run_say(R, "%s run %s: %s", c->resume ? "resuming" : "starting", c->out, R->flow);
    if (!c->offline) say_context(R);
    int aligned = c->ablation == ABL_SA || c->ablation == ABL_FULL ? c->align : 0;
    if (c->offline)
        run_say(R, "author: rule-based offline author (baseline, not a language model)");
    else
        run_say(R, "author: model %s at %s", c->llm.model, c->llm.base_url);
    run_say(R, "search %s, %d iteration%s, align %d, breadth %d, ablation %s, feedback %s", graph_pe_name(c->pe),
            iterations, iterations == 1 ? "" : "s", aligned, c->breadth, run_ablation_name(c->ablation),
            run_feedback_name(c->feedback));
    char stop[48] = "none";
    if (c->target_fitness >= 0) snprintf(stop, sizeof stop, "%.3f", c->target_fitness);
    run_say(R, "accept %s (%s), target fitness %s", run_accept_name(c->accept), run_accept_rule(c->pe, c->accept),
            stop);
    if (c->profile[0]) run_say(R, "profile --%s: %s (flags given with it override them)", c->profile, run_profile_flags(c->profile));
    if (!c->offline)
        run_say(R, "prompts %s, reward API %s, GoT references %s", run_prompts_name(c->prompts),
                run_reward_api_name(c->reward_api), run_got_refs_name(c->got_refs));
}

/* The thought graph: a resumed run's from graph_path, with its finished
 * nodes checked and its usage counts, or a new one.  0, or 1 (printed;
 * run.log closed). */
static int open_graph(run_state *R, const char *graph_path)
{
    run_config *c = R->c;
    char err[1024];
    if (c->resume && path_present(graph_path)) {
        if (graph_load(graph_path, &R->g, err, sizeof err)) {
            die_msg("run: --resume: %s", err);
            fclose(R->log);
            return 1;
        }
        if (check_finished_nodes(R, graph_path)) {
            fclose(R->log);
            graph_free(&R->g);
            return 1;
        }
        load_usage(R);
    } else if (graph_init(&R->g, c->pe, c->pe == PE_COT ? 1 : c->breadth)) {
        die_msg("run: invalid search settings");
        fclose(R->log);
        return 1;
    } else
        R->g.ref_rule = c->got_refs;
    R->g.accept = c->accept; /* config.json's, on a resume too */
    return 0;
}

/* Whether the search ends before another node: the model wrote no reward
 * in too many nodes in a row, or a node reached the target fitness. */
static int search_done(run_state *R, int hopeless)
{
    run_config *c = R->c;
    int best = graph_best(&R->g);
    if (!c->offline && hopeless >= RUN_HOPELESS_NODES) {
        run_warn(R, "run: stopping: the model wrote no reward function in %d nodes in a row (%d calls); its "
                    "replies are in %s/nodes/*/llm/",
                 hopeless, R->tally.calls, c->out);
        /* the search is over, for `grid` too; --resume goes on with it */
        char path[1200];
        snprintf(path, sizeof path, "%s/stopped.txt", c->out);
        run_write_text(path, "the model wrote no reward function in two nodes in a row\n");
        return 1;
    }
    if (c->target_fitness >= 0 && best >= 0 && R->g.nodes[best].fitness >= c->target_fitness) {
        run_say(R, "target fitness %.3f reached by node %d: stopping", c->target_fitness, best);
        return 1;
    }
    return 0;
}

/* The node to run next: the interrupted one, or a new child of the parent
 * the graph selects, with its references, saved in graph_path.  -1 when
 * the search has made all its nodes (or has no room for another). */
static int next_node(run_state *R, const char *graph_path)
{
    run_config *c = R->c;
    if (R->g.n > 0 && R->g.nodes[R->g.n - 1].status == NODE_PENDING) return R->g.n - 1; /* interrupted: continue it */
    if (R->g.n >= run_node_count(c)) return -1;
    int parent = graph_select_parent(&R->g);
    /* references are chosen before the node exists: "the previous
     * iteration" is the latest node so far */
    int refs[GRAPH_MAX_REFS], kinds[GRAPH_MAX_REFS], nr = 0;
    if (c->pe == PE_GOT && parent >= 0) nr = graph_references(&R->g, parent, c->got_best, c->got_worst, refs, kinds);
    int id = graph_add(&R->g, R->g.n + 1, parent);
    if (id < 0) {
        die_msg("run: thought graph full");
        return -1;
    }
    thought_node *nd = &R->g.nodes[id];
    nd->n_refs = nr;
    for (int k = 0; k < nr; k++) {
        nd->refs[k] = refs[k];
        nd->ref_kind[k] = kinds[k];
        nd->ref_fitness[k] = R->g.nodes[refs[k]].fitness;
    }
    graph_save(&R->g, graph_path); /* the parent choice survives a kill */
    return id;
}

/* The search: node after node until it is done.  0 when it ran to its end,
 * else the exit code (printed; run.log closed, the graph freed). */
static int search(run_state *R, const char *graph_path)
{
    run_config *c = R->c;
    int hopeless = 0; /* nodes in a row in which the model wrote no reward at all */
    char stopped[1200];
    snprintf(stopped, sizeof stopped, "%s/stopped.txt", c->out);
    path_unlink(stopped); /* a resumed search goes on */
    note_halt(c, NULL);
    int id;
    while (!search_done(R, hopeless) && (id = next_node(R, graph_path)) >= 0) {
        int held = R->tally.rewards_held;
        if (run_node(R, id) == RUN_FATAL) {
            if (R->halted[0]) note_halt(c, R->halted);
            save_usage(R);
            fclose(R->log);
            graph_free(&R->g);
            return R->halted[0] ? RUN_EXIT_SERVER : 1;
        }
        hopeless = R->g.nodes[id].status == NODE_FAILED && R->tally.rewards_held == held ? hopeless + 1 : 0;
        save_usage(R);
        if (graph_save(&R->g, graph_path)) {
            die_msg("run: cannot write %s", graph_path);
            fclose(R->log);
            graph_free(&R->g);
            return 1;
        }
    }
    return 0;
}

int run_main(run_config *c, int *looped)
{
    if (looped) *looped = 0;
    run_state R0, *R = &R0;
    if (start_state(R, c)) return 1;
    char cost[512] = "", path[1200];
    int rc = open_run(R, cost, sizeof cost);
    if (rc) return rc;
    say_settings(R, cost);
    snprintf(path, sizeof path, "%s/graph.json", c->out);
    if (open_graph(R, path)) return 1;
    if ((rc = search(R, path))) return rc;
    save_usage(R);
    int best = graph_best(&R->g);
    graph_free(&R->g);
    say_summary(R, best);
    fclose(R->log);
    R->log = NULL;
    if (looped) *looped = 1;
    /* a run that produced no reward has nothing to show: not a success */
    return best < 0 ? 1 : 0;
}
