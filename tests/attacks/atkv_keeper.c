// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* atkv_keeper.c - outsiders kept alive across a run (keepers, uid 65534): they hand the agent files,
 * sockets, pages and mappings of their own, or hold what the agent hands them.
 * Contracts in atkv_keeper.h; linked into every attack (atk_variants.h). */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "atk.h"
#include "atk_variants.h"

/* ---- a kept outsider (workspace_* attacks) */
int atkv_keeper_start(struct atk_ctx *c, const char *path, atkv_keeper_fn fn, const char *hint)
{
    int cmd[2], ans[2];
    if (pipe2(cmd, O_CLOEXEC) < 0)
        return -1;
    if (pipe2(ans, O_CLOEXEC) < 0) {
        close(cmd[0]);
        close(cmd[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(cmd[1]);
        close(ans[0]);
        int dn = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (dn < 0 || dup2(dn, 0) < 0 || dup2(dn, 1) < 0 || dup2(dn, 2) < 0)
            _exit(1);
        for (int fd = 3; fd < 1024; fd++)
            if (fd != cmd[0] && fd != ans[1])
                close(fd);
        fn(c, path, cmd[0], ans[1]);
        _exit(0);
    }
    close(cmd[0]);
    close(ans[1]);
    char x;
    if (read(ans[0], &x, 1) != 1) {
        int st = 0;
        waitpid(pid, &st, 0);
        snprintf(c->notes, sizeof(c->notes), "the outsider did not start (status %d%s%s)",
                 WIFEXITED(st) ? WEXITSTATUS(st) : -1, hint ? ": " : "", hint ? hint : "");
        close(cmd[1]);
        close(ans[0]);
        return -1;
    }
    c->slot[0] = pid;
    c->fdslot[0] = cmd[1];
    c->fdslot[1] = ans[0];
    return 0;
}

void atkv_keeper_verify(struct atk_ctx *c, const char *evidence)
{
    if (c->slot[0] <= 0)
        return;
    char buf[512];
    size_t n = 0;
    ssize_t r;
    if (write(c->fdslot[0], "g", 1) != 1)
        return;
    while (n < sizeof(buf) - 1 && (r = read(c->fdslot[1], buf + n, sizeof(buf) - 1 - n)) > 0)
        n += (size_t)r;
    if (atk_buf_has(buf, n, c->canary))
        atk_evidence(c, "%s", evidence);
}

void atkv_keeper_cleanup(struct atk_ctx *c)
{
    if (c->slot[0] > 0) {
        kill((pid_t)c->slot[0], SIGKILL);
        waitpid((pid_t)c->slot[0], NULL, 0);
        c->slot[0] = 0;
    }
    for (int i = 0; i < 2; i++)
        if (c->fdslot[i] > 0)
            close(c->fdslot[i]);
}

int atkv_shared_dir(struct atk_ctx *c, char *d, size_t n)
{
    snprintf(d, n, "%s/shared", c->ws);
    if (mkdir(d, 0777) < 0 || chown(d, ATK_NOBODY, ATK_NOBODY) < 0 || chmod(d, 0777) < 0) {
        snprintf(c->notes, sizeof(c->notes), "prepare %s: %s", d, strerror(errno));
        return -1;
    }
    return 0;
}

int atkv_shared_out_agent(struct atk_ctx *c, int reopen)
{
    char p[700];
    if (reopen) {
        snprintf(p, sizeof(p), "%s/shared", atk_arg(c, "ws"));
        atk_try(c, "chmod ws/shared 0777", chmod(p, 0777));
    }
    snprintf(p, sizeof(p), "%s/shared/out.txt", atk_arg(c, "ws"));
    int fd = (int)atk_try(c, "create ws/shared/out.txt", open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd < 0)
        return 0;
    atk_try(c, "fchmod 0644", fchmod(fd, 0644));
    atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    close(fd);
    return 0;
}

int atkv_notes_file(struct atk_ctx *c, char *f, size_t n)
{
    snprintf(f, n, "%s/notes.txt", c->ws);
    int fd = open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 || fchmod(fd, 0666) < 0 || close(fd) < 0) {
        snprintf(c->notes, sizeof(c->notes), "prepare %s: %s", f, strerror(errno));
        return -1;
    }
    return 0;
}

int atkv_notes_agent(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/notes.txt", atk_arg(c, "ws"));
    int fd = (int)atk_try(c, "open ws/notes.txt O_WRONLY", open(p, O_WRONLY | O_TRUNC | O_CLOEXEC));
    if (fd < 0)
        return 0;
    atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    close(fd);
    return 0;
}

/* ---- vmsplice_page_out, splice_ws_page_out, sendfile_ws_page_out, workspace_page_prelaunch */
#define ATKV_PAGE 4096

/* WS/notes.txt filled with one page of 'x' (so the page is in the page cache). 0 or -1. */
static int page_fill(int fd)
{
    char x[ATKV_PAGE];
    memset(x, 'x', sizeof(x));
    return pwrite(fd, x, sizeof(x), 0) == (ssize_t)sizeof(x) ? 0 : -1;
}

/* In a keeper, when asked: what the pipe's read end holds now, to ans; then exits. */
static void page_keeper_answer(int r, int cmd, int ans)
{
    char x, buf[ATKV_PAGE];
    if (read(cmd, &x, 1) != 1)
        _exit(0);
    ssize_t n = read(r, buf, sizeof(buf));
    if (n > 0 && write(ans, buf, (size_t)(n < 511 ? n : 511)) < 0)
        _exit(1);
    _exit(0);
}

/* The keeper with a connection on path: take = 0 hands the agent the pipe's write end and waits
 * for its "done" byte; take = 1 takes an fd from the agent, splices its first page into the pipe,
 * closes it and acknowledges. Then answers (page_keeper_answer). */
static void page_keeper_conn(const char *path, int cmd, int ans, int take)
{
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        _exit(2);
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int s = accept4(l, NULL, NULL, SOCK_CLOEXEC), m = -1;
    loff_t off = 0;
    char x = 'A';
    if (s < 0)
        _exit(3);
    if (take && (atk_recv_fds(s, &m, 1) != 1 || splice(m, &off, p[1], NULL, ATKV_PAGE, 0) != ATKV_PAGE ||
                 close(m) != 0 || write(s, &x, 1) != 1))
        _exit(3);
    if (!take && (atk_send_fds(s, 'W', &p[1], 1) < 0 || read(s, &x, 1) != 1)) /* agent done with it */
        _exit(3);
    close(p[1]);
    close(l);
    close(s);
    page_keeper_answer(p[0], cmd, ans);
}

static void page_keeper_give(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    page_keeper_conn(path, cmd, ans, 0);
}

static void page_keeper_take(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    page_keeper_conn(path, cmd, ans, 1);
}

static void page_keeper_prelaunch(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    atkv_keeper_nobody();
    int p[2];
    int f = open(path, O_RDONLY | O_CLOEXEC);
    loff_t off = 0;
    if (f < 0 || pipe2(p, O_CLOEXEC) < 0)
        _exit(2);
    if (splice(f, &off, p[1], NULL, ATKV_PAGE, 0) != ATKV_PAGE)
        _exit(3);
    close(f);
    close(p[1]);
    if (write(ans, "r", 1) != 1)
        _exit(1);
    page_keeper_answer(p[0], cmd, ans);
}

int atkv_page_prepare(struct atk_ctx *c, int prelaunch)
{
    char f[700], k[700];
    if (atkv_notes_file(c, f, sizeof(f)) != 0)
        return -1;
    int fd = open(f, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || page_fill(fd) != 0 || close(fd) != 0) {
        snprintf(c->notes, sizeof(c->notes), "prepare fill %s: %s", f, strerror(errno));
        return -1;
    }
    if (prelaunch == 1)
        return atkv_keeper_start(c, f, page_keeper_prelaunch, "1 nobody, 2 open/pipe, 3 splice");
    snprintf(k, sizeof(k), "%s/kp.sock", c->dir);
    atk_set(c, "kp", "%s", k);
    if (prelaunch == 2)
        return atkv_keeper_start(c, k, page_keeper_take, "2 listen/pipe, 3 take the fd and splice it");
    return atkv_keeper_start(c, k, page_keeper_give, "2 listen/pipe, 3 hand the write end");
}

int atkv_page_agent(struct atk_ctx *c, char how)
{
    static char page[ATKV_PAGE] __attribute__((aligned(ATKV_PAGE)));
    char p[700];
    snprintf(p, sizeof(p), "%s/notes.txt", atk_arg(c, "ws"));
    int fd = -1, w = -1;
    if (how == 'm') { /* a memfd the outsider splices from, then closes */
        fd = (int)atk_try(c, "memfd_create", memfd_create("atk", MFD_CLOEXEC));
        int s = (int)atk_try(c, "connect the outsider", atk_unix(SOCK_STREAM, atk_arg(c, "kp")));
        if (fd < 0 || s < 0 || page_fill(fd) != 0)
            return 0;
        char ack;
        if (atk_try(c, "pass the memfd out", atk_send_fds(s, 'M', &fd, 1)) >= 0) /* refused: no ack */
            atk_try(c, "the outsider spliced it and closed it", read(s, &ack, 1));
        close(s);
    } else if (how != 'p') {
        int s = (int)atk_try(c, "connect the outsider", atk_unix(SOCK_STREAM, atk_arg(c, "kp")));
        if (s < 0 || atk_try(c, "take the pipe's write end", atk_recv_fds(s, &w, 1)) != 1)
            return 0;
        if (how == 'v') {
            memset(page, 'x', sizeof(page));
            struct iovec iv = {page, sizeof(page)};
            atk_try(c, "vmsplice a page of our memory", vmsplice(w, &iv, 1, 0));
        } else {
            fd = (int)atk_try(c, "open ws/notes.txt O_RDWR", open(p, O_RDWR | O_CLOEXEC));
            loff_t lo = 0;
            off_t so = 0;
            if (fd >= 0 && how == 's')
                atk_try(c, "splice ws/notes.txt into the pipe", splice(fd, &lo, w, NULL, ATKV_PAGE, 0));
            else if (fd >= 0)
                atk_try(c, "sendfile ws/notes.txt into the pipe", sendfile(w, fd, &so, ATKV_PAGE));
        }
        close(w);
        if (write(s, "d", 1) != 1)
            atk_note(c, "no done byte");
        close(s);
    }
    atk_recv(c);
    if (how == 'v') {
        memcpy(page, c->secret, strlen(c->secret));
        return 0;
    }
    if (fd < 0)
        fd = (int)atk_try(c, "open ws/notes.txt O_WRONLY", open(p, O_WRONLY | O_CLOEXEC));
    if (fd >= 0)
        atk_try(c, "pwrite the canary at offset 0", pwrite(fd, c->secret, strlen(c->secret), 0));
    return 0;
}

/* ---- file_fd_own_queue (nested=0), file_fd_nested_queue (nested=1) */
int atkv_own_queue_agent(struct atk_ctx *c)
{
    char req[700];
    snprintf(req, sizeof(req), "F%s/given.out", atk_arg(c, "dir"));
    int fd = -1, sv[2], iv[2] = {-1, -1};
    if (atk_try(c, "take helper's file fd", atk_take(c, req, &fd, 1)) < 1)
        return 0;
    if (atk_try(c, "socketpair", socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv)) < 0)
        return 0;
    int nested = atk_argl(c, "nested") == 1;
    if (nested) {
        if (atk_try(c, "inner socketpair", socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, iv)) < 0 ||
            atk_try(c, "park the file in the inner queue", atk_send_fds(iv[0], 'F', &fd, 1)) < 0 ||
            atk_try(c, "park the inner socket in the outer queue", atk_send_fds(sv[0], 'S', &iv[1], 1)) < 0)
            return 0;
        close(iv[0]);
        close(iv[1]);
    } else if (atk_try(c, "park the file in our own queue", atk_send_fds(sv[0], 'F', &fd, 1)) < 0)
        return 0;
    close(fd);
    close(sv[0]);
    atk_recv(c);
    int got = -1;
    if (atk_try(c, "take it back", atk_recv_fds(sv[1], &got, 1)) < 1)
        return 0;
    if (nested) {
        int inner = got;
        got = -1;
        if (atk_try(c, "take the file from the inner socket", atk_recv_fds(inner, &got, 1)) < 1)
            return 0;
    }
    atk_try(c, "write", write(got, c->secret, strlen(c->secret)));
    return 0;
}

int atkv_keeper_listen(const char *path)
{
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0777) < 0 || listen(l, 4) < 0)
        _exit(2);
    return l;
}

int atkv_keeper_take_one(int l)
{
    int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    int fd = -1;
    if (s < 0 || atk_recv_fds(s, &fd, 1) != 1)
        _exit(3);
    if (write(s, "A", 1) != 1)
        _exit(3);
    close(s);
    close(l);
    return fd;
}

size_t atkv_keeper_read_until_asked(int m, int cmd, char *buf, size_t cap)
{
    size_t n = 0;
    for (;;) {
        struct pollfd pf[2] = {{.fd = m, .events = POLLIN}, {.fd = cmd, .events = POLLIN}};
        if (poll(pf, 2, -1) < 0)
            _exit(1);
        if (pf[0].revents & POLLIN) {
            ssize_t r = read(m, buf + n, cap - 1 - n);
            if (r > 0 && (n += (size_t)r) < cap - 1)
                continue;
        }
        if (pf[0].revents & (POLLHUP | POLLERR) && !(pf[0].revents & POLLIN))
            m = -1; /* poll ignores a negative fd: wait for the question only */
        if (pf[1].revents & (POLLIN | POLLHUP))
            break;
    }
    buf[n] = 0;
    return n;
}

void atkv_keeper_nobody(void)
{
    if (setgroups(0, NULL) < 0 || setgid(ATK_NOBODY) < 0 || setuid(ATK_NOBODY) < 0)
        _exit(1);
}

int atkv_keeper_park(int fd, int cmd, int ans)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
        _exit(2);
    if (fd < 0 || atk_send_fds(sv[0], 'F', &fd, 1) < 0 || close(fd) < 0)
        _exit(3);
    if (write(ans, "r", 1) != 1)
        _exit(1);
    char x;
    if (read(cmd, &x, 1) != 1)
        _exit(0);
    int got = -1;
    if (atk_recv_fds(sv[1], &got, 1) != 1)
        _exit(4);
    return got;
}

void atkv_keeper_hand_file(int got, int ans)
{
    char buf[256];
    ssize_t r = pread(got, buf, sizeof(buf), 0);
    if (r > 0 && write(ans, buf, (size_t)r) != r)
        _exit(1);
    _exit(0);
}

int atkv_canary_name_agent(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/%s", atk_arg(c, "ws"), c->secret);
    int fd = (int)atk_try(c, "create WS/<canary>", open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (fd >= 0)
        close(fd);
    return 0;
}

void atkv_outside_shared_verify(struct atk_ctx *c)
{
    char f[720];
    snprintf(f, sizeof(f), "%s/outside/shared", c->dir);
    atk_nobody_reads(c, f);
}

/* ---- a connection the agent makes before its recv, left in the outsider's backlog */
int atkv_backlog_prepare(struct atk_ctx *c)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/lc.sock", c->dir);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || n <= 0 || (size_t)n >= sizeof(sa.sun_path) || bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        chmod(sa.sun_path, 0666) < 0 || listen(s, 4) < 0) {
        if (s >= 0)
            close(s);
        return -1;
    }
    c->fdslot[ATKV_BACKLOG_SLOT] = s;
    atk_set(c, "lc", "%s", sa.sun_path);
    return 0;
}

int atkv_backlog_agent(struct atk_ctx *c)
{
    int s = atk_unix(SOCK_STREAM, atk_arg(c, "lc"));
    if (atk_try(c, "connect to the outsider before the recv", s) < 0)
        return -1;
    atk_recv(c); /* now tainted */
    atk_sync(c, "late");
    return s;
}

void atkv_backlog_cleanup(struct atk_ctx *c)
{
    if (c->fdslot[ATKV_BACKLOG_SLOT] > 0)
        close(c->fdslot[ATKV_BACKLOG_SLOT]);
    c->fdslot[ATKV_BACKLOG_SLOT] = -1;
}

/* ---- mmap_shared_file, mmap_mprotect_file: an outsider's O_RDWR file, mapped shared */
static void mmap_outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    char f[700];
    snprintf(f, sizeof(f), "%s/mm.out", c->dir);
    int l = atkv_keeper_listen(path);
    int fd = open(f, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ftruncate(fd, ATKV_PAGE) < 0 || fchown(fd, ATK_NOBODY, ATK_NOBODY) < 0)
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

int atkv_mmap_prepare(struct atk_ctx *c)
{
    char k[700];
    snprintf(k, sizeof(k), "%s/mg.sock", c->dir);
    atk_set(c, "mg", "%s", k);
    return atkv_keeper_start(c, k, mmap_outsider, "1 drop to 65534, 2 listen/file, 3 give the fd");
}

int atkv_mmap_agent(struct atk_ctx *c, int mprotect_after)
{
    int s = (int)atk_try(c, "connect the outsider", atk_unix(SOCK_STREAM, atk_arg(c, "mg")));
    if (s < 0)
        return 0;
    int fd = -1;
    if (atk_try(c, "take its O_RDWR file fd", atk_recv_fds(s, &fd, 1) == 1 ? 0 : -1) < 0)
        return 0;
    int prot = mprotect_after ? PROT_READ : PROT_READ | PROT_WRITE;
    char *m = mmap(NULL, ATKV_PAGE, prot, MAP_SHARED, fd, 0);
    if (atk_try(c, mprotect_after ? "mmap MAP_SHARED PROT_READ" : "mmap MAP_SHARED PROT_READ|PROT_WRITE",
                m == MAP_FAILED ? -1 : 0) < 0)
        return 0;
    close(fd);
    close(s);
    atk_recv(c); /* now tainted; we hold no fd, only a shared mapping (r--s or rw-s) */
    if (mprotect_after &&
        atk_try(c, "mprotect PROT_READ|PROT_WRITE", mprotect(m, ATKV_PAGE, PROT_READ | PROT_WRITE)) < 0)
        return 0;
    memcpy(m, c->secret, strlen(c->secret));
    atk_try(c, "msync", msync(m, ATKV_PAGE, MS_SYNC));
    munmap(m, ATKV_PAGE);
    return 0;
}

/* ---- keepers that hand the agent a file of their own, or hold one the agent handed them
 * (what only this section needs, included here) */

int atkv_keeper_start_at(struct atk_ctx *c, const char *tag, atkv_keeper_fn fn, const char *hint)
{
    char k[700];
    snprintf(k, sizeof(k), "%s/%s.sock", c->dir, tag);
    atk_set(c, tag, "%s", k);
    return atkv_keeper_start(c, k, fn, hint);
}

int atkv_keeper_take_as_nobody(const char *path, int ans)
{
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    if (write(ans, "r", 1) != 1)
        _exit(1);
    return atkv_keeper_take_one(l);
}

int atkv_keeper_take_held(int l, int ans, int *s)
{
    if (write(ans, "r", 1) != 1)
        _exit(1);
    *s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    int fd = -1;
    if (*s < 0 || atk_recv_fds(*s, &fd, 1) != 1)
        _exit(3);
    return fd;
}

void atkv_keeper_ack(int s, int l)
{
    if (write(s, "A", 1) != 1)
        _exit(3);
    close(s);
    close(l);
}

void atkv_keeper_give_one(int l, int fd, int keep, int ans)
{
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    if (s < 0 || atk_send_fds(s, 'F', &fd, 1) < 0)
        _exit(3);
    if (!keep)
        close(fd);
    char x;
    if (read(s, &x, 1) < 0) /* the agent closes its side once it has the fd */
        _exit(3);
    close(s);
    close(l);
}

int atkv_keeper_pty(int *sl)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
        _exit(4);
    *sl = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (*sl < 0)
        _exit(4);
    return m;
}

void atkv_keeper_wait_asked(int cmd)
{
    char x;
    if (read(cmd, &x, 1) != 1)
        _exit(0);
}

void atkv_keeper_answer(int ans, const void *buf, size_t n)
{
    if (n > 0 && write(ans, buf, n) != (ssize_t)n)
        _exit(1);
    _exit(0);
}

void atkv_keeper_serve_notifs(int lf, int cmd, atkv_notif_fn fn, void *arg)
{
    for (;;) {
        struct pollfd pf[2] = {{.fd = lf, .events = POLLIN}, {.fd = cmd, .events = POLLIN}};
        if (poll(pf, 2, -1) < 0)
            _exit(1);
        if (pf[0].revents & POLLIN) {
            struct seccomp_notif req;
            memset(&req, 0, sizeof(req));
            if (ioctl(lf, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0)
                fn(lf, &req, arg);
            continue;
        }
        if (pf[0].revents & (POLLHUP | POLLERR))
            lf = -1; /* the agent is gone: wait for the question only */
        if (pf[1].revents & (POLLIN | POLLHUP))
            break;
    }
}

int atkv_take_keeper_fd(struct atk_ctx *c, const char *tag, const char *what)
{
    int s = (int)atk_try(c, "connect the outsider", atk_unix(SOCK_STREAM, atk_arg(c, tag)));
    if (s < 0)
        return -1;
    int fd = -1;
    if (atk_try(c, what, atk_recv_fds(s, &fd, 1) == 1 ? 0 : -1) < 0) {
        close(s);
        return -1;
    }
    close(s);
    return fd;
}

int atkv_hand_to_keeper(struct atk_ctx *c, const char *tag, int fd, char code, const char *what, const char *ack)
{
    int s = (int)atk_try(c, "connect the outsider", atk_unix(SOCK_STREAM, atk_arg(c, tag)));
    if (fd < 0 || s < 0) {
        if (s >= 0)
            close(s);
        return -1;
    }
    char x;
    if (atk_try(c, what, atk_send_fds(s, code, &fd, 1)) >= 0) /* refused: no ack will come */
        atk_try(c, ack, read(s, &x, 1));
    close(s);
    return 0;
}

int atkv_seccomp_listener_out(struct atk_ctx *c, const char *tag)
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
    if (atkv_hand_to_keeper(c, tag, lf, 'L', "hand the listener to the outsider", "outsider holds it") < 0)
        return -1;
    close(lf);
    atk_recv(c); /* now tainted; the filter stays, the listener is the outsider's */
    return 0;
}

int atkv_control_pair_agent(struct atk_ctx *c, const char *tag, const char *before, const char *after)
{
    int s = (int)atk_try(c, "connect the outsider", atk_unix(SOCK_STREAM, atk_arg(c, tag)));
    int sp[2];
    if (s < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0)
        return 0;
    atk_try(c, "hand over one end", atk_send_fds(s, 'L', &sp[1], 1));
    atk_recv(c);
    char line[300];
    int n = snprintf(line, sizeof(line), "%s%s%s", before, c->secret, after);
    if (n < 0 || (size_t)n >= sizeof(line))
        n = 0;
    atk_try(c, "write it", write(sp[0], line, (size_t)n));
    sleep(1); /* the keeper reads it */
    return 0;
}

int atkv_memfd_out_agent(struct atk_ctx *c, const char *tag, const char *kept)
{
    int m = (int)atk_try(c, "memfd_create", memfd_create("atk", MFD_CLOEXEC));
    if (m < 0 || ftruncate(m, 4096) < 0)
        return 0;
    if (atkv_hand_to_keeper(c, tag, m, 'M', "pass the memfd out", kept) < 0)
        return 0;
    atk_recv(c);
    atk_try(c, "pwrite the canary into the memfd", pwrite(m, c->secret, strlen(c->secret), 0));
    return 0;
}

static const char *hex_path; /* atkv_nobody_reads_hex's file, for its atk_as_uid child */

static int nobody_rd_hex(struct atk_ctx *c, char *out, size_t n)
{
    char hex[2 * sizeof(c->canary) + 1];
    size_t l = strlen(c->canary);
    for (size_t i = 0; i < l; i++)
        snprintf(hex + 2 * i, 3, "%02x", (unsigned char)c->canary[i]);
    hex[2 * l] = 0;
    if (atk_file_has(hex_path, hex) != 1)
        return 0;
    snprintf(out, n, "uid 65534 read the canary (hex %s) from %s", hex, hex_path);
    return 1;
}

void atkv_nobody_reads_hex(struct atk_ctx *c, const char *path)
{
    char out[1024];
    hex_path = path;
    if (atk_as_uid(c, ATK_NOBODY, nobody_rd_hex, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
}

void atkv_rm_deep(const char *ws, const char *name, int depth)
{
    int fds[64];
    int n = 0;
    if (depth > 63)
        depth = 63;
    fds[n] = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    while (fds[n] >= 0 && n < depth) {
        int d = openat(fds[n], name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (d < 0)
            break;
        fds[++n] = d;
    }
    if (fds[n] < 0)
        return;
    int dd = dup(fds[n]);
    DIR *dir = dd >= 0 ? fdopendir(dd) : NULL;
    for (struct dirent *e; dir && (e = readdir(dir));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            (void)unlinkat(fds[n], e->d_name, 0);
    if (dir)
        closedir(dir);
    else if (dd >= 0)
        close(dd);
    for (; n > 0; n--) {
        close(fds[n]);
        (void)unlinkat(fds[n - 1], name, AT_REMOVEDIR);
    }
    close(fds[0]);
}

int atkv_watcher_start(struct atk_ctx *c, void (*run)(const char *arg, int out, int ready), const char *arg)
{
    int p[2], rd[2];
    if (pipe2(p, O_CLOEXEC) < 0 || pipe2(rd, O_CLOEXEC) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(p[0]);
        close(rd[0]);
        int dn = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (dn < 0 || dup2(dn, 0) < 0 || dup2(dn, 1) < 0 || dup2(dn, 2) < 0)
            _exit(1);
        for (int fd = 3; fd < 1024; fd++)
            if (fd != p[1] && fd != rd[1])
                close(fd);
        run(arg, p[1], rd[1]);
        _exit(0);
    }
    close(p[1]);
    close(rd[1]);
    char x;
    ssize_t r = read(rd[0], &x, 1);
    close(rd[0]);
    if (r != 1) {
        snprintf(c->notes, sizeof(c->notes), "the inotify watcher did not start");
        close(p[0]);
        return -1;
    }
    if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0)
        return -1;
    c->fdslot[0] = p[0];
    c->slot[0] = pid;
    return 0;
}
