#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# worked-example.sh - the paper's worked example end to end inside the guest, through the REAL
# mncd with its kernel layer on the lsm backend (mncd --kernel lsm): mncd attaches and pins the
# LSM programs, writes names and sinks from the policy, registers the agents' cgroups
# (agent.register) and taints the recipient before delivery. Agents are processes in their own
# cgroups talking to mncd with mncctl; direct channels are tried with mnc-vmtest probes.
# Prints TAP lines ("ok 0 - ..."; tests/vm/run-vmtest renumbers) and MNC-WE-DONE at the end.
W=/tmp/we
S=$W/mncd.sock
CG=/sys/fs/cgroup/mncd
export MNC_SOCKET=$S MNC_PIN_ROOT=/sys/fs/bpf/mncd PATH=/bin
. /etc/mnc/we-lib.sh

mkdir -p $W/sinks/memory $W/state
: > $W/sinks/ops.log
echo '{"kernel": "lsm", "pin_root": "/sys/fs/bpf/mncd", "cgroup_tree": "mncd"}' > $W/cfg.json
mncd --config $W/cfg.json --socket $S --state-dir $W/state --policy /etc/mnc/policy.json >$W/mncd.log 2>&1 &
MPID=$!
up=0
for i in $(seq 1 600); do
    if [ -S $S ] && mncctl whoami >/dev/null 2>&1; then up=1; break; fi
    kill -0 $MPID 2>/dev/null || break
    sleep 0.1
done
ok $up "mncd --kernel lsm started (pid $MPID)"
if [ $up = 0 ]; then
    sed 's/^/# mncd: /' $W/mncd.log
    echo "MNC-WE-DONE fails=$((fails))"
    exit 1
fi
st=$(mncctl --json status 2>&1)
ok "$(has "$st" '"backend":"lsm"' && echo 1)" "mncd reports kernel backend lsm"

mnc-vmtest listen-unix $W/external.sock &
LPID=$!
for a in worker coordinator; do
    mkdir -p $CG/$a
    r=$(mncctl --json call "{\"verb\":\"agent.register\",\"agent\":\"$a\",\"cgroup\":\"$CG/$a\"}" 2>&1)
    ok "$(has "$r" '"ok":true' && echo 1)" "agent.register $a -> $CG/$a"
done
waitfor $W/external.sock 50

# 1. the worker discloses under schedule_meeting; mncd selects the receipt for the coordinator
sh -c "echo \$\$ > $CG/worker/cgroup.procs && exec mncctl --json disclose --contract schedule_meeting --state /etc/mnc/state.json" >$W/disclose.json 2>&1
d=$(cat $W/disclose.json)
ok "$(has "$d" 'Thu 10:00' && ! has "$d" 'oncology' && ! has "$d" 'Tue' && echo 1)" "worker's disclosure renders only the selected slot"
OID=$(echo "$d" | sed -n 's/.*"object":{"id":"\([0-9a-f]*\)".*/\1/p')
[ -n "$OID" ] || OID=$(echo "$d" | sed -n 's/.*"id":"\([0-9a-f]\{16,\}\)".*/\1/p' | head -1)
ok "$([ -n "$OID" ] && echo 1)" "object id ${OID:-missing}"

# 2-5. the coordinator: one long-lived process in its cgroup (mncd treats an emptied cgroup as
# an exited agent and clears its taint, so everything runs in this one shell)
cat > $W/coord.sh <<COORD
echo \$\$ > $CG/coordinator/cgroup.procs
W=$W; OID=$OID
. /etc/mnc/we-lib.sh
r=\$(mnc-vmtest probe connect-unix \$W/external.sock)
ok "\$([ "\$r" = ok ] && echo 1)" "untainted coordinator: direct connect() to the external socket allowed: \$r (control)"
# a UDP socket of the coordinator's own with 3 datagrams queued while it is untainted: how many
# it reads after the taint would show in rx_queue, so mncd's sweep (lsm: what can reach the agent) drains it at the
# delivery (udp_recvq_filled_before). 47011 = 0xB7A3.
rxq() { awk '\$2 ~ /:B7A3\$/ { split(\$5, q, ":"); print q[2] }' /proc/net/udp; }
mnc-vmtest hold-udp 47011 &
HPID=\$!
i=0; while [ -z "\$(rxq)" ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
mnc-vmtest send-udp 47011 3
q0=\$(rxq)
ok "\$([ -n "\$q0" ] && [ "\$q0" != 00000000 ] && echo 1)" "untainted coordinator's UDP socket holds 3 queued datagrams: rx_queue \$q0 (control)"
r=\$(mncctl --json recv 2>&1)
ok "\$(has "\$r" 'Thu 10:00' && ! has "\$r" 'oncology' && echo 1)" "coordinator receives the receipt (taint lands before delivery)"
q1=\$(rxq)
ok "\$([ "\$q1" = 00000000 ] && echo 1)" "after the delivery its UDP receive queue is empty: rx_queue \$q1 (mncd's sweep, lsm)"
ok "\$(grep -q 'drain (3 datagram(s) queued before the delivery dropped' \$W/state/audit.jsonl && echo 1)" "the drain is audited (kernel.sweep: drain (3 datagram(s) ...)"
kill \$HPID
r=\$(mncctl --json forward \$OID external 2>&1)
ok "\$(has "\$r" '"ok":false' && echo 1)" "forward to external refused by mncd"
r=\$(mnc-vmtest probe connect-unix \$W/external.sock)
ok "\$([ "\$r" = EPERM ] && echo 1)" "direct connect() to the external agent's socket: \$r (kernel)"
r=\$(mncctl --json log \$OID ops_log 2>&1)
ok "\$(has "\$r" '"ok":false' && echo 1)" "log through mncd refused"
r=\$(mnc-vmtest probe write \$W/sinks/ops.log)
ok "\$([ "\$r" = EPERM ] && echo 1)" "direct write to the log file: \$r (kernel)"
r=\$(mncctl --json mem put k1 \$OID 2>&1)
ok "\$(has "\$r" '"ok":false' && echo 1)" "mem.put refused"
r=\$(mncctl --json recv --object \$OID 2>&1)
ok "\$(has "\$r" '"ok":false' && has "\$r" expired && echo 1)" "one-turn lifetime over: recv of the object refused"
r=\$(mncctl --json whoami 2>&1)
ok "\$(has "\$r" coordinator && echo 1)" "mncd socket still reachable for the tainted coordinator"
touch \$W/coord.ready
waitfor \$W/mncd.killed 600
r=\$(mnc-vmtest probe connect-unix \$W/external.sock)
ok "\$([ "\$r" = EPERM ] && echo 1)" "after kill -9 mncd: direct connect() still refused: \$r"
r=\$(mnc-vmtest probe write \$W/sinks/ops.log)
ok "\$([ "\$r" = EPERM ] && echo 1)" "after kill -9 mncd: direct log write still refused: \$r"
echo \$fails > \$W/coord.fails
COORD
sh $W/coord.sh &
CPID=$!
waitfor $W/coord.ready 600 || ok 0 "coordinator reached the kill point"
kill -9 $MPID
wait $MPID 2>/dev/null
ok "$(kill -0 $MPID 2>/dev/null || echo 1)" "kill -9 mncd (pid $MPID)"
touch $W/mncd.killed
wait $CPID
cf=$(cat $W/coord.fails 2>/dev/null || echo 1)
fails=$((fails + cf))
kill $LPID 2>/dev/null
# the mncd log is part of the evidence
head -5 $W/mncd.log | sed 's/^/# mncd: /'
echo "MNC-WE-DONE fails=$fails"
[ $fails = 0 ]
