#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""example_agent.py - a minimal agent on mnc, standard library only.

    example_agent.py worker STATE.json       # discloses under schedule_meeting
    example_agent.py coordinator             # receives its inbox, tries to forward

Run each role as its own process, registered with mncd as that agent (its cgroup or uid; see
docs/mncd.md). Prints one JSON line per step.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mnc_client import Client  # noqa: E402


def main(argv):
    if len(argv) < 2 or argv[1] not in ("worker", "coordinator"):
        print(__doc__, file=sys.stderr)
        return 2
    with Client() as c:
        me = c.whoami()
        print(json.dumps({"step": "whoami", "agent": me.get("agent"), "via": me.get("via")}))
        if argv[1] == "worker":
            with open(argv[2]) as f:
                state = json.load(f)
            r = c.disclose(contract="schedule_meeting", state=state)
            print(json.dumps({"step": "disclose", "decision": r["decision"], "reason": r["reason"],
                              "message": r.get("message"),
                              "object": r.get("object", {}).get("id")}))
            return 0 if r["ok"] else 1
        r = c.recv()
        for m in r.get("messages", []):
            print(json.dumps({"step": "recv", "from": m["from"], "message": m["message"],
                              "object": m["object"]["id"]}))
            f = c.forward(m["object"]["id"], "external")
            print(json.dumps({"step": "forward", "decision": f["decision"], "reason": f["reason"]}))
        return 0 if r["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
