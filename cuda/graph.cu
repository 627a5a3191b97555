/* CUDA graphs of repeated work (common.cuh, pcg_graph).  A launch the host
 * makes costs it a few microseconds; the launches of a graph are made by
 * the device from one launch of the host's, at about half that each
 * (docs/cuda.md), and the trainer's minibatch is some 150 launches. */
#include "common.cuh"
#include <stdlib.h>
#include <string.h>

int pcg_graphs_env(void)
{
    const char *v = getenv("PCGRLLM_CUDA_GRAPHS");
    if (!v || !*v || !strcmp(v, "1")) return 1;
    return !strcmp(v, "0") ? 0 : -1;
}

/* The capture's graph made launchable, its scratch held: 0, or 1 with
 * nothing kept. */
static int graph_keep(pcg_graph *g, cudaGraph_t graph, size_t start, size_t peak)
{
    cudaGraphExec_t exec = NULL;
    cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return 1;
    }
    if (pcg_arena_hold(peak)) {
        cudaGraphExecDestroy(exec);
        return 1;
    }
    g->exec = exec;
    g->start = start;
    g->end = pcg_arena_mark();
    return 0;
}

int pcg_graph_capture(pcg_graph *g, int (*fn)(void *), void *ctx)
{
    memset(g, 0, sizeof *g);
    cudaStream_t s = pcg_cuda_stream();
    size_t start = pcg_arena_mark(), peak = 0;
    /* thread-local: only this thread's capture-unsafe calls end it.  The
     * backend has one stream and one arena, so a capture is correct only
     * while no other host thread uses the backend (none does). */
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        cudaGetLastError();
        return 1;
    }
    pcg_arena_watch();
    int rc = fn(ctx);
    int moved = pcg_arena_watch_end(&peak);
    cudaGraph_t graph = NULL;
    cudaError_t e = cudaStreamEndCapture(s, &graph);
    pcg_arena_release(start);
    if (rc || moved || e != cudaSuccess || !graph) {
        if (graph) cudaGraphDestroy(graph);
        cudaGetLastError(); /* what the capture left is not the work's error */
        return 1;
    }
    return graph_keep(g, graph, start, peak);
}

int pcg_graph_launch(const pcg_graph *g)
{
    PCG_CK(cudaGraphLaunch(g->exec, pcg_cuda_stream()), -1);
    return 0;
}

void pcg_graph_free(pcg_graph *g)
{
    if (g->exec) cudaGraphExecDestroy(g->exec);
    memset(g, 0, sizeof *g);
}
