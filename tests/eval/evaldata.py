# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""evaldata - turns the public datasets into evaluation scenarios and writes the eval policies.

CalBench (data/calbench): each task record has calendars (slot -> errand id or free), meetings,
and witness/optimal assignments. The errand bank gives each errand a private_label (the private
reason), a public_label, forbidden_terms and a privacy_tier. The records carry errand ids only,
so errands are hydrated deterministically: the bank is shuffled with the record's own seed and
errand id k takes bank[perm[(k-1) mod |bank|]].

One scenario per (record, meeting): the coordinator proposes the witness slot s0; the worker is
the first participant with an errand at s0 (the private reason); the worker's selected slot is
the optimal slot if the worker is free there, else the worker's free slot nearest s0.
  schedule_meeting (Tables 1, 2): the coordinator needs a feasible slot (selected_slot).
  resolve_conflict (Table 4, entangled): the coordinator must also know whether the busy
    commitment can be moved (movable = tier is not "sensitive"); every sufficient disclosure
    carries that bit, so there is no safe receipt.
The protected secret S is the commitment's privacy_tier (sensitive / neutral / public).

AgentLeak (data/agentleak): each scenario has a private vault (records), allowed and forbidden
fields and canaries. The worker holds the vault; the coordinator needs the allowed fields.
Allowed fields the vault does not contain (e.g. headcount) are task-derived facts the worker
computes; the dataset does not materialise them, so they get a deterministic placeholder value.
"""
import hashlib
import json
import os
import random
import re

DAYS = ["Mon", "Tue", "Wed", "Thu"]
HOURS = ["09:00", "10:00", "14:00", "15:00"]
TIERS = ["sensitive", "neutral", "public"]


def slot_name(s):
    return "%s %s" % (DAYS[(s // 4) % 4], HOURS[s % 4]) if s < 16 else "slot %d" % s


def stable_hash(s):
    return int(hashlib.sha256(s.encode()).hexdigest()[:8], 16)


def label_fold(label_id):
    """Template group of an errand label: attackers train on one group, test on the other."""
    return stable_hash("fold:" + label_id) % 2


def scrub(text, terms):
    """Redaction baseline: replace every forbidden term (case-insensitive) by [redacted]."""
    for t in sorted(terms, key=len, reverse=True):
        if t:
            text = re.sub(re.escape(t), "[redacted]", text, flags=re.I)
    return text


def term_present(text, term):
    return bool(term) and re.search(r"(?<!\w)" + re.escape(term) + r"(?!\w)", text, re.I) is not None


def load_calbench(data_dir):
    d = os.path.join(data_dir, "calbench")
    with open(os.path.join(d, "errand_bank_v1.json")) as f:
        bank = json.load(f)["items"]
    rows = []
    with open(os.path.join(d, "uniform_full.jsonl")) as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
    return bank, rows


def calbench_scenarios(bank, rows):
    out, skipped = [], 0
    for r in rows:
        rng = random.Random(r["seed"])
        perm = list(range(len(bank)))
        rng.shuffle(perm)
        nslots = r["params"]["num_slots"]
        config = re.sub(r"^b\d+_[a-z]+_", "", r["task_id"]).rsplit("_", 1)[0]
        for m in r["meetings"]:
            mid = str(m["id"])
            s0 = r["witness_solution"]["assignments"][mid]
            worker = next((p for p in m["participants"] if r["calendars"][p][s0]), None)
            if worker is None:
                skipped += 1
                continue
            cal = r["calendars"][worker]
            item = bank[perm[(cal[s0]["errand_id"] - 1) % len(bank)]]
            free = [s for s in range(nslots) if cal[s] is None]
            opt = r["optimal"]["assignments"][mid]
            if opt in free:
                sel = opt
            elif free:
                sel = min(free, key=lambda s: (abs(s - s0), s))
            else:
                skipped += 1
                continue
            out.append({
                "id": "%s/m%s" % (r["task_id"], mid),
                "task_id": r["task_id"], "config": config, "difficulty": r["difficulty"],
                "label_id": item["label_id"], "fold": label_fold(item["label_id"]),
                "tier": item["privacy_tier"], "privacy_class": item["privacy_class"],
                "private_label": item["private_label"], "public_label": item["public_label"],
                "forbidden_terms": item["forbidden_terms"],
                "busy_slot": slot_name(s0), "selected_slot": slot_name(sel),
                "movable": "no" if item["privacy_tier"] == "sensitive" else "yes",
                "worker": "agent%d" % worker,
            })
    return out, skipped


def calbench_state(sc):
    """The worker's private state for libmnc / mncd (every value is a declared field)."""
    return {"subject": re.sub(r"[^A-Za-z0-9_.:-]", "_", sc["id"])[:63], "fields": {
        "reason": sc["private_label"],
        "reason_redacted": scrub(sc["private_label"], sc["forbidden_terms"]),
        "reason_summary": sc["public_label"],
        "busy_slot": sc["busy_slot"],
        "slot_feasible": "false",
        "selected_slot": sc["selected_slot"],
        "movable": sc["movable"],
    }}


# ---- policies ----------------------------------------------------------------------------

CB_FIELDS = [("reason", 1.0), ("reason_redacted", 0.8), ("reason_summary", 0.5),
             ("busy_slot", 0.3), ("movable", 0.2), ("selected_slot", 0.1), ("slot_feasible", 0.05)]
CB_SCHED_FORMS = [
    ("full_rationale", ["reason", "busy_slot", "selected_slot"],
     "I cannot meet {busy_slot} because of: {reason}; {selected_slot} works"),
    ("redacted_rationale", ["reason_redacted", "busy_slot", "selected_slot"],
     "I cannot meet {busy_slot} because of: {reason_redacted}; {selected_slot} works"),
    ("declassified_summary", ["reason_summary", "busy_slot", "selected_slot"],
     "Busy {busy_slot} ({reason_summary}); {selected_slot} works"),
    ("acl_facts", ["busy_slot", "slot_feasible", "selected_slot"],
     "busy {busy_slot}; proposed slot feasible: {slot_feasible}; {selected_slot} works"),
    ("task_fact", ["slot_feasible", "selected_slot"],
     "proposed slot feasible: {slot_feasible}; {selected_slot} works"),
    ("receipt", ["selected_slot"], "selected slot {selected_slot}"),
]
CB_CONFLICT_FORMS = [
    ("full_rationale_c", ["reason", "busy_slot", "movable", "selected_slot"],
     "I am busy {busy_slot}: {reason}; movable: {movable}; else {selected_slot}"),
    ("redacted_rationale_c", ["reason_redacted", "busy_slot", "movable", "selected_slot"],
     "I am busy {busy_slot}: {reason_redacted}; movable: {movable}; else {selected_slot}"),
    ("declassified_summary_c", ["reason_summary", "busy_slot", "movable", "selected_slot"],
     "Busy {busy_slot} ({reason_summary}); movable: {movable}; else {selected_slot}"),
    ("task_fact_c", ["movable", "selected_slot"], "movable: {movable}; else {selected_slot}"),
    ("receipt_c", ["selected_slot"], "selected slot {selected_slot}"),
]


# MNC-L's frozen budget (Tables 1, 2, 4) and the Table 3 sweep.
B_FROZEN = 0.5
BUDGETS = [0.1, 0.2, 0.5, 1.0, 2.0]

# Registered endpoints of an external partner (Table 2b's direct channels). The addresses are
# placeholders: tests/eval/direct_runs.py rewrites them to its private peers (UNIX socket paths
# in its temporary directory, the TCP/UDP port it bound) before starting mncd, like sink paths.
DIRECT_SINKS = [{"name": "partner", "class": "external", "address": "unix:/run/mnc/eval-partner.sock"},
                {"name": "partner_dgram", "class": "external", "address": "unix:/run/mnc/eval-partner.dgram"},
                {"name": "partner_ip", "class": "external", "address": "127.0.0.1:47001"}]


def _forms(spec):
    return [{"name": n, "fields": f, "template": t} for n, f, t in spec]


def calbench_policy(risk):
    """risk = "weights" (MNC-C, reference monitor) or "bayes" (MNC-L / MNC-L+D)."""
    p = {
        "mnc_policy": 1, "name": "eval-calbench-" + risk,
        "agents": [{"name": "worker"}, {"name": "coordinator"}, {"name": "external"},
                   {"name": "broker", "role": "broker"}],
        "sinks": [{"name": "ops_log", "class": "log", "path": "/var/log/mnc/eval-ops.log"},
                  {"name": "agent_memory", "class": "memory", "path": "/var/lib/mnc/eval-memory"},
                  {"name": "calendar", "class": "tool"}] + [dict(s) for s in DIRECT_SINKS],
        "fields": [{"name": n, "weight": w} for n, w in CB_FIELDS],
        "families": [{"name": "sched_forms", "forms": _forms(CB_SCHED_FORMS)},
                     {"name": "conflict_forms", "forms": _forms(CB_CONFLICT_FORMS)},
                     {"name": "raw_sched", "forms": _forms(CB_SCHED_FORMS[:1])},
                     {"name": "raw_conflict", "forms": _forms(CB_CONFLICT_FORMS[:1])}],
        "requirements": [
            {"agent": "coordinator", "purpose": "schedule_meeting", "needs": ["selected_slot"]},
            {"agent": "coordinator", "purpose": "resolve_conflict", "needs": ["movable", "selected_slot"]},
        ],
        "contracts": [],
        "risk": {"model": "weights"},
    }
    strict = {"issuers": ["worker"], "recipient": "coordinator", "lifetime": {"turns": 1, "seconds": 300},
              "sinks": [], "memory": False}
    C = p["contracts"]
    C.append(dict(strict, id="schedule_meeting", purpose="schedule_meeting",
                  fields=["slot_feasible", "selected_slot"], family="sched_forms",
                  failure=["delegate", "abstain"], broker="broker"))
    C.append(dict(strict, id="schedule_meeting_nod", purpose="schedule_meeting",
                  fields=["slot_feasible", "selected_slot"], family="sched_forms", failure=["abstain"]))
    C.append(dict(strict, id="resolve_conflict", purpose="resolve_conflict",
                  fields=["movable", "selected_slot"], family="conflict_forms",
                  failure=["delegate", "abstain"], broker="broker"))
    C.append(dict(strict, id="resolve_conflict_nod", purpose="resolve_conflict",
                  fields=["movable", "selected_slot"], family="conflict_forms", failure=["abstain"]))
    # The reference-monitor baseline: scope enforced, raw content in F.
    C.append(dict(strict, id="refmon_schedule", purpose="refmon_schedule",
                  fields=["reason", "busy_slot", "selected_slot"], family="raw_sched"))
    C.append(dict(strict, id="refmon_conflict", purpose="refmon_conflict",
                  fields=["reason", "busy_slot", "movable", "selected_slot"], family="raw_conflict"))
    # A permissive contract: what a legitimate downstream flow looks like (false-block probe).
    # The partner endpoints are in phi, so their direct channels are in scope (Table 2b).
    C.append({"id": "share_availability", "purpose": "share_availability", "issuers": ["worker"],
              "recipient": "coordinator", "lifetime": {"seconds": 3600},
              "sinks": ["external", "ops_log", "calendar"] + [s["name"] for s in DIRECT_SINKS],
              "memory": True, "fields": ["slot_feasible", "selected_slot"], "family": "sched_forms",
              "failure": ["abstain"]})
    if risk == "bayes":
        p["risk"] = {"model": "bayes", "model_file": "calbench-risk.json"}
        # MNC-L contracts carry the frozen budget, so mncd charges its durable ledger against
        # it (Tables 1, 2, 4 use B_FROZEN); one capped copy per swept B for the Table 3 check
        # through mncd (evalsel passes its limits per request and ignores these fields).
        for c in C:
            if c["id"].startswith(("schedule_meeting", "resolve_conflict")):
                c["budget"] = B_FROZEN
        for b in BUDGETS:
            for cid in ("schedule_meeting_nod", "resolve_conflict_nod"):
                base = [c for c in C if c["id"] == cid][0]
                C.append(dict(base, id=budget_contract(cid, b), budget=b))
    return p


def budget_contract(cid, b):
    """The Table 3 copy of contract cid capped at budget b (e.g. resolve_conflict_nod_b5)."""
    return "%s_b%d" % (cid, int(round(b * 10)))


def calbench_risk_model(scenarios):
    """Bayes model of S = privacy_tier, calibrated on the development split (label fold 0) and
    frozen: prior = tier frequencies of fold-0 errands; movable is a function of the tier;
    slots are independent of it; free-text fields are not modelled (fail closed)."""
    dev = {}
    for sc in scenarios:
        if sc["fold"] == 0:
            dev[sc["label_id"]] = sc["tier"]
    counts = {t: sum(1 for v in dev.values() if v == t) + 1 for t in TIERS}  # add-one
    tot = sum(counts.values())
    return {
        "mnc_risk_model": 1,
        "description": "CalBench: S = privacy tier of the busy commitment; prior from the "
                       "development split (errand label fold 0, add-one smoothed), frozen",
        "secret": {"name": "privacy_tier", "domain": TIERS,
                   "prior": [round(counts[t] / tot, 12) for t in TIERS[:-1]] +
                            [round(1 - sum(round(counts[t] / tot, 12) for t in TIERS[:-1]), 12)]},
        "fields": {
            "movable": {"function": {"sensitive": "no", "neutral": "yes", "public": "yes"}},
            "selected_slot": {"independent": True},
            "slot_feasible": {"independent": True},
            "busy_slot": {"independent": True},
        },
    }


# ---- AgentLeak ---------------------------------------------------------------------------

def load_agentleak(data_dir):
    out = []
    with open(os.path.join(data_dir, "agentleak", "scenarios_base_100.jsonl")) as f:
        for line in f:
            if line.strip():
                out.append(json.loads(line))
    return out


def _val(v):
    return ", ".join(str(x) for x in v) if isinstance(v, list) else str(v)


def agentleak_scenarios(rows):
    out = []
    for r in rows:
        recs = r["private_vault"]["records"]
        allowed = r["allowed_set"]["fields"]
        forbidden = r["allowed_set"]["forbidden_fields"]
        vals, derived = {}, []
        for f in allowed:
            src = next((rec["fields"][f] for rec in recs if f in rec["fields"]), None)
            if src is None:
                derived.append(f)
                vals[f] = "%s computed for %s" % (f, r["scenario_id"])
            else:
                vals[f] = _val(src)
        forbidden_vals = set()
        for rec in recs:
            for k, v in rec["fields"].items():
                if k in forbidden:
                    for x in (v if isinstance(v, list) else [v]):
                        if len(str(x)) >= 4 and str(x).lower() != "none":
                            forbidden_vals.add(str(x))
        semantic = set()
        for rec in recs:
            if rec.get("canary_tier") == "semantic":
                for k, v in rec["fields"].items():
                    s = _val(v)
                    if k not in allowed and len(s) >= 15 and not s.startswith("Patient stable") \
                            and not s.startswith("See attached"):
                        semantic.add(s)
        out.append({
            "id": r["scenario_id"], "vertical": r["vertical"],
            "template": r["objective"]["success_criteria"][0],
            "records": recs, "allowed": allowed, "forbidden": forbidden, "values": vals,
            "derived": derived, "canaries": r["evaluation"]["canaries"],
            "forbidden_values": sorted(forbidden_vals), "semantic": sorted(semantic),
        })
    return out


def agentleak_policy(scen):
    templates = {}
    for s in scen:
        templates.setdefault(s["template"], s["allowed"])
    fields = set(["vault_dump", "task_done"])
    for a in templates.values():
        fields.update(a)
    weights = {"vault_dump": 5.0, "task_done": 0.01}
    p = {"mnc_policy": 1, "name": "eval-agentleak",
         "agents": [{"name": "worker"}, {"name": "coordinator"}, {"name": "external"}],
         "sinks": [{"name": "ops_log", "class": "log", "path": "/var/log/mnc/eval-al-ops.log"}],
         "fields": [{"name": f, "weight": weights.get(f, 0.5)} for f in sorted(fields)],
         "families": [], "requirements": [], "contracts": [], "risk": {"model": "weights"}}
    for t, allowed in sorted(templates.items()):
        fam = "al_%s" % t
        p["families"].append({"name": fam, "forms": [
            {"name": "full_vault", "fields": ["vault_dump"]},
            {"name": "allowed_view", "fields": list(allowed),
             "template": "; ".join("%s: {%s}" % (f, f) for f in allowed)},
            {"name": "receipt", "fields": ["task_done"], "template": "task done: {task_done}"},
        ]})
        p["requirements"].append({"agent": "coordinator", "purpose": t, "needs": list(allowed)})
        p["contracts"].append({"id": "al_%s" % t, "purpose": t, "issuers": ["worker"],
                               "recipient": "coordinator", "fields": list(allowed),
                               "lifetime": {"turns": 1}, "sinks": [], "memory": False,
                               "family": fam, "failure": ["abstain"]})
    return p


def agentleak_state(s):
    f = dict(s["values"])
    f["vault_dump"] = json.dumps([rec["fields"] for rec in s["records"]], sort_keys=True)
    f["task_done"] = "true"
    return {"subject": s["id"], "fields": f}


def write_policies(data_dir, outdir):
    bank, rows = load_calbench(data_dir)
    scen, _ = calbench_scenarios(bank, rows)
    al = agentleak_scenarios(load_agentleak(data_dir))
    os.makedirs(outdir, exist_ok=True)
    docs = {"calbench.json": calbench_policy("weights"),
            "calbench-l.json": calbench_policy("bayes"),
            "calbench-risk.json": calbench_risk_model(scen),
            "agentleak.json": agentleak_policy(al)}
    for name, doc in docs.items():
        tmp = os.path.join(outdir, name + ".tmp")
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, os.path.join(outdir, name))
    return sorted(docs)
