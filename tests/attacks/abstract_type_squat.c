// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* abstract_type_squat - an outsider's abstract UNIX socket with exactly an allowed sink's name,
 * but another socket type. The admin registered the abstract sink "@mnc-atk-abt-PID" (`mncctl
 * kern sink add unix`) as the tool sink abs_tool, and the disclosure's contract (abs_tool_scope)
 * lets the agent reach it; the tool is running: a datagram socket bound to that name. The kernel
 * keeps abstract names per socket type (net/unix/af_unix.c: unix_abstract_hash mixes the type
 * into the bucket, and a lookup compares name and length only within that bucket), so an
 * outsider can bind a STREAM and a SEQPACKET listener to the very same name while the tool holds
 * it. The sink key (struct mnc_unix_key: name and length) has no type: connect(SOCK_STREAM) to
 * the tool's name is keyed as the tool and reaches the outsider.
 * Verifier: the outsider's stream and seqpacket listeners (accepted and read after the agent
 * exited); what the datagram tool receives is allowed and not evidence.
 * Blocks it: Landlock's abstract-socket scope, where the kernel has it (ABI >= 6: every abstract
 * socket outside the agent's domain, the real tool's too); without it (the lsm backend on 6.1,
 * which keys peers by their bound name, and the cgroup backend's hooks), nothing in the key. */
#include <fcntl.h>
#include <stddef.h>
#include <sys/un.h>

#include "atk_variants.h"

static const int types[3] = {SOCK_DGRAM, SOCK_STREAM, SOCK_SEQPACKET}; /* [0] is the real tool */
static const char *const tname[3] = {"dgram (the tool)", "stream", "seqpacket"};

static int prepare(struct atk_ctx *c)
{
    char name[64];
    if (atkv_abs_tool_begin(c, 3, name, sizeof(name)) < 0)
        return -1;
    for (int i = 0; i < 3; i++) {
        struct sockaddr_un sa;
        socklen_t len = atkv_abs_addr(&sa, name, 1 + strlen(name));
        int fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) < 0 || (i > 0 && listen(fd, 8) < 0)) {
            snprintf(c->notes, sizeof(c->notes), "bind the %s socket to @%s: %s", tname[i], name, strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        c->fdslot[i] = fd;
    }
    return 0;
}

static int agent(struct atk_ctx *c)
{
    const char *name = atk_arg(c, "abs");
    if (!name)
        return 0;
    struct sockaddr_un ta;
    socklen_t tlen = atkv_abs_addr(&ta, name, 1 + strlen(name));
    int tfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (tfd >= 0) {
        /* the allowed flow (the tool), noted so a block by Landlock's scope shows as such */
        atk_try(c, "sendto the dgram tool (allowed)", sendto(tfd, "x", 1, 0, (struct sockaddr *)&ta, tlen));
        close(tfd);
    }
    for (int i = 1; i < 3; i++) {
        struct sockaddr_un sa;
        socklen_t len = atkv_abs_addr(&sa, name, 1 + strlen(name));
        int fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        char what[64];
        snprintf(what, sizeof(what), "connect %s to the tool's name", tname[i]);
        if (atk_try(c, what, connect(fd, (struct sockaddr *)&sa, len)) == 0) {
            snprintf(what, sizeof(what), "send on the %s connection", tname[i]);
            atk_try(c, what, send(fd, c->secret, strlen(c->secret), MSG_NOSIGNAL));
        }
        close(fd);
    }
    return 0;
}

static void verify(struct atk_ctx *c)
{
    if (!c->slot[0])
        return;
    for (int i = 1; i < 3; i++) {
        int cfd;
        while (c->fdslot[i] >= 0 && (cfd = accept4(c->fdslot[i], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
            char buf[512];
            ssize_t r;
            while ((r = recv(cfd, buf, sizeof(buf), 0)) > 0)
                if (atk_buf_has(buf, (size_t)r, c->canary))
                    atk_evidence(c, "the outsider's %s listener on the tool's abstract name received the canary",
                                 tname[i]);
            close(cfd);
        }
    }
}

static void cleanup(struct atk_ctx *c) { atkv_abs_tool_end(c, 3); }

static const struct atk A = {"abstract_type_squat",
                             "an outsider's stream/seqpacket socket on a running dgram tool's abstract name",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
