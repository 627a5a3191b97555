/* Prompt templates: lookup, loading, placeholder filling.  See prompts.h. */
#include "prompts.h"
#include "datadir.h"
#include "graph.h"
#include "llm.h"
#include "util.h"
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROMPT_MAX_BYTES (256L * 1024)
#define PLACEHOLDER_MAX 40

const char *const prompt_template_names[] = {
    "system",          "reward_init",      "reward_refine", "reward_fix",
    "self_align",      "feedback_specific", "feedback_generic", "feedback_none",
    "got_references",  "fitness_llm",      "target_extraction", "retry_note", "evaluator_rules_encounter",
    "evaluator_rules_keydoor", "statistics_warning",
};
const int prompt_template_count = (int)(sizeof prompt_template_names / sizeof prompt_template_names[0]);

const char *const prompt_vocabulary[] = {
    "story",       "reward_api", "iteration",      "iterations", "parent_code", "parent_fitness",
    "feedback",    "references", "reference_list", "code",       "rejection",   "statistics",
    "align_round", "align_rounds", "levels",       "level_count", "target",     "attempt",
    "attempts",    "failure",    "evaluator_rules", "statistics_warning", "warning", NULL,
};

/* What each template must use for its role (space-separated). */
static const struct {
    const char *name;
    const char *needs;
} required[] = {
    {"reward_init", "story reward_api iteration iterations evaluator_rules"},
    {"reward_refine", "story reward_api iteration iterations parent_code feedback references evaluator_rules"},
    {"reward_fix", "reward_api code rejection"},
    {"self_align", "story reward_api code statistics"},
    {"feedback_specific", "story code levels evaluator_rules"},
    {"got_references", "reference_list"},
    {"fitness_llm", "story levels evaluator_rules"},
    {"target_extraction", "story"},
    {"retry_note", "failure"},
    {"statistics_warning", "warning"},
};

static int known(const char *name)
{
    for (int i = 0; prompt_vocabulary[i]; i++)
        if (!strcmp(prompt_vocabulary[i], name)) return 1;
    return 0;
}

/* ---- where the templates are ---------------------------------------------------- */

static const datadir_spec prompts_spec = {"prompts", "rich/system.txt", "prompt templates", "PCGRLLM_PROMPTS"};

int prompts_dir_for_exe(const char *exe, char *out, size_t outlen, char *err, int errlen)
{
    return datadir_for_exe(&prompts_spec, exe, out, outlen, err, errlen);
}

int prompts_dir(char *out, size_t outlen, char *err, int errlen)
{
    return datadir_find(&prompts_spec, out, outlen, err, errlen);
}

char *prompt_load(const char *name, char *err, int errlen)
{
    if (!name || !*name || strlen(name) > 64 || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(name)) {
        snprintf(err, (size_t)errlen, "bad prompt template name '%.64s'", name ? name : "");
        return NULL;
    }
    char dir[PATH_MAX];
    if (prompts_dir(dir, sizeof dir, err, errlen) != 0) return NULL;
    char path[PATH_MAX + 80];
    snprintf(path, sizeof path, "%s/rich/%s.txt", dir, name);
    long len;
    char why[PATH_MAX + 100];
    char *t = read_file(path, PROMPT_MAX_BYTES, &len, why, sizeof why);
    if (!t) {
        snprintf(err, (size_t)errlen, "prompt template %s: %s", name, why);
        return NULL;
    }
    if (memchr(t, 0, (size_t)len)) {
        free(t);
        snprintf(err, (size_t)errlen, "prompt template %s: %s holds a NUL byte", name, path);
        return NULL;
    }
    return t;
}

/* ---- filling -------------------------------------------------------------------- */

typedef struct {
    char *s;
    size_t len, cap;
    int oom;
} sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

/* Length of a placeholder name at p (after '{') if "{name}" follows, else 0. */
static size_t placeholder_len(const char *p)
{
    if (!(*p >= 'a' && *p <= 'z')) return 0;
    size_t n = 1;
    while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9') || p[n] == '_') n++;
    return (p[n] == '}' && n <= PLACEHOLDER_MAX) ? n : 0;
}

/* Walk tmpl; with vars == NULL and out == NULL only check names.  used[] (if
 * given) gets one flag per vocabulary entry seen. */
static int walk(const char *tmpl, const char *what, const prompt_var *vars, int n, sbuf *out, int *used,
                char *err, int errlen)
{
    int line = 1;
    const char *p = tmpl, *run = tmpl;
    while (*p) {
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            if (out) {
                put(out, run, (size_t)(p - run));
                put(out, p, 1);
            }
            p += 2;
            run = p;
            continue;
        }
        if (*p == '\n') line++;
        size_t nl = *p == '{' ? placeholder_len(p + 1) : 0;
        if (!nl) {
            p++;
            continue;
        }
        char name[PLACEHOLDER_MAX + 1];
        memcpy(name, p + 1, nl);
        name[nl] = 0;
        if (!known(name)) {
            snprintf(err, (size_t)errlen, "prompt %s line %d: unknown placeholder {%s} (write {{%s}} for literal braces)",
                     what, line, name, name);
            return -1;
        }
        if (used)
            for (int i = 0; prompt_vocabulary[i]; i++)
                if (!strcmp(prompt_vocabulary[i], name)) used[i] = 1;
        if (out) {
            const char *val = NULL;
            for (int i = 0; i < n; i++)
                if (vars[i].name && !strcmp(vars[i].name, name)) {
                    val = vars[i].value;
                    break;
                }
            if (!val) {
                snprintf(err, (size_t)errlen, "prompt %s line %d: no value given for {%s}", what, line, name);
                return -1;
            }
            put(out, run, (size_t)(p - run));
            put(out, val, strlen(val));
        }
        p += nl + 2;
        run = p;
    }
    if (out) put(out, run, (size_t)(p - run));
    return 0;
}

char *prompt_fill(const char *tmpl, const char *what, const prompt_var *vars, int n, char *err, int errlen)
{
    if (!tmpl) {
        snprintf(err, (size_t)errlen, "prompt %s: no template", what ? what : "?");
        return NULL;
    }
    sbuf b = {0};
    put(&b, "", 0);
    if (walk(tmpl, what ? what : "?", vars, n, &b, NULL, err, errlen) != 0) {
        free(b.s);
        return NULL;
    }
    if (b.oom) {
        free(b.s);
        snprintf(err, (size_t)errlen, "prompt %s: out of memory", what ? what : "?");
        return NULL;
    }
    return b.s;
}

char *prompt_render(const char *name, const prompt_var *vars, int n, char *err, int errlen)
{
    char *t = prompt_load(name, err, errlen);
    if (!t) return NULL;
    char *s = prompt_fill(t, name, vars, n, err, errlen);
    free(t);
    return s;
}

int prompts_check(char *err, int errlen)
{
    for (int i = 0; i < prompt_template_count; i++) {
        const char *name = prompt_template_names[i];
        char *t = prompt_load(name, err, errlen);
        if (!t) return -1;
        int used[64] = {0};
        int rc = walk(t, name, NULL, 0, NULL, used, err, errlen);
        free(t);
        if (rc != 0) return -1;
        for (size_t r = 0; r < sizeof required / sizeof required[0]; r++) {
            if (strcmp(required[r].name, name)) continue;
            char needs[200];
            snprintf(needs, sizeof needs, "%s", required[r].needs);
            for (char *save = NULL, *w = strtok_r(needs, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
                int k = -1;
                for (int v = 0; prompt_vocabulary[v]; v++)
                    if (!strcmp(prompt_vocabulary[v], w)) k = v;
                if (k < 0 || !used[k]) {
                    snprintf(err, (size_t)errlen, "prompt %s does not use {%s}, which its role needs", name, w);
                    return -1;
                }
            }
        }
    }
    return 0;
}

char *prompt_references(const char *const *codes, const double *fitness, const int *kinds, int n, char *err,
                        int errlen)
{
    if (n <= 0) {
        char *e = malloc(1);
        if (e) e[0] = 0;
        return e;
    }
    sbuf b = {0};
    put(&b, "", 0);
    for (int i = 0; i < n; i++) {
        char head[128];
        snprintf(head, sizeof head, "%sReference %d (one of the %s so far, fitness %.3f):\n```c\n", i ? "\n" : "",
                 i + 1, kinds && kinds[i] == REF_WORST ? "worst" : "best", fitness[i]);
        put(&b, head, strlen(head));
        const char *c = codes[i] ? codes[i] : "";
        size_t cl = strlen(c);
        put(&b, c, cl);
        if (cl && c[cl - 1] != '\n') put(&b, "\n", 1);
        put(&b, "```\n", 4);
    }
    if (b.oom) {
        free(b.s);
        snprintf(err, (size_t)errlen, "prompt got_references: out of memory");
        return NULL;
    }
    prompt_var v[] = {{"reference_list", b.s}};
    char *s = prompt_render("got_references", v, 1, err, errlen);
    free(b.s);
    return s;
}

char *prompt_statistics_warning(const char *warning, char *err, int errlen)
{
    if (!warning || !warning[0]) {
        char *e = malloc(1);
        if (e) e[0] = 0;
        else snprintf(err, (size_t)errlen, "prompt statistics_warning: out of memory");
        return e;
    }
    prompt_var v[] = {{"warning", warning}};
    return prompt_render("statistics_warning", v, 1, err, errlen);
}

int prompt_parse_fitness(const char *reply, double *fitness, char *err, int errlen)
{
    char why[160];
    char *js = llm_extract_json(reply, why, sizeof why);
    if (!js) {
        snprintf(err, (size_t)errlen, "fitness reply: %s (expected {\"scores\": [...], \"fitness\": F})", why);
        return -1;
    }
    json_t *j = json_loads(js, 0, NULL);
    free(js);
    json_t *f = json_object_get(j, "fitness");
    json_t *scores = json_object_get(j, "scores");
    double sum = 0;
    size_t count = 0, i;
    json_t *s;
    if (scores && !json_is_array(scores)) {
        json_decref(j);
        snprintf(err, (size_t)errlen, "fitness reply: \"scores\" must be a list of numbers");
        return -1;
    }
    json_array_foreach(scores, i, s) {
        double v = json_number_value(s);
        if (!json_is_number(s) || !(v >= 0.0 && v <= 1.0)) {
            json_decref(j);
            snprintf(err, (size_t)errlen, "fitness reply: score %zu is not a number in [0,1]", i + 1);
            return -1;
        }
        sum += v;
        count++;
    }
    double v;
    if (f) {
        v = json_number_value(f);
        if (!json_is_number(f) || !(v >= 0.0 && v <= 1.0)) {
            json_decref(j);
            snprintf(err, (size_t)errlen, "fitness reply: \"fitness\" is not a number in [0,1]");
            return -1;
        }
    } else if (count > 0) {
        v = sum / (double)count;
    } else {
        json_decref(j);
        snprintf(err, (size_t)errlen, "fitness reply: no \"fitness\" and no \"scores\" in the JSON object");
        return -1;
    }
    json_decref(j);
    *fitness = v;
    return 0;
}
