# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""daemon_runs - Table 2 (scope enforcement) through the real mncd.

A real mncd is started on a temporary socket with the eval policy (sink paths moved into the
temporary directory). The worker, coordinator and external agents are separate processes,
each in its own cgroup v2 child, so the daemon identifies them by the kernel. For every
scenario the scripted agents run two blocks:

  strict (the policy's contract: no sinks, no memory, one turn)
    in scope:     coordinator recv from its inbox (the delivery)
    out of scope: coordinator forward to external, log to ops_log, mem.put, tool calendar,
                  a second recv (turn used), external recv of the object (wrong recipient)
  permissive (share_availability: phi = {external, ops_log, calendar}, memory allowed)
    in scope:     coordinator recv, forward to external, external recv, log, mem.put, mem.get,
                  tool calendar

violation = scenario with at least one out-of-scope operation allowed; false allow = allowed
out-of-scope ops / out-of-scope ops; false block = denied in-scope ops / in-scope ops;
delivery = the coordinator received the strict object and it carries the selected slot.

MNC-L rows (charge=True) disclose with the state's subject under contracts that carry a budget,
so mncd selects by the subject's ledger history and charges its durable ledger
(STATE_DIR/ledger); the spend per subject is then read back with `mncctl ledger show`. The
MNC-C and reference-monitor rows disclose without a subject (MNC-C: nothing is charged).

run_table3 replays Table 3's per-subject sequence (schedule_meeting then resolve_conflict, no
delegation) through mncd, one daemon per budget B, and reads every subject's spend from the
ledger, so the in-harness sweep can be checked against the daemon's durable accounting.
"""
import contextlib
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))


def _policy_copy(src_dir, name, tmp):
    with open(os.path.join(src_dir, name)) as f:
        p = json.load(f)
    os.makedirs(os.path.join(tmp, "sinks"), exist_ok=True)
    for s in p.get("sinks", []):
        if "path" in s:
            s["path"] = os.path.join(tmp, "sinks", s["name"])
    mf = p.get("risk", {}).get("model_file")
    if mf:
        shutil.copy(os.path.join(src_dir, mf), os.path.join(tmp, mf))
    out = os.path.join(tmp, name)
    with open(out, "w") as f:
        json.dump(p, f)
    return out


def _message(r, oid):
    """The delivered text of object oid in a recv response ("" if not delivered)."""
    if not r.get("ok"):
        return ""
    if r.get("object", {}).get("id") == oid:
        return r.get("message", "")
    for m in r.get("messages", []):
        if m.get("object", {}).get("id") == oid:
            return m.get("message", "")
    return ""


def _allowed(r, oid):
    """An operation took effect: ok, and for a recv the object was actually delivered."""
    if not r.get("ok"):
        return False
    if "messages" in r or ("object" in r and "message" in r):
        return bool(_message(r, oid))
    return True


def _harness(build):
    os.environ["BUILD"] = build
    import test_mncd_harness as H  # noqa: E402  (reads BUILD at import)
    return H


@contextlib.contextmanager
def session(build, policy_dir, pfile, names):
    """A real mncd on a temporary socket with policy_dir/pfile (sink paths moved into its
    temporary directory) and the named agents, each a process in its own cgroup v2 child.
    Yields (harness, daemon, agents); stops them on exit and raises if mncd did not exit 0."""
    H = _harness(build)
    tmp = H.tmpdir()
    agents = H.Agents(names)
    d = H.Daemon(tmp, config={"cgroups": agents.cgroups_config()}, policy=_policy_copy(policy_dir, pfile, tmp))
    try:
        d.start()
        agents.start(d.sock)
        yield H, d, agents
    finally:
        agents.stop()
        rc = d.stop()
        log = d.read_log()
        H.cleanup(tmp)
    if rc != 0:
        raise RuntimeError("mncd exited %r: %s" % (rc, log[-2000:]))


def ledger_spend(mncctl, state_dir, subjects):
    """{subject: spent bits} read back from mncd's durable ledger with `mncctl ledger show`
    (read-only; works while mncd runs), plus the verified totals (charges, subjects)."""
    path = os.path.join(state_dir, "ledger")
    r = subprocess.run([mncctl, "ledger", "verify", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("mncctl ledger verify %s: %s" % (path, r.stdout + r.stderr))
    # "PATH: ok, N charges, M subjects"
    words = r.stdout.replace(",", " ").split()
    totals = {"charges": int(words[words.index("charges") - 1]),
              "subjects": int(words[words.index("subjects") - 1])}
    spent = {}
    for sub in subjects:
        r = subprocess.run([mncctl, "ledger", "show", "--json", "--file", path, sub],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("mncctl ledger show %s: %s" % (sub, r.stdout + r.stderr))
        o = json.loads(r.stdout)
        spent[sub] = o["spent"]
        totals["history"] = totals.get("history", 0) + len(o["history"])
    return spent, totals


def run_table2(scenarios, state_fn, runs, policy_dir, build):
    """runs: list of (row name, policy file, strict contract, charge). charge: disclose with the
    state's subject (MNC-L; mncd charges its ledger) and read the spend back; else the subject
    is dropped (MNC-C). Returns {row: stats dict}."""
    results = {}
    for row, pfile, strict, charge in runs:
        st = {"scen": 0, "viol": 0, "out": 0, "out_allowed": 0, "in": 0, "in_denied": 0,
              "delivered": 0, "errors": 0, "messages": []}
        with session(build, policy_dir, pfile, ["worker", "coordinator", "external"]) as (H, d, agents):
            who = agents.call("coordinator", "whoami")
            if who.get("agent") != "coordinator" or who.get("via") != "cgroup":
                raise RuntimeError("agent identity not from cgroup: %r" % who)
            for k, sc in enumerate(scenarios):
                state = state_fn(sc)
                if not charge:
                    state = {"fields": state["fields"]}
                st["scen"] += 1
                r = agents.call("worker", "disclose", contract=strict, state=state)
                if not r.get("ok"):
                    st["errors"] += 1
                    st["in"] += 1
                    st["in_denied"] += 1
                    continue
                oid = r["object"]["id"]
                rv = agents.call("coordinator", "recv")  # the inbox: queued first-hop delivery
                st["in"] += 1
                got = _message(rv, oid)
                st["messages"].append(got)
                if got and sc["selected_slot"] in got:
                    st["delivered"] += 1
                else:
                    st["in_denied"] += 1
                outs = [agents.call("coordinator", "forward", object=oid, to="external"),
                        agents.call("coordinator", "log", object=oid, sink="ops_log"),
                        agents.call("coordinator", "mem.put", key="s%d" % k, object=oid),
                        agents.call("coordinator", "tool", object=oid, tool="calendar"),
                        agents.call("coordinator", "recv", object=oid),
                        agents.call("external", "recv", object=oid)]
                allowed = sum(1 for o in outs if _allowed(o, oid))
                st["out"] += len(outs)
                st["out_allowed"] += allowed
                st["viol"] += 1 if allowed else 0
                # permissive block
                r = agents.call("worker", "disclose", contract="share_availability", state=state)
                if not r.get("ok"):
                    st["in"] += 7
                    st["in_denied"] += 7
                    continue
                pid = r["object"]["id"]
                ins = [agents.call("coordinator", "recv"),
                       agents.call("coordinator", "forward", object=pid, to="external"),
                       agents.call("external", "recv"),  # forwarded deliveries arrive in the inbox
                       agents.call("coordinator", "log", object=pid, sink="ops_log"),
                       agents.call("coordinator", "mem.put", key="p%d" % k, object=pid),
                       agents.call("coordinator", "mem.get", key="p%d" % k),
                       agents.call("coordinator", "tool", object=pid, tool="calendar")]
                st["in"] += len(ins)
                st["in_denied"] += sum(1 for o in ins if not _allowed(o, pid))
            if charge:
                subs = [state_fn(sc)["subject"] for sc in scenarios]
                spent, totals = ledger_spend(H.MNCCTL, d.state, subs)
                st["ledger"] = dict(totals, max_spent=max(spent.values()),
                                    avg_spent=sum(spent.values()) / len(spent))
        results[row] = st
    return results


def run_table3(scenarios, state_fn, budgets, contract_of, policy_dir, pfile, build):
    """Per B: one mncd (fresh state dir, so a fresh ledger); per scenario the worker discloses
    contract_of(schedule_meeting_nod, B) then contract_of(resolve_conflict_nod, B) with the
    subject, the coordinator receives each release. Returns {B: {"outcomes": [(o1, o4)],
    "spent": [bits per scenario, from the ledger], "charges", "subjects", "errors"}} where an
    outcome is "release" (selected and delivered) or mncd's outcome word (e.g. "abstained")."""
    out = {}
    for b in budgets:
        res = {"outcomes": [], "spent": [], "errors": 0}
        with session(build, policy_dir, pfile, ["worker", "coordinator"]) as (H, d, agents):
            for sc in scenarios:
                state = state_fn(sc)
                pair = []
                for cid in ("schedule_meeting_nod", "resolve_conflict_nod"):
                    r = agents.call("worker", "disclose", contract=contract_of(cid, b), state=state)
                    if r.get("ok") and r.get("outcome") == "selected":
                        got = _message(agents.call("coordinator", "recv"), r["object"]["id"])
                        pair.append("release" if got and sc["selected_slot"] in got else "undelivered")
                    elif r.get("outcome"):
                        pair.append(r["outcome"])
                    else:
                        res["errors"] += 1
                        pair.append("error: %s" % r.get("error", r.get("reason")))
                res["outcomes"].append(tuple(pair))
            subs = [state_fn(sc)["subject"] for sc in scenarios]
            spent, totals = ledger_spend(H.MNCCTL, d.state, subs)
            res["spent"] = [spent[s] for s in subs]
            res.update(totals)
        out[b] = res
    return out


def run_delegation(scenarios, state_fn, policy_dir, pfile, build, contracts):
    """MNC-L+D's per-subject sequence through mncd with the real broker process
    (tests/eval/eval_broker.py, built on user/python/broker_agent.py) connected in the broker
    role: the worker discloses each of contracts in turn with the subject; a pending
    delegation is polled (disclose.status) until mncd finishes it, and the coordinator's
    receipt is read from its inbox. Returns per scenario [(outcome, message, detail)] per
    contract, where outcome is "release" (selected), "delegated" (the broker's receipt was
    released) or mncd's final outcome word (e.g. "abstained" after a rejected receipt)."""
    import time
    out = []
    with session(build, policy_dir, pfile, ["worker", "coordinator", "broker"]) as (_H, d, agents):
        procs = os.path.join(agents.base, "broker", "cgroup.procs")

        def enter():
            with open(procs, "w") as f:
                f.write("0")
        broker = subprocess.Popen([sys.executable, os.path.join(HERE, "eval_broker.py"), d.sock],
                                  preexec_fn=enter, stdout=subprocess.PIPE, text=True)
        try:
            line = broker.stdout.readline()
            if line.split()[:2] != ["ready", "broker"]:
                raise RuntimeError("broker process did not come up as the broker: %r" % line)
            for sc in scenarios:
                state = state_fn(sc)
                row = []
                for cid in contracts:
                    r = agents.call("worker", "disclose", contract=cid, state=state)
                    if r.get("ok") and r.get("outcome") == "selected":
                        row.append(("release", _message(agents.call("coordinator", "recv"), r["object"]["id"]), ""))
                        continue
                    if r.get("outcome") == "pending_delegation":
                        deadline = time.time() + 30
                        while True:
                            s = agents.call("worker", "disclose.status", request=r["request"])
                            if s.get("outcome") not in ("pending_delegation", None) or time.time() > deadline:
                                break
                            time.sleep(0.01)
                        if s.get("ok") and s.get("delegated"):
                            got = _message(agents.call("coordinator", "recv"), s["object"]["id"])
                            row.append(("delegated", got, s.get("detail", "")))
                        else:
                            row.append((s.get("outcome", "error"), "", s.get("detail", s.get("error", ""))))
                        continue
                    row.append((r.get("outcome") or "error", "", r.get("detail", r.get("error", ""))))
                out.append(row)
        finally:
            broker.kill()
            broker.wait()
    return out
