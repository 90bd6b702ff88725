// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* foreign_ws_prefix - a writable fd on an outsider's file whose path begins with the workspace's
 * path and a space. mncd's fd scan tells the agent's own files from foreign ones by the
 * readlink() of /proc/PID/fd/N: a path "under" the workspace is one that starts with it and
 * goes on with '/', NUL or ' ' (the space is for the kernel's " (deleted)" suffix). So the file
 * "WS x" beside the workspace (here DIR/ws x, the outsider's, 0644: wherever the workspace's
 * parent is writable to others, /tmp say, an outsider can make it) counts as a workspace file,
 * refused only while an outsider holds it too. Before its recv the agent (untainted: it may
 * talk to anyone) takes from the outsider (uid 65534, DIR/wp.sock) an fd open for writing on
 * that file; the outsider closes its own copy. After the taint the agent writes the canary.
 * Verifier: uid 65534 reads DIR/ws x after the agent exited.
 * Blocks it: mncd's fd scan takes a path as inside a workspace only if it equals it or goes on
 * with '/' (fdscan.c under): "WS x" is a foreign_file and the delivery is refused. */
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)cmd;
    char f[700];
    snprintf(f, sizeof(f), "%s ws-x", c->ws); /* "DIR/ws ws-x" */
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    int fd = open(f, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        _exit(4);
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    if (s < 0 || atk_send_fds(s, 'F', &fd, 1) < 0)
        _exit(3);
    close(fd); /* the outsider holds nothing: the file is on disk */
    char x;
    if (read(s, &x, 1) < 0)
        _exit(3);
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    char f[700], k[700];
    snprintf(f, sizeof(f), "%s ws-x", c->ws);
    int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || fchown(fd, ATK_NOBODY, ATK_NOBODY) < 0) {
        snprintf(c->notes, sizeof(c->notes), "cannot make %s", f);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    snprintf(k, sizeof(k), "%s/wp.sock", c->dir);
    atk_set(c, "wp", "%s", k);
    return atkv_keeper_start(c, k, outsider, "1 drop to 65534, 2 listen, 3 give the fd, 4 open the file");
}

static int agent(struct atk_ctx *c)
{
    int s = (int)atk_try(c, "connect the outsider", atk_unix(SOCK_STREAM, atk_arg(c, "wp")));
    if (s < 0)
        return 0;
    int fd = -1;
    if (atk_try(c, "take its fd on \"WS ws-x\"", atk_recv_fds(s, &fd, 1) == 1 ? 0 : -1) < 0)
        return 0;
    close(s);
    atk_recv(c);
    atk_try(c, "write the canary", write(fd, c->secret, strlen(c->secret)));
    close(fd);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    char f[700];
    snprintf(f, sizeof(f), "%s ws-x", c->ws);
    atk_nobody_reads(c, f);
}

static void cleanup(struct atk_ctx *c)
{
    char f[700];
    snprintf(f, sizeof(f), "%s ws-x", c->ws);
    unlink(f);
    atkv_keeper_cleanup(c);
}

static const struct atk A = {"foreign_ws_prefix",
                             "writable fd on an outsider's file named after the workspace and a space",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
