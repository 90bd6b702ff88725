/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* atk.h - the attack corpus's shared harness (tests/attacks/README.md).
 *
 * Every tests/attacks/<name>.c is one attack: an agent program that legitimately receives a
 * disclosed object carrying a random canary (through mncd's `recv`, under a contract whose scope
 * allows no forwarding, no log, no memory and no external sink), then tries to get the canary out
 * through one channel. The same binary plays three roles:
 *
 *   <bin>                 the orchestrator (run by tests/attacks/run-attacks as root, outside any
 *                         agent cgroup): starts the outside collector, has the worker disclose the
 *                         canary, launches the agent under the real `mncctl run`, plays the
 *                         outside verifier, and prints one result line;
 *   <bin> agent k=v...    the agent, inside `mncctl run` (cgroup, Landlock, seccomp, taint);
 *   <bin> disclose k=v... the worker's disclosure (canary on stdin, never in argv).
 *
 * An attack is BLOCKED only if the canary never arrived anywhere the verifier reads; LEAKED
 * otherwise. The orchestrator's verdict never trusts the agent: it looks at what the outsiders
 * received. The agent's control lines (notes, sync points) go to a file in its workspace that the
 * orchestrator reads (atk_say); its stdout/stderr stay the launcher's relay (docs/kernel.md, "Stdio"), and what
 * reaches the launcher's stdout/stderr is searched for the canary in every attack.
 *
 * Self-contained (libc only) so the corpus can be linked statically for the qemu guest. */
#ifndef MNC_ATK_H
#define MNC_ATK_H

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <sys/types.h>

/* attack flags */
#define ATK_NO_RECV 0x01 /* the agent does not recv itself (e.g. it lends its connection) */
#define ATK_RELAUNCH                                                                                                   \
    0x02                    /* after the agent exits, launch it again (phase=2) on the same workspace,
                                   with no new disclosure */
#define ATK_UNCONFINED 0x04 /* the "agent" is a plain process under a mapped uid, not mncctl run */
#define ATK_COVERT 0x08     /* a covert channel (threat model); run only with MNC_ATTACKS_COVERT=1 */
#define ATK_USER_ONLY 0x10  /* only meaningful in one mode */
#define ATK_SNIFF 0x20      /* the collector also sniffs lo (AF_PACKET) and raw ICMP */
#define ATK_FOREIGN                                                                                                    \
    0x40                    /* a second canary is disclosed to another agent (bystander); the agent
                                   must never be able to read it (searched in everything it prints) */
#define ATK_NO_CONTROL 0x80 /* the positive control cannot run it (it needs the agent's identity at mncd) */
#define ATK_STDIN_READBACK                                                                                             \
    0x100 /* the orchestrator keeps the read end of the agent's stdin pipe and
                                    searches what is left in it after the agent exited */

#define ATK_SERVER 0x200 /* the agent is launched with `mncctl run --server` (listen allowed) */
/* a known limit of the cgroup backend (README, "Known limits"): on that backend run-attacks runs
 * it and reports it apart from the corpus totals; on the lsm backend it counts like any other */
#define ATK_LIMIT_CGROUP 0x400
/* an open byte channel that docs/threat-model.md lists ("Open byte channels"): run on every
 * backend and reported apart from the corpus totals, so a change that closes it shows */
#define ATK_OPEN 0x800
/* a known limit of the lsm backend (README, "Known limits"), as ATK_LIMIT_CGROUP for that one */
#define ATK_LIMIT_LSM 0x1000
/* a channel `mncctl run --netns` closes (a network namespace per agent: sock_diag answers per
 * namespace): run-attacks also runs it in mode "netns" (the default uid plus --netns), where it
 * is counted like any other attack, whatever its other flags */
#define ATK_NETNS 0x2000
/* a channel `mncctl run --netns` closes together with hidepid=invisible on the host's /proc (the
 * namespace's own files under /proc/PID/net, which proc lets every user read): run-attacks also
 * runs it in mode "netns-hidepid" (--netns, and every uid-65534 reader of atk_as_uid under a
 * /proc mounted hidepid=invisible, as on a host configured so), counted there */
#define ATK_HIDEPID 0x4000

struct atk_ctx;

struct atk {
    const char *name;
    const char *channel; /* one line: the channel tried */
    unsigned flags;
    int (*prepare)(struct atk_ctx *c);                   /* orchestrator, before the launch (optional) */
    int (*agent)(struct atk_ctx *c);                     /* inside mncctl run; secret in c->secret */
    void (*on_sync)(struct atk_ctx *c, const char *tag); /* orchestrator, while the agent waits (opt.) */
    void (*verify)(struct atk_ctx *c);                   /* orchestrator, after the agent exited (opt.) */
    void (*cleanup)(struct atk_ctx *c);                  /* orchestrator, always (optional) */
};

#define ATK_MAXKV 64
struct atk_ctx {
    const struct atk *a;
    /* both sides: key=value arguments the orchestrator hands the agent (paths, ports, pids) */
    char *kv[ATK_MAXKV];
    int nkv;
    int phase;        /* 1, or 2 for the relaunch of an ATK_RELAUNCH attack */
    char secret[256]; /* agent: the selected_slot value it received (the canary) */
    char object[40];  /* agent: the received object's id */
    char **argv;      /* agent: its argv (for the cmdline attack) */
    int argc;
    /* orchestrator */
    char mode[16];       /* "user", "root", "netns" or "netns-hidepid" (run-attacks) */
    char canary[32];     /* the disclosed value */
    char canary2[32];    /* ATK_FOREIGN: the bystander's value */
    char dir[512];       /* private per-attack dir (0711), root-owned */
    char ws[600];        /* the agent's workspace: dir/ws */
    char evidence[2048]; /* non-empty = LEAKED: where the canary was found */
    char notes[2048];    /* what the agent reported (errno of each attempt) */
    char out[1 << 16];   /* everything the agent said on its control channel (searched for canary2 only) */
    size_t outn;
    char stdio[1 << 16]; /* what reached the launcher's stdout (searched for the canary: the relay) */
    size_t stdion;
    int agent_uid;
    pid_t collector;
    const char *contract; /* the disclosure's contract (policy.json); prepare may set it;
                             NULL: attack_scope */
    long slot[8];         /* per-attack scratch */
    int fdslot[8];
    int retry_refused; /* agent: atk_recv_soft returns -2 on a refused delivery instead of
                           exiting (an attack that asks again, racing mncd's checks) */
    /* orchestrator: how phase 2 of an ATK_RELAUNCH attack is launched (prepare or on_sync set
     * them; NULL/0: as phase 1). Data at rest (rest_*): another agent, another workspace (its
     * binary and control file go there: atk_copy_self), read grants, and a file the launcher
     * holds open as fd ATK_KEEP_FD and passes with --keep-fd. */
    const char *launch2_agent;
    const char *launch2_ws;
    const char *launch2_read[4];
    int launch2_nread;
    const char *launch2_keep_path;
};
#define ATK_KEEP_FD 9
/* orchestrator, ATK_RELAUNCH: run after phase 1 exited, before phase 2 is launched, when an
 * attack's prepare sets it (NULL: nothing) */
extern void (*atk_between)(struct atk_ctx *c);

/* Entry point: dispatches on argv[1]. Exit status of the orchestrator: 0 BLOCKED, 1 LEAKED,
 * 2 ERROR (the attack did not get as far as holding the canary), 3 skipped (mode not applicable). */
int atk_main(const struct atk *a, int argc, char **argv);
#define ATK_MAIN(A)                                                                                                    \
    int main(int argc, char **argv) { return atk_main(&(A), argc, argv); }

/* ---- both sides */
const char *atk_arg(struct atk_ctx *c, const char *key); /* NULL if absent */
long atk_argl(struct atk_ctx *c, const char *key);       /* -1 if absent */
void atk_set(struct atk_ctx *c, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *atk_errname(int err); /* "EPERM", "OK" for 0 */

/* ---- agent side */
int atk_recv(struct atk_ctx *c); /* recv via mncd; fills c->secret; exits 3 on failure */
/* the same, returns -1 with the reason instead; a refused delivery ends the agent (exit 0:
 * blocked) unless c->retry_refused, then -2 with the reason */
int atk_recv_soft(struct atk_ctx *c, char *why, size_t n);
/* An untainted helper hands us fds (the collector's giver, see atk.c): fds received, or -1. */
int atk_take(struct atk_ctx *c, const char *req, int *fds, int max);
/* One inet attempt, each step noted: connect+send (stream, or dgram with flags&2), sendto (dgram),
 * or sendto(MSG_FASTOPEN) with flags&1. */
int atk_inet(struct atk_ctx *c, const char *what, int fam, int type, int proto, const char *addr, int port, int flags);
/* One line (newlines become spaces) on the control channel to the orchestrator: a file in the
 * workspace, never stdout (the stdio relay withholds a tainted agent's stdout, and the launcher's
 * stdout is a verified channel). Exits 5 if the line cannot be written. */
void atk_say(struct atk_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void atk_note(struct atk_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Note the outcome of one attempt: rc < 0 means failed with errno. Returns rc. */
long atk_try(struct atk_ctx *c, const char *what, long rc);
void atk_sync(struct atk_ctx *c, const char *tag); /* orchestrator runs on_sync(tag), then we go on */
int atk_unix(int type, const char *path);          /* connected AF_UNIX socket; "@x" = abstract; -1/errno */
int atk_mncd(struct atk_ctx *c);                   /* a connection to mncd, or -1 */
/* one JSON line out, one line back (NUL-terminated); 0 or -1 */
int atk_call(int fd, const char *req, char *resp, size_t n);
int atk_send_fds(int sock, char tag, const int *fds, int nfds); /* SCM_RIGHTS with one data byte */
int atk_recv_fds(int sock, int *fds, int max);                  /* number received, -1 on error */
int atk_write_all(int fd, const void *buf, size_t n);           /* 0, or -1/errno */
/* A thread (CLONE_VM | CLONE_THREAD, no CLONE_FILES) with a private copy of the fd table: it
 * runs open_fn(c) (raw system calls and atk helpers only: it shares the caller's TLS) and keeps
 * the fd that returns, which only its own table holds. One such thread per process. Returns
 * that fd's number once it is open, or -1 with errno. */
int atk_private_thread(struct atk_ctx *c, int (*open_fn)(struct atk_ctx *));
/* Has that thread write buf to its fd and exit: write()'s result, or -1 with errno. */
long atk_private_thread_write(const char *buf);

/* ---- orchestrator (verifier) side */
void atk_evidence(struct atk_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int atk_buf_has(const void *buf, size_t n, const char *needle);
int atk_file_has(const char *path, const char *needle); /* 1 found, 0 not, -1 unreadable */
/* first /proc/PID/<leaf> holding needle (path in out): 1, 0 none, -1 */
int atk_scan_proc(const char *leaf, const char *needle, char *out, size_t n);
void atk_mkcanary(char *out, size_t n); /* "mk" + 12 random hex digits */
/* Runs fn(c, out, n) in a child under uid/gid `uid` (no supplementary groups) outside every agent
 * cgroup; returns fn's return value (1 = found the canary, with a description in out). */
int atk_as_uid(struct atk_ctx *c, uid_t uid, int (*fn)(struct atk_ctx *, char *, size_t), char *out, size_t n);
/* Has uid 65534 (atk_as_uid) read the file path; an evidence line if the canary is in it. */
void atk_nobody_reads(struct atk_ctx *c, const char *path);
/* For an on_sync: when tag is want (or want is NULL), runs fn as uid 65534 (atk_as_uid) and
 * records its description as evidence if it returned 1 (it found the canary). */
void atk_verify_as_nobody(struct atk_ctx *c, const char *tag, const char *want,
                          int (*fn)(struct atk_ctx *, char *, size_t));
/* Has the worker disclose `value` under `contract` (recipient per the policy). 0 or -1. */
int atk_disclose(struct atk_ctx *c, const char *contract, const char *value);
/* Has the worker (`mncctl run --agent worker`) send one raw request line (under 1 KiB) to mncd;
 * its answer into resp (NUL-terminated). 0 or -1. */
int atk_worker_request(struct atk_ctx *c, const char *req, char *resp, size_t n);
/* Reads another agent's inbox: `mncctl run --agent agent` receives everything mncd queued for
 * it (in DIR/ws-AGENT) and the answers, one JSON line each, go to out (NUL-terminated). The
 * number of bytes, or -1. That agent is an outsider to the attacking one. */
int atk_recv_as(struct atk_ctx *c, const char *agent, char *out, size_t n);
/* Runs the admin's `mncctl kern --pin-root $MNC_PIN_ROOT <args...>` (NULL-terminated), output
 * to the orchestrator's stderr log. Its exit status, or -1 if it did not run. */
int atk_kern(struct atk_ctx *c, const char *const *args);
#define ATK_NOBODY 65534
/* Copies the running binary to path (0755): the agent's executable in another workspace. 0/-1. */
int atk_copy_self(const char *path);

/* Files outside the workspace that every agent may read (Landlock's system read rules): n
 * root-owned 0644 one-byte files DIR/f00.. in a new directory DIR = /usr/local/share/mnc-atk-
 * TAG-PID (the parents are made if missing; /etc/mnc-atk-TAG-PID on a system with no /usr),
 * whose path goes to out. For the metadata channels of readable files, so that no real system
 * file is touched. 0, or -1 with errno (what was made is left for atk_sysfiles_rm). */
int atk_sysfiles(const char *tag, int n, char *out, size_t outn);
/* path of file i of such a directory */
void atk_sysfile(char *out, size_t n, const char *dir, int i);
/* Removes what atk_sysfiles(tag, n) made in this process (best effort). */
void atk_sysfiles_rm(const char *tag, int n);

/* SIGIO to an outsider (sigio_owner): the collector takes ATK_SIGIO_SIG and records
 * si_fd - ATK_SIGIO_FD_BASE as one byte per signal. It is its own process group leader (cpid is
 * also its process group id), so an owner that names its group reaches only the collector. */
#define ATK_SIGIO_SIG (SIGRTMIN + 1)
#define ATK_SIGIO_FD_BASE 256

#endif
