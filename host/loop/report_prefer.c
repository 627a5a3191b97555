/* The report's section on persona-directed refinement: for each persona a
 * run was refined for (RUN/prefer/PERSONA/refine.json, written by `prefer
 * refine`), the candidates and the dimension profile before and after. */
#include "loop_internal.h"
#include "util.h"
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PERSONAS 32

static int plain_name(const char *s)
{
    if (!*s || strlen(s) > 64) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* A record's number when it is one a refinement writes (scores 1..5,
 * ratings 1..10, fitness 0..1): anything far outside is shown as "-". */
static int plausible(json_t *v)
{
    return json_is_number(v) && fabs(json_number_value(v)) <= 1e3;
}

static void number_cell(FILE *f, json_t *v, const char *fmt)
{
    if (plausible(v)) fprintf(f, fmt, json_number_value(v));
    else fputs("<td>-</td>", f);
}

static void profile_table(FILE *f, json_t *rec)
{
    json_t *before = json_object_get(json_object_get(rec, "before"), "dimensions");
    json_t *after = json_object_get(json_object_get(rec, "after"), "dimensions");
    fprintf(f, "<table><tr><th>dimension</th><th>before</th><th>after</th></tr>\n");
    const char *key;
    json_t *v;
    json_object_foreach(before, key, v) {
        fputs("<tr><td>", f);
        report_html_escape(f, key);
        fputs("</td>", f);
        number_cell(f, v, "<td>%.2f</td>");
        number_cell(f, json_object_get(after, key), "<td>%.2f</td>");
        fputs("</tr>\n", f);
    }
    fputs("<tr><td>rating</td>", f);
    number_cell(f, json_object_get(json_object_get(rec, "before"), "rating"), "<td>%.2f</td>");
    number_cell(f, json_object_get(json_object_get(rec, "after"), "rating"), "<td>%.2f</td>");
    fputs("</tr></table>\n", f);
}

static void candidates_list(FILE *f, json_t *rec)
{
    size_t i;
    json_t *c;
    fputs("<ul>\n", f);
    json_array_foreach(json_object_get(rec, "candidates"), i, c) {
        fputs("<li>", f);
        report_html_escape(f, json_string_value(json_object_get(c, "round")) ?: "?");
        fputc(' ', f);
        report_html_escape(f, json_string_value(json_object_get(c, "direction")));
        fputc(' ', f);
        report_html_escape(f, json_string_value(json_object_get(c, "dimension")));
        fputs(": ", f);
        report_html_escape(f, json_string_value(json_object_get(c, "verdict")));
        json_t *fit = json_object_get(c, "fitness");
        if (plausible(fit)) fprintf(f, " (fitness %.3f)", json_number_value(fit));
        fputs("</li>\n", f);
    }
    fputs("</ul>\n", f);
}

static void persona_section(FILE *f, const char *dir, const char *persona)
{
    char path[1400], err[600];
    snprintf(path, sizeof path, "%s/prefer/%s/refine.json", dir, persona);
    json_t *rec = read_json_file(path, 4L << 20, err, sizeof err);
    fprintf(f, "<h3>%s</h3>\n", persona);
    if (!json_is_object(rec)) {
        fputs("<p>The record cannot be read: ", f);
        report_html_escape(f, err);
        fputs("</p>\n", f);
        json_decref(rec);
        return;
    }
    fprintf(f, "<p>Node %d, judge ", (int)json_integer_value(json_object_get(rec, "node")));
    report_html_escape(f, json_string_value(json_object_get(rec, "judge")));
    fputs(", author ", f);
    report_html_escape(f, json_string_value(json_object_get(rec, "author")));
    fputs("; kept: ", f);
    report_html_escape(f, json_string_value(json_object_get(rec, "kept")));
    fputs("</p>\n", f);
    candidates_list(f, rec);
    profile_table(f, rec);
    json_decref(rec);
}

void report_write_refinements(FILE *f, const char *dir)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/prefer", dir);
    char err[1400];
    DIR *d = open_dir(path, err, sizeof err); /* beneath the run's guard: no link followed */
    if (!d) return;
    char *names[MAX_PERSONAS];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_PERSONAS)
        if (plain_name(e->d_name)) names[n++] = strdup(e->d_name);
    closedir(d);
    if (n == 0) return;
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    fputs("<h2>Refined for personas</h2>\n<p>pcgrllm prefer refine (docs/prefer.md#refinement): each persona's "
          "candidates and the mean dimension profile of the generator's plays before and after.</p>\n", f);
    for (int i = 0; i < n; i++) {
        if (names[i]) persona_section(f, dir, names[i]);
        free(names[i]);
    }
}
