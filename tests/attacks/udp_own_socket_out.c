// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_own_socket_out - the egress hook's "same agent" loopback rule, with the receiving socket
 * handed to an outsider. Before its recv the agent (untainted) makes two UDP sockets on
 * 127.0.0.1 and connects them to each other (connect() autobinds: no bind(2)); it hands B to an
 * outsider (uid 65534, DIR/uo.sock) and closes its copy, keeping A. After the taint it send()s
 * the canary on A: a connected socket's send carries no address, so no sock_addr hook runs;
 * cgroup_skb/egress finds the destination unregistered on lo, looks the receiving socket up
 * (bpf_sk_lookup_udp), sees it was created in the agent's own cgroup and lets the packet go
 * ("between processes of the same agent"). The sweep leaves the agent's own UDP sockets to
 * egress (sockjudge.c: UDP is judged per packet), and the fd scan looks for outsiders holding
 * objects the agent holds (A), not for sockets created in the agent's cgroup held elsewhere (B).
 * Verifier: the outsider reads what arrived on B after the agent exited and hands it over.
 * What would block it: egress (and the sweep's local-peer rule) deciding "same agent" by who
 * holds the receiving socket now, not by the cgroup that created it; or the fd scan refusing a
 * delivery while a socket created in the agent's cgroup is held outside it (the sweep can list
 * them: sock_diag INET_DIAG_CGROUP_ID), as it does for the agent's own fds. The lsm backend
 * blocks it (socket_sendmsg refuses the fd passed out, and judges the tainted sender, not the
 * socket's creator): a known limit of the cgroup backend ([limit:cgroup]; docs/threat-model.md,
 * "Open byte channels", the fds-passed-out row). Since mncd's sweep disconnects a tainted
 * agent's own datagram sockets connected to a peer its taint disallows (an unregistered one
 * here), this UDP instance ends at send(A): EDESTADDRREQ; the class stays open on the cgroup
 * backend (a TCP connection between two sockets made in the agent's cgroup, one end handed out,
 * is still "same agent" to egress and the sweep), so the flag stays. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/un.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int b = atkv_keeper_take_one(l);
    char x;
    if (read(cmd, &x, 1) != 1)
        _exit(0);
    char buf[512];
    ssize_t r;
    while ((r = recv(b, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
        if (write(ans, buf, (size_t)r) != r)
            _exit(1);
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    char k[700];
    snprintf(k, sizeof(k), "%s/uo.sock", c->dir);
    atk_set(c, "uo", "%s", k);
    return atkv_keeper_start(c, k, outsider, "1 drop to 65534, 2 listen, 3 take the fd");
}

static int lo_connect(int s, unsigned short port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return connect(s, (struct sockaddr *)&sa, sizeof(sa));
}

static unsigned short port_of(int s)
{
    struct sockaddr_in sa;
    socklen_t l = sizeof(sa);
    return getsockname(s, (struct sockaddr *)&sa, &l) == 0 ? ntohs(sa.sin_port) : 0;
}

static int agent(struct atk_ctx *c)
{
    int a = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), b = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (atk_try(c, "two UDP sockets", a < 0 || b < 0 ? -1 : 0) < 0)
        return 0;
    /* autobind A (any address will do), then connect B to A and A to B */
    if (atk_try(c, "connect A (autobind)", lo_connect(a, 9)) < 0 ||
        atk_try(c, "connect B to A", lo_connect(b, port_of(a))) < 0 ||
        atk_try(c, "connect A to B", lo_connect(a, port_of(b))) < 0)
        return 0;
    int s = (int)atk_try(c, "connect the outsider (untainted)", atk_unix(SOCK_STREAM, atk_arg(c, "uo")));
    if (s < 0 || atk_try(c, "hand B out (SCM_RIGHTS)", atk_send_fds(s, 'U', &b, 1)) < 0)
        return 0;
    char x;
    atk_try(c, "outsider's ack", read(s, &x, 1) == 1 ? 0 : -1);
    close(b);
    close(s);
    atk_recv(c); /* tainted now; we hold A only */
    atk_try(c, "send(A) the canary", send(a, c->secret, strlen(c->secret), 0));
    usleep(100000);
    close(a);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the outsider received the canary on the agent-made UDP socket it was handed");
}

static void cleanup(struct atk_ctx *c) { atkv_keeper_cleanup(c); }

static const struct atk A = {"udp_own_socket_out",
                             "egress's same-agent loopback rule, the receiving UDP socket handed to an outsider",
                             ATK_NO_RECV | ATK_LIMIT_CGROUP,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
