// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* foreign_ro_offset - the file offset of a READ-ONLY fd shared with an outsider as storage. An
 * open file description (offset, status flags) is shared by every fd that refers to it, also
 * across processes after SCM_RIGHTS. mncd's fd scan lets the agent keep read-only fds on files
 * outside its workspace, and the sweep lets read-only regular files pass even in flight
 * ("writing needs a new open, which Landlock judges"). Before its recv the agent (untainted: it
 * may talk to anyone) takes from an outsider (uid 65534, DIR/ro.sock) an O_RDONLY fd on the
 * outsider's own file DIR/ro.txt (two of them: two descriptions); the outsider keeps its copies
 * of the same descriptions. After the taint the agent lseek()s each to 24 of the canary's 48
 * bits (any offset up to the filesystem's largest file size, 2^44 on ext4, no write); the
 * outsider reads the offsets with lseek(fd, 0, SEEK_CUR). F_SETFL (O_APPEND,
 * O_NONBLOCK, O_ASYNC, O_DIRECT) carries a few more bits per call.
 * Verifier: the outsider, asked after the agent exited, reads the shared offset.
 * Blocks it: mncd's fd scan refuses a delivery while a read-only fd of the agent on a file or
 * directory shares its open file description with an outside process (kcmp(KCMP_FILE));
 * LEAKED on both backends before. */
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
    char f[700];
    snprintf(f, sizeof(f), "%s/ro.txt", c->dir);
    /* two opens, two descriptions: a filesystem caps offsets at its largest file size (ext4:
     * 2^44), so the 48 bits go as two 24-bit offsets */
    int m[2] = {open(f, O_RDONLY | O_CLOEXEC), open(f, O_RDONLY | O_CLOEXEC)};
    if (m[0] < 0 || m[1] < 0)
        _exit(4);
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    if (s < 0 || atk_send_fds(s, 'F', m, 2) < 0)
        _exit(3);
    char y;
    if (read(s, &y, 1) < 0)
        _exit(3);
    close(s);
    close(l);
    char x;
    if (read(cmd, &x, 1) != 1)
        _exit(0);
    off_t hi = lseek(m[0], 0, SEEK_CUR), lo = lseek(m[1], 0, SEEK_CUR);
    if (hi < 0 || lo < 0)
        _exit(1);
    unsigned long long off = ((unsigned long long)hi << 24) | (unsigned long long)lo;
    char out[32];
    int n = snprintf(out, sizeof(out), "mk%012llx", off);
    if (write(ans, out, (size_t)n) != n)
        _exit(1);
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    char f[700], k[700];
    snprintf(f, sizeof(f), "%s/ro.txt", c->dir);
    int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || fchown(fd, ATK_NOBODY, ATK_NOBODY) < 0 || write(fd, "outsider\n", 9) != 9) {
        snprintf(c->notes, sizeof(c->notes), "cannot make %s", f);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    snprintf(k, sizeof(k), "%s/ro.sock", c->dir);
    atk_set(c, "ro", "%s", k);
    return atkv_keeper_start(c, k, outsider, "1 drop to 65534, 2 listen, 3 give the fd, 4 open DIR/ro.txt");
}

static int agent(struct atk_ctx *c)
{
    int s = (int)atk_try(c, "connect the outsider", atk_unix(SOCK_STREAM, atk_arg(c, "ro")));
    if (s < 0)
        return 0;
    int fd[2] = {-1, -1};
    if (atk_try(c, "take its two O_RDONLY fds on DIR/ro.txt", atk_recv_fds(s, fd, 2) == 2 ? 0 : -1) < 0)
        return 0;
    close(s);
    atk_recv(c);
    unsigned long long v = strtoull(c->secret + 2, NULL, 16);
    off_t hi = (off_t)(v >> 24), lo = (off_t)(v & 0xffffff);
    atk_try(c, "lseek the read-only fds to the canary bits (24 + 24)",
            lseek(fd[0], hi, SEEK_SET) == hi && lseek(fd[1], lo, SEEK_SET) == lo ? 0 : -1);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the offset of a read-only fd whose description the outsider shares");
}

static const struct atk A = {"foreign_ro_offset",
                             "file offset of a read-only fd shared with an outsider (lseek)",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
