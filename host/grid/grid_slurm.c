/* Slurm batch arrays of a grid.  See grid_slurm.h. */
#include "grid_slurm.h"
#include "util.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int grid_slurm_check_value(const char *flag, const char *v, char *err, int errlen)
{
    static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:._,=/+-";
    if (!*v || strspn(v, ok) != strlen(v) || strlen(v) >= 128)
        return snprintf(err, (size_t)errlen, "%s '%.60s': letters, digits and : . _ , = / + - only", flag, v), -1;
    return 0;
}

int grid_slurm_add_line(grid_slurm_opts *o, const char *v, char *err, int errlen)
{
    if (o->n_lines == GRID_SLURM_MAX_LINES)
        return snprintf(err, (size_t)errlen, "at most %d --sbatch lines", GRID_SLURM_MAX_LINES), -1;
    size_t n = strlen(v);
    int ok = n > 2 && n < sizeof o->lines[0] && !strncmp(v, "--", 2);
    for (size_t i = 0; ok && i < n; i++) ok = v[i] >= 0x20 && v[i] < 0x7f && v[i] != '\'' && v[i] != '"' && v[i] != '\\';
    if (!ok)
        return snprintf(err, (size_t)errlen, "--sbatch '%.60s': one sbatch option starting with --, printable, without "
                                             "quotes or backslashes",
                        v),
               -1;
    snprintf(o->lines[o->n_lines++], sizeof o->lines[0], "%s", v);
    return 0;
}

int grid_slurm_read_prologue(grid_slurm_opts *o, const char *path, char *err, int errlen)
{
    long len;
    char why[1200];
    char *t = read_file(path, 64L << 10, &len, why, sizeof why);
    if (!t) return snprintf(err, (size_t)errlen, "--prologue: %s", why), -1;
    if ((long)strlen(t) != len) {
        free(t);
        return snprintf(err, (size_t)errlen, "--prologue: %s holds binary data", path), -1;
    }
    free(o->prologue);
    o->prologue = t;
    return 0;
}

void grid_slurm_ranges(const int *ids, int n, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < n && k < len;) {
        int j = i;
        while (j + 1 < n && ids[j + 1] == ids[j] + 1) j++;
        if (j > i) k += (size_t)snprintf(buf + k, len - k, "%s%d-%d", k ? "," : "", ids[i], ids[j]);
        else k += (size_t)snprintf(buf + k, len - k, "%s%d", k ? "," : "", ids[i]);
        i = j + 1;
    }
}

/* s in single quotes for sh: ' becomes '\''. */
static void sh_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputs("'\\''", f);
        else fputc(*s, f);
    }
    fputc('\'', f);
}

/* The #SBATCH lines both scripts share (the partition: the array's, or
 * the summary's own). */
static void common_options(FILE *f, const grid_slurm_opts *o, const char *partition)
{
    if (partition[0]) fprintf(f, "#SBATCH --partition=%s\n", partition);
    if (o->time[0]) fprintf(f, "#SBATCH --time=%s\n", o->time);
    if (o->mem[0]) fprintf(f, "#SBATCH --mem=%s\n", o->mem);
    if (o->account[0]) fprintf(f, "#SBATCH --account=%s\n", o->account);
    if (o->qos[0]) fprintf(f, "#SBATCH --qos=%s\n", o->qos);
    for (int i = 0; i < o->n_lines; i++) fprintf(f, "#SBATCH %s\n", o->lines[i]);
}

/* What runs before the binary: the prompts' directory, the --prologue. */
static void script_setup(FILE *f, const grid_slurm_opts *o)
{
    const char *prompts = getenv("PCGRLLM_PROMPTS");
    if (prompts && *prompts) fputs("export PCGRLLM_PROMPTS=", f), sh_quote(f, prompts), fputc('\n', f);
    if (!o->prologue) return;
    fputs("# --prologue\n", f);
    fputs(o->prologue, f);
    if (o->prologue[0] && o->prologue[strlen(o->prologue) - 1] != '\n') fputc('\n', f);
}

/* The array script: one task per cell id; a task that asks for a GPU gets
 * the grid's --gpus 1 (Slurm shows it the one GPU it allocated). */
static char *array_script(const char *bin, const char *dir, const int *ids, int n, const grid_slurm_opts *o)
{
    char *buf = NULL, ranges[8192];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    grid_slurm_ranges(ids, n, ranges, sizeof ranges);
    fprintf(f, "#!/bin/sh\n# Written by `pcgrllm grid --slurm`: one array task per unfinished cell of the grid in\n"
               "# %s (task id = cell index, see `pcgrllm grid --out DIR --list`).  Resubmitting it\n"
               "# skips finished cells and resumes started ones.\n",
            dir);
    fprintf(f, "#SBATCH --job-name=pcgrllm-grid\n#SBATCH --array=%s", ranges);
    if (o->max_parallel > 0) fprintf(f, "%%%d", o->max_parallel);
    fprintf(f, "\n#SBATCH --output=%s/slurm/logs/%%A_%%a.out\n", dir);
    common_options(f, o, o->partition);
    if (o->gres[0]) fprintf(f, "#SBATCH --gres=%s\n", o->gres);
    if (o->cpus_per_task > 0) fprintf(f, "#SBATCH --cpus-per-task=%d\n", o->cpus_per_task);
    script_setup(f, o);
    fputs("exec ", f);
    sh_quote(f, bin);
    fputs(" grid --out ", f);
    sh_quote(f, dir);
    for (int i = 0; i < o->n_servers; i++) fputs(" --base-url ", f), sh_quote(f, o->servers[i]);
    if (o->api_key_env && o->api_key_env[0]) fputs(" --api-key-env ", f), sh_quote(f, o->api_key_env);
    fprintf(f, " --cell \"$SLURM_ARRAY_TASK_ID\"%s\n", strstr(o->gres, "gpu") ? " --gpus 1" : "");
    fclose(f);
    return buf;
}

/* The summary script, run after every task of the array. */
static char *summary_script(const char *bin, const char *dir, const grid_slurm_opts *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    fprintf(f, "#!/bin/sh\n# Written by `pcgrllm grid --slurm`: the grid's summary, after its array job.\n"
               "#SBATCH --job-name=pcgrllm-grid-summary\n#SBATCH --output=%s/slurm/logs/summary_%%j.out\n",
            dir);
    common_options(f, o, o->summary_partition[0] ? o->summary_partition : o->partition);
    script_setup(f, o);
    fputs("exec ", f);
    sh_quote(f, bin);
    fputs(" grid --out ", f);
    sh_quote(f, dir);
    fprintf(f, " --summary%s\n", o->value_best ? " --value best" : "");
    fclose(f);
    return buf;
}

/* `sbatch --parsable [--dependency=afterany:after] script`: the job id, or
 * -1 with sbatch's last words in err. */
static long submit(const char *script, long after, char *err, int errlen)
{
    char cmd[2600], out[1024] = "", dep[64] = "";
    if (after > 0) snprintf(dep, sizeof dep, "--dependency=afterany:%ld ", after);
    snprintf(cmd, sizeof cmd, "sbatch --parsable %s'%s' 2>&1", dep, script); /* script: our own path, no quote in it */
    FILE *p = popen(cmd, "r");
    if (!p) return snprintf(err, (size_t)errlen, "cannot run sbatch: %s", strerror(errno)), -1;
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int st = pclose(p);
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' ')) out[--n] = 0;
    char *end;
    long id = strtol(out, &end, 10);
    if (st != 0 || id <= 0 || (*end && *end != ';')) {
        int missing = WIFEXITED(st) && WEXITSTATUS(st) == 127;
        snprintf(err, (size_t)errlen, "%s", missing ? "sbatch not found (run this on a Slurm login node)" : out);
        return -1;
    }
    return id;
}

int grid_slurm(const char *out, const int *ids, int n, int total, const grid_slurm_opts *o)
{
    char bin[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 64], sum_path[PATH_MAX + 64], err[1200];
    ssize_t bl = readlink("/proc/self/exe", bin, sizeof bin - 1);
    if (bl <= 0 || !realpath(out, dir)) return die_msg("grid: --slurm: cannot resolve %s or this binary's path", out), 1;
    bin[bl] = 0;
    if (strchr(dir, '\'') || strchr(dir, '\n'))
        return die_msg("grid: --slurm: %s: a quote or newline in the path", dir), 1;
    snprintf(path, sizeof path, "%s/slurm/logs", dir);
    if (make_dirs_msg(path, err, sizeof err)) return die_msg("grid: %s", err), 1;
    char *a = array_script(bin, dir, ids, n, o), *s = summary_script(bin, dir, o);
    snprintf(path, sizeof path, "%s/slurm/grid.sbatch", dir);
    snprintf(sum_path, sizeof sum_path, "%s/slurm/summary.sbatch", dir);
    int oom = !a || !s;
    int rc = oom || write_file_atomic_msg(path, a, strlen(a), err, sizeof err) ||
             write_file_atomic_msg(sum_path, s, strlen(s), err, sizeof err);
    free(a);
    free(s);
    if (rc) return die_msg("grid: --slurm: %s", oom ? "out of memory" : err), 1;
    char ranges[8192];
    grid_slurm_ranges(ids, n, ranges, sizeof ranges);
    if (o->script_only) {
        printf("grid %s: wrote %s (cells %s: %d of %d) and %s\nsubmit with: sbatch %s\nthen: sbatch "
               "--dependency=afterany:JOBID %s\n",
               out, path, ranges, n, total, sum_path, path, sum_path);
        return 0;
    }
    long job = submit(path, 0, err, sizeof err);
    if (job < 0) return die_msg("grid: --slurm: sbatch %s: %s", path, err), 1;
    long sjob = submit(sum_path, job, err, sizeof err);
    printf("grid %s: submitted batch job %ld: cells %s (%d task%s of %d cells%s)\n", out, job, ranges, n,
           n == 1 ? "" : "s", total, o->max_parallel > 0 ? ", limited at once" : "");
    if (sjob > 0) printf("summary: batch job %ld runs `pcgrllm grid --out %s --summary` after it\n", sjob, out);
    else printf("summary job not submitted (%s); run `pcgrllm grid --out %s --summary` when the array ends\n", err, out);
    printf("follow: squeue -j %ld; logs in %s/slurm/logs/ and %s/cells/NAME.log\n", job, dir, dir);
    printf("summarise any time: pcgrllm grid --out %s --summary\n", out);
    return 0;
}
