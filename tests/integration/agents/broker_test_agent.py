#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A broker for test_mncd_mncl: the scheduling computation of user/python/broker_agent.py,
with misbehaviours chosen by the request's subject so each MNC-D path can be driven:
    subject "exposing"  a receipt that carries the private reason (must be rejected)
    subject "outside"   a receipt with a field outside the contract (must be rejected)
    subject "failing"   the failure code "no_free_slot"
    subject "silent"    no reply at all (mncd's broker timeout applies)
Usage: broker_test_agent.py ROOT SOCKET"""
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "user", "python"))
from broker_agent import schedule_slot, serve  # noqa: E402
from mnc_client import Client  # noqa: E402


def compute(req):
    st = req.get("state", {})
    subj = st.get("subject", "")
    fields = st.get("fields", {})
    if subj.startswith("exposing"):
        return {"selected_slot": "Thu 10:00 (%s)" % fields.get("reason", "")}
    if subj.startswith("outside"):
        return {"selected_slot": "Thu 10:00", "reason": fields.get("reason", "x")}
    if subj.startswith("failing"):
        return "no_free_slot"
    if subj.startswith("silent"):
        return None
    return schedule_slot(req)


with Client(sys.argv[2]) as c:
    serve(c, compute, poll=0.02,
          log=lambda req, out, resp: print("%s %s -> %s" % (req["id"], req["state"].get(
              "subject"), resp and resp.get("outcome")), flush=True))
