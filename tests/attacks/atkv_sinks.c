// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* atkv_sinks.c - channels the agent writes into itself: sockets it was given or made, shared files, sinks,
 * bound names, the domain name, inode metadata, abstract tool sinks, fds that arrive late.
 * Contracts in atkv_sinks.h; linked into every attack (atk_variants.h). */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

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
