/* Stream capture and graphs in the simulation.  The one stream runs work
 * as it is enqueued, so a capture keeps each enqueued piece of work (a
 * launch with its converted arguments, a copy, a set, a cuBLAS call) as a
 * closure instead, and a graph launch runs the closures in order.  What a
 * device refuses during a capture is refused here too: a host
 * synchronisation, an allocation or a free invalidates the capture, and
 * its end reports that; the legacy stream is not captured. */
#include "cuda_runtime.h"
#include "sim.h"
#include <vector>

struct pcg_sim_graph {
    std::vector<std::function<void()>> work;
};

namespace {
pcg_sim_graph *captured;  /* the capture under way, or NULL */
bool capture_invalidated; /* a host synchronisation came during it */
thread_local int replaying; /* graph launches running on this thread */
} // namespace

bool pcg_sim::capturing(void)
{
    return captured != NULL;
}

void pcg_sim::record(std::function<void()> work)
{
    captured->work.push_back(std::move(work));
}

bool pcg_sim_in_graph(void)
{
    return replaying > 0;
}

cudaError_t pcg_sim_capture_sync(void)
{
    if (!captured) return cudaSuccess;
    capture_invalidated = true;
    return cudaErrorStreamCaptureUnsupported;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode)
{
    if (!s) return cudaErrorStreamCaptureUnsupported; /* the legacy stream is never captured */
    if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
        mode != cudaStreamCaptureModeRelaxed)
        return cudaErrorInvalidValue;
    if (captured) return cudaErrorIllegalState;
    captured = new pcg_sim_graph();
    capture_invalidated = false;
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t *graph)
{
    if (!captured) return cudaErrorIllegalState;
    pcg_sim_graph *g = captured;
    captured = NULL;
    if (capture_invalidated) {
        delete g;
        *graph = NULL;
        return cudaErrorStreamCaptureInvalidated;
    }
    *graph = g;
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long)
{
    if (!exec || !graph) return cudaErrorInvalidValue;
    *exec = new pcg_sim_graph(*graph);
    return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t)
{
    if (!exec) return cudaErrorInvalidResourceHandle;
    if (captured) {
        /* a graph launched into a capture becomes part of it */
        std::vector<std::function<void()>> work = exec->work;
        pcg_sim::record([work] {
            for (const auto &w : work) w();
        });
        return cudaSuccess;
    }
    pcg_sim_work_add(PCG_WORK_GRAPH, 0, 0, 0, 0);
    replaying++;
    for (const auto &w : exec->work) w();
    replaying--;
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    delete exec;
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    delete graph;
    return cudaSuccess;
}
