// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_fifo - threat model (docs/threat-model.md): storage any process can read. Before the taint the agent makes a FIFO (0666) in its
 * workspace; an outsider (uid 65534) opens it for reading; the agent opens it for writing, then
 * receives, then writes the canary into it.
 * Verifier: the uid-65534 reader, started while the agent waits, saves what it reads.
 * Blocks it: a 0700 workspace owned by the agent's uid (the outsider cannot open the FIFO);
 * refusing delivery while the agent holds an fd whose other side is outside. */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/fifo", atk_arg(c, "ws"));
    if (atk_try(c, "mkfifo", mkfifo(p, 0666)) < 0)
        return 0;
    chmod(p, 0666);
    chmod(atk_arg(c, "ws"), 0755);
    atk_sync(c, "fifo");
    int fd = (int)atk_try(c, "open fifo for writing", open(p, O_WRONLY | O_NONBLOCK));
    atk_recv(c);
    if (fd >= 0)
        atk_try(c, "write fifo", write(fd, c->secret, strlen(c->secret)));
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    (void)tag;
    char p[700], gp[700];
    snprintf(p, sizeof(p), "%s/fifo", c->ws);
    snprintf(gp, sizeof(gp), "%s/fifo.got", c->dir);
    int out = open(gp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int ready[2];
    if (out < 0 || pipe(ready) < 0)
        return;
    pid_t pid = fork();
    if (pid == 0) { /* the outsider: uid 65534, reads the FIFO for a while */
        if (setgroups(0, NULL) < 0 || setgid(ATK_NOBODY) < 0 || setuid(ATK_NOBODY) < 0)
            _exit(1);
        int fd = open(p, O_RDONLY | O_NONBLOCK);
        if (write(ready[1], fd >= 0 ? "y" : "n", 1) != 1 || fd < 0)
            _exit(0);
        char buf[256];
        for (int i = 0; i < 100; i++) {
            struct pollfd pf = {.fd = fd, .events = POLLIN};
            if (poll(&pf, 1, 100) == 1) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n > 0 && atk_write_all(out, buf, (size_t)n) < 0)
                    _exit(1);
            }
        }
        _exit(0);
    }
    char r = 0;
    if (read(ready[0], &r, 1) != 1 || r != 'y')
        atk_note(c, "uid 65534 cannot open the fifo");
    close(ready[0]);
    close(ready[1]);
    close(out);
    c->slot[0] = pid;
}

static void verify(struct atk_ctx *c)
{
    char gp[700];
    if (c->slot[0] > 0) {
        kill((pid_t)c->slot[0], SIGKILL);
        waitpid((pid_t)c->slot[0], NULL, 0);
    }
    snprintf(gp, sizeof(gp), "%s/fifo.got", c->dir);
    if (atk_file_has(gp, c->canary) == 1)
        atk_evidence(c, "uid 65534 read the canary from the workspace FIFO");
}

static const struct atk A = {"workspace_fifo",
                             "a FIFO in the workspace opened by an outsider before the taint",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             on_sync,
                             verify,
                             NULL};
ATK_MAIN(A)
