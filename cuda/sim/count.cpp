/* Global-memory bytes of the hand-written kernels, counted access by access.
 *
 * The counting build (`make cuda-sim COUNT=1`, docs/cuda.md) compiles the
 * .cu files of cuda/ with gcc's ThreadSanitizer instrumentation and without
 * its runtime: every load and store the optimised code still makes calls
 * one of the __tsan_* hooks below with its address and size.  A hook counts only
 * while a kernel body runs on its CPU thread (run_block brackets each block
 * with pcg_sim_count_begin/end) and only addresses inside a cudaMalloc
 * block, so host code, kernel arguments, locals and shared memory (all on
 * host stacks or in thread-local storage) are left out.  Tallies are per
 * CPU thread, added into the launch's at the end of each block.
 *
 * The other builds do not instrument the kernels; there these hooks are
 * never called and pcg_sim_count_enabled() says why nothing was counted. */
#include "sim.h"
#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdint.h>
#include <vector>

/* ---- the device allocations ---- */

namespace {

struct range_set {
    int n;
    uintptr_t lo[64], hi[64]; /* sorted, [lo, hi) */
};

std::mutex ranges_lock;
std::atomic<const range_set *> ranges{nullptr};
/* Replaced sets stay allocated: a block running on another thread may
 * still read one, and there are only as many as cudaMalloc calls. */
std::vector<range_set *> retired;

/* The current set with one range added (bytes > 0) or removed. */
void ranges_change(uintptr_t lo, size_t bytes)
{
    std::lock_guard<std::mutex> g(ranges_lock);
    const range_set *old = ranges.load(std::memory_order_acquire);
    range_set *s = new range_set();
    std::vector<std::pair<uintptr_t, uintptr_t>> v;
    for (int i = 0; old && i < old->n; i++)
        if (old->lo[i] != lo) v.push_back({old->lo[i], old->hi[i]});
    if (bytes) v.push_back({lo, lo + bytes});
    std::sort(v.begin(), v.end());
    /* more blocks than slots: the oldest addresses go uncounted, which a
     * test of the counters would show; the arena takes at most 32 */
    s->n = (int)std::min(v.size(), (size_t)64);
    for (int i = 0; i < s->n; i++) s->lo[i] = v[i].first, s->hi[i] = v[i].second;
    ranges.store(s, std::memory_order_release);
    if (old) retired.push_back(const_cast<range_set *>(old));
}

/* This CPU thread's tally; set only while a block of a kernel runs. */
struct tally {
    const range_set *r;
    uint64_t read, written;
};
thread_local tally here_tally;

inline bool in_device(const range_set *s, uintptr_t a)
{
    for (int i = 0; i < s->n; i++)
        if (a < s->hi[i]) return a >= s->lo[i];
    return false;
}

inline void on_read(const void *p, uint64_t size)
{
    tally &t = here_tally;
    if (t.r && in_device(t.r, (uintptr_t)p)) t.read += size;
}

inline void on_write(const void *p, uint64_t size)
{
    tally &t = here_tally;
    if (t.r && in_device(t.r, (uintptr_t)p)) t.written += size;
}

} // namespace

void pcg_sim_count_alloc(void *p, size_t bytes)
{
    if (p && bytes) ranges_change((uintptr_t)p, bytes);
}

void pcg_sim_count_free(void *p)
{
    if (p) ranges_change((uintptr_t)p, 0);
}

const char *pcg_sim_count_enabled(void)
{
#if defined(PCG_SIM_COUNT)
    return NULL;
#elif defined(__SANITIZE_ADDRESS__)
    return PCG_WORK_NOTE "kernel bytes not counted: AddressSanitizer build";
#else
    return PCG_WORK_NOTE "kernel bytes not counted: plain build (COUNT=1 counts)";
#endif
}

void pcg_sim_count_begin(void)
{
    tally &t = here_tally;
    t.read = t.written = 0;
    t.r = ranges.load(std::memory_order_acquire);
}

void pcg_sim_count_end(pcg_sim_bytes *launch)
{
    tally &t = here_tally;
    if (t.read) launch->read.fetch_add(t.read, std::memory_order_relaxed);
    if (t.written) launch->written.fetch_add(t.written, std::memory_order_relaxed);
    t.r = nullptr;
}

/* ---- the hooks the instrumented code calls ---- */

#define PCG_SIM_HOOKS(n)                                            \
    void __tsan_read##n(void *p) { on_read(p, n); }                 \
    void __tsan_write##n(void *p) { on_write(p, n); }               \
    void __tsan_unaligned_read##n(void *p) { on_read(p, n); }       \
    void __tsan_unaligned_write##n(void *p) { on_write(p, n); }     \
    void __tsan_volatile_read##n(void *p) { on_read(p, n); }        \
    void __tsan_volatile_write##n(void *p) { on_write(p, n); }

extern "C" {
PCG_SIM_HOOKS(1)
PCG_SIM_HOOKS(2)
PCG_SIM_HOOKS(4)
PCG_SIM_HOOKS(8)
PCG_SIM_HOOKS(16)

/* accesses of other sizes (a struct copied whole) */
void __tsan_read_range(void *p, unsigned long size)
{
    on_read(p, size);
}
void __tsan_write_range(void *p, unsigned long size)
{
    on_write(p, size);
}

/* what the runtime would do with these (race detection) is not wanted */
void __tsan_init(void) {}
void __tsan_func_entry(void *) {}
void __tsan_func_exit(void) {}
}
