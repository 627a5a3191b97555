/* What a run or grid directory may decide.  Such a directory may come from
 * someone else, so the settings stored in it (config.json, grid.json) are
 * taken as the experiment's -- model name, budgets, search settings -- but
 * never where requests go or which secret they carry: the variable holding
 * the key comes only from the command line (or its default), and a stored
 * server other than the default one is used only when the user names it
 * again (--base-url) or confirms it on a terminal.  docs/sandbox.md lists
 * every stored field and who decides it. */
#ifndef PCG_TRUST_H
#define PCG_TRUST_H

/* 1 when url is the default server (LLM_DEFAULT_BASE_URL, a trailing
 * slash aside), or "" (the default). */
int trust_default_server(const char *url);
/* 1 when two server addresses are the same (a trailing slash aside). */
int trust_same_server(const char *a, const char *b);
/* A server that file names and the user has not named now: asked on a
 * terminal, refused otherwise.  cmd: "run", "grid"; how: what to give to
 * use it ("resume with --base-url URL").  1 to go on, 0 refused (one line
 * printed; nothing was sent). */
int trust_stored_server(const char *cmd, const char *file, const char *url, const char *model, const char *how);

#endif
