// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* outsider_uring_fds - memfd_shared, with the outsider keeping the memfd only as a registered
 * file of an io_uring of its own. Before its recv the agent (untainted: it may talk to anyone)
 * creates a memfd and passes it to an outsider (uid 65534, DIR/ou.sock). The outsider (not
 * confined: io_uring is refused to agents, not to others) sets up an io_uring, registers the
 * memfd as fixed file 0 (IORING_REGISTER_FILES) and closes its fd: the memfd is referenced by
 * the ring, in no fd table and no mapping. mncd's host scan (held_outside) reads /proc/PID/fd
 * and /proc/PID/maps; the ring shows there as one anon_inode fd. After the taint the agent
 * writes the canary into the memfd; the outsider reads it with IORING_OP_READ on the fixed file.
 * Verifier: the outsider, asked after the agent exited, reads the memfd through its ring.
 * Blocked by (lsm backend): socket_sendmsg refuses fds an agent, tainted or not, passes to a
 * socket made outside its cgroup (MNC_K_DENY_FDS_OUT). On the cgroup backend, where no hook
 * sees a message's control data: mncd's fd scan reads the fdinfo of every outside io_uring,
 * which names its registered files (seq_file_path: a memfd by its name, a pipe or socket by
 * inode), and finds the agent's memfd among them (held_outside; LEAKED there before, a known
 * limit of that backend). */
#include <fcntl.h>
#include <grp.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "atk_variants.h"

/* the outsider's io_uring (raw system calls: no liburing) */
struct ring {
    int fd;
    unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
};

static int ring_setup(struct ring *r)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof(p));
    r->fd = (int)syscall(__NR_io_uring_setup, 4, &p);
    if (r->fd < 0)
        return -1;
    size_t sl = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t cl = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    char *sq = mmap(NULL, sl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
    char *cq = mmap(NULL, cl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
    r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                   r->fd, IORING_OFF_SQES);
    if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
        return -1;
    r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
    r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    r->sq_array = (unsigned *)(sq + p.sq_off.array);
    r->cq_head = (unsigned *)(cq + p.cq_off.head);
    r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
    r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    return 0;
}

/* IORING_OP_READ of fixed file 0 at offset 0: bytes read, or -1 */
static long ring_read_fixed0(struct ring *r, char *buf, unsigned n)
{
    unsigned t = *r->sq_tail, i = t & *r->sq_mask;
    struct io_uring_sqe *e = &r->sqes[i];
    memset(e, 0, sizeof(*e));
    e->opcode = IORING_OP_READ;
    e->flags = IOSQE_FIXED_FILE;
    e->fd = 0;
    e->addr = (unsigned long)buf;
    e->len = n;
    e->off = 0;
    r->sq_array[i] = i;
    __atomic_store_n(r->sq_tail, t + 1, __ATOMIC_RELEASE);
    if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
        return -1;
    unsigned h = __atomic_load_n(r->cq_head, __ATOMIC_ACQUIRE);
    if (h == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
        return -1;
    long res = r->cqes[h & *r->cq_mask].res;
    __atomic_store_n(r->cq_head, h + 1, __ATOMIC_RELEASE);
    return res;
}

static void outsider(const struct atk_ctx *c, const char *path, int cmd, int ans)
{
    (void)c;
    int l = atkv_keeper_listen(path);
    atkv_keeper_nobody();
    struct ring r;
    if (ring_setup(&r) < 0)
        _exit(4);
    int s;
    int m = atkv_keeper_take_held(l, ans, &s);
    if (syscall(__NR_io_uring_register, r.fd, IORING_REGISTER_FILES, &m, 1) < 0)
        _exit(5);
    close(m);              /* only the ring refers to the memfd now */
    atkv_keeper_ack(s, l); /* the agent may go on */
    atkv_keeper_wait_asked(cmd);
    char buf[256];
    long n = ring_read_fixed0(&r, buf, sizeof(buf));
    atkv_keeper_answer(ans, buf, n > 0 ? (size_t)n : 0);
}

static int prepare(struct atk_ctx *c)
{
    return atkv_keeper_start_at(c, "ou", outsider,
                                "1 drop to 65534, 2 listen, 3 take the memfd, 4 io_uring_setup, 5 register");
}

static int agent(struct atk_ctx *c) { return atkv_memfd_out_agent(c, "ou", "outsider registered it in its io_uring"); }

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "the memfd an outsider keeps only as a registered file of its io_uring");
}

static const struct atk A = {"outsider_uring_fds",
                             "memfd passed out before the taint, kept only as an outsider io_uring's registered file",
                             ATK_NO_RECV,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
