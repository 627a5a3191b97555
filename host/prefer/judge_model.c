/* The model judge (judge_model.h). */
#include "judge_model.h"
#include "llm_reply.h"
#include "prompts.h"
#include "util.h"
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char dims_schema_hint[] = "dimensions";
static const llm_task task_dims = {LLM_JSON, 1500, NULL, dims_schema_hint};
static const llm_task task_rating = {LLM_JSON, 400, NULL, "rating"};

/* "- id (Name): definition 1: ... 3: ... 5: ..." for each dimension. */
static char *dimensions_text(const json_t *dims)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f) return NULL;
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(dims, "dimensions"), i, d) {
        const json_t *a = json_object_get(d, "anchors");
        fprintf(f, "- %s (%s): %s 1: %s; 3: %s; 5: %s.\n", json_string_value(json_object_get(d, "id")),
                json_string_value(json_object_get(d, "name")), json_string_value(json_object_get(d, "definition")),
                json_string_value(json_object_get(a, "1")), json_string_value(json_object_get(a, "3")),
                json_string_value(json_object_get(a, "5")));
    }
    if (fclose(f)) {
        free(out);
        return NULL;
    }
    return out;
}

static int valid_int(const json_t *v, int lo, int hi)
{
    if (!json_is_integer(v)) return 0;
    json_int_t x = json_integer_value(v);
    return x >= lo && x <= hi ? (int)x : 0;
}

int judge_parse_dimensions(const char *reply, int *scores, char why[][JUDGE_WHY_LEN], char *problem, int len)
{
    char err[200];
    for (int j = 0; j < PREFER_N_DIMS; j++) scores[j] = 0, why[j][0] = 0;
    char *text = llm_extract_json(reply ? reply : "", err, sizeof err);
    json_t *o = text ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;
    free(text);
    if (!json_is_object(o)) {
        say_to(problem, len, "the dimension answer holds no JSON object");
        json_decref(o);
        return 0;
    }
    int valid = 0;
    for (int j = 0; j < PREFER_N_DIMS; j++) {
        const json_t *e = json_object_get(o, dim_id(j));
        const json_t *score = json_is_object(e) ? json_object_get(e, "score") : e;
        scores[j] = valid_int(score, 1, 5);
        if (!scores[j]) {
            if (problem && !problem[0]) say_to(problem, len, "%s: %s", dim_id(j), e ? "not an integer 1..5" : "missing");
            continue;
        }
        const char *w = json_string_value(json_object_get(e, "why"));
        size_t n = w ? strnlen(w, JUDGE_WHY_LEN - 1) : 0;
        memcpy(why[j], w ? w : "", n);
        why[j][n] = 0;
        valid++;
    }
    json_decref(o);
    return valid;
}

int judge_parse_rating(const char *reply, char *problem, int len)
{
    char err[200];
    char *text = llm_extract_json(reply ? reply : "", err, sizeof err);
    json_t *o = text ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;
    free(text);
    int r = valid_int(json_object_get(o, "rating"), 1, 10);
    if (!r && problem && !problem[0]) say_to(problem, len, "the rating answer gives no integer rating 1..10");
    json_decref(o);
    return r;
}

/* One call; the reply's text (malloc'd) or NULL with err. */
static char *ask(const llm_config *c, const llm_task *task, const char *prompt, judge_result *out, char *err,
                 int errlen)
{
    llm_message m = {"user", prompt, NULL, 0};
    llm_reply r;
    int rc = llm_chat_task(c, task, &m, 1, &r, err, errlen);
    out->calls++;
    out->completion_tokens += r.usage.completion_tokens;
    char *text = NULL;
    if (rc == 0 || r.model_failure) text = strdup(r.content ? r.content : ""); /* a model's bad answer is an answer */
    llm_reply_free(&r);
    return text;
}

static double median_of(double *v, int n)
{
    gsl_sort(v, 1, (size_t)n);
    return gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
}

/* Median per dimension over the repeats that answered it. */
static void combine(int scores[][PREFER_N_DIMS], int repeats, judge_result *out)
{
    for (int j = 0; j < PREFER_N_DIMS; j++) {
        double v[JUDGE_MAX_REPEATS];
        int n = 0;
        for (int r = 0; r < repeats; r++)
            if (scores[r][j]) v[n++] = scores[r][j];
        out->answers[j] = n;
        out->score[j] = n ? median_of(v, n) : 0;
        if (n < repeats) out->complete = 0;
    }
    double v[JUDGE_MAX_REPEATS];
    for (int r = 0; r < out->n_ratings; r++) v[r] = out->ratings[r];
    out->rating = out->n_ratings ? median_of(v, out->n_ratings) : 0;
    if (out->n_ratings < repeats) out->complete = 0;
}

int judge_model_assess(const llm_config *c, const json_t *dims, const char *persona_text, const char *play_text,
                       int repeats, judge_result *out, char *err, int errlen)
{
    memset(out, 0, sizeof *out);
    out->complete = 1;
    char *defs = dimensions_text(dims);
    prompt_var v[] = {{"persona", persona_text}, {"dimensions", defs ? defs : ""}, {"trajectory", play_text}};
    char *p_dims = defs ? prompt_render("prefer", "judge_dimensions", v, 3, err, errlen) : NULL;
    char *p_rate = p_dims ? prompt_render("prefer", "judge_overall", v, 3, err, errlen) : NULL;
    free(defs);
    int rc = p_rate ? 0 : -1, scores[JUDGE_MAX_REPEATS][PREFER_N_DIMS];
    for (int r = 0; r < repeats && !rc; r++) {
        char *a = ask(c, &task_dims, p_dims, out, err, errlen);
        char why[PREFER_N_DIMS][JUDGE_WHY_LEN];
        if (!a) {
            rc = -1;
            break;
        }
        judge_parse_dimensions(a, scores[r], why, out->problem, sizeof out->problem);
        for (int j = 0; j < PREFER_N_DIMS; j++)
            if (scores[r][j] && !out->why[j][0]) memcpy(out->why[j], why[j], JUDGE_WHY_LEN);
        free(a);
        /* the rating's own call: it is never shown the scores above */
        char *b = ask(c, &task_rating, p_rate, out, err, errlen);
        if (!b) {
            rc = -1;
            break;
        }
        int y = judge_parse_rating(b, out->problem, sizeof out->problem);
        if (y) out->ratings[out->n_ratings++] = y;
        free(b);
    }
    if (!rc) combine(scores, repeats, out);
    free(p_dims);
    free(p_rate);
    return rc;
}
