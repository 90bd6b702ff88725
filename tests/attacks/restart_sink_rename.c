// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* restart_sink_rename - threat model (docs/threat-model.md, "Principals keep their names"):
 * mncd is restarted on a policy where the in-scope sink `calendar` is gone and a sink
 * `archive` - the collector's address - takes its place in the file. By position the bit that
 * meant calendar now means archive. (The journal names calendar, so mncd starts on a fresh
 * state dir: a new host, or the state moved away.)
 * Verifier: the collector's listeners, the launcher's stdout.
 * Blocks it: calendar's bit is dropped (tighter: a renamed principal is a new one), archive's
 * is never set. */
#include "atk_variants.h"

static const char *const p1 =
    "{\"mnc_policy\": 1, \"name\": \"restart\",\n"
    " \"agents\": [{\"name\": \"worker\"}, {\"name\": \"coordinator\"}, {\"name\": \"bystander\"}],\n"
    " \"sinks\": [{\"name\": \"calendar\", \"class\": \"tool\", \"address\": \"unix:@CAL@\"}, {\"name\": \"partner\", "
    "\"class\": \"external\", \"address\": \"unix:@OUT@\"}],\n"
    " \"fields\": [{\"name\": \"selected_slot\", \"weight\": 0.1}, {\"name\": \"slot_feasible\", \"weight\": 0.05}],\n"
    " \"families\": [{\"name\": \"forms\", \"forms\": [{\"name\": \"receipt\", \"fields\": [\"selected_slot\"], "
    "\"template\": \"selected slot {selected_slot}\"}]}],\n"
    " \"contracts\": [{\"id\": \"cal_scope\", \"purpose\": \"cal_scope\", \"issuers\": [\"worker\"], \"recipient\": "
    "\"coordinator\", \"fields\": [\"selected_slot\"], \"lifetime\": {\"seconds\": 300}, \"sinks\": [\"calendar\"], "
    "\"memory\": false, \"family\": \"forms\", \"failure\": [\"abstain\"]}, {\"id\": \"relay\", \"purpose\": "
    "\"relay\", \"issuers\": [\"coordinator\"], \"recipient\": \"bystander\", \"fields\": [\"selected_slot\"], "
    "\"lifetime\": {\"seconds\": 300}, \"sinks\": [], \"memory\": false, \"family\": \"forms\", \"failure\": "
    "[\"abstain\"]}],\n"
    " \"risk\": {\"model\": \"weights\"}}";
static const char *const p2 =
    "{\"mnc_policy\": 1, \"name\": \"restart\",\n"
    " \"agents\": [{\"name\": \"worker\"}, {\"name\": \"coordinator\"}, {\"name\": \"bystander\"}],\n"
    " \"sinks\": [{\"name\": \"archive\", \"class\": \"tool\", \"address\": \"unix:@OUT@\"}, {\"name\": \"partner\", "
    "\"class\": \"external\", \"address\": \"unix:@CAL@\"}],\n"
    " \"fields\": [{\"name\": \"selected_slot\", \"weight\": 0.1}, {\"name\": \"slot_feasible\", \"weight\": 0.05}],\n"
    " \"families\": [{\"name\": \"forms\", \"forms\": [{\"name\": \"receipt\", \"fields\": [\"selected_slot\"], "
    "\"template\": \"selected slot {selected_slot}\"}]}],\n"
    " \"contracts\": [{\"id\": \"cal_scope\", \"purpose\": \"cal_scope\", \"issuers\": [\"worker\"], \"recipient\": "
    "\"coordinator\", \"fields\": [\"selected_slot\"], \"lifetime\": {\"seconds\": 300}, \"sinks\": [\"archive\"], "
    "\"memory\": false, \"family\": \"forms\", \"failure\": [\"abstain\"]}, {\"id\": \"relay\", \"purpose\": "
    "\"relay\", \"issuers\": [\"coordinator\"], \"recipient\": \"bystander\", \"fields\": [\"selected_slot\"], "
    "\"lifetime\": {\"seconds\": 300}, \"sinks\": [], \"memory\": false, \"family\": \"forms\", \"failure\": "
    "[\"abstain\"]}],\n"
    " \"risk\": {\"model\": \"weights\"}}";

static int prepare(struct atk_ctx *c)
{
    c->contract = "cal_scope";
    return atkv_daemon_start(c, p1);
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "restart") != 0)
        return;
    /* the journal names calendar: the restart is on a fresh state dir */
    atkv_daemon_fresh_state();
    atkv_daemon_restart(c, p2, 0);
}

static const struct atk A = {"restart_sink_rename",
                             "mncd restarted with the in-scope sink renamed and the collector in its place",
                             ATK_USER_ONLY | ATK_NO_CONTROL,
                             prepare,
                             atkv_restart_agent,
                             on_sync,
                             NULL,
                             atkv_daemon_stop};
ATK_MAIN(A)
