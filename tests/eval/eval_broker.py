#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""eval_broker - the MNC-D broker process for the evaluation: user/python/broker_agent.py's
serve() loop (broker.next / broker.reply over mncd's socket) with the computation the
evaluation's purposes need.

The broker is inside the trusted boundary: it sees the worker's private state and answers a
delegation with a receipt of exactly what the recipient needs (the request's `needs`, valued
from that state), or the failure code "need_not_in_state". mncd then validates the receipt as
it does any broker's (fields within the contract, need met, no other private value in it, risk
and budget) and releases it or moves on to the next failure step; the harness counts what the
coordinator actually receives.

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
    if not need or any(f not in fields for f in need):
        return "need_not_in_state"
    return {f: fields[f] for f in need}


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
