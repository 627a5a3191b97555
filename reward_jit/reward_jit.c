/* CPU reward JIT: source checks and libtcc compilation into a read-only,
 * non-writable program image that only sees the reward API. */
#include "reward_jit.h"
#include "jit_internal.h"
#include "memo.h"
#include <libtcc.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern const char pcg_embed_reward_api_h[];

/* ------------------------------------------------------------------ */
/* Source scan
 *
 * The source is checked on the tokens a C preprocessor sees, following the
 * translation phases, so that no spelling of a forbidden construct reaches
 * either compiler:
 *   1. trigraphs are refused outright (raw_check);
 *   2. backslash-newline splices (also backslash + \r\n) are joined (splice);
 *   3. each comment is one space, and space, \t, \v, \f and \r separate
 *      tokens (scan_tokens).
 * A line whose first token is # (or %:) is a directive, named by the next
 * token after any whitespace or comments; only an allow-list of directive
 * names passes (scan_check).  The scan does not evaluate #if: every group is
 * checked, taken or not.  Where compilers read the same bytes differently
 * (a lone \r ends a line for clang-like front ends, not for tcc), the scan
 * takes the reading that shows more code, or refuses the spelling. */

static int is_alpha_(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_ident(int c) { return is_alpha_(c) || is_digit(c); }
static int is_blank(int c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

/* Phases 1 and 2 on the raw bytes; line numbers are the model's own.
 * Trigraphs are replaced before comments and literals exist, so a "?\?/"
 * could end a string early or splice a // comment for a compiler that
 * honours them: all nine are refused, wherever they are.  A backslash
 * followed by spaces (or by a lone \r) at the end of a line is a splice for
 * gcc and clang but a stray backslash for tcc: refused as ambiguous.  So is
 * a backslash ending the source, which would splice the engine's own code
 * that follows the source onto its last line. */
/* Bytes of a UTF-8 sequence starting at p (1..4), or 0 if it is not one:
 * the compilers read other bytes differently (NVRTC stops at 0xFF). */
static int utf8_length(const unsigned char *p)
{
    int n = p[0] < 0x80 ? 1 : p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
                          : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
    for (int k = 1; k < n; k++)
        if ((p[k] & 0xc0) != 0x80) return 0;
    return n;
}

static int raw_check(const char *src, char *err, int errlen)
{
    int line = 1;
    for (size_t i = 0; src[i]; i++) {
        unsigned char b = (unsigned char)src[i];
        if (b >= 0x80 || (b < 0x20 && !strchr("\t\n\v\f\r", b)) || b == 0x7f) {
            int n = b >= 0x80 ? utf8_length((const unsigned char *)src + i) : 0;
            if (!n) {
                snprintf(err, (size_t)errlen,
                         "line %d: byte 0x%02x: reward code is plain text (UTF-8, no control characters)", line, b);
                return -1;
            }
            i += (size_t)n - 1;
        } else if (src[i] == '\n') {
            line++;
        } else if (src[i] == '?' && src[i + 1] == '?' && src[i + 2] && strchr("=(/)'<!>-", src[i + 2])) {
            snprintf(err, (size_t)errlen, "line %d: trigraphs (?\?%c) are not allowed in reward code", line,
                     src[i + 2]);
            return -1;
        } else if (src[i] == '\\') {
            size_t k = i + 1;
            int cr = 0;
            while (is_blank((unsigned char)src[k])) cr |= src[k++] == '\r';
            int crlf = k == i + 2 && src[i + 1] == '\r' && src[k] == '\n'; /* a plain splice */
            if (!src[k]) {
                /* both backends append a newline and their own code */
                snprintf(err, (size_t)errlen,
                         "line %d: the source ends in a backslash, which would join the line after it; remove it",
                         line);
                return -1;
            }
            if (k > i + 1 && !crlf && (cr || src[k] == '\n')) {
                snprintf(err, (size_t)errlen,
                         "line %d: a backslash followed by spaces at the end of a line is not allowed in reward "
                         "code; remove the spaces or the backslash",
                         line);
                return -1;
            }
        }
    }
    return 0;
}

int jit_splice(const char *src, spliced *s)
{
    size_t n = strlen(src);
    s->text = malloc(n + 1);
    s->line = malloc((n + 1) * sizeof(int));
    if (!s->text || !s->line) {
        free(s->text);
        free(s->line);
        return -1;
    }
    int line = 1;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (src[i] == '\\' && src[i + 1] == '\n') {
            i++;
            line++;
            continue;
        }
        if (src[i] == '\\' && src[i + 1] == '\r' && src[i + 2] == '\n') {
            i += 2;
            line++;
            continue;
        }
        s->text[j] = src[i];
        s->line[j] = line;
        j++;
        if (src[i] == '\n') line++;
    }
    s->text[j] = 0;
    s->line[j] = line;
    s->len = j;
    return 0;
}

/* What scan_tokens reports: identifiers; directive names (the token after a
 * line-initial #, which need not be an identifier); the punctuators the
 * checks refuse ("##", "%:", "R\"" for a raw string); problems found while
 * lexing (tok is then the message).  The callback returns nonzero to stop
 * the scan, zero to go on. */
enum tok_kind { TK_IDENT, TK_DIRECTIVE, TK_PUNCT, TK_BAD };
typedef int (*scan_fn)(void *ctx, enum tok_kind kind, const char *tok, size_t len, int line);

static int report(scan_fn fn, void *ctx, enum tok_kind kind, const char *tok, int line)
{
    return fn(ctx, kind, tok, strlen(tok), line);
}

/* The comment at i (t[i] is '/', t[i + 1] '/' or '*'); *next is the
 * position after it.  A // comment ends before \n or \r (a lone \r ends a
 * line for some compilers, so what follows it is scanned as code).  A //
 * comment that a splice continues onto the next line hides that line from
 * a reader (and from the model) but not from the compiler: refused. */
static int skip_comment(const spliced *s, size_t i, scan_fn fn, void *ctx, size_t *next)
{
    const char *t = s->text;
    size_t n = s->len, k = i + 2;
    if (t[i + 1] == '/') {
        while (k < n && t[k] != '\n' && t[k] != '\r') k++;
        *next = k;
        if (s->line[k] != s->line[i])
            return report(fn, ctx, TK_BAD,
                          "a // comment ending in a backslash continues onto the next line; remove the backslash",
                          s->line[i]);
        return 0;
    }
    while (k + 1 < n && !(t[k] == '*' && t[k + 1] == '/')) k++;
    if (k + 1 >= n) {
        *next = n;
        return report(fn, ctx, TK_BAD, "unterminated /* comment", s->line[i]);
    }
    *next = k + 2;
    return 0;
}

/* A # (or %:, w bytes) that is the first token of its line starts a
 * directive: report its name, the next token after whitespace and comments
 * (a block comment is one space even across lines).  A line with only #
 * is the null directive.  The rest of the line is scanned as usual. */
static int scan_directive(const spliced *s, size_t i, size_t w, scan_fn fn, void *ctx, size_t *next)
{
    const char *t = s->text;
    size_t n = s->len, k = i + w;
    for (;;) {
        while (k < n && is_blank((unsigned char)t[k])) k++;
        if (!(t[k] == '/' && (t[k + 1] == '/' || t[k + 1] == '*'))) break;
        int r = skip_comment(s, k, fn, ctx, &k);
        if (r) return r;
    }
    *next = k;
    if (k >= n || t[k] == '\n') return 0;
    size_t e = k + 1;
    if (is_alpha_((unsigned char)t[k]))
        while (e < n && is_ident((unsigned char)t[e])) e++;
    else /* not a name (# 1 "file" is a line marker for tcc): up to a blank */
        while (e < n && e - k < 16 && !is_blank((unsigned char)t[e]) && t[e] != '\n') e++;
    *next = e;
    return fn(ctx, TK_DIRECTIVE, t + k, e - k, s->line[i]);
}

/* A # or %: token.  Outside a directive's first position, # is the
 * stringizing operator of a macro body: harmless, because it only makes a
 * string literal, the output of a macro is never read as a directive, and
 * _Pragma, the one operator that runs a string, is refused by name.  ##
 * (token pasting) could build any refused name after the scan: refused. */
static int scan_hash(const spliced *s, size_t i, int at_bol, scan_fn fn, void *ctx, size_t *next)
{
    const char *t = s->text;
    size_t w = t[i] == '#' ? 1 : 2;
    int r;
    if (w == 2 && (r = report(fn, ctx, TK_PUNCT, "%:", s->line[i]))) return r;
    if (t[i + w] == '#' || (w == 2 && t[i + 2] == '%' && t[i + 3] == ':')) {
        *next = i + 2 * w;
        return report(fn, ctx, TK_PUNCT, "##", s->line[i]);
    }
    if (at_bol) return scan_directive(s, i, w, fn, ctx, next);
    *next = i + w;
    return 0;
}

/* A string literal or character constant from its opening quote.  It must
 * close on its own line: compilers lex an unterminated literal (or one
 * holding a raw \r, a line end for some) differently, so what follows could
 * be text to the scan and code to a compiler. */
static int scan_literal(const spliced *s, size_t i, scan_fn fn, void *ctx, size_t *next)
{
    const char *t = s->text;
    size_t n = s->len, k = i + 1;
    while (k < n && t[k] != t[i] && t[k] != '\n' && t[k] != '\r') {
        if (t[k] == '\\' && k + 1 < n && t[k + 1] != '\n' && t[k + 1] != '\r') k++; /* an escape */
        k++;
    }
    if (k < n && t[k] == t[i]) {
        *next = k + 1;
        return 0;
    }
    *next = k;
    return report(fn, ctx, TK_BAD, t[i] == '"' ? "unterminated string literal" : "unterminated character constant",
                  s->line[i]);
}

/* An identifier, or the encoding prefix of a literal (L"", u"", U"", u8""). */
static int scan_ident(const spliced *s, size_t i, scan_fn fn, void *ctx, size_t *next)
{
    const char *t = s->text;
    size_t e = i;
    while (e < s->len && is_ident((unsigned char)t[e])) e++;
    *next = e;
    size_t len = e - i;
    if (t[e] == '"' || t[e] == '\'') {
        /* C++ raw strings (R"(..)", u8R"x(..)x") span lines and hold quotes
         * in ways this scan does not follow: refuse them */
        if (t[e] == '"' && len <= 3 && t[e - 1] == 'R') return report(fn, ctx, TK_PUNCT, "R\"", s->line[i]);
        if ((len == 1 && strchr("LuU", t[i])) || (len == 2 && t[i] == 'u' && t[i + 1] == '8')) return 0;
    }
    return fn(ctx, TK_IDENT, t + i, len, s->line[i]);
}

/* A preprocessing number: digits, letters, dots, exponent signs.  A quote
 * right after one is a digit separator for C++14 and C23 (NVRTC) but opens
 * a character constant for tcc, so the two would lex the rest of the line
 * differently: refused. */
static int scan_number(const spliced *s, size_t i, scan_fn fn, void *ctx, size_t *next)
{
    const char *t = s->text;
    size_t e = i + 1;
    while (e < s->len && (is_ident((unsigned char)t[e]) || t[e] == '.' ||
                          ((t[e] == '+' || t[e] == '-') && strchr("eEpP", t[e - 1]))))
        e++;
    *next = e;
    if (t[e] == '\'')
        return report(fn, ctx, TK_BAD, "digit separators (1'000) are not allowed in reward code", s->line[i]);
    return 0;
}

/* Phase 3 on spliced text: calls fn for each identifier, directive name,
 * refused punctuator and lexing problem outside comments, strings and
 * character constants.  Returns the first nonzero value fn returns. */
static int scan_tokens(const spliced *s, scan_fn fn, void *ctx)
{
    const char *t = s->text;
    size_t i = 0, n = s->len;
    int bol = 1; /* no token yet on this line: a # here starts a directive */
    while (i < n) {
        int c = (unsigned char)t[i];
        size_t next = i + 1;
        int r = 0;
        if (c == '\n' || c == '\r') {
            bol = 1; /* a lone \r ends a line for some compilers: take it as one */
        } else if (is_blank(c)) {
            /* whitespace keeps bol: "  #include" and "\v#include" are directives */
        } else if (c == '/' && (t[i + 1] == '/' || t[i + 1] == '*')) {
            /* a comment keeps bol ("/ * * / #include" is a directive); one
             * that spans lines starts a new one for the scan, though the
             * standard says the line goes on: a # after it is then checked
             * as a directive, whichever way a compiler reads it */
            r = skip_comment(s, i, fn, ctx, &next);
            for (size_t k = i; k < next && !bol; k++) bol = t[k] == '\n' || t[k] == '\r';
        } else {
            int at_bol = bol;
            bol = 0;
            if (c == '#' || (c == '%' && t[i + 1] == ':'))
                r = scan_hash(s, i, at_bol, fn, ctx, &next);
            else if (c == '"' || c == '\'')
                r = scan_literal(s, i, fn, ctx, &next);
            else if (is_alpha_(c))
                r = scan_ident(s, i, fn, ctx, &next);
            else if (is_digit(c) || (c == '.' && is_digit((unsigned char)t[i + 1])))
                r = scan_number(s, i, fn, ctx, &next);
            else if (c == '\\') /* a universal character name (\u0041) or a stray backslash */
                r = report(fn, ctx, TK_BAD,
                           "a backslash outside a string or character constant is not allowed in reward code",
                           s->line[i]);
        }
        if (r) return r;
        i = next;
    }
    return 0;
}

typedef struct {
    char *err;
    int errlen;
} scan_ctx;

static int tok_is(const char *tok, size_t len, const char *word)
{
    return strlen(word) == len && !memcmp(tok, word, len);
}

/* The directives reward code may use: macros and conditional groups, which
 * only choose among tokens the scan has checked.  #elifdef and #elifndef
 * (C23) are left out: tcc ignores them with a warning, so the two backends
 * would compile different groups.  The null directive (# alone) passes in
 * scan_directive. */
static int directive_check(scan_ctx *c, const char *tok, size_t len, int line)
{
    static const char *allowed[] = {"define", "undef", "if", "ifdef", "ifndef", "elif", "else", "endif"};
    for (size_t k = 0; k < sizeof allowed / sizeof allowed[0]; k++)
        if (tok_is(tok, len, allowed[k])) return 0;
    int shown = (int)(len > 32 ? 32 : len);
    if (tok_is(tok, len, "include") || tok_is(tok, len, "include_next") || tok_is(tok, len, "import") ||
        tok_is(tok, len, "embed"))
        snprintf(c->err, (size_t)c->errlen,
                 "line %d: #%.*s is not allowed: reward code gets no headers and no C library, only the reward "
                 "API, which is already declared",
                 line, shown, tok);
    else
        snprintf(c->err, (size_t)c->errlen,
                 "line %d: #%.*s is not allowed in reward code%s; only #define, #undef, #if, #ifdef, #ifndef, "
                 "#elif, #else and #endif are",
                 line, shown, tok,
                 tok_is(tok, len, "line") ? " (it would change the line numbers of messages)" : "");
    return 1;
}

static int scan_check(void *vctx, enum tok_kind kind, const char *tok, size_t len, int line)
{
    scan_ctx *c = vctx;
    if (kind == TK_BAD) {
        snprintf(c->err, (size_t)c->errlen, "line %d: %s", line, tok);
        return 1;
    }
    if (kind == TK_DIRECTIVE) return directive_check(c, tok, len, line);
    if (tok_is(tok, len, "##")) {
        snprintf(c->err, (size_t)c->errlen, "line %d: token pasting (##) is not allowed in reward code", line);
        return 1;
    }
    if (tok_is(tok, len, "R\"")) {
        snprintf(c->err, (size_t)c->errlen, "line %d: raw string literals (R\"...\") are not allowed in reward code",
                 line);
        return 1;
    }
    if (tok_is(tok, len, "%:")) {
        snprintf(c->err, (size_t)c->errlen, "line %d: the digraph %%: is not allowed in reward code; write #",
                 line);
        return 1;
    }
    static const char *words[] = {"asm", "__asm", "__asm__", "_Pragma", "__pragma", "__attribute__",
                                  "__attribute", "__declspec", "_Thread_local", "__thread", "thread_local"};
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++)
        if (tok_is(tok, len, words[k])) {
            const char *why = k < 3   ? "inline assembly is not allowed in reward code"
                              : k < 5 ? "pragmas are not allowed in reward code"
                              : k < 8 ? "attributes are not allowed in reward code"
                                      : "thread-local variables are not allowed in reward code";
            snprintf(c->err, (size_t)c->errlen, "line %d: '%s': %s", line, words[k], why);
            return 1;
        }
    if (len >= 9 && !memcmp(tok, "__builtin", 9)) {
        snprintf(c->err, (size_t)c->errlen,
                 "line %d: '%.*s': compiler builtins are not allowed in reward code; use the reward API", line,
                 (int)(len > 60 ? 60 : len), tok);
        return 1;
    }
    if (len >= 5 && !memcmp(tok, "__pcg", 5)) {
        snprintf(c->err, (size_t)c->errlen, "line %d: names starting with __pcg are reserved", line);
        return 1;
    }
    /* also __has_include and __has_include_next, which would probe files */
    if (len >= 2 && tok[0] == '_' && tok[1] == '_') {
        static const char *ok[] = {"__LINE__", "__FILE__", "__func__", "__VA_ARGS__", "__STDC__",
                                   "__STDC_VERSION__"};
        for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++)
            if (tok_is(tok, len, ok[k])) return 0;
        snprintf(c->err, (size_t)c->errlen, "line %d: '%.*s': names starting with __ are reserved for the compiler",
                 line, (int)(len > 60 ? 60 : len), tok);
        return 1;
    }
    /* symbols the linker defines (the engine reads _etext) */
    static const char *linker[] = {"_etext", "_edata", "_end", "_GLOBAL_OFFSET_TABLE_"};
    for (size_t k = 0; k < sizeof linker / sizeof linker[0]; k++)
        if (tok_is(tok, len, linker[k])) {
            snprintf(c->err, (size_t)c->errlen, "line %d: '%s' is reserved by the linker; choose another name", line,
                     linker[k]);
            return 1;
        }
    /* linked for the compiler's own use, not part of the API */
    static const char *internal[] = {"memset", "memcpy", "memmove"};
    for (size_t k = 0; k < sizeof internal / sizeof internal[0]; k++)
        if (tok_is(tok, len, internal[k])) {
            snprintf(c->err, (size_t)c->errlen,
                     "line %d: '%s' is not available: reward code links only the reward API; write a loop", line,
                     internal[k]);
            return 1;
        }
    return 0;
}

int reward_scan(const char *src, char *err, int errlen)
{
    if (!src) {
        snprintf(err, (size_t)errlen, "no reward source");
        return -1;
    }
    size_t n = strlen(src);
    if (n == 0) {
        snprintf(err, (size_t)errlen, "the reward source is empty; define float compute_reward(const level_t "
                                      "*prev, const level_t *curr)");
        return -1;
    }
    if (n > REWARD_MAX_SOURCE) {
        snprintf(err, (size_t)errlen, "the reward source is too long (%zu bytes; at most %d)", n,
                 REWARD_MAX_SOURCE);
        return -1;
    }
    if (raw_check(src, err, errlen)) return -1;
    spliced s;
    if (jit_splice(src, &s)) {
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
    }
    scan_ctx c = {err, errlen};
    int r = scan_tokens(&s, scan_check, &c);
    if (!r) r = jit_check_signature(&s, err, errlen) != 0;
    free(s.text);
    free(s.line);
    /* the message quotes the source: printable ASCII only, on a terminal
     * and in the next prompt */
    for (char *q = err; r && *q; q++)
        if ((unsigned char)*q < 0x20 || (unsigned char)*q > 0x7e) *q = '?';
    return r ? -1 : 0;
}

/* Line of the first use of identifier name outside comments and strings,
 * 0 if none. */
typedef struct {
    const char *name;
    int line;
} find_ctx;

static int find_ident(void *vctx, enum tok_kind kind, const char *tok, size_t len, int line)
{
    find_ctx *f = vctx;
    if (kind == TK_IDENT && tok_is(tok, len, f->name)) {
        f->line = line;
        return 1;
    }
    return 0;
}

int jit_ident_line(const char *src, const char *name)
{
    spliced s;
    if (jit_splice(src, &s)) return 0;
    find_ctx f = {name, 0};
    scan_tokens(&s, find_ident, &f);
    free(s.text);
    free(s.line);
    return f.line;
}

/* ------------------------------------------------------------------ */
/* libtcc compilation                                                   */

struct reward_prog {
    float (*fn)(const level_t *, const level_t *);
    void *mem;
    size_t len;
    reward_memo *memo; /* NULL: every question answered afresh */
};

/* libtcc keeps global state: one compilation at a time, and no fork in the
 * middle of one (the child would inherit a half-built state). */
static pthread_mutex_t tcc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void lock_prepare(void) { pthread_mutex_lock(&tcc_lock); }
static void lock_release(void) { pthread_mutex_unlock(&tcc_lock); }
static void install_atfork(void) { pthread_atfork(lock_prepare, lock_release, lock_release); }

typedef struct {
    char msg[512];
    int n_errors;
} tcc_diag;

/* Keep the first error; rewrite "reward.c:12: error: x" as "line 12: x". */
static void on_tcc_error(void *opaque, const char *msg)
{
    tcc_diag *d = opaque;
    const char *w = strstr(msg, "warning: ");
    if (w) return;
    if (d->n_errors++) return;
    const char *p = msg;
    if (!strncmp(p, "tcc: ", 5)) p += 5;
    char prefix[48] = "";
    size_t fl = strlen(REWARD_FILE_NAME);
    if (!strncmp(p, REWARD_FILE_NAME ":", fl + 1)) {
        int line = atoi(p + fl + 1);
        const char *q = strchr(p + fl + 1, ':');
        if (q) {
            snprintf(prefix, sizeof prefix, "line %d: ", line);
            p = q + 1;
            while (*p == ' ') p++;
        }
    } else if (!strncmp(p, "<string>:", 9)) {
        /* an error inside the engine's own prelude or epilogue */
        const char *q = strchr(p + 9, ':');
        if (q) p = q + 1;
        while (*p == ' ') p++;
    }
    if (!strncmp(p, "error: ", 7)) p += 7;
    snprintf(d->msg, sizeof d->msg, "%s%s", prefix, p);
    /* one line */
    for (char *c = d->msg; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
}

typedef struct {
    void *etext;
    char *plt_lo;
} image_syms;

static void on_symbol(void *ctx, const char *name, const void *val)
{
    image_syms *s = ctx;
    if (!strcmp(name, "_etext")) s->etext = (void *)val;
    size_t n = strlen(name);
    if (n > 4 && !strcmp(name + n - 4, "@plt") && (!s->plt_lo || (char *)val < s->plt_lo))
        s->plt_lo = (char *)val;
}

/* Pads of one page at each end of every data section, so that no page holds
 * both code and the reward's data: code pages become read+execute, data
 * pages read-only. */
#define PAD_DEFS(tag)                                                                                      \
    "char __pcg_data_" tag "[4096] = {1};\n"                                                               \
    "static char __pcg_bss_" tag "[4096];\n"                                                               \
    "static const char __pcg_ro_" tag "[4096] = {1};\n"                                                    \
    "char *__pcg_use_" tag "(void) { return __pcg_bss_" tag " + __pcg_ro_" tag "[0]; }\n"

static void set_error(char *err, int errlen, const char *msg)
{
    if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s", msg);
}

/* The source as libtcc compiles it: the low pads, the reward API, then the
 * reward, numbered from its own line 1.  NULL when out of memory. */
static char *full_source(const char *src)
{
    size_t plen = strlen(pcg_embed_reward_api_h);
    size_t slen = strlen(src);
    const char *pre_pad = PAD_DEFS("lo");
    size_t total = strlen(pre_pad) + plen + slen + 64;
    char *full = malloc(total);
    if (full)
        snprintf(full, total, "%s%s\n#line 1 \"%s\"\n%s\n", pre_pad, pcg_embed_reward_api_h, REWARD_FILE_NAME, src);
    return full;
}

/* A failed link: "undefined symbol 'printf'" says where and why. */
static void explain_link_failure(const char *src, tcc_diag *diag)
{
    const char *u = strstr(diag->msg, "undefined symbol '");
    if (!u) {
        if (!diag->msg[0]) snprintf(diag->msg, sizeof diag->msg, "linking failed");
        return;
    }
    char name[128];
    const char *b = u + 18, *e = strchr(b, '\'');
    size_t nl = e ? (size_t)(e - b) : strlen(b);
    if (nl >= sizeof name) nl = sizeof name - 1;
    memcpy(name, b, nl);
    name[nl] = 0;
    int line = jit_ident_line(src, name);
    char where[32] = "";
    if (line > 0) snprintf(where, sizeof where, "line %d: ", line);
    if (!strcmp(name, "compute_reward"))
        snprintf(diag->msg, sizeof diag->msg,
                 "compute_reward is declared but not defined; define float compute_reward(const level_t "
                 "*prev, const level_t *curr)");
    else
        snprintf(diag->msg, sizeof diag->msg,
                 "%s'%s' is not available: reward code links only the reward API (level_height, "
                 "level_width, tile_at, count_tiles, find_tiles, path_length, nearest_tile_distance, "
                 "count_regions, path_length_through and fabsf sqrtf expf logf powf fminf fmaxf tanhf floorf ceilf); no C "
                 "library",
                 where, name);
}

/* The relocated image of len bytes at mem: code pages read+execute, the
 * reward's data pages between them read-only.  0, or -1. */
static int protect_image(TCCState *s, char *mem, size_t len, long page)
{
    image_syms sy = {NULL, NULL};
    tcc_list_symbols(s, &sy, on_symbol);
    char *lo = mem, *hi = mem + len;
    char *etext = sy.etext ? (char *)sy.etext : hi;
    if (etext < lo || etext > hi) etext = hi;
    char *text_end = lo + (((size_t)(etext - lo) + (size_t)page - 1) & ~((size_t)page - 1));
    char *plt = sy.plt_lo && sy.plt_lo >= text_end && sy.plt_lo < hi
                    ? lo + ((size_t)(sy.plt_lo - lo) & ~((size_t)page - 1))
                    : hi;
    if (plt < text_end) plt = text_end;
    int bad = mprotect(lo, (size_t)(text_end - lo), PROT_READ | PROT_EXEC);
    if (!bad && plt > text_end) bad = mprotect(text_end, (size_t)(plt - text_end), PROT_READ);
    if (!bad && hi > plt) bad = mprotect(plt, (size_t)(hi - plt), PROT_READ | PROT_EXEC);
    return bad ? -1 : 0;
}

/* Compiles and links full into fresh memory (*mem, *len: the caller
 * unmaps it unless the program took it).  The program, or NULL with
 * diag->msg.  Called under tcc_lock. */
/* Threads the memo keeps room for: every thread OpenMP may run. */
static int memo_threads(void)
{
    int t = omp_get_max_threads(), procs = omp_get_num_procs();
    return t > procs ? t : procs;
}

typedef struct {
    const reward_helper *helpers;
    int n;
} helper_set;

static reward_prog *compile_into_memory(TCCState *s, const char *full, const char *src, const helper_set *hs,
                                        tcc_diag *diag, void **mem, size_t *len)
{
    tcc_set_error_func(s, diag, on_tcc_error);
    tcc_set_options(s, "-nostdlib -nostdinc");
    tcc_set_output_type(s, TCC_OUTPUT_MEMORY);
    if (tcc_compile_string(s, full) < 0 || diag->n_errors) return NULL;
    if (tcc_compile_string(s, PAD_DEFS("hi")) < 0 || diag->n_errors) return NULL;
    jit_add_api_symbols(s, hs->helpers, hs->n);
    int size = tcc_relocate(s, NULL);
    if (size < 0 || diag->n_errors) return explain_link_failure(src, diag), NULL;
    long page = sysconf(_SC_PAGESIZE);
    *len = ((size_t)size + (size_t)page - 1) & ~((size_t)page - 1);
    *mem = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (*mem == MAP_FAILED)
        return snprintf(diag->msg, sizeof diag->msg, "out of memory for the compiled reward"), NULL;
    if (tcc_relocate(s, *mem) < 0 || diag->n_errors) {
        if (!diag->msg[0]) snprintf(diag->msg, sizeof diag->msg, "relocation failed");
        return NULL;
    }
    void *fn = tcc_get_symbol(s, "compute_reward");
    if (!fn)
        return snprintf(diag->msg, sizeof diag->msg,
                        "no compute_reward: define float compute_reward(const level_t *prev, const level_t *curr)"),
               NULL;
    if (protect_image(s, *mem, *len, page))
        return snprintf(diag->msg, sizeof diag->msg, "could not protect the compiled reward's memory"), NULL;
    reward_prog *p = calloc(1, sizeof *p);
    if (!p) return snprintf(diag->msg, sizeof diag->msg, "out of memory"), NULL;
    p->fn = (float (*)(const level_t *, const level_t *))fn;
    p->mem = *mem;
    p->len = *len;
    p->memo = hs->n ? NULL : reward_memo_new(memo_threads());
    *mem = MAP_FAILED;
    return p;
}

static reward_prog *compile_cpu(const char *src, const helper_set *hs, char *err, int errlen)
{
    if (reward_scan(src, err, errlen)) return NULL;
    char *full = full_source(src);
    if (!full) {
        set_error(err, errlen, "out of memory");
        return NULL;
    }
    pthread_once(&atfork_once, install_atfork);
    pthread_mutex_lock(&tcc_lock);
    tcc_diag diag = {"", 0};
    reward_prog *p = NULL;
    void *mem = MAP_FAILED;
    size_t len = 0;
    TCCState *s = tcc_new();
    if (!s) snprintf(diag.msg, sizeof diag.msg, "the compiler could not start (out of memory)");
    else p = compile_into_memory(s, full, src, hs, &diag, &mem, &len);
    if (!p) jit_explain(src, diag.msg, sizeof diag.msg);
    if (s) tcc_delete(s);
    pthread_mutex_unlock(&tcc_lock);
    if (mem != MAP_FAILED) munmap(mem, len);
    free(full);
    if (!p) set_error(err, errlen, diag.msg[0] ? diag.msg : "compilation failed");
    return p;
}

reward_prog *reward_compile_cpu(const char *src, char *err, int errlen)
{
    helper_set none = {NULL, 0};
    return compile_cpu(src, &none, err, errlen);
}

reward_prog *reward_compile_cpu_helpers(const char *src, const reward_helper *helpers, int n, char *err, int errlen)
{
    helper_set hs = {helpers, n > 0 ? n : 0};
    return compile_cpu(src, &hs, err, errlen);
}

float reward_prog_call(const level_t *prev, const level_t *curr, void *prog)
{
    /* every frame of the reward lies below this local */
    char top;
    reward_prog *p = prog;
    jit_call_top = &top;
    reward_memo_begin(p->memo, prev, curr);
    float r = p->fn(prev, curr);
    reward_memo_end();
    jit_call_top = NULL;
    return r;
}

void reward_prog_memo(reward_prog *p, int on)
{
    if (on && !p->memo) p->memo = reward_memo_new(memo_threads());
    if (!on) reward_memo_free(p->memo), p->memo = NULL;
}

void reward_prog_free(reward_prog *p)
{
    if (!p) return;
    reward_memo_free(p->memo);
    munmap(p->mem, p->len);
    free(p);
}

void reward_prog_image(const reward_prog *p, const void **lo, size_t *len)
{
    *lo = p->mem;
    *len = p->len;
}
