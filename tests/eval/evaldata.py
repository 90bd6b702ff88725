# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""evaldata - turns the public datasets into evaluation scenarios and freezes the eval policies.

Input files are taken by path (plain or gzipped, the published schemas); the defaults are the
vendored copies in tests/eval/data (SOURCE.md there names upstream, version and sha256).

CalBench: each task record has calendars (per participant, one entry per slot: null when free,
else a commitment) and meetings with witness/optimal assignments; num_slots comes from the
record's params. A label bank (errand or meeting labels; its bank_type says which) gives each
label a private_label (the private reason), a public_label, forbidden_terms and a
privacy_tier; the tiers are whatever the banks use. Several banks may be given, at most one per
bank_type. A commitment is hydrated from the bank of its own kind:
  - an entry that names a bank label ("label_id") uses it (follow upstream where it assigns);
  - an entry "<bank_type>_id": k (the shipped records: errand_id; a meeting on a calendar:
    meeting_id) takes bank[perm[(k-1) mod |bank|]] of that bank_type's bank, perm = the bank
    order shuffled with the record's own seed (deterministic);
  - a commitment of a kind no given bank labels is skipped and counted, never guessed; if no
    commitment at all can be hydrated, calbench_scenarios refuses with an error that names the
    kinds the records carry and the banks given (e.g. errand commitments and only a meeting
    bank).
One scenario per (record, meeting): the coordinator proposes the witness slot s0; the worker is
the first participant busy at s0 (the private reason); the worker's selected slot is the optimal
slot if the worker is free there, else the worker's free slot nearest s0.
  schedule_meeting (Tables 1, 2): the coordinator needs a feasible slot (selected_slot).
  resolve_conflict (Table 4, entangled): the coordinator must also know whether the busy
    commitment can be moved (movable = "no" iff its tier is the sensitive tier, --sensitive-tier,
    default "sensitive", which must occur in a bank); every sufficient disclosure carries
    that bit.
  resolve_conflict_brokered (Table 4, delegation that can succeed): the coordinator asks for a
    resolution and a slot; no form of the worker carries a resolution, so MNC-L+D delegates,
    and the broker answers with one that does not depend on the commitment (keep it, meet at
    the selected free slot).
Slots are named "slot NN" by index, zero-padded to one width per record so that no slot name
is a prefix of another. The protected secret S is the commitment's privacy_tier.

AgentLeak: tests/eval/agentleak.py (subject records, needed and forbidden values, attacks).

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

import agentleak as AL

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


def load_calbench(tasks_path, bank_paths):
    """Reads the task records and one or more label banks (paths). Returns ({bank_type: bank},
    rows). Two banks of one bank_type are an error (which one would label a commitment?)."""
    if isinstance(bank_paths, str):
        bank_paths = [bank_paths]
    banks = {}
    for path in bank_paths:
        with _open(path) as f:
            bank = json.load(f)
        if not isinstance(bank, dict) or not isinstance(bank.get("items"), list) or not bank["items"]:
            raise ValueError("%s: not a label bank (no label items)" % path)
        t = bank.get("bank_type", "errand")
        if t in banks:
            raise ValueError("%s: a second %s bank (give at most one bank per bank_type)" % (path, t))
        for it in bank["items"]:
            missing = [k for k in ("label_id", "private_label", "public_label", "forbidden_terms",
                                   "privacy_tier", "privacy_class") if k not in it]
            if missing:
                raise ValueError("%s: label %s lacks %s" % (path, it.get("label_id", "?"), ", ".join(missing)))
        banks[t] = bank
    return banks, read_jsonl(tasks_path)


def tiers_of(banks):
    if "items" in banks:  # one bank
        banks = {banks.get("bank_type", "errand"): banks}
    return sorted({it["privacy_tier"] for b in banks.values() for it in b["items"]})


def commitment_kind(entry):
    """The kind of a calendar commitment: "label" (names a label_id), the X of an "X_id" key
    (errand, meeting), or None."""
    if not isinstance(entry, dict):
        return None
    if "label_id" in entry:
        return "label"
    for k in sorted(entry):
        if k.endswith("_id") and isinstance(entry[k], int):
            return k[:-3]
    return None


def calbench_scenarios(banks, rows, sensitive=SENSITIVE_TIER):
    """banks: {bank_type: bank} (load_calbench). Returns (scenarios, skipped: {reason: count}).
    Raises ValueError when the banks label none of the records' commitments (the mismatch
    named) or the sensitive tier is not a tier of any bank."""
    if "items" in banks:
        banks = {banks.get("bank_type", "errand"): banks}
    tiers = tiers_of(banks)
    if sensitive not in tiers:
        raise ValueError("sensitive tier %r is not a tier of the bank(s) (%s)" % (sensitive, tiers))
    by_label = {it["label_id"]: it for b in banks.values() for it in b["items"]}
    out, skipped, kinds = [], {}, {}

    def skip(why):
        skipped[why] = skipped.get(why, 0) + 1

    for r in rows:
        perms = {}
        for t, b in sorted(banks.items()):
            rng = random.Random(r["seed"])
            perm = list(range(len(b["items"])))
            rng.shuffle(perm)
            perms[t] = perm
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
            kind = commitment_kind(entry)
            kinds[kind] = kinds.get(kind, 0) + 1
            if kind == "label" and entry["label_id"] in by_label:
                item = by_label[entry["label_id"]]
            elif kind in banks:
                items = banks[kind]["items"]
                item = items[perms[kind][(entry[kind + "_id"] - 1) % len(items)]]
            else:
                skip("%s commitment: no %s bank given" % (kind or "unlabelled", kind or "matching"))
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
                "dev": dev_label(item["label_id"]), "kind": kind,
                "tier": item["privacy_tier"], "privacy_class": item["privacy_class"],
                "private_label": item["private_label"], "public_label": item["public_label"],
                "forbidden_terms": item["forbidden_terms"],
                "busy_slot": slot_name(s0, nslots), "selected_slot": slot_name(sel, nslots),
                "movable": "no" if item["privacy_tier"] == sensitive else "yes",
                "worker": "agent%d" % worker,
            })
    if rows and not out:
        seen = ", ".join("%s %d" % (k or "unlabelled", n) for k, n in sorted(kinds.items(), key=lambda kv: str(kv[0])))
        raise ValueError("no commitment of the task records can be labelled: the commitments at the proposed "
                         "slots are %s; the bank(s) given label %s commitments (bank_type %s). Give a bank "
                         "whose bank_type matches the commitments (--calbench-bank, once per bank_type)" % (
                             seen or "none", " and ".join(sorted(banks)), ", ".join(sorted(banks))))
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
             ("busy_slot", 0.3), ("movable", 0.2), ("selected_slot", 0.1), ("slot_feasible", 0.05),
             ("resolution", 0.05)]
# resolution: the broker's decision on a conflict (resolve_conflict_brokered); no worker form
# carries it, so only a delegation can meet that need (eval_broker.py computes it)
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
            {"agent": "coordinator", "purpose": "resolve_conflict_brokered", "needs": ["resolution", "selected_slot"]},
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
    # The same conflict handed to the broker: the coordinator needs a resolution and a slot,
    # not the movable bit; only a delegation can answer it (Table 4, "delegation that can succeed").
    C.append(dict(strict, id="resolve_conflict_brokered", purpose="resolve_conflict_brokered",
                  fields=["resolution", "selected_slot"], family="conflict_forms",
                  failure=["delegate", "abstain"], broker="broker"))
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

# the fields declared independent of the tier at calibration: the generator draws slots without
# looking at labels, and the broker's resolution never depends on the commitment (docs/eval.md)
INDEPENDENT = "selected_slot,slot_feasible,busy_slot,resolution"


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
    banks, rows = load_calbench(files["calbench_tasks"], files["calbench_bank"])
    scen, _ = calbench_scenarios(banks, rows, sensitive)
    dev = [sc for sc in scen if sc["dev"]]
    al_all = AL.scenarios(read_jsonl(files["agentleak"]))
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
                        INDEPENDENT, "--alpha", "0.5", "--force"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("mncctl calibrate failed: " + r.stdout + r.stderr)
    al_policy, conflicts = AL.policy(al_dev)
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
        "sources": {k: os.path.basename(v) if isinstance(v, str) else ", ".join(os.path.basename(x) for x in v)
                    for k, v in files.items()},
        "dev": {"calbench": {"file": "dev/calbench-dev.jsonl", "sha256": sha256_file(cb_dev),
                             "scenarios": len(dev), "labels": len({sc["label_id"] for sc in dev})},
                "agentleak": {"file": "dev/agentleak-dev.jsonl", "sha256": sha256_file(al_dev_path),
                              "scenarios": len(al_dev), "kinds": len({s["kind"] for s in al_dev}),
                              "kinds_with_disagreeing_allowed_sets": conflicts}},
        "calibrate": "mncctl calibrate --dev dev/calbench-dev.jsonl --out calbench-risk.json "
                     "--secret-field privacy_tier --fields movable --independent " + INDEPENDENT +
                     " --alpha 0.5",
        "sensitive_tier": sensitive,
    }
    _write(os.path.join(outdir, "FROZEN.json"), json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest
