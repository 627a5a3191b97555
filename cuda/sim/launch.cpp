/* Simulated kernel launches: the limits of a device checked first, then the
 * grid's blocks spread over CPU threads (cuda/sim/pool.cpp) and each block's threads
 * run one after another on its CPU thread.
 *
 * Most kernels never reach a barrier, and running their threads as plain
 * calls is fast.  A block's first thread therefore runs as a fiber: if it returns without reaching __syncthreads, the rest run as
 * plain calls; if it stops at a barrier, every thread of the block becomes a
 * fiber and the block runs in rounds, each round taking every thread to its
 * next barrier, so shared memory and barriers behave as on a device.  A
 * barrier some threads of a block skip is an error (a device would hang or
 * be undefined), reported as a launch failure.
 *
 * PCGRLLM_SIM_ORDER=reverse runs the threads of every round (and of plain
 * blocks) last to first: a missing barrier shows as a wrong result in one of
 * the two orders. */
#include "cuda_runtime.h"
#include "sim.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <atomic>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define SIM_ASAN 1
#else
#define SIM_ASAN 0
#endif

namespace pcg_sim {
thread_local thread_place here;
}

const pcg_sim_limits pcg_sim_device_limits = {1024, {1024, 1024, 64}, {2147483647u, 65535, 65535}, 48 * 1024};

/* ---- launch errors ---- */

static thread_local char launch_detail[512];
static thread_local int launch_error; /* cudaError_t of the last failed launch, read by cudaGetLastError */

void pcg_sim_set_launch_error(int cuda_error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(launch_detail, sizeof launch_detail, fmt, ap);
    va_end(ap);
    launch_error = cuda_error;
}

const char *pcg_sim_launch_detail(void)
{
    return launch_detail;
}

/* the runtime's sticky slot (cuda/sim/runtime.cpp) takes launch errors from here */
int pcg_sim_take_launch_error(int clear)
{
    int e = launch_error;
    if (clear) launch_error = 0;
    return e;
}

bool pcg_sim::launch_ok(const char *name, dim3 g, dim3 b, size_t shmem)
{
    const pcg_sim_limits &L = pcg_sim_device_limits;
    unsigned gv[3] = {g.x, g.y, g.z}, bv[3] = {b.x, b.y, b.z};
    static const char axis[3] = {'x', 'y', 'z'};
    for (int a = 0; a < 3; a++) {
        if (!gv[a] || gv[a] > L.max_grid[a]) {
            pcg_sim_set_launch_error(cudaErrorInvalidConfiguration, "launch of %s: gridDim.%c %u outside 1..%u", name,
                                     axis[a], gv[a], L.max_grid[a]);
            return false;
        }
        if (!bv[a] || bv[a] > L.max_block[a]) {
            pcg_sim_set_launch_error(cudaErrorInvalidConfiguration, "launch of %s: blockDim.%c %u outside 1..%u",
                                     name, axis[a], bv[a], L.max_block[a]);
            return false;
        }
    }
    unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
    if (threads > L.max_threads_per_block) {
        pcg_sim_set_launch_error(cudaErrorInvalidConfiguration, "launch of %s: %llu threads per block > %u", name,
                                 threads, L.max_threads_per_block);
        return false;
    }
    if (shmem > L.max_shared_per_block) {
        pcg_sim_set_launch_error(cudaErrorInvalidConfiguration,
                                 "launch of %s: %zu bytes of dynamic shared memory > %zu", name, shmem,
                                 L.max_shared_per_block);
        return false;
    }
    return true;
}

/* ---- contexts ---- */

#if defined(__x86_64__)
/* A switch that keeps only the registers the ABI makes a callee preserve.
 * swapcontext also saves the signal mask with a system call on every
 * switch, which made a reduction with barriers a hundred times slower. */
struct context {
    void *sp;
};
extern "C" void pcg_sim_switch(void **save_sp, void *next_sp);
asm(".text\n"
    ".globl pcg_sim_switch\n"
    ".hidden pcg_sim_switch\n"
    ".type pcg_sim_switch,@function\n"
    "pcg_sim_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".size pcg_sim_switch, .-pcg_sim_switch\n");

static void context_switch(context *from, context *to)
{
    pcg_sim_switch(&from->sp, to->sp);
}

/* A new context that enters entry (which never returns) on stack: six
 * zero registers for the switch to pop, then entry as its return address,
 * placed so that entry starts with the stack aligned as after a call. */
static void context_make(context *c, void *stack, size_t size, void (*entry)(void))
{
    uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
    void **ret = (void **)(top - 16);
    ret[0] = (void *)entry;
    ret[1] = NULL;
    void **regs = ret - 6;
    for (int i = 0; i < 6; i++) regs[i] = NULL;
    c->sp = regs;
}
#else
struct context {
    ucontext_t uc;
};

static void context_switch(context *from, context *to)
{
    swapcontext(&from->uc, &to->uc);
}

static void context_make(context *c, void *stack, size_t size, void (*entry)(void))
{
    getcontext(&c->uc);
    c->uc.uc_stack.ss_sp = stack;
    c->uc.uc_stack.ss_size = size;
    c->uc.uc_link = NULL;
    makecontext(&c->uc, entry, 0);
}
#endif

/* ---- fibers ---- */

enum { FIBER_STACK = SIM_ASAN ? (1 << 20) : (256 << 10) };
enum fiber_state { F_RUNNING, F_AT_BARRIER, F_DONE };

struct fiber {
    context ctx;
    void *stack;
    fiber_state state;
    uint3 thread;
};

struct block_run {
    context sched;
    fiber *cur;
    void (*body)(void *);
    void *body_ctx;
    bool fibers;          /* false: plain calls, a barrier is an error */
    bool divergent;
    const void *sched_stack_bottom;
    size_t sched_stack_size;
};

static thread_local block_run *running;
static thread_local std::vector<void *> stack_pool;

static void *stack_get(size_t i)
{
    while (stack_pool.size() <= i) {
        void *s = mmap(NULL, FIBER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (s == MAP_FAILED) {
            fprintf(stderr, "pcgrllm simulation: no memory for a fiber stack\n");
            abort();
        }
        stack_pool.push_back(s);
    }
    return stack_pool[i];
}

/* Switches between the scheduler and a fiber, told to AddressSanitizer. */
static void switch_into(block_run *r, fiber *f)
{
#if SIM_ASAN
    void *save = NULL;
    __sanitizer_start_switch_fiber(&save, f->stack, FIBER_STACK);
#endif
    r->cur = f;
    pcg_sim::here.thread = f->thread;
    context_switch(&r->sched, &f->ctx);
#if SIM_ASAN
    __sanitizer_finish_switch_fiber(save, NULL, NULL);
#endif
}

static void switch_out(block_run *r, fiber *f, bool dying)
{
#if SIM_ASAN
    void *save = NULL;
    __sanitizer_start_switch_fiber(dying ? NULL : &save, r->sched_stack_bottom, r->sched_stack_size);
#else
    (void)dying;
#endif
    context_switch(&f->ctx, &r->sched);
#if SIM_ASAN
    __sanitizer_finish_switch_fiber(save, NULL, NULL);
#endif
}

static void fiber_main(void)
{
    block_run *r = running;
#if SIM_ASAN
    __sanitizer_finish_switch_fiber(NULL, &r->sched_stack_bottom, &r->sched_stack_size);
#endif
    fiber *f = r->cur;
    r->body(r->body_ctx);
    f->state = F_DONE;
    switch_out(r, f, true);
}

static void fiber_start(fiber *f, void *stack)
{
    f->stack = stack;
    f->state = F_RUNNING;
    context_make(&f->ctx, stack, FIBER_STACK, fiber_main);
}

void pcg_sim::syncthreads(void)
{
    block_run *r = running;
    if (!r || !r->fibers) {
        if (r) r->divergent = true;
        return;
    }
    fiber *f = r->cur;
    f->state = F_AT_BARRIER;
    switch_out(r, f, false);
    f->state = F_RUNNING;
}

/* ---- blocks ---- */

int pcg_sim_order_env(void)
{
    const char *o = getenv("PCGRLLM_SIM_ORDER");
    if (!o || !*o || !strcmp(o, "forward")) return 0;
    return !strcmp(o, "reverse") ? 1 : -1;
}

static bool reverse_order(void)
{
    static int rev = -1;
    if (rev < 0) rev = pcg_sim_order_env() == 1;
    return rev;
}

static uint3 thread_at(unsigned k, dim3 b)
{
    return uint3{k % b.x, k / b.x % b.y, k / (b.x * b.y)};
}

/* Every fiber stands at a barrier or has ended: release the barrier, round
 * after round.  False when a round leaves some threads at a barrier the
 * others ended without. */
static bool run_rounds(block_run *r, std::vector<fiber> &fs)
{
    for (;;) {
        size_t done = 0;
        for (const fiber &f : fs) done += f.state == F_DONE;
        if (done == fs.size()) return true;
        if (done) return false;
        for (fiber &f : fs) switch_into(r, &f);
    }
}

static bool run_block(const char *name, dim3 b, void (*body)(void *), void *ctx, pcg_sim_bytes *bytes)
{
    pcg_sim_count_begin();
    unsigned n = b.x * b.y * b.z;
    bool rev = reverse_order();
    block_run r = {};
    r.body = body;
    r.body_ctx = ctx;
    r.fibers = true;
    running = &r;
    /* all n from the start: a suspended fiber's context must not move */
    std::vector<fiber> fs(n);
    fs[0].thread = thread_at(rev ? n - 1 : 0, b);
    fiber_start(&fs[0], stack_get(0));
    switch_into(&r, &fs[0]);
    bool ok = true;
    if (fs[0].state == F_DONE) {
        r.fibers = false;
        for (unsigned j = 1; j < n && !r.divergent; j++) {
            pcg_sim::here.thread = thread_at(rev ? n - 1 - j : j, b);
            body(ctx);
        }
        ok = !r.divergent;
    } else {
        /* fiber 0 waits at its first barrier: the others catch up */
        for (unsigned j = 1; j < n; j++) {
            fs[j].thread = thread_at(rev ? n - 1 - j : j, b);
            fiber_start(&fs[j], stack_get(j));
        }
        for (unsigned j = 1; j < n; j++) switch_into(&r, &fs[j]);
        ok = run_rounds(&r, fs);
    }
    pcg_sim_count_end(bytes);
    running = NULL;
    if (!ok)
        pcg_sim_set_launch_error(cudaErrorLaunchFailure,
                                 "launch of %s: __syncthreads reached by some threads of a block and not others", name);
    return ok;
}

struct grid_run {
    const char *name;
    dim3 g, b;
    void (*body)(void *);
    void *ctx;
    pcg_sim_bytes bytes;
    std::atomic<int> failed;
    char detail[512];
};

static void run_block_at(void *c, long long k)
{
    grid_run *r = (grid_run *)c;
    pcg_sim::here.grid_dim = r->g;
    pcg_sim::here.block_dim = r->b;
    pcg_sim::here.block = uint3{(unsigned)(k % r->g.x), (unsigned)(k / r->g.x % r->g.y),
                                (unsigned)(k / ((long long)r->g.x * r->g.y))};
    if (!run_block(r->name, r->b, r->body, r->ctx, &r->bytes) && !r->failed.exchange(1))
        snprintf(r->detail, sizeof r->detail, "%s", pcg_sim_launch_detail());
}

void pcg_sim::run_grid(const char *name, dim3 g, dim3 b, void (*body)(void *), void *ctx, const launch_args &args)
{
    long long blocks = (long long)g.x * g.y * g.z;
    grid_run r;
    r.name = name;
    r.g = g;
    r.b = b;
    r.body = body;
    r.ctx = ctx;
    r.failed = 0;
    r.detail[0] = 0;
    pcg_sim_pool_run(blocks, run_block_at, &r);
    pcg_sim_work_launch(name, g, b, r.bytes, args);
    if (r.failed) pcg_sim_set_launch_error(cudaErrorLaunchFailure, "%s", r.detail);
}
