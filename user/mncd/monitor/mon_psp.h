/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* mon_psp.h - the monitor's side of the conversation with the enforcer (docs/privsep.md): files
 * opened before the seal, the configuration sent and sealed, and the kernel layer's requests
 * (hold, register, taint, status) as typed calls. The rest of the monitor sees the enforcer only
 * through this module.
 *
 * Notices (audit records, deny events, registration changes, resets, STOP) reach the monitor
 * through mon_psp_ops, in the enforcer's order. Until mon_psp_release they are kept: the start's
 * records arrive before the monitor's audit log is open.
 *
 * A broken conversation (the enforcer gone or out of protocol) fails every later call: the
 * monitor then delivers nothing (no delivery without a hold) and stops.
 */
#ifndef MNCD_MON_PSP_H
#define MNCD_MON_PSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../privsep.h"
#include "../psp_io.h"
#include "mnc/policy.h"

typedef struct mon_psp_ops {
    void (*audit)(void *arg, const struct psp_audit *a);
    void (*kevent)(void *arg, const struct mnc_event *ev);
    /* add: the enforcer registered cgroup_rel (cgroup id cgid) to agent; else removed it */
    void (*reg)(void *arg, bool add, uint64_t cgid, uint32_t agent, uint32_t flags, const char *cgroup_rel);
    void (*reset)(void *arg, uint32_t agent);
    void (*stop)(void *arg);
} mon_psp_ops;

typedef struct mon_psp {
    psp_client c;
    mon_psp_ops ops;
    void *arg;
    bool keep;      /* notices are kept until mon_psp_release */
    psp_buf **kept; /* kept notices, in order (heap) */
    int n_kept, cap_kept;
    int *sink_fd; /* per principal: the log sink's file (SINKFD), or -1 */
    uint32_t n_sink_fd;
    struct psp_started started;
    int state_fd, listen_fd, audit_fd; /* from STARTED (the monitor takes them over) */
    char **sources;                    /* a registration's inherited labels (REG_SOURCE), heap */
    int n_sources, cap_sources;
    bool stop; /* STOP came */
} mon_psp;

/* Starts the conversation on fd (the monitor's end of the pair). Notices are kept from now on. */
void mon_psp_init(mon_psp *m, int fd, const mon_psp_ops *ops, void *arg);
void mon_psp_free(mon_psp *m);

/* The opener (mnc_set_opener) of the monitor's configuration files: OPEN. Returns the fd or
 * -errno (the enforcer's errno; EACCES when it refused for another reason). */
int mon_psp_open(void *m, const char *path);

/* What the enforcer needs of the configuration, already parsed: CONFIG, one PRINCIPAL per
 * principal of p (addresses as the loader's sink keys; log files: the sink's path or
 * STATE_DIR/logs/NAME.log, none for stream sinks), one IDMAP per uid and static cgroup entry,
 * then SEAL; waits for STARTED (m->started and its fds) or REFUSED. kernel: enum psp_kmode.
 * uids/cgroups: the config's uid -> agent and cgroup -> agent entries. 0, or -1 with why. */
typedef struct mon_psp_conf {
    uint32_t admin_uid, monitor_uid, monitor_gid, kernel;
    const char *pin_root, *cgroup_tree, *state_dir, *socket;
    int n_uids;
    const uint32_t *uid_of; /* n_uids uids ... */
    const int *uid_agent;   /* ... and their agents */
    int n_cgroups;
    const char *const *cg_path; /* n_cgroups paths ... */
    const int *cg_agent;        /* ... and their agents */
} mon_psp_conf;
int mon_psp_configure(mon_psp *m, const mon_psp_conf *c, const mnc_policy *p, char *why, size_t n);

/* Hands the kept notices to ops and stops keeping. */
void mon_psp_release(mon_psp *m);

/* Before a delivery: HOLD. 0 (*gen: the taint's generation), 1 refused (why: the enforcer's
 * detail; the audit records came as notices), -1 the conversation broke (why). */
int mon_psp_hold(mon_psp *m, uint32_t agent, unsigned op, const uint64_t sinks[MNC_SET_WORDS_ABI], bool may_log,
                 bool may_memory, bool may_forward, bool may_external, const uint8_t oid[16], uint64_t *gen, char *why,
                 size_t n);

/* agent.register: REG_BEGIN, a REG_PATH per workspace and tainted dir, REG_COMMIT. 0 (*out,
 * and m->sources the labels it inherits), 1 refused (*ref), -1 broken (why). */
int mon_psp_register(mon_psp *m, uint32_t agent, uint32_t uid, uint32_t flags, const char *cgroup,
                     const char *const *ws, int n_ws, const char *const *tainted, int n_tainted,
                     struct psp_registered *out, struct psp_refused *ref, char *why, size_t n);

/* TAINT_GET / STATUS. 0, 1 refused (ref may be NULL), -1 broken (why). */
int mon_psp_taint(mon_psp *m, uint32_t agent, struct psp_taint *out, struct psp_refused *ref, char *why, size_t n);
int mon_psp_status(mon_psp *m, struct psp_status_r *out, char *why, size_t n);

/* The pair's fd for the monitor's epoll, and its handler (notices). 0, or -1 broken. */
int mon_psp_fd(const mon_psp *m);
int mon_psp_ready(mon_psp *m);

#endif
