#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What `mncctl run` adds to a launch: /bin/true, python3, node and git started bare and under
`mncctl run` against a real mncd (kernel layer on, cgroup backend, private pin root and tree), in
the same run, alternating, medians over rounds. Target: `mncctl run /bin/true` within 10 ms of
bare. Prints one line per command: bare ms, under mncctl run ms, difference, ratio; then the CPU
time the same launches took (user + system of the launched process tree, from the reaped
children's rusage: mncctl, the agent and the launcher's helpers; mncd's share of the
registration is not in it), which holds better than wall time on a loaded 2-core host, where a
launch's several process hand-offs each wait for a CPU. Needs root. --quick: fewer rounds."""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import test_mncd_harness as H  # noqa: E402

if os.geteuid() != 0 or not H.cgroup2_mount():
    print("bench_launch: needs root and cgroup2 (skipped)")
    sys.exit(0)
rounds = 8 if "--quick" in sys.argv else 30
tmp = tempfile.mkdtemp(prefix="mnc-blaunch.")
os.chmod(tmp, 0o755)
pin, tree = "/sys/fs/bpf/mnc-blaunch-%d" % os.getpid(), "mnc-blaunch-%d" % os.getpid()
pol = os.path.join(tmp, "policy.json")
with open(os.path.join(ROOT, "tests", "compat", "policy.json")) as f:
    text = f.read().replace("@PORT_OK@", "9").replace("@PORT_NO@", "10").replace("@LOG@", tmp + "/ops.log")
with open(pol, "w") as f:
    f.write(text)
d = H.Daemon(tmp, config={"kernel": "cgroup", "pin_root": pin, "cgroup_tree": tree}, policy=pol)
ws = os.path.join(tmp, "ws")
os.makedirs(ws)
node = shutil.which("node", path="/usr/bin:/bin")
cmds = [("/bin/true", ["/bin/true"]), ("python3 -c pass", ["/usr/bin/python3", "-c", "pass"])]
if node:
    cmds.append(("node -e 0", [node, "-e", "0"]))
cmds.append(("git --version", ["/usr/bin/git", "--version"]))


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def once(argv, cpu=None):
    c0, t0 = cpu_children(), time.perf_counter()
    subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    t = (time.perf_counter() - t0) * 1000
    if cpu is not None:
        cpu.append((cpu_children() - c0) * 1000)
    return t


try:
    d.start()
    run = [H.MNCCTL, "--socket", d.sock, "run", "--agent", "plain", "--pin-root", pin, "--workspace", ws, "--"]
    print("bench_launch: %d rounds, bare vs under mncctl run (mncd, cgroup backend), median ms" % rounds)
    cpu = {}
    for name, argv in cmds:
        bare, conf, cb, cc = [], [], [], []
        once(argv), once(run + argv)  # warm the caches
        for _ in range(rounds):
            bare.append(once(argv, cb))
            conf.append(once(run + argv, cc))
        b, c = statistics.median(bare), statistics.median(conf)
        print("  %-16s bare %7.1f ms   mncctl run %7.1f ms   +%6.1f ms   x%.2f" % (name, b, c, c - b, c / b))
        cpu[name] = (statistics.median(cb), statistics.median(cc))
    print("bench_launch: CPU time of the same launches (user + system, median ms)")
    for name, (b, c) in cpu.items():
        print("  %-16s bare %7.1f ms   mncctl run %7.1f ms   +%6.1f ms   x%.2f" % (name, b, c, c - b, c / max(b, 0.1)))
finally:
    d.stop()
    subprocess.run([H.MNCCTL, "kern", "--pin-root", pin, "detach", "--purge"], capture_output=True)
    try:
        os.rmdir(os.path.join(H.cgroup2_mount(), tree))
    except OSError:
        pass
    shutil.rmtree(tmp, ignore_errors=True)
