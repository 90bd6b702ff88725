// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* main.c - mncctl entry point: global options, then dispatch to a registered subcommand. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mncctl.h"

#define MAX_CMDS 64

static const mncctl_cmd *cmds[MAX_CMDS];
static int n_cmds;

void mncctl_register(const mncctl_cmd *c)
{
    if (n_cmds < MAX_CMDS)
        cmds[n_cmds++] = c;
    else
        fprintf(stderr, "mncctl: too many subcommands, dropped %s\n", c->name);
}

void mncctl_err(const char *fmt, ...)
{
    va_list ap;
    fputs("mncctl: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const mncctl_cmd *const *)a)->name, (*(const mncctl_cmd *const *)b)->name);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: mncctl [--socket PATH] [--json] COMMAND [ARGS...]\n\ncommands:\n");
    qsort(cmds, (size_t)n_cmds, sizeof(cmds[0]), by_name);
    for (int i = 0; i < n_cmds; i++)
        fprintf(f, "  %s\n", cmds[i]->usage);
}

int main(int argc, char **argv)
{
    mncctl_global g = {.socket = getenv("MNC_SOCKET"), .json = false};
    if (!g.socket || !*g.socket)
        g.socket = MNCCTL_DEFAULT_SOCKET;

    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            g.json = true;
        } else if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
            g.socket = argv[++i];
        } else if (strncmp(argv[i], "--socket=", 9) == 0) {
            g.socket = argv[i] + 9;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            mncctl_err("unknown option %s", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc || strcmp(argv[i], "help") == 0) {
        usage(i >= argc ? stderr : stdout);
        return i >= argc ? 2 : 0;
    }
    for (int c = 0; c < n_cmds; c++)
        if (strcmp(cmds[c]->name, argv[i]) == 0)
            return cmds[c]->fn(argc - i, argv + i, &g);
    mncctl_err("unknown command \"%s\" (try mncctl help)", argv[i]);
    return 2;
}
