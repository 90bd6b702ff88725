// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* foreign_ptmx_fd - an outsider's pty master handed to the agent before its taint. mncd's fd
 * scan lets the agent keep a writable fd on a terminal owned by root (char major 4, 5 or
 * 136-143 with st_uid 0: "the operator's"), judged by the inode /proc/PID/fd/N stats. A pty
 * master opened through /dev/ptmx stats as /dev/ptmx itself (root, 5:2) whoever opened it, so
 * an outsider (uid 65534) opens /dev/ptmx, unlocks it, opens its slave and hands the agent the
 * master (DIR/pm.sock; the agent is untainted and may talk to anyone). After the taint the
 * agent writes the canary line into the master: the outsider reads it from its slave. Landlock
 * judges opens (the agent opened nothing), and a terminal passed in is not one the agent
 * could have opened.
 * Verifier: the outsider reads its slave while the agent runs (the master's last close flushes
 * it) and hands over what it read when asked after the agent exited.
 * Blocks it: mncd's fd scan never exempts a pty master (5:2, stats as root's /dev/ptmx): a
 * writable one is a foreign_file and the delivery is refused; root-owned /dev/pts/N slaves,
 * /dev/tty and /dev/console stay exempt (fdscan.c root_terminal). */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    int sl;
    int m = atkv_keeper_pty(&sl);
    atkv_keeper_give_one(l, m, 0, ans); /* the agent holds the master; the outsider keeps the slave */
    char x;
    /* read the slave as the lines come: the master's last close hangs the slave up and
     * flushes what it had not read */
    char buf[256];
    size_t n = 0;
    for (;;) {
        struct pollfd pf[2] = {{.fd = sl, .events = POLLIN}, {.fd = cmd, .events = POLLIN}};
        if (poll(pf, 2, -1) < 0)
            _exit(1);
        if (pf[0].revents & POLLIN) {
            ssize_t r = read(sl, buf + n, sizeof(buf) - n);
            if (r > 0 && (n += (size_t)r) < sizeof(buf))
                continue;
        }
        if (pf[1].revents & (POLLIN | POLLHUP))
            break;
        if (pf[0].revents & (POLLHUP | POLLERR))
            pf[0].fd = -1, sl = -1; /* hung up: wait for the question only */
        if (sl < 0 && read(cmd, &x, 1) >= 0)
            break;
    }
    atkv_keeper_answer(ans, buf, n);
}

static int prepare(struct atk_ctx *c)
{
    return atkv_keeper_start_at(c, "pm", outsider, "1 drop to 65534, 2 listen, 3 give the fd, 4 open the pty");
}

static int agent(struct atk_ctx *c)
{
    int fd = atkv_take_keeper_fd(c, "pm", "take its pty master");
    if (fd < 0)
        return 0;
    atk_recv(c);
    char line[300];
    int n = snprintf(line, sizeof(line), "%s\n", c->secret);
    atk_try(c, "write the canary into the master", write(fd, line, (size_t)n));
    usleep(100000); /* the line discipline moves it to the slave */
    close(fd);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the outsider's pty slave (its master was handed to the agent)");
}

static const struct atk A = {"foreign_ptmx_fd",
                             "an outsider's pty master (stats as root's /dev/ptmx) written after the taint",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
