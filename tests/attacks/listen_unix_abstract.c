// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* listen_unix_abstract - threat model (docs/threat-model.md): listeners created after the taint (and our TCP variant). After the taint the agent creates
 * an abstract UNIX stream listener; an outsider connects and reads: the kernel never judges sends on an accepted socket.
 * Verifier: an untainted root process outside the agent connects while the agent waits and reads.
 * Blocks it: seccomp denies listen() for agents that are not declared servers; a listener rule that
 * holds after the taint. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    const char *kind = "abstract";
    char addr[200];
    int l;
    if (kind[0] == 't') {
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
        if (kind[0] == 'a') {
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
        if (kind[0] == 'p')
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

static void on_sync(struct atk_ctx *c, const char *tag)
{
    int fd;
    if (strncmp(tag, "tcp:", 4) == 0) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        sa.sin_port = htons((uint16_t)atoi(tag + 4));
        fd = socket(AF_INET, SOCK_STREAM, 0);
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

static const struct atk A = {"listen_unix_abstract",
                             "an abstract UNIX stream listener created after the taint",
                             0,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
