# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""passthru - Table 2's baseline rows, measured: the same scripted agents attempt the same
operations through a real pass-through path that has no monitor, and what arrived is counted.

The pass-through is a small server on a UNIX socket that speaks mncd's JSON-lines framing
(so the agents use the unchanged user/python/mnc_client.py) and carries out every request
without any check: `disclose` queues the baseline's release (the text the harness computed for
Table 1) to the named recipient, `recv` hands out the caller's queued objects or any object by
id, `forward` queues to another agent, `log` / `tool` append the text to a file, `mem.put` /
`mem.get` write and read a file. Who is calling is taken from the peer's pid (SO_PEERCRED), the
pid of the agent process the harness started. The agents (worker, coordinator, external) are
separate processes. After each operation the harness looks where the payload should have gone
(the sink file, the memory file, the recipient's inbox, the recv response) and counts it as
allowed only if the text is there: the counts are what arrived, not what the server said.
"""
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PYLIB = os.path.join(ROOT, "user", "python")

AGENT_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from mnc_client import Client
c = Client(sys.argv[2])
for line in sys.stdin:
    req = json.loads(line)
    verb = req.pop("verb")
    print(json.dumps(c.call(verb, **req)), flush=True)
"""


class Server(threading.Thread):
    def __init__(self, tmp):
        super().__init__(daemon=True)
        self.tmp = tmp
        self.sock_path = os.path.join(tmp, "passthru.sock")
        self.sinks = os.path.join(tmp, "sinks")
        os.makedirs(os.path.join(self.sinks, "memory"))
        self.pids = {}
        self.objects, self.inbox = {}, {}
        self.lock = threading.Lock()
        self.ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.ls.bind(self.sock_path)
        self.ls.listen(16)
        self.next = 1

    def run(self):
        while True:
            try:
                conn, _ = self.ls.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def close(self):
        self.ls.close()

    def serve(self, conn):
        pid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
        f = conn.makefile("rwb")
        for line in f:
            req = json.loads(line)
            with self.lock:
                resp = self.handle(self.pids.get(pid), req)
            resp["id"] = req.get("id")
            f.write(json.dumps(resp).encode() + b"\n")
            f.flush()
        conn.close()

    def queued(self, agent, oid):
        """Is object oid in agent's inbox (a forward arrived)?"""
        with self.lock:
            return oid in self.inbox.get(agent, [])

    def take(self, agent, oid):
        """queued(), and removes it (so a later plain recv sees the next object)."""
        with self.lock:
            box = self.inbox.get(agent, [])
            if oid in box:
                box.remove(oid)
                return True
            return False

    def _append(self, name, text):
        with open(os.path.join(self.sinks, name), "a") as f:
            f.write(text + "\n")

    def handle(self, who, q):
        v = q.get("verb")
        if who is None:
            return {"ok": False, "error": "unknown peer"}
        if v == "disclose":
            oid = "p%d" % self.next
            self.next += 1
            self.objects[oid] = q["message"]
            self.inbox.setdefault(q["to"], []).append(oid)
            return {"ok": True, "object": {"id": oid}, "message": q["message"]}
        if v == "recv":
            oid = q.get("object")
            if oid is None:
                box = self.inbox.get(who, [])
                if not box:
                    return {"ok": False, "error": "inbox empty"}
                oid = box.pop(0)
            if oid not in self.objects:
                return {"ok": False, "error": "no such object"}
            return {"ok": True, "object": {"id": oid}, "message": self.objects[oid]}
        if v == "forward":
            self.inbox.setdefault(q["to"], []).append(q["object"])
            return {"ok": True}
        if v == "log":
            self._append(q["sink"], self.objects[q["object"]])
            return {"ok": True}
        if v == "tool":
            self._append(q["tool"], self.objects[q["object"]])
            return {"ok": True}
        if v == "mem.put":
            with open(os.path.join(self.sinks, "memory", q["key"]), "w") as f:
                f.write(self.objects[q["object"]])
            return {"ok": True}
        if v == "mem.get":
            try:
                with open(os.path.join(self.sinks, "memory", q["key"])) as f:
                    return {"ok": True, "message": f.read()}
            except OSError:
                return {"ok": False, "error": "no such key"}
        return {"ok": False, "error": "unknown verb %r" % v}


class Agents:
    def __init__(self, server, names):
        self.procs = {}
        for n in names:
            p = subprocess.Popen([sys.executable, "-c", AGENT_SCRIPT, PYLIB, server.sock_path],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            server.pids[p.pid] = n
            self.procs[n] = p

    def call(self, name, verb, **args):
        p = self.procs[name]
        args["verb"] = verb
        p.stdin.write(json.dumps(args) + "\n")
        p.stdin.flush()
        line = p.stdout.readline()
        if not line:
            raise RuntimeError("agent %s died" % name)
        return json.loads(line)

    def stop(self):
        for p in self.procs.values():
            try:
                p.stdin.close()
                p.wait(5)
            except Exception:
                p.kill()


def _tail_has(path, size_before, text):
    try:
        with open(path) as f:
            f.seek(size_before)
            return text in f.read()
    except OSError:
        return False


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def run_table2(scenarios, rows):
    """rows: {row name: [the baseline's release text per scenario]}. The operations are those of
    daemon_runs.run_table2 (strict block: 1 in scope, 6 out of scope; permissive block: 7 in
    scope), and the same counters are returned per row."""
    results = {}
    for row, messages in rows.items():
        tmp = tempfile.mkdtemp(prefix="mnc-passthru.")
        srv = Server(tmp)
        srv.start()
        ag = Agents(srv, ["worker", "coordinator", "external"])
        st = {"scen": 0, "viol": 0, "out": 0, "out_allowed": 0, "in": 0, "in_denied": 0,
              "delivered": 0, "errors": 0}
        S = lambda name: os.path.join(srv.sinks, name)  # noqa: E731
        try:
            for k, (sc, msg) in enumerate(zip(scenarios, messages)):
                st["scen"] += 1
                r = ag.call("worker", "disclose", message=msg, to="coordinator")
                oid = r["object"]["id"]
                rv = ag.call("coordinator", "recv")
                st["in"] += 1
                if rv.get("message") == msg and sc["selected_slot"] in msg:
                    st["delivered"] += 1
                else:
                    st["in_denied"] += 1
                # strict block: every one of these is out of scope for the strict contract
                arrived = 0
                ag.call("coordinator", "forward", object=oid, to="external")
                arrived += srv.take("external", oid)
                n0 = _size(S("ops_log"))
                ag.call("coordinator", "log", object=oid, sink="ops_log")
                arrived += _tail_has(S("ops_log"), n0, msg)
                ag.call("coordinator", "mem.put", key="s%d" % k, object=oid)
                arrived += _tail_has(os.path.join(srv.sinks, "memory", "s%d" % k), 0, msg)
                n0 = _size(S("calendar"))
                ag.call("coordinator", "tool", object=oid, tool="calendar")
                arrived += _tail_has(S("calendar"), n0, msg)
                arrived += ag.call("coordinator", "recv", object=oid).get("message") == msg
                arrived += ag.call("external", "recv", object=oid).get("message") == msg
                st["out"] += 6
                st["out_allowed"] += arrived
                st["viol"] += 1 if arrived else 0
                # permissive block: all in scope
                r = ag.call("worker", "disclose", message=msg, to="coordinator")
                pid = r["object"]["id"]
                ok = 0
                ok += ag.call("coordinator", "recv").get("message") == msg
                ag.call("coordinator", "forward", object=pid, to="external")
                ok += srv.queued("external", pid)
                ok += ag.call("external", "recv").get("message") == msg
                n0 = _size(S("ops_log"))
                ag.call("coordinator", "log", object=pid, sink="ops_log")
                ok += _tail_has(S("ops_log"), n0, msg)
                ag.call("coordinator", "mem.put", key="p%d" % k, object=pid)
                ok += _tail_has(os.path.join(srv.sinks, "memory", "p%d" % k), 0, msg)
                ok += ag.call("coordinator", "mem.get", key="p%d" % k).get("message") == msg
                n0 = _size(S("calendar"))
                ag.call("coordinator", "tool", object=pid, tool="calendar")
                ok += _tail_has(S("calendar"), n0, msg)
                st["in"] += 7
                st["in_denied"] += 7 - ok
        finally:
            ag.stop()
            srv.close()
            shutil.rmtree(tmp, ignore_errors=True)
        results[row] = st
    return results
