/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* lsm_backend.h - the BPF-LSM backend of the kernel enforcement layer (docs/lsm.md).
 *
 * The LSM programs (bpf/lsm_{files,paths,sockets,ipc}.bpf.c) share every pinned map with the
 * cgroup backend (agents, taint, sock_unix, sock_inet, file_sinks, names, settings, counters,
 * events: the same struct mnc_kern handle fills them) and add one, <root>/ipc_sinks. Their
 * links are pinned as <root>/links/<program> like the cgroup backend's, so enforcement
 * outlives the process that attached them. Unlike cgroup programs, LSM programs run for every
 * task; they gate only registered agent cgroups and unknown cgroups inside the mnc tree (read
 * from the settings map), and let everything else through at the first map lookup.
 *
 * The trap this file exists to refuse: with "bpf" missing from the kernel's lsm= list, LSM
 * programs load and attach without any error and then never run. mnc_lsm_available() checks
 * the active LSM list; mnc_lsm_selftest() proves enforcement by observing EPERM.
 *
 * Conventions as in mnc_kern.h: 0 or a negative errno; (err, errlen) get a one-line reason.
 */
#ifndef MNC_LSM_BACKEND_H
#define MNC_LSM_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lsm_abi.h"
#include "mnc_kern.h"

/* The LSM hooks: program (= pinned link name), section, coverage. */
const mnc_hook_info *mnc_lsm_hooks(int *n);
/* The same as mnc_hook_name(), which names the hooks of both backends. */
const char *mnc_lsm_hook_name(unsigned hook);

/* 0 if the probe says the LSM backend can work here (securityfs readable, "bpf" in the active
 * list, an LSM program loads), else -EOPNOTSUPP and the reason. Passing this is necessary, not
 * sufficient: only mnc_lsm_selftest() proves that the programs run. */
int mnc_lsm_available(const mnc_features *f, char *err, size_t errlen);

/* Loads the LSM objects with pin_root_path = root (so their maps are the pinned ones, adopted
 * with their contents, created if absent), attaches every program and pins its link at
 * <root>/links/<program>. An already pinned link is replaced without a gap by pin swap (the
 * kernel refuses bpf_link_update on LSM links; see mnc_attach_pinned in kern_int.h).
 * If tree_path is non-NULL, writes the settings map (ABI version, MNC_BACKEND_LSM, the tree's
 * cgroup id and path) BEFORE attaching, so the programs know the tree from their first run.
 * On failure, links created by this call are unpinned again. */
int mnc_lsm_attach(const char *root, const char *tree_path, uint64_t tree_id, char *err, size_t errlen);

/* Unpins the LSM links (enforcement stops once no process holds them); maps are kept.
 * Missing links are not an error. */
int mnc_lsm_detach(const char *root, char *err, size_t errlen);

/* Number of LSM links pinned under root (0..n); names of the missing ones in missing. */
int mnc_lsm_links_present(const char *root, char *missing, size_t len);

/* Functional self-test of the attached LSM programs: a scratch cgroup <tree>/.lsm-selftest.<pid>
 * registered under a self-test agent id (MNC_SELFTEST_AGENT_BASE | ...), two scratch files in $TMPDIR (or /tmp), one registered as a
 * log sink; a child in that cgroup must (1) write the sink while untainted with the base right,
 * (2) see EPERM on write() through the fd it already holds once tainted, (3) see EPERM on
 * open(O_WRONLY), (4) still write the non-sink file. Everything is undone afterwards.
 * Returns 0 if every case passed, -ENOTRECOVERABLE if one did not (programs that do not run),
 * other -errno if the test could not run (st->error says why). */
int mnc_lsm_selftest(mnc_kern *k, mnc_selftest *st);

/* The lsm branch of mnc_kern_attach: mnc_lsm_attach, then a handle on the pinned maps, then
 * (unless skip_selftest) mnc_lsm_selftest. If the self-test fails (-ENOTRECOVERABLE, reason in
 * err) the attach is undone: new links are removed again, replaced links get their previous
 * programs back, the settings map its previous value (err: "rolled back: ..." or "ROLLBACK
 * FAILED: ..."). On success *out is an open handle. */
int mnc_lsm_attach_verified(const char *root, const char *tree, uint64_t tree_id, bool skip_selftest, mnc_kern **out,
                            mnc_selftest *st, char *err, size_t errlen);

/* With detach --purge: unpins the maps only the lsm backend has (ipc_sinks, lsm_tree, sigio_owners,
 * file_labels). */
int mnc_lsm_purge(const char *root, char *err, size_t errlen);

/* ---- SysV IPC sinks (<root>/ipc_sinks) */
/* Key of IPC object ipc_id (as returned by msgget/shmget) of kind MNC_IPC_* in the caller's
 * IPC namespace. */
int mnc_lsm_ipc_key(unsigned kind, int ipc_id, struct mnc_ipc_key *key);
int mnc_lsm_ipc_add(const char *root, unsigned kind, int ipc_id, uint32_t id, unsigned cls);
int mnc_lsm_ipc_del(const char *root, unsigned kind, int ipc_id); /* -ENOENT if absent */

#endif
