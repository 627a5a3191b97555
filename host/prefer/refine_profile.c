/* A generator's experience profile: its levels played and judged (refine.h). */
#include "refine.h"
#include "judge_model.h"
#include "judge_offline.h"
#include "play.h"
#include "prompts.h"
#include "trajectory.h"
#include "util.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One play judged: its twelve scores (NaN where missing) and rating (NaN
 * when none).  0, or -1 with one line (REFINE_SERVER_FAILED: the server). */
static int judge_play(const refine_opts *o, int p, const char *persona_text, const json_t *defs, const char *path,
                      const play_features *f, double *x, double *rating, int *complete, char *err, int errlen)
{
    if (!o->judge_model) {
        int s[PREFER_N_DIMS], r[JUDGE_MAX_REPEATS];
        char why[PREFER_N_DIMS][JUDGE_WHY_LEN];
        judge_offline_dims(f, s, why);
        for (int j = 0; j < PREFER_N_DIMS; j++) x[j] = s[j];
        *rating = judge_offline_rating(f, p, o->seed, o->repeats, r);
        *complete = 1;
        return 0;
    }
    char *play = traj_render(path, 300, err, errlen);
    if (!play) return -1;
    judge_result jr;
    int rc = judge_model_assess(&o->llm, defs, persona_text, play, o->repeats, &jr, err, errlen);
    free(play);
    if (rc) return REFINE_SERVER_FAILED;
    for (int j = 0; j < PREFER_N_DIMS; j++) x[j] = jr.answers[j] ? jr.score[j] : NAN;
    *rating = jr.n_ratings ? jr.rating : NAN;
    *complete = jr.complete;
    return 0;
}

/* Level i of ls played into dir/plays/level_III.jsonl and read back. */
static int play_one(const refine_opts *o, const level_set *ls, int i, const char *dir, char *path, size_t plen,
                    play_features *f, char *err, int errlen)
{
    char name[32];
    snprintf(name, sizeof name, "level_%03d", i);
    snprintf(path, plen, "%s/plays/%s.jsonl", dir, name);
    play_opts po;
    play_opts_default(&po);
    po.player = PLAY_EXPLORER;
    po.seed = o->seed + (unsigned)i;
    /* in memory first: the record lands by rename, as every file of a run */
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    if (!fp) return say_to(err, errlen, "out of memory"), -1;
    play_summary sum;
    int rc = play_write_record(fp, name, &ls->levels[i], &po, &sum);
    rc |= fclose(fp);
    if (!rc) rc = write_file_atomic_msg(path, text, len, err, errlen);
    else say_to(err, errlen, "out of memory");
    free(text);
    return rc ? -1 : traj_read(path, f, err, errlen);
}

int refine_profile_levels(const refine_opts *o, int p, const char *persona_text, const level_set *ls,
                          const char *dir, refine_profile *out, char *err, int errlen)
{
    char plays[1200];
    snprintf(plays, sizeof plays, "%s/plays", dir);
    if (make_dirs_msg(plays, err, errlen)) return -1;
    json_t *defs = o->judge_model ? dim_load(err, errlen) : NULL;
    if (o->judge_model && !defs) return -1;
    double sum[PREFER_N_DIMS] = {0}, rsum = 0;
    int count[PREFER_N_DIMS] = {0}, rcount = 0, rc = 0;
    memset(out, 0, sizeof *out);
    out->complete = 1;
    for (int i = 0; i < ls->n && !rc; i++) {
        char path[1300];
        play_features f;
        double x[PREFER_N_DIMS], rating;
        int complete;
        rc = play_one(o, ls, i, dir, path, sizeof path, &f, err, errlen) ? -1
             : judge_play(o, p, persona_text, defs, path, &f, x, &rating, &complete, err, errlen);
        if (rc) break;
        for (int j = 0; j < PREFER_N_DIMS; j++)
            if (!isnan(x[j])) sum[j] += x[j], count[j]++;
        if (!isnan(rating)) rsum += rating, rcount++;
        out->complete &= complete;
        out->plays++;
    }
    json_decref(defs);
    for (int j = 0; j < PREFER_N_DIMS; j++) out->x[j] = count[j] ? sum[j] / count[j] : NAN;
    out->rating = rcount ? rsum / rcount : NAN;
    return rc;
}
