/* `pcgrllm grid` after its flags: see grid_main.h. */
#include "grid_main.h"
#include "train_estimate.h"
#include "run.h"
#include "backend.h"
#include "grid_exec.h"
#include "grid_report.h"
#include "grid_rows.h"
#include "util.h"
#include "dirguard.h"
#include "llm.h"
#include "trust.h"
#include "cpus.h"
#include <limits.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* DIR/grid.json: the definition of a grid already there must be the one
 * given, or is used when none is given.  0, 1 (printed; exit 1). */
static int stored_definition(grid_opts *o, int *have_stored)
{
    char path[1200], err[512];
    snprintf(path, sizeof path, "%s/grid.json", o->out);
    *have_stored = path_present(path);
    if (!*have_stored) return 0;
    long len;
    char *text = read_file(path, 16L << 20, &len, err, sizeof err);
    grid_def stored;
    if (!text || grid_def_from_json(text, &stored, err, sizeof err)) {
        free(text);
        die_msg("grid: %s is unreadable: %s (move it away to start a new grid there)", path, err);
        return 1;
    }
    free(text);
    if (o->def_given && !grid_def_equal(&o->d, &stored)) {
        grid_def_free(&stored);
        die_msg("grid: %s holds a grid with another definition (see %s); give the same grid flags and run "
                "flags, or another --out",
                o->out, path);
        return 1;
    }
    snprintf(stored.api_key_env, sizeof stored.api_key_env, "%s", o->d.api_key_env);
    grid_def_free(&o->d);
    o->d = stored;
    /* what the stored run flags choose */
    grid_def tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.n_models = o->d.n_models; /* the axes decide which flags are the grid's */
    tmp.n_fb = o->d.n_fb, tmp.n_fbin = o->d.n_fbin, tmp.n_gb = o->d.n_gb, tmp.n_gw = o->d.n_gw;
    grid_set_run_flags(&tmp, o->d.n_run_flags, o->d.run_flags, &o->sets_threads, &o->sets_backend, err, sizeof err);
    grid_def_free(&tmp);
    return 0;
}

/* The servers other than the default that the definition's cells send
 * requests to (the models' and a run flag --base-url, read by `run`'s own
 * parser, abbreviations and all), and the key variable its run flags name
 * ("" when none).  0, or -1 with err (flags `run` refuses). */
typedef struct {
    int n;
    const char *url[GRID_MAX_MODELS + 1];
    char flag_url[512], key_env[128];
} grid_requests;

static int definition_requests(const grid_def *d, grid_requests *q, char *err, int errlen)
{
    memset(q, 0, sizeof *q);
    for (int i = 0; i < d->n_models; i++) {
        int seen = 0;
        for (int k = 0; k < q->n; k++) seen |= trust_same_server(q->url[k], d->models[i].base_url);
        if (!seen && !trust_default_server(d->models[i].base_url)) q->url[q->n++] = d->models[i].base_url;
    }
    run_config c;
    run_config_defaults(&c);
    char *argv[GRID_MAX_RUN_FLAGS + 2] = {"run"};
    if (run_config_from_flags(&c, grid_cell_run_flags(d, 0, argv + 1) + 1, argv, err, errlen)) return -1;
    /* "" sends no key at all: no variable is named */
    if (c.llm.api_key_env[0] && strcmp(c.llm.api_key_env, LLM_DEFAULT_KEY_ENV))
        snprintf(q->key_env, sizeof q->key_env, "%s", c.llm.api_key_env);
    snprintf(q->flag_url, sizeof q->flag_url, "%s", c.llm.base_url);
    if (c.base_url_given && !trust_default_server(q->flag_url)) {
        int seen = 0;
        for (int k = 0; k < q->n; k++) seen |= trust_same_server(q->url[k], q->flag_url);
        if (!seen) q->url[q->n++] = q->flag_url;
    }
    return 0;
}

/* Every model server the cells will ask answers, asked once before any
 * cell starts (the cells' own flags and key variable, as `run` reads
 * them).  0, or RUN_EXIT_SERVER (printed; with warn_only, a warning line
 * and 0: batch tasks ask again from their nodes). */
static int check_servers(const grid_opts *o, int warn_only)
{
    run_config c;
    run_config_defaults(&c);
    char *argv[GRID_MAX_RUN_FLAGS + 4] = {"run"}, err[1400];
    int n = 1 + grid_cell_run_flags(&o->d, 0, argv + 1);
    if (o->d.api_key_env[0]) argv[n++] = "--api-key-env", argv[n++] = (char *)o->d.api_key_env;
    if (run_config_from_flags(&c, n, argv, err, sizeof err)) return 0; /* the cells say what is wrong */
    const char *urls[GRID_MAX_MODELS + 1];
    int nu = 0;
    if (o->d.n_models == 0 && !c.offline) urls[nu++] = c.llm.base_url;
    for (int i = 0; i < o->d.n_models; i++) {
        const grid_model *m = &o->d.models[i];
        const char *url = m->base_url[0] ? m->base_url : c.llm.base_url;
        int seen = !strcmp(m->name, "offline");
        for (int k = 0; k < nu; k++) seen |= trust_same_server(urls[k], url);
        if (!seen) urls[nu++] = url;
    }
    for (int i = 0; i < nu; i++) {
        llm_config lc = c.llm;
        snprintf(lc.base_url, sizeof lc.base_url, "%s", urls[i]);
        if (!llm_check_server(&lc, err, sizeof err)) continue;
        if (warn_only) {
            fprintf(stderr, "pcgrllm: grid: warning: from this machine, %s; the batch tasks ask again from their "
                            "nodes\n", err);
            continue;
        }
        die_msg("grid: %s", err);
        return RUN_EXIT_SERVER;
    }
    return 0;
}

/* A key variable among the run flags: refused, whether given now or read
 * from grid.json (where it is never taken from).  0, or 1 (printed). */
static int refuse_key_flag(const grid_requests *q, const char *where)
{
    if (!q->key_env[0]) return 0;
    die_msg("grid: %s name the key variable %s (--api-key-env); the variable holding the key is never stored in a "
            "grid: give it to grid itself, before --: pcgrllm grid --api-key-env %s ...",
            where, q->key_env, q->key_env);
    return 1;
}

/* A stored definition the user did not give now: its servers are used only
 * when named with grid --base-url or confirmed on a terminal; the servers
 * the tasks of a batch array are told go into the Slurm options.  0 to go
 * on, 1 refused (printed). */
static int check_stored_requests(grid_opts *o, const grid_requests *q)
{
    char path[1200], how[1400];
    if (o->config) snprintf(path, sizeof path, "%s", o->config);
    else snprintf(path, sizeof path, "%s/grid.json", o->out);
    if (refuse_key_flag(q, "its run flags")) return 1;
    for (int i = 0; i < q->n; i++) {
        int named = 0;
        for (int k = 0; k < o->n_named; k++) named |= trust_same_server(o->named[k], q->url[i]);
        snprintf(how, sizeof how, "give grid --base-url %.600s", q->url[i]);
        if (!named && !trust_stored_server("grid", path, q->url[i], NULL, how)) return 1;
    }
    return 0;
}

/* The Human rewards: a grid keeps its own copy in DIR/human, read by its
 * cells; one made before that names a directory elsewhere, used only when
 * confirmed.  0, or 1 (printed). */
static int human_files(grid_opts *o, int stored_untrusted)
{
    grid_def *d = &o->d;
    char dir[1100], path[1200], err[1400];
    snprintf(dir, sizeof dir, "%s/human", o->out);
    d->human_files[0] = 0;
    if (!d->human[0]) return 0;
    if (path_present(dir)) {
        snprintf(d->human_files, sizeof d->human_files, "%s", dir);
        for (int i = 0; i < d->n_scen; i++) {
            snprintf(path, sizeof path, "%s/scenario%d.c", dir, d->scen[i]);
            int fd = open_regular(path, err, sizeof err);
            if (fd < 0) return die_msg("grid: %s", err), 1;
            close(fd);
        }
        return 0;
    }
    if (!stored_untrusted) return 0; /* a new grid: prepare_dir copies them */
    char q[2600];
    snprintf(q, sizeof q, "grid: %s/grid.json reads the Human rewards from %s, outside the grid directory. Read them?",
             o->out, d->human);
    if (ask_yes_no(q) > 0) return 0;
    die_msg("grid: %s/grid.json reads the Human rewards from %s, outside the grid directory; copy its scenarioN.c "
            "files into %s to go on",
            o->out, d->human, dir);
    return 1;
}

/* DIR/human: the grid's copy of the Human rewards (--human), so that the
 * directory holds what its cells read.  0, or 1 (printed). */
static int copy_human(grid_opts *o)
{
    grid_def *d = &o->d;
    char dir[1100], from[1200], to[1200], err[1400];
    snprintf(dir, sizeof dir, "%s/human", o->out);
    if (make_dirs_msg(dir, err, sizeof err)) return die_msg("grid: %s", err), 1;
    for (int i = 0; i < d->n_scen; i++) {
        long len;
        snprintf(from, sizeof from, "%s/scenario%d.c", d->human, d->scen[i]);
        snprintf(to, sizeof to, "%s/scenario%d.c", dir, d->scen[i]);
        char *code = read_file(from, 64L << 10, &len, err, sizeof err);
        int rc = !code || write_file_atomic_msg(to, code, (size_t)len, err, sizeof err);
        free(code);
        if (rc) return die_msg("grid: --human: %s", err), 1;
    }
    snprintf(d->human_files, sizeof d->human_files, "%s", dir);
    return 0;
}

static void list_cells(const grid_opts *o, const grid_cell *cells, int total)
{
    printf("%-6s %-34s %-20s %s\n", "index", "cell", "seed", "state");
    for (int k = 0; k < total; k++) {
        char dir[2048], state[64];
        grid_result r;
        grid_cell_dir(o->out, &cells[k], dir, sizeof dir);
        grid_run_state(dir, &r);
        if (r.state == GRID_FINISHED) snprintf(state, sizeof state, "finished, best fitness %.4f", r.best_fitness);
        else if (grid_cell_busy(o->out, &cells[k])) snprintf(state, sizeof state, "running");
        else if (r.halted[0]) snprintf(state, sizeof state, "stopped: its model server failed");
        else snprintf(state, sizeof state, "%s", r.state == GRID_STARTED ? "started" : "new");
        printf("%-6d %-34s %-20llu %s\n", k, cells[k].name, (unsigned long long)cells[k].seed, state);
    }
}

/* --gpus N needs N devices; said before anything is written.  0 or 1. */
static int check_gpus(long gpus)
{
    char why[256] = "";
    int n = backend_cuda_devices(why, sizeof why);
    if (n == 0) return die_msg("grid: --gpus %ld: this machine has no usable GPU (%s); use --jobs J to run on the CPU", gpus, why), 1;
    if (gpus > n) return die_msg("grid: --gpus %ld: this machine has only %d GPU%s", gpus, n, n == 1 ? "" : "s"), 1;
    return 0;
}

/* DIR, DIR/cells and (for a new grid) DIR/grid.json.  0 or 1. */
static int prepare_dir(grid_opts *o, int have_stored)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/cells", o->out);
    char err[PATH_MAX + 512];
    if (make_dirs_msg(o->out, err, sizeof err) || dirguard_add(o->out, "grid directory", 0, err, sizeof err) ||
        make_dirs_msg(path, err, sizeof err))
        return die_msg("grid: %s", err), 1;
    if (have_stored) return 0;
    if (o->d.human[0] && copy_human(o)) return 1;
    snprintf(path, sizeof path, "%s/grid.json", o->out);
    char *js = grid_def_json(&o->d);
    int rc = !js || write_file_atomic_msg(path, js, strlen(js), err, sizeof err);
    free(js);
    if (rc) return die_msg("grid: cannot write %s", path), 1;
    return 0;
}

/* The cells still to run (queue), in order; *finished counts the others. */
static int unfinished(const grid_opts *o, const grid_cell *cells, int total, int *queue, int *finished)
{
    int nq = 0;
    *finished = 0;
    for (int k = 0; k < total; k++) {
        if (o->cell >= 0 && k != o->cell) continue;
        char dir[2048];
        grid_result r;
        grid_cell_dir(o->out, &cells[k], dir, sizeof dir);
        grid_run_state(dir, &r);
        if (r.state == GRID_FINISHED) (*finished)++;
        else queue[nq++] = k;
    }
    return nq;
}

/* The queue without the cells some process is running now (a batch
 * array submitted before, a grid running elsewhere): they are not
 * submitted twice.  Returns the new length. */
static int without_busy(const grid_opts *o, const grid_cell *cells, int *queue, int nq)
{
    int m = 0, busy = 0;
    for (int i = 0; i < nq; i++) {
        if (grid_cell_busy(o->out, &cells[queue[i]])) busy++;
        else queue[m++] = queue[i];
    }
    if (busy) printf("grid %s: %d cell%s running now (not submitted again)\n", o->out, busy, busy == 1 ? " is" : "s are");
    return m;
}

/* The grid's training time on the CPU, projected from a short warm-up of
 * the cells' settings, said up front; over 3 hours it goes on only when
 * asked.  0 to go on. */
static int grid_cost(const grid_opts *o, const grid_cell *cells, const int *queue, int nq, int slots)
{
    run_config c;
    run_config_defaults(&c);
    char *argv[GRID_MAX_RUN_FLAGS + 2] = {"run"}, err[512];
    if (run_config_from_flags(&c, grid_cell_run_flags(&o->d, 0, argv + 1) + 1, argv, err, sizeof err)) return 0;
    ppo_config cfg;
    ppo_config_default(&cfg);
    cfg.n_envs = c.envs > 0 ? c.envs : cfg.n_envs;
    snprintf(cfg.preset, sizeof cfg.preset, "%s", c.preset);
    if (ppo_config_check(&cfg)) return 0; /* the cells will say what is wrong */
    double sps = train_estimate_sps(&cfg, 10.0), nodes = 0;
    for (int i = 0; i < nq; i++) {
        int a = cells[queue[i]].ablation;
        nodes += a == ABL_ZS || a == ABL_SA ? 1 : c.iterations;
    }
    /* the slots share the machine's cores: the same work however it is split */
    double seconds = sps > 0 ? nodes * (double)c.steps / sps : -1;
    char d[64];
    train_format_duration(seconds, d, sizeof d);
    grid_say("projected: about %s of training on the CPU for %d cell%s, %.0f nodes of %lld steps (%s preset, %d envs, "
             "%.0f steps/s in a short warm-up, %d at a time; model calls not counted)",
             d, nq, nq == 1 ? "" : "s", nodes, (long long)c.steps, c.preset, cfg.n_envs, sps, slots);
    if (seconds <= TRAIN_ASK_ABOVE_S || o->yes) return 0;
    return train_confirm_long_job("grid", seconds,
                                  "fewer --steps, a smaller --preset or fewer cells shorten it; --gpus N or --slurm "
                                  "spread it")
               ? 0
               : -1;
}

/* Run the queue here, on CPU job slots or GPUs.  The exit code. */
static int run_here(grid_opts *o, const grid_cell *cells, int total, const int *queue, int nq, int finished)
{
    int slots = o->gpus > 0 ? (int)o->gpus : (int)o->jobs, cores = grid_cpu_cores();
    if (slots > nq && nq > 0) slots = nq;
    grid_exec_ctx x = {o->out, &o->d, cells, (int)o->gpus, 0, o->gpus > 0 && !o->sets_backend};
    /* the rule `run` and `train` use: the CPUs allowed that are idle now
     * (host/sys/cpus.h), shared out among the slots; the thread count changes
     * the speed only, never the results (docs/training.md) */
    cpu_budget cb = cpus_current();
    int usable = cb.threads > 0 && cb.threads < cores ? cb.threads : cores;
    if (!o->sets_threads) x.threads = usable / slots > 1 ? usable / slots : 1;
    grid_log_open(o->out);
    char where[128];
    if (o->gpus > 0) snprintf(where, sizeof where, "one per GPU on %ld GPU%s", o->gpus, o->gpus == 1 ? "" : "s");
    else snprintf(where, sizeof where, "%d at a time on the CPU", slots);
    if (o->cell >= 0)
        grid_say("grid %s: cell %ld of %d (%s): %s", o->out, o->cell, total, finished ? "finished" : "to run",
                 finished ? "nothing to do" : "running it");
    else
        grid_say("grid %s: %d cells, %d finished, %d to run, %s", o->out, total, finished, nq, nq ? where : "nothing to do");
    if (nq && x.threads) {
        char why[160];
        cpus_describe(&cb, why, sizeof why);
        grid_say("each new cell: --threads %d (%d at a time; this machine: %s)", x.threads, slots, why);
    }
    if (nq && o->gpus <= 0 && grid_cost(o, cells, queue, nq, slots)) {
        grid_log_close();
        return 2;
    }
    int rc = nq ? grid_exec_run(&x, queue, nq, slots, o->cell >= 0 ? 1 : total, finished) : 0;
    if (o->cell < 0 && rc != 130 && rc != 143) {
        printf("\n");
        if (grid_report(o->out, &o->d, cells, total, o->value, 0) < 0 && !rc) rc = 1;
    } else if (o->cell >= 0 && rc == 0) {
        grid_say("aggregate the finished cells with: pcgrllm grid --out %s --summary", o->out);
    }
    grid_log_close();
    return rc;
}

int grid_main(grid_opts *o)
{
    int have_stored, rc = 0;
    /* a grid directory may come from someone else: nothing in it is
     * followed out of it (host/sys/dirguard.h) */
    if (dirguard_command_dir("grid", o->out, "grid directory", 1)) return grid_def_free(&o->d), 1;
    if (stored_definition(o, &have_stored)) return grid_def_free(&o->d), 1;
    if (!have_stored && o->summary) {
        grid_def_free(&o->d);
        return die_msg("grid: %s holds no grid (no grid.json); run the grid first", o->out), 1;
    }
    /* where requests go and with which key is the command line's to say */
    int sends = !o->list && !o->summary;
    grid_requests q;
    char err[600];
    /* a definition read from a file (grid.json here, or --config) names
     * servers the command line did not */
    int untrusted = (have_stored && !o->def_given) || o->config;
    if (sends) {
        /* flags that cannot be read cannot be judged: nothing goes on (the
         * cells would refuse them too) */
        if (definition_requests(&o->d, &q, err, sizeof err)) {
            if (o->config) die_msg("grid: --config %s: its run flags: %s", o->config, err);
            else if (untrusted) die_msg("grid: %s/grid.json: its run flags: %s", o->out, err);
            else die_msg("grid: the run flags: %s", err);
            return grid_def_free(&o->d), untrusted ? 1 : 2;
        }
        if (untrusted ? check_stored_requests(o, &q) : refuse_key_flag(&q, "the run flags"))
            return grid_def_free(&o->d), untrusted ? 1 : 2;
        o->slurm_opts.n_servers = q.n;
        for (int i = 0; i < q.n; i++) o->slurm_opts.servers[i] = q.url[i];
    }
    o->slurm_opts.api_key_env = o->d.api_key_env;
    if (sends && human_files(o, untrusted)) return grid_def_free(&o->d), 1;
    grid_cell *cells = NULL;
    int total = grid_cells(&o->d, &cells);
    int *queue = total >= 0 ? malloc(sizeof(int) * (size_t)(total + 1)) : NULL;
    if (!queue) {
        free(cells);
        grid_def_free(&o->d);
        return die_msg("grid: out of memory"), 1;
    }
    if (o->cell >= total) {
        die_msg("grid: --cell %ld: the grid has cells 0..%d (pcgrllm grid --list)", o->cell, total - 1);
        rc = 2;
    } else if (o->list) {
        list_cells(o, cells, total);
    } else if (o->summary) {
        rc = grid_report(o->out, &o->d, cells, total, o->value, 0) < 0;
    } else if (!(o->gpus > 0 && (rc = check_gpus(o->gpus))) && !(rc = prepare_dir(o, have_stored))) {
        int finished, nq = unfinished(o, cells, total, queue, &finished);
        if (o->slurm) nq = without_busy(o, cells, queue, nq);
        if (o->slurm && nq == 0) printf("grid %s: every cell is finished or running; nothing to submit\n", o->out);
        else if (o->slurm) rc = check_servers(o, 1) ? 1 : grid_slurm(o->out, queue, nq, total, &o->slurm_opts);
        else if (nq == 0 || !(rc = check_servers(o, 0))) rc = run_here(o, cells, total, queue, nq, finished);
    }
    free(queue);
    free(cells);
    grid_def_free(&o->d);
    return rc;
}
