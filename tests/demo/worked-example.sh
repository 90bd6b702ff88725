#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make demo - the paper's worked example end to end on the embedded default policy, through the
# real daemon and the real kernel:
#   mncd (default scheduling policy, kernel layer on) <- worker and coordinator launched by
#   `mncctl run` into their own cgroups (Landlock + seccomp applied), identified by mncd from the
#   kernel. The coordinator then tries every way out: through mncd, and directly.
# Needs root (cgroups, BPF). Uses a private socket, state dir, bpffs pin root and cgroup tree, so it
# never touches a production mncd; the default policy's log file and memory directory
# (/var/log/mnc/ops.log, /var/lib/mnc/memory) are created if missing, as mncd does.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
CTL=$ROOT/$BUILD/mncctl
MNCD=$ROOT/$BUILD/mncd
STATE_EXAMPLE=$ROOT/policies/examples/scheduling-state.json

if [ "$(id -u)" -ne 0 ]; then
    echo "make demo: needs root (it launches agents into cgroups and attaches BPF programs)." >&2
    echo "For the offline part only: $CTL select --policy policies/scheduling.json --contract schedule_meeting --state $STATE_EXAMPLE" >&2
    exit 1
fi

tmp=$(mktemp -d /tmp/mnc-demo.XXXXXX)
chmod 755 "$tmp" # agents run as their own uids: they must reach the sockets in here
# what the agents run and read, where their uids can read it (the clone may sit under a 0700 home)
mkdir -p "$tmp/bin"
cp "$CTL" "$tmp/bin/mncctl"
cp "$STATE_EXAMPLE" "$tmp/bin/state.json"
chmod -R a+rX "$tmp/bin"
ACTL=$tmp/bin/mncctl
PIN=/sys/fs/bpf/mnc-demo-$$
TREE=mnc-demo-$$
SOCK=$tmp/mncd.sock
export MNC_SOCKET=$SOCK MNC_PIN_ROOT=$PIN
MPID=
cleanup() {
    [ -n "$MPID" ] && kill "$MPID" 2>/dev/null && wait "$MPID" 2>/dev/null
    [ -n "${PEER:-}" ] && kill "$PEER" 2>/dev/null
    # the run's audit log, for a test that exports it (tests/integration/test_ocsf)
    if [ -n "${MNC_DEMO_AUDIT:-}" ]; then cp "$tmp/state/audit.jsonl" "$MNC_DEMO_AUDIT" || true; fi
    "$CTL" kern --pin-root "$PIN" detach --purge >/dev/null 2>&1 || true
    cg2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
    [ -n "$cg2" ] && rmdir "$cg2/$TREE"/* "$cg2/$TREE" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

say() { printf '\n== %s\n' "$*"; }
show() { printf '   %-58s %s\n' "$1" "$2"; }
# decision and reason of a JSON response
verdict() { python3 -c 'import json,sys
d = json.loads(sys.stdin.read() or "{}")
print(("allowed" if d.get("ok") else "DENIED") + " (" + str(d.get("reason", d.get("error", "?"))) + ")")'; }

start_mncd() {
    "$MNCD" --socket "$SOCK" --state-dir "$tmp/state" --pin-root "$PIN" --cgroup-tree "$TREE" \
        >>"$tmp/mncd.log" 2>&1 &
    MPID=$!
    for _ in $(seq 1 100); do
        "$CTL" whoami >/dev/null 2>&1 && return 0
        kill -0 "$MPID" 2>/dev/null || break
        sleep 0.1
    done
    echo "mncd did not start:" >&2
    cat "$tmp/mncd.log" >&2
    exit 1
}

say "mncd on the embedded default policy (policies/scheduling.json), kernel layer: auto"
start_mncd
"$CTL" --json status | python3 -c 'import json,sys
k = json.load(sys.stdin).get("kernel", {})
print("   backend %s, %s/%s hooks attached, self-test %s" % (k.get("backend"), k.get("links"), k.get("links_expected"), k.get("selftest")))'

# An agent outside the policy's scope: a UNIX socket nobody registered (class external).
python3 - "$tmp/external.sock" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o666); s.listen(16)
while True:
    c, _ = s.accept(); c.close()
PY
PEER=$!
for _ in $(seq 1 50); do [ -S "$tmp/external.sock" ] && break; sleep 0.1; done

say "worker (launched by mncctl run) discloses under contract schedule_meeting; its stdout (untainted) is relayed"
mkdir -p "$tmp/ws-worker" "$tmp/ws-coord"
# each agent runs as its own uid, reads only system dirs and what it is granted (--read)
"$CTL" run --agent worker --workspace "$tmp/ws-worker" --read "$tmp/bin" -- \
    "$ACTL" --json disclose --contract schedule_meeting --state "$tmp/bin/state.json" >"$tmp/disclose.json"
python3 - "$tmp/disclose.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d.get("candidates", []):
    mark = "=>" if c["name"] == d.get("form") else "  "
    print("   %s %-18s risk=%-5s %s" % (mark, c["name"], c.get("risk"), c["verdict"]))
print('   released to %s: "%s"  (object %s)' % (d.get("queued_to"), d.get("message"), d["object"]["id"]))
PY
OID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["object"]["id"])' "$tmp/disclose.json")

say "coordinator (launched by mncctl run) receives it, then tries every way out"
cat >"$tmp/coord.sh" <<EOF
set -u
CTL=$ACTL; OID=$OID; tmp=$tmp
$(declare -f show verdict)
# The coordinator's stdout is relayed by the launcher and withheld once it is tainted (its
# contract's phi has no stdout sink): the results table goes to its workspace instead.
show() { printf '   %-58s %s\n' "\$1" "\$2" >>\$tmp/ws-coord/report.txt; }
echo "coordinator: started, nothing received yet (untainted: this line passes)"
direct_connect() { python3 -c 'import socket,sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1]); print("allowed")
except OSError as e:
    print("DENIED by the kernel (%s)" % __import__("errno").errorcode[e.errno])' "\$1"; }
direct_write() { python3 -c 'import sys
try:
    open(sys.argv[1], "a").write("leak\n"); print("allowed")
except OSError as e:
    print("DENIED by the kernel (%s)" % __import__("errno").errorcode[e.errno])' "\$1"; }
show "direct connect() to an external agent, before receiving" "\$(direct_connect \$tmp/external.sock)"
# a connection opened before the taint, kept open across the delivery
ws=\$tmp/ws-coord
python3 -c 'import socket,sys,os,time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(sys.argv[1])
open(sys.argv[2] + "/held.ready", "w").close()
while not os.path.exists(sys.argv[2] + "/held.go"): time.sleep(0.05)
try:
    s.sendall(b"Thu 10:00"); print("allowed")
except OSError as e:
    print("DENIED (%s: mncd shut it before delivering)" % __import__("errno").errorcode[e.errno])' \$tmp/external.sock \$ws > \$ws/held.out &
while [ ! -e \$ws/held.ready ]; do sleep 0.05; done
r=\$(\$CTL --json recv)
msg=\$(echo "\$r" | python3 -c 'import json,sys; d=json.load(sys.stdin); m=d.get("messages") or d.get("delivered") or [d]; print(repr(m[0].get("message")))')
echo "coordinator: received \$msg"  # tainted now: the relay withholds this (quarantine + audit)
show "recv through mncd" "\$msg"
show "forward to external through mncd" "\$(\$CTL --json forward \$OID external | verdict)"
show "log to ops_log through mncd" "\$(\$CTL --json log \$OID ops_log | verdict)"
show "mem.put through mncd" "\$(\$CTL --json mem put slot \$OID | verdict)"
show "direct connect() to the external agent, now tainted" "\$(direct_connect \$tmp/external.sock)"
touch \$ws/held.go; wait
show "send on a connection opened before the taint" "\$(cat \$ws/held.out)"
show "direct write to /var/log/mnc/ops.log" "\$(direct_write /var/log/mnc/ops.log)"
show "direct write into /var/lib/mnc/memory" "\$(direct_write /var/lib/mnc/memory/slot)"
show "recv of the object again (one-turn lifetime)" "\$(\$CTL --json recv --object \$OID | verdict)"
touch \$tmp/ws-coord/coord.ready  # the workspace is the only place Landlock lets it write
while [ ! -e \$tmp/mncd.killed ]; do sleep 0.1; done
show "after kill -9 mncd: direct connect() to external" "\$(direct_connect \$tmp/external.sock)"
show "after kill -9 mncd: direct write to the log" "\$(direct_write /var/log/mnc/ops.log)"
EOF
"$CTL" run --agent coordinator --workspace "$tmp/ws-coord" --read "$tmp/bin" --read "$tmp/coord.sh" -- bash "$tmp/coord.sh" \
    >"$tmp/coord.out" 2>"$tmp/coord.err" &
CPID=$!
for _ in $(seq 1 200); do [ -e "$tmp/ws-coord/coord.ready" ] && break; sleep 0.1; done

say "the coordinator's taint in the kernel map (bpftool map dump pinned $PIN/taint)"
bpftool map dump pinned "$PIN/taint" | sed 's/^/   /'

say "kill -9 mncd: enforcement is pinned in the kernel and outlives it"
kill -9 "$MPID"; wait "$MPID" 2>/dev/null || true; MPID=
touch "$tmp/mncd.killed"
wait "$CPID" || true
say "the coordinator's results (it writes them into its workspace: its stdout is withheld once tainted)"
cat "$tmp/ws-coord/report.txt"

say "the coordinator's stdout as its launcher relayed it (what journald or a container log gets)"
sed 's/^/   | /' "$tmp/coord.out"
grep -h 'withheld' "$tmp/coord.err" | sed 's/^/   (launcher stderr) /' || true
say "withheld by the relay, kept in mncd's root-only quarantine ($tmp/state/quarantine, 0700)"
sed 's/^/   | /' "$tmp/state/quarantine/coordinator.stdout" 2>/dev/null || echo "   (empty)"
grep -h '"op":"quarantine"' "$tmp/state/audit.jsonl" | python3 -c 'import json,sys
for l in sys.stdin:
    a = json.loads(l)
    print("   audit: op=%s agent=%s decision=%s object=%s" % (a["op"], a.get("sender"), a["decision"], a.get("object")))
    print("          %s" % a.get("detail"))'

say "audit log"
"$CTL" audit verify "$tmp/state/audit.jsonl" | sed 's/^/   /'
