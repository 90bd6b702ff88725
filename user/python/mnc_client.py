# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""mnc_client - a standard-library-only client for mncd (JSON lines over a UNIX socket).

    from mnc_client import Client
    with Client() as c:                      # $MNC_SOCKET or /run/mnc/mncd.sock
        r = c.disclose(contract="schedule_meeting", state={"subject": "alice", "fields": {...}})
        print(r["message"])                  # rendered from the contract's authorised fields only

Every method returns the daemon's response as a dict: {"ok": bool, "decision": ..., "reason":
..., ...}. Denials are ordinary responses (check r["ok"]); only transport and protocol
failures raise MncError. Who you are is decided by the kernel (your process's cgroup or uid),
never by anything you send. See docs/protocol.md.
"""
import json
import os
import socket

DEFAULT_SOCKET = "/run/mnc/mncd.sock"
MAX_RESPONSE = 64 << 20


class MncError(Exception):
    """Transport or protocol failure (not a policy denial)."""


class Client:
    def __init__(self, path=None, timeout=30.0):
        self.path = path or os.environ.get("MNC_SOCKET") or DEFAULT_SOCKET
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        try:
            self._sock.connect(self.path)
        except OSError as e:
            self._sock.close()
            raise MncError("cannot connect to mncd at %s: %s" % (self.path, e)) from e
        self._buf = b""
        self._next_id = 1

    def close(self):
        self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def call(self, verb, **args):
        """Sends one request and returns the response dict."""
        req = {"verb": verb, "id": self._next_id}
        self._next_id += 1
        req.update({k: v for k, v in args.items() if v is not None})
        self._sock.sendall(json.dumps(req, separators=(",", ":")).encode() + b"\n")
        while b"\n" not in self._buf:
            chunk = self._sock.recv(65536)
            if not chunk:
                raise MncError("mncd closed the connection")
            self._buf += chunk
            if len(self._buf) > MAX_RESPONSE:
                raise MncError("response too large")
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            resp = json.loads(line)
        except ValueError as e:
            raise MncError("malformed response from mncd") from e
        if resp.get("id") not in (None, req["id"]):
            raise MncError("response id %r does not match request id %r" % (resp.get("id"), req["id"]))
        return resp

    # -- agent verbs
    def whoami(self):
        """Who mncd says this process is: agent, via, uid, pid, cgroup, admin; for an agent also
        "contracts" (disclose/receive) and "taint" (delivered objects, their sinks' intersection,
        memory, and "kernel": the kernel's taint entry or None with the layer off); both None for
        a caller that is no agent (docs/protocol.md "whoami")."""
        return self.call("whoami")

    def disclose(self, state, contract=None, purpose=None, recipient=None, candidates=None,
                 release=None):
        """release: an idempotency key - a retry with the same id is never charged twice."""
        return self.call("disclose", state=state, contract=contract, purpose=purpose,
                         recipient=recipient, candidates=candidates, release=release)

    def send(self, obj, to, channel=None, purpose=None):
        return self.call("send", object=obj, to=to, channel=channel, purpose=purpose)

    def recv(self, obj=None, max=None):
        return self.call("recv", object=obj, max=max)

    def forward(self, obj, to):
        return self.call("forward", object=obj, to=to)

    def derive(self, obj, fields=None, sinks=None, lifetime=None, memory=None):
        return self.call("derive", object=obj, fields=fields, sinks=sinks, lifetime=lifetime,
                         memory=memory)

    def log(self, obj, sink):
        return self.call("log", object=obj, sink=sink)

    def mem_put(self, key, obj, store=None):
        return self.call("mem.put", key=key, object=obj, store=store)

    def mem_get(self, key, store=None):
        return self.call("mem.get", key=key, store=store)

    def tool(self, obj, tool):
        return self.call("tool", object=obj, tool=tool)

    # -- admin verbs
    def status(self):
        return self.call("status")

    def list(self, max=None):
        return self.call("list", max=max)

    def revoke(self, obj):
        return self.call("revoke", object=obj)

    def audit(self, max=None):
        return self.call("audit", max=max)
