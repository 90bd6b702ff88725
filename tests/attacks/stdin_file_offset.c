// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* stdin_file_offset - stdio (docs/kernel.md, "Stdio"): the file offset of a read-only stdin the
 * agent shares with its caller. `mncctl run` keeps a read-only fd 0 as it is (only a writable
 * one is reopened), so when the caller's stdin is a regular file the agent holds the caller's
 * own open file description - and its offset, which every holder reads with
 * lseek(fd, 0, SEEK_CUR) (f.tell(), `read` in a shell loop). Callers that share it: a harness
 * passing an open file object as stdin=, a shell group `{ mncctl run ...; next; } < file`, a
 * systemd unit with StandardInput=file:, any parent whose own stdin is a file. The agent
 * lseek()s fd 0 to chosen values (no write access needed, up to the filesystem's maximum file
 * size: 44 bits on ext4, 63 on tmpfs); mncd's fd scan does not count a read-only fd on a file
 * outside the workspace, nor the launcher's stdio. Here two lseeks carry the canary's 48 bits
 * (24 bits each, tagged by the bits above 2^40).
 * The harness: this file's main() also plays the caller. prepare() points MNCCTL at this binary,
 * which, for the coordinator's `mncctl run`, opens DIR/stdin.txt (root's, 0644, "go" lines for
 * the agent's hold) O_RDONLY, gives that open file as the launcher's stdin and keeps it, drains
 * the orchestrator's "go" lines, samples the shared offset every millisecond while the launcher
 * runs and writes what it decoded to DIR/stdin.pos (every other mncctl call is passed through).
 * The positive control runs the same wrapper around the unconfined agent.
 * Verifier: the canary in DIR/stdin.pos.
 * Blocked by: `mncctl run` always gives the agent an open file description of its own (fd 0
 * reopened through /proc/self/fd/0 whatever its mode, at the caller's offset: run_relay.c), so
 * its offset, F_SETFL flags and F_SETOWN owner are its alone.
 * Bandwidth: 44-63 bits per lseek at ~10^6 lseeks/s (reader polling): ~10^7 bits/s (estimate). */
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "atk.h"
#include "atk_variants.h"

static int agent(struct atk_ctx *c)
{
    unsigned long long v = strtoull(c->secret + 2, NULL, 16);
    struct timespec pause = {0, 100 * 1000 * 1000};
    atk_try(c, "lseek(0) low 24 bits", (long)lseek(0, (off_t)((1ULL << 40) | (v & 0xffffff)), SEEK_SET));
    nanosleep(&pause, NULL);
    atk_try(c, "lseek(0) high 24 bits", (long)lseek(0, (off_t)((2ULL << 40) | (v >> 24)), SEEK_SET));
    nanosleep(&pause, NULL);
    /* not exit(): the C library would seek fd 0 back by what its stdin buffer read ahead */
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    (void)c;
    return atkv_wrap_prepare("ATK_OFS_REAL");
}

static void verify(struct atk_ctx *c)
{
    atkv_wrap_verify(c, "stdin.pos",
                     "the caller decoded the canary from the offset of the stdin file it shares with the agent");
}

static const struct atk A = {"stdin_file_offset",
                             "file offset of the caller's read-only stdin file (shared open file description)",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             NULL};

static void sample(int f, unsigned long long *chunk, int *seen)
{
    off_t pos = lseek(f, 0, SEEK_CUR);
    if (pos < 0)
        return;
    unsigned long long idx = (unsigned long long)pos >> 40;
    if (idx == 1 || idx == 2) {
        chunk[idx] = (unsigned long long)pos & 0xffffff;
        *seen |= (int)idx;
    }
}

/* The caller with a file as stdin: runs argv with DIR/stdin.txt (opened here, kept) as stdin,
 * drains our stdin (the orchestrator's "go" lines), samples the shared offset, then writes the
 * decoded value to DIR/stdin.pos. */
static int wrap(char **argv)
{
    const char *dir = NULL;
    for (char **a = argv; *a; a++)
        if (strncmp(*a, "dir=", 4) == 0)
            dir = *a + 4;
    if (!dir)
        return 127;
    char p[700];
    snprintf(p, sizeof(p), "%s/stdin.txt", dir);
    int w = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    for (int i = 0; w >= 0 && i < 64; i++)
        if (atk_write_all(w, "go\n", 3) < 0)
            return 127;
    if (w < 0 || close(w) < 0)
        return 127;
    int f = open(p, O_RDONLY | O_CLOEXEC);
    if (f < 0)
        return 127;
    pid_t pid = fork();
    if (pid < 0)
        return 127;
    if (pid == 0) {
        if (dup2(f, 0) < 0)
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0, in_open = 1, seen = 0;
    unsigned long long chunk[3] = {0, 0, 0};
    for (;;) {
        sample(f, chunk, &seen);
        if (waitpid(pid, &st, WNOHANG) == pid)
            break;
        struct pollfd pf = {.fd = in_open ? 0 : -1, .events = POLLIN};
        if (poll(&pf, 1, 1) <= 0)
            continue;
        char b[512];
        if (read(0, b, sizeof(b)) <= 0)
            in_open = 0;
    }
    sample(f, chunk, &seen);
    snprintf(p, sizeof(p), "%s/stdin.pos", dir);
    int o = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o >= 0) {
        char s[64];
        int n = snprintf(s, sizeof(s), "%s mk%012llx\n", seen == 3 ? "both" : "partial", (chunk[2] << 24) | chunk[1]);
        if (atk_write_all(o, s, (size_t)n) < 0) {
        }
        close(o);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv) { return atkv_wrap_main(&A, argc, argv, "ATK_OFS_REAL", "ATK_OFS_INNER", wrap); }
