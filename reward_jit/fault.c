/* Faults of reward code in the validation worker: classified from the
 * fault address, the registers and what the worker knows of its own
 * memory (the compiled image, the levels it passes, its stack), sent as
 * one fixed-size message, and worded by the caller.  What can and cannot
 * be told from these is in docs/sandbox.md ("What a crash says"). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include "child.h"
#include "jit_internal.h"
#include "level.h"

fault_map jit_fault_map;
volatile sig_atomic_t jit_fault_phase;
static char g_altstack[65536];

/* Reach of the stack below its top (an overflow or a huge local array),
 * and of the region past its top where an upward overrun of a local
 * array ends up once it has run through every frame above it. */
#define STACK_SPAN (256L << 20)
#define PAST_STACK_SPAN (16L << 20)
/* Nothing the reward's code touches lies this far below its stack pointer. */
#define BELOW_SP_GAP 65536
/* Addresses below this are a null pointer plus an offset. */
#define NULL_PAGES 65536

static int in_range(const char *a, const char *lo, size_t len) { return lo && a >= lo && a < lo + len; }

/* Within a page of [lo, lo + len): the guard pages the worker maps around
 * the levels. */
static int near_range(const char *a, const char *lo, size_t len)
{
    long page = 4096;
    return lo && a >= lo - page && a < lo + len + page && !in_range(a, lo, len);
}

static int in_stack(const char *a)
{
    const char *top = jit_fault_map.stack_top;
    return top && a < top && a > top - STACK_SPAN;
}

#if defined(__x86_64__)
/* An instruction fetch from an address that is not code.  Just after a
 * ret, the word below the stack pointer is the address it popped; just
 * after a call, the word at the stack pointer is a return address into the
 * reward's code.  Both words were just used by the processor, so they are
 * mapped. */
static int exec_fault_kind(const char *addr, const char *sp)
{
    const fault_map *m = &jit_fault_map;
    if (in_stack(addr) || in_range(addr, m->img_lo, m->img_len) || in_range(addr, m->tiles_lo, m->tiles_len) ||
        in_range(addr, m->hdr_lo, m->hdr_len))
        return FAULT_EXEC_DATA; /* code placed in data */
    if (!in_stack(sp) || !in_stack(sp - 8)) return FAULT_EXEC_DATA;
    const char *popped, *pushed;
    memcpy(&popped, sp - 8, sizeof popped);
    memcpy(&pushed, sp, sizeof pushed);
    if (popped == addr) return FAULT_RETURN_SMASHED;
    if (in_range(pushed, m->img_lo, m->img_len)) return FAULT_CALL_BAD;
    return FAULT_EXEC_DATA;
}

/* A general-protection fault (si_code SI_KERNEL, no address) at a ret:
 * the return address it would pop is not even a canonical address. */
static int at_ret(const unsigned char *ip)
{
    return ip && (ip[0] == 0xc3 || ip[0] == 0xc2 || (ip[0] == 0xf3 && ip[1] == 0xc3));
}
#endif

static int classify_memory(const siginfo_t *si, const void *uc_)
{
    const fault_map *m = &jit_fault_map;
    const char *addr = si->si_addr, *sp = NULL;
    int write_fault = 0, exec_fault = 0;
#if defined(__x86_64__)
    const ucontext_t *uc = uc_;
    long errcode = uc->uc_mcontext.gregs[REG_ERR];
    write_fault = (errcode & 2) != 0;
    exec_fault = (errcode & 16) != 0;
    sp = (const char *)uc->uc_mcontext.gregs[REG_RSP];
    if (si->si_code == SI_KERNEL)
        return at_ret((const unsigned char *)uc->uc_mcontext.gregs[REG_RIP]) ? FAULT_RETURN_SMASHED
                                                                                : FAULT_BAD_ADDRESS;
    if (exec_fault) return exec_fault_kind(addr, sp);
#else
    (void)uc_;
#endif
    if (in_range(addr, m->tiles_lo, m->tiles_len) || in_range(addr, m->hdr_lo, m->hdr_len))
        return FAULT_LEVEL_WRITE; /* readable: only a write faults there */
    if (near_range(addr, m->tiles_lo, m->tiles_len) || near_range(addr, m->hdr_lo, m->hdr_len))
        return FAULT_NEAR_LEVEL;
    if (in_range(addr, m->img_lo, m->img_len) && (write_fault || !exec_fault)) return FAULT_STATE_WRITE;
    if ((unsigned long)addr < NULL_PAGES) return FAULT_NULL;
    if (m->stack_top && addr >= m->stack_top && addr < m->stack_top + PAST_STACK_SPAN) return FAULT_PAST_STACK;
    if (in_stack(addr)) return sp && addr + BELOW_SP_GAP < sp ? FAULT_BELOW_SP : FAULT_STACK;
    return FAULT_BAD_ADDRESS;
}

static int classify(int sig, const siginfo_t *si, const void *uc)
{
    if (jit_fault_phase == 1) return FAULT_COMPILER;
    if (sig == SIGSYS) return FAULT_SYSCALL;
    if (sig == SIGXCPU) return FAULT_CPU_LIMIT;
    if (sig == SIGFPE)
        return si->si_code == FPE_INTDIV ? FAULT_DIV_ZERO : si->si_code == FPE_INTOVF ? FAULT_DIV_OVERFLOW
                                                                                    : FAULT_ARITHMETIC;
    if (sig != SIGSEGV && sig != SIGBUS) return FAULT_SIGNAL;
    return classify_memory(si, uc);
}

void fault_send(int kind, int sig, int a, int b)
{
    fault_msg m = {MSG_FAULT, (unsigned char)kind, (unsigned char)sig, 0, a, b};
    child_send_data(&m, sizeof m);
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    fault_send(classify(sig, si, uc), sig, 0, 0);
    _exit(3);
}

static void on_find_tiles_overflow(int max, int room)
{
    fault_send(FAULT_FIND_TILES_MAX, 0, max, room);
    _exit(3);
}

static void on_level(const void *l, int api)
{
    const fault_map *m = &jit_fault_map;
    const char *p = l;
    if (in_range(p, m->hdr_lo, m->hdr_len) && (size_t)(p - m->hdr_lo) % sizeof(level_t) == 0) return;
    fault_send(FAULT_BAD_LEVEL, 0, api, 0);
    _exit(3);
}

int fault_install(void)
{
    stack_t ss = {.ss_sp = g_altstack, .ss_size = sizeof g_altstack, .ss_flags = 0};
    if (sigaltstack(&ss, NULL)) return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESETHAND;
    sigfillset(&sa.sa_mask);
    int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGXCPU, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (sigaction(sigs[i], &sa, NULL)) return -1;
    jit_find_tiles_overflow = on_find_tiles_overflow;
    jit_check_level = on_level;
    return 0;
}

/* The memory faults' texts, after "crashed with SIGSEGV: " (or SIGBUS). */
static const char *memory_text(int kind)
{
    switch (kind) {
    case FAULT_EXEC_DATA: return "jumped to data that is not code";
    case FAULT_NULL: return "null pointer dereference";
    case FAULT_STACK: return "stack overflow (unbounded recursion or a huge local array?)";
    case FAULT_RETURN_SMASHED:
        return "returned to an address that is not code (a smashed return address: a write past the end of a "
               "local array?)";
    case FAULT_CALL_BAD: return "called an address that is not code (a bad function pointer?)";
    case FAULT_PAST_STACK:
        return "an access past the end of a local array ran off the top of the stack (an index out of range?)";
    case FAULT_BELOW_SP: return "an access far below the stack (a negative index into a local array?)";
    case FAULT_NEAR_LEVEL:
        return "an access just outside the level's tiles (read tiles with tile_at, which returns BORDER outside "
               "the map)";
    case FAULT_BAD_ADDRESS: return "invalid memory access (an index out of range or a bad pointer?)";
    default: return NULL;
    }
}

void fault_text(const fault_msg *f, char *buf, int len)
{
    size_t n = (size_t)len;
    const char *mem = memory_text(f->kind);
    if (mem) {
        snprintf(buf, n, "crashed with %s: %s", f->sig == SIGBUS ? "SIGBUS" : "SIGSEGV", mem);
        return;
    }
    switch (f->kind) {
    case FAULT_COMPILER: snprintf(buf, n, "the compiler failed on this source; simplify the code"); break;
    case FAULT_SYSCALL: snprintf(buf, n, "made a forbidden system call; reward code may only compute"); break;
    case FAULT_CPU_LIMIT: snprintf(buf, n, "used up its CPU time limit (an infinite loop?)"); break;
    case FAULT_DIV_ZERO:
        snprintf(buf, n, "crashed with SIGFPE: integer division by zero; check divisors before dividing");
        break;
    case FAULT_DIV_OVERFLOW: snprintf(buf, n, "crashed with SIGFPE: integer overflow in a division"); break;
    case FAULT_ARITHMETIC: snprintf(buf, n, "crashed with SIGFPE: arithmetic exception"); break;
    case FAULT_LEVEL_WRITE:
        snprintf(buf, n, "writes into the level: the levels passed to compute_reward are read-only");
        break;
    case FAULT_STATE_WRITE:
        snprintf(buf, n, "writes to a static or global variable: a reward must not keep state between calls; use "
                         "local variables");
        break;
    case FAULT_FIND_TILES_MAX:
        snprintf(buf, n,
                 "find_tiles' max (%d) is larger than the arrays passed: the one on the stack has room for at most "
                 "%d ints before the end of the reward's stack; pass the arrays' length as max",
                 (int)f->a, (int)f->b);
        break;
    case FAULT_BAD_LEVEL: {
        static const char *const names[N_API_LEVEL_FUNCTIONS] = {
            "level_height", "level_width", "tile_at", "count_tiles", "find_tiles", "path_length",
            "nearest_tile_distance", "count_regions", "path_length_through"};
        snprintf(buf, n,
                 "%s was given a level that is neither prev nor curr (a pointer variable overwritten by a write past "
                 "the end of a local array?)",
                 f->a >= 0 && f->a < N_API_LEVEL_FUNCTIONS ? names[f->a] : "an API function");
        break;
    }
    case FAULT_SIGNAL:
        snprintf(buf, n, "crashed with %s", f->sig > 0 && f->sig < 65 ? child_signal_name(f->sig) : "a signal");
        break;
    case FAULT_SETUP: snprintf(buf, n, "sandbox: the validation process could not confine itself"); break;
    case FAULT_NO_COMPILE:
        snprintf(buf, n, "sandbox: the compiler accepted the source, the validation process did not");
        break;
    default: snprintf(buf, n, "the validation process ended abnormally"); break;
    }
}
