/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* atkv_host.h - host state as a way out: mncctl's own output, /proc limits, long paths, counters an
 * outsider reads (threads, cgroup v1 tasks, netlink, objects handed away, one-bit syncs)
 * (atkv_host.c). */
#ifndef MNC_ATKV_HOST_H
#define MNC_ATKV_HOST_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "atk.h"

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
/* ...their cleanup: the keeper's (atkv_keeper_cleanup), then WS/d.../d... removed (atkv_rm_deep). */
void atkv_deep_cleanup(struct atk_ctx *c, int depth);
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
/* ...their prepare(): MNCCTL becomes this binary, real_env the real mncctl. 0 or -1. */
int atkv_wrap_prepare(const char *real_env);
/* ...their verifier: evidence if DIR/file (what the caller wrote down) holds the canary; else
 * what it read is noted. */
void atkv_wrap_verify(struct atk_ctx *c, const char *file, const char *evidence);

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

#endif
