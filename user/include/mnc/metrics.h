/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* metrics.h - what an operator watches, as counters and histograms (docs/metrics.md).
 *
 * mncd keeps one mnc_metrics: every audit record it writes (or folds) is counted by op,
 * decision and reason (mnc_metrics_on_record), kernel denials by hook and reason, refusals
 * that say "fail closed", MNC-L charges and refusals by contract (mnc_metrics_mncl), and
 * durations (sweep, fd scan, journal and PostgreSQL commits) go into histograms
 * (mnc_metrics_observe). `status` carries them (mnc_metrics_json). `mncctl metrics` renders
 * status as Prometheus text (mnc_metrics_render) and writes it atomically for
 * prometheus-node-exporter's textfile collector (mnc_metrics_write_file): no new socket, no
 * new reader of anything an agent wrote.
 *
 * Every label value is a name from a fixed set (ops, decisions, reason codes, hook names) or
 * the policy's (contracts, agents); never a value an agent chose. The number of label sets is
 * bounded (MNC_METRICS_MAX_SERIES per family; beyond it samples count under "other").
 */
#ifndef MNC_METRICS_H
#define MNC_METRICS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "mnc/audit.h"

#define MNC_METRICS_MAX_SERIES 1024

typedef struct mnc_metrics mnc_metrics;

typedef enum mnc_metrics_hist {
    MNC_H_SWEEP,          /* pre-taint connection sweep, whole (seconds) */
    MNC_H_FDSCAN,         /* fd scan, whole */
    MNC_H_JOURNAL_COMMIT, /* one state-journal commit (append + fdatasync) */
    MNC_H_PG_COMMIT,      /* one PostgreSQL ledger commit */
    MNC_H__COUNT
} mnc_metrics_hist;

mnc_metrics *mnc_metrics_new(void); /* NULL if out of memory */
void mnc_metrics_free(mnc_metrics *m);

/* One audit record (NULL m is a no-op). */
void mnc_metrics_on_record(mnc_metrics *m, const char *op, const char *decision, const char *reason,
                           const char *detail);

/* An MNC-L outcome for a contract: outcome "charged" adds bits to the contract's spend,
 * anything else ("over_budget", "over_epsilon", ...) counts a refusal. */
void mnc_metrics_mncl(mnc_metrics *m, const char *contract, const char *outcome, double bits);

void mnc_metrics_observe(mnc_metrics *m, mnc_metrics_hist h, double seconds);

/* The counters and histograms as JSON (for `status`), with the audit log's rotation counters
 * when a is not NULL. NULL if out of memory. */
cJSON *mnc_metrics_json(const mnc_metrics *m, const mnc_audit *a);

/* Renders mncd's `status` response (NULL: mncd is down: only mnc_up 0) and extra gauges
 * (quarantine: {"agent.stream": bytes}, may be NULL) as Prometheus text exposition format
 * (what the textfile collector reads). Returns a malloc'd string, NULL if out of memory. */
char *mnc_metrics_render(const cJSON *status, const cJSON *quarantine);

/* Writes text to path atomically: path.tmp.PID, fsync, rename, mode 0644. 0, or -1 (err). */
int mnc_metrics_write_file(const char *path, const char *text, char *err, size_t errlen);

#endif
