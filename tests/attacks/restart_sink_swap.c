// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* restart_sink_swap - threat model (docs/threat-model.md, "Principals keep their names"): the
 * coordinator holds an object whose scope allows the tool `calendar` (a harmless listener) and
 * not the external `partner` (the collector). mncd is restarted, while the agent runs tainted,
 * on the same policy with the two sinks swapped in the file. The agent then connects to
 * partner's socket and sends the canary (and to TCP, and stdout).
 * Verifier: the collector's UNIX stream and TCP listeners, the launcher's stdout.
 * Blocks it: the pinned numbers are bound to names (the principals map); the restart translates
 * the taint's bits by name before anything uses the new numbers: calendar's bit follows
 * calendar, partner stays refused. */
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
    " \"sinks\": [{\"name\": \"partner\", \"class\": \"external\", \"address\": \"unix:@OUT@\"}, {\"name\": "
    "\"calendar\", \"class\": \"tool\", \"address\": \"unix:@CAL@\"}],\n"
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

static int prepare(struct atk_ctx *c)
{
    c->contract = "cal_scope";
    return atkv_daemon_start(c, p1);
}

static void on_sync(struct atk_ctx *c, const char *tag)
{
    if (strcmp(tag, "restart") != 0)
        return;
    atkv_daemon_restart(c, p2, 0);
}

static const struct atk A = {"restart_sink_swap",
                             "mncd restarted on a policy with two sinks swapped under a tainted agent",
                             ATK_USER_ONLY | ATK_NO_CONTROL,
                             prepare,
                             atkv_restart_agent,
                             on_sync,
                             NULL,
                             atkv_daemon_stop};
ATK_MAIN(A)
