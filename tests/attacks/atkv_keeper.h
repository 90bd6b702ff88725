/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* atkv_keeper.h - outsiders kept alive across a run (keepers, uid 65534): they hand the agent files,
 * sockets, pages and mappings of their own, or hold what the agent hands them
 * (atkv_keeper.c). */
#ifndef MNC_ATKV_KEEPER_H
#define MNC_ATKV_KEEPER_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "atk.h"

/* workspace_bind_mount, workspace_outsider_cwd, workspace_fd_in_flight, workspace_io_uring_file:
 * an outsider kept alive across the run. keeper_start forks fn(c, path, cmd, ans) with
 * /dev/null stdio and no other fds; fn drops to uid 65534 itself, keeps its reference to the
 * workspace, writes one byte to ans when ready, and after a byte on cmd writes what it read
 * through that reference to ans. keeper_verify asks it and records `evidence` if the canary
 * came back; keeper_cleanup kills it. start: 0, or -1 with c->notes set (hint: what the exit
 * statuses of fn mean, or NULL). */
typedef void (*atkv_keeper_fn)(const struct atk_ctx *c, const char *path, int cmd, int ans);
int atkv_keeper_start(struct atk_ctx *c, const char *path, atkv_keeper_fn fn, const char *hint);
void atkv_keeper_verify(struct atk_ctx *c, const char *evidence);
void atkv_keeper_cleanup(struct atk_ctx *c);
/* WS/shared as the outsider's own directory (uid 65534, 0777) into d; 0 or -1 (c->notes). */
int atkv_shared_dir(struct atk_ctx *c, char *d, size_t n);
/* The agent writes the canary into WS/shared/out.txt, 0644 (after chmod 0777 of WS/shared when
 * reopen is set: a directory the agent owned could be opened to others again). */
int atkv_shared_out_agent(struct atk_ctx *c, int reopen);
/* WS/notes.txt, 0666, made by root before the launch, path into f; 0 or -1 (c->notes). */
int atkv_notes_file(struct atk_ctx *c, char *f, size_t n);
/* The agent writes the canary into WS/notes.txt (O_WRONLY | O_TRUNC). */
int atkv_notes_agent(struct atk_ctx *c);

/* In a keeper (uid 65534 already): parks fd in flight in a socketpair of its own and closes it,
 * signals ready on ans, waits for the byte on cmd and returns the fd taken back from the queue;
 * exits (2 socketpair, 3 park, 4 take back) when a step fails. */
int atkv_keeper_park(int fd, int cmd, int ans);
/* In a keeper: a UNIX stream listener at path (0777, so the agent may connect); exit 2 if not. */
int atkv_keeper_listen(const char *path);
/* In a keeper: accepts one connection on l, takes one fd (SCM_RIGHTS), acknowledges with "A" and
 * closes the connection and l; exit 3 if a step fails. The fd. */
int atkv_keeper_take_one(int l);
/* In a keeper: reads what arrives on m into buf (cap bytes, NUL-terminated) until a byte or EOF
 * on cmd (the orchestrator's question); the number of bytes. */
size_t atkv_keeper_read_until_asked(int m, int cmd, char *buf, size_t cap);
/* In a keeper: drops to uid 65534 (exit 1 if it cannot). */
void atkv_keeper_nobody(void);
/* In a keeper: pread of what the file fd holds, written to ans; then exits. */
void atkv_keeper_hand_file(int got, int ans) __attribute__((noreturn));
/* workspace_hardlink, workspace_symlink: uid 65534 reads DIR/outside/shared, the outsider's file
 * behind WS/notes.txt. */
void atkv_outside_shared_verify(struct atk_ctx *c);
/* The agent creates WS/<canary> (its name is the payload). */
int atkv_canary_name_agent(struct atk_ctx *c);

/* vmsplice_page_out ('v'), splice_ws_page_out ('s'), sendfile_ws_page_out ('f'),
 * workspace_page_prelaunch ('p'), memfd_page_outsider ('m'): a pipe whose buffers reference
 * pages the agent writes after its taint. prepare makes WS/notes.txt (one page of 'x') and
 * starts a uid 65534 keeper that hands the write end of its pipe to the agent on DIR/kp.sock
 * (prelaunch = 0), or before the launch splices notes.txt's page into its pipe itself and closes
 * the file (1), or takes an fd on DIR/kp.sock, splices its first page into its pipe and closes
 * it (2). The agent fills the pipe (how: vmsplice of a page of its memory, splice or sendfile of
 * notes.txt; or passes out a one-page memfd), receives, then writes the canary into that page.
 * The keeper, asked after the agent exited, reads the pipe (atkv_keeper_verify). */
int atkv_page_prepare(struct atk_ctx *c, int prelaunch);
int atkv_page_agent(struct atk_ctx *c, char how);
/* A whole page attack: its prepare (PRELAUNCH as above), agent (HOW), verifier (EVIDENCE is the
 * evidence line) and main. */
#define ATKV_PAGE_ATTACK(NAME, CHANNEL, FLAGS, PRELAUNCH, HOW, EVIDENCE)                                               \
    static int prepare(struct atk_ctx *c) { return atkv_page_prepare(c, PRELAUNCH); }                                  \
    static int agent(struct atk_ctx *c) { return atkv_page_agent(c, HOW); }                                            \
    static void verify(struct atk_ctx *c) { atkv_keeper_verify(c, EVIDENCE); }                                         \
    static const struct atk A = {NAME, CHANNEL, ATK_NO_RECV | (FLAGS), prepare, agent,                                 \
                                 NULL, verify,  atkv_keeper_cleanup};                                                  \
    ATK_MAIN(A)

/* file_fd_own_queue, file_fd_nested_queue: the agent takes the helper's writable file fd, parks
 * it in its own socketpair's queue (prepare sets "nested": 1 parks it one queue deeper) across
 * the recv, takes it back and writes the canary through it. */
int atkv_own_queue_agent(struct atk_ctx *c);

/* preconnect_unix_backlog, late_fd_connected: prepare makes a listener DIR/lc.sock (0666, "lc=",
 * kept in fdslot[ATKV_BACKLOG_SLOT]) that nobody accepts on; the agent connects to it before its
 * recv, receives, and waits at sync "late"; the socket is returned (-1: failed, noted). */
#define ATKV_BACKLOG_SLOT 1
int atkv_backlog_prepare(struct atk_ctx *c);
int atkv_backlog_agent(struct atk_ctx *c);
void atkv_backlog_cleanup(struct atk_ctx *c);

/* mmap_shared_file, mmap_mprotect_file: prepare starts a keeper (uid 65534) that gives the agent
 * an O_RDWR fd on DIR/mm.out (one page) and keeps nothing open; the agent maps it MAP_SHARED
 * (writable, or read-only then mprotect'ed writable after the taint: mprotect_after), closes
 * the fd, receives, and stores the canary in the page. keeper_verify reads the file back. */
#define ATKV_PAGE 4096
int atkv_mmap_prepare(struct atk_ctx *c);
int atkv_mmap_agent(struct atk_ctx *c, int mprotect_after);

/* Keepers that hand the agent a file of their own, or hold one the agent handed them
 * (foreign_ptmx_fd, foreign_tty_ro_termios, foreign_devnull_ns, foreign_longpath_fd,
 * seccomp_addfd_in, seccomp_notify_out, mncd_conn_shared, netlink_route_shared,
 * outsider_thread_fds, outsider_uring_fds). keeper_start_at is keeper_start on the socket
 * DIR/<tag>.sock, also passed to the agent as "<tag>=". */
int atkv_keeper_start_at(struct atk_ctx *c, const char *tag, atkv_keeper_fn fn, const char *hint);
/* In a keeper: listens at path, drops to uid 65534, signals ready on ans and takes one fd
 * (atkv_keeper_take_one: acknowledged, connection and listener closed). The fd; exits as the
 * steps above (2 listen, 1 drop or ready, 3 take). */
int atkv_keeper_take_as_nobody(const char *path, int ans);
/* In a keeper: signals ready on ans, accepts one connection on l and takes one fd, leaving the
 * connection open in *s so the keeper acknowledges (atkv_keeper_ack) only once it has put the
 * fd where it wants it. The fd; exits 1 (ready) or 3 (accept, take). */
int atkv_keeper_take_held(int l, int ans, int *s);
/* In a keeper: writes the acknowledgement "A" on s (the agent may go on) and closes s and l;
 * exits 3 if the write fails. */
void atkv_keeper_ack(int s, int l);
/* In a keeper: signals ready on ans, accepts one connection on l, gives it fd (SCM_RIGHTS, 'F'),
 * closes fd unless keep (keep: the keeper reads it later), waits until the agent closes its
 * side, and closes the connection and l; exits 1 (ready) or 3 (accept, give, wait). */
void atkv_keeper_give_one(int l, int fd, int keep, int ans);
/* In a keeper (uid 65534 already): opens a pty master of its own (posix_openpt, O_NOCTTY),
 * unlocks it and opens its slave O_RDWR | O_NOCTTY into *sl. The master; exits 4 if a step
 * fails. */
int atkv_keeper_pty(int *sl);
/* In a keeper: waits for the orchestrator's question on cmd; exits 0 if it never comes (EOF). */
void atkv_keeper_wait_asked(int cmd);
/* In a keeper: writes buf[0..n) (nothing if n is 0) to ans as the answer and exits (0, or 1 if
 * the write fails). */
void atkv_keeper_answer(int ans, const void *buf, size_t n) __attribute__((noreturn));
/* In a keeper holding a seccomp user-notification listener lf: receives each notification and
 * calls fn(lf, req, arg), which must answer it (SECCOMP_IOCTL_NOTIF_SEND or _ADDFD), until a
 * byte or EOF on cmd (the orchestrator's question); a listener that hangs up (the agent is
 * gone) is no longer polled. Exits 1 if poll fails. */
struct seccomp_notif;
typedef void (*atkv_notif_fn)(int lf, const struct seccomp_notif *req, void *arg);
void atkv_keeper_serve_notifs(int lf, int cmd, atkv_notif_fn fn, void *arg);

/* The agent: connects to the keeper at atk_arg(c, tag) ("connect the outsider") and takes the
 * one fd it gives (noted as what); the connection is closed. The fd, or -1 (noted). */
int atkv_take_keeper_fd(struct atk_ctx *c, const char *tag, const char *what);
/* The agent: connects to the keeper at atk_arg(c, tag) ("connect the outsider"), hands it fd
 * (SCM_RIGHTS with code; noted as what), waits for its acknowledgement (noted as ack) and closes
 * the connection; the agent keeps its own fd. 0, or -1 if fd < 0 or the connect failed (fd is
 * not closed). */
int atkv_hand_to_keeper(struct atk_ctx *c, const char *tag, int fd, char code, const char *what, const char *ack);
/* The agent of seccomp_addfd_in, seccomp_notify_out: installs a seccomp filter that sends
 * getppid() to a user-notification listener (SECCOMP_FILTER_FLAG_NEW_LISTENER), hands the
 * listener to the keeper at atk_arg(c, tag) ('L'), closes its copy and receives (now tainted,
 * with no fd on the listener). 0, or -1 (noted; no recv) if a step before the recv failed. */
int atkv_seccomp_listener_out(struct atk_ctx *c, const char *tag);
/* The positive control of mncd_conn_shared, netlink_route_shared: the agent connects to the
 * keeper at atk_arg(c, tag), hands it one end of a socketpair of its own ('L'; the keeper reads
 * it), receives, writes before + canary + after in one write on the other end ("write it") and
 * gives the keeper a second to read it. Returns 0. */
int atkv_control_pair_agent(struct atk_ctx *c, const char *tag, const char *before, const char *after);
/* outsider_thread_fds, outsider_uring_fds: the agent creates a 4096-byte memfd, passes it to the
 * keeper at atk_arg(c, tag) ('M'; its acknowledgement noted as kept: where the keeper put it),
 * receives and pwrites the canary into the memfd. Returns 0. */
int atkv_memfd_out_agent(struct atk_ctx *c, const char *tag, const char *kept);
/* ip6_mcast_group, ip6_flowlabel: uid 65534 reads path (a /proc/net table that prints IPv6
 * addresses as 32 hex digits) and looks for the canary's bytes in lowercase hex. */
void atkv_nobody_reads_hex(struct atk_ctx *c, const char *path);

/* workspace_longpath_out, workspace_longpath_inotify: removes ws/name/name/... (depth levels) and
 * the entries of its deepest directory with relative unlinkat (a shell's rm cannot name paths
 * longer than PATH_MAX, e.g. busybox in the qemu guest). Best effort. */
void atkv_rm_deep(const char *ws, const char *name, int depth);

/* Orchestrator: forks an outsider that runs run(arg, out, ready) with stdio on /dev/null and no
 * other fd open (run writes one byte on ready once it watches, then its findings on out, and
 * never returns). Waits for that byte; the read end of out, non-blocking, goes to
 * c->fdslot[0] and the outsider's pid to c->slot[0]. 0, or -1 (the reason in c->notes). */
int atkv_watcher_start(struct atk_ctx *c, void (*run)(const char *arg, int out, int ready), const char *arg);
#endif
