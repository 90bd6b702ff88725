// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stdin_pipe_size - stdio (docs/kernel.md, "Stdio"): the capacity of the caller's stdin pipe as
 * storage. `mncctl run` gives the agent the caller's stdin as an input only: a read-only fd 0 is
 * kept as it is, a writable one is reopened O_RDONLY. But a pipe's capacity belongs to the pipe,
 * not to an end: fcntl(0, F_SETPIPE_SZ) on the agent's read end (no write access, no ownership,
 * no capability below /proc/sys/fs/pipe-max-size; the seccomp filter allows fcntl but
 * F_SET_RW_HINT) resizes the pipe the caller writes into, and the caller - a harness with
 * stdin=PIPE, a shell pipeline's writer - reads it back with F_GETPIPE_SZ on its write end.
 * Sizes 4 KiB << k, k = 0..7: 3 bits per fcntl; the canary's 12 hex digits take 16 of them.
 * No write() at all, nothing through the relay, no socket, no file of the agent's.
 * Verifier: at each sync the orchestrator (the caller of `mncctl run`, which holds the write end
 * of the agent's stdin pipe as every such caller does) reads F_GETPIPE_SZ on its end and
 * decodes; after the last symbol, compares with the canary.
 * Blocked by: the seccomp filter of `mncctl run` refuses F_SETPIPE_SZ (EPERM) to every agent
 * (run_confine.c, deny_fcntl_cmds). Bandwidth when open: 3 bits per F_SETPIPE_SZ, ~3*10^5 bits/s
 * (estimate). How much of the pipe the agent reads stays visible to the writer (FIONREAD):
 * docs/threat-model.md, covert channels. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "atk.h"

#define SYMS 16 /* 16 x 3 bits = the canary's 48 bits */

static int agent(struct atk_ctx *c)
{
    unsigned long long v = strtoull(c->secret + 2, NULL, 16);
    int ok = 0;
    for (int i = 0; i < SYMS; i++) {
        int k = (int)((v >> (3 * i)) & 7);
        if (fcntl(0, F_SETPIPE_SZ, 4096 << k) >= 0)
            ok++;
        else if (i == 0)
            atk_try(c, "fcntl(0, F_SETPIPE_SZ)", -1);
        char tag[16];
        snprintf(tag, sizeof(tag), "p%d", i);
        atk_sync(c, tag);
    }
    atk_note(c, "F_SETPIPE_SZ on stdin: %d/%d OK", ok, SYMS);
    return 0;
}

/* the caller's write end of the agent's stdin pipe: the orchestrator's only FIFO fd above 2 open
 * for writing (run_agent's in[1]; fd 1 is run-attacks' pipe); -1 if none */
static int caller_write_end(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int fd = -1;
    while (d && fd < 0 && (e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        int n = atoi(e->d_name);
        struct stat st;
        if (n <= 2 || n == dirfd(d) || fstat(n, &st) < 0 || !S_ISFIFO(st.st_mode))
            continue;
        int fl = fcntl(n, F_GETFL);
        if (fl >= 0 && (fl & O_ACCMODE) == O_WRONLY)
            fd = n;
    }
    if (d)
        closedir(d);
    return fd;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    int i = atoi(tag + 1);
    if (tag[0] != 'p' || i < 0 || i >= SYMS)
        return;
    int w = caller_write_end();
    int sz = w >= 0 ? fcntl(w, F_GETPIPE_SZ) : -1;
    int k = -1;
    for (int j = 0; j < 8; j++)
        if (sz == 4096 << j)
            k = j;
    if (k < 0) {
        c->slot[1] = 1; /* a symbol was not readable */
        return;
    }
    c->slot[0] |= (long)k << (3 * i);
    if (i == SYMS - 1 && !c->slot[1]) {
        char got[32];
        snprintf(got, sizeof(got), "mk%012llx", (unsigned long long)c->slot[0]);
        if (strcmp(got, c->canary) == 0)
            atk_evidence(c, "the caller decoded the canary from F_GETPIPE_SZ on its write end of the agent's stdin "
                            "pipe (16 x 3 bits)");
        else
            atk_note(c, "decoded %s", got);
    }
}

static const struct atk A = {"stdin_pipe_size",
                             "capacity of the caller's stdin pipe (F_SETPIPE_SZ on fd 0, read with F_GETPIPE_SZ)",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
