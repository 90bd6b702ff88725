// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sockopt_shared - socket options of a socket shared with an outsider as storage. Before its
 * recv the agent (untainted: it may talk to anyone) creates an unnamed, unconnected UNIX
 * datagram socket and hands a copy of it to an outsider (uid 65534, DIR/so.sock), which keeps
 * it: one socket, two holders. It is the agent's own socket and leads nowhere (no name, no
 * peer), so mncd's sweep keeps it (an unconnected socket of the agent: a later connect or
 * sendto is hooked) and asks no one else about it; nothing is ever sent on it. After the taint
 * the agent stores the canary's 48 bits in SO_RCVTIMEO (tv_sec: the kernel keeps it in
 * jiffies, up to 2^63 / HZ seconds); the outsider reads them back with getsockopt on its copy.
 * SO_SNDTIMEO, SO_RCVLOWAT, SO_SNDBUF/SO_RCVBUF, SO_PEEK_OFF, IP_TTL/IP_TOS on IP sockets carry
 * more. A shutdown() by the sweep would not help either: options outlive it.
 * Verifier: the outsider, asked after the agent exited, reads SO_RCVTIMEO of its copy.
 * Blocks it: mncd's fd scan looks for every socket of the agent (any family, by its sockfs inode)
 * among the fds of processes outside the agent: the shared datagram socket is held_outside and
 * the delivery is refused. */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "atk_variants.h"

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    if (write(ans, "r", 1) != 1)
        _exit(1);
    int m = atkv_keeper_take_one(l);
    char x;
    if (read(cmd, &x, 1) != 1)
        _exit(0);
    struct timeval tv;
    socklen_t tl = sizeof(tv);
    if (getsockopt(m, SOL_SOCKET, SO_RCVTIMEO, &tv, &tl) < 0)
        _exit(1);
    char out[32];
    int n = snprintf(out, sizeof(out), "mk%012llx", (unsigned long long)tv.tv_sec);
    if (write(ans, out, (size_t)n) != n)
        _exit(1);
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    char k[700];
    snprintf(k, sizeof(k), "%s/so.sock", c->dir);
    atk_set(c, "so", "%s", k);
    return atkv_keeper_start(c, k, outsider, "1 drop to 65534, 2 listen, 3 take the socket");
}

static int agent(struct atk_ctx *c)
{
    int u = (int)atk_try(c, "socket AF_UNIX SOCK_DGRAM (unnamed, unconnected)",
                         socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    int s = (int)atk_try(c, "connect the outsider", atk_unix(SOCK_STREAM, atk_arg(c, "so")));
    if (u < 0 || s < 0)
        return 0;
    atk_try(c, "hand a copy of it to the outsider", atk_send_fds(s, 'L', &u, 1));
    char ack;
    atk_try(c, "outsider holds it", read(s, &ack, 1));
    close(s);
    atk_recv(c);
    struct timeval tv = {.tv_sec = (time_t)strtoull(c->secret + 2, NULL, 16), .tv_usec = 0};
    atk_try(c, "setsockopt SO_RCVTIMEO = canary bits", setsockopt(u, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
    sleep(1);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "SO_RCVTIMEO of the agent's socket, read by the outsider holding a copy");
}

static const struct atk A = {"sockopt_shared",
                             "socket options of an unconnected socket shared with an outsider",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
