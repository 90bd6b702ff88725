# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""sensitivity - how far Tables 3 and 4's MNC-L results rest on margins (docs/eval.md,
"Sensitivity").

Two sweeps, both through the real tools:

  budget  B over a grid around every threshold that matters: the frozen model's charge for each
          movable value and the data's realised leakage of it. At each B: MNC-L's
          resolve_conflict outcome per scenario (libmnc selection with that budget), the data's
          no-safe set (leakage > B), recall on it and safe cases withheld.
  mix     the development split's tier mix shifted: k rows of one tier dropped or duplicated,
          the risk model recalibrated with `mncctl calibrate` exactly as the freeze does, and
          the charges and Table 4's outcomes at the frozen B recomputed on the evaluated
          scenarios. Shows how many development rows separate the reported result from another.
"""
import json
import os
import shutil
import subprocess
import tempfile

import evaldata as E


def _charges(sel, policy, scen, budget=None):
    """resolve_conflict_nod per scenario under policy: (outcome, risk of the chosen or of the
    cheapest sufficient candidate)."""
    reqs = [{"contract": "resolve_conflict_nod", "state": E.calbench_state(sc)} for sc in scen]
    if budget is not None:
        for q in reqs:
            q.update(budget=budget, spent=0)
    out = []
    for o in sel(policy, reqs):
        ok = [c["risk"] for c in o["candidates"] if c["verdict"] in ("ok", "over_budget", "over_epsilon")
              and c["risk"] is not None]
        out.append((o["outcome"], o["risk"] if o["outcome"] == "selected" else (min(ok) if ok else None)))
    return out


def _by_movable(scen, charges):
    out = {}
    for sc, (_o, r) in zip(scen, charges):
        if r is not None:
            out.setdefault(sc["movable"], set()).add(round(r, 6))
    return {v: sorted(x) for v, x in out.items()}


def _outcomes(scen, released, leak, B):
    truth = [leak[sc["movable"]] > B for sc in scen]
    pos = [not r for r, t in zip(released, truth) if t]
    neg = [not r for r, t in zip(released, truth) if not t]
    return {"released": sum(released) / len(released), "n_nosafe": len(pos), "n_safe": len(neg),
            "recall": (sum(pos) / len(pos)) if pos else None,
            "withheld_safe": (sum(neg) / len(neg)) if neg else None}


def budget_sweep(sel, scen, leak, b_frozen, budgets):
    base = _by_movable(scen, _charges(sel, "calbench-l.json", scen))
    marks = sorted({x for xs in base.values() for x in xs} | set(leak.values()))
    grid = sorted({round(b, 3) for m in marks for b in (m - 0.005, m + 0.005) if b > 0} | {b_frozen} | set(budgets))
    rows = []
    for B in grid:
        ch = _charges(sel, "calbench-l.json", scen, budget=B)
        released = [o == "selected" for o, _r in ch]
        rows.append(dict(_outcomes(scen, released, leak, B), B=B))
    return {"charges": base, "leak": leak, "rows": rows}


def mix_sweep(sel, scen, leak, b_frozen, policy_dir, mncctl, steps, only=None):
    """steps: row counts k; for each tier T of the split (or of `only`) and each k, k rows of
    tier T dropped (k < 0) or duplicated (k > 0)."""
    with open(os.path.join(policy_dir, "FROZEN.json")) as f:
        man = json.load(f)
    dev = E.read_jsonl(os.path.join(policy_dir, man["dev"]["calbench"]["file"]))
    tiers = sorted({r["privacy_tier"] for r in dev})
    tmp = tempfile.mkdtemp(prefix="mnc-eval-mix.")
    rows = []
    try:
        with open(os.path.join(policy_dir, "calbench-l.json")) as f:
            pol = json.load(f)
        for tier in [t for t in tiers if not only or t in only]:
            for k in steps:
                mine = [r for r in dev if r["privacy_tier"] == tier]
                if k < 0 and -k >= len(mine):
                    continue
                if k < 0:
                    drop = {r["id"] for r in mine[:(-k)]}
                    rows_k = [r for r in dev if r["id"] not in drop]
                else:
                    rows_k = dev + [dict(r, id="%s#dup%d" % (r["id"], i)) for i, r in
                                    enumerate((mine * (k // max(1, len(mine)) + 1))[:k])]
                d = os.path.join(tmp, "%s_%d" % (tier, k))
                os.makedirs(d)
                devf = os.path.join(d, "dev.jsonl")
                with open(devf, "w") as f:
                    f.writelines(json.dumps(r, sort_keys=True) + "\n" for r in rows_k)
                model = os.path.join(d, "calbench-risk.json")
                r = subprocess.run([mncctl, "calibrate", "--dev", devf, "--out", model, "--secret-field",
                                    "privacy_tier", "--fields", "movable", "--independent", E.INDEPENDENT,
                                    "--alpha", "0.5", "--force"], capture_output=True, text=True)
                if r.returncode != 0:
                    raise RuntimeError("mncctl calibrate: " + r.stdout + r.stderr)
                with open(model) as f:
                    m = json.load(f)
                p = dict(pol, risk={"model": "bayes", "model_file": "calbench-risk.json"})
                with open(os.path.join(d, "calbench-l.json"), "w") as f:
                    json.dump(p, f)
                ch = _charges(sel, os.path.join(d, "calbench-l.json"), scen, budget=b_frozen)
                released = [o == "selected" for o, _r in ch]
                charges = _by_movable(scen, _charges(sel, os.path.join(d, "calbench-l.json"), scen))
                prior = dict(zip(m["secret"]["domain"], m["secret"]["prior"]))
                rows.append(dict(_outcomes(scen, released, leak, b_frozen), tier=tier, k=k, n=len(rows_k),
                                 prior=prior, charges=charges))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"tiers": tiers, "n_dev": len(dev), "rows": rows, "B": b_frozen}
