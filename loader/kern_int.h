/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kern_int.h - private to loader/: the handle layout and the functions the kern_*.c and
 * lsm_backend.c files share (the handle: kern_open.c; pinned links with undo: kern_links.c;
 * self-test bookkeeping: kern_selftest.c). Layers: README.md, "loader/". */
#ifndef MNC_KERN_INT_H
#define MNC_KERN_INT_H

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "mnc_kern.h"
#include "mnc_util.h"

struct ring_buffer;

struct mnc_kern {
    char root[PATH_MAX];
    char tree[MNC_TREE_PATH_MAX];
    int fd_agents, fd_taint, fd_unix, fd_inet, fd_files, fd_names, fd_settings, fd_counters, fd_events;
    int fd_principals;
    int fd_labels; /* <root>/file_labels (lsm backend), opened on first use; -1 until then */
    struct ring_buffer *rb;
    mnc_kern_event_fn cb;
    void *cb_ctx;
    int cb_count;
    int cb_stop;
    char notice[320]; /* why attach fell back from lsm to cgroup, "" otherwise */
};

/* ---- the handle (kern_open.c) */

/* The pinned maps, by file name under the pin root, in the order of the handle's fds. */
#define MNC_N_MAPS 10
extern const char *const mnc_map_names[MNC_N_MAPS];
/* A handle on root with every fd -1 (nothing opened), or NULL when out of memory. */
mnc_kern *mnc_kern_new(const char *root);
/* 0 if the map fd (pinned at path) has the layout this build expects for `name` (type, key and
 * value size), else -EPROTO / -EINVAL with the reason in err. */
int mnc_kern_check_layout(int fd, const char *name, const char *path, char *err, size_t errlen);
/* Reads the pinned settings (ABI version, backend, ...) into *c: 0 or -errno. */
int mnc_kern_read_settings(mnc_kern *k, struct mnc_config *c);
/* Opens every pinned map of k->root, checking each layout and the pinned ABI version:
 * 0, or -errno with the reason in err (the fds opened so far stay in k for mnc_kern_close). */
int mnc_kern_open_maps(mnc_kern *k, char *err, size_t errlen);

/* ---- pinned links with undo (kern_links.c) */

struct bpf_object;

/* What one attach changed, so that a failure (including a failed self-test) can be undone.
 * Links this attach created are unpinned again; links it REPLACED get their previous program
 * back. For each replaced link we keep an fd on the link and on the previous program: the fd
 * keeps that program loaded (the link dropped its reference at the update), so it can be put
 * back even though nothing else refers to it any more. */
#define MNC_UNDO_MAX 32
enum mnc_replace_kind {
    MNC_REPL_UPDATE,   /* cgroup links: bpf_link_update in place */
    MNC_REPL_PIN_SWAP, /* LSM (tracing) links, which bpf_link_update refuses (EINVAL): a new link
                          is attached beside the old one (both enforce meanwhile) and its pin is
                          renamed over the old pin; the old link lives while link_fd is open */
};
typedef struct mnc_replaced_link {
    char name[64];
    int kind;        /* enum mnc_replace_kind */
    int link_fd;     /* UPDATE: the pinned link; PIN_SWAP: the OLD link (closing it detaches) */
    int old_prog_fd; /* UPDATE: the program that ran in it before this attach; else -1 */
    int new_prog_fd; /* UPDATE: the program this attach put in (dup); else -1 */
    int new_link_fd; /* PIN_SWAP: the new link, now pinned; else -1 */
    uint32_t old_prog_id, new_prog_id;
} mnc_replaced_link;

typedef struct mnc_attach_undo {
    char created[MNC_UNDO_MAX][64];
    int n_created;
    mnc_replaced_link replaced[MNC_UNDO_MAX];
    int n_replaced;
} mnc_attach_undo;

/* An empty undo record (no fds held). */
void mnc_attach_undo_init(mnc_attach_undo *u);

/* Attaches every program of obj that was loaded (bpf_program__autoload) - to the cgroup cg_fd, or as BPF LSM when cg_fd < 0 - and pins
 * its link at <root>/links/<program>. A cgroup link already pinned there is replaced
 * atomically and as a compare-and-swap: bpf_link_update with BPF_F_REPLACE and the program
 * read from the link just before, so a program swapped in concurrently by another attacher is
 * never silently overwritten (the update fails with EPERM instead). An LSM link already pinned
 * is replaced by pin swap (MNC_REPL_PIN_SWAP; no instant without enforcement either); the
 * check that the pin still names the link read before is made just before the rename. Every change is recorded in u (created
 * links by name; replaced links with fds on the previous and the new program); more changes
 * than MNC_UNDO_MAX is an error. Returns 0 or -errno with the reason in err; on error, the
 * changes made so far are in u for mnc_attach_rollback. */
int mnc_attach_pinned(struct bpf_object *obj, const char *root, int cg_fd, mnc_attach_undo *u, char *err,
                      size_t errlen);

/* Undoes what u records: every replaced link gets its previous program back (bpf_link_update
 * with BPF_F_REPLACE, expecting the program this attach put in; or, pin-swapped links, the old
 * link re-pinned over the new one after checking the pin still names the new one), every
 * created link is unpinned. Then releases u's fds (mnc_attach_undo_release). Returns 0, or the first -errno of
 * a swap-back that failed; then err names the links that still run the new, unverified program
 * and the caller must report it loudly (it is also printed to stderr here). */
int mnc_attach_rollback(mnc_attach_undo *u, const char *root, char *err, size_t errlen);

/* Keeps the changes: closes u's fds (links stay pinned with their new programs). */
void mnc_attach_undo_release(mnc_attach_undo *u);

/* Test-only hook, for forcing the rollback path: if $MNC_TEST_SELFTEST_FAIL names a case in
 * st, that case is marked failed (got = -1) and -ENOTRECOVERABLE is returned; otherwise rc
 * unchanged. It can only turn a pass into a failure (fail closed), never the reverse. */
int mnc_selftest_test_hook(mnc_selftest *st, int rc);

/* Records one self-test case (ignored past the table's capacity). */
void mnc_selftest_add(mnc_selftest *st, const char *name, int want, int got);

struct sockaddr_in;
/* Self-test probe of the ingress filter: one datagram from the socket `from` to `to`, then waits
 * up to timeout_ms for it on `rfd` (bound to `to`). 0 if it arrived, EPERM if nothing did (the
 * program dropped it), else the errno seen. A datagram the program lets through is queued before
 * sendto returns, so only a drop costs the wait. */
int mnc_selftest_datagram_received(int from, const struct sockaddr_in *to, int rfd, int timeout_ms);

#endif
