#!/usr/bin/env bash
# The paper's worked example on the embedded default policy (policies/scheduling.json):
# the worker knows "oncology appointment Tue 2pm"; the coordinator only needs a feasible slot.
# Runs MNC-C selection, then asks the reference monitor about each downstream operation.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CTL=$BUILD/mncctl
POL=policies/scheduling.json
STATE=policies/examples/scheduling-state.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== MNC-C selection for schedule_meeting -> coordinator"
"$CTL" select --policy "$POL" --purpose schedule_meeting --recipient coordinator --state "$STATE" >"$tmp/sel.json"
python3 - "$tmp/sel.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["candidates"]:
    mark = "=>" if c["selected"] else "  "
    print(f'{mark} {c["name"]:<18} risk={c["risk"]:<5} {c["verdict"]:<16} {c["detail"]}')
print(f'released: "{d["selected"]["message"]}"  (object {d["selected"]["object"]["id"]})')
PY

echo "== reference monitor on what happens next"
op() {
    python3 - "$tmp/sel.json" "$1" "$2" "$3" "$4" "$5" >"$tmp/op.json" <<'PY'
import json, sys
obj = json.load(open(sys.argv[1]))["selected"]["object"]
sender, receiver, ch, off, used = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6] == "1"
if sender == "coordinator":
    obj["holders"].append("coordinator")
if used:
    obj["turns_left"] = 0
print(json.dumps({"sender": sender, "receiver": receiver, "purpose": "schedule_meeting",
                  "channel": ch, "time_ms": obj["issued_ms"] + off, "object": obj}))
PY
    local dec
    dec=$("$CTL" check --policy "$POL" --op "$tmp/op.json" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["decision"], "(" + d["reason"] + ")")' || true)
    printf '%-46s %s\n' "$6" "$dec"
}
op worker coordinator message 10 0 "worker -> coordinator (delivery)"
op coordinator external forward 20 0 "coordinator forwards to external"
op coordinator ops_log log 20 0 "coordinator logs it to ops_log"
op coordinator agent_memory memory_write 20 0 "coordinator writes it to memory"
op coordinator coordinator recv 30 1 "coordinator reads it again (turn used)"
op coordinator agent_memory memory_read 301000 0 "memory read after the 300 s lifetime"
