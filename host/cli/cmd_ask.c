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

int cmd_ask(int argc, char **argv)
{
    llm_config cfg;
    llm_config_defaults(&cfg);
    const char *system = NULL, *image_path = NULL, *extract = NULL, *text = NULL;
    char err[1024];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            ask_usage(stdout);
            return 0;
        }
        if (a[0] == '-' && a[1] == '-') {
            if (i + 1 >= argc) {
                die_msg("ask: %s needs a value (pcgrllm ask --help)", a);
                return EXIT_USAGE;
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--llm")) {
                if (strcmp(v, "openai")) {
                    die_msg("ask: --llm %s: this command needs a language model server (--llm openai)", v);
                    return EXIT_USAGE;
                }
            } else if (!strcmp(a, "--system")) {
                system = v;
            } else if (!strcmp(a, "--image")) {
                image_path = v;
            } else if (!strcmp(a, "--extract")) {
                if (strcmp(v, "code") && strcmp(v, "json")) {
                    die_msg("ask: --extract takes code or json");
                    return EXIT_USAGE;
                }
                extract = v;
            } else {
                int r = llm_config_flag(&cfg, a, v, err, sizeof err);
                if (r < 0) {
                    die_msg("ask: %s", err);
                    return EXIT_USAGE;
                }
                if (r == 0) {
                    die_msg("ask: unknown option %s (pcgrllm ask --help)", a);
                    return EXIT_USAGE;
                }
            }
            continue;
        }
        if (text) {
            die_msg("ask: give the prompt as one argument (quote it), or '-' for stdin");
            return EXIT_USAGE;
        }
        text = a;
    }
    if (!text) {
        ask_usage(stderr);
        return EXIT_USAGE;
    }
    char *owned = NULL;
    if (!strcmp(text, "-")) {
        owned = read_stdin();
        if (!owned) {
            die_msg("ask: could not read the prompt from stdin");
            return 1;
        }
        text = owned;
    }
    char *image = NULL;
    long image_len = 0;
    if (image_path) {
        image = read_file(image_path, 20L << 20, &image_len, err, sizeof err);
        if (!image) {
            die_msg("ask: --image %s", err);
            free(owned);
            return EXIT_USAGE;
        }
        if (image_len < 8 || memcmp(image, "\x89PNG\r\n\x1a\n", 8)) {
            die_msg("ask: --image %s is not a PNG file", image_path);
            free(image);
            free(owned);
            return EXIT_USAGE;
        }
    }
    llm_message msgs[2];
    int n = 0;
    if (system) msgs[n++] = (llm_message){"system", system, NULL, 0};
    msgs[n++] = (llm_message){"user", text, image, image ? (size_t)image_len : 0};
    llm_task task = {LLM_TEXT, 0, NULL, "ask"};
    if (extract) task.kind = !strcmp(extract, "code") ? LLM_CODE : LLM_JSON;
    cfg.progress = 1;
    llm_server server = {0};
    server.context = llm_probe_context(&cfg, server.context_from, sizeof server.context_from);
    cfg.server = &server;
    llm_reply r;
    int rc = llm_chat_task(&cfg, &task, msgs, n, &r, err, sizeof err);
    free(image);
    free(owned);
    ask_summary(&cfg, &r);
    if (rc != 0) {
        if (r.content && !extract) print_text(r.content); /* what the model wrote before the cut */
        die_msg("%s", err);
        llm_reply_free(&r);
        return 1;
    }
    const char *out = r.content;
    char *ex = NULL;
    if (extract) {
        ex = !strcmp(extract, "code") ? llm_extract_code(r.content, err, sizeof err)
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
