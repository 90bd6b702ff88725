// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* abstract_trailing_nul - an outsider's abstract UNIX socket whose name is an allowed sink's name
 * plus NUL bytes. The admin registered the abstract sink "@mnc-atk-abs-PID" (`mncctl kern sink
 * add unix`) as the tool sink abs_tool, and the disclosure's contract (abs_tool_scope) lets the
 * agent reach it. An outsider binds "\0mnc-atk-abs-PID\0" and the same name zero padded to the
 * whole sun_path: two other sockets to the kernel (unix(7): an abstract name is addrlen bytes),
 * which a key of the name's bytes alone would take for the registered sink.
 * Verifier: the outsider's two datagram sockets.
 * Blocks it: the UNIX key carries an abstract name's length (struct mnc_unix_key.alen), in the
 * cgroup hooks, the LSM hooks and mncd's sweep; Landlock's abstract-socket scope too, where
 * the kernel has it (ABI >= 6). */
#include <fcntl.h>
#include <stddef.h>
#include <sys/un.h>

#include "atk_variants.h"

/* sockaddr for the abstract name "\0" + name, n bytes of sun_path in all (n > strlen(name)):
 * the bytes past the name are NULs. Returns the address length. */
static const size_t pads[2] = {1, 0}; /* name + one NUL; name zero padded to all of sun_path */

static size_t pad_len(const char *name, int i)
{
    return pads[i] ? 1 + strlen(name) + pads[i] : sizeof(((struct sockaddr_un *)0)->sun_path);
}

static int prepare(struct atk_ctx *c)
{
    char name[64];
    if (atkv_abs_tool_begin(c, 2, name, sizeof(name)) < 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        struct sockaddr_un sa;
        socklen_t len = atkv_abs_addr(&sa, name, pad_len(name, i));
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) < 0) {
            snprintf(c->notes, sizeof(c->notes), "bind the outsider's abstract socket: %s", strerror(errno));
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
    for (int i = 0; i < 2; i++) {
        struct sockaddr_un sa;
        socklen_t len = atkv_abs_addr(&sa, name, pad_len(name, i));
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd >= 0) {
            atk_try(c, i == 0 ? "sendto name+NUL" : "sendto name padded to 108",
                    sendto(fd, c->secret, strlen(c->secret), 0, (struct sockaddr *)&sa, len));
            close(fd);
        }
    }
    return 0;
}

static void verify(struct atk_ctx *c)
{
    for (int i = 0; i < 2; i++) {
        char buf[512];
        ssize_t r;
        while (c->slot[0] && c->fdslot[i] >= 0 && (r = recv(c->fdslot[i], buf, sizeof(buf), 0)) > 0)
            if (atk_buf_has(buf, (size_t)r, c->canary))
                atk_evidence(c, "the outsider's abstract socket %s received the canary",
                             i == 0 ? "name+NUL" : "name padded to 108 bytes");
    }
}

static void cleanup(struct atk_ctx *c) { atkv_abs_tool_end(c, 2); }

static const struct atk A = {"abstract_trailing_nul",
                             "an outsider's abstract name = an allowed abstract sink's name plus NULs",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
