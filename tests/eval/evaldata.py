# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""evaldata - turns the public datasets into evaluation scenarios and freezes the eval policies.

Input files are taken by path (plain or gzipped, the published schemas); the defaults are the
vendored copies in tests/eval/data (SOURCE.md there names upstream, version and sha256).

CalBench: each task record has calendars (per participant, one entry per slot: null when free,
else a commitment) and meetings with witness/optimal assignments; num_slots comes from the
record's params. A label bank (errand or meeting labels; its bank_type says which) gives each
label a private_label (the private reason), a public_label, forbidden_terms and a
privacy_tier; the tiers are whatever the bank uses. A commitment is hydrated from the bank:
  - an entry that names a bank label ("label_id") uses it (follow upstream where it assigns);
  - an entry "<bank_type>_id": k (the shipped records: errand_id) takes bank[perm[(k-1) mod
    |bank|]], perm = the bank order shuffled with the record's own seed (deterministic);
  - any other commitment (e.g. a meeting entry against an errand bank) has no label in this
    bank: the scenario is skipped and counted, never guessed.
One scenario per (record, meeting): the coordinator proposes the witness slot s0; the worker is
the first participant busy at s0 (the private reason); the worker's selected slot is the optimal
slot if the worker is free there, else the worker's free slot nearest s0.
  schedule_meeting (Tables 1, 2): the coordinator needs a feasible slot (selected_slot).
  resolve_conflict (Table 4, entangled): the coordinator must also know whether the busy
    commitment can be moved (movable = "no" iff its tier is the sensitive tier, --sensitive-tier,
    default "sensitive", which must occur in the bank); every sufficient disclosure carries
    that bit.
Slots are named "slot NN" by index, zero-padded to one width per record so that no slot name
is a prefix of another. The protected secret S is the commitment's privacy_tier.

AgentLeak: each scenario has a private vault (records), allowed and forbidden fields and
canaries. The worker holds the vault; the coordinator needs the allowed fields. The task kind
(one contract each) is the scenario's vertical and its objective's success_criteria, all of
them. Allowed fields the vault does not contain (e.g. headcount) are task-derived facts the
worker computes; the dataset does not materialise them, so they get a deterministic
placeholder value, and task success is reported with and without them. Semantic canaries:
the values of a semantic-tier record's non-allowed fields that occur in no record of another
canary tier anywhere in the file (boilerplate such as a shared "see attached" note is not a
canary because the other tiers carry it too).

Development / evaluation split (freeze_policies, docs/eval.md "Split"): CalBench by label (a
third of the bank's labels, by a stable hash, with every scenario of those labels), AgentLeak
by scenario (three in ten, by a stable hash). The frozen policies see only the development
split; the evaluation drops every scenario of a development label / id.
"""
import gzip
import hashlib
import json
import os
import random
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
DEFAULT_FILES = {"calbench_tasks": os.path.join(DATA, "calbench", "uniform_full.jsonl.gz"),
                 "calbench_bank": os.path.join(DATA, "calbench", "errand_bank_v1.json.gz"),
                 "agentleak": os.path.join(DATA, "agentleak", "scenarios_base_100.jsonl.gz")}
SENSITIVE_TIER = "sensitive"


def slot_name(s, nslots):
    return "slot %0*d" % (max(2, len(str(nslots - 1))), s)


def stable_hash(s):
    return int(hashlib.sha256(s.encode()).hexdigest()[:8], 16)


def label_fold(label_id):
    """Template group of an errand label: attackers train on one group, test on the other."""
    return stable_hash("fold:" + label_id) % 2


def dev_label(label_id):
    """CalBench development split: a third of the labels (disjoint from every evaluated one)."""
    return stable_hash("dev:" + label_id) % 3 == 0


def dev_scenario(scenario_id):
    """AgentLeak development split: three scenarios in ten."""
    return stable_hash("dev:" + scenario_id) % 10 < 3


def scrub(text, terms):
    """Redaction baseline: replace every forbidden term (case-insensitive) by [redacted]."""
    for t in sorted(terms, key=len, reverse=True):
        if t:
            text = re.sub(re.escape(t), "[redacted]", text, flags=re.I)
    return text


def term_present(text, term):
    return bool(term) and re.search(r"(?<!\w)" + re.escape(term) + r"(?!\w)", text, re.I) is not None


def _open(path):
    return gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else open(path, encoding="utf-8")


def read_jsonl(path):
    out = []
    with _open(path) as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError as e:
                    raise ValueError("%s:%d: %s" % (path, n, e))
    return out


def load_calbench(tasks_path, bank_path):
    with _open(bank_path) as f:
        bank = json.load(f)
    if not isinstance(bank.get("items"), list) or not bank["items"]:
        raise ValueError("%s: no label items" % bank_path)
    return bank, read_jsonl(tasks_path)


def tiers_of(bank):
    return sorted({it["privacy_tier"] for it in bank["items"]})


def calbench_scenarios(bank, rows, sensitive=SENSITIVE_TIER):
    """Returns (scenarios, skipped: {reason: count})."""
    items = bank["items"]
    if sensitive not in tiers_of(bank):
        raise ValueError("sensitive tier %r is not a tier of the bank (%s)" % (sensitive, tiers_of(bank)))
    by_label = {it["label_id"]: it for it in items}
    id_key = "%s_id" % bank.get("bank_type", "errand")
    out, skipped = [], {}

    def skip(why):
        skipped[why] = skipped.get(why, 0) + 1

    for r in rows:
        rng = random.Random(r["seed"])
        perm = list(range(len(items)))
        rng.shuffle(perm)
        nslots = r["params"]["num_slots"]
        config = re.sub(r"^b\d+_[a-z]+_", "", r["task_id"]).rsplit("_", 1)[0]
        for m in r["meetings"]:
            mid = str(m["id"])
            s0 = r["witness_solution"]["assignments"][mid]
            worker = next((p for p in m["participants"] if r["calendars"][p][s0]), None)
            if worker is None:
                skip("nobody busy at the proposed slot")
                continue
            cal = r["calendars"][worker]
            entry = cal[s0]
            if isinstance(entry, dict) and entry.get("label_id") in by_label:
                item = by_label[entry["label_id"]]
            elif isinstance(entry, dict) and isinstance(entry.get(id_key), int):
                item = items[perm[(entry[id_key] - 1) % len(items)]]
            else:
                skip("commitment without a label in this %s bank" % bank.get("bank_type", "errand"))
                continue
            free = [s for s in range(nslots) if cal[s] is None]
            opt = r["optimal"]["assignments"][mid]
            if opt in free:
                sel = opt
            elif free:
                sel = min(free, key=lambda s: (abs(s - s0), s))
            else:
                skip("worker has no free slot")
                continue
            out.append({
                "id": "%s/m%s" % (r["task_id"], mid),
                "task_id": r["task_id"], "config": config, "difficulty": r["difficulty"],
                "label_id": item["label_id"], "fold": label_fold(item["label_id"]),
                "dev": dev_label(item["label_id"]),
                "tier": item["privacy_tier"], "privacy_class": item["privacy_class"],
                "private_label": item["private_label"], "public_label": item["public_label"],
                "forbidden_terms": item["forbidden_terms"],
                "busy_slot": slot_name(s0, nslots), "selected_slot": slot_name(sel, nslots),
                "movable": "no" if item["privacy_tier"] == sensitive else "yes",
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
     "busy {busy_slot}; slot feasible: {slot_feasible}; {selected_slot} works"),
    ("task_fact", ["slot_feasible", "selected_slot"],
     "slot feasible: {slot_feasible}; {selected_slot} works"),
    ("receipt", ["selected_slot"], "meet at {selected_slot}"),
]
CB_CONFLICT_FORMS = [
    ("full_rationale_c", ["reason", "busy_slot", "movable", "selected_slot"],
     "I am busy {busy_slot}: {reason}; movable: {movable}; else {selected_slot}"),
    ("redacted_rationale_c", ["reason_redacted", "busy_slot", "movable", "selected_slot"],
     "I am busy {busy_slot}: {reason_redacted}; movable: {movable}; else {selected_slot}"),
    ("declassified_summary_c", ["reason_summary", "busy_slot", "movable", "selected_slot"],
     "Busy {busy_slot} ({reason_summary}); movable: {movable}; else {selected_slot}"),
    ("task_fact_c", ["movable", "selected_slot"], "movable: {movable}; else {selected_slot}"),
    ("receipt_c", ["selected_slot"], "meet at {selected_slot}"),
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


# ---- AgentLeak ---------------------------------------------------------------------------

def load_agentleak(path):
    return read_jsonl(path)


def _val(v):
    return ", ".join(str(x) for x in v) if isinstance(v, list) else str(v)


def task_kind(r):
    """The AgentLeak task kind a deployer writes one contract for: the vertical and every
    success criterion of the objective (not just the first)."""
    return "%s/%s" % (r["vertical"], "+".join(r["objective"]["success_criteria"]))


def contract_id(kind):
    return "al_" + re.sub(r"[^A-Za-z0-9_]", "_", kind)[:60]


def agentleak_scenarios(rows):
    # values that occur in records of a non-semantic canary tier anywhere in the file are
    # boilerplate, not semantic canaries
    common = set()
    for r in rows:
        for rec in r["private_vault"]["records"]:
            if rec.get("canary_tier") != "semantic":
                common.update(_val(v) for v in rec["fields"].values())
    out = []
    for r in rows:
        recs = r["private_vault"]["records"]
        allowed = r["allowed_set"]["fields"]
        forbidden = r["allowed_set"].get("forbidden_fields", [])
        vault = {}
        for rec in recs:
            for k, v in rec["fields"].items():
                vault.setdefault(k, _val(v))
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
                    sv = _val(v)
                    if k not in allowed and len(sv) >= 15 and sv not in common:
                        semantic.add(sv)
        out.append({
            "id": r["scenario_id"], "vertical": r["vertical"], "kind": task_kind(r),
            "dev": dev_scenario(r["scenario_id"]),
            "records": recs, "allowed": allowed, "forbidden": forbidden, "vault": vault,
            "derived": [f for f in allowed if f not in vault],
            "canaries": r["evaluation"]["canaries"],
            "forbidden_values": sorted(forbidden_vals), "semantic": sorted(semantic),
        })
    return out


def field_value(s, f):
    """The worker's value of field f: from the vault, else the task-derived placeholder."""
    return s["vault"].get(f, "%s computed for %s" % (f, s["id"]))


def agentleak_policy(dev):
    """One contract per task kind seen in the development split. Its fields are the allowed
    fields every development scenario of that kind agrees on (the intersection: where the
    development data disagree, the contract carries only what all of them allow); the number of
    disagreeing kinds is returned with the policy."""
    kinds = {}
    for s in dev:
        kinds.setdefault(s["kind"], []).append(s["allowed"])
    conflicts = 0
    fields = set(["vault_dump", "task_done"])
    contracts = {}
    for k, sets in sorted(kinds.items()):
        common = [f for f in sets[0] if all(f in a for a in sets[1:])]
        if any(set(a) != set(sets[0]) for a in sets[1:]):
            conflicts += 1
        contracts[k] = common
        fields.update(common)
    weights = {"vault_dump": 5.0, "task_done": 0.01}
    p = {"mnc_policy": 1, "name": "eval-agentleak",
         "agents": [{"name": "worker"}, {"name": "coordinator"}, {"name": "external"}],
         "sinks": [{"name": "ops_log", "class": "log", "path": "/var/log/mnc/eval-al-ops.log"}],
         "fields": [{"name": f, "weight": weights.get(f, 0.5)} for f in sorted(fields)],
         "families": [], "requirements": [], "contracts": [], "risk": {"model": "weights"}}
    for k, allowed in sorted(contracts.items()):
        cid = contract_id(k)
        p["families"].append({"name": cid, "forms": [
            {"name": "full_vault", "fields": ["vault_dump"]},
            {"name": "allowed_view", "fields": list(allowed),
             "template": "; ".join("%s: {%s}" % (f, f) for f in allowed)},
            {"name": "receipt", "fields": ["task_done"], "template": "task done: {task_done}"},
        ]})
        p["requirements"].append({"agent": "coordinator", "purpose": cid, "needs": list(allowed)})
        p["contracts"].append({"id": cid, "purpose": cid, "issuers": ["worker"],
                               "recipient": "coordinator", "fields": list(allowed),
                               "lifetime": {"turns": 1}, "sinks": [], "memory": False,
                               "family": cid, "failure": ["abstain"]})
    return p, conflicts


def agentleak_state(s, policy_fields):
    """The worker's state: a value for every policy field this scenario's vault or task can
    supply (vault value, or the placeholder for a task-derived field the scenario allows)."""
    f = {}
    for name in policy_fields:
        if name in s["vault"] or name in s["allowed"]:
            f[name] = field_value(s, name)
    f["vault_dump"] = json.dumps([rec["fields"] for rec in s["records"]], sort_keys=True)
    f["task_done"] = "true"
    return {"subject": s["id"], "fields": f}


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def _write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def freeze_policies(files, outdir, mncctl, sensitive=SENSITIVE_TIER):
    """The explicit freeze step (run-eval --freeze): writes the development split's files to
    outdir/dev/, calibrates the CalBench risk model on it with `mncctl calibrate` (which records
    the split's sha256), derives the AgentLeak contracts from the development scenarios only,
    and writes outdir/FROZEN.json (split rule, counts, every dev file's sha256). Returns the
    manifest."""
    bank, rows = load_calbench(files["calbench_tasks"], files["calbench_bank"])
    scen, _ = calbench_scenarios(bank, rows, sensitive)
    dev = [sc for sc in scen if sc["dev"]]
    al_all = agentleak_scenarios(load_agentleak(files["agentleak"]))
    al_dev = [s for s in al_all if s["dev"]]
    ddir = os.path.join(outdir, "dev")
    os.makedirs(ddir, exist_ok=True)
    cb_dev = os.path.join(ddir, "calbench-dev.jsonl")
    _write(cb_dev, "".join(json.dumps({"id": sc["id"], "label_id": sc["label_id"],
                                       "privacy_tier": sc["tier"], "movable": sc["movable"]},
                                      sort_keys=True) + "\n" for sc in dev))
    al_dev_path = os.path.join(ddir, "agentleak-dev.jsonl")
    _write(al_dev_path, "".join(json.dumps({"id": s["id"], "kind": s["kind"], "allowed": s["allowed"]},
                                           sort_keys=True) + "\n" for s in al_dev))
    risk = os.path.join(outdir, "calbench-risk.json")
    # movable is estimated from the split; the slot fields are declared independent of the
    # tier (the generator draws slots without looking at labels; docs/eval.md checks it on the
    # evaluation split); free-text fields are not modelled, so libmnc fails closed on them.
    r = subprocess.run([mncctl, "calibrate", "--dev", cb_dev, "--out", risk, "--secret-field",
                        "privacy_tier", "--fields", "movable", "--independent",
                        "selected_slot,slot_feasible,busy_slot", "--alpha", "0.5", "--force"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("mncctl calibrate failed: " + r.stdout + r.stderr)
    al_policy, conflicts = agentleak_policy(al_dev)
    docs = {"calbench.json": calbench_policy("weights"),
            "calbench-l.json": calbench_policy("bayes"),
            "agentleak.json": al_policy}
    for name, doc in docs.items():
        _write(os.path.join(outdir, name), json.dumps(doc, indent=1) + "\n")
    manifest = {
        "description": "policies/eval frozen from the development split only; run-eval "
                       "evaluates on the rest and refuses data that overlaps this split",
        "split": {"calbench": "labels with sha256('dev:'+label_id)[:8] % 3 == 0, every scenario "
                              "of those labels", "agentleak": "scenarios with "
                              "sha256('dev:'+scenario_id)[:8] % 10 < 3"},
        "sources": {k: os.path.basename(v) for k, v in files.items()},
        "dev": {"calbench": {"file": "dev/calbench-dev.jsonl", "sha256": sha256_file(cb_dev),
                             "scenarios": len(dev), "labels": len({sc["label_id"] for sc in dev})},
                "agentleak": {"file": "dev/agentleak-dev.jsonl", "sha256": sha256_file(al_dev_path),
                              "scenarios": len(al_dev), "kinds": len({s["kind"] for s in al_dev}),
                              "kinds_with_disagreeing_allowed_sets": conflicts}},
        "calibrate": "mncctl calibrate --dev dev/calbench-dev.jsonl --out calbench-risk.json "
                     "--secret-field privacy_tier --fields movable --independent "
                     "selected_slot,slot_feasible,busy_slot --alpha 0.5",
        "sensitive_tier": sensitive,
    }
    _write(os.path.join(outdir, "FROZEN.json"), json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest
