// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tmp_fifo - a FIFO an outsider made in a shared directory (/tmp/mnc-atk-fifo-PID, mode 0666,
 * uid 65534's) and keeps open for reading; the agent opens it O_WRONLY | O_NONBLOCK and writes
 * the canary. (workspace_fifo is the FIFO inside the workspace, which the launcher refuses.)
 * Verifier: the reader (uid 65534, started before the launch) hands what it read to the
 * orchestrator.
 * Blocks it: Landlock (no write right outside the workspace; a FIFO open is a file open). */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "atk.h"

static char path[128];

static int prepare(struct atk_ctx *c)
{
    snprintf(path, sizeof(path), "/tmp/mnc-atk-fifo-%d", (int)getpid());
    if (mkfifo(path, 0666) < 0 || chmod(path, 0666) < 0 || chown(path, ATK_NOBODY, ATK_NOBODY) < 0) {
        snprintf(c->notes, sizeof(c->notes), "mkfifo %s: %s", path, strerror(errno));
        return -1;
    }
    atk_set(c, "fifo", "%s", path);
    int ans[2];
    if (pipe2(ans, O_CLOEXEC) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(ans[0]);
        int dn = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (dn < 0 || dup2(dn, 0) < 0 || dup2(dn, 1) < 0 || dup2(dn, 2) < 0)
            _exit(1);
        for (int i = 3; i < 1024; i++)
            if (i != ans[1])
                close(i);
        if (setgroups(0, NULL) < 0 || setgid(ATK_NOBODY) < 0 || setuid(ATK_NOBODY) < 0)
            _exit(1);
        int f = open(path, O_RDWR | O_CLOEXEC); /* O_RDWR: never blocks, never sees EOF */
        if (f < 0 || write(ans[1], "r", 1) != 1)
            _exit(1);
        char buf[256];
        for (;;) {
            ssize_t r = read(f, buf, sizeof(buf));
            if (r <= 0 || write(ans[1], buf, (size_t)r) != r)
                _exit(0);
        }
    }
    close(ans[1]);
    char x;
    if (read(ans[0], &x, 1) != 1) {
        snprintf(c->notes, sizeof(c->notes), "the FIFO reader did not start");
        return -1;
    }
    if (fcntl(ans[0], F_SETFL, O_NONBLOCK) < 0)
        return -1;
    c->slot[0] = pid;
    c->fdslot[0] = ans[0];
    return 0;
}

static int agent(struct atk_ctx *c)
{
    const char *p = atk_arg(c, "fifo");
    int fd = (int)atk_try(c, "open the /tmp FIFO O_WRONLY", p ? open(p, O_WRONLY | O_NONBLOCK | O_CLOEXEC) : -1);
    if (fd < 0)
        return 0;
    atk_try(c, "write", write(fd, c->secret, strlen(c->secret)));
    close(fd);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    if (c->slot[0] <= 0)
        return;
    usleep(100 * 1000);
    char buf[512];
    ssize_t r = read(c->fdslot[0], buf, sizeof(buf));
    if (r > 0 && atk_buf_has(buf, (size_t)r, c->canary))
        atk_evidence(c, "uid 65534 read the canary from its FIFO in /tmp");
}

static void cleanup(struct atk_ctx *c)
{
    if (c->slot[0] > 0) {
        kill((pid_t)c->slot[0], SIGKILL);
        waitpid((pid_t)c->slot[0], NULL, 0);
        c->slot[0] = 0;
    }
    if (c->fdslot[0] > 0)
        close(c->fdslot[0]);
    if (path[0])
        unlink(path);
}

static const struct atk A = {
    "tmp_fifo", "an outsider's FIFO in /tmp, opened for writing by the agent", 0, prepare, agent, NULL, verify,
    cleanup};
ATK_MAIN(A)
