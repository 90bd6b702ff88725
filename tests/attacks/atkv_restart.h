/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* atkv_restart.h - principals keep their names (the restart_* attacks): a private mncd restarted on an
 * edited policy while its agent runs tainted
 * (atkv_restart.c). */
#ifndef MNC_ATKV_RESTART_H
#define MNC_ATKV_RESTART_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "atk.h"

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
/* The same with a third contract `wide` (worker -> coordinator, sink wide_sink) before
 * cal_scope (wide_first) or after it: the contracts' order in the file is the variable. */
const char *atkv_restart_policy_wide(const char *agents, const char *sinks, const char *in_scope,
                                     const char *relay_issuers, const char *wide_sink, int wide_first);
/* The policy every restart_* attack starts on: these agents and sinks, calendar in cal_scope's
 * scope, the coordinator an issuer of relay. */
#define ATKV_RESTART_AGENTS "worker,coordinator,bystander"
#define ATKV_RESTART_SINKS "calendar:tool:CAL,partner:external:OUT"
/* prepare of a restart_* attack: the orchestrator discloses under cal_scope, and its mncd starts
 * on policy (NULL: the base policy above). atkv_daemon_start's result. */
int atkv_restart_start(struct atk_ctx *c, const char *policy);
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

#endif
