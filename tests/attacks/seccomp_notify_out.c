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

/* the arguments of the notifications so far */
struct kept {
    char buf[4096];
    size_t n;
};

/* answer a notification (the call continues) and keep its arguments */
static void keep_args(int lf, const struct seccomp_notif *req, void *arg)
{
    struct kept *k = arg;
    if (k->n + sizeof(req->data.args) <= sizeof(k->buf)) {
        memcpy(k->buf + k->n, req->data.args, sizeof(req->data.args));
        k->n += sizeof(req->data.args);
    }
    struct seccomp_notif_resp resp = {.id = req->id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE};
    ioctl(lf, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int lf = atkv_keeper_take_as_nobody(path, ans);
    static struct kept k;
    atkv_keeper_serve_notifs(lf, cmd, keep_args, &k);
    atkv_keeper_answer(ans, k.buf, k.n);
}

static int prepare(struct atk_ctx *c)
{
    return atkv_keeper_start_at(c, "sn", outsider, "1 drop to 65534, 2 listen, 3 take the listener");
}

static int agent(struct atk_ctx *c)
{
    if (atkv_seccomp_listener_out(c, "sn") < 0)
        return 0;
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
