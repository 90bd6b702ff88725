#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""eval_broker - the MNC-D broker process for the evaluation: user/python/broker_agent.py's
serve() loop (broker.next / broker.reply over mncd's socket) with the computation the
evaluation's purposes need.

The broker is inside the trusted boundary: it sees the worker's private state and answers a
delegation with a receipt of what the recipient needs, or a failure code. It returns a safe
form when one exists: a need it can meet with a value that does not depend on the protected
commitment is met that way. `resolution` (resolve_conflict_brokered) is the broker's own
decision on the conflict: keep the commitment and meet at the worker's selected free slot,
whatever the commitment is, so the receipt {resolution: keep, selected_slot: ...} says nothing
about the tier. A need only the state can meet (movable, for resolve_conflict) is valued from
the state: every sufficient answer carries the bit, and mncd's budget check must reject it
when it leaks more than B. Missing state: the failure code "need_not_in_state". mncd then
validates the receipt as it does any broker's (fields within the contract, need met, no other
private value in it, risk and budget) and releases it or moves on to the next failure step;
the harness counts what the coordinator actually receives.

    eval_broker.py SOCKET
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "user", "python"))
if os.environ.get("PYLIB"):
    sys.path.insert(0, os.environ["PYLIB"])
from broker_agent import serve  # noqa: E402
from mnc_client import Client  # noqa: E402


def compute(req):
    fields = req.get("state", {}).get("fields", {})
    need = req.get("needs", [])
    out = {}
    for f in need:
        if f == "resolution" and "selected_slot" in fields:
            out[f] = "keep"  # the broker's decision, independent of the commitment
            out["selected_slot"] = fields["selected_slot"]
        elif f in fields:
            out[f] = fields[f]
        else:
            return "need_not_in_state"
    return out or "need_not_in_state"


def main():
    with Client(sys.argv[1]) as c:
        who = c.whoami()
        if who.get("agent") is None:
            sys.exit("eval_broker: not identified as an agent: %r" % who)
        # the harness waits for this line: mncd skips the delegate step while no broker is
        # connected, so disclosing before it would measure the start-up race, not the broker
        print("ready", who.get("agent"), flush=True)
        serve(c, compute, poll=0.01)


if __name__ == "__main__":
    main()
