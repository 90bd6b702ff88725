#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""bench_mcp: the `tools/call` round trip for mnc_receive through mnc-mcp, next to the same verb
(`recv`) sent straight to mncd, in the same run (target: mnc-mcp's overhead <= 20 us at p50, docs/mcp.md).

One real mncd (kernel layer off: this measures mnc-mcp, not the kernel layer) with the worked
example's policy. The benchmark process moves itself into the coordinator's cgroup, so both its
own mncd connection and the mnc-mcp child it starts are identified as the coordinator. Each
sample is one request line written and one response line read by this process: direct =
{"verb":"recv"} on mncd's socket; via MCP = tools/call mnc_receive on mnc-mcp's stdin (mnc-mcp
then does the same recv). The inbox is empty, so both do identical work in mncd. The two paths
are interleaved in blocks (alternating order) so drift hits both; the client-side cost
(Python) is the same for both paths and cancels out of the difference.
--quick: fewer samples (CI).
"""
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from test_mncd_harness import BUILD, Agents, Daemon, cleanup, tmpdir  # noqa: E402

quick = "--quick" in sys.argv[1:] or os.environ.get("MNC_BENCH_QUICK") == "1"
BLOCK, ROUNDS = (200, 6) if quick else (1000, 10)
TARGET_US = 20.0


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


tmp = tmpdir()
agents = Agents(["coordinator"])
d = Daemon(tmp, config={"cgroups": agents.cgroups_config()})
own_cg = None
mcp = None
rc = 1
try:
    d.start()
    with open("/proc/self/cgroup") as f:
        own_cg = f.read().strip().split("::", 1)[1]
    with open(os.path.join(agents.base, "coordinator", "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
    s = socket.socket(socket.AF_UNIX)
    s.connect(d.sock)
    sf = s.makefile("rb")
    mcp = subprocess.Popen([os.path.join(BUILD, "mnc-mcp"), "--socket", d.sock],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    mout = mcp.stdout

    def mcp_line(obj):
        mcp.stdin.write((json.dumps(obj) + "\n").encode())
        return json.loads(mout.readline())

    r = mcp_line({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "bench", "version": "1"}}})
    assert r["result"]["protocolVersion"] == "2025-06-18", r
    direct_req = b'{"verb":"recv"}\n'
    mcp_req = (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "mnc_receive", "arguments": {}}}) + "\n").encode()
    # one checked call each: same identity, same answer
    s.sendall(direct_req)
    a = json.loads(sf.readline())
    mcp.stdin.write(mcp_req)
    b = json.loads(mout.readline())
    assert a["ok"] and b["result"]["structuredContent"]["ok"] and not b["result"]["isError"], (a, b)

    def direct(n):
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            s.sendall(direct_req)
            sf.readline()
            out.append((time.perf_counter() - t0) * 1e6)
        return out

    def via_mcp(n):
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            mcp.stdin.write(mcp_req)
            mout.readline()
            out.append((time.perf_counter() - t0) * 1e6)
        return out

    direct(BLOCK // 4)
    via_mcp(BLOCK // 4)  # warm-up
    dd, mm = [], []
    for i in range(ROUNDS):
        if i % 2:
            mm += via_mcp(BLOCK)
            dd += direct(BLOCK)
        else:
            dd += direct(BLOCK)
            mm += via_mcp(BLOCK)
    over = pct(mm, 0.5) - pct(dd, 0.5)
    print("recv straight to mncd        p50 %7.1f us  p99 %7.1f us  (%d samples)" % (pct(dd, .5), pct(dd, .99), len(dd)))
    print("mnc_receive through mnc-mcp  p50 %7.1f us  p99 %7.1f us  (%d samples)" % (pct(mm, .5), pct(mm, .99), len(mm)))
    print("mnc-mcp overhead at p50: %.1f us (target <= %.0f us): %s" % (over, TARGET_US,
          "met" if over <= TARGET_US else "NOT met"))
    rc = 0
finally:
    if mcp:
        mcp.stdin.close()
        mcp.wait(10)
    if own_cg is not None:
        mnt = agents.mnt
        with open(mnt + own_cg + "/cgroup.procs", "w") as f:
            f.write(str(os.getpid()))
    agents.stop()
    d.stop()
    cleanup(tmp)
sys.exit(rc)
