/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* labels.h - data at rest keeps its label, whichever way it is read (docs/kernel.md, "Data at
 * rest"; issue 36, class 1).
 *
 * What carries a label: the data a tainted agent instance wrote. Its workspace carries the
 * workspace record (wstaint.h); every inode below it carries a label of its own, the extended
 * attribute MNCD_LABEL_XATTR in the same format (mncd "seals" it), so that the label goes with
 * the inode wherever it is named: a hard link elsewhere, a bind mount of a directory, a file
 * passed as an fd, a directory moved out. Labels are keyed on inodes (xattrs), never on paths.
 * On the lsm backend each sealed inode also gets a file_labels entry (bpf/mnc_abi.h), and the
 * kernel refuses an agent a labelled file its taint does not already imply.
 *
 * When mncd seals: after a delivery changed a workspace's record (kern_hold.c), when an instance
 * exits (its workspaces, with their records: kern_watch.c), before it decides a launch that
 * reads through a grant or an fd (the workspaces of every live tainted instance, so that files
 * written since count), and at start (every workspace it ever recorded: STATE_DIR/labelled).
 *
 * What is decided at launch (agent.register, mncd_labels_register), for everything the new
 * instance can read besides the system directories: each read grant, each workspace, each
 * regular file or directory the launcher passes as an fd. For each such place: its ancestors
 * (by path, and by the path inside its filesystem, so that a bind mount of a part of a labelled
 * directory still finds it), and every inode below it (no symlinks followed, across mounts, at
 * most MNCD_LABEL_WALK_MAX). A place that overlaps mncd's state directory or a log or memory
 * sink is refused (data at rest reachable through mncd only); so is a read grant that overlaps
 * (by path, or inside its filesystem: bind mounts) a live instance's workspace of another agent,
 * and a workspace that overlaps a live instance's read grant of another agent. Every label found
 * is merged into the launch's taint (sinks intersected, may_* ANDed) - except that a label
 * written by ANOTHER agent, reached through a read grant or an fd, refuses the launch unless the
 * policy names the flow (the reader's "reads_from"). Workspaces always confer (as the workspace
 * record did before).
 */
#ifndef MNCD_LABELS_H
#define MNCD_LABELS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "mncd.h"
#include "wstaint.h"

#define MNCD_LABEL_XATTR "trusted.mnc.label"
#define MNCD_LABEL_WALK_MAX 200000  /* inodes walked per place at launch */
#define MNCD_LABEL_SEAL_MAX 1000000 /* inodes sealed per workspace */
#define MNCD_MAX_FDS 64

/* One labelled place a launch reads, and the label it confers. */
typedef struct mncd_label_src {
    char what[PATH_MAX + 128]; /* "read grant /x: /x/<entry, inode 12>" (agent-chosen names by inode) */
    mncd_wtaint t;
} mncd_label_src;

typedef struct mncd_labels {
    mncd_wtaint t; /* the merge of every source (tainted iff one is) */
    mncd_label_src *src;
    int n_src;
    unsigned long walked; /* inodes looked at */
} mncd_labels;

void mncd_labels_free(mncd_labels *l);

/* agent.register: decides what the new instance of agent (registration reg: its workspaces and
 * read grants, resolved from the request's "reads"; fds: the caller's fd numbers as the request
 * gave them) may read, as above.
 * caller: the registering process (its fds are looked at through /proc/caller/fd/N). Fills *out
 * with the labels to confer. NULL, or why the launch is refused. */
const char *mncd_labels_register(mncd *d, int agent, pid_t caller, const mncd_reg *reg, const cJSON *reads,
                                 const cJSON *fds, mncd_labels *out, char *why, size_t n);

/* Labels every inode strictly below dir with t (merged into the label each already has; no
 * object ids), and (lsm backend) writes file_labels entries for dir and each. *sealed (may be
 * NULL) counts the inodes written. 0, or -errno with why (more than MNCD_LABEL_SEAL_MAX inodes,
 * a label that cannot be written). */
int mncd_labels_seal(mncd *d, const char *dir, const mncd_wtaint *t, unsigned long *sealed, char *why, size_t n);
/* The same for the workspaces of every live instance whose workspace record is tainted. */
int mncd_labels_seal_live(mncd *d, char *why, size_t n);
/* workspace.clear: removes the labels below dir and the file_labels entries of dir and below. */
int mncd_labels_unseal(mncd *d, const char *dir, char *why, size_t n);

/* Remembers that workspace ws carries a record (STATE_DIR/labelled, appended once). 0, or -errno. */
int mncd_labels_note(mncd *d, const char *ws);
/* At start: seals every remembered workspace that still carries a record (what an instance wrote
 * before an exit mncd missed), forgets the others. 0, or -errno. */
int mncd_labels_start(mncd *d);

#endif
