/* What a run or grid directory may decide: see trust.h. */
#include "trust.h"
#include "llm.h"
#include "util.h"
#include <stdio.h>
#include <string.h>

/* The length of url without trailing slashes. */
static size_t trimmed(const char *url)
{
    size_t n = strlen(url);
    while (n > 0 && url[n - 1] == '/') n--;
    return n;
}

int trust_same_server(const char *a, const char *b)
{
    size_t n = trimmed(a);
    return n == trimmed(b) && !strncmp(a, b, n);
}

int trust_default_server(const char *url)
{
    return !url[0] || trust_same_server(url, LLM_DEFAULT_BASE_URL);
}

int trust_stored_server(const char *cmd, const char *file, const char *url, const char *model, const char *how)
{
    char q[2048];
    snprintf(q, sizeof q, "%s: %s sends the model's requests (and the API key) to %s%s%s. Send them there?", cmd, file,
             url, model && model[0] ? ", model " : "", model ? model : "");
    int yes = ask_yes_no(q);
    if (yes > 0) return 1;
    die_msg("%s: %s names the model server %s, which was not given now; to send requests there, %s (nothing was "
            "sent)",
            cmd, file, url, how);
    return 0;
}
