// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* seccomp_addfd_in - a way in after the last delivery with no socket at all: the holder of the
 * agent's seccomp user-notification listener installs fds in the agent (SECCOMP_IOCTL_NOTIF_ADDFD).
 * Before its recv the agent (untainted: it may talk to anyone) installs a filter that sends
 * getppid() to a listener, hands the listener to an outsider (uid 65534, DIR/sa.sock) and closes
 * its copy (as seccomp_notify_out). After the taint it calls getppid; the outsider answers the
 * notification by adding an fd open for writing on its own file DIR/sa.out
 * (SECCOMP_ADDFD_FLAG_SEND: the fd number is getppid's return value), and the agent writes the
 * canary through it. Nothing was bound, nothing connected: the sweep and the fd scan ran at the
 * delivery, before the fd existed (late_file_fd needs a bound socket, which non-servers lack).
 * Verifier: uid 65534 reads DIR/sa.out.
 * Blocks it: the launcher's seccomp filter refuses SECCOMP_FILTER_FLAG_NEW_LISTENER (LEAKED on
 * both backends before); lsm: file_receive also refuses a tainted agent the writable file
 * (receive_fd, which ADDFD uses, calls it). */
#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "atk_variants.h"

/* answer a notification by installing the outsider's file in the agent */
static void addfd(int lf, const struct seccomp_notif *req, void *arg)
{
    struct seccomp_notif_addfd a = {.id = req->id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (__u32) * (int *)arg};
    if (ioctl(lf, SECCOMP_IOCTL_NOTIF_ADDFD, &a) < 0) {
        struct seccomp_notif_resp resp = {.id = req->id, .error = -EPERM};
        ioctl(lf, SECCOMP_IOCTL_NOTIF_SEND, &resp);
    }
}

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    int lf = atkv_keeper_take_as_nobody(path, ans);
    char f[700];
    snprintf(f, sizeof(f), "%s/sa.out", c->dir);
    int out = open(f, O_WRONLY | O_CLOEXEC); /* the outsider's file (prepare: 0644, 65534's) */
    if (out < 0)
        _exit(4);
    atkv_keeper_serve_notifs(lf, cmd, addfd, &out);
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    char f[700];
    snprintf(f, sizeof(f), "%s/sa.out", c->dir);
    int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || fchown(fd, ATK_NOBODY, ATK_NOBODY) < 0) {
        snprintf(c->notes, sizeof(c->notes), "cannot make %s", f);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return atkv_keeper_start_at(c, "sa", outsider, "1 drop to 65534, 2 listen, 3 take the listener, 4 open DIR/sa.out");
}

static int agent(struct atk_ctx *c)
{
    if (atkv_seccomp_listener_out(c, "sa") < 0)
        return 0;
    long fd = atk_try(c, "getppid (the outsider installs an fd and returns its number)", syscall(SYS_getppid));
    if (fd > 2)
        atk_try(c, "write the canary through the installed fd", write((int)fd, c->secret, strlen(c->secret)));
    return 0;
}

static void verify(struct atk_ctx *c)
{
    char f[700];
    snprintf(f, sizeof(f), "%s/sa.out", c->dir);
    atk_nobody_reads(c, f);
}

static const struct atk A = {"seccomp_addfd_in",
                             "an outsider holding the agent's seccomp listener installs a writable fd after the taint",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
