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

const char *const prompt_profiles[] = {"paper", "rich", NULL};

const char *const prompt_vocabulary[] = {
    "story",        "reward_api",     "tile_enum",   "iteration",     "iterations",   "progress",
    "thought_tips", "parent_code",    "parent_fitness", "feedback",   "references",   "reference_list",
    "number",       "code",           "fitness",     "kind",          "summary",      "solvability",
    "solutions",    "reachable",      "rejection",   "statistics",    "mean",         "std",
    "zero_percent", "statistics_warning", "warning", "fix_request",   "align_round",  "align_rounds",
    "levels",       "tiles",          "level_count", "important_tiles", "target",     "attempt",
    "attempts",     "failure",        "evaluator_rules", "level",     "step",         "steps",
    "history",      "guidance",       "legs",        "validity",      "outcome",      "calls",
    "persona",      "dimensions",     "trajectory",  "view",          "moves",        "dimension",
    "direction",    "reward",         "evidence",    NULL,
};

/* A template of a profile and the placeholders its role needs
 * (space-separated). */
typedef struct {
    const char *name;
    const char *needs;
} template_role;

/* The templates of both profiles, each with the same role. */
static const template_role common_templates[] = {
    {"system", ""},
    {"levels_in_image", ""},
    {"feedback_generic", ""},
    {"feedback_none", ""},
    {"got_references", "reference_list"},
    {"got_references_summaries", "reference_list"},
    {"got_reference_fitness", "number code fitness kind"},
    {"got_reference_summary", "number code summary"},
    {"evaluation_summary", "solvability solutions reachable"},
    {"evaluation_summary_none", ""},
    {"target_extraction", "story"},
    {"evaluator_rules_encounter", ""},
    {"evaluator_rules_keydoor", ""},
    {NULL, NULL},
};

/* Today's engine prompts, kept as they were. */
static const template_role rich_templates[] = {
    {"reward_init", "story reward_api iteration iterations evaluator_rules"},
    {"reward_refine", "story reward_api iteration iterations parent_code feedback references evaluator_rules"},
    {"reward_fix", "reward_api code rejection"},
    {"self_align", "story reward_api code statistics"},
    {"statistics_warning", "warning"},
    {"feedback_specific", "story code levels evaluator_rules"},
    {"fitness_llm", "story levels evaluator_rules"},
    {"retry_note", "failure"},
    {"reward_api_minimal", ""},
    {"reward_api_full", ""},
    {NULL, NULL},
};

/* What the paper's reference implementation sends, call by call. */
static const template_role paper_templates[] = {
    {"reward_init", "story reward_api evaluator_rules"},
    {"reward_refine", "story reward_api parent_code feedback thought_tips evaluator_rules"},
    {"reward_fix", "story reward_api code rejection thought_tips evaluator_rules"},
    {"thoughts_cot", "iteration iterations progress"},
    {"thoughts_got", "thought_tips summary references"},
    {"got_no_references", ""},
    {"self_align", "code statistics fix_request"},
    {"align_fix", "code rejection"},
    {"statistics_line", "mean std zero_percent"},
    {"feedback_system", ""},
    {"feedback_specific", "story important_tiles code tile_enum levels evaluator_rules"},
    {"level_array", "number tiles"},
    {"fitness_llm", "story tile_enum levels evaluator_rules"},
    {"reward_api_minimal", "tile_enum"},
    {"reward_api_full", "tile_enum"},
    {"tiles_dungeon", ""},
    {"tiles_treasure", ""},
    {NULL, NULL},
};

/* The editing loop's (host/harness/), in prompts/harness/: a set of its
 * own, not a profile of the reward-design search. */
static const template_role harness_templates[] = {
    {"edit_system", ""},
    {"edit_request", "target level step steps feedback history guidance"},
    {"edit_feedback", "legs validity"},
    {"edit_history", "history"},
    {"edit_history_step", "step calls outcome legs validity"},
    {"edit_guidance", "level guidance"},
    {"edit_retry", "failure"},
    {"edit_witness", "level"},
    {NULL, NULL},
};

static const template_role *profile_templates(const char *profile)
{
    if (profile && !strcmp(profile, "paper")) return paper_templates;
    if (profile && !strcmp(profile, "rich")) return rich_templates;
    return NULL;
}

const char *const *prompt_template_names(const char *profile)
{
    /* the common names, then the profile's own, built once per profile */
    static const char *names[2][96];
    if (profile && !strcmp(profile, "harness")) {
        static const char *harness[16];
        if (!harness[0])
            for (int i = 0; harness_templates[i].name && i < 15; i++) harness[i] = harness_templates[i].name;
        return harness;
    }
    const template_role *t = profile_templates(profile);
    if (!t) return NULL;
    const char **out = names[t == paper_templates ? 0 : 1];
    if (!out[0]) {
        int n = 0;
        for (int i = 0; common_templates[i].name; i++) out[n++] = common_templates[i].name;
        for (int i = 0; t[i].name && n < 95; i++) out[n++] = t[i].name;
    }
    return out;
}

static int known(const char *name)
{
    for (int i = 0; prompt_vocabulary[i]; i++)
        if (!strcmp(prompt_vocabulary[i], name)) return 1;
    return 0;
}

/* ---- where the templates are ---------------------------------------------------- */

static const datadir_spec prompts_spec = {"prompts", "paper/system.txt", "prompt templates", "PCGRLLM_PROMPTS"};

int prompts_dir_for_exe(const char *exe, char *out, size_t outlen, char *err, int errlen)
{
    return datadir_for_exe(&prompts_spec, exe, out, outlen, err, errlen);
}

int prompts_dir(char *out, size_t outlen, char *err, int errlen)
{
    return datadir_find(&prompts_spec, out, outlen, err, errlen);
}

static int plain_name(const char *s)
{
    return s && *s && strlen(s) <= 64 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(s);
}

char *prompt_load(const char *profile, const char *name, char *err, int errlen)
{
    if (!plain_name(name) || !plain_name(profile)) {
        snprintf(err, (size_t)errlen, "bad prompt template name '%.64s/%.64s'", profile ? profile : "",
                 name ? name : "");
        return NULL;
    }
    char dir[PATH_MAX];
    if (prompts_dir(dir, sizeof dir, err, errlen) != 0) return NULL;
    char path[PATH_MAX + 160];
    snprintf(path, sizeof path, "%s/%s/%s.txt", dir, profile, name);
    long len;
    char why[PATH_MAX + 200];
    char *t = read_file(path, PROMPT_MAX_BYTES, &len, why, sizeof why);
    if (!t) {
        snprintf(err, (size_t)errlen, "prompt template %s/%s: %s", profile, name, why);
        return NULL;
    }
    if (memchr(t, 0, (size_t)len)) {
        free(t);
        snprintf(err, (size_t)errlen, "prompt template %s/%s: %s holds a NUL byte", profile, name, path);
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

char *prompt_render(const char *profile, const char *name, const prompt_var *vars, int n, char *err, int errlen)
{
    char *t = prompt_load(profile, name, err, errlen);
    if (!t) return NULL;
    char what[140];
    snprintf(what, sizeof what, "%s/%s", profile, name);
    char *s = prompt_fill(t, what, vars, n, err, errlen);
    free(t);
    return s;
}

/* One template of a profile: present, known placeholders, its needs used. */
static int check_template(const char *profile, const template_role *role, char *err, int errlen)
{
    char what[140];
    snprintf(what, sizeof what, "%s/%s", profile, role->name);
    char *t = prompt_load(profile, role->name, err, errlen);
    if (!t) return -1;
    int used[64] = {0};
    int rc = walk(t, what, NULL, 0, NULL, used, err, errlen);
    free(t);
    if (rc != 0) return -1;
    char needs[200];
    snprintf(needs, sizeof needs, "%s", role->needs);
    for (char *save = NULL, *w = strtok_r(needs, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        int k = -1;
        for (int v = 0; prompt_vocabulary[v]; v++)
            if (!strcmp(prompt_vocabulary[v], w)) k = v;
        if (k < 0 || !used[k]) {
            snprintf(err, (size_t)errlen, "prompt %s does not use {%s}, which its role needs", what, w);
            return -1;
        }
    }
    return 0;
}

int prompts_check(char *err, int errlen)
{
    for (int p = 0; prompt_profiles[p]; p++) {
        const template_role *own = profile_templates(prompt_profiles[p]);
        for (int i = 0; common_templates[i].name; i++)
            if (check_template(prompt_profiles[p], &common_templates[i], err, errlen)) return -1;
        for (int i = 0; own[i].name; i++)
            if (check_template(prompt_profiles[p], &own[i], err, errlen)) return -1;
    }
    for (int i = 0; harness_templates[i].name; i++)
        if (check_template("harness", &harness_templates[i], err, errlen)) return -1;
    return 0;
}

char *prompt_references(const char *profile, int summaries, const prompt_reference *refs, int n, char *err,
                        int errlen)
{
    if (n <= 0) {
        char *e = malloc(1);
        if (e) e[0] = 0;
        return e;
    }
    char *item = prompt_load(profile, summaries ? "got_reference_summary" : "got_reference_fitness", err, errlen);
    if (!item) return NULL;
    sbuf b = {0};
    put(&b, "", 0);
    for (int i = 0; i < n; i++) {
        char num[16], fit[32];
        snprintf(num, sizeof num, "%d", i + 1);
        snprintf(fit, sizeof fit, "%.3f", refs[i].fitness);
        /* the code ends its line, so that a closing fence after it stands alone */
        const char *c = refs[i].code ? refs[i].code : "";
        size_t cl = strlen(c);
        char *code = malloc(cl + 2);
        if (!code) {
            b.oom = 1;
            break;
        }
        memcpy(code, c, cl + 1);
        if (cl && c[cl - 1] != '\n') memcpy(code + cl, "\n", 2);
        prompt_var v[] = {{"number", num},
                          {"code", code},
                          {"fitness", fit},
                          {"kind", refs[i].kind == REF_WORST ? "worst" : "best"},
                          {"summary", refs[i].summary ? refs[i].summary : ""}};
        char *one = prompt_fill(item, summaries ? "got_reference_summary" : "got_reference_fitness", v, 5, err,
                                errlen);
        free(code);
        if (!one) {
            free(item);
            free(b.s);
            return NULL;
        }
        if (i) put(&b, "\n", 1);
        put(&b, one, strlen(one));
        free(one);
    }
    free(item);
    if (b.oom || !b.s) {
        free(b.s);
        snprintf(err, (size_t)errlen, "prompt got_references: out of memory");
        return NULL;
    }
    prompt_var v[] = {{"reference_list", b.s}};
    char *s = prompt_render(profile, summaries ? "got_references_summaries" : "got_references", v, 1, err, errlen);
    free(b.s);
    return s;
}

char *prompt_statistics_warning(const char *profile, const char *warning, char *err, int errlen)
{
    if (!warning || !warning[0]) {
        char *e = malloc(1);
        if (e) e[0] = 0;
        else snprintf(err, (size_t)errlen, "prompt statistics_warning: out of memory");
        return e;
    }
    prompt_var v[] = {{"warning", warning}};
    return prompt_render(profile, "statistics_warning", v, 1, err, errlen);
}

int prompt_parse_fitness(const char *reply, double *fitness, char *err, int errlen)
{
    char why[160];
    char *js = llm_extract_json(reply, why, sizeof why);
    if (!js) {
        snprintf(err, (size_t)errlen,
                 "fitness reply: %s (expected {\"scores\": [...], \"fitness\": F} or {\"acc_imp_perc\": F})", why);
        return -1;
    }
    json_t *j = json_loads(js, 0, NULL);
    free(js);
    json_t *f = json_object_get(j, "fitness");
    if (!f) f = json_object_get(j, "acc_imp_perc"); /* the paper's judge names its one metric */
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
            snprintf(err, (size_t)errlen, "fitness reply: the fitness is not a number in [0,1]");
            return -1;
        }
    } else if (count > 0) {
        v = sum / (double)count;
    } else {
        json_decref(j);
        snprintf(err, (size_t)errlen, "fitness reply: no \"fitness\", \"acc_imp_perc\" or \"scores\" in the JSON object");
        return -1;
    }
    json_decref(j);
    *fitness = v;
    return 0;
}
