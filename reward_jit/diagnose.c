/* Diagnostics read off the reward's source: the lexical check of
 * compute_reward's type (before either compiler sees it, so both backends
 * give the same one line), and libtcc's messages rewritten where the
 * compiler's own line is not the one to fix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jit_internal.h"

/* ---- tokens ---- */

/* A token of the spliced source outside comments and directive lines:
 * identifiers and numbers whole, string and character literals whole,
 * any other character alone. */
typedef struct {
    const char *p;
    int len, line;
} dtok;

typedef struct {
    dtok *t;
    int n, cap;
} dtoks;

static int is_id0(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_id(int c) { return is_id0(c) || (c >= '0' && c <= '9'); }

static int push(dtoks *v, const char *p, int len, int line)
{
    if (v->n == v->cap) {
        int cap = v->cap ? 2 * v->cap : 256;
        dtok *t = realloc(v->t, sizeof *t * (size_t)cap);
        if (!t) return -1;
        v->t = t, v->cap = cap;
    }
    v->t[v->n++] = (dtok){p, len, line};
    return 0;
}

/* End of the comment starting at i (t[i] = '/', t[i + 1] = '/' or '*'). */
static size_t comment_end(const spliced *s, size_t i)
{
    const char *t = s->text;
    size_t k = i + 2;
    if (t[i + 1] == '/') {
        while (k < s->len && t[k] != '\n') k++;
        return k;
    }
    while (k + 1 < s->len && !(t[k] == '*' && t[k + 1] == '/')) k++;
    return k + 1 < s->len ? k + 2 : s->len;
}

/* End of the token at i (not blank, not a comment). */
static size_t token_end(const spliced *s, size_t i)
{
    const char *t = s->text;
    size_t k = i + 1;
    if (is_id(t[i]) || (t[i] == '.' && t[i + 1] >= '0' && t[i + 1] <= '9')) {
        while (k < s->len && (is_id(t[k]) || t[k] == '.')) k++;
    } else if (t[i] == '"' || t[i] == '\'') {
        while (k < s->len && t[k] != t[i] && t[k] != '\n') k += t[k] == '\\' ? 2 : 1;
        if (k < s->len && t[k] == t[i]) k++;
    }
    return k > s->len ? s->len : k;
}

/* The tokens the compiler parses (directive lines are left out: their
 * tokens never reach the parser).  The scan has refused what would make
 * this reading differ from the compilers' (unterminated literals, ...). */
static int lex(const spliced *s, dtoks *v)
{
    const char *t = s->text;
    int bol = 1, directive = 0;
    for (size_t i = 0; i < s->len;) {
        char c = t[i];
        if (c == '\n') {
            bol = 1, directive = 0, i++;
        } else if (c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r') {
            i++;
        } else if (c == '/' && (t[i + 1] == '/' || t[i + 1] == '*')) {
            i = comment_end(s, i);
        } else {
            if (bol && c == '#') directive = 1;
            bol = 0;
            size_t e = token_end(s, i);
            if (!directive && push(v, t + i, (int)(e - i), s->line[i])) return -1;
            i = e;
        }
    }
    return 0;
}

static int tok_eq(const dtok *t, const char *w) { return (size_t)t->len == strlen(w) && !memcmp(t->p, w, strlen(w)); }

/* The tokens of src; they point into s, which the caller frees. */
static int tokens_of(const char *src, spliced *s, dtoks *v)
{
    memset(v, 0, sizeof *v);
    memset(s, 0, sizeof *s);
    if (jit_splice(src, s)) return -1;
    return lex(s, v);
}

static void tokens_free(spliced *s, dtoks *v)
{
    free(s->text);
    free(s->line);
    free(v->t);
}

/* ---- compute_reward's type ---- */

static int one_of(const dtok *t, const char *const *words)
{
    for (int i = 0; words[i]; i++)
        if (tok_eq(t, words[i])) return 1;
    return 0;
}

static const char *const type_words[] = {"void",   "char",   "short",    "int",      "long",     "float",
                                         "double", "signed", "unsigned", "_Bool",    "const",    "volatile",
                                         "struct", "union",  "enum",     "restrict", NULL};
static const char *const qualifiers[] = {"const", "volatile", "restrict", NULL};
static const char *const storage_words[] = {"static", "extern", "inline", "register", "_Noreturn", NULL};

/* The tokens t[lo..hi) written as C ("level_t *prev"). */
static void render(const dtok *t, int lo, int hi, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (int i = lo; i < hi && n + 1 < len; i++) {
        int space = i > lo && !tok_eq(&t[i], ",") && !tok_eq(&t[i - 1], "*");
        n += (size_t)snprintf(buf + n, len - n, "%s%.*s", space ? " " : "", t[i].len, t[i].p);
        if (n >= len) n = len - 1;
    }
}

/* One parameter t[lo..hi): 1 const level_t * (in any order of const and
 * level_t, or const struct level; a const or restrict after the * and a
 * name may follow), 0 another type, -1 a name this check does not know
 * (a typedef or macro: the compiler decides). */
static int level_param(const dtok *t, int lo, int hi)
{
    /* the name: a last identifier after a type that is more than qualifiers */
    int base = 0;
    for (int i = lo; i + 1 < hi; i++) base |= !one_of(&t[i], qualifiers);
    if (base && is_id0(t[hi - 1].p[0]) && !one_of(&t[hi - 1], type_words) && !tok_eq(&t[hi - 1], "level_t") &&
        !tok_eq(&t[hi - 1], "level"))
        hi--;
    int stars = 0, cnst = 0, level = 0, other = 0, unknown = 0;
    for (int i = lo; i < hi; i++) {
        if (tok_eq(&t[i], "*")) stars++;
        else if (tok_eq(&t[i], "const")) cnst += !stars;
        else if (tok_eq(&t[i], "restrict") && stars) continue;
        else if (tok_eq(&t[i], "level_t") && !stars) level++;
        else if (tok_eq(&t[i], "struct") && i + 1 < hi && tok_eq(&t[i + 1], "level") && !stars) level++, i++;
        else if (is_id0(t[i].p[0]) && !one_of(&t[i], type_words)) unknown = 1;
        else other = 1;
    }
    if (other) return 0;
    if (unknown) return -1;
    return stars == 1 && cnst == 1 && level == 1;
}

/* The parameters between the parentheses t[open] and t[close]: 1 right,
 * 0 wrong, -1 unknown names. */
static int level_params(const dtok *t, int open, int close)
{
    int count = 0, verdict = 1;
    for (int lo = open + 1, i = open + 1, depth = 0; i <= close; i++) {
        if (tok_eq(&t[i], "(")) depth++;
        else if (tok_eq(&t[i], ")") && depth) depth--;
        else if (depth == 0 && (tok_eq(&t[i], ",") || i == close)) {
            int v = level_param(t, lo, i);
            count++;
            if (v == 0) return 0;
            if (v < 0) verdict = -1;
            lo = i + 1;
        }
    }
    return count == 2 ? verdict : 0;
}

/* Checks the declaration whose name is t[k]: 0 right or not known, -1
 * wrong (err says how). */
static int check_declaration(const dtok *t, int n, int k, char *err, int errlen)
{
    int close = k + 1, depth = 0;
    for (; close < n; close++) {
        if (tok_eq(&t[close], "(")) depth++;
        else if (tok_eq(&t[close], ")") && --depth == 0) break;
    }
    if (close >= n) return 0;
    /* what comes before the name, back to the previous declaration */
    int lo = k;
    while (lo > 0 && !tok_eq(&t[lo - 1], ";") && !tok_eq(&t[lo - 1], "}") && !tok_eq(&t[lo - 1], "{")) lo--;
    int ret_lo = lo, star = 0;
    for (int i = lo; i < k; i++) {
        if (one_of(&t[i], storage_words)) {
            if (i == ret_lo) ret_lo++;
            continue;
        }
        if (tok_eq(&t[i], "*")) star = 1;
        else if (!one_of(&t[i], type_words)) return 0; /* a macro, a typedef, or not a declaration */
    }
    if (ret_lo >= k) return 0;
    int ret_ok = !star && k - ret_lo == 1 && tok_eq(&t[ret_lo], "float");
    int params = level_params(t, k + 1, close);
    if (params < 0 && ret_ok) return 0;
    if (ret_ok && params) return 0;
    char ret[128], args[256];
    render(t, ret_lo, k, ret, sizeof ret);
    render(t, k + 2, close, args, sizeof args);
    const char *want = "compute_reward must return float and take (const level_t *prev, const level_t *curr)";
    if (!ret_ok && params == 1)
        snprintf(err, (size_t)errlen, "line %d: %s; it returns %s", t[k].line, want, ret);
    else if (ret_ok)
        snprintf(err, (size_t)errlen, "line %d: %s; it takes %s%s%s", t[k].line, want, args[0] ? "(" : "",
                 args[0] ? args : "no parameters", args[0] ? ")" : "");
    else
        snprintf(err, (size_t)errlen, "line %d: %s; it returns %s and takes (%s)", t[k].line, want, ret, args);
    return -1;
}

int jit_check_signature(const spliced *s, char *err, int errlen)
{
    dtoks v = {0};
    if (lex(s, &v)) {
        free(v.t);
        return 0; /* out of memory: the compiler will say what is wrong */
    }
    int rc = 0, depth = 0;
    for (int i = 0; i < v.n && !rc; i++) {
        if (tok_eq(&v.t[i], "{")) depth++;
        else if (tok_eq(&v.t[i], "}") && depth) depth--;
        else if (depth == 0 && tok_eq(&v.t[i], "compute_reward") && i + 1 < v.n && tok_eq(&v.t[i + 1], "("))
            rc = check_declaration(v.t, v.n, i, err, errlen);
    }
    free(v.t);
    return rc;
}

/* ---- libtcc's messages ---- */

int jit_statement_end(const char *src, int line, const char *got)
{
    spliced s;
    dtoks v;
    size_t gl = strlen(got);
    if (!gl) return 0;
    if (tokens_of(src, &s, &v)) {
        tokens_free(&s, &v);
        return 0;
    }
    int first = -1, matches = 0, end = 0;
    for (int i = 0; i < v.n; i++) {
        if (v.t[i].line != line) continue;
        if (first < 0) first = i;
        const char *p = v.t[i].p;
        matches += !strncmp(p, got, gl) && !(is_id(got[gl - 1]) && is_id(p[gl]));
    }
    if (first > 0 && matches == 1 && !strncmp(v.t[first].p, got, gl) && v.t[first - 1].line < line)
        end = v.t[first - 1].line;
    tokens_free(&s, &v);
    return end;
}

/* "line L: ';' expected (got "X")" names the line of the token after the
 * missing ';': name the line where the statement ended. */
static void move_expected(const char *src, char *msg, size_t len)
{
    int line, end;
    char what[8], got[64];
    if (sscanf(msg, "line %d: '%7[^']' expected (got \"%63[^\"]\")", &line, what, got) == 3 && !strcmp(what, ";") &&
        (end = jit_statement_end(src, line, got)) > 0)
        snprintf(msg, len, "line %d: ';' expected at the end of this line (found \"%s\" on line %d instead)", end,
                 got, line);
}

void jit_explain(const char *src, char *msg, size_t len)
{
    size_t n = strlen(msg);
    const char *q;
    if (strstr(msg, "field not found") || strstr(msg, "incomplete type") || strstr(msg, "pointer to struct")) {
        snprintf(msg + n, len - n, "; level_t is opaque: read levels with the API functions");
    } else if (msg[0] == '\'' && (q = strstr(msg, "' defined twice")) != NULL) {
        char name[128];
        size_t k = (size_t)(q - msg - 1);
        if (k >= sizeof name) k = sizeof name - 1;
        memcpy(name, msg + 1, k);
        name[k] = 0;
        snprintf(msg, len, "line %d: '%s' is %s; choose another name", jit_ident_line(src, name), name,
                 jit_is_api_symbol(name) ? "already defined by the reward API" : "reserved by the linker");
    } else {
        move_expected(src, msg, len);
    }
}
