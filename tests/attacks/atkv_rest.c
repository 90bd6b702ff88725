// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* atkv_rest.c - data at rest keeps its label (the rest_* attacks; docs/threat-model.md, "Data at rest").
 * Contracts in atkv_rest.h; linked into every attack (atk_variants.h). */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "atk.h"
#include "atk_variants.h"

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

int atkv_rest_grant(struct atk_ctx *c, const char *agent, const char *path, const char *grant)
{
    if (atkv_rest_prepare(c, agent, path) < 0 ||
        c->launch2_nread >= (int)(sizeof(c->launch2_read) / sizeof(c->launch2_read[0])))
        return -1;
    c->launch2_read[c->launch2_nread++] = grant;
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
