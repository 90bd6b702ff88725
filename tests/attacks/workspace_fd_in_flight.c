// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_fd_in_flight - an outsider's open file on a workspace file, parked in flight in a
 * socket queue of its own. Before the launch (the workspace still readable) uid 65534 opened
 * WS/notes.txt (a 0666 file the agent is meant to edit) O_RDONLY, sent that fd over an
 * AF_UNIX socketpair of its own (SCM_RIGHTS) and closed it: the open file is in no process's
 * fd table and in no mapping. The agent writes the canary into notes.txt after its recv; the
 * outsider then receives the fd back and reads it (read permission was checked at the open).
 * mncd's fdscan refuses a delivery while an outside process holds a workspace file on an fd or
 * a mapping (held_outside) and peeks into the agent's own socket queues, not into outsiders'.
 * Verifier: the outsider, asked after the agent exited, recvmsg()s the fd, preads it and hands
 * the bytes over a pipe.
 * Would block it: files in flight in outside sockets are beyond a /proc walk (the kernel's
 * unix_gc knows them); the launcher giving the agent a workspace (inode set) no other uid
 * could open before the launch - fresh files, or a copy - closes every reference of this
 * kind (fds, in-flight fds, io_uring fixed files, cwd, mounts, inotify marks, hard links). */
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *file, int cmd, int ans)
{
    (void)c;
    atkv_keeper_nobody();
    atkv_keeper_hand_file(atkv_keeper_park(open(file, O_RDONLY | O_CLOEXEC), cmd, ans), ans);
}

static int prepare(struct atk_ctx *c)
{
    char f[700];
    return atkv_notes_file(c, f, sizeof(f)) ? -1 : atkv_keeper_start(c, f, outsider, NULL);
}

static int agent(struct atk_ctx *c) { return atkv_notes_agent(c); }

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "uid 65534 read the canary through a workspace file it kept in flight in its own socket");
}

static const struct atk A = {"workspace_fd_in_flight",
                             "an outsider's fd on a workspace file, parked in flight in its own socketpair",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
