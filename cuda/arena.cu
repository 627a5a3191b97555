/* The device arena: one cudaMalloc, bump allocation, release to a mark.
 * Every device allocation of the backend comes from here, so memory use is
 * one number and nothing is allocated inside the training loop. */
#include "common.cuh"
#include <mutex>

#define ARENA_ALIGN 256
#define ARENA_DEFAULT ((size_t)1 << 30)
/* cuBLAS's workspace sits at the bottom of the arena, below every mark. */
#define BLAS_WORKSPACE ((size_t)32 << 20)

static std::mutex arena_lock;
static char *arena_base;
static size_t arena_cap, arena_used, arena_want = ARENA_DEFAULT;

int pcg_arena_reserve(size_t bytes)
{
    std::lock_guard<std::mutex> g(arena_lock);
    if (arena_base) {
        pcg_cuda_set_error("device arena already allocated (%zu bytes): reserve before the first allocation",
                           arena_cap);
        return -1;
    }
    arena_want = bytes;
    return 0;
}

void *pcg_arena_alloc(size_t bytes)
{
    std::lock_guard<std::mutex> g(arena_lock);
    if (!arena_base) {
        void *p = NULL;
        cudaError_t e = cudaMalloc(&p, arena_want + BLAS_WORKSPACE);
        if (e != cudaSuccess) {
            pcg_cuda_set_error("device arena of %zu MiB could not be allocated: %s", arena_want >> 20,
                               cudaGetErrorString(e));
            return NULL;
        }
        arena_base = (char *)p;
        arena_cap = arena_want + BLAS_WORKSPACE;
        arena_used = BLAS_WORKSPACE;
    }
    size_t need = (bytes + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (need > arena_cap - arena_used) {
        pcg_cuda_set_error("device arena full: %zu MiB requested, %zu of %zu MiB free (reserve more)",
                           (need + (1 << 20) - 1) >> 20, (arena_cap - arena_used) >> 20, arena_cap >> 20);
        return NULL;
    }
    void *p = arena_base + arena_used;
    arena_used += need;
    return p;
}

void *pcg_arena_blas_workspace(size_t *bytes)
{
    if (!arena_base && !pcg_arena_alloc(0)) return NULL;
    *bytes = BLAS_WORKSPACE;
    return arena_base;
}

size_t pcg_arena_mark(void)
{
    std::lock_guard<std::mutex> g(arena_lock);
    return arena_used;
}

void pcg_arena_release(size_t mark)
{
    std::lock_guard<std::mutex> g(arena_lock);
    if (mark < BLAS_WORKSPACE) mark = BLAS_WORKSPACE;
    if (mark < arena_used) arena_used = mark;
}

void pcg_arena_stats(size_t *used, size_t *capacity)
{
    std::lock_guard<std::mutex> g(arena_lock);
    if (used) *used = arena_used;
    if (capacity) *capacity = arena_base ? arena_cap : arena_want + BLAS_WORKSPACE;
}
