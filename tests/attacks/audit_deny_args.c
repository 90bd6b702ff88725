// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* audit_deny_args - mncd's audit log as the way out, by refused syscalls alone: every argument a
 * tainted agent chooses in a call the kernel layer refuses spells the canary. The variants, all
 * in one run: connect() to a UNIX path and to an abstract name made of the canary (listeners the
 * orchestrator bound, so only the kernel refuses), connect and sendto to [fd00::<canary hex>]
 * (its 6 bytes in an IPv6 address), to 127.<b0>.<b1>.<b2> and 127.<b3>.<b4>.<b5> (bytes as IPv4
 * octets), TCP and UDP to three ports (its bytes as 16-bit numbers), raw sockets whose protocol
 * is each byte, and setsockopt() option names of each 16-bit pair. Before the rule of
 * docs/threat-model.md ("Records about agents") the kernel.deny records copied each of them
 * (the path, the name, 14 bytes of an IPv6 address, the ports).
 * Verifier: the operator's `mncctl audit tail 10000` (what a log shipper of audit.jsonl
 * forwards), decoded every way atkv_spelled knows: the canary as text, its hex digits inside
 * any word or address, its bytes as six numbers or three 16-bit numbers in a row.
 * What blocks it: a record names an agent's value only by a keyed token, salted afresh. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "atk.h"
#include "atk_variants.h"

static unsigned char byte_at(const char *secret, int i)
{
    unsigned v = 0;
    if (sscanf(secret + 2 + 2 * i, "%2x", &v) != 1)
        v = 0;
    return (unsigned char)v;
}

static int listen_path(const char *path, int abstract)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    socklen_t l;
    if (abstract) {
        a.sun_path[0] = 0;
        snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "%s", path);
        l = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(path));
    } else {
        snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
        l = sizeof(a);
    }
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || bind(s, (struct sockaddr *)&a, l) < 0 || listen(s, 64) < 0)
        return -1;
    if (!abstract)
        chmod(path, 0777);
    return s;
}

static int prepare(struct atk_ctx *c)
{
    char p[700];
    snprintf(p, sizeof(p), "%s/%s", c->dir, c->canary);
    c->fdslot[0] = listen_path(p, 0);
    c->fdslot[1] = listen_path(c->canary, 1);
    atk_set(c, "upath", "%s", p);
    return c->fdslot[0] >= 0 && c->fdslot[1] >= 0 ? 0 : -1;
}

static void cleanup(struct atk_ctx *c)
{
    for (int i = 0; i < 2; i++)
        if (c->fdslot[i] > 0)
            close(c->fdslot[i]);
}

static int agent(struct atk_ctx *c)
{
    const char *s = c->secret;
    unsigned char b[6];
    for (int i = 0; i < 6; i++)
        b[i] = byte_at(s, i);
    int u = atk_unix(SOCK_STREAM, atk_arg(c, "upath"));
    atk_note(c, "connect unix <dir>/<canary>: %s", u >= 0 ? "OK" : atk_errname(errno));
    if (u >= 0)
        close(u);
    char ab[300];
    snprintf(ab, sizeof(ab), "@%s", s);
    u = atk_unix(SOCK_STREAM, ab);
    atk_note(c, "connect abstract @<canary>: %s", u >= 0 ? "OK" : atk_errname(errno));
    if (u >= 0)
        close(u);
    char a6[64], a4a[32], a4b[32];
    snprintf(a6, sizeof(a6), "fd00::%.4s:%.4s:%.4s", s + 2, s + 6, s + 10);
    snprintf(a4a, sizeof(a4a), "127.%u.%u.%u", b[0], b[1], b[2]);
    snprintf(a4b, sizeof(a4b), "127.%u.%u.%u", b[3], b[4], b[5]);
    atk_inet(c, "tcp6 [fd00::<canary hex>]", AF_INET6, SOCK_STREAM, 0, a6, 9, 0);
    atk_inet(c, "udp6 [fd00::<canary hex>]", AF_INET6, SOCK_DGRAM, 0, a6, 9, 0);
    atk_inet(c, "tcp4 127.<b0.b1.b2>", AF_INET, SOCK_STREAM, 0, a4a, 9, 0);
    atk_inet(c, "tcp4 127.<b3.b4.b5>", AF_INET, SOCK_STREAM, 0, a4b, 9, 0);
    for (int i = 0; i < 3; i++) {
        int port = b[2 * i] << 8 | b[2 * i + 1];
        if (port == 0)
            port = 1;
        atk_inet(c, "tcp4 127.0.0.1:<2 bytes>", AF_INET, SOCK_STREAM, 0, "127.0.0.1", port, 0);
        atk_inet(c, "udp4 127.0.0.1:<2 bytes>", AF_INET, SOCK_DGRAM, 0, "127.0.0.1", port, 0);
        atk_inet(c, "tcp6 [::1]:<2 bytes>", AF_INET6, SOCK_STREAM, 0, "::1", port, 0);
    }
    for (int i = 0; i < 6; i++) {
        int r = b[i] ? socket(AF_INET, SOCK_RAW, b[i]) : -1;
        if (b[i])
            atk_note(c, "raw socket protocol <byte>: %s", r >= 0 ? "OK" : atk_errname(errno));
        if (r >= 0)
            close(r);
    }
    int so = socket(AF_INET, SOCK_DGRAM, 0);
    for (int i = 0; so >= 0 && i < 3; i++) {
        int one = 1, opt = b[2 * i] << 8 | b[2 * i + 1];
        atk_try(c, "setsockopt optname <2 bytes>", setsockopt(so, IPPROTO_IP, opt, &one, sizeof(one)));
    }
    if (so >= 0)
        close(so);
    return 0;
}

static void verify(struct atk_ctx *c)
{
    static const char *const tail[] = {"audit", "tail", "10000", NULL};
    atkv_admin_spelled(c, tail, "audit.out");
}

static const struct atk A = {"audit_deny_args",
                             "arguments of refused syscalls (UNIX path, abstract name, IPv4/IPv6 addresses, ports, "
                             "protocols, option names) in the audit log",
                             ATK_NO_CONTROL,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             cleanup};
ATK_MAIN(A)
