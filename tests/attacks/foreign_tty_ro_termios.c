// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* foreign_tty_ro_termios - a READ-ONLY fd on an outsider's terminal as storage. mncd's fd scan
 * lets the agent keep any read-only fd that is not a pipe, FIFO, memfd or anonymous inode ("a
 * read-only fd cannot carry data out"). A terminal's settings can be changed through a
 * read-only fd: TCSETS (tcsetattr) needs no write access and, for a terminal that is not the
 * caller's controlling one, no job-control check; Landlock's LANDLOCK_ACCESS_FS_IOCTL_DEV
 * covers device files the agent opens itself, not one passed in (its rights are the opener's).
 * An outsider (uid 65534) opens /dev/ptmx, opens its slave read-write (kept) and again
 * O_RDONLY, and hands the agent the read-only one before its recv (DIR/tt.sock; the agent is
 * untainted and may talk to anyone). After the taint the agent stores the canary in the
 * slave's control characters c_cc (VINTR.., 17 bytes per call in the kernel's termios), with
 * no write() at all; the outsider reads them back with tcgetattr on its own fd.
 * Verifier: the outsider, asked after the agent exited, reads c_cc of its terminal.
 * Blocks it: the fd scan treats every terminal fd (char majors 4, 5, 136-143) the agent did not
 * get from its launcher's stdio, and that root does not own, as leading outside whatever its
 * access mode (LEAKED on both backends before). */
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    int sl;
    int m = atkv_keeper_pty(&sl);
    int ro = open(ptsname(m), O_RDONLY | O_NOCTTY | O_CLOEXEC);
    if (ro < 0)
        _exit(4);
    atkv_keeper_give_one(l, ro, 0, ans); /* the agent holds a read-only slave fd; the outsider keeps master and slave */
    atkv_keeper_wait_asked(cmd);
    struct termios t;
    if (tcgetattr(sl, &t) < 0)
        _exit(1);
    char buf[NCCS + 1];
    size_t n = 0;
    for (int i = 0; i < NCCS; i++)
        buf[n++] = (char)t.c_cc[i];
    atkv_keeper_answer(ans, buf, n);
}

static int prepare(struct atk_ctx *c)
{
    return atkv_keeper_start_at(c, "tt", outsider,
                                "1 drop to 65534, 2 listen, 3 give the fd, 4 open the pty or its read-only slave");
}

static int agent(struct atk_ctx *c)
{
    int fd = atkv_take_keeper_fd(c, "tt", "take its read-only slave fd");
    if (fd < 0)
        return 0;
    struct termios t;
    if (atk_try(c, "tcgetattr on the read-only fd", tcgetattr(fd, &t)) < 0)
        return 0;
    atk_recv(c);
    size_t n = strlen(c->secret);
    memset(t.c_cc, 0, sizeof(t.c_cc));
    memcpy(t.c_cc, c->secret, n < 17 ? n : 17); /* the kernel keeps 19 of glibc's 32 */
    atk_try(c, "tcsetattr (TCSETS) through the read-only fd", tcsetattr(fd, TCSANOW, &t));
    close(fd);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the control characters of the outsider's terminal (set through a read-only fd)");
}

static const struct atk A = {"foreign_tty_ro_termios",
                             "termios of an outsider's terminal set through a read-only fd after the taint",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
