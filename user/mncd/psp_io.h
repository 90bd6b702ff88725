/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* psp_io.h - moving privsep messages (privsep.h) over a SOCK_SEQPACKET socket, and the
 * monitor's end of the conversation (docs/privsep.md, "The protocol").
 *
 * One message per sendmsg/recvmsg; fds ride along with SCM_RIGHTS. A message that does not fit
 * the receive buffer, or control data the kernel truncated, is an error (never half a message),
 * and every fd that came with a refused message is closed before the call returns.
 *
 * The monitor talks through a psp_client: psp_call sends a request and waits for its reply,
 * handing every notice (AUDIT, KEVENT, REG_ADD, REG_DEL, RESET, REG_SOURCE) that arrives before it
 * (and the SINKFDs of SEAL's answer) to the client's notice function, in order. Anything out of protocol (EOF, a message
 * psp_check_reply refuses, a reply to no pending request) breaks the client for good: every
 * later call fails, and the monitor must stop delivering (fail closed: no delivery without a
 * hold).
 */
#ifndef MNCD_PSP_IO_H
#define MNCD_PSP_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "privsep.h"

/* An aligned receive buffer for one message. */
typedef union psp_buf {
    struct psp_hdr h;
    uint64_t align;
    char b[PSP_MAX_MSG];
} psp_buf;

/* socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC). 0 or -errno. */
int psp_pair(int sv[2]);

/* Sends one message (its header's len bytes) with nfds fds (0..PSP_MAX_FDS). nonblock: fail
 * with -EAGAIN instead of waiting for room. 0, or -errno (-EPIPE: the peer is gone). */
int psp_send(int fd, const void *msg, const int *fds, int nfds, bool nonblock);

/* Receives one message into buf. Returns its length (> 0), 0 at EOF, -EAGAIN (nonblock and
 * nothing there), -EMSGSIZE (longer than PSP_MAX_MSG, or more than PSP_MAX_FDS fds: the message
 * is dropped whole and every fd that came with it closed), or another -errno. fds[] gets the fds that came with it
 * (close-on-exec), *nfds their number. */
ssize_t psp_recv(int fd, psp_buf *buf, int fds[PSP_MAX_FDS], int *nfds, bool nonblock);

/* Closes n fds (the ones a refused message brought). */
void psp_close_fds(const int *fds, int n);

/* A notice: msg (checked by psp_check_reply), and fd, the one fd that came with it (SINKFD) or
 * -1. The function owns fd. */
typedef void (*psp_notice_fn)(void *arg, const void *msg, int fd);

typedef struct psp_client {
    int fd;
    uint32_t seq;
    uint32_t n_principals; /* of the sealed configuration (0 before: ids unchecked) */
    psp_notice_fn notice;  /* may be NULL: notices are dropped */
    void *arg;
    bool broken;
    char err[320]; /* why it broke */
} psp_client;

void psp_client_init(psp_client *c, int fd, psp_notice_fn notice, void *arg);

/* Sends req (its header's seq is set here) and waits for the reply, dispatching notices that
 * come first. reply: where the reply goes; fds/nfds (may be NULL: fds are then refused) get the
 * reply's fds. Returns the reply's type (PSP_REFUSED is a reply like any other), or -errno with
 * c->broken set and c->err saying why. */
int psp_call(psp_client *c, void *req, psp_buf *reply, int fds[PSP_MAX_FDS], int *nfds);

/* Sends a request that gets no reply (CONFIG, PRINCIPAL, IDMAP, REG_BEGIN, REG_PATH). 0, or
 * -errno (broken). */
int psp_tell(psp_client *c, void *req);

/* Handles the notices waiting on c->fd without blocking (its epoll said readable). 0, or
 * -errno (broken; a reply with no pending request is out of protocol). buf: scratch space. */
int psp_drain(psp_client *c, psp_buf *buf);

#endif
