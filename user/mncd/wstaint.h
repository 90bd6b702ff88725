/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* wstaint.h - taint that follows the data: a workspace directory written by a tainted agent
 * instance carries that instance's taint (docs/kernel.md, "Workspace taint").
 *
 * Why: mncd clears an agent's taint when its last cgroup empties. Without this, a tainted
 * instance writes the disclosed text into its workspace and exits, and the next, untainted,
 * instance on the same workspace reads it and sends it anywhere.
 *
 * Where: an extended attribute MNCD_WS_XATTR on the workspace directory itself. trusted.* is
 * read and written only with CAP_SYS_ADMIN, which no agent holds (not even --as-root), and it
 * moves with the directory on rename. Value: one JSON object,
 *   {"v":1,"tainted":true,"sinks":["ops_log",...],"may_log":false,"may_memory":false,
 *    "may_forward":false,"may_external":false,"objects":["<32 hex>",...],"agent":"coordinator",
 *    "time_ms":1700000000000}
 * Sinks are stored by NAME, not by principal id: read back under a changed policy, a name the
 * policy no longer has is dropped (tighter), and an id never silently names another sink.
 *
 * Who: kern_hold.c and kern_verbs.c. mncd_kern_hold tightens the xattr of every workspace of every live instance of
 * the recipient before an object leaves (a failed write refuses the delivery); agent.register
 * merges the xattrs of each workspace, of its ancestors and of the descendants the launcher
 * found ("tainted_dirs") into the agent's taint before the registration takes effect; only the
 * admin verb workspace.clear removes one.
 */
#ifndef MNCD_WSTAINT_H
#define MNCD_WSTAINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mnc/disclosure.h"
#include "mnc/policy.h"
#include "mnc/set.h"

#define MNCD_WS_XATTR "trusted.mnc.taint"
#define MNCD_WS_MAX_OBJECTS 16 /* object ids kept per workspace (the most recent ones) */
/* Longest value written: ext4 keeps an xattr value within one block (~4 KiB) unless the
 * filesystem has ea_inode. A longer value is shortened by dropping the oldest objects first,
 * then sink names (fewer sinks = tighter, never wider). */
#define MNCD_WS_XATTR_MAX 3900
#define MNCD_WS_MAX_TAINTED_DIRS 1024 /* agent.register "tainted_dirs" entries */

/* One workspace's taint in the terms of the running policy. */
typedef struct mncd_wtaint {
    bool tainted;
    mnc_set sinks; /* principal ids of the running policy (names it lacks were dropped) */
    bool may_log, may_memory, may_forward, may_external;
    int n_obj;
    mnc_oid obj[MNCD_WS_MAX_OBJECTS]; /* oldest first */
    char agent[MNC_NAME_MAX];         /* the agent whose instance tainted it last */
    uint64_t time_ms;                 /* when it was last tightened */
    bool narrowed;                    /* sink names were dropped to fit MNCD_WS_XATTR_MAX */
} mncd_wtaint;

/* Reads dir's xattr into *t. Returns 0 (a taint record; t->tainted may still be false),
 * -ENODATA (none), -ENOTSUP (the filesystem keeps no trusted xattrs), -EBADMSG (not a valid
 * record), or another -errno. */
int mncd_ws_read(const char *dir, const mnc_policy *p, mncd_wtaint *t);

/* Writes *t (tainted records only) as dir's xattr. 0 or -errno. */
int mncd_ws_write(const char *dir, const mnc_policy *p, const mncd_wtaint *t);
/* The same on an open fd and any attribute name (labels.h stamps inodes with MNCD_LABEL_XATTR
 * in this format). */
int mncd_ws_fread(int fd, const char *attr, const mnc_policy *p, mncd_wtaint *t);
int mncd_ws_fwrite(int fd, const char *attr, const mnc_policy *p, const mncd_wtaint *t);
/* Is a at least as tight as b (b untainted, or both tainted with a's sinks within b's and no
 * may_* of a wider than b's)? Objects and names do not count. */
bool mncd_ws_implies(const mncd_wtaint *a, const mncd_wtaint *b);

/* Tightens a by b: tainted = a OR b; when both are tainted, sinks = a ∩ b and each may_* =
 * a AND b; an untainted side adds nothing. Objects: union, the most recent kept. The agent
 * name and time of b win when b is tainted. */
void mncd_ws_merge(mncd_wtaint *a, const mncd_wtaint *b);

/* Adds one object id (dropping the oldest when full; no duplicate). */
void mncd_ws_add_object(mncd_wtaint *t, const mnc_oid *id);

/* "objects a, b, c; sinks x, y; may_log ..." for audit records (always NUL-terminated). */
void mncd_ws_describe(const mncd_wtaint *t, const mnc_policy *p, char *out, size_t n);

/* Is a the same directory as b, or inside it, or does it contain it? Both are realpaths. */
bool mncd_ws_overlap(const char *a, const char *b);
/* Is a the same directory as b or inside it? Both are realpaths. */
bool mncd_ws_within(const char *a, const char *b);

#endif
