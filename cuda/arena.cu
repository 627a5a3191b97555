/* The device arena: bump allocation from a few large cudaMalloc blocks,
 * release to a mark.  Every device allocation of the backend comes from
 * here, so memory use is one number and nothing is allocated inside the
 * training loop.  The arena grows: an allocation that does not fit the
 * current block takes the next one (a block released earlier is kept and
 * reused, so a mark/alloc/release cycle never calls cudaMalloc twice), so a
 * small first use (a benchmark, the device probe) never pins the arena at
 * a size that the paper preset's activations then overflow. */
#include "common.cuh"
#include <mutex>

#define ARENA_ALIGN 256
#define ARENA_DEFAULT ((size_t)1 << 30)
#define ARENA_MAX_BLOCKS 32
/* cuBLAS's workspace sits at the bottom of the first block, below every mark. */
#define BLAS_WORKSPACE ((size_t)32 << 20)
/* A mark: the block index in the high bits, the offset in it below. */
#define MARK_SHIFT 48

/* In the simulation's sanitizer build every allocation is followed by a
 * poisoned gap, and free space is poisoned, so a kernel reading past its
 * array inside a block is reported as if the arrays were separate. */
#if defined(PCG_SIM) && defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define ARENA_REDZONE ARENA_ALIGN
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define ARENA_REDZONE 0
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

typedef struct {
    char *base;
    size_t cap, used;
} arena_block;

static std::mutex arena_lock;
static arena_block blocks[ARENA_MAX_BLOCKS];
static int n_blocks;   /* allocated (some may be released for reuse) */
static int cur = -1;   /* the block allocations come from; -1 before the first */
static size_t next_size = ARENA_DEFAULT;
/* pcg_arena_watch: the block watched and the highest use in it since, or
 * moved when an allocation took another block */
static bool watching, watch_moved;
static int watch_block;
static size_t watch_peak;

int pcg_arena_reserve(size_t bytes)
{
    std::lock_guard<std::mutex> g(arena_lock);
    next_size = bytes; /* the size of the next block the arena takes */
    return 0;
}

static size_t block_floor(int i)
{
    return i == 0 ? BLAS_WORKSPACE : 0;
}

/* Move to a block with need bytes free: a kept one, or a new one. */
static int next_block(size_t need)
{
    for (int i = cur + 1; i < n_blocks; i++)
        if (blocks[i].cap - block_floor(i) >= need) {
            cur = i;
            blocks[i].used = block_floor(i);
            POISON(blocks[i].base + block_floor(i), blocks[i].cap - block_floor(i));
            return 0;
        }
    if (watching) {
        /* cudaMalloc would end a capture: the work runs without one */
        watch_moved = true;
        pcg_cuda_set_error("device arena: %zu bytes more needed during a graph's capture", need);
        return -1;
    }
    if (n_blocks == ARENA_MAX_BLOCKS) {
        pcg_cuda_set_error("device arena: more than %d blocks requested", ARENA_MAX_BLOCKS);
        return -1;
    }
    size_t cap = (need > next_size ? need : next_size) + block_floor(n_blocks);
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, cap);
    if (e != cudaSuccess) {
        cudaGetLastError(); /* an allocation failure is not sticky: clear it */
        pcg_cuda_set_error("device arena: cudaMalloc of %zu MiB failed: %s", cap >> 20, cudaGetErrorString(e));
        return -1;
    }
    /* blocks past cur that were too small are dropped from the reuse order */
    for (int i = cur + 1; i < n_blocks; i++) cudaFree(blocks[i].base);
    n_blocks = cur + 1;
    POISON((char *)p + block_floor(n_blocks), cap - block_floor(n_blocks));
    blocks[n_blocks] = {(char *)p, cap, block_floor(n_blocks)};
    cur = n_blocks++;
    return 0;
}

void *pcg_arena_alloc(size_t bytes)
{
    std::lock_guard<std::mutex> g(arena_lock);
    size_t need = ((bytes + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1)) + ARENA_REDZONE;
    if ((cur < 0 || need > blocks[cur].cap - blocks[cur].used) && next_block(need)) return NULL;
    void *p = blocks[cur].base + blocks[cur].used;
    blocks[cur].used += need;
    if (watching) {
        if (cur != watch_block) watch_moved = true;
        else if (blocks[cur].used > watch_peak) watch_peak = blocks[cur].used;
    }
    UNPOISON(p, bytes);
    return p;
}

int pcg_arena_hold(size_t mark)
{
    std::lock_guard<std::mutex> g(arena_lock);
    int b = (int)(mark >> MARK_SHIFT);
    size_t off = mark & (((size_t)1 << MARK_SHIFT) - 1);
    if (b != cur || off < blocks[b].used || off > blocks[b].cap) return -1;
    UNPOISON(blocks[b].base + blocks[b].used, off - blocks[b].used);
    blocks[b].used = off;
    return 0;
}

void pcg_arena_watch(void)
{
    std::lock_guard<std::mutex> g(arena_lock);
    watching = true;
    watch_moved = false;
    watch_block = cur;
    watch_peak = cur >= 0 ? blocks[cur].used : 0;
}

int pcg_arena_watch_end(size_t *peak_mark)
{
    std::lock_guard<std::mutex> g(arena_lock);
    watching = false;
    if (watch_moved || watch_block < 0) return -1;
    *peak_mark = ((size_t)watch_block << MARK_SHIFT) | watch_peak;
    return 0;
}

void *pcg_arena_blas_workspace(size_t *bytes)
{
    if (n_blocks == 0 && !pcg_arena_alloc(0)) return NULL;
    *bytes = BLAS_WORKSPACE;
    return blocks[0].base;
}

size_t pcg_arena_mark(void)
{
    std::lock_guard<std::mutex> g(arena_lock);
    if (cur < 0) return 0;
    return ((size_t)cur << MARK_SHIFT) | blocks[cur].used;
}

void pcg_arena_release(size_t mark)
{
    std::lock_guard<std::mutex> g(arena_lock);
    int b = (int)(mark >> MARK_SHIFT);
    size_t off = mark & (((size_t)1 << MARK_SHIFT) - 1);
    if (cur < 0 || b > cur) return;
    cur = b;
    if (off < block_floor(b)) off = block_floor(b);
    if (off < blocks[b].used) {
        POISON(blocks[b].base + off, blocks[b].used - off);
        blocks[b].used = off;
    }
}

void pcg_arena_stats(size_t *used, size_t *capacity)
{
    std::lock_guard<std::mutex> g(arena_lock);
    size_t u = 0, c = 0;
    for (int i = 0; i < n_blocks; i++) {
        if (i <= cur) u += i < cur ? blocks[i].cap : blocks[i].used;
        c += blocks[i].cap;
    }
    if (used) *used = u;
    if (capacity) *capacity = n_blocks ? c : next_size + BLAS_WORKSPACE;
}
