/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* llaudit.h - Landlock denials of agent processes as mncd audit records (docs/kernel.md,
 * "Landlock denials in the audit log").
 *
 * Landlock (ABI >= 7) reports each denial to the kernel audit subsystem: an AUDIT_LANDLOCK_ACCESS
 * record (domain, blocked access, path or target), an AUDIT_LANDLOCK_DOMAIN record the first time
 * a domain denies (its creator's pid and uid) and, for a task with an audit context, the SYSCALL
 * record (the denied process's pid and uid) and an EOE record closing the event. mncd listens on
 * the audit multicast group (AUDIT_NLGRP_READLOG, read-only, needs CAP_AUDIT_READ; it works with
 * or without an auditd), attributes each denial to a registered agent and appends one audit
 * record per denial: op "kernel.landlock", sender = the agent, decision "deny", reason
 * "landlock", detail = the blocked access, its object, the pid and how it was attributed.
 *
 * Measured on Linux 6.18 (docs/kernel.md, "Landlock denials in the audit log"): Landlock emits
 * nothing while kernel audit is disabled (enabled=0), so mncd enables it at start when it is
 * disabled and no auditd owns it, and then raises the kernel's audit backlog from 64 to 8192 (at
 * 64 a flood lost most records); an auditd's configuration is never overridden, and its pid is
 * never taken. Denials after an execve() are only reported when the domain was created with
 * LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (`mncctl run` sets it). A socket filter queues only
 * the four record types read here.
 *
 * Attribution (a denial is reported by the kernel asynchronously, so the process may be gone):
 *   1. the process's pid (SYSCALL record; else the domain's creator) -> /proc/PID/cgroup (checked
 *      against the record's uid, against pid reuse) -> the registered agent cgroup containing it;
 *   2. a Landlock domain cannot be left and is inherited by every descendant, so a domain whose
 *      creator (or any earlier denying process) sat in an agent's cgroup is that agent's: this
 *      attributes a process that exited (a reaped one; zombies still show their cgroup) and one
 *      that got out of the agent's cgroup;
 *   3. a process outside the mnc cgroup tree whose domain is not an agent's is ignored (counted);
 *      a process that exited before anything could be learned is recorded unattributed, saying so.
 *
 * Bounds: a message is at most 16 KiB (the kernel's limit is ~9 KiB; longer ones are counted as
 * dropped), an object is cut at 512 bytes, at most LL_BATCH messages per wakeup (the loop stays
 * responsive), and at most LL_RATE denials per second per agent are audited one by one (burst
 * LL_BURST; one agent's flood does not silence another's denials); the excess, and records lost
 * to a full receive queue, are counted and reported by "landlock_dropped" audit records (one per
 * agent, at most once a second) and in `status`.
 */
#ifndef MNCD_LLAUDIT_H
#define MNCD_LLAUDIT_H

#include <stdbool.h>

#include "mncd.h"

#define MNCD_LLAUDIT_MAX_FDS 2 /* the multicast socket, a timer */

typedef struct mncd_llaudit mncd_llaudit;

/* The agent whose registered cgroup contains `cg` (a cgroup v2 path as /proc/PID/cgroup shows
 * it to mncd, e.g. "/mnc/worker.42" or a cgroup below it). Returns the agent id, -1 inside the
 * mnc tree but in no registered cgroup, -2 outside the tree. The kernel layer (kern_hold.c,
 * mncd_kern_agent_of) provides it: it owns the registrations; the listener only asks. */
typedef int (*mncd_agent_of_fn)(mncd *d, const char *cg);

/* Starts the listener (the kernel layer is on). Checks the Landlock ABI and the audit status,
 * enables audit if it is disabled and no auditd owns it, binds the multicast group, then proves
 * the path end to end: a child process denies itself a directory read under a fresh Landlock
 * domain and the record must arrive within 2 s. Never fails mncd's start: the result is "on", or
 * "off" with the reason (shown in `status`), and is audited (op kernel.landlock_audit) and
 * printed. Returns NULL only when out of memory (then status says off). */
mncd_llaudit *mncd_llaudit_start(mncd *d, mncd_agent_of_fn agent_of);
void mncd_llaudit_stop(mncd_llaudit *la); /* NULL is fine; audit stays enabled (see docs) */
/* fds to poll for EPOLLIN (none when off). Returns how many were written. */
int mncd_llaudit_fds(const mncd_llaudit *la, int fds[MNCD_LLAUDIT_MAX_FDS]);
/* Handles fd if it is one of ours (returns true), else returns false. */
bool mncd_llaudit_ready(mncd *d, mncd_llaudit *la, int fd);
/* Adds landlock_audit ("on"/"off"), landlock_audit_why and the counters to the status "kernel"
 * object. la NULL: off, with why. Reads the kernel's live audit status (a short
 * netlink request), so "on" is not claimed after someone disabled audit. */
void mncd_llaudit_status(const mncd_llaudit *la, const char *why_off, cJSON *kernel_obj);

/* ---- records (llaudit_rec.c): "audit(SEC.MS:SERIAL): key=value key=value ..." */
#define LL_OBJ_MAX 512 /* bytes of a denial's object (path...) kept */
/* The serial and where the fields start, or NULL. */
const char *llr_header(const char *s, uint32_t *serial);
/* The raw value of field key of the fields f into out (values never contain spaces). Its
 * length (cut to n-1), or -1 when absent. */
int llr_field(const char *f, const char *key, char *out, size_t n);
/* An untrusted value (raw, rl bytes; may_hex: the kernel may have hex-encoded it) as printable
 * text: decoded, an abstract name's leading NUL as '@', other bytes outside 0x20..0x7e and '"'
 * and '\\' as '?', cut at n - 1 bytes with "...". */
void llr_untrusted(const char *raw, size_t rl, bool may_hex, char *out, size_t n);
/* An ACCESS record's object: every field but domain, blockers, comm and ocomm, each value as the
 * keyed hash of its bytes. */
void llr_object(mncd *d, const char *f, char *out, size_t n);

/* The kernel layer's mncd_agent_of_fn (kern_hold.c). */
int mncd_kern_agent_of(mncd *d, const char *cg);

#endif
