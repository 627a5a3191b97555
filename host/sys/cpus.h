/* How many threads this process should use: the CPUs it may run on (its
 * affinity mask, as taskset or a batch scheduler sets it), capped by the
 * CPU quota of its cgroup (cpu.max, as containers and Slurm's cgroup
 * plugin set it), and -- unless the user chose a number -- not more than
 * the CPUs that are actually idle: an OpenMP team waits at every barrier
 * for its slowest thread, so a thread that shares a core with another busy
 * process makes every parallel region as slow as that core's time slice. */
#ifndef PCG_CPUS_H
#define PCG_CPUS_H

typedef struct {
    int affinity;   /* CPUs in the affinity mask */
    double quota;   /* the cgroup's CPU quota in CPUs; 0 = none */
    double idle;    /* idle CPUs over the sample (of those allowed); < 0 if not measured */
    int threads;    /* what the engine uses */
} cpu_budget;

/* Measure (sample_s of /proc/stat, 0 = skip the idle measurement) and
 * decide.  Never fails: at worst 1 thread. */
cpu_budget cpus_measure(double sample_s);

/* At start-up: unless OMP_NUM_THREADS is set, the OpenMP default becomes
 * cpus_measure's threads.  Returns the budget used. */
cpu_budget cpus_apply_default(void);
/* The budget cpus_apply_default chose (all zero before it ran). */
cpu_budget cpus_current(void);
/* "2 threads (2 CPUs allowed, 1.0 idle)" into buf. */
void cpus_describe(const cpu_budget *b, char *buf, int len);

#endif
