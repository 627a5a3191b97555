/* The result summary of a run directory: a node table on the terminal and a
 * self-contained HTML page (no server, no external files). */
#include "loop_internal.h"
#include "graph.h"
#include "llm.h"
#include "minecraft.h"
#include "plot.h"
#include "run_state.h"
#include "util.h"
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static long file_size(const char *path)
{
    struct stat st;
    return path_stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (long)st.st_size : -1;
}

/* The size of a node's reward.c, or "-" for a node that has none (failed). */
static void reward_bytes(const char *path, char *buf, size_t len)
{
    long n = file_size(path);
    if (n < 0) snprintf(buf, len, "-");
    else snprintf(buf, len, "%ld", n);
}

/* Best node's ancestry as "0 -> 2 -> 5". */
static void best_path(const thought_graph *g, int best, char *buf, size_t len)
{
    int chain[GRAPH_MAX_NODES], n = 0;
    for (int id = best; id >= 0 && n < GRAPH_MAX_NODES; id = g->nodes[id].parent) chain[n++] = id;
    size_t k = 0;
    buf[0] = 0;
    for (int i = n - 1; i >= 0 && k < len; i--)
        k += (size_t)snprintf(buf + k, len - k, "%d%s", chain[i], i ? " -> " : "");
}

void report_html_escape(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* The self-alignment rounds a node had: none in the zs and fb ablations. */
static long long aligned_rounds(json_t *cfg)
{
    const char *abl = json_string_value(json_object_get(cfg, "ablation"));
    if (abl && (!strcmp(abl, "zs") || !strcmp(abl, "fb"))) return 0;
    return json_integer_value(json_object_get(cfg, "align"));
}

/* ", model M at S" for a language model. */
static void author_server(FILE *f, json_t *cfg)
{
    json_t *llm = json_object_get(cfg, "llm");
    const char *model = json_string_value(json_object_get(llm, "model"));
    const char *url = json_string_value(json_object_get(llm, "base_url"));
    if (!model || !url) return;
    fprintf(f, ": ");
    report_html_escape(f, model);
    fprintf(f, " at ");
    report_html_escape(f, url);
}

/* The version and commit that made the run, and its threads. */
static void provenance(FILE *f, json_t *cfg)
{
    const char *version = json_string_value(json_object_get(cfg, "pcgrllm_version"));
    const char *commit = json_string_value(json_object_get(cfg, "pcgrllm_commit"));
    const char *why = json_string_value(json_object_get(cfg, "threads_reason"));
    json_t *threads = json_object_get(cfg, "threads_at_start");
    if (!version) return; /* a run made before they were recorded */
    fprintf(f, "<br><b>Made with:</b> pcgrllm ");
    report_html_escape(f, version);
    if (commit) fprintf(f, " (commit "), report_html_escape(f, commit), fprintf(f, ")");
    if (json_is_integer(threads)) {
        fprintf(f, "; %lld CPU thread%s at the start", json_integer_value(threads),
                json_integer_value(threads) == 1 ? "" : "s");
        if (why) fprintf(f, " ("), report_html_escape(f, why), fprintf(f, ")");
        fprintf(f, "; CPU training does not depend on the thread count (docs/training.md)");
    }
}

/* The reference details every node trained with, as config.json records
 * them; a run made before they were recorded had the engine's first
 * design. */
static void write_details(FILE *f, json_t *cfg)
{
    fprintf(f, "<br><b>Details</b> (docs/training.md#reference-details):");
    for (int k = 0; k <= PPO_N_DETAILS; k++) {
        const char *key = k < PPO_N_DETAILS ? ppo_details[k].key : "node_seeds";
        json_t *v = json_object_get(cfg, key);
        fprintf(f, "%s %s ", k ? "," : "", key);
        if (json_is_string(v)) report_html_escape(f, json_string_value(v));
        else fprintf(f, "%s (not recorded)", k < PPO_N_DETAILS ? ppo_details[k].names[1] : "offset");
    }
}

/* config.json's string at key, HTML-escaped into buf (cut to fit). */
static const char *cfg_text(json_t *cfg, const char *key, char *buf, size_t len)
{
    char *text = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&text, &n);
    if (m) report_html_escape(m, json_string_value(json_object_get(cfg, key)));
    if (m && fclose(m) == 0) snprintf(buf, len, "%s", text);
    else snprintf(buf, len, "?");
    free(text);
    return buf;
}

/* config.json's --accept; a run made before the option refined every node it made. */
static int cfg_accept(json_t *cfg)
{
    const char *acc = json_string_value(json_object_get(cfg, "accept"));
    return acc && !strcmp(acc, "improve") ? GRAPH_ACCEPT_IMPROVE : GRAPH_ACCEPT_ALWAYS;
}

static const char *status_name(int s)
{
    return s == NODE_OK ? "ok" : s == NODE_FAILED ? "failed" : "pending";
}

/* Fill colour from red (0) to green (1). */
static void fitness_colour(double f, char *buf, size_t len)
{
    if (f < 0) f = 0;
    if (f > 1) f = 1;
    snprintf(buf, len, "rgb(%d,%d,%d)", (int)(230 - 150 * f), (int)(90 + 120 * f), (int)(90 + 20 * f));
}

static void write_svg(FILE *f, const thought_graph *g, int best)
{
    /* a tree drawn left to right: column = depth below the root it refines
     * (parents come before their children), row = order within the column */
    int col[GRAPH_MAX_NODES], row[GRAPH_MAX_NODES], rows_in[GRAPH_MAX_NODES] = {0}, max_rows = 1, max_col = 0;
    for (int i = 0; i < g->n; i++) {
        int p = g->nodes[i].parent;
        col[i] = p >= 0 && p < i ? col[p] + 1 : 0;
        row[i] = rows_in[col[i]]++;
        if (rows_in[col[i]] > max_rows) max_rows = rows_in[col[i]];
        if (col[i] > max_col) max_col = col[i];
    }
    int w = 60 + (max_col + 1) * 170, h = 60 + max_rows * 90;
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' class='graph'>\n", w, h);
#define NX(i) (30 + col[i] * 170)
#define NY(i) (20 + row[i] * 90)
    /* lines first, centre to centre, so that the boxes cover their ends;
     * references bow below the straight line, so that they never hide a
     * parent-to-child line, which is drawn over them */
    for (int i = 0; i < g->n; i++) {
        const thought_node *nd = &g->nodes[i];
        for (int k = 0; k < nd->n_refs; k++) {
            int x1 = NX(nd->refs[k]) + 55, y1 = NY(nd->refs[k]) + 30, x2 = NX(i) + 55, y2 = NY(i) + 30;
            fprintf(f, "<path d='M %d %d Q %d %d %d %d' fill='none' stroke='#36c' stroke-width='2' "
                       "stroke-dasharray='5,4'/>\n",
                    x1, y1, (x1 + x2) / 2 + (y2 - y1) / 3, (y1 + y2) / 2 + 45 + abs(x2 - x1) / 6, x2, y2);
        }
    }
    for (int i = 0; i < g->n; i++) {
        const thought_node *nd = &g->nodes[i];
        if (nd->parent >= 0)
            fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333' stroke-width='2'/>\n", NX(nd->parent) + 55,
                    NY(nd->parent) + 30, NX(i) + 55, NY(i) + 30);
    }
    for (int i = 0; i < g->n; i++) {
        const thought_node *nd = &g->nodes[i];
        char colour[32], line2[64];
        fitness_colour(nd->status == NODE_OK ? nd->fitness : 0, colour, sizeof colour);
        if (nd->status == NODE_OK) snprintf(line2, sizeof line2, "f = %.3f", nd->fitness);
        else snprintf(line2, sizeof line2, "%s", status_name(nd->status));
        fprintf(f,
                "<a href='#node%d'><rect x='%d' y='%d' width='110' height='60' rx='8' fill='%s' stroke='%s' "
                "stroke-width='%d'/>\n<text x='%d' y='%d' font-size='13' text-anchor='middle'>node %d (it. %d)</text>\n"
                "<text x='%d' y='%d' font-size='13' text-anchor='middle'>%s</text></a>\n",
                i, NX(i), NY(i), nd->status == NODE_OK ? colour : "#ccc", i == best ? "#000" : "#666",
                i == best ? 3 : 1, NX(i) + 55, NY(i) + 24, i, nd->iteration, NX(i) + 55, NY(i) + 44, line2);
    }
#undef NX
#undef NY
    fprintf(f, "</svg>\n");
}

/* The fitness of each node by its iteration (failed nodes as crosses at
 * 0) and the best fitness so far, as an inline PNG. */
static void write_fitness_chart(FILE *f, const thought_graph *g)
{
    int n = g->n;
    double *v = calloc((size_t)(4 * n + 1), sizeof *v);
    if (!v) return;
    double *x = v, *ok = v + n, *failed = v + 2 * n, *best = v + 3 * n, top = NAN;
    int n_failed = 0;
    for (int i = 0; i < n; i++) {
        const thought_node *nd = &g->nodes[i];
        x[i] = nd->iteration;
        ok[i] = nd->status == NODE_OK ? nd->fitness : NAN;
        failed[i] = nd->status == NODE_FAILED ? 0 : NAN;
        n_failed += nd->status == NODE_FAILED;
        if (nd->status == NODE_OK && !(nd->fitness <= top)) top = nd->fitness;
        best[i] = top;
    }
    plot_series s[3] = {{.label = "best so far", .n = n, .x = x, .y = best, .step = 1},
                        {.label = "node fitness", .n = n, .x = x, .y = ok, .markers = 1},
                        {.label = "failed node", .n = n, .x = x, .y = failed, .markers = 2}};
    int ns = n_failed ? 3 : 2; /* the failed series last: in the legend only when a node failed */
    plot_axes ax = {.title = "Fitness by iteration", .xlabel = "iteration", .ylabel = "fitness", .ymin = 0, .ymax = 1};
    unsigned char *png = NULL;
    size_t len = 0;
    if (n > 0 && plot_lines_png(&ax, s, ns, &png, &len) == 0) {
        char *b64 = llm_base64(png, len);
        if (b64) {
            fprintf(f, "<p><img alt='fitness by iteration' title='legend:");
            for (int k = 0; k < ns; k++) fprintf(f, "%s %s", k ? "," : "", s[k].label);
            fprintf(f, "' src='data:image/png;base64,%s'/></p>\n", b64);
        }
        free(b64);
    }
    free(png);
    free(v);
}

/* A node's training curve from its train/metrics.jsonl: the mean episode
 * reward and the policy's entropy over the environment steps, as two
 * inline PNGs side by side.  Nothing when the node did not train. */
static void write_training_curve(FILE *f, const char *dir, int node)
{
    char path[1400], err[256];
    snprintf(path, sizeof path, "%s/nodes/%03d/train/metrics.jsonl", dir, node);
    long len;
    char *text = read_file(path, 1L << 28, &len, err, sizeof err);
    if (!text) return;
    int cap = 0, n = 0;
    for (char *c = text; *c; c++) cap += *c == '\n';
    double *v = calloc((size_t)(3 * cap + 3), sizeof *v);
    for (char *line = text; v && line && *line && n < cap;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        json_t *j = json_loads(line, 0, NULL);
        if (j) {
            json_t *r = json_object_get(j, "episode_reward"), *e = json_object_get(j, "entropy");
            v[n] = json_number_value(json_object_get(j, "step"));
            v[cap + n] = json_is_number(r) ? json_number_value(r) : NAN;
            v[2 * cap + n] = json_is_number(e) ? json_number_value(e) : NAN;
            n++;
            json_decref(j);
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    const char *names[2] = {"mean episode reward", "entropy"};
    double *px = v ? malloc(sizeof *px * (size_t)(2 * cap + 2)) : NULL, *py = px ? px + cap + 1 : NULL;
    fprintf(f, "<h4>Training</h4><p>\n");
    for (int k = 0; px && n > 0 && k < 2; k++) {
        /* only the updates that have a value, joined: episodes end in few of
         * them (every sixth with 768-step episodes and 128-step rollouts),
         * and a line broken at every gap would draw nothing */
        int m = 0;
        for (int i = 0; i < n; i++)
            if (isfinite(v[(k + 1) * cap + i])) px[m] = v[i], py[m++] = v[(k + 1) * cap + i];
        if (m == 0) {
            fprintf(f, "No episode ended in the %.0f steps of training: no %s to draw.\n", v[n - 1], names[k]);
            continue;
        }
        plot_series sr = {.label = names[k], .n = m, .x = px, .y = py, .line = 1, .markers = m <= 60};
        plot_axes ax = {.title = names[k], .xlabel = "environment steps", .ylabel = names[k], .width = 600,
                        .height = 320};
        unsigned char *png = NULL;
        size_t plen = 0;
        if (plot_lines_png(&ax, &sr, 1, &png, &plen) == 0) {
            char *b64 = llm_base64(png, plen);
            if (b64) fprintf(f, "<img alt='%s over training' src='data:image/png;base64,%s'/>\n", names[k], b64);
            free(b64);
        }
        free(png);
    }
    fprintf(f, "</p>\n");
    free(px);
    free(v);
}

static void write_img(FILE *f, const char *png_path)
{
    long len;
    char err[256];
    char *png = read_file(png_path, 32L << 20, &len, err, sizeof err);
    if (!png) {
        fprintf(f, "<p><em>no level picture</em></p>\n");
        return;
    }
    char *b64 = llm_base64(png, (size_t)len);
    free(png);
    if (b64) fprintf(f, "<img alt='generated levels' src='data:image/png;base64,%s'/>\n", b64);
    free(b64);
}

/* A node's levels evaluated against the run's target (s), malloc'd; NULL
 * when the target is unknown or the node has no readable levels (yet). */
static level_set *node_levels(const char *dir, int id, int n, const eval_scenario_t *s)
{
    char path[1400], err[1600];
    if (!s) return NULL;
    snprintf(path, sizeof path, "%s/nodes/%03d/levels", dir, id);
    level_set *ls = malloc(sizeof *ls);
    if (!ls || run_load_levels(path, n, ls, err, sizeof err) || ls->n == 0) {
        free(ls);
        return NULL;
    }
    eval_levels(s, ls->levels, ls->n, ls->per, &ls->sum);
    return ls;
}

/* "12.34", or a dash when no level is valid */
static void fmt_aspao(char *buf, size_t len, const eval_summary_t *sum)
{
    if (sum->n_valid) snprintf(buf, len, "%.2f", sum->aspao);
    else snprintf(buf, len, "-");
}

/* One table cell: a download link to a datapack holding this level alone
 * (at the export's default scale), or why it is not exported. */
static void write_download(FILE *f, const level_t *l, int node, int k, const eval_scenario_t *s, const mc_blocks *b)
{
    char name[64], why[1200];
    snprintf(name, sizeof name, "node%03d_level_%03d", node, k);
    mc_level lv = {name, l};
    unsigned char *zip = NULL;
    size_t len = 0;
    char *b64 = NULL;
    if (mc_check_routes(l, &s, 1, b, MC_DEFAULT_SCALE, why, sizeof why) == 0 &&
        mc_datapack("pcgrllm", &lv, 1, b, MC_DEFAULT_SCALE, &zip, &len, why, sizeof why) == 0 &&
        !(b64 = llm_base64(zip, len)))
        snprintf(why, sizeof why, "out of memory");
    if (b64)
        fprintf(f, "<td><a download='pcgrllm_%s.zip' href='data:application/zip;base64,%s'>datapack</a> "
                   "<code>/function pcgrllm:%s</code></td>", name, b64, name);
    else {
        fprintf(f, "<td class='failed'>not exported: ");
        report_html_escape(f, why);
        fprintf(f, "</td>");
    }
    free(b64);
    free(zip);
}

/* A node's levels: the Word2Minecraft metrics of the set, then one row per
 * level with its score, its ASPAO and its Minecraft download. */
static void write_levels_table(FILE *f, const level_set *ls, int node, const eval_scenario_t *s, const mc_blocks *b,
                               const char *mc_err)
{
    char aspao[32];
    fmt_aspao(aspao, sizeof aspao, &ls->sum);
    fprintf(f, "<h4>Levels</h4>\n<p>Word2Minecraft metrics: ASPAO %s over %d of %d valid levels, UTR %.3f, VUTR %.3f "
               "(definitions in docs/evaluator.md). ",
            aspao, ls->sum.n_valid, ls->n, ls->sum.utr, ls->sum.vutr);
    if (b)
        fprintf(f, "Each download is a datapack for Minecraft Java Edition 1.21.1 holding that level at scale %d: put "
                   "it in the world's <code>datapacks</code> folder, run <code>/reload</code>, then the function shown "
                   "(README, &ldquo;walk through your levels in Minecraft&rdquo;).</p>\n", MC_DEFAULT_SCALE);
    else {
        fprintf(f, "No Minecraft downloads: ");
        report_html_escape(f, mc_err);
        fprintf(f, "</p>\n");
    }
    fprintf(f, "<table><tr><th>level</th><th>score</th><th>playable</th><th>ASPAO</th>%s</tr>\n",
            b ? "<th>Minecraft</th>" : "");
    for (int k = 0; k < ls->n; k++) {
        const eval_level_t *m = &ls->per[k];
        fprintf(f, "<tr><td>level_%03d</td><td>%.3f</td><td>%s</td>", k, m->score, m->playable ? "yes" : "no");
        if (m->objectives_reachable) fprintf(f, "<td>%.2f</td>", m->objective_path);
        else fprintf(f, "<td>-</td>");
        if (b) write_download(f, &ls->levels[k], node, k, s, b);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n");
}

/* The page's head: the run's story, target, author and settings. */
static void write_head(FILE *f, const char *dir, json_t *cfg, const char *target_desc)
{
    const char *story = json_string_value(json_object_get(cfg, "story"));
    const char *label = json_string_value(json_object_get(cfg, "author_label"));
    fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>pcgrllm run report</title>\n<style>\n"
               "body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}pre{background:#f6f6f6;"
               "padding:1em;overflow:auto;font-size:12px}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
               "padding:4px 8px;text-align:right}.node{border-top:2px solid #999;margin-top:2em}img{max-width:100%%}"
               ".graph{border:1px solid #ddd;background:#fcfcfc}.failed{color:#a00}\n</style></head><body>\n");
    fprintf(f, "<h1>pcgrllm run report</h1>\n<p><b>Directory:</b> ");
    report_html_escape(f, dir);
    fprintf(f, "<br><b>Story:</b> ");
    report_html_escape(f, story);
    fprintf(f, "<br><b>Target:</b> ");
    report_html_escape(f, target_desc);
    fprintf(f, "<br><b>Author:</b> ");
    report_html_escape(f, label);
    author_server(f, cfg);
    /* report reads config.json as stored: its names are text from a file */
    char pe[256], abl[256], fb[256], preset[256], backend[256];
    fprintf(f, "<br><b>Search:</b> %s, %lld iterations, breadth %lld, ablation %s, feedback %s",
            cfg_text(cfg, "pe", pe, sizeof pe), json_integer_value(json_object_get(cfg, "iterations")),
            json_integer_value(json_object_get(cfg, "breadth")), cfg_text(cfg, "ablation", abl, sizeof abl),
            cfg_text(cfg, "feedback", fb, sizeof fb));
    int accept = cfg_accept(cfg);
    json_t *tf = json_object_get(cfg, "target_fitness");
    fprintf(f, "<br><b>Acceptance:</b> %s (%s); target fitness ", run_accept_name(accept),
            run_accept_rule(graph_pe_from_name(json_string_value(json_object_get(cfg, "pe"))), accept));
    if (json_is_number(tf) && json_number_value(tf) >= 0)
        fprintf(f, "%.3f (the search stops once a node reaches it)", json_number_value(tf));
    else
        fprintf(f, "none");
    /* a run made before these were stored was made with today's rich prompts */
    char pr[256], api[256], refs[256];
    int stored = json_is_string(json_object_get(cfg, "prompts"));
    fprintf(f, "<br><b>Prompts:</b> %s, reward API %s, GoT references %s%s",
            stored ? cfg_text(cfg, "prompts", pr, sizeof pr) : "rich",
            json_is_string(json_object_get(cfg, "reward_api")) ? cfg_text(cfg, "reward_api", api, sizeof api) : "full",
            json_is_string(json_object_get(cfg, "got_refs")) ? cfg_text(cfg, "got_refs", refs, sizeof refs) : "engine",
            stored ? "" : " (a run made before these settings were recorded)");
    json_t *profile = json_object_get(cfg, "profile");
    fprintf(f, "<br><b>Training:</b> %lld steps per node, %lld environments, preset %s, backend %s; %lld "
               "self-alignment rounds, reward check on %lld environments",
            json_integer_value(json_object_get(cfg, "steps")), json_integer_value(json_object_get(cfg, "envs")),
            cfg_text(cfg, "preset", preset, sizeof preset), cfg_text(cfg, "backend", backend, sizeof backend),
            aligned_rounds(cfg), json_integer_value(json_object_get(cfg, "check_envs")));
    write_details(f, cfg);
    provenance(f, cfg);
    if (json_is_string(profile)) {
        fprintf(f, "<br><b>Profile:</b> --");
        report_html_escape(f, json_string_value(profile));
        fprintf(f, ", which sets ");
        report_html_escape(f, json_string_value(json_object_get(cfg, "profile_flags")));
    }
    fprintf(f, "</p>\n");
}

/* One row per node: status, fitness, the Word2Minecraft metrics, cost. */
static void write_node_table(FILE *f, const char *dir, const thought_graph *g, int n_levels, const eval_scenario_t *s)
{
    fprintf(f, "<h2>Nodes</h2>\n<table><tr><th>node</th><th>iteration</th><th>parent</th><th>status</th>"
               "<th>fitness</th><th>ASPAO</th><th>UTR</th><th>VUTR</th><th>reward bytes</th><th>tokens</th><th>wall s</th>"
               "</tr>\n");
    for (int i = 0; i < g->n; i++) {
        const thought_node *nd = &g->nodes[i];
        char rp[1400], par[16], w2m[128] = "<td>&ndash;</td><td>&ndash;</td><td>&ndash;</td>";
        snprintf(rp, sizeof rp, "%s/nodes/%03d/reward.c", dir, i);
        snprintf(par, sizeof par, nd->parent < 0 ? "&ndash;" : "%d", nd->parent);
        char bytes[24];
        reward_bytes(rp, bytes, sizeof bytes);
        level_set *ls = node_levels(dir, i, n_levels, s);
        if (ls) {
            char aspao[32];
            fmt_aspao(aspao, sizeof aspao, &ls->sum);
            snprintf(w2m, sizeof w2m, "<td>%s</td><td>%.3f</td><td>%.3f</td>", aspao, ls->sum.utr, ls->sum.vutr);
            free(ls);
        }
        fprintf(f, "<tr><td><a href='#node%d'>%d</a></td><td>%d</td><td>%s</td><td>%s</td><td>%.3f</td>%s<td>%s</td>"
                   "<td>%ld</td><td>%.1f</td></tr>\n",
                i, i, nd->iteration, par, status_name(nd->status), nd->fitness, w2m, bytes,
                nd->tokens_prompt + nd->tokens_completion, nd->wall_s);
    }
    fprintf(f, "</table>\n");
}

/* A node's section: why it failed, its training, levels, feedback and reward. */
static void write_node(FILE *f, const char *dir, const thought_graph *g, int i, int n_levels, const eval_scenario_t *s,
                       const mc_blocks *blocks, const char *mc_err)
{
    const thought_node *nd = &g->nodes[i];
    char p[1400];
    fprintf(f, "<div class='node' id='node%d'><h3>Node %d &middot; iteration %d &middot; %s", i, i, nd->iteration,
            status_name(nd->status));
    if (nd->status == NODE_OK) fprintf(f, " &middot; fitness %.3f", nd->fitness);
    fprintf(f, "</h3>\n");
    if (nd->parent >= 0) {
        fprintf(f, "<p>Refined from <a href='#node%d'>node %d</a>", nd->parent, nd->parent);
        /* under --accept improve a chain may pass over a revision that scored lower */
        int latest = i - 1;
        while (latest >= 0 && g->nodes[latest].status != NODE_OK) latest--;
        if (g->accept == GRAPH_ACCEPT_IMPROVE && g->pe == PE_COT && latest != nd->parent)
            fprintf(f, ", the best so far, not the latest node %d (fitness %.3f)", latest, g->nodes[latest].fitness);
        fprintf(f, ".</p>\n");
    }
    snprintf(p, sizeof p, "%s/nodes/%03d/failed.txt", dir, i);
    char *failed = run_read_text(p);
    if (failed) {
        fprintf(f, "<p class='failed'>Failed: ");
        report_html_escape(f, failed);
        fprintf(f, "</p>\n");
        free(failed);
    }
    write_training_curve(f, dir, i);
    snprintf(p, sizeof p, "%s/nodes/%03d/levels.png", dir, i);
    if (file_size(p) > 0) {
        fprintf(f, "<h4>Generated levels</h4>\n");
        write_img(f, p);
    }
    level_set *ls = node_levels(dir, i, n_levels, s);
    if (ls) write_levels_table(f, ls, i, s, blocks, mc_err);
    free(ls);
    if (nd->feedback) {
        fprintf(f, "<h4>Feedback</h4><pre>");
        report_html_escape(f, nd->feedback);
        fprintf(f, "</pre>\n");
    }
    snprintf(p, sizeof p, "%s/nodes/%03d/reward.c", dir, i);
    char *code = run_read_text(p);
    if (code) {
        fprintf(f, "<details><summary><b>Reward</b> (%zu bytes)</summary><pre>", strlen(code));
        report_html_escape(f, code);
        fprintf(f, "</pre></details>\n");
        free(code);
    }
    fprintf(f, "</div>\n");
}

/* The page is built in memory and written with write_file_atomic (the
 * output rules of docs/loop.md, "Files").  0, or -1 with one line in err. */
static int write_html(const char *dir, json_t *cfg, const thought_graph *g, int best, const char *target_desc,
                      const eval_scenario_t *s, char *err, int errlen)
{
    int n_levels = (int)json_integer_value(json_object_get(cfg, "levels"));
    mc_blocks *blocks = malloc(sizeof *blocks);
    char mc_err[1200] = "out of memory";
    if (blocks && mc_blocks_load(NULL, blocks, mc_err, sizeof mc_err)) {
        free(blocks);
        blocks = NULL;
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/report.html", dir);
    char *page = NULL;
    size_t page_len = 0;
    FILE *f = open_memstream(&page, &page_len);
    if (!f) {
        free(blocks);
        return snprintf(err, (size_t)errlen, "%s: out of memory", path), -1;
    }
    write_head(f, dir, cfg, target_desc);
    if (best >= 0) {
        char bp[1024];
        best_path(g, best, bp, sizeof bp);
        fprintf(f, "<p><b>Best:</b> <a href='#node%d'>node %d</a>, fitness %.3f; path %s</p>\n", best, best,
                g->nodes[best].fitness, bp);
    } else
        fprintf(f, "<p><b>Best:</b> none (no node produced a valid reward)</p>\n");
    fprintf(f, "<h2>Graph of thoughts</h2>\n<p>Each column refines the one before it, from the empty template on "
               "the left. Solid lines: parent to child; dashed: references shown to the author. "
               "Colour: fitness (red 0, green 1); the best node has a thick border.</p>\n");
    write_svg(f, g, best);
    write_fitness_chart(f, g);
    write_node_table(f, dir, g, n_levels, s);
    for (int i = 0; i < g->n; i++) write_node(f, dir, g, i, n_levels, s, blocks, mc_err);
    report_write_refinements(f, dir);
    fprintf(f, "</body></html>\n");
    free(blocks);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(page);
        return snprintf(err, (size_t)errlen, "%s: out of memory", path), -1;
    }
    int rc = write_file_atomic_msg(path, page, page_len, err, errlen);
    free(page);
    return rc;
}

/* The run's target from DIR/target.json: its description in desc, and the
 * scenario its levels are scored in, or NULL when there is none to read. */
static eval_scenario_t *read_target(const char *dir, char *desc, int len, eval_scenario_t *scenario)
{
    char path[1200], err[1600];
    snprintf(path, sizeof path, "%s/target.json", dir);
    char *tj = run_read_text(path);
    target_t t;
    eval_scenario_t *s = NULL;
    if (tj && target_from_json(tj, &t, err, sizeof err) == STORY_OK) {
        target_describe(&t, desc, len);
        target_to_scenario(&t, "", scenario);
        s = scenario;
    }
    free(tj);
    return s;
}

/* The node table on the terminal (none when quiet), and the tokens and
 * seconds the nodes took, added up. */
static void print_nodes(const char *dir, json_t *cfg, const thought_graph *g, const eval_scenario_t *s, int quiet,
                        long *tokens, double *wall)
{
    int n_levels = (int)json_integer_value(json_object_get(cfg, "levels"));
    if (!quiet) {
        printf("\n%-5s %-9s %-6s %-8s %8s %12s %8s %9s %7s %6s %6s\n", "node", "iteration", "parent", "status",
               "fitness", "reward bytes", "tokens", "wall s", "aspao", "utr", "vutr");
    }
    for (int i = 0; i < g->n; i++) {
        const thought_node *nd = &g->nodes[i];
        char rp[1400], par[16];
        snprintf(rp, sizeof rp, "%s/nodes/%03d/reward.c", dir, i);
        snprintf(par, sizeof par, nd->parent < 0 ? "-" : "%d", nd->parent);
        long tk = nd->tokens_prompt + nd->tokens_completion;
        *tokens += tk;
        *wall += nd->wall_s;
        if (quiet) continue;
        char bytes[24];
        reward_bytes(rp, bytes, sizeof bytes);
        printf("%-5d %-9d %-6s %-8s %8.3f %12s %8ld %9.1f", i, nd->iteration, par, status_name(nd->status),
               nd->fitness, bytes, tk, nd->wall_s);
        level_set *ls = node_levels(dir, i, n_levels, s);
        if (ls) {
            char aspao[32];
            fmt_aspao(aspao, sizeof aspao, &ls->sum);
            printf(" %7s %6.3f %6.3f\n", aspao, ls->sum.utr, ls->sum.vutr);
        } else
            printf(" %7s %6s %6s\n", "-", "-", "-");
        free(ls);
    }
}

int run_report(const char *dir, int html, int quiet)
{
    char path[1200], err[1600];
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_t *cfg = read_json_file(path, 16L << 20, err, sizeof err);
    if (!json_is_object(cfg)) {
        die_msg("report: %s holds no run (no readable config.json)", dir);
        json_decref(cfg);
        return 1;
    }
    snprintf(path, sizeof path, "%s/graph.json", dir);
    thought_graph g;
    if (graph_load(path, &g, err, sizeof err)) {
        die_msg("report: %s", err);
        json_decref(cfg);
        return 1;
    }
    g.accept = cfg_accept(cfg);
    char target_desc[256] = "?";
    eval_scenario_t scenario, *s = read_target(dir, target_desc, sizeof target_desc, &scenario);
    int best = graph_best(&g);
    long tokens = 0;
    double wall = 0;
    print_nodes(dir, cfg, &g, s, quiet, &tokens, &wall);
    char bp[1024] = "";
    if (best >= 0) best_path(&g, best, bp, sizeof bp);
    if (!quiet) {
        if (best >= 0)
            printf("best: node %d, fitness %.4f, reward %s/nodes/%03d/reward.c\nbest path: %s\n", best,
                   g.nodes[best].fitness, dir, best, bp);
        else
            printf("best: none (no node produced a valid reward)\n");
        printf("author: %s; %ld tokens; %.1f s in nodes\n",
               json_string_value(json_object_get(cfg, "author_label")), tokens, wall);
    }
    /* summary.txt for scripts */
    char sum[2048];
    snprintf(sum, sizeof sum, "best_node %d\nbest_fitness %.6f\nbest_path %s\nnodes %d\ntokens %ld\n", best,
             best >= 0 ? g.nodes[best].fitness : 0.0, bp, g.n, tokens);
    snprintf(path, sizeof path, "%s/summary.txt", dir);
    run_write_text(path, sum);
    int rc = 0;
    if (html) {
        if (write_html(dir, cfg, &g, best, target_desc, s, err, sizeof err)) {
            die_msg("report: %s", err);
            rc = 1;
        } else if (!quiet)
            printf("report: %s/report.html\n", dir);
    }
    graph_free(&g);
    json_decref(cfg);
    return rc;
}
