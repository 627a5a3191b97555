/* The CPU threads the simulation runs blocks on.  Its own pool rather than
 * OpenMP's: a confined trainer may not start threads once it runs reward
 * code, and the pool is made whole when the backend's stream is, before
 * any confinement; OpenMP could still add a thread later. */
#include "sim.h"
#include <atomic>
#include <condition_variable>
#include <errno.h>
#include <mutex>
#include <omp.h>
#include <stdlib.h>
#include <thread>
#include <vector>

namespace {

struct job {
    long long n;
    void (*fn)(void *, long long);
    void *ctx;
    std::atomic<long long> next;
    std::atomic<int> busy;
};

/* never destroyed: the workers wait on them until the process ends, and a
 * condition variable destroyed under a waiter blocks the exit */
std::mutex &lock = *new std::mutex;
std::condition_variable &wake = *new std::condition_variable, &idle = *new std::condition_variable;
job *current;
unsigned long long generation;
std::vector<std::thread> &workers = *new std::vector<std::thread>;

enum { CHUNK = 4 };

void work_on(job *j)
{
    for (;;) {
        long long k0 = j->next.fetch_add(CHUNK);
        if (k0 >= j->n) break;
        long long k1 = k0 + CHUNK < j->n ? k0 + CHUNK : j->n;
        for (long long k = k0; k < k1; k++) j->fn(j->ctx, k);
    }
}

void worker_main(void)
{
    unsigned long long seen = 0;
    for (;;) {
        job *j;
        {
            std::unique_lock<std::mutex> g(lock);
            wake.wait(g, [&] { return generation != seen; });
            seen = generation;
            j = current;
            if (!j) continue; /* that grid is done already */
            j->busy++;
        }
        work_on(j);
        {
            std::lock_guard<std::mutex> g(lock);
            if (--j->busy == 0) idle.notify_all();
        }
    }
}

} // namespace

int pcg_sim_threads_env(void)
{
    const char *env = getenv("PCGRLLM_SIM_THREADS");
    if (!env || !*env) return 0;
    char *end;
    errno = 0;
    long n = strtol(env, &end, 10);
    return *end || errno || n < 1 || n > PCG_SIM_MAX_THREADS ? -1 : (int)n;
}

void pcg_sim_pool_start(void)
{
    std::lock_guard<std::mutex> g(lock);
    if (!workers.empty()) return;
    /* the training's thread count (omp_set_num_threads) when set, else
     * PCGRLLM_SIM_THREADS, else the CPUs this process may use */
    int n = pcg_sim_threads_env();
    if (n <= 0) n = omp_get_max_threads();
    if (n > PCG_SIM_MAX_THREADS) n = PCG_SIM_MAX_THREADS;
    for (int i = 1; i < n; i++) workers.emplace_back(worker_main);
    for (std::thread &t : workers) t.detach();
}

void pcg_sim_pool_run(long long n, void (*fn)(void *, long long), void *ctx)
{
    if (n <= CHUNK || workers.empty()) {
        for (long long k = 0; k < n; k++) fn(ctx, k);
        return;
    }
    job j;
    j.n = n;
    j.fn = fn;
    j.ctx = ctx;
    j.next = 0;
    j.busy = 1; /* this thread */
    {
        std::lock_guard<std::mutex> g(lock);
        current = &j;
        generation++;
    }
    wake.notify_all();
    work_on(&j);
    std::unique_lock<std::mutex> g(lock);
    current = NULL; /* every block is taken: no thread joins from here on */
    j.busy--;
    idle.wait(g, [&] { return j.busy == 0; });
}
