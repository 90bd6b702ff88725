/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* atk_variants.h - shared bodies of the attacks that come in variants (atk_variants.c). Each
 * takes the variant; the attack file passes it and keeps its own name, channel line and
 * header comment (what it tries, how it is verified, what blocks it). */
#ifndef MNC_ATK_VARIANTS_H
#define MNC_ATK_VARIANTS_H

#include <stdint.h>
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

/* ws_launcher_msg, ws_taint_note_name, ws_taint_show_name: mncctl's own output as the way out.
 * atkv_mncctl runs $MNCCTL args... with stdin /dev/null, stderr (and stdout when stdout_too, else
 * /dev/null) into the file out: its pid, or -1. atkv_mncctl_run runs `mncctl run --agent
 * coordinator --workspace ws [--as-root in root mode] -- cmd...` that way (stderr only), as the
 * next launch would; atkv_mncctl_wait runs it and waits. */
pid_t atkv_mncctl(struct atk_ctx *c, const char *const *args, const char *out, int stdout_too);
pid_t atkv_mncctl_run(struct atk_ctx *c, const char *ws, const char *out, const char *const *cmd);
void atkv_mncctl_wait(pid_t pid);
/* The agent of ws_taint_*: makes WS/sub, syncs "b" (on_sync launches a second instance of the
 * agent on WS/sub that sleeps 6 s: mncd writes the taint record there at the recv), receives,
 * renames WS/sub to WS/<canary> (the record moves with it). In the positive control (untainted:
 * no record) it writes the record itself first. wait: reaps the second instance; cleanup: ends it. */
int atkv_taint_rename_agent(struct atk_ctx *c);
void atkv_taint_rename_on_sync(struct atk_ctx *c, const char *tag);
void atkv_taint_rename_wait(struct atk_ctx *c);
void atkv_taint_rename_cleanup(struct atk_ctx *c);

/* proc_limits, prlimit_outside: uid 65534 reads /proc/N/limits of every process and records
 * evidence if the hard limits "Max core file size" and `label2`, as 16 little-endian bytes,
 * start with the canary. For an on_sync hook. */
void atkv_limits_check(struct atk_ctx *c, const char *label2);

/* workspace_longpath_out, workspace_longpath_inotify: a directory fd on WS/d.../d... (depth
 * levels named with 200 'd's: the path is longer than a page), reached by relative opens; create:
 * make the directories first. The fd, or -1. */
int atkv_deep_dir(struct atk_ctx *c, int depth, int create);
/* In a keeper: listens on path, drops to uid 65534, says ready on ans, takes one fd from the
 * agent and returns it once the orchestrator asks (a byte on cmd; exits if none comes). */
int atkv_keeper_take_asked(const char *path, int cmd, int ans);

/* cgroup_thread_count, covert_sigq_uid: the outsider's side of a hex-digit channel through a
 * counter it reads (reading: a number as text; negative: unreadable). At sync "base" it keeps
 * the counter; at "dI" (I = 0..digits-1) the increase since the last reading is digit I; after
 * the last one the digits, as "mk%012llx", are compared with the canary (evidence: where it was
 * read). Uses c->slot[0..2]. */
void atkv_counter_digits(struct atk_ctx *c, const char *tag, const char *reading, int digits, const char *evidence);

/* stdin_file_offset, stdin_tty_termios: main() of an attack that also plays the caller of the
 * coordinator's `mncctl run` (prepare() points MNCCTL at the attack binary and names the real
 * one in the environment variable real_env): that call goes to wrap(argv) with argv[0] the real
 * mncctl, every other call to the real mncctl; the positive control's unconfined agent is
 * wrapped the same way once (inner_env marks the inner run). Anything else: atk_main. */
int atkv_wrap_main(const struct atk *a, int argc, char **argv, const char *real_env, const char *inner_env,
                   int (*wrap)(char **argv));

/* The sock_diag attacks (udp_sockmem_diag, udp_shutdown_*, tcp_pacing_rate_diag,
 * uring_setsockopt_diag): a NETLINK_SOCK_DIAG dump of every AF_INET socket of protocol proto in
 * the TCP states `states` (a bitmask; ~0u: all), with the extensions ext (bits 1 << (INET_DIAG_x
 * - 1)), as any user may make it. each(m, type, payload, n, arg) for every attribute of every
 * socket (m: its struct inet_diag_msg). The number of sockets, or -1. */
struct inet_diag_msg;
int atkv_diag_dump(int proto, unsigned ext, unsigned states,
                   void (*each)(const struct inet_diag_msg *m, int type, const void *p, size_t n, void *arg),
                   void *arg);
/* tcp_pacing_rate_diag, uring_setsockopt_diag: at sync "set", uid 65534 reads the max pacing rates
 * of every TCP listener and reassembles chunk i (first byte 0xa0 + i, then `chunk` bytes); evidence
 * if the canary is in it. */
void atkv_pacing_verify(struct atk_ctx *c, const char *tag, int chunk);

/* The lock attacks (getlk_outsider, proc_locks): a file every uid can open for reading, the same
 * for the agent and the outsider: /etc/hostname, or /bin/busybox where there is none (the qemu
 * guest's initramfs). */
const char *atkv_shared_file(void);

/* unix_pair_shutdown, unix_pair_rqlen: every established UNIX stream socket of the network
 * namespace as any user dumps it over NETLINK_SOCK_DIAG (unix_diag), with its peer's inode, its
 * receive queue length and its shutdown state (RCV 1, SEND 2), sorted by inode. At most cap into
 * out; the count, or -1. */
struct atkv_unix_sock {
    uint32_t ino, peer, rq;
    int sd;
};
int atkv_unix_streams(struct atkv_unix_sock *out, int cap);

/* udp_recvq_diag (when 'A'), udp_recvq_bound_before (when 'B'), udp_recvq_filled_before ('F'):
 * the tainted agent reads a secret-dependent number of the datagrams an outsider queued on its
 * autobound UDP sockets; uid 65534 reads the rest as /proc/net/udp rx_queue. `when` is when the
 * sockets get their port and their datagrams relative to the taint: 'A' both after, 'B' port
 * before and datagrams after, 'F' both before. */
int atkv_udp_recvq_agent(struct atk_ctx *c, char when);
void atkv_udp_recvq_on_sync(struct atk_ctx *c, const char *tag);

/* mncd_reply_rqlen, unix_dgram_rqlen_*, unix_stream_pretaint_rqlen: every UNIX socket of type
 * `type` in the network namespace as any user dumps it over NETLINK_SOCK_DIAG, with its name,
 * peer inode, receive-queue length (UNIX_DIAG_RQLEN: a stream's queued bytes, a datagram
 * socket's head datagram's length) and owner uid. At most cap into out; the count, or -1.
 * atkv_unix_diag_cmp orders them by inode (qsort). */
struct atkv_unix_diag {
    uint32_t ino, uid, rq, peer;
    int has_uid;
    char name[108];
    int namelen;
};
int atkv_unix_dump(int type, struct atkv_unix_diag *out, int cap);
int atkv_unix_diag_cmp(const void *a, const void *b);

/* The number the first line of file `path` matching scanf format `fmt` (one %ld) gives; -1 if
 * the file cannot be read or no line matches. For /proc fields ("SigQ: %ld/", "Uid: %ld"). */
long atkv_file_long(const char *path, const char *fmt);
/* "/proc/PID/<rel>" of the first process of the agent's uid (c->agent_uid > 0) in out; 0, or -1
 * when none is found (root mode, or the agent gone). Readable by any user for net/... files:
 * what an outsider learns about the agent's network namespace. */
int atkv_agent_proc_path(struct atk_ctx *c, const char *rel, char *out, size_t n);
/* Byte i of what a verifier decoded from watch w (bytes of c->slot[base + w]). */
void atkv_byte_set(struct atk_ctx *c, int base, int w, int i, unsigned v);
/* Evidence "uid 65534 read the canary from <what> in <where[w]>" for the first of nw watches
 * whose six bytes (atkv_byte_set) spell the canary's 12 hex digits. */
void atkv_bytes6_evidence(struct atk_ctx *c, int base, int nw, const char *what, const char *const *where);

/* cgroup_thread_count, cgroup_v1_tasks, cgroup_v1_move_back: the agent's side of the hex-digit
 * thread channel. Says sync "base", then for each of the canary's first `digits` hex digits adds
 * that many threads (parked on a pipe until the agent exits) and says sync "dI". Notes the
 * threads added. Returns 0. */
int atkv_thread_digits(struct atk_ctx *c, int digits);

/* The number of newlines in file p (a cgroup's tasks or cgroup.threads), or -1 if unreadable. */
long atkv_lines_of(const char *p);

/* cgroup_v1_tasks, cgroup_v1_move_back: the `tasks` file of the deepest cgroup v1 cgroup this
 * process is in, readable by it (/sys/fs/cgroup/<controller><path>/tasks). 0, or -1 when none
 * (a pure v2 host). */
int atkv_v1_tasks(char *out, size_t n);

/* ...and their verifier at sync `tag`: uid 65534 counts the lines of that file (the orchestrator's
 * own, which the launcher inherits) and hands the count to atkv_counter_digits. */
void atkv_v1_tasks_sync(struct atk_ctx *c, const char *tag, int digits);

/* netlink_route_shared, netlink_route_given: sends the kernel (port 0) on the netlink socket nl
 * an RTM_NEWLINK request carrying the canary, which an unprivileged sender gets refused, and the
 * refusal (NLMSG_ERROR, no NETLINK_CAP_ACK) quotes the whole request into nl's receive queue. */
void atkv_nl_newlink_canary(struct atk_ctx *c, int nl);

/* eventfd_shared, epoll_shared, timerfd_shared, pipe_given_away, epoll_watch_agent,
 * inotify_watch_agent: the canary's 12 hex digits as a 48-bit number (0 if it has none). */
unsigned long long atkv_canary_value(const char *canary);
/* The agent makes an object (make(): its fd, or -1 with errno; noted as what), hands it to the
 * keeper at atk_arg(c, tag) ('O'), keeps it, receives and calls use(c, fd) (now tainted).
 * Returns 0. */
int atkv_object_out_agent(struct atk_ctx *c, const char *tag, const char *what, int (*make)(void),
                          void (*use)(struct atk_ctx *c, int fd));
/* The one-bit-per-sync channels (epoll_watch_agent, inotify_watch_agent): the agent sets bit i
 * (the canary's value, most significant first) with set(fd, bit) and says sync "bI", 48 times.
 * In the keeper (after its setup): answers each byte on cmd with '1' or '0' from sample(fd)
 * until cmd closes. At the orchestrator's sync "bI": asks the keeper and, after the last bit,
 * compares what it decoded with the canary (evidence, else a note). Uses c->slot[1..2]. */
void atkv_bits_agent(struct atk_ctx *c, int fd, void (*set)(int fd, int bit));
void atkv_keeper_bits(int cmd, int ans, int fd, int (*sample)(int fd)) __attribute__((noreturn));
void atkv_bits_on_sync(struct atk_ctx *c, const char *tag, const char *evidence);

/* ---- data at rest (rest_*; docs/threat-model.md, "Data at rest"). Phase 1 (the tainted
 * coordinator) writes the canary into WS/notes.txt and WS/sub/deep.txt, says `sync written`
 * (the orchestrator links, mounts or moves what it wrote meanwhile: on_sync) and exits. Phase 2
 * (launched as c->launch2_*) reads the file at kv rest_path (and fd ATK_KEEP_FD with rest_fd=1,
 * or an fd the collector's giver opens on kv rest_give), says `sync read` when kv rest_sync2
 * is set (before reading), and tries to get what it read out: a UNIX stream and TCP to the
 * collector, and stdout. */
int atkv_rest_agent(struct atk_ctx *c);
/* prepare: phase 2 on the fresh workspace DIR/ws2 (the binary copied there) as agent (NULL:
 * coordinator), reading path (kv rest_path). 0 or -1. */
int atkv_rest_prepare(struct atk_ctx *c, const char *agent, const char *path);
/* DIR/name, made 0755 (a directory an outsider prepares for a grant). out gets the path. 0/-1. */
int atkv_rest_dir(struct atk_ctx *c, const char *name, char *out, size_t n);

/* Waits (up to 5 s) until mncd labelled path (the instance that wrote it exited and mncd saw
 * it go): for attacks that move data at rest after the exit. 0, or -1. */
int atkv_rest_wait_label(const char *path);

/* Phase 2's way out for what it read (c->secret): UNIX stream and TCP to the collector, stdout. */
void atkv_rest_out(struct atk_ctx *c, const char *what);
/* The first "mk" + 12 hex digits in buf (the canary's shape) into out: 1, or 0. */
int atkv_rest_find(const char *buf, size_t n, char *out, size_t outn);

/* ---- principals keep their names (restart_*; docs/threat-model.md). The attack runs its own
 * mncd (socket, state dir, pin root and cgroup tree of its own, the binary $ATK_MNCD, backend
 * $ATK_KERNEL) so that it can restart it on an edited policy while its agent runs tainted.
 * policy: the JSON text; "@CAL@" in it becomes the path of a UNIX listener the orchestrator
 * holds (a harmless in-scope sink) and "@OUT@" the collector's UNIX stream listener (where
 * nothing may arrive). start points MNC_SOCKET, MNC_PIN_ROOT, ATK_TREE and the agent's kv sock
 * at it. 0, or -1 with the reason in c->notes. */
int atkv_daemon_start(struct atk_ctx *c, const char *policy);
/* restart_*'s policies (a static buffer, used at once by the two calls below): agents in file
 * order ("worker,coordinator,bystander"), sinks in file order as NAME:CLASS:CAL or
 * NAME:CLASS:OUT (its address: the harmless listener, or the collector), the sink `in_scope`
 * that contract cal_scope (worker -> coordinator, what the agent holds) allows, and the issuers
 * of contract relay (-> bystander), comma-separated. */
const char *atkv_restart_policy(const char *agents, const char *sinks, const char *in_scope, const char *relay_issuers);
/* Stops it (SIGTERM, or SIGHUP for a reload in place with sighup) and starts it again on policy
 * with the same state dir and pins. 0 or -1. */
int atkv_daemon_restart(struct atk_ctx *c, const char *policy, int sighup);
/* The next (re)start uses a fresh state dir (the edited policy does not load the journal). */
void atkv_daemon_fresh_state(void);
/* Stops it and removes its pins, cgroups and listener (cleanup hook). */
void atkv_daemon_stop(struct atk_ctx *c);
/* The agent of restart_*: after its recv, `sync restart` (the orchestrator restarts mncd on the
 * edited policy), then the canary to the collector (UNIX stream, TCP), stdout, and - kv
 * restart_disclose set - a disclosure under contract "relay" to the bystander. */
int atkv_restart_agent(struct atk_ctx *c);

/* ---- records and identifiers (docs/threat-model.md, "Records about agents", "Identifiers an
 * agent chooses"): the audit_* and identifier attacks. */
/* One request on a new mncd connection; the answer (NUL-terminated) into resp. 0 or -1. */
int atkv_req(struct atk_ctx *c, const char *req, char *resp, size_t n);
/* Agent (an attack flagged ATK_NO_RECV): the recv of atk_recv (canary into c->secret; exits as
 * it does when that fails), which also takes every other queued object; the id of the first one
 * of `contract` into oid. 0, or -1 if there is none. */
int atkv_recv_contract(struct atk_ctx *c, const char *contract, char *oid, size_t n);
/* Orchestrator: the admin's `mncctl --json <args>` (NULL-terminated) into DIR/<file>, whose path
 * goes to path. 0 or -1. */
int atkv_admin(struct atk_ctx *c, const char *file, const char *const *args, char *path, size_t n);
/* Orchestrator: reads a whole file into a heap buffer (NUL-terminated; *len). NULL on error. */
char *atkv_slurp(const char *path, size_t *len);
/* Orchestrator: launches this binary as `agent` (mncctl run --agent AGENT) on a fresh workspace
 * DIR/<ws> in the agent role with phase=2 (it receives nothing) and the attack's k=v arguments
 * plus extra (NULL-terminated), after waiting for the agent's previous instances to be gone
 * (their taint with them); waits up to timeout_s. Its control lines go to c->notes. Returns its
 * exit status, or -1. */
int atkv_run_fresh(struct atk_ctx *c, const char *agent, const char *ws, const char *const *extra, int timeout_s);
/* Orchestrator: a TCP listener on 127.0.0.1 (an unregistered destination) it owns; fd, *port. */
int atkv_listen_tcp(int *port);
/* Orchestrator: whatever arrives on lfd within timeout_ms (several connections), into buf. */
long atkv_accept_read(int lfd, int timeout_ms, char *buf, size_t n);
/* Does `text` hold the canary: as itself, its hex digits, its bytes as decimal numbers joined
 * in the order they appear (ports, protocols, option names, lengths), or as hex digits inside an
 * address? The decoders of the audit_* attacks; a description of the hit into why. 1 or 0. */
int atkv_spelled(const char *text, const char *canary, char *why, size_t n);
/* Orchestrator: 16 comma-separated candidates ("mk" + 12 hex digits each), the canary among
 * them at a random place (what a prober of identifiers tries). */
void atkv_candidates(struct atk_ctx *c, char *out, size_t n);
/* Agent (ATK_NO_RECV): atk_recv's handshake, but a recv of this run's object alone (obj=), so
 * that objects earlier attacks left queued are not delivered with it. 0, or exits as atk_recv. */
int atkv_recv_one(struct atk_ctx *c);
/* Orchestrator: the admin's taint.reset of the coordinator (its taint and what mncd records it
 * holds: a clean issuer for the attacks on what it discloses). 0 or -1. */
int atkv_reset_coordinator(struct atk_ctx *c);
/* Orchestrator: has the worker charge `subject` in the ledger (a disclose to the bystander
 * naming it), so that it exists there. 0 or -1. */
int atkv_charge_subject(struct atk_ctx *c, const char *subject);

#endif
