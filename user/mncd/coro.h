/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* coro.h - cooperative coroutines for mncd's event loop (ucontext(3)).
 *
 * In fleet mode a disclose waits for PostgreSQL (a network round trip and a commit). Run
 * inside a coroutine, the request suspends while it waits and the loop serves other requests,
 * so several charges are in flight at once and PostgreSQL commits them together - without
 * turning the request handlers into state machines. Everything stays on mncd's one thread:
 * a coroutine only gives up the CPU where it calls mncd_coro_yield.
 */
#ifndef MNCD_CORO_H
#define MNCD_CORO_H

#include <stdbool.h>

typedef struct mncd_coro mncd_coro;

/* A coroutine that will run fn(arg) on its own stack (MNCD_CORO_STACK bytes, with a guard
 * page below it). NULL on failure (errno). */
mncd_coro *mncd_coro_new(void (*fn)(void *), void *arg);

/* Switches into co until it yields or fn returns. Returns true when fn has returned (co may
 * then be freed), false when it yielded. Must not be called from inside a coroutine. */
bool mncd_coro_run(mncd_coro *co);

/* Inside a coroutine: back to whoever called mncd_coro_run. */
void mncd_coro_yield(void);

/* The running coroutine, or NULL on the main stack. */
mncd_coro *mncd_coro_self(void);

void mncd_coro_free(mncd_coro *co);

#endif
