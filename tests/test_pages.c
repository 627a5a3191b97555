/* The pages people open, rendered by a real browser: a grid's
 * summary.html (tables and plots) and a run's report.html (the graph,
 * the fitness chart), each screenshot with headless Chromium and the
 * picture checked to be a page, not a blank.  Without Chromium the test is
 * skipped with one line (scripts/test-deps.sh installs it). */
#include "harness.h"
#include "graph.h"
#include "grid_report.h"
#include "grid_rows.h"
#include "run.h"
#include "util.h"
#include <cairo.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Screenshot page (a file) into png; 0, or the shell's status. */
static int screenshot(const char *page, const char *png, char *out, size_t outlen)
{
    return pcg_test_sh(out, outlen,
                       "timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
                       "--hide-scrollbars --no-first-run --user-data-dir=%s/chromium-profile --window-size=1200,1400 "
                       "--screenshot=%s file://%s",
                       pcg_test_tmpdir(), png, page);
}

/* The screenshot shows a page: most of it is background, yet a fair
 * share of pixels are ink, in several colours (text, table lines and the
 * plots' series). */
static void check_not_blank(const char *png, int min_colours)
{
    cairo_surface_t *s = cairo_image_surface_create_from_png(png);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) fail_msg("%s is not a PNG", png);
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    int stride = cairo_image_surface_get_stride(s);
    const unsigned char *d = cairo_image_surface_get_data(s);
    long ink = 0;
    unsigned seen[64] = {0};
    int colours = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint32_t p = *(const uint32_t *)(d + y * stride + 4 * x) & 0xffffff;
            if (p != 0xffffff) ink++;
            /* saturated colours (the plots' series), by hue bucket */
            int r = p >> 16 & 255, g = p >> 8 & 255, b = p & 255, mx = r > g ? (r > b ? r : b) : (g > b ? g : b);
            int mn = r < g ? (r < b ? r : b) : (g < b ? g : b);
            if (mx - mn < 80) continue;
            unsigned key = (unsigned)((r >> 6) << 4 | (g >> 6) << 2 | (b >> 6));
            if (!seen[key]++) colours++;
        }
    cairo_surface_destroy(s);
    double share = (double)ink / ((double)w * h);
    if (w < 800 || h < 800) fail_msg("%s is %dx%d", png, w, h);
    if (share < 0.01 || share > 0.9) fail_msg("%s: %.1f%% of the pixels are not background", png, 100 * share);
    if (colours < min_colours) fail_msg("%s: %d saturated colours, want %d (the plots)", png, colours, min_colours);
}

/* A run directory with a graph of four nodes (the third failed, unless
 * !with_failed), enough for `pcgrllm report` to draw its tree and
 * fitness chart. */
static void fake_run(const char *dir, int with_failed)
{
    char path[PATH_MAX + 32];
    assert_int_equal(make_dirs(dir), 0);
    snprintf(path, sizeof path, "%s/config.json", dir);
    const char *cfg = "{\"format\": 1, \"scenario\": 1, \"story\": \"meet a bat\", \"author\": \"offline\", "
                      "\"author_label\": \"rule-based offline author (baseline, not a language model)\", \"pe\": "
                      "\"tot\", \"iterations\": 4, \"breadth\": 2, \"ablation\": \"full\", \"feedback\": \"specific\"}";
    assert_int_equal(write_file_atomic(path, cfg, strlen(cfg)), 0);
    thought_graph g;
    graph_init(&g, PE_TOT, 2);
    const double fit[] = {0.2, 0.5, with_failed ? -1 : 0.3, 0.8};
    const int parent[] = {-1, 0, 1, 1};
    for (int i = 0; i < 4; i++) {
        int id = graph_add(&g, i + 1, parent[i]);
        snprintf(g.nodes[id].reward_path, sizeof g.nodes[id].reward_path, "nodes/%03d/reward.c", id);
        graph_finish(&g, id, fit[i] < 0 ? NODE_FAILED : NODE_OK, fit[i] < 0 ? 0 : fit[i]);
        if (fit[i] < 0) g.nodes[id].reward_path[0] = 0;
    }
    snprintf(path, sizeof path, "%s/graph.json", dir);
    assert_int_equal(graph_save(&g, path), 0);
    graph_free(&g);
}

static void pages_render_in_chromium(void **state)
{
    (void)state;
    char out[8192], dir[PATH_MAX], page[PATH_MAX + 32], png[PATH_MAX + 32];
    if (pcg_test_sh(out, sizeof out, "command -v chromium") != 0) {
        fprintf(stderr, "pages_render_in_chromium skipped: chromium is not installed (scripts/test-deps.sh)\n");
        skip();
    }
    /* a grid's summary page from rows: CoT and GoT over three iterations */
    grid_rows R;
    grid_tables T;
    int scen[] = {1, 2}, abl[] = {ABL_ZS, ABL_FULL};
    assert_int_equal(grid_rows_init(&R, scen, 2, 3, abl, 2), 0);
    for (int s = 1; s <= 2; s++)
        for (int pe = 0; pe < 2; pe++)
            for (int r = 0; r < 3; r++)
                for (int it = 1; it <= 3; it++) {
                    grid_row w;
                    grid_row_blank(&w);
                    snprintf(w.key.model, sizeof w.key.model, "offline");
                    snprintf(w.key.pe, sizeof w.key.pe, pe ? "got" : "cot");
                    snprintf(w.key.feedback, sizeof w.key.feedback, "specific");
                    snprintf(w.key.feedback_input, sizeof w.key.feedback_input, "text");
                    w.scenario = s, w.repeat = r, w.iteration = it, w.ok = 1, w.final = it == 3;
                    w.ablation = it == 1 && r == 0 ? ABL_ZS : ABL_FULL;
                    w.fitness = w.best_so_far = fmod(0.13 * (s + pe + r) + 0.21 * it, 1.0);
                    assert_int_equal(grid_rows_add(&R, &w), 0);
                }
    assert_int_equal(grid_tables_compute(&R, GRID_VALUE_FINAL, &T), 0);
    char *html = grid_tables_html(&R, &T, "pages test");
    assert_non_null(html);
    snprintf(page, sizeof page, "%s/summary.html", pcg_test_tmpdir());
    assert_int_equal(write_file_atomic(page, html, strlen(html)), 0);
    free(html);
    grid_tables_free(&T);
    grid_rows_free(&R);
    snprintf(png, sizeof png, "%s/summary.png", pcg_test_tmpdir());
    if (screenshot(page, png, out, sizeof out) != 0) fail_msg("chromium: %s", out);
    check_not_blank(png, 2);
    /* a run's report */
    snprintf(dir, sizeof dir, "%s/pages-run", pcg_test_tmpdir());
    fake_run(dir, 1);
    if (pcg_test_sh(out, sizeof out, "%s report %s", pcg_test_binary(), dir) != 0) fail_msg("report: %s", out);
    snprintf(page, sizeof page, "%s/report.html", dir);
    char *rep = pcg_test_slurp(page);
    assert_non_null(rep);
    assert_non_null(strstr(rep, "alt='fitness by iteration'"));
    free(rep);
    snprintf(png, sizeof png, "%s/report.png", pcg_test_tmpdir());
    if (screenshot(page, png, out, sizeof out) != 0) fail_msg("chromium: %s", out);
    check_not_blank(png, 2);
}

/* The fitness chart's legend names the failed-node crosses only when a
 * node failed (the image's title lists the legend's entries). */
static void report_failed_legend_only_when_failed(void **state)
{
    (void)state;
    char out[8192], dir[PATH_MAX], page[PATH_MAX + 32];
    for (int failed = 0; failed < 2; failed++) {
        snprintf(dir, sizeof dir, "%s/legend-run-%d", pcg_test_tmpdir(), failed);
        fake_run(dir, failed);
        if (pcg_test_sh(out, sizeof out, "%s report %s", pcg_test_binary(), dir) != 0) fail_msg("report: %s", out);
        snprintf(page, sizeof page, "%s/report.html", dir);
        char *rep = pcg_test_slurp(page);
        assert_non_null(rep);
        const char *want = failed ? "alt='fitness by iteration' title='legend: best so far, node fitness, failed node'"
                                  : "alt='fitness by iteration' title='legend: best so far, node fitness'";
        assert_non_null(strstr(rep, want));
        free(rep);
    }
}

PCG_TESTS(pages, cmocka_unit_test(pages_render_in_chromium), cmocka_unit_test(report_failed_legend_only_when_failed))
