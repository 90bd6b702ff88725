#!/usr/bin/env python3
"""Agent for test_kernel_pretaint: run under `mncctl run`, it holds sockets across requests so
that connections made while untainted can be used after mncd tainted it.

argv: <user/python dir> <mncd socket>. Reads one JSON request per line on stdin, answers one
JSON line on stdout:
  {"open": NAME, "kind": "unix_stream"|"unix_seqpacket"|"unix_dgram", "path": P}  connect
  {"open": NAME, "kind": "tcp", "host": H, "port": N}
  {"open": NAME, "kind": "listen", "path": P}        bind + listen (UNIX stream)
  {"open": NAME, "kind": "pair"}                      socketpair: NAME.a and NAME.b
  {"send": NAME, "data": S}                           -> {"result": "OK" | errno name}
  {"recv": NAME, "timeout": T}                        -> {"result": "OK", "data": S} | "EOF" | "NONE" | errno
  {"accept": NAME, "as": NAME2, "timeout": T}         -> {"result": "OK"} | errno | "NONE"
  {"fork_hold": NAME}                                 a child keeps the only copy of NAME
  {"verb": V, ...}                                    an mncd call on the connection made at start
Results are errno names (EPIPE, ENOTCONN, ECONNABORTED...), so the test judges what the
kernel said; the agent never exits on an error.
"""
import errno
import json
import os
import select
import signal
import socket
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
from mnc_client import Client  # noqa: E402

signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # EPIPE as an error, not a death
mncd = Client(sys.argv[2])  # made while untainted, like every other socket here
socks = {}


def ename(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def handle(req):
    if "verb" in req:
        return mncd.call(req.pop("verb"), **req)
    if "open" in req:
        kind = req["kind"]
        if kind == "pair":
            a, b = socket.socketpair()
            socks[req["open"] + ".a"], socks[req["open"] + ".b"] = a, b
            return {"result": "OK"}
        if kind == "tcp":
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.connect((req["host"], int(req["port"])))
        elif kind == "listen":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(req["path"])
            s.listen(8)
        else:
            t = {"unix_stream": socket.SOCK_STREAM, "unix_seqpacket": socket.SOCK_SEQPACKET,
                 "unix_dgram": socket.SOCK_DGRAM}[kind]
            s = socket.socket(socket.AF_UNIX, t)
            s.connect(req["path"])
        socks[req["open"]] = s
        return {"result": "OK"}
    if "fork_hold" in req:
        # a child process keeps the only copy of the socket (the sweep must list every process)
        name = req["fork_hold"]
        pid = os.fork()
        if pid == 0:
            os.close(0)
            os.close(1)
            while True:
                signal.pause()
        socks.pop(name).close()
        return {"result": "OK", "pid": pid}
    if "send" in req:
        socks[req["send"]].send(req["data"].encode())
        return {"result": "OK"}
    if "recv" in req:
        s = socks[req["recv"]]
        r, _, _ = select.select([s], [], [], req.get("timeout", 1.0))
        if not r:
            return {"result": "NONE"}
        d = s.recv(4096)
        return {"result": "OK", "data": d.decode(errors="replace")} if d else {"result": "EOF"}
    if "accept" in req:
        s = socks[req["accept"]]
        r, _, _ = select.select([s], [], [], req.get("timeout", 1.0))
        if not r:
            return {"result": "NONE"}
        c, _ = s.accept()
        socks[req["as"]] = c
        return {"result": "OK"}
    return {"result": "BADREQ"}


for line in sys.stdin:
    try:
        out = handle(json.loads(line))
    except OSError as e:
        out = {"result": ename(e)}
    except Exception as e:  # a bug in the test: report it, keep serving
        out = {"result": "EXC", "error": repr(e)}
    print(json.dumps(out), flush=True)
