/* The rule-based judge's proxies and synthetic personas (judge_offline.h). */
#include "judge_offline.h"
#include "philox.h"
#include "util.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const personas[PREFER_N_PERSONAS] = {"efficiency_essentialist", "narrative_architect",
                                                        "social_lubricator", "system_purist", "thrill_seeker"};

/* Planted weights, in the order of dimensions.h; each persona values what
 * its prompt file says it values. */
static const double weights[PREFER_N_PERSONAS][PREFER_N_DIMS] = {
    {0.6, 0.2, 0.3, 0.8, -0.2, 0.9, -0.4, 0.0, 0.0, -0.3, -0.2, -0.3},
    {0.2, 0.1, 0.2, 0.0, 0.2, 0.1, 0.5, 0.9, 0.7, 0.0, 0.1, 0.2},
    {0.5, 0.3, 0.4, 0.5, 0.1, 0.2, 0.2, 0.3, 0.3, -0.4, -0.2, 0.1},
    {0.3, 0.3, 0.0, 0.0, 0.5, 0.4, 0.2, 0.0, 0.0, 0.8, 0.7, -0.5},
    {0.0, 0.6, 0.2, -0.2, 0.2, 0.3, 0.3, 0.2, 0.6, 0.0, 0.3, 0.9},
};
#define PERSONA_INTERCEPT 5.5
#define PERSONA_NOISE_SD 0.5

const char *persona_name(int p) { return p >= 0 && p < PREFER_N_PERSONAS ? personas[p] : NULL; }

int persona_index(const char *name)
{
    for (int p = 0; name && p < PREFER_N_PERSONAS; p++)
        if (!strcmp(personas[p], name)) return p;
    return -1;
}

const double *persona_weights(int p, double *intercept)
{
    if (p < 0 || p >= PREFER_N_PERSONAS) return NULL;
    if (intercept) *intercept = PERSONA_INTERCEPT;
    return weights[p];
}

/* x in [lo, hi] mapped linearly onto 1..5, rounded. */
static int scale5(double x, double lo, double hi)
{
    double t = hi > lo ? (x - lo) / (hi - lo) : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return (int)lround(1 + 4 * t);
}

static double share(int part, int whole) { return whole > 0 ? (double)part / whole : 0; }

static void functional_dims(const play_features *f, int *s, char why[][JUDGE_WHY_LEN])
{
    int n = f->positions, won = f->end == 0;
    s[DIM_GOALS_RULES] = f->key_seen_step < 0 ? 1 : scale5(1 - share(f->key_seen_step, n), 0, 1);
    say_to(why[DIM_GOALS_RULES], JUDGE_WHY_LEN, f->key_seen_step < 0 ? "the key never came into view" :
           "the key came into view at step %d of %d", f->key_seen_step, f->steps);
    s[DIM_CHALLENGE_FIT] = won ? scale5(-fabs(f->steps - 45.0), -60, 0) : 1;
    say_to(why[DIM_CHALLENGE_FIT], JUDGE_WHY_LEN, won ? "%d steps to the door (about 45 suits a 16x16 walk)" :
           "the play did not reach the door (%d steps)", f->steps);
    s[DIM_PROGRESS_FEEDBACK] = scale5(share(f->visited, n), 0.3, 1);
    say_to(why[DIM_PROGRESS_FEEDBACK], JUDGE_WHY_LEN, "%d of %d positions were new ground", f->visited, n);
    s[DIM_EASE_OF_CONTROL] = scale5(-share(f->dead_ends, n), -0.1, 0);
    say_to(why[DIM_EASE_OF_CONTROL], JUDGE_WHY_LEN, "%d dead ends in %d positions", f->dead_ends, n);
    s[DIM_AUTONOMY] = scale5(f->mean_moves, 1.5, 3);
    say_to(why[DIM_AUTONOMY], JUDGE_WHY_LEN, "%.2f legal moves per position, %d junctions", f->mean_moves,
           f->junctions);
    s[DIM_MASTERY] = won ? scale5(1 - share(f->backtracks, f->steps), 0, 1) : f->key_step >= 0 ? 2 : 1;
    say_to(why[DIM_MASTERY], JUDGE_WHY_LEN, won ? "reached the door with %d backtracks" :
           f->key_step >= 0 ? "took the key but not the door (%d backtracks)" : "never took the key (%d backtracks)",
           f->backtracks);
}

static void psychosocial_dims(const play_features *f, int *s, char why[][JUDGE_WHY_LEN])
{
    int n = f->positions, won = f->end == 0;
    s[DIM_CURIOSITY] = scale5(f->visited + 4.0 * f->enemies_seen, 10, 80);
    say_to(why[DIM_CURIOSITY], JUDGE_WHY_LEN, "%d cells explored, %d enemies discovered", f->visited,
           f->enemies_seen);
    s[DIM_MEANING] = 1 + 2 * won + (f->key_guarded ? 2 : f->key_step >= 0 ? 1 : 0);
    if (s[DIM_MEANING] > 5) s[DIM_MEANING] = 5;
    say_to(why[DIM_MEANING], JUDGE_WHY_LEN, "%s; the key was %s", won ? "the door was earned" : "no door reached",
           f->key_guarded ? "guarded by an enemy in view" : f->key_step >= 0 ? "unguarded" : "never taken");
    int events = f->enemies_seen + (f->key_step >= 0) + won;
    s[DIM_IMMERSION] = scale5(share(events, n), 0, 0.3);
    say_to(why[DIM_IMMERSION], JUDGE_WHY_LEN, "%d events (enemies, key, door) over %d positions", events, n);
}

static void challenge_dims(const play_features *f, int *s, char why[][JUDGE_WHY_LEN])
{
    int n = f->positions;
    s[DIM_COGNITIVE] = scale5(share(f->backtracks, n), 0, 0.4);
    say_to(why[DIM_COGNITIVE], JUDGE_WHY_LEN, "%d wrong turns walked back in %d positions", f->backtracks, n);
    s[DIM_DECISION] = scale5(share(f->junctions, n), 0.2, 0.9);
    say_to(why[DIM_DECISION], JUDGE_WHY_LEN, "%d of %d positions were forks", f->junctions, n);
    s[DIM_EMOTIONAL] = scale5(share(f->tense, n), 0, 0.6);
    say_to(why[DIM_EMOTIONAL], JUDGE_WHY_LEN, "an enemy was in view at %d of %d positions", f->tense, n);
}

void judge_offline_dims(const play_features *f, int scores[PREFER_N_DIMS], char why[PREFER_N_DIMS][JUDGE_WHY_LEN])
{
    functional_dims(f, scores, why);
    psychosocial_dims(f, scores, why);
    challenge_dims(f, scores, why);
}

/* One standard normal draw from the stream (Box-Muller). */
static double normal_draw(philox_stream *s)
{
    double u1 = (philox_next(s) + 1.0) / 4294967297.0, u2 = philox_next(s) / 4294967296.0;
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

int judge_offline_overall(const play_features *f, int p, unsigned seed, int r)
{
    int x[PREFER_N_DIMS];
    char why[PREFER_N_DIMS][JUDGE_WHY_LEN];
    judge_offline_dims(f, x, why);
    double y;
    if (p < 0) {
        double mean = 0;
        for (int j = 0; j < PREFER_N_DIMS; j++) mean += x[j] / (double)PREFER_N_DIMS;
        y = 1 + (mean - 1) * 9 / 4;
    } else {
        double b;
        const double *w = persona_weights(p, &b);
        y = b;
        for (int j = 0; j < PREFER_N_DIMS; j++) y += w[j] * (x[j] - 3);
        philox_stream s;
        uint64_t who = fnv1a64(f->player, strlen(f->player), fnv1a64(f->level, strlen(f->level), FNV1A64_INIT));
        philox_stream_init(&s, seed, who ^ (uint64_t)p,
                           (uint64_t)r * 2);
        y += PERSONA_NOISE_SD * normal_draw(&s);
    }
    long v = lround(y);
    return v < 1 ? 1 : v > 10 ? 10 : (int)v;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int judge_offline_rating(const play_features *f, int p, unsigned seed, int repeats, int *ratings)
{
    int sorted[JUDGE_MAX_REPEATS];
    for (int r = 0; r < repeats; r++) sorted[r] = ratings[r] = judge_offline_overall(f, p, seed, r);
    qsort(sorted, (size_t)repeats, sizeof *sorted, cmp_int);
    return sorted[repeats / 2];
}
