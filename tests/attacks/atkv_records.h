/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* atkv_records.h - records and identifiers (the audit_* and identifier attacks): requests to mncd, the
 * admin's view, fresh instances that probe, canary spellings
 * (atkv_records.c). */
#ifndef MNC_ATKV_RECORDS_H
#define MNC_ATKV_RECORDS_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "atk.h"

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
/* Prober (phase 2 of atkv_run_fresh): sends what it learnt to the orchestrator's listener
 * (lport=), each step noted. */
void atkv_send_out(struct atk_ctx *c, const char *what);
/* Orchestrator: a listener, 16 candidates (cands=, lport=) for a fresh instance of agent on
 * workspace ws (atkv_run_fresh), and evidence if the canary reached the listener. */
void atkv_probe_fresh(struct atk_ctx *c, const char *agent, const char *ws, const char *evidence);
/* Orchestrator: fn on every record of op in the admin's `mncctl audit tail 10000` since since_ms
 * (the record's text, len bytes). How many, or -1. */
int atkv_records(struct atk_ctx *c, long since_ms, const char *op,
                 void (*fn)(struct atk_ctx *c, const char *rec, size_t len, void *arg), void *arg);
/* Orchestrator: evidence if the admin's `mncctl --json <args>` spells the canary (atkv_spelled). */
void atkv_admin_spelled(struct atk_ctx *c, const char *const *args, const char *file);
long atkv_now_ms(void); /* wall clock, as records' "time" */
/* Prober: for each candidate (cands=), the request req_fmt (one %s: the candidate) on a new
 * connection; a candidate whose answer holds `hit` (or, if hit starts with '!', lacks the rest)
 * is sent out (atkv_send_out). Hits. */
int atkv_probe_cands(struct atk_ctx *c, const char *req_fmt, const char *hit);
/* Agent, phase 1 of the memory-key attacks: recv (the canary and a wide_scope object), then
 * mem.put of the wide object under slot/<canary>. 0 or -1 (noted). */
int atkv_store_under_canary(struct atk_ctx *c);

#endif
