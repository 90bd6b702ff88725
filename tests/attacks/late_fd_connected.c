// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* late_fd_connected - late_file_fd without a mailbox: before its recv, the agent (not a server:
 * no bind, no listen) connects its own UNIX stream socket to an outsider's listener
 * (DIR/lc.sock). After the recv, the outsider accepts and sends it, on that connection, an fd
 * open for writing on a file outside the workspace (DIR/late.out, 0644). The agent takes the fd
 * and writes the canary through it: Landlock judges opens, not writes on received fds, and the
 * lsm file hooks judge writes to sink files only.
 * Verifier: uid 65534 reads DIR/late.out after the agent exited.
 * Blocks it: cgroup backend: mncd's sweep shuts the agent's connection to an unregistered peer
 * at the delivery (the peer still in the backlog is judged by the listener's name, see
 * preconnect_unix_backlog). lsm backend: the connection is kept (every send on it is judged), and the
 * file_receive hook refuses a tainted agent any fd that is not a socket or a read-only regular
 * file or directory (mnc_receive_allows). */
#include "atk_variants.h"

static int agent(struct atk_ctx *c)
{
    int s = atkv_backlog_agent(c);
    if (s >= 0)
        atkv_late_write(c, s);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    int a = accept4(c->fdslot[ATKV_BACKLOG_SLOT], NULL, NULL, SOCK_CLOEXEC);
    int fd = a < 0 ? -1 : atkv_late_fd(c, 'F');
    if (fd < 0 || atk_send_fds(a, 'L', &fd, 1) < 0)
        atk_note(c, "hand the late fd on the connection: %s", atk_errname(errno));
    if (fd >= 0)
        close(fd);
    if (a >= 0)
        close(a);
}

static const struct atk A = {"late_fd_connected",
                             "a writable file fd sent after the taint on a connection the agent made before it",
                             ATK_NO_RECV,
                             atkv_backlog_prepare,
                             agent,
                             on_sync,
                             atkv_late_file_verify,
                             atkv_backlog_cleanup};
ATK_MAIN(A)
