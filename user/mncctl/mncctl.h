/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* mncctl.h - how a mncctl subcommand plugs in.
 *
 * Each subcommand lives in its own cmd_*.c and registers itself with MNCCTL_COMMAND, so adding
 * one never touches main.c. Exit codes: 0 ok, 1 error / denied, 2 usage, 3 nothing admissible
 * (or another non-success MNC-D outcome).
 */
#ifndef MNCCTL_H
#define MNCCTL_H

#include <stdbool.h>

#define MNCCTL_DEFAULT_SOCKET "/run/mnc/mncd.sock"

typedef struct mncctl_global {
    const char *socket; /* --socket PATH (default MNCCTL_DEFAULT_SOCKET or $MNC_SOCKET) */
    bool json;          /* --json: machine-readable output */
} mncctl_global;

/* argv[0] is the subcommand name; returns the process exit code. */
typedef int (*mncctl_fn)(int argc, char **argv, const mncctl_global *g);

typedef struct mncctl_cmd {
    const char *name;
    const char *usage; /* one line shown by `mncctl help`, e.g. "policy check FILE..." */
    mncctl_fn fn;
} mncctl_cmd;

void mncctl_register(const mncctl_cmd *c);

#define MNCCTL_COMMAND(ident, name_, usage_, fn_)                                                                      \
    static const mncctl_cmd ident = {name_, usage_, fn_};                                                              \
    __attribute__((constructor)) static void ident##_register(void) { mncctl_register(&ident); }

/* Prints "mncctl: <msg>" to stderr (printf-style). */
void mncctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
