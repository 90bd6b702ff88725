#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Agent for test_kernel_pretaint: run under `mncctl run`, it holds sockets across requests so
that connections made while untainted can be used after mncd tainted it.

argv: <user/python dir> <mncd socket>. Reads one JSON request per line on stdin, answers one
JSON line on stdout:
  {"open": NAME, "kind": "unix_stream"|"unix_seqpacket"|"unix_dgram", "path": P}  connect
  {"open": NAME, "kind": "tcp", "host": H, "port": N}
  {"open": NAME, "kind": "listen", "path": P}        bind + listen (UNIX stream)
  {"open": NAME, "kind": "pair"}                      socketpair: NAME.a and NAME.b
  {"open": NAME, "kind": "unconnected_stream"|"unconnected_seqpacket"}  a UNIX socket, never connected
  {"open": ..., "bind": P}                            bind the socket to path P ("@x": abstract) before it connects
  {"ino": NAME}                                       -> {"result": "OK", "ino": its inode}
  {"drain": NAME, "bytes": N}                         read N bytes -> {"result": "OK"} | errno
  {"send": NAME, "data": S}                           -> {"result": "OK" | errno name}
  {"recv": NAME, "timeout": T}                        -> {"result": "OK", "data": S} | "EOF" | "NONE" | errno
  {"accept": NAME, "as": NAME2, "timeout": T}         -> {"result": "OK"} | errno | "NONE"
  {"fork_hold": NAME}                                 a child keeps the only copy of NAME
  {"recvfds": NAME, "as": [N1, N2...]}                receive sockets (SCM_RIGHTS) on NAME
  {"sendto": NAME, "path": P | "host": H, "port": N, "data": S}
  {"park": NAME, "on": NAME2}                         send NAME's fd over NAME2, close NAME
  {"give": NAME, "on": NAME2}                         send NAME's fd over NAME2, keep it
  {"close": NAME}
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
        if kind in ("unconnected_stream", "unconnected_seqpacket"):
            socks[req["open"]] = socket.socket(
                socket.AF_UNIX, socket.SOCK_STREAM if kind == "unconnected_stream" else socket.SOCK_SEQPACKET)
            return {"result": "OK"}
        if kind == "udp":  # bound to 127.0.0.1 (the agents of this test are servers): its port is returned
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            socks[req["open"]] = s
            return {"result": "OK", "port": s.getsockname()[1]}
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
            if "bind" in req:
                s.bind("\0" + req["bind"][1:] if req["bind"].startswith("@") else req["bind"])
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
    if "recvfds" in req:
        s = socks[req["recvfds"]]
        r, _, _ = select.select([s], [], [], req.get("timeout", 2.0))
        if not r:
            return {"result": "NONE"}
        _, fds, _, _ = socket.recv_fds(s, 100, 16)
        if len(fds) != len(req["as"]):
            return {"result": "GOT%d" % len(fds)}
        for n, fd in zip(req["as"], fds):
            socks[n] = socket.socket(fileno=fd)
        return {"result": "OK"}
    if "park" in req:
        x = socks.pop(req["park"])
        socket.send_fds(socks[req["on"]], [b"p"], [x.fileno()])
        x.close()
        return {"result": "OK"}
    if "give" in req:
        socket.send_fds(socks[req["on"]], [b"g"], [socks[req["give"]].fileno()])
        return {"result": "OK"}
    if "close" in req:
        socks.pop(req["close"]).close()
        return {"result": "OK"}
    if "ino" in req:
        return {"result": "OK", "ino": os.fstat(socks[req["ino"]].fileno()).st_ino}
    if "drain" in req:
        s, left = socks[req["drain"]], int(req["bytes"])
        while left > 0:
            d = s.recv(min(left, 1 << 20))
            if not d:
                return {"result": "EOF"}
            left -= len(d)
        return {"result": "OK"}
    if "sendto" in req:
        s = socks[req["sendto"]]
        s.sendto(req["data"].encode(), req["path"] if "path" in req else (req["host"], int(req["port"])))
        return {"result": "OK"}
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
