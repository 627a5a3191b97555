/* pcgrllm ask: send one prompt to the configured language model server and
 * print the reply; the quickest check that --base-url, --model and the key
 * work before a long run. */
#include "llm.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void ask_usage(FILE *f)
{
    fprintf(f,
            "usage: pcgrllm ask [options] TEXT     (TEXT '-' reads the prompt from stdin)\n\n"
            "Send one chat request to an OpenAI-compatible server and print the reply.\n"
            "A summary line (model, finish reason, tokens, attempts, seconds) goes to stderr,\n"
            "also when the call fails; a reply cut short (a loop, the time budget) is still\n"
            "printed, after which the exit status is 1.\n\n"
            "  --llm openai            the only provider this command talks to (the default)\n"
            "  --system TEXT           a system message before the prompt\n"
            "  --image FILE.png        attach a PNG (vision models)\n"
            "  --extract code|json     print only the code block / JSON object of the reply; the\n"
            "                          call then stops as soon as that block is complete\n"
            "%s\n"
            "Exit status: 0 reply printed, 1 the request or the extraction failed, 2 bad usage.\n",
            llm_flags_help());
}

static char *read_stdin(void)
{
    size_t cap = 4096, len = 0;
    char *b = malloc(cap);
    if (!b) return NULL;
    size_t got;
    while ((got = fread(b + len, 1, cap - len - 1, stdin)) > 0) {
        len += got;
        if (len + 1 == cap) {
            if (cap >= (size_t)16 << 20) break;
            char *nb = realloc(b, cap * 2);
            if (!nb) break;
            b = nb;
            cap *= 2;
        }
    }
    b[len] = 0;
    return b;
}

static void print_text(const char *out)
{
    size_t ol = strlen(out);
    fwrite(out, 1, ol, stdout);
    if (ol && out[ol - 1] != '\n') fputc('\n', stdout);
    fflush(stdout);
}

/* One line on stderr, whether the call succeeded or not. */
static void ask_summary(const llm_config *cfg, const llm_reply *r)
{
    static const char *const cut[] = {"", ", cut: a loop", ", cut: out of time", ", cut: token limit"};
    fprintf(stderr,
            "pcgrllm: ask: model %s, finish %s%s%s, tokens %ld prompt + %ld completion%s = %ld, %d request%s, "
            "%.1f s\n",
            r->model[0] ? r->model : cfg->model, r->finish_reason[0] ? r->finish_reason : "-",
            r->early_stop ? " (stopped early: answer complete)" : "", cut[r->cut], r->usage.prompt_tokens,
            r->usage.completion_tokens, r->tokens_counted ? " (counted)" : "",
            r->usage.total_tokens ? r->usage.total_tokens : r->usage.prompt_tokens + r->usage.completion_tokens,
            r->attempts, r->attempts == 1 ? "" : "s", r->seconds);
}

typedef struct {
    const char *system, *image_path, *extract, *text;
} ask_args;

/* One --flag VALUE.  -1 to go on, else the exit status. */
static int ask_flag(llm_config *cfg, ask_args *a, const char *flag, const char *v)
{
    char err[1024];
    if (!strcmp(flag, "--llm")) {
        if (strcmp(v, "openai")) {
            die_msg("ask: --llm %s: this command needs a language model server (--llm openai)", v);
            return EXIT_USAGE;
        }
    } else if (!strcmp(flag, "--system")) {
        a->system = v;
    } else if (!strcmp(flag, "--image")) {
        a->image_path = v;
    } else if (!strcmp(flag, "--extract")) {
        if (strcmp(v, "code") && strcmp(v, "json")) {
            die_msg("ask: --extract takes code or json");
            return EXIT_USAGE;
        }
        a->extract = v;
    } else {
        int r = llm_config_flag(cfg, flag, v, err, sizeof err);
        if (r < 0) {
            die_msg("ask: %s", err);
            return EXIT_USAGE;
        }
        if (r == 0) {
            die_msg("ask: unknown option %s (pcgrllm ask --help)", flag);
            return EXIT_USAGE;
        }
    }
    return -1;
}

/* -1 to go on, else the exit status. */
static int parse_ask_args(int argc, char **argv, llm_config *cfg, ask_args *a)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            ask_usage(stdout);
            return 0;
        }
        if (arg[0] == '-' && arg[1] == '-') {
            if (i + 1 >= argc) {
                die_msg("ask: %s needs a value (pcgrllm ask --help)", arg);
                return EXIT_USAGE;
            }
            int rc = ask_flag(cfg, a, arg, argv[++i]);
            if (rc >= 0) return rc;
            continue;
        }
        if (a->text) {
            die_msg("ask: give the prompt as one argument (quote it), or '-' for stdin");
            return EXIT_USAGE;
        }
        a->text = arg;
    }
    if (!a->text) {
        ask_usage(stderr);
        return EXIT_USAGE;
    }
    return -1;
}

/* --image: a PNG file's bytes.  NULL after the message. */
static char *read_png(const char *path, long *len)
{
    char err[1024];
    char *image = read_file(path, 20L << 20, len, err, sizeof err);
    if (!image) {
        die_msg("ask: --image %s", err);
        return NULL;
    }
    if (*len < 8 || memcmp(image, "\x89PNG\r\n\x1a\n", 8)) {
        die_msg("ask: --image %s is not a PNG file", path);
        free(image);
        return NULL;
    }
    return image;
}

/* The request, its summary line and the reply (or the block extracted
 * from it) on stdout.  The exit status. */
static int ask_and_print(llm_config *cfg, const ask_args *a, const char *image, long image_len)
{
    char err[1024];
    llm_message msgs[2];
    int n = 0;
    if (a->system) msgs[n++] = (llm_message){"system", a->system, NULL, 0};
    msgs[n++] = (llm_message){"user", a->text, image, image ? (size_t)image_len : 0};
    llm_task task = {LLM_TEXT, 0, NULL, "ask"};
    if (a->extract) task.kind = !strcmp(a->extract, "code") ? LLM_CODE : LLM_JSON;
    cfg->progress = 1;
    llm_server server = {0};
    server.context = llm_probe_context(cfg, server.context_from, sizeof server.context_from);
    cfg->server = &server;
    llm_reply r;
    int rc = llm_chat_task(cfg, &task, msgs, n, &r, err, sizeof err);
    ask_summary(cfg, &r);
    if (rc != 0) {
        if (r.content && !a->extract) print_text(r.content); /* what the model wrote before the cut */
        die_msg("%s", err);
        llm_reply_free(&r);
        return 1;
    }
    const char *out = r.content;
    char *ex = NULL;
    if (a->extract) {
        ex = !strcmp(a->extract, "code") ? llm_extract_code(r.content, err, sizeof err)
                                         : llm_extract_json(r.content, err, sizeof err);
        if (!ex) {
            die_msg("ask: %s", err);
            llm_reply_free(&r);
            return 1;
        }
        out = ex;
    }
    print_text(out);
    free(ex);
    llm_reply_free(&r);
    return 0;
}

int cmd_ask(int argc, char **argv)
{
    llm_config cfg;
    llm_config_defaults(&cfg);
    ask_args a = {NULL, NULL, NULL, NULL};
    int rc = parse_ask_args(argc, argv, &cfg, &a);
    if (rc >= 0) return rc;
    char *owned = NULL;
    if (!strcmp(a.text, "-")) {
        owned = read_stdin();
        if (!owned) {
            die_msg("ask: could not read the prompt from stdin");
            return 1;
        }
        a.text = owned;
    }
    char *image = NULL;
    long image_len = 0;
    if (a.image_path && !(image = read_png(a.image_path, &image_len))) {
        free(owned);
        return EXIT_USAGE;
    }
    rc = ask_and_print(&cfg, &a, image, image_len);
    free(image);
    free(owned);
    return rc;
}
