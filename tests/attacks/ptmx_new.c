// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ptmx_new - threat model (docs/threat-model.md): terminals. The agent opens /dev/ptmx, makes its slave world-readable
 * (fchmod, no path write) and writes the canary into the master; an outsider opens the slave and
 * reads it.
 * Verifier: uid 65534 opens /dev/pts/N and reads; if that fails, an untainted root process does.
 * Blocks it: /dev/ptmx not writable under Landlock; seccomp. */
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <termios.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int m = (int)atk_try(c, "open /dev/ptmx", posix_openpt(O_RDWR | O_NOCTTY));
    if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
        return 0;
    int s = (int)atk_try(c, "open own slave", open(ptsname(m), O_RDWR | O_NOCTTY));
    if (s >= 0)
        atk_try(c, "fchmod slave 0666", fchmod(s, 0666));
    char line[300];
    snprintf(line, sizeof(line), "%s\n", c->secret);
    atk_try(c, "write master", write(m, line, strlen(line)));
    char tag[64];
    snprintf(tag, sizeof(tag), "%s", ptsname(m));
    atk_sync(c, tag);
    return 0;
}

static char pts[64];
static int read_pts(struct atk_ctx *c, char *out, size_t n)
{
    int fd = open(pts, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return 0;
    char buf[512];
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    ssize_t r = poll(&pf, 1, 500) == 1 ? read(fd, buf, sizeof(buf)) : -1;
    close(fd);
    if (r > 0 && atk_buf_has(buf, (size_t)r, c->canary)) {
        snprintf(out, n, "read the canary from the agent's pty %s", pts);
        return 1;
    }
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    char out[256];
    snprintf(pts, sizeof(pts), "%s", tag);
    if (atk_as_uid(c, ATK_NOBODY, read_pts, out, sizeof(out)) == 1)
        atk_evidence(c, "uid 65534 %s", out);
    else if (read_pts(c, out, sizeof(out)) == 1)
        atk_evidence(c, "untainted root %s", out);
}

static const struct atk A = {
    "ptmx_new", "a new pty from /dev/ptmx, slave read by an outsider", 0, NULL, agent, on_sync, NULL, NULL};
ATK_MAIN(A)
