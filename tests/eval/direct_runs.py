# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""direct_runs - Table 2b: scope enforcement on the direct channels (around mncd).

Table 2 asks mncd to forward, log or store an object; an agent that holds the text can also
just write it somewhere itself. Here the scripted coordinator, after receiving the object, tries
the channels of the paper's threat model directly, with real syscalls that carry the message:

  partner (registered external endpoints, in the permissive contract's phi):
      connect()+send on its UNIX stream socket, sendto() its UNIX datagram socket,
      connect()+send over TCP and sendto() over UDP to its port on 127.0.0.1
  stranger (unregistered, in no scope): connect()+send on a UNIX stream socket, TCP 127.0.0.1
  files: append to the log sink's file, create a file in the memory sink's directory

Per sampled scenario, a freshly launched coordinator (taint is sticky for an agent's lifetime,
so a fresh process is a fresh session) runs two blocks, in this order (taint only tightens):

  permissive (share_availability: phi = {external, ops_log, calendar, partner endpoints},
      memory allowed): the partner attempts are in scope; the stranger attempts are out of
      scope.
  strict (the row's contract: phi empty, no memory): every direct attempt is out of scope; a
      new connection to mncd (always allowed) is the in-scope control. The log and memory are in scope too; with mncd their in-scope route is mncd's
      `log` / `mem.put` (counted as the in-scope ops), and the direct file writes are reported
      apart: `mncctl run` denies them by design (Landlock), whatever the scope, because those
      sinks are reached only through mncd, which checks each object's scope.

Row modes:
  kernel  real mncd with `--kernel cgroup` on a private pin root and cgroup tree; worker and
          coordinator launched by the real `mncctl run` (registered by mncd, Landlock+seccomp).
  off     real mncd with `--kernel off`; agents are plain processes in cgroup v2 children
          (the monitor alone: the direct attempts are not mediated at all).
  none    no monitor (the simulated baselines): the harness hands the baseline's release to a
          plain coordinator process, which makes the same attempts; the direct file writes are
          its only route to the log and memory, so they are its in-scope log/memory ops.

Every attempt carries a nonce; after each row the peers' received.jsonl, the log file and the
memory directory are read, and an attempt counts as allowed only if the syscall succeeded; an
attempt whose outcome disagrees with what arrived is counted in "mismatch" (must be 0).

Attempts are judged against the objects the coordinator actually holds, read from each recv
reply: its `messages` (delivered, so held) and its `denied` list (not delivered: expired,
revoked, or refused before delivery by the kernel layer, which keeps the message queued and
delivers it at a later recv). A block whose recv delivered nothing is judged under the scope of
what the coordinator held before it (the permissive object, if it arrived), and a block in
which it holds nothing at all carries no disclosed text: its attempts are counted apart
("held nothing"), never as violations or false blocks. Refusals are counted by reason. With
keep_dir, mncd's audit log and daemon log of every row are kept there (the evidence for any
refusal), named by row.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import daemon_runs as D  # noqa: E402

AGENT = os.path.join(HERE, "direct_agent.py")
PEERS = os.path.join(HERE, "direct_peers.py")
PYLIB = os.path.join(ROOT, "user", "python")


def kernel_unavailable(build):
    """None if the kernel rows can run here, else the reason (they need root, bpftool for the
    taint wait, a cgroup2 mount and the built binaries)."""
    H = D._harness(build)
    if os.geteuid() != 0:
        return "needs root (BPF programs, cgroups, mncctl run)"
    if not os.path.exists(H.MNCCTL) or not os.path.exists(H.MNCD):
        return "no mncd/mncctl in %s" % build
    if not shutil.which("bpftool"):
        return "needs bpftool"
    if not H.cgroup2_mount():
        return "no cgroup2 mount"
    return None


class _Proc:
    """One JSON-lines agent process (direct_agent.py), possibly under mncctl run."""

    def __init__(self, argv, err_path, preexec=None):
        self.err_path = err_path
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(err_path, "w"), text=True, preexec_fn=preexec)

    def call(self, **req):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            with open(self.err_path) as f:
                raise RuntimeError("agent died: %s" % f.read()[-2000:])
        return json.loads(line)

    def stop(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


class _Env:
    """Peers, policy copy, and (modes kernel/off) a real mncd for one row."""

    def __init__(self, H, mode, policy_dir, pfile, tag):
        self.H, self.mode, self.tag = H, mode, tag
        self.tmp = H.tmpdir()
        os.chmod(self.tmp, 0o755)  # agents under mncctl run reach the peers' sockets in here
        self.peers_dir = os.path.join(self.tmp, "peers")
        os.makedirs(self.peers_dir)
        os.chmod(self.peers_dir, 0o755)
        self.procs = []
        self.n_launched = 0  # names each launch's own workspace
        self.peers = subprocess.Popen([sys.executable, PEERS, self.peers_dir])
        pj = os.path.join(self.peers_dir, "ports.json")
        end = time.time() + 10
        while not os.path.exists(pj):
            if self.peers.poll() is not None or time.time() > end:
                raise RuntimeError("direct_peers did not start")
            time.sleep(0.02)
        with open(pj) as f:
            self.ports = json.load(f)
        self.policy = D._policy_copy(policy_dir, pfile, self.tmp)
        with open(self.policy) as f:
            pol = json.load(f)
        addr = {"partner": "unix:" + os.path.join(self.peers_dir, "partner.sock"),
                "partner_dgram": "unix:" + os.path.join(self.peers_dir, "partner.dgram"),
                "partner_ip": "127.0.0.1:%d" % self.ports["partner_ip"]}
        for s in pol["sinks"]:
            if s["name"] in addr:
                s["address"] = addr[s["name"]]
        with open(self.policy, "w") as f:
            json.dump(pol, f)
        self.pol = pol
        self.log = [s["path"] for s in pol["sinks"] if s["name"] == "ops_log"][0]
        self.mem = [s["path"] for s in pol["sinks"] if s["name"] == "agent_memory"][0]
        self.d = None
        self.pin = self.tree = None
        self.cg_base = None
        if mode == "kernel":
            self.pin = "/sys/fs/bpf/mnc-eval-%d-%s" % (os.getpid(), tag)
            self.tree = "mnc-eval-%d-%s" % (os.getpid(), tag)
            cfg = {"kernel": "cgroup", "pin_root": self.pin, "cgroup_tree": self.tree}
        elif mode == "off":
            self.cg_base = os.path.join(H.cgroup2_mount(), "mnc-eval2b-%d-%s" % (os.getpid(), tag))
            for n in ("worker", "coordinator"):
                os.makedirs(os.path.join(self.cg_base, n), exist_ok=True)
            rel = self.cg_base[len(H.cgroup2_mount()):]
            cfg = {"kernel": "off", "cgroups": {"%s/%s" % (rel, n): n for n in ("worker", "coordinator")}}
        # The sinks exist, as on a deployed host (mncd's kernel layer would create them; with
        # the kernel off or without a monitor nobody would, and ENOENT is no protection).
        os.makedirs(os.path.dirname(self.log), exist_ok=True)
        open(self.log, "a").close()
        os.makedirs(self.mem, exist_ok=True)
        if mode in ("kernel", "off"):
            self.d = H.Daemon(self.tmp, config=cfg, policy=self.policy)
            self.d.start()

    def agent_id(self, name):
        return [a["name"] for a in self.pol["agents"]].index(name)

    def launch(self, name):
        err = os.path.join(self.tmp, "%s.%d.err" % (name, len(self.procs)))
        sock = self.d.sock if self.d else "-"
        cmd = [sys.executable, AGENT, PYLIB, sock]
        if self.mode == "kernel":
            # under mncctl run the agent has its own uid and reads only system dirs and grants:
            # a system interpreter and the harness's staged copies of the agent and the client
            cmd = [self.H.AGENT_PY, os.path.join(self.H.EVAL_DIR, os.path.basename(AGENT)), self.H.PYLIB, sock]
            # one workspace per launch: each item is an independent scenario, and a workspace
            # carries the taint of what an earlier instance received (docs/kernel.md, workspace taint)
            self.n_launched += 1
            ws = os.path.join(self.tmp, "ws_%s.%d" % (name, self.n_launched))
            os.makedirs(ws, exist_ok=True)
            p = _Proc([self.H.MNCCTL, "--socket", sock, "run", "--agent", name, "--pin-root", self.pin, "--stdio", "passthrough",
                       "--workspace", ws] + self.H.AGENT_READ + ["--"] + cmd, err)
        elif self.mode == "off":
            pf = os.path.join(self.cg_base, name, "cgroup.procs")

            def enter(pf=pf):
                with open(pf, "w") as f:
                    f.write("0")
            p = _Proc(cmd, err, preexec=enter)
        else:
            p = _Proc(cmd, err)
        self.procs.append(p)
        if self.d:
            who = p.call(verb="whoami")
            if who.get("agent") != name or who.get("via") != "cgroup":
                raise RuntimeError("%s not identified by its cgroup: %r" % (name, who))
        return p

    def taint_present(self, name):
        r = subprocess.run(["bpftool", "-j", "map", "dump", "pinned", self.pin + "/taint"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("bpftool map dump: " + r.stderr)
        keys = [e.get("formatted", e).get("key") for e in json.loads(r.stdout or "[]")]
        return self.agent_id(name) in keys

    def retire(self, p, name):
        """Stops an agent; in kernel mode waits until mncd has dropped its taint, so the next
        launch of the same agent starts a fresh (untainted) session."""
        p.stop()
        self.procs.remove(p)
        if self.mode != "kernel":
            return
        end = time.time() + 10
        while self.taint_present(name):
            if time.time() > end:
                raise RuntimeError("mncd did not clear %s's taint after it exited" % name)
            time.sleep(0.02)

    def audit_denies(self):
        n = 0
        with open(os.path.join(self.d.state, "audit.jsonl")) as f:
            for line in f:
                if '"kernel.deny"' in line and json.loads(line).get("op") == "kernel.deny":
                    n += 1
        return n

    def audit_hold_failures(self):
        """Deliveries the kernel layer refused before delivery (taint update, sweep, fd scan
        or workspace taint failed: fail closed), by audit op and detail."""
        out = {}
        with open(os.path.join(self.d.state, "audit.jsonl")) as f:
            for line in f:
                if '"error"' not in line:
                    continue
                a = json.loads(line)
                if a.get("decision") == "error" and str(a.get("op", "")).startswith(("kernel.", "workspace.")):
                    key = "%s: %s" % (a.get("op"), str(a.get("detail", ""))[:120])
                    out[key] = out.get(key, 0) + 1
        return out

    def close(self):
        for p in list(self.procs):
            p.stop()
        rc = self.d.stop() if self.d else 0
        log = self.d.read_log() if self.d else ""
        if self.peers.poll() is None:
            self.peers.send_signal(signal.SIGTERM)
            self.peers.wait()
        if self.mode == "kernel":
            subprocess.run([self.H.MNCCTL, "kern", "--pin-root", self.pin, "detach", "--purge"],
                           capture_output=True)
            try:
                os.rmdir(os.path.join(self.H.cgroup2_mount(), self.tree))
            except OSError:
                pass
        if self.cg_base:
            for n in ("worker", "coordinator"):
                try:
                    os.rmdir(os.path.join(self.cg_base, n))
                except OSError:
                    pass
            try:
                os.rmdir(self.cg_base)
            except OSError:
                pass
        self.H.cleanup(self.tmp)
        return rc, log


def _attempts(env, block, nonce):
    """(channel, op, dest, in_scope) for one block. 'file' channels are the direct writes."""
    pd = env.peers_dir
    a = [("partner_unix", "unix_stream", os.path.join(pd, "partner.sock"), block == "permissive"),
         ("partner_dgram", "unix_dgram", os.path.join(pd, "partner.dgram"), block == "permissive"),
         ("partner_tcp", "tcp", env.ports["partner_ip"], block == "permissive"),
         ("partner_udp", "udp", env.ports["partner_ip"], block == "permissive"),
         ("stranger_unix", "unix_stream", os.path.join(pd, "stranger.sock"), False),
         ("stranger_tcp", "tcp", env.ports["stranger_tcp"], False),
         ("log_file", "file_append", env.log, block == "permissive"),
         ("memory_dir", "file_create", os.path.join(env.mem, nonce), block == "permissive")]
    return a


def _refusals(r):
    """The denied list of a recv reply as (reason, detail) pairs."""
    return [(x.get("reason", "?"), x.get("detail", "")) for x in (r.get("denied") or [])]


def run_direct(scenarios, state_fn, rows, policy_dir, build, share_contract="share_availability", keep_dir=None):
    """rows: dicts {row, mode (kernel|off|none), pfile, strict, charge, messages (mode none:
    the release text per scenario)}. Returns {row: stats}."""
    H = D._harness(build)
    results = {}
    for ri, spec in enumerate(rows):
        mode = spec["mode"]
        env = _Env(H, mode, policy_dir, spec["pfile"], "r%d" % ri)
        st = {"mode": mode, "scen": 0, "viol": 0, "out": 0, "out_allowed": 0, "in": 0, "in_denied": 0,
              "delivered": 0, "mediated": 0, "mediated_direct_allowed": 0, "mismatch": 0,
              "launches": 0, "errors": [], "by_channel": {}, "refused": {}, "held_nothing": 0,
              "judged_permissive_in_strict": 0}
        expect = []  # (nonce, channel, allowed) checked against what arrived
        t0 = time.time()
        try:
            worker = env.launch("worker") if env.d else None
            for k, sc in enumerate(scenarios):
                st["scen"] += 1
                state = state_fn(sc)
                if not spec.get("charge"):
                    state = {"fields": state["fields"]}
                viol = False
                # One session per scenario: the permissive object first, then the strict one.
                # Taint only tightens (mncd intersects scopes), so the strict block is judged
                # under the strict scope, and no later block could be judged under a wider one;
                # the next scenario gets a freshly launched coordinator.
                coord = env.launch("coordinator")
                st["launches"] += 1
                held = {}  # object id -> (block it was disclosed in, text) the coordinator holds
                oids = {}
                for block in ("permissive", "strict"):
                    contract = spec["strict"] if block == "strict" else share_contract
                    msg, oid = "", None
                    if env.d:
                        r = worker.call(verb="disclose", contract=contract, state=state)
                        if r.get("ok"):
                            oid = oids[block] = r["object"]["id"]
                            rv = coord.call(verb="recv")
                            for why, det in _refusals(rv):
                                key = "%s: %s" % (why, det[:60]) if det else why
                                st["refused"][key] = st["refused"].get(key, 0) + 1
                            for b, o in oids.items():  # an earlier refused one may arrive now
                                got = D._message(rv, o)
                                if got:
                                    held[o] = (b, got)
                            msg = held.get(oid, ("", ""))[1]
                        else:
                            st["errors"].append(r)
                        # the scope the attempts are judged by: that of what is held now (taint
                        # only tightens, so the strict object, once held, decides)
                        blocks = {b for b, _t in held.values()}
                        judged = "strict" if "strict" in blocks else "permissive" if blocks else None
                        carried = " ".join(t for _b, t in held.values())
                    else:
                        msg = carried = spec["messages"][k]
                        judged = block
                    if block == "strict":
                        if msg and sc["selected_slot"] in msg:
                            st["delivered"] += 1
                        else:
                            st["in_denied"] += 1 if env.d else 0
                        st["in"] += 1 if env.d else 0
                        # in-scope control: the monitor stays reachable on a new connection
                        if env.d:
                            w = coord.call(verb="whoami", new_connection=True)
                            st["in"] += 1
                            st["in_denied"] += 0 if w.get("agent") == "coordinator" else 1
                    elif env.d:  # the permissive delivery is an in-scope recv
                        st["in"] += 1
                        st["in_denied"] += 0 if msg else 1
                    if judged is None:
                        st["held_nothing"] += 1
                    elif judged != block:
                        st["judged_permissive_in_strict"] += 1
                    for ch, op, dest, in_scope in _attempts(env, judged or block, "n%d-%d-%s" % (ri, k, block)):
                        nonce = "NONCE-%d-%d-%s-%s" % (ri, k, block, ch)
                        res = coord.call(probe=op, dest=dest, data="%s %s" % (nonce, carried or "-"))
                        allowed = res.get("result") == "OK"
                        expect.append((nonce, ch, allowed, dest))
                        if judged is None:  # holds nothing: no disclosed text to judge
                            continue
                        bc = st["by_channel"].setdefault("%s/%s" % (judged, ch), {"n": 0, "allowed": 0,
                                                                                   "results": {}})
                        bc["n"] += 1
                        bc["allowed"] += 1 if allowed else 0
                        bc["results"][res.get("result")] = bc["results"].get(res.get("result"), 0) + 1
                        file_ch = ch in ("log_file", "memory_dir")
                        if in_scope and file_ch and env.d:
                            # mediated by mncd: the direct write is reported apart; the in-scope
                            # op is the mncd verb (below)
                            st["mediated"] += 1
                            st["mediated_direct_allowed"] += 1 if allowed else 0
                        elif in_scope:
                            st["in"] += 1
                            st["in_denied"] += 0 if allowed else 1
                        else:
                            st["out"] += 1
                            st["out_allowed"] += 1 if allowed else 0
                            viol = viol or allowed
                    if block == "permissive" and env.d and oid and oid in held:
                        ins = [coord.call(verb="log", object=oid, sink="ops_log"),
                               coord.call(verb="mem.put", key="p%d" % k, object=oid)]
                        st["in"] += len(ins)
                        st["in_denied"] += sum(1 for o in ins if not D._allowed(o, oid))
                    elif block == "permissive" and env.d and not oid:  # the disclose itself failed
                        st["in"] += 2
                        st["in_denied"] += 2
                env.retire(coord, "coordinator")
                st["viol"] += 1 if viol else 0
            st["seconds"] = time.time() - t0
            if spec.get("charge"):
                subs = [state_fn(sc)["subject"] for sc in scenarios]
                spent, totals = D.ledger_spend(H.MNCCTL, env.d.state, subs)
                st["ledger"] = dict(totals, max_spent=max(spent.values()),
                                    avg_spent=sum(spent.values()) / len(spent))
            st["mismatch"] = _verify(env, expect)
            if mode == "kernel":
                st["kernel_denies_audited"] = env.audit_denies()
                st["hold_failures_audited"] = env.audit_hold_failures()
        finally:
            if keep_dir and env.d:
                os.makedirs(keep_dir, exist_ok=True)
                tag = re.sub(r"[^A-Za-z0-9]+", "_", spec["row"]).strip("_")
                for src, name in ((os.path.join(env.d.state, "audit.jsonl"), "audit.jsonl"),
                                  (env.d.log, "mncd.log")):
                    if os.path.exists(src):
                        shutil.copy(src, os.path.join(keep_dir, "%s.%s" % (tag, name)))
            rc, log = env.close()
        if rc != 0:
            raise RuntimeError("mncd exited %r: %s" % (rc, log[-2000:]))
        results[spec["row"]] = st
    return results


def _verify(env, expect):
    """Counts attempts whose syscall outcome disagrees with what reached the destination."""
    end = time.time() + 5
    while True:  # the peers record stream payloads at EOF, in threads: let them catch up
        got = set()
        with open(os.path.join(env.peers_dir, "received.jsonl")) as f:
            for line in f:
                got.add(json.loads(line)["data"].split(" ", 1)[0])
        missing = [n for n, ch, ok, _ in expect if ok and not ch.endswith(("_file", "_dir")) and n not in got]
        if not missing or time.time() > end:
            break
        time.sleep(0.05)
    with open(env.log, errors="replace") as f:
        log = f.read()
    bad = 0
    for nonce, ch, ok, dest in expect:
        if ch == "log_file":
            arrived = nonce in log
        elif ch == "memory_dir":
            arrived = os.path.exists(dest) and nonce in open(dest, errors="replace").read()
        else:
            arrived = nonce in got
        bad += 0 if arrived == ok else 1
    return bad
