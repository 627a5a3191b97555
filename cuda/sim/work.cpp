/* The simulation's work counters: one entry per kernel name (or cuBLAS call
 * shape, copy, set, host reward), in the order first seen. */
#include "sim.h"
#include <mutex>
#include <stdio.h>
#include <string.h>
#include <vector>

static std::mutex work_lock;
static std::vector<pcg_cuda_work> work;

static pcg_cuda_work &entry(const char *name)
{
    for (pcg_cuda_work &w : work)
        if (!strncmp(w.name, name, sizeof w.name - 1)) return w;
    pcg_cuda_work w;
    memset(&w, 0, sizeof w);
    snprintf(w.name, sizeof w.name, "%s", name);
    work.push_back(w);
    return work.back();
}

void pcg_sim_work_launch(const char *name, uint64_t threads)
{
    std::lock_guard<std::mutex> g(work_lock);
    pcg_cuda_work &w = entry(name);
    w.launches++;
    w.threads += threads;
}

void pcg_sim_work_add(const char *name, uint64_t threads, uint64_t bytes_read, uint64_t bytes_written,
                      uint64_t flops)
{
    std::lock_guard<std::mutex> g(work_lock);
    pcg_cuda_work &w = entry(name);
    w.launches++;
    w.threads += threads;
    w.bytes_read += bytes_read;
    w.bytes_written += bytes_written;
    w.flops += flops;
}

void pcg_sim_work_sync(void)
{
    std::lock_guard<std::mutex> g(work_lock);
    entry("host synchronisations").launches++;
}

const pcg_cuda_work *pcg_sim_work_counters(int *count)
{
    std::lock_guard<std::mutex> g(work_lock);
    *count = (int)work.size();
    return work.data();
}

void pcg_sim_work_reset(void)
{
    std::lock_guard<std::mutex> g(work_lock);
    work.clear();
}
