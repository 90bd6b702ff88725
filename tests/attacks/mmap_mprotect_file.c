// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mmap_mprotect_file - a writable outside file kept as a read-only shared mapping across the
 * delivery. Before its recv the agent (untainted: it may talk to anyone) connects to an
 * outsider (uid 65534, DIR/mg.sock), which hands it an fd open O_RDWR on its own file
 * DIR/mm.out (0644, one page). The agent maps it MAP_SHARED with PROT_READ only and closes the
 * fd and the connection: at the recv it holds no fd, and /proc/PID/maps shows the mapping as
 * "r--s", which mncd's fd scan (agent_maps: shared *writable* mappings) skips. The mapping keeps
 * VM_MAYWRITE (the file was open for writing), so after the taint mprotect(PROT_READ |
 * PROT_WRITE) makes it writable without any open, and the agent stores the canary in the page.
 * No write() syscall: the lsm backend's file_permission hook does not see it either.
 * Verifier: the outsider, asked after the agent exited, reads DIR/mm.out.
 * Blocks it: mncd's fd scan judges a shared mapping of a file outside the workspace that may
 * become writable (VM_MAYWRITE: "mw" in smaps VmFlags) as a foreign_file: the delivery is
 * refused (fdscan.c agent_maps). */
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
    char *m = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
    if (atk_try(c, "mmap MAP_SHARED PROT_READ", m == MAP_FAILED ? -1 : 0) < 0)
        return 0;
    close(fd);
    close(s);
    atk_recv(c); /* now tainted; we hold no fd, only a r--s mapping */
    if (atk_try(c, "mprotect PROT_READ|PROT_WRITE", mprotect(m, PAGE, PROT_READ | PROT_WRITE)) < 0)
        return 0;
    memcpy(m, c->secret, strlen(c->secret));
    atk_try(c, "msync", msync(m, PAGE, MS_SYNC));
    munmap(m, PAGE);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the outsider's file DIR/mm.out (written through a mapping made writable after the taint)");
}

static const struct atk A = {
    "mmap_mprotect_file",
    "outsider's O_RDWR file mapped read-only shared before the taint, mprotect'ed writable after",
    ATK_NO_RECV,
    prepare,
    agent,
    NULL,
    verify,
    atkv_keeper_cleanup};
ATK_MAIN(A)
