# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""report - the Markdown report run-eval writes (build/eval/eval.md, and docs/eval.md's generated
block with --doc): one function per table, from the summary run-eval computed."""
import os

import evaldata as E

POLICIES = ["Raw", "Redaction", "Fact ACL", "Semantic declassifier", "Reference monitor",
            "Receipt oracle", "MNC-C", "MNC-L", "MNC-L+D"]
A_NAMES = ["tfidf_nb", "tfidf_lr", "bayes", "policy"]
B_FROZEN = E.B_FROZEN


def f3(x):
    return "n/a" if x is None else ("%.3f" % x)


def ci(t):
    return "%s [%s, %s]" % (f3(t[0]), f3(t[1][0]), f3(t[1][1]))


def report_2b(t2b):
    L = []
    L.append("### Table 2b. Direct channels (around mncd), %d sampled scenarios" % t2b["n"])
    L.append("")
    if t2b["kernel_skipped"]:
        L.append("Kernel rows not run: %s." % t2b["kernel_skipped"])
        L.append("")
    L.append("| policy | violation | false allow | false block | delivery | direct log/memory write in scope | how |")
    L.append("|---|---|---|---|---|---|---|")
    for p, r in t2b["rows"].items():
        med = ("%d/%d" % (r["mediated_allowed"], r["mediated"])) if r["mediated"] else "n/a ¹"
        L.append("| %s | %s | %s | %s | %s | %s | %s (%d out-of-scope, %d in-scope attempts) |" % (
            p, f3(r["viol"]), f3(r["fa"]), f3(r["fb"]), f3(r["deliv"]), med, r["how"], r["out"], r["in"]))
    L.append("")
    L.append("Violation, false allow, false block: over the direct attempts; the MNC rows' in-scope log and "
             "memory ops are mncd's `log` / `mem.put` (the direct writes, column 6, are denied by `mncctl run` "
             "whatever the scope: those sinks are reached only through mncd). ¹ Without a monitor the direct "
             "writes are the in-scope log/memory ops and count in false block. Delivery: the coordinator "
             "received the strict release with the selected slot. Every allowed attempt's payload was found at "
             "its destination and no denied one's (mismatches: %d)." % sum(r["mismatch"] for r in t2b["rows"].values()))
    L.append("")
    ref = {p: r for p, r in t2b["rows"].items() if r.get("refused") or r.get("held_nothing") or
           r.get("judged_permissive_in_strict") or r.get("hold_failures_audited")}
    L.append("Deliveries refused at recv (the reply's `denied` list) and kernel-layer refusals in mncd's audit "
             "log (kept in `%s`): %s. Attempts are judged by the objects the coordinator holds (a block whose "
             "recv was refused is judged under what it held before; holding nothing, its attempts carry no "
             "disclosed text and are not counted)." % (
                 t2b.get("audit_logs") or "not kept",
                 "; ".join("%s: refused %s, blocks holding nothing %d, strict blocks judged under the permissive "
                           "object %d, audited %s" % (p, r.get("refused") or "none", r.get("held_nothing", 0),
                                                      r.get("judged_permissive_in_strict", 0),
                                                      r.get("hold_failures_audited") or "none")
                           for p, r in ref.items()) or "none in any row"))
    L.append("")
    chans = ["partner_unix", "partner_dgram", "partner_tcp", "partner_udp", "stranger_unix", "stranger_tcp",
             "log_file", "memory_dir"]
    L.append("Allowed direct attempts per channel, strict scope / permissive scope (in-scope there: the "
             "partner_* channels, and log/memory):")
    L.append("")
    L.append("| policy | " + " | ".join(chans) + " |")
    L.append("|---|" + "---|" * len(chans))
    for p, r in t2b["rows"].items():
        bc = r["by_channel"]
        cells = []
        for c in chans:
            a, b = bc.get("strict/" + c, {}), bc.get("permissive/" + c, {})
            cells.append("%d/%d · %d/%d" % (a.get("allowed", 0), a.get("n", 0), b.get("allowed", 0), b.get("n", 0)))
        L.append("| %s | %s |" % (p, " | ".join(cells)))
    L.append("")
    return L


def report_t3m(t3m):
    L = ["### Table 3 through mncd: MNC-L charged to the durable ledger (%d subjects per B)" % t3m[0]["n"], "",
         "| B | task | abst | avg spend (ledger) | max spend (ledger) | charges | agrees with Table 3 (outcomes / spend) |",
         "|---|---|---|---|---|---|---|"]
    for r in t3m:
        L.append("| %.1f | %s | %s | %s | %s | %d | %s / %s |" % (r["B"], f3(r["task"]), f3(r["abst"]), f3(r["avg"]),
                                                             f3(r["max"]), r["charges"], f3(r["outcome_agree"]),
                                                             f3(r["spend_agree"])))
    L.append("")
    return L


def _cat_line(am):
    c = am["categories"]
    return ("Scenarios by what the data let us judge (agentleak.py): complete %d, partial %d (judged on the needed "
            "values the subject's records hold: %.1f%% of the allowed fields are absent, ambiguous or empty there), "
            "and never counted as a success: needed value is a canary %d, placeholder only %d, empty needed value "
            "%d, request names no record %d." % (c["complete"], c["partial"], 100 * am["absent_fields"],
                                                  c["canary_needed"], c["placeholder_only"], c["empty_value"],
                                                  c["no_subject"]))


def report_1b(meta, t1b):
    am = t1b["_meta"]
    L = ["### Table 1b. End to end on AgentLeak (%d scenarios, task kinds as clusters)" % meta["n_al"], ""]
    L.append("| policy | task, complete scenarios [95%% CI] | task, complete + partial [95%% CI] | direct: canary "
             "[95%% CI] | forbidden value [95%% CI] | another record's value [95%% CI] | semantic [95%% CI] | attack "
             "success (%d attacks) [95%% CI] | no contract |" % am["attacks"])
    L.append("|---|---|---|---|---|---|---|---|---|")
    for p, r in t1b.items():
        if p == "_meta":
            continue
        L.append("| %s | %s (n=%d) | %s (n=%d) | %s | %s | %s | %s | %s | %s |" % (
            p, ci(r["complete"]), r["n_complete"], ci(r["judged"]), r["n_judged"], ci(r["canary"]),
            ci(r["forbidden"]), ci(r["cross"]), ci(r["semantic"]), ci(r["attack"]) if r["attack"] else "n/a",
            f3(r["no_contract"]) if r["no_contract"] is not None else "n/a"))
    L.append("")
    L.append(_cat_line(am))
    L.append("")
    L.append("Task success: every needed value of the subject arrived and no sensitive value did (a release that "
             "carries a canary, a forbidden value or another record's value is never a success). Successes whose "
             "release an independent check from the raw records finds another record's value, a forbidden "
             "field's value or a canary in: %d (`build/eval/agentleak-cases.jsonl` lists every case). Attacks "
             "(classes: %s): carried out by the scripted adversary; MNC-C and the reference monitor: %s; the "
             "other rows through the pass-through; %d attacks ask for nothing the vault holds. Task kinds without "
             "a frozen contract (fail closed): %s. Scenarios whose allowed set differs from their kind's contract: "
             "%d. Forbidden fields no record field materialises (besides other records' values): %s." % (
                 am["audit_bad_successes"], ", ".join(am["attack_classes"]), am.get("attack_channels_how", "?"),
                 am["attacks_asking_nothing"], ", ".join("`%s`" % k for k in am["no_contract_kinds"]) or "none",
                 am["contract_differs"], ", ".join("`%s`" % f for f in am["forbidden_unmaterialised"]) or "none"))
    L.append("")
    return L


def report_sensitivity(sens):
    bs, mx = sens["budget"], sens["mix"]
    L = ["### Sensitivity of Tables 3 and 4 to their margins", ""]
    L.append("Charges under the frozen model (bits, resolve_conflict's cheapest sufficient form): %s; the data's "
             "realised leakage: %s. MNC-L's resolve_conflict at each B (libmnc, the evaluated scenarios), "
             "against the data's no-safe set:" % (
                 "; ".join("movable=%s %s" % (v, ", ".join("%.3f" % x for x in xs)) for v, xs in sorted(bs["charges"].items())),
                 "; ".join("movable=%s %.3f" % kv for kv in sorted(bs["leak"].items()))))
    L.append("")
    L.append("| B | resolve_conflict released | no-safe (data) | no-safe recall | safe cases withheld |")
    L.append("|---|---|---|---|---|")
    for r in bs["rows"]:
        L.append("| %.3f | %s | %d | %s | %s |" % (r["B"], f3(r["released"]), r["n_nosafe"], f3(r["recall"]),
                                               f3(r["withheld_safe"])))
    L.append("")
    L.append("The development split's tier mix shifted (k rows of one tier dropped, k < 0, or duplicated, k > 0, "
             "of %d), the model recalibrated with `mncctl calibrate`, B = %s:" % (mx["n_dev"], mx["B"]))
    L.append("")
    L.append("| tier | k | prior (%s) | charge movable=yes / no | resolve_conflict released | no-safe recall | "
             "safe cases withheld |" % ", ".join(mx["tiers"]))
    L.append("|---|---|---|---|---|---|---|")
    for r in mx["rows"]:
        ch = r["charges"]
        L.append("| %s | %+d | %s | %s / %s | %s | %s | %s |" % (
            r["tier"], r["k"], ", ".join("%.3f" % r["prior"].get(t, 0) for t in mx["tiers"]),
            ", ".join("%.3f" % x for x in ch.get("yes", [])) or "-", ", ".join("%.3f" % x for x in ch.get("no", [])) or "-",
            f3(r["released"]), f3(r["recall"]), f3(r["withheld_safe"])))
    L.append("")
    return L


def report(meta, t1, t1b, t2, t3, t4, t2b=None, t3m=None, sens=None):
    L = []
    L.append("Command: `%s`  " % meta["command"])
    L.append("Date: %s; mode: %s; git: %s; sources sha256: `%s`  " % (meta["date"], meta["mode"], meta["git"],
                                                                     meta["sources"]))
    L.append("Data: CalBench %d of %d scenarios evaluated (%d excluded: their errand label is one of the "
             "development split's %d%s), AgentLeak %d of %d (%d excluded: in the development split); policies "
             "frozen from `%s` (sha256 %s…) and `%s` (sha256 %s…); bootstrap resamples: %d; label shuffles: %d" % (
                 meta["n_cal"], meta["n_cal_all"], meta["n_cal_excluded"], meta["n_cal_dev"],
                 "; not built: " + ", ".join("%s %d" % kv for kv in meta["skipped"].items()) if meta["skipped"] else "",
                 meta["n_al"], meta["n_al_all"], meta["n_al_excluded"], meta["dev_files"][0], meta["dev_sha"][0][:12],
                 meta["dev_files"][1], meta["dev_sha"][1][:12], meta["boot"], meta["shuffles"]))
    L.append("")
    L.append("### Table 1. End to end on CalBench (schedule_meeting), S = privacy tier")
    L.append("")
    L.append("| policy | task | excess ΔAcc [95% CI] | max attacker | excess − Receipt oracle, paired [95% CI] | "
             "direct [95% CI] | deleg | abst |")
    L.append("|---|---|---|---|---|---|---|---|")
    for p in POLICIES:
        r = t1[p]
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            p, f3(r["task"][0]), ci(r["excess"]), r["attacker"], ci(meta["paired"][p]), ci(r["direct"]),
            f3(r["deleg"]), f3(r["abst"])))
    L.append("")
    L.append("Per-attacker accuracy, output only → with internal channels:")
    L.append("")
    L.append("| policy | " + " | ".join(A_NAMES) + " |")
    L.append("|---|" + "---|" * len(A_NAMES))
    for p in POLICIES:
        per = t1[p]["per_attacker"]
        L.append("| %s | %s |" % (p, " | ".join("%.3f → %.3f" % per[a] for a in A_NAMES)))
    L.append("")
    L.append("Label-shuffle control (the tiers permuted among errand labels, attackers refitted; %d shuffles): "
             "the excess such a run reports when the secret is independent of everything released." % meta["shuffles"])
    L.append("")
    L.append("| released as | mean of max-attacker excess | its 95th percentile | mean ΔAcc per attacker (" +
             ", ".join(A_NAMES) + ") | 95th percentile of \\|ΔAcc\\| per attacker |")
    L.append("|---|---|---|---|---|")
    for p, c in meta["control"].items():
        L.append("| %s | %s | %s | %s | %s |" % (p, f3(c["mean_max"]), f3(c["q95_max"]),
                                              ", ".join("%+.3f" % c["per"][a] for a in A_NAMES),
                                              ", ".join(f3(c["per_absq95"][a]) for a in A_NAMES)))
    L.append("")
    L.extend(report_1b(meta, t1b))
    L.append("### Table 2. Scope enforcement with the disclosed content held fixed")
    L.append("")
    L.append("| policy | violation | false allow | false block | delivery | how |")
    L.append("|---|---|---|---|---|---|")
    for p in POLICIES:
        if p in t2:
            r = t2[p]
            L.append("| %s | %s | %s | %s | %s | %s |" % (p, f3(r["viol"]), f3(r["fa"]), f3(r["fb"]),
                                                         f3(r["deliv"]), r["how"] + (" (%d ops)" % r["ops"] if "ops" in r else "")))
    L.append("")
    led = [(p, t2[p]["ledger"]) for p in POLICIES if p in t2 and "ledger" in t2[p]]
    if led:
        L.append("MNC-L rows through mncd's durable ledger (`mncctl ledger show`): " + "; ".join(
            "%s %d charges over %d subjects, max spend %s bits (B = %s)" % (p, g["charges"], g["subjects"],
                                                                              f3(g["max_spent"]), g["budget"])
            for p, g in led) + ".")
        L.append("")
    if t2b:
        L.extend(report_2b(t2b))
    L.append("### Table 3. MNC-L budget sweep (per subject: schedule_meeting then resolve_conflict)")
    L.append("")
    L.append("| B | policy | task | worst leak (bits) | deleg | abst | avg spend | max spend |")
    L.append("|---|---|---|---|---|---|---|---|")
    for r in t3:
        L.append("| %.1f | %s | %s | %s | %s | %s | %s | %s |" % (r["B"], r["policy"], f3(r["task"]), f3(r["worst"]),
                                                               f3(r["deleg"]), f3(r["abst"]), f3(r["avg"]), f3(r["max"])))
    L.append("")
    L.append("MNC-L+D's deleg column is libmnc's decision to delegate; what the broker then returns is measured "
             "in Table 4.")
    L.append("")
    if t3m:
        L.extend(report_t3m(t3m))
    leak = meta["data_leak"]
    L.append("### Table 4. Entangled case (resolve_conflict)")
    L.append("")
    L.append("Ground truth from the data: on the evaluated scenarios, movable=%s leaks %s bits about the tier "
             "and movable=%s %s bits (realised min-entropy leakage under the data's own frequencies); with B = %s, "
             "a scenario has no safe receipt iff its movable value leaks more than B (%d of %d)." % (
                 "no", f3(leak.get("no")), "yes", f3(leak.get("yes")), B_FROZEN, t4["Raw"]["n_nosafe"], t4["Raw"]["n"]))
    L.append("")
    L.append("| policy | task | task incl. delegation | forbidden exposure [95% CI] | delegation | abst | no-safe recall "
             "(data) | safe cases withheld | system's no-safe = data's |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for p in POLICIES:
        r = t4[p]
        L.append("| %s | %s | %s | %s | %s | %s | %s (n=%d) | %s (n=%d) | %s |" % (
            p, f3(r["task"][0]), f3(r["task_deleg"]) if r["task_deleg"] is not None else "n/a (needs mncd)",
            ci(r["exposure"]), f3(r["deleg"]), f3(r["abst"]), f3(r["recall"]), r["n_nosafe"],
            f3(r["withheld_safe"]), r["n_safe"], f3(r["system_agrees"])))
    L.append("")
    if "mncd_outcomes" in t4["MNC-L+D"]:
        d = t4["MNC-L+D"]
        b = d["brokered"]
        L.append("Delegation through mncd to the broker process (`tests/eval/eval_broker.py`, the serve loop of "
                 "`user/python/broker_agent.py`), per subject after schedule_meeting (whose outcomes agree with "
                 "libmnc's in %s of subjects):" % f3(d["first_agree"]))
        L.append("")
        L.append("| contract (recipient's need) | mncd outcomes | task incl. delegation | of it, no-safe cases | "
                 "receipts carrying movable or a forbidden term |")
        L.append("|---|---|---|---|---|")
        L.append("| resolve_conflict (movable, selected_slot): must fail where no safe form exists | %s | %s | %s | n/a |" % (
            ", ".join("%s %d" % kv for kv in sorted(d["mncd_outcomes"].items())), f3(d["task_deleg"]),
            f3(d.get("task_deleg_nosafe"))))
        L.append("| resolve_conflict_brokered (resolution, selected_slot): can succeed | %s | %s | %s | %d |" % (
            ", ".join("%s %d" % kv for kv in sorted(b["outcomes"].items())), f3(b["task"]), f3(b["task_nosafe"]),
            b["exposure"]))
        L.append("")
    if sens:
        L.extend(report_sensitivity(sens))
    return "\n".join(L)


def write_doc(path, tables):
    """Replaces the generated block between the markers in docs/eval.md, keeping the prose."""
    begin, end = "<!-- BEGIN GENERATED TABLES -->", "<!-- END GENERATED TABLES -->"
    try:
        with open(path) as f:
            doc = f.read()
    except FileNotFoundError:
        doc = "# Evaluation\n\n%s\n%s\n" % (begin, end)
    if begin not in doc or end not in doc:
        raise SystemExit("run-eval: %s has no generated-table markers" % path)
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(head + begin + "\n" + tables + "\n" + end + tail)
    os.replace(tmp, path)
