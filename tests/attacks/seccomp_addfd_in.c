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

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int lf = atkv_keeper_take_one(l);
    char f[700];
    snprintf(f, sizeof(f), "%s/sa.out", c->dir);
    int out = open(f, O_WRONLY | O_CLOEXEC); /* the outsider's file (prepare: 0644, 65534's) */
    if (out < 0)
        _exit(4);
    for (;;) { /* answer each notification by installing the file in the agent */
        struct pollfd pf[2] = {{.fd = lf, .events = POLLIN}, {.fd = cmd, .events = POLLIN}};
        if (poll(pf, 2, -1) < 0)
            _exit(1);
        if (pf[0].revents & POLLIN) {
            struct seccomp_notif req;
            memset(&req, 0, sizeof(req));
            if (ioctl(lf, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0) {
                struct seccomp_notif_addfd a = {.id = req.id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (__u32)out};
                if (ioctl(lf, SECCOMP_IOCTL_NOTIF_ADDFD, &a) < 0) {
                    struct seccomp_notif_resp resp = {.id = req.id, .error = -EPERM};
                    ioctl(lf, SECCOMP_IOCTL_NOTIF_SEND, &resp);
                }
            }
            continue;
        }
        if (pf[0].revents & (POLLHUP | POLLERR))
            lf = -1;
        if (pf[1].revents & (POLLIN | POLLHUP))
            break;
    }
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    char f[700], k[700];
    snprintf(f, sizeof(f), "%s/sa.out", c->dir);
    int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || fchown(fd, ATK_NOBODY, ATK_NOBODY) < 0) {
        snprintf(c->notes, sizeof(c->notes), "cannot make %s", f);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    snprintf(k, sizeof(k), "%s/sa.sock", c->dir);
    atk_set(c, "sa", "%s", k);
    return atkv_keeper_start(c, k, outsider, "1 drop to 65534, 2 listen, 3 take the listener, 4 open DIR/sa.out");
}

static int agent(struct atk_ctx *c)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
    int lf = (int)atk_try(c, "seccomp filter with a user-notification listener",
                          syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog));
    int s = (int)atk_try(c, "connect the outsider", atk_unix(SOCK_STREAM, atk_arg(c, "sa")));
    if (lf < 0 || s < 0)
        return 0;
    atk_try(c, "hand the listener to the outsider", atk_send_fds(s, 'L', &lf, 1));
    char ack;
    atk_try(c, "outsider holds it", read(s, &ack, 1));
    close(s);
    close(lf);
    atk_recv(c);
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
