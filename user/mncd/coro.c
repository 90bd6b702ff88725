// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* coro.c - cooperative coroutines (coro.h) on makecontext/swapcontext. Stacks are mmap'ed
 * with a PROT_NONE guard page (an overflow faults instead of corrupting the heap) and kept on
 * a free list for reuse. */
#include "coro.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define MNCD_CORO_STACK (512u << 10)
#define KEEP_STACKS 32

struct mncd_coro {
    ucontext_t ctx, caller;
    void (*fn)(void *);
    void *arg;
    void *stack; /* mapping incl. the guard page */
    size_t stack_len;
    bool done;
};

static mncd_coro *current;
static void *free_stacks[KEEP_STACKS];
static int n_free;

static void *stack_get(size_t *len)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    *len = MNCD_CORO_STACK + pg;
    if (n_free)
        return free_stacks[--n_free];
    void *p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (mprotect(p, pg, PROT_NONE) != 0) { /* stacks grow down: the guard is the lowest page */
        munmap(p, *len);
        return NULL;
    }
    return p;
}

static void stack_put(void *p, size_t len)
{
    if (n_free < KEEP_STACKS)
        free_stacks[n_free++] = p;
    else
        munmap(p, len);
}

/* makecontext passes int arguments only: the pointer travels in two halves. */
static void trampoline(unsigned hi, unsigned lo)
{
    mncd_coro *co = (mncd_coro *)(((uintptr_t)hi << 32) | (uintptr_t)lo);
    co->fn(co->arg);
    co->done = true;
    /* returning switches to uc_link (co->caller) */
}

/* getcontext only initialises ctx for makecontext; it is never resumed where it was taken.
 * A separate, not inlined function keeps "returns twice" from constraining the caller. */
__attribute__((noinline)) static int ctx_init(ucontext_t *c) { return getcontext(c); }

mncd_coro *mncd_coro_new(void (*fn)(void *), void *arg)
{
    mncd_coro *co = calloc(1, sizeof(*co));
    if (!co)
        return NULL;
    co->fn = fn;
    co->arg = arg;
    co->stack = stack_get(&co->stack_len);
    if (!co->stack || ctx_init(&co->ctx) != 0) {
        int e = errno;
        if (co->stack)
            stack_put(co->stack, co->stack_len);
        free(co);
        errno = e;
        return NULL;
    }
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    co->ctx.uc_stack.ss_sp = (char *)co->stack + pg;
    co->ctx.uc_stack.ss_size = co->stack_len - pg;
    co->ctx.uc_link = &co->caller;
    uintptr_t p = (uintptr_t)co;
    makecontext(&co->ctx, (void (*)(void))trampoline, 2, (unsigned)(p >> 32), (unsigned)(p & 0xffffffffu));
    return co;
}

bool mncd_coro_run(mncd_coro *co)
{
    if (current || co->done)
        return co->done; /* never nested */
    current = co;
    swapcontext(&co->caller, &co->ctx);
    current = NULL;
    return co->done;
}

void mncd_coro_yield(void)
{
    mncd_coro *co = current;
    if (co)
        swapcontext(&co->ctx, &co->caller);
}

mncd_coro *mncd_coro_self(void) { return current; }

void mncd_coro_free(mncd_coro *co)
{
    if (!co)
        return;
    stack_put(co->stack, co->stack_len);
    free(co);
}
