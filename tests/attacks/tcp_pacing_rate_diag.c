// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tcp_pacing_rate_diag - socket state the kernel shows every user, set by an option seccomp
 * allows: setsockopt(SOL_SOCKET, SO_MAX_PACING_RATE) takes any 64-bit value (8 bytes chosen by
 * the agent), and sock_diag (NETLINK_SOCK_DIAG, no privilege: what `ss -ti` reads) reports it
 * as tcp_info.tcpi_max_pacing_rate (and tcpi_pacing_rate) for every TCP socket in the
 * namespace, listeners included. A SERVER agent (`mncctl run --server`, listen allowed) opens
 * two listeners on 127.0.0.1 before its recv (a tainted agent's bind is refused) and after it stores one index byte and 7 canary bytes in
 * each one's max pacing rate; nothing is ever sent.
 * Verifier: uid 65534 dumps the TCP listeners over NETLINK_SOCK_DIAG (INET_DIAG_INFO) while the
 * agent waits (sync "set") and reassembles the chunks.
 * Blocked by: cgroup/setsockopt (lsm: socket_setsockopt) refuses a tainted agent every option
 * but a few switches and timeouts whose value no dump reports (mnc_sockopt_verdict in
 * bpf/mnc_abi.h; reason deny_sockopt): SO_MAX_PACING_RATE gets EPERM. What is left of the class
 * (a server's listen backlog, queue lengths, which sockets exist) is in docs/threat-model.md. */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <grp.h>
#include <sys/wait.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>

#include "atk.h"

#define PACE_CHUNK 7

static int agent(struct atk_ctx *c)
{
    /* the listeners are made before the recv (a tainted server's bind is refused): two, enough
     * for the 14-byte canary */
    int ls[2] = {-1, -1};
    for (int i = 0; i < 2; i++) {
        int s = (int)atk_try(c, "socket tcp", socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (s < 0 || atk_try(c, "bind 127.0.0.1:0 (before the recv)", bind(s, (struct sockaddr *)&a, sizeof(a))) < 0 ||
            atk_try(c, "listen (before the recv)", listen(s, 1)) < 0)
            continue;
        ls[i] = s;
    }
    atk_recv(c);
    size_t n = strlen(c->secret);
    for (size_t off = 0, i = 0; off < n && i < 2; off += PACE_CHUNK, i++) {
        unsigned char b[8] = {(unsigned char)(0xa0 + i)};
        memcpy(b + 1, c->secret + off, n - off < PACE_CHUNK ? n - off : PACE_CHUNK);
        uint64_t v;
        memcpy(&v, b, sizeof(v));
        if (ls[i] >= 0)
            atk_try(c, "setsockopt SO_MAX_PACING_RATE",
                    setsockopt(ls[i], SOL_SOCKET, SO_MAX_PACING_RATE, &v, sizeof(v)));
    }
    atk_sync(c, "set"); /* the sockets stay open until the agent exits */
    return 0;
}

/* uid 65534: the max pacing rates of every TCP listener (AF_INET), as 8 raw bytes each, into
 * out (up to cap); the number of bytes, or -1. */
static ssize_t dump_rates(unsigned char *out, size_t cap)
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
              .sdiag_protocol = IPPROTO_TCP,
              .idiag_ext = 1 << (INET_DIAG_INFO - 1),
              .idiag_states = 1 << 10 /* TCP_LISTEN */}};
    if (send(s, &req, sizeof(req), 0) != (ssize_t)sizeof(req)) {
        close(s);
        return -1;
    }
    static char buf[1 << 16];
    size_t got = 0;
    for (;;) {
        ssize_t r = recv(s, buf, sizeof(buf), 0);
        if (r <= 0)
            break;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)r); h = NLMSG_NEXT(h, r)) {
            if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
                close(s);
                return (ssize_t)got;
            }
            struct inet_diag_msg *m = NLMSG_DATA(h);
            int alen = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
            for (struct rtattr *at = (struct rtattr *)(m + 1); RTA_OK(at, alen); at = RTA_NEXT(at, alen)) {
                if (at->rta_type != INET_DIAG_INFO || RTA_PAYLOAD(at) < sizeof(struct tcp_info))
                    continue;
                struct tcp_info ti;
                memcpy(&ti, RTA_DATA(at), sizeof(ti));
                if (got + 8 <= cap) {
                    memcpy(out + got, &ti.tcpi_max_pacing_rate, 8);
                    got += 8;
                }
            }
        }
    }
    close(s);
    return (ssize_t)got;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "set") != 0)
        return;
    int p[2];
    if (pipe(p) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
            _exit(1);
        static unsigned char rates[1 << 14];
        ssize_t n = dump_rates(rates, sizeof(rates));
        char msg[64] = {0};
        /* reassemble: chunk i carries 0xa0+i and 7 bytes */
        for (int i = 0; i < 8; i++)
            for (ssize_t k = 0; k + 8 <= n; k += 8)
                if (rates[k] == 0xa0 + i)
                    memcpy(msg + i * PACE_CHUNK, rates + k + 1, PACE_CHUNK);
        ssize_t w = write(p[1], msg, sizeof(msg) - 1);
        _exit(w < 0);
    }
    close(p[1]);
    char got[64] = {0};
    ssize_t r = pid > 0 ? read(p[0], got, sizeof(got) - 1) : -1;
    close(p[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    if (r > 0 && strstr(got, c->canary))
        atk_evidence(c, "uid 65534 read the canary from the max pacing rates of the agent's TCP listeners "
                        "(NETLINK_SOCK_DIAG, tcp_info)");
}

static const struct atk A = {"tcp_pacing_rate_diag",
                             "64-bit SO_MAX_PACING_RATE values of TCP listeners, read through sock_diag",
                             ATK_SERVER | ATK_NO_RECV,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             NULL};
ATK_MAIN(A)
