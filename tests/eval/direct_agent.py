#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""direct_agent - the scripted coordinator of Table 2b (and the worker that discloses to it).

    direct_agent.py PYTHON_LIB_DIR MNCD_SOCKET|-

Reads one JSON request per stdin line and answers one JSON line:
  {"verb": V, ...}                 -> the mncd response (a call over its socket)
  {"new_connection": true, ...}    -> the same on a fresh connection (is mncd still reachable?)
  {"probe": OP, "dest": D, "data": TEXT}
                                   -> {"result": "OK" | errno name}: one direct attempt to move
                                      TEXT around mncd (OP: unix_stream, unix_dgram, tcp, udp,
                                      file_append, file_create)
Launched under `mncctl run` (kernel rows) or as a plain process (rows without the kernel).
"""
import errno
import json
import os
import socket
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
from mnc_client import Client  # noqa: E402

SOCK = sys.argv[2]


def probe(op, dest, data):
    b = data.encode()
    if op in ("unix_stream", "tcp"):
        s = socket.socket(socket.AF_UNIX if op == "unix_stream" else socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect(dest if op == "unix_stream" else ("127.0.0.1", int(dest)))
            s.sendall(b)
        finally:
            s.close()
    elif op in ("unix_dgram", "udp"):
        s = socket.socket(socket.AF_UNIX if op == "unix_dgram" else socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.sendto(b, dest if op == "unix_dgram" else ("127.0.0.1", int(dest)))
        finally:
            s.close()
    elif op in ("file_append", "file_create"):
        flags = os.O_WRONLY | (os.O_APPEND if op == "file_append" else os.O_CREAT | os.O_EXCL)
        fd = os.open(dest, flags, 0o600)
        try:
            os.write(fd, b + b"\n")
        finally:
            os.close(fd)
    else:
        raise ValueError("unknown probe " + op)


def main():
    c = Client(SOCK) if SOCK != "-" else None
    for line in sys.stdin:
        req = json.loads(line)
        if "probe" in req:
            try:
                probe(req["probe"], req["dest"], req["data"])
                out = {"result": "OK"}
            except OSError as e:
                out = {"result": errno.errorcode.get(e.errno, str(e.errno)) if e.errno else str(e)}
        elif req.pop("new_connection", False):
            try:
                with Client(SOCK) as c2:
                    out = c2.call(req.pop("verb"), **req)
            except Exception as e:  # reported to the harness, which counts it as denied
                out = {"ok": False, "error": "connect: %s" % e}
        else:
            out = c.call(req.pop("verb"), **req)
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
