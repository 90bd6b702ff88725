// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mmap_shared_file - a writable shared mapping of an outsider's file on disk kept across the
 * delivery. Before its recv the agent (untainted: it may talk to anyone) connects to an
 * outsider (uid 65534, DIR/mg.sock), which hands it an fd open O_RDWR on its own file
 * DIR/mm.out (0644, one page) and closes its own copy. The agent maps it MAP_SHARED,
 * PROT_READ | PROT_WRITE, and closes the fd and the connection: at the recv it holds no fd,
 * only an "rw-s" mapping. mncd's fd scan refuses a writable fd on a file outside the workspace
 * (foreign_file), but a writable shared mapping is judged like a memfd: refused only while an
 * outside process holds the same inode (fd or mapping). A file on disk needs no holder: the
 * outsider opens it again by name after the agent wrote. After the taint the agent stores the
 * canary in the page (no syscall; the lsm backend's file_permission hook does not see it).
 * Verifier: the outsider, asked after the agent exited, reads DIR/mm.out.
 * Blocks it: mncd's fd scan judges a shared mapping of a file outside the workspace that is
 * writable (or may become so) like a writable fd on it: foreign_file, the delivery is refused,
 * whoever holds the file (fdscan.c agent_maps). lsm: an mmap_file hook would also block it. */
#include <fcntl.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "atk_variants.h"

#define PAGE 4096

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    char f[700];
    snprintf(f, sizeof(f), "%s/mm.out", c->dir);
    int l = atkv_keeper_listen(path);
    int fd = open(f, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ftruncate(fd, PAGE) < 0 || fchown(fd, ATK_NOBODY, ATK_NOBODY) < 0)
        _exit(2);
    atkv_keeper_nobody();
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    if (s < 0 || atk_send_fds(s, 'F', &fd, 1) < 0)
        _exit(3);
    close(fd); /* the outsider keeps nothing open: only the file on disk */
    char x;
    if (read(s, &x, 1) < 0) /* the agent closes its side once it mapped the file */
        _exit(3);
    close(s);
    close(l);
    if (read(cmd, &x, 1) != 1)
        _exit(0);
    fd = open(f, O_RDONLY | O_CLOEXEC);
    char buf[256];
    ssize_t r = fd < 0 ? -1 : pread(fd, buf, sizeof(buf), 0);
    if (r > 0 && write(ans, buf, (size_t)r) != r)
        _exit(1);
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    char k[700];
    snprintf(k, sizeof(k), "%s/mg.sock", c->dir);
    atk_set(c, "mg", "%s", k);
    return atkv_keeper_start(c, k, outsider, "1 drop to 65534, 2 listen/file, 3 give the fd");
}

static int agent(struct atk_ctx *c)
{
    int s = (int)atk_try(c, "connect the outsider", atk_unix(SOCK_STREAM, atk_arg(c, "mg")));
    if (s < 0)
        return 0;
    int fd = -1;
    if (atk_try(c, "take its O_RDWR file fd", atk_recv_fds(s, &fd, 1) == 1 ? 0 : -1) < 0)
        return 0;
    char *m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (atk_try(c, "mmap MAP_SHARED PROT_READ|PROT_WRITE", m == MAP_FAILED ? -1 : 0) < 0)
        return 0;
    close(fd);
    close(s);
    atk_recv(c); /* now tainted; we hold no fd, only an rw-s mapping */
    memcpy(m, c->secret, strlen(c->secret));
    atk_try(c, "msync", msync(m, PAGE, MS_SYNC));
    munmap(m, PAGE);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the outsider's file DIR/mm.out (written through a shared mapping made before the taint)");
}

static const struct atk A = {
    "mmap_shared_file",
    "outsider's O_RDWR file mapped shared writable before the taint, written through the mapping after",
    ATK_NO_RECV,
    prepare,
    agent,
    NULL,
    verify,
    atkv_keeper_cleanup};
ATK_MAIN(A)
