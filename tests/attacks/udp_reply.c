// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_reply - after the taint the agent binds a UDP port and answers whoever writes to it, with
 * the canary: an outsider "pulls" it (our addition).
 * Verifier: an untainted process sends a datagram to the agent's port and waits for the reply.
 * Blocks it: the cgroup sendmsg4 hook / egress program judge the reply's destination. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (atk_try(c, "bind udp 127.0.0.1", fd < 0 ? -1 : bind(fd, (struct sockaddr *)&sa, sizeof(sa))) < 0)
        return 0;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    pid_t pid = fork();
    if (pid == 0) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        char b[64];
        struct sockaddr_in from;
        socklen_t fl = sizeof(from);
        if (poll(&pf, 1, 5000) == 1 && recvfrom(fd, b, sizeof(b), 0, (struct sockaddr *)&from, &fl) > 0)
            atk_try(c, "reply sendto", sendto(fd, c->secret, strlen(c->secret), 0, (struct sockaddr *)&from, fl));
        _exit(0);
    }
    char tag[32];
    snprintf(tag, sizeof(tag), "%d", ntohs(sa.sin_port));
    atk_sync(c, tag);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    sa.sin_port = htons((uint16_t)atoi(tag));
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || sendto(fd, "?", 1, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        return;
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    char b[256];
    ssize_t n;
    if (poll(&pf, 1, 1500) == 1 && (n = recv(fd, b, sizeof(b), 0)) > 0 && atk_buf_has(b, (size_t)n, c->canary))
        atk_evidence(c, "outsider pulled the canary from the agent's UDP port %s", tag);
    close(fd);
}

static const struct atk A = {
    "udp_reply", "UDP server after the taint answers an outsider", 0, NULL, agent, on_sync, NULL, NULL};
ATK_MAIN(A)
