#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""broker_agent - a trusted MNC-D broker for mncd (standard library only).

When a disclose has no admissible candidate and its contract's failure order says
"delegate", mncd hands the private computation request to the contract's broker agent (an
agent with "role": "broker" in the policy, launched and identified like any agent). The broker
runs inside the trusted boundary: it sees the private state, computes what the recipient needs,
and answers with an authorised receipt - {"field": "value", ...} over the contract's fields -
or a failure code. mncd validates the receipt (fields within the contract, the recipient's
need met, no private value of another field in it, risk and budget) before it releases it, as
an object of form "mnc-d:delegated", to the recipient. See docs/protocol.md (broker.next,
broker.reply).

    python3 broker_agent.py [--socket PATH] [--slots "Thu 10:00,Fri 09:00"] [--once]

The built-in computation is the scheduling example's: choose the first of the broker's own
free slots that is not the subject's busy slot, and return {"selected_slot": SLOT}; with no
such slot it returns the failure code "no_free_slot". Other computations plug in through
serve(client, compute) where compute(request) returns a dict (receipt), a string (failure
code) or None (no answer: mncd falls back after its broker timeout).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mnc_client import Client  # noqa: E402

DEFAULT_SLOTS = ["Thu 10:00", "Fri 09:00", "Mon 15:00"]


def schedule_slot(request, slots=DEFAULT_SLOTS):
    """The scheduling computation: a free slot the recipient can use, nothing else."""
    fields = request.get("state", {}).get("fields", {})
    busy = str(fields.get("busy_slot", ""))
    if "selected_slot" not in request.get("fields", []):
        return "contract_lacks_selected_slot"
    for s in slots:
        if s != busy:
            return {"selected_slot": s}
    return "no_free_slot"


def serve(client, compute, poll=0.05, once=False, log=None):
    """Takes requests with broker.next and answers them with broker.reply. Returns the
    number of requests handled when once is set and the queue is empty, else runs forever."""
    handled = 0
    while True:
        r = client.call("broker.next")
        if not r.get("ok"):
            raise RuntimeError("broker.next refused: %s" % r.get("error", r))
        req = r.get("request")
        if not req:
            if once:
                return handled
            time.sleep(poll)
            continue
        out = compute(req)
        handled += 1
        if out is None:
            resp = None
        elif isinstance(out, dict):
            resp = client.call("broker.reply", request=req["id"], receipt=out)
        else:
            resp = client.call("broker.reply", request=req["id"], failure=str(out))
        if log:
            log(req, out, resp)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--socket", default=None)
    ap.add_argument("--slots", default=",".join(DEFAULT_SLOTS))
    ap.add_argument("--poll", type=float, default=0.05)
    ap.add_argument("--once", action="store_true", help="answer what is queued, then exit")
    a = ap.parse_args()
    slots = [s.strip() for s in a.slots.split(",") if s.strip()]
    with Client(a.socket) as c:
        who = c.whoami()
        if not who.get("agent"):
            sys.exit("broker_agent: this process is not identified as an agent: %s" % who)
        n = serve(c, lambda req: schedule_slot(req, slots), poll=a.poll, once=a.once,
                  log=lambda req, out, resp: print("%s -> %s (%s)" % (
                      req["id"], out, resp and resp.get("outcome")), flush=True))
        print("handled %d" % n)


if __name__ == "__main__":
    main()
