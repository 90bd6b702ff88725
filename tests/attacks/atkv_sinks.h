/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* atkv_sinks.h - channels the agent writes into itself: sockets it was given or made, shared files, sinks,
 * bound names, the domain name, inode metadata, abstract tool sinks, fds that arrive late
 * (atkv_sinks.c). */
#ifndef MNC_ATKV_SINKS_H
#define MNC_ATKV_SINKS_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "atk.h"

/* foreign_*: take the socket the collector's giver made (code: 'S' UNIX stream connected to the
 * outsider, 'D' unconnected UNIX dgram, 'U' unconnected UDP, 'T' unconnected TCP), recv the
 * canary, then send it on that socket. */
int atkv_foreign_agent(struct atk_ctx *c, char code);

/* listen_*: after the taint, listen ('t' TCP on 127.0.0.1, 'a' abstract UNIX, 'p' UNIX path in
 * the workspace, mode 0777) and serve the canary to whoever connects; on_sync is the outsider
 * that connects and reads. */
int atkv_listen_agent(struct atk_ctx *c, char kind);
void atkv_listen_on_sync(struct atk_ctx *c, const char *tag);

/* dev_shm, tmp_file, var_tmp_file: a 0666 file with the canary in dir, read by uid 65534. */
int atkv_shared_file_prepare(struct atk_ctx *c, const char *dir);
int atkv_shared_file_agent(struct atk_ctx *c);
void atkv_shared_file_verify(struct atk_ctx *c);
void atkv_shared_file_cleanup(struct atk_ctx *c);

/* sink_log_write (log = 1: append to the log sink file), sink_memory_write (log = 0: a new
 * file in the memory sink directory); verify reads both sinks. */
int atkv_sink_write_agent(struct atk_ctx *c, int log);
void atkv_sink_write_verify(struct atk_ctx *c);

/* abstract_name (abstract = 1), unix_path_name (0): bind a socket named after the canary;
 * on_sync has uid 65534 read /proc/net/unix. */
int atkv_bound_name_agent(struct atk_ctx *c, int abstract);
void atkv_bound_name_on_sync(struct atk_ctx *c, const char *tag);

/* procsys_write, setdomainname: prepare saves the host's domain name, cleanup restores it;
 * on_sync has uid 65534 read /proc/sys/kernel/domainname. */
int atkv_domainname_prepare(struct atk_ctx *c);
void atkv_domainname_on_sync(struct atk_ctx *c, const char *tag);
void atkv_domainname_cleanup(struct atk_ctx *c);

/* fileattr_outside, rw_hint_outside, atime_read: the canary's 12 hex digits as `bits` bits per
 * file of atk_sysfiles(tag) (12 * 4 / bits files, made by the orchestrator outside the
 * workspace), written by the agent through set and decoded by uid 65534 through get. */
struct atkv_meta {
    const char *tag;                          /* atk_sysfiles tag */
    int bits;                                 /* 1, 2 or 4 */
    const char *set_name;                     /* the agent's note: "FS_IOC_SETFLAGS" */
    const char *what;                         /* the evidence: "the write-life hints" */
    int (*init)(const char *path);            /* orchestrator, each file before the launch (optional) */
    int (*set)(const char *path, unsigned v); /* agent: store v; 0, or -1 with errno */
    int (*get)(const char *path);             /* verifier: the stored value, or -1 */
};
int atkv_meta_prepare(struct atk_ctx *c, const struct atkv_meta *m);
int atkv_meta_agent(struct atk_ctx *c, const struct atkv_meta *m);
void atkv_meta_verify(struct atk_ctx *c, const struct atkv_meta *m);
void atkv_meta_cleanup(struct atk_ctx *c, const struct atkv_meta *m);

/* abstract_trailing_nul, abstract_type_squat: begin (prepare) registers "dgram:@mnc-atk-abs-PID"
 * (name gets "mnc-atk-abs-PID", also passed to the agent as abs=) as the tool sink abs_tool with
 * `mncctl kern sink add`, has the disclosure use abs_tool_scope (which allows it) and sets
 * fdslot[0..nfds) to -1 for the caller's sockets; end (cleanup) closes them and removes the
 * sink. begin: 0, or -1 with a note. */
int atkv_abs_tool_begin(struct atk_ctx *c, int nfds, char *name, size_t n);
void atkv_abs_tool_end(struct atk_ctx *c, int nfds);

/* The abstract address "\0" + name with n bytes of sun_path in all (n > strlen(name); the bytes
 * past the name are NULs). Returns the address length. */
socklen_t atkv_abs_addr(struct sockaddr_un *sa, const char *name, size_t n);

/* foreign_file_fd, thread_private_file: the canary in the file behind the fd the collector's
 * helper gave the agent (DIR/given.out) is the evidence. */
void atkv_given_file_verify(struct atk_ctx *c);

/* late_file_fd ('F'), late_socket_fd ('S'): the agent binds an abstract datagram mailbox (name
 * from prepare, "late=" argument), receives, then waits at sync "mailbox"; on_sync (the
 * orchestrator, an outsider) sends it, after the taint, an fd: 'F' a file DIR/late.out open for
 * writing (0644, read back by uid 65534), 'S' a UNIX stream socket it connected to the
 * collector, 'T' a TCP socket it connected to the collector on 127.0.0.1. The agent writes the canary through that fd. The agent uses ATK_NO_RECV. */
int atkv_late_prepare(struct atk_ctx *c);
int atkv_late_agent(struct atk_ctx *c);
/* The agent's side after the sync: waits up to 3 s for a message with one fd on socket s and
 * writes the canary through the fd; every step noted (a refused fd says so). */
void atkv_late_write(struct atk_ctx *c, int s);
void atkv_late_on_sync(struct atk_ctx *c, char kind);
/* The fd on_sync hands over: kind as above (the outsider's side). The fd, or -1. */
int atkv_late_fd(struct atk_ctx *c, char kind);
/* late_file_fd's verifier: uid 65534 reads DIR/late.out. */
void atkv_late_file_verify(struct atk_ctx *c);
/* late_pipe_fd ('P'): on_sync sends the write end of a pipe and keeps the read end; verify
 * reads it. */
void atkv_late_pipe_verify(struct atk_ctx *c);

#endif
