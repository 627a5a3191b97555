/* Reading model replies: the code or JSON in a reply, and the watch kept
 * on a reply while it streams in (has the answer closed? is the model
 * looping?).  No network here: host/llm/llm.c is the transport. */
#include "llm_reply.h"
#include "util.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Count fence lines (``` at a line start, after up to 3 spaces). */
static int count_fences(const char *s)
{
    int n = 0;
    const char *p = s;
    while (*p) {
        const char *q = p;
        int sp = 0;
        while (*q == ' ' && sp < 3) q++, sp++;
        if (!strncmp(q, "```", 3)) n++;
        const char *nl = strchr(p, '\n');
        if (!nl) break;
        p = nl + 1;
    }
    return n;
}

/* Append a continuation to the text so far.  If the text ends inside an open
 * code block and the continuation starts by opening a new one anyway, that
 * fence line is dropped. */
char *llm_join_continuation(char *sofar, const char *more)
{
    const char *m = more;
    if (count_fences(sofar) % 2 == 1) {
        const char *q = m;
        while (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t') q++;
        if (!strncmp(q, "```", 3)) {
            const char *nl = strchr(q, '\n');
            m = nl ? nl + 1 : q + strlen(q);
        }
    }
    size_t a = strlen(sofar), b = strlen(m);
    char *o = realloc(sofar, a + b + 1);
    if (!o) return NULL;
    memcpy(o + a, m, b + 1);
    return o;
}

int llm_blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\n' && *s != '\r' && *s != '\t') return 0;
    return 1;
}

/* ---- extraction ------------------------------------------------------------------- */

/* If line starts a fence (up to 3 spaces, then 3+ backticks), return the
 * number of backticks and set info to the info string's first word
 * (lower-cased); else 0. */
static int fence_at(const char *line, const char *end, char *info, size_t infolen)
{
    const char *p = line;
    int sp = 0;
    while (p < end && *p == ' ' && sp < 3) p++, sp++;
    int ticks = 0;
    while (p < end && *p == '`') p++, ticks++;
    if (ticks < 3) return 0;
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    size_t j = 0;
    while (p < end && *p != ' ' && *p != '\t' && *p != '\r' && *p != '{' && j + 1 < infolen) {
        char ch = *p++;
        if (ch == '`') return 0; /* inline code span, not a fence */
        info[j++] = (char)(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
    }
    info[j] = 0;
    return ticks;
}

static int code_lang(const char *info)
{
    static const char *ok[] = {"", "c", "cpp", "c++", "cc", "cxx", "h", "cuda", "cu"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (!strcmp(info, ok[i])) return 1;
    return 0;
}

/* Is [line,end) a closing fence for a block opened with `ticks` backticks? */
static int closes(const char *line, const char *end, int ticks)
{
    const char *p = line;
    int sp = 0;
    while (p < end && *p == ' ' && sp < 3) p++, sp++;
    int t = 0;
    while (p < end && *p == '`') p++, t++;
    if (t < ticks) return 0;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
    return p == end;
}

/* The closing fence line of a block opened with `ticks` backticks whose body
 * starts at body, or NULL when it has none yet; *after, when asked for, is
 * where the text goes on past that line. */
static const char *closing_fence(const char *body, int ticks, const char **after)
{
    const char *q = body;
    while (*q) {
        const char *qn = strchr(q, '\n');
        const char *qe = qn ? qn : q + strlen(q);
        if (closes(q, qe, ticks)) {
            if (after) *after = qn ? qn + 1 : qe;
            return q;
        }
        q = qn ? qn + 1 : qe;
    }
    return NULL;
}

static char *trimmed_copy(const char *a, const char *b)
{
    while (a < b && (*a == ' ' || *a == '\n' || *a == '\r' || *a == '\t')) a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\n' || b[-1] == '\r' || b[-1] == '\t')) b--;
    size_t n = (size_t)(b - a);
    char *o = malloc(n + 2);
    if (!o) return NULL;
    memcpy(o, a, n);
    o[n] = '\n';
    o[n + 1] = 0;
    return o;
}

/* Reasoning models served by llama-server or Ollama may put their thinking in
 * the reply as <think>...</think>; the answer is what follows it. */
static const char *after_thinking(const char *reply)
{
    const char *last = NULL;
    for (const char *p = reply; (p = strstr(p, "</think>")) != NULL; p += 8) last = p + 8;
    return last ? last : reply;
}

/* The first fenced block in a code language with non-blank content:
 * [*a, *b) is its body, *closed whether its closing fence has arrived.
 * Returns 1 if found; else 0, with the number of fence lines seen, of empty
 * code blocks, and the first other language in other. */
typedef struct {
    const char *a, *b;
    int closed, fences, empty_blocks;
    char other[24];
} code_scan;

static int scan_code(const char *reply, code_scan *s)
{
    memset(s, 0, sizeof *s);
    const char *p = reply;
    while (*p) {
        const char *nl = strchr(p, '\n');
        const char *end = nl ? nl : p + strlen(p);
        char info[24];
        int ticks = fence_at(p, end, info, sizeof info);
        if (!ticks) {
            p = nl ? nl + 1 : end;
            continue;
        }
        s->fences++;
        const char *body = nl ? nl + 1 : end;
        const char *after = NULL;
        const char *body_end = closing_fence(body, ticks, &after);
        int closed = body_end != NULL;
        if (!closed) { /* no closing fence: the block runs to the end */
            body_end = body + strlen(body);
            after = body_end;
        }
        if (code_lang(info)) {
            int has = 0;
            for (const char *c = body; c < body_end && !has; c++)
                if (*c != ' ' && *c != '\n' && *c != '\r' && *c != '\t') has = 1;
            if (has) {
                s->a = body;
                s->b = body_end;
                s->closed = closed;
                return 1;
            }
            s->empty_blocks++;
        } else if (!s->other[0]) {
            snprintf(s->other, sizeof s->other, "%s", info);
        }
        p = after;
    }
    return 0;
}

char *llm_extract_code(const char *reply, char *err, int errlen)
{
    if (reply) reply = after_thinking(reply);
    if (!reply || llm_blank(reply)) {
        snprintf(err, (size_t)errlen, "the reply is empty: expected C code in a ```c block");
        return NULL;
    }
    code_scan s;
    if (scan_code(reply, &s)) {
        char *o = trimmed_copy(s.a, s.b);
        if (!o) snprintf(err, (size_t)errlen, "out of memory");
        return o;
    }
    if (s.fences == 0) {
        char *o = trimmed_copy(reply, reply + strlen(reply));
        if (!o) snprintf(err, (size_t)errlen, "out of memory");
        return o;
    }
    if (s.other[0])
        snprintf(err, (size_t)errlen,
                 "the reply has code only in a ```%s block; write the reward in C inside a ```c block", s.other);
    else
        snprintf(err, (size_t)errlen, "the reply's code block%s empty; put the C reward inside a ```c block",
                 s.empty_blocks > 1 ? "s are" : " is");
    return NULL;
}

int llm_code_closed(const char *reply)
{
    code_scan s;
    return reply && scan_code(after_thinking(reply), &s) && s.closed;
}

/* End of the balanced JSON object starting at s ('{'), or NULL. */
static const char *json_object_end(const char *s) { return json_text_end(s, '{', '}'); }

static char *valid_object(const char *a, const char *b)
{
    json_t *j = json_loadb(a, (size_t)(b - a), 0, NULL);
    int ok = json_is_object(j);
    json_decref(j);
    if (!ok) return NULL;
    char *o = malloc((size_t)(b - a) + 1);
    if (!o) return NULL;
    memcpy(o, a, (size_t)(b - a));
    o[b - a] = 0;
    return o;
}

char *llm_extract_json(const char *reply, char *err, int errlen)
{
    if (reply) reply = after_thinking(reply);
    if (!reply || llm_blank(reply)) {
        snprintf(err, (size_t)errlen, "the reply is empty: expected a JSON object");
        return NULL;
    }
    /* a ```json block first */
    const char *p = reply;
    while (*p) {
        const char *nl = strchr(p, '\n');
        const char *end = nl ? nl : p + strlen(p);
        char info[24];
        int ticks = fence_at(p, end, info, sizeof info);
        if (ticks && !strcmp(info, "json") && nl) {
            const char *body = nl + 1;
            const char *q = closing_fence(body, ticks, NULL);
            if (!q) q = body + strlen(body);
            const char *a = body;
            while (a < q && *a != '{') a++;
            const char *b = a < q ? json_object_end(a) : NULL;
            if (b && b <= q) {
                char *o = valid_object(a, b);
                if (o) return o;
            }
        }
        p = nl ? nl + 1 : end;
    }
    /* else the first balanced object that parses */
    for (const char *a = strchr(reply, '{'); a; a = strchr(a + 1, '{')) {
        const char *b = json_object_end(a);
        if (!b) continue;
        char *o = valid_object(a, b);
        if (o) return o;
    }
    snprintf(err, (size_t)errlen, "the reply contains no JSON object");
    return NULL;
}

int llm_json_closed(const char *reply)
{
    if (!reply) return 0;
    const char *a = strchr(after_thinking(reply), '{');
    return a && json_object_end(a) != NULL;
}

/* ---- loops ------------------------------------------------------------------------ */

/* A model without chat training (or served without its chat template) often
 * falls into a loop: the same passage again and again until the token limit.
 * Two signs, both on the tail of the text so far, both far beyond what a
 * reward function or an answer repeats:
 * - the tail is periodic: its last max(3p, LOOP_MIN_SPAN) characters repeat
 *   with a period p of up to LOOP_MAX_PERIOD characters (exact repetition);
 * - among its last LOOP_LINES non-blank lines, one line of at least
 *   LOOP_LINE_MIN characters occurs LOOP_LINE_REPEATS times or more, numbers
 *   ignored ("Step 3: ..." / "Step 14: ..." is one line). */
#define LOOP_MAX_PERIOD 1500
#define LOOP_MIN_SPAN 320
#define LOOP_LINES 60
#define LOOP_LINE_MIN 12
#define LOOP_LINE_REPEATS 12

static void excerpt(const char *s, size_t n, char *out, size_t outlen)
{
    size_t j = 0;
    for (size_t i = 0; i < n && j + 4 < outlen; i++) {
        unsigned char ch = (unsigned char)s[i];
        out[j++] = ch == '\n' || ch == '\r' || ch == '\t' ? ' ' : ch < 32 ? '?' : (char)ch;
    }
    if (j + 4 >= outlen) {
        memcpy(out + j, "...", 3);
        j += 3;
    }
    out[j] = 0;
}

static int periodic_tail(const char *t, size_t len, char *why, size_t whylen)
{
    for (size_t p = 1; p <= LOOP_MAX_PERIOD && 3 * p <= len; p++) {
        size_t span = 3 * p > LOOP_MIN_SPAN ? 3 * p : LOOP_MIN_SPAN;
        if (span > len) return 0;
        const char *end = t + len;
        size_t k = 0;
        while (k + p < span && end[-1 - (long)k] == end[-1 - (long)(k + p)]) k++;
        if (k + p < span) continue;
        char ex[72];
        excerpt(end - p, p, ex, sizeof ex);
        if (why) snprintf(why, whylen, "the same %zu-character passage %zu times over (\"%s\")", p, span / p, ex);
        return 1;
    }
    return 0;
}

/* The line [a, b) trimmed, each run of digits as one '#', into out; its length. */
static size_t norm_line(const char *a, const char *b, char *out, size_t outlen)
{
    while (a < b && (*a == ' ' || *a == '\t' || *a == '\r')) a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r')) b--;
    size_t n = 0;
    for (; a < b && n + 1 < outlen; a++) {
        int digit = *a >= '0' && *a <= '9';
        if (digit && n > 0 && out[n - 1] == '#') continue;
        out[n++] = digit ? '#' : *a;
    }
    out[n] = 0;
    return n;
}

static int repeated_lines(const char *t, size_t len, char *why, size_t whylen)
{
    char lines[LOOP_LINES][96];
    int n = 0;
    const char *end = t + len;
    while (end > t && n < LOOP_LINES) {
        const char *start = end;
        while (start > t && start[-1] != '\n') start--;
        if (norm_line(start, end, lines[n], sizeof lines[n]) >= LOOP_LINE_MIN) n++;
        end = start > t ? start - 1 : t;
    }
    for (int i = 0; i < n; i++) {
        int same = 1;
        for (int j = i + 1; j < n; j++) same += !strcmp(lines[i], lines[j]);
        if (same < LOOP_LINE_REPEATS) continue;
        char ex[72];
        excerpt(lines[i], strlen(lines[i]), ex, sizeof ex);
        if (why) snprintf(why, whylen, "the same line %d times in its last %d lines (\"%s\")", same, n, ex);
        return 1;
    }
    return 0;
}

int llm_text_loops(const char *text, size_t len, char *why, size_t whylen)
{
    if (!text || !len) return 0;
    return periodic_tail(text, len, why, whylen) || repeated_lines(text, len, why, whylen);
}
