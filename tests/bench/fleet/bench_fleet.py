#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Fleet mode benchmark (docs/fleet.md): durable charges per second and charge latency with 1, 2
and 4 mncd hosts sharing one PostgreSQL ledger (8 clients per host), the same load on the local
journal, and PostgreSQL's own floor - pgbench running a single-row INSERT with
synchronous_commit on from the same number of clients - all in this run, on this machine.

Every charged disclose is one durable PostgreSQL transaction (ledger_pg.c) before mncd answers;
the floor is the cheapest durable write PostgreSQL can do. Ratios are against the floor
measured in the same run.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from pg_harness import Postgres, bindir  # noqa: E402
from test_mncd_harness import MNCCTL, Daemon, cleanup, tmpdir  # noqa: E402

QUICK = "--quick" in sys.argv or os.environ.get("MNC_BENCH_QUICK") == "1"
SECS = 2 if QUICK else 6
CLIENTS = 8
SUBJECTS = 1000


def policy(tmp):
    p = {"mnc_policy": 1, "name": "bench",
         "agents": [{"name": "worker"}, {"name": "coordinator"}],
         "fields": [{"name": "reason", "weight": 1.0}, {"name": "slot_feasible", "weight": 0.1},
                    {"name": "selected_slot", "weight": 0.01}],
         "families": [{"name": "forms", "forms": [
             {"name": "receipt", "fields": ["selected_slot"]}]}],
         "requirements": [{"agent": "coordinator", "purpose": "bench",
                           "needs": ["selected_slot"]}],
         "contracts": [{"id": "bench", "purpose": "bench", "issuers": ["worker"],
                        "recipient": "coordinator", "fields": ["selected_slot"],
                        "lifetime": {"turns": 1}, "sinks": [], "memory": False,
                        "family": "forms", "failure": ["abstain"], "budget": 1e12}]}
    path = os.path.join(tmp, "bench-policy.json")
    with open(path, "w") as f:
        json.dump(p, f)
    return path


def build_load(tmp):
    exe = os.path.join(tmp, "load")
    subprocess.run(["cc", "-O2", "-pthread", "-o", exe,
                    os.path.join(ROOT, "tests", "bench", "fleet", "load.c")], check=True)
    return exe


def run_load(exe, socks, tag):
    r = subprocess.run([exe, str(SECS), str(CLIENTS), str(SUBJECTS), tag] + socks,
                       capture_output=True, text=True, timeout=SECS * 10 + 60)
    if r.returncode != 0:
        raise RuntimeError("load: " + r.stderr)
    f = r.stdout.split()
    res = dict(zip(f[0::2], f[1::2]))
    if int(res["errors"]):
        sys.stderr.write(r.stderr)
        raise RuntimeError("load: %s refused requests" % res["errors"])
    return {"rate": int(res["ok"]) / float(res["seconds"]), "p50": float(res["p50_us"]),
            "p99": float(res["p99_us"]), "n": int(res["ok"])}


def floor(pg, clients, tmp):
    """pgbench: a single-row INSERT per transaction, autocommit, synchronous_commit on."""
    script = os.path.join(tmp, "insert.sql")
    with open(script, "w") as f:
        f.write("INSERT INTO floor(client, v) VALUES (:client_id, 'x');\n")
    logdir = tempfile.mkdtemp(prefix="pgbench.", dir=tmp)
    r = subprocess.run([os.path.join(bindir(), "pgbench"), "-n", "-h", pg.sock, "-U", "postgres",
                        "-c", str(clients), "-j", "2", "-T", str(SECS), "-f", script, "-l",
                        "--log-prefix", os.path.join(logdir, "tx"), "mnc"],
                       capture_output=True, text=True, cwd=logdir)
    if r.returncode != 0:
        raise RuntimeError("pgbench: " + r.stdout + r.stderr)
    tps = [float(x.split("=")[1].split()[0]) for x in r.stdout.splitlines()
           if x.startswith("tps")][0]
    lat = []
    for fn in os.listdir(logdir):
        with open(os.path.join(logdir, fn)) as f:
            lat += [float(x.split()[2]) for x in f if x.strip()]
    lat.sort()
    shutil.rmtree(logdir, ignore_errors=True)
    return {"rate": tps, "p50": lat[len(lat) // 2], "p99": lat[int(len(lat) * 0.99)],
            "n": len(lat)}


def hosts(n, pol, ci, shm=False):
    out = []
    for i in range(n):
        tmp = tempfile.mkdtemp(prefix="mnc-bench-host.", dir="/dev/shm") if shm else tmpdir()
        os.chmod(tmp, 0o755)
        cfg = {"agents": {"worker": {"uid": 0}}}
        if ci:
            cfg["ledger"] = {"backend": "postgres", "conninfo": ci, "host": "bench%d" % i}
        d = Daemon(tmp, config=cfg, policy=pol)
        d.start()
        out.append((d, tmp))
    return out


def stop(hs):
    for d, tmp in hs:
        d.stop()
        cleanup(tmp)


def main():
    tmp = tempfile.mkdtemp(prefix="mnc-bench-fleet.")
    os.chmod(tmp, 0o755)
    pg = Postgres()
    rows = []
    try:
        pg.start()
        pg.createdb("mnc")
        ci = pg.conninfo()
        subprocess.run([MNCCTL, "ledger", "init", "--postgres", ci], check=True,
                       capture_output=True)
        pg.psql("CREATE TABLE floor (id bigserial PRIMARY KEY, client int, v text)")
        pol = policy(tmp)
        exe = build_load(tmp)
        print("# %d s per level, %d clients per host, %d subjects; each charge is durable "
              "before mncd answers" % (SECS, CLIENTS, SUBJECTS))
        # the same run, interleaved: floor for N clients, then the fleet with N clients
        hs = hosts(1, pol, None)
        try:
            jr = run_load(exe, [d.sock for d, _ in hs], "journal")
        finally:
            stop(hs)
        # where the time goes: the same loads with mncd's state dir (its own per-iteration
        # fdatasync) on tmpfs, leaving PostgreSQL's commit as the only durable write
        shm = {}
        for n in (1, 4):
            hs = hosts(n, pol, ci, shm=True)
            try:
                shm[n] = run_load(exe, [d.sock for d, _ in hs], "shm%d" % n)
            finally:
                stop(hs)
        for n in (1, 2, 4):
            fl = floor(pg, CLIENTS * n, tmp)
            hs = hosts(n, pol, ci)
            try:
                fr = run_load(exe, [d.sock for d, _ in hs], "fleet%d" % n)
            finally:
                stop(hs)
            rows.append((n, fr, fl))
        v = subprocess.run([MNCCTL, "ledger", "verify", "--postgres", ci], capture_output=True,
                           text=True)
        if v.returncode != 0:
            raise RuntimeError("the benchmark's ledger does not verify: " + v.stdout + v.stderr)
        print("%-34s %12s %10s %10s %14s %14s" % ("configuration", "charges/s", "p50 ms",
                                                 "p99 ms", "floor/this", "p50/floor p50"))
        print("%-34s %12.0f %10.3f %10.3f %14s %14s" % ("journal, 1 host x 8 clients", jr["rate"],
                                                        jr["p50"] / 1e3, jr["p99"] / 1e3, "-",
                                                        "-"))
        for n, fr, fl in rows:
            print("%-34s %12.0f %10.3f %10.3f %14s %14s" % (
                "pgbench INSERT floor, %d clients" % (CLIENTS * n), fl["rate"], fl["p50"] / 1e3,
                fl["p99"] / 1e3, "1.00x", "1.00x"))
            print("%-34s %12.0f %10.3f %10.3f %13.2fx %13.2fx" % (
                "postgres, %d host%s x 8 clients" % (n, "s" if n > 1 else ""), fr["rate"],
                fr["p50"] / 1e3, fr["p99"] / 1e3, fl["rate"] / fr["rate"], fr["p50"] / fl["p50"]))
        for n in (1, 4):
            fl = [r for r in rows if r[0] == n][0][2]
            print("%-34s %12.0f %10.3f %10.3f %13.2fx %13.2fx" % (
                "  same, mncd state on tmpfs, %d host%s" % (n, "s" if n > 1 else ""),
                shm[n]["rate"], shm[n]["p50"] / 1e3, shm[n]["p99"] / 1e3,
                fl["rate"] / shm[n]["rate"], shm[n]["p50"] / fl["p50"]))
        print("# goal: floor/this <= 1.5x and p50/floor p50 <= 2x; 4 hosts vs journal: %.2fx" %
              (rows[-1][1]["rate"] / jr["rate"]))
        print("# %s" % v.stdout.strip())
    finally:
        pg.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


main()
