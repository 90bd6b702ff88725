// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* run_mntns.c - the agent's mount namespace: its passwd/group entry and its /dev/shm (contract
 * in run_mntns.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_mntns.h"

#define RUN_ETC_MAX (8u << 20) /* a larger /etc/passwd or /etc/group is refused */

int run_mntns_prepare_shm(const char *ws, uid_t uid, char *out, size_t outlen, char *why, size_t whylen)
{
    int wfd = open(ws, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (wfd < 0) {
        snprintf(why, whylen, "workspace %.300s: %s", ws, strerror(errno));
        return -1;
    }
    int rc = -1;
    if (mkdirat(wfd, RUN_SHM_DIR, 0700) == 0) {
        if (fchownat(wfd, RUN_SHM_DIR, uid, uid, AT_SYMLINK_NOFOLLOW) != 0) {
            snprintf(why, whylen, "%.300s/%s: chown: %s", ws, RUN_SHM_DIR, strerror(errno));
            goto out;
        }
    } else if (errno != EEXIST) {
        snprintf(why, whylen, "%.300s/%s: mkdir: %s", ws, RUN_SHM_DIR, strerror(errno));
        goto out;
    }
    struct stat st;
    if (fstatat(wfd, RUN_SHM_DIR, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, whylen, "%.300s/%s is not a directory (the agent's /dev/shm): remove it", ws, RUN_SHM_DIR);
        goto out;
    }
    snprintf(out, outlen, "%s/%s", ws, RUN_SHM_DIR);
    rc = 0;
out:
    close(wfd);
    return rc;
}

/* ---- names */

static bool portable_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 32 || s[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-'))
            return false;
    }
    return true;
}

/* Whether the colon-separated file text has a line whose field `field` (0-based) equals val. */
static bool has_field(const char *text, int field, const char *val)
{
    size_t vl = strlen(val);
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        const char *f = l;
        for (int i = 0; i < field && f; i++) {
            f = strpbrk(f, ":\n");
            f = f && *f == ':' ? f + 1 : NULL;
        }
        if (f && strncmp(f, val, vl) == 0 && (f[vl] == ':' || f[vl] == '\n' || f[vl] == 0))
            return true;
    }
    return false;
}

void run_mntns_user_name(const char *agent, uint32_t agent_id, const char *passwd, char *out, size_t outlen)
{
    if (portable_name(agent) && !has_field(passwd, 0, agent))
        snprintf(out, outlen, "%s", agent);
    else
        snprintf(out, outlen, "mnc-agent-%u", (unsigned)agent_id);
}

/* ---- the namespace */

/* The whole of a small system file, NUL-terminated (malloc'd), or NULL with errno set. */
static char *slurp(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (len + 1 == cap) {
            char *nb = cap < RUN_ETC_MAX ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                buf = NULL;
                errno = EFBIG;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + len, cap - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(buf);
            buf = NULL;
            break;
        }
        if (r == 0) {
            buf[len] = 0;
            break;
        }
        len += (size_t)r;
    }
    int e = errno;
    close(fd);
    errno = e;
    return buf;
}

/* The file's text; "" when the host has none (an initramfs, a minimal container: no entry to
 * extend, and no file to bind over); NULL with why on any other error. */
static char *read_etc(const char *path, char *why, size_t n)
{
    char *buf = slurp(path);
    if (!buf && errno == ENOENT)
        buf = calloc(1, 1);
    if (!buf)
        snprintf(why, n, "read %s: %s", path, strerror(errno));
    return buf;
}

/* Writes text + extra into dir/name (0644) and binds it read-only over target. */
static int bind_file(const char *dir, const char *name, const char *text, const char *extra, const char *target,
                     char *why, size_t n)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "wxe");
    size_t tl = strlen(text);
    bool ok = f && fwrite(text, 1, tl, f) == tl && (tl == 0 || text[tl - 1] == '\n' || fputc('\n', f) != EOF) &&
              fputs(extra, f) >= 0;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok || chmod(p, 0644) != 0) {
        snprintf(why, n, "write the agent's %s: %s", target, strerror(errno));
        return -1;
    }
    if (mount(p, target, NULL, MS_BIND, NULL) != 0 ||
        mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0) {
        snprintf(why, n, "bind the agent's %s: %s", target, strerror(errno));
        return -1;
    }
    return 0;
}

static int passwd_view(const run_mntns *m, char *why, size_t n)
{
    char uidtxt[16], name[64];
    snprintf(uidtxt, sizeof(uidtxt), "%u", (unsigned)m->uid);
    char *pw = read_etc("/etc/passwd", why, n);
    if (!pw)
        return -1;
    char *gr = read_etc("/etc/group", why, n);
    if (!gr) {
        free(pw);
        return -1;
    }
    bool need_pw = !has_field(pw, 2, uidtxt), need_gr = !has_field(gr, 2, uidtxt);
    int rc = 0;
    if (need_pw || need_gr) {
        /* a tmpfs only this namespace sees holds the two files; detached once they are bound */
        const char *tmpdir = "/dev/shm";
        struct stat st;
        if (stat(tmpdir, &st) != 0 || !S_ISDIR(st.st_mode))
            tmpdir = "/tmp";
        run_mntns_user_name(m->agent, m->agent_id, pw, name, sizeof(name));
        char pwl[PATH_MAX + 200], grl[200];
        snprintf(pwl, sizeof(pwl), "%s:x:%u:%u:mnc agent %s:%s:/bin/sh\n", name, (unsigned)m->uid, (unsigned)m->uid,
                 name, m->home ? m->home : "/nonexistent");
        snprintf(grl, sizeof(grl), "%s:x:%u:\n", name, (unsigned)m->uid);
        if (mount("mnc-etc", tmpdir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=16m") != 0) {
            snprintf(why, n, "tmpfs for the agent's passwd entry: %s", strerror(errno));
            rc = -1;
        }
        /* a host without the file: nobody has an entry, the agent goes without one too */
        if (rc == 0 && need_pw && access("/etc/passwd", F_OK) == 0)
            rc = bind_file(tmpdir, "passwd", pw, pwl, "/etc/passwd", why, n);
        if (rc == 0 && need_gr && access("/etc/group", F_OK) == 0)
            rc = bind_file(tmpdir, "group", gr, grl, "/etc/group", why, n);
        if (rc == 0 && umount2(tmpdir, MNT_DETACH) != 0) {
            snprintf(why, n, "detach the passwd tmpfs: %s", strerror(errno));
            rc = -1;
        }
    }
    free(pw);
    free(gr);
    return rc;
}

int run_mntns_apply(const run_mntns *m, char *why, size_t whylen)
{
    if (unshare(CLONE_NEWNS) != 0) {
        snprintf(why, whylen, "mount namespace: %s", strerror(errno));
        return -1;
    }
    /* the host's later mounts still reach the agent; nothing of the agent's reaches the host */
    if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) {
        snprintf(why, whylen, "mount namespace: make / a slave: %s", strerror(errno));
        return -1;
    }
    if (m->uid != 0 && passwd_view(m, why, whylen) != 0)
        return -1;
    if (m->shm_src) {
        int fd = open(m->shm_src, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        char src[64];
        snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
        if (fd < 0 || mount(src, "/dev/shm", NULL, MS_BIND, NULL) != 0 ||
            mount(NULL, "/dev/shm", NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV, NULL) != 0) {
            snprintf(why, whylen, "bind %.300s on /dev/shm: %s", m->shm_src, strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        close(fd);
    }
    return 0;
}

int run_mntns_env(const run_mntns *m, char *why, size_t whylen)
{
    char name[64];
    if (m->uid == 0) {
        snprintf(name, sizeof(name), "root");
    } else {
        /* the name run_mntns_apply chose, or the host's own entry's */
        char uidtxt[16];
        snprintf(uidtxt, sizeof(uidtxt), "%u", (unsigned)m->uid);
        char *pw = slurp("/etc/passwd");
        if (!pw && errno == ENOENT) /* no passwd file on this host: the name run_mntns_user_name gives */
            pw = calloc(1, 1);
        if (!pw) {
            snprintf(why, whylen, "read /etc/passwd: cannot name the agent's user");
            return -1;
        }
        name[0] = 0;
        for (const char *l = pw; l && *l && !name[0]; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
            const char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
            size_t ul = strlen(uidtxt);
            if (c1 && c2 && strncmp(c2 + 1, uidtxt, ul) == 0 && c2[1 + ul] == ':' && (size_t)(c1 - l) < sizeof(name))
                snprintf(name, sizeof(name), "%.*s", (int)(c1 - l), l);
        }
        free(pw);
        if (!name[0])
            run_mntns_user_name(m->agent, m->agent_id, "", name, sizeof(name));
    }
    if (setenv("HOME", m->home ? m->home : "/nonexistent", 1) != 0 || setenv("USER", name, 1) != 0 ||
        setenv("LOGNAME", name, 1) != 0) {
        snprintf(why, whylen, "setenv: %s", strerror(errno));
        return -1;
    }
    return 0;
}
