#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""direct_peers - the endpoints of Table 2b's direct channels, run outside the mnc tree.

    direct_peers.py DIR

Binds a registered partner (UNIX stream DIR/partner.sock, UNIX datagram DIR/partner.dgram, TCP
and UDP on one port of 127.0.0.1) and an unregistered stranger (UNIX stream DIR/stranger.sock,
TCP on 127.0.0.1), writes DIR/ports.json when ready and serves until killed. Every payload
received (a whole stream until EOF, or one datagram) is appended to DIR/received.jsonl as
{"ch": CHANNEL, "data": TEXT}, so the harness can tell which attempted leaks actually arrived,
not only which syscalls returned success.
"""
import json
import os
import socket
import sys
import threading

d = sys.argv[1]
lock = threading.Lock()
out = open(os.path.join(d, "received.jsonl"), "a")


def record(ch, data):
    with lock:
        out.write(json.dumps({"ch": ch, "data": data.decode(errors="replace")}) + "\n")
        out.flush()


def serve_stream(s, ch):
    def conn(c):
        buf = b""
        c.settimeout(10)
        try:
            while True:
                b = c.recv(65536)
                if not b:
                    break
                buf += b
        except OSError:
            pass
        c.close()
        if buf:
            record(ch, buf)
    while True:
        c, _ = s.accept()
        threading.Thread(target=conn, args=(c,), daemon=True).start()


def serve_dgram(s, ch):
    while True:
        record(ch, s.recv(65536))


def unix(kind, name):
    s = socket.socket(socket.AF_UNIX, kind)
    s.bind(os.path.join(d, name))
    os.chmod(os.path.join(d, name), 0o777)
    return s


def tcp_udp_pair():
    """A TCP listener and a UDP socket on the same 127.0.0.1 port (one registered address
    covers both: the kernel's sock_inet key has no protocol)."""
    for _ in range(50):
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        t.bind(("127.0.0.1", 0))
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            u.bind(("127.0.0.1", t.getsockname()[1]))
            return t, u
        except OSError:
            t.close()
            u.close()
    raise SystemExit("direct_peers: no free TCP+UDP port pair")


partner_s = unix(socket.SOCK_STREAM, "partner.sock")
partner_d = unix(socket.SOCK_DGRAM, "partner.dgram")
partner_t, partner_u = tcp_udp_pair()
stranger_s = unix(socket.SOCK_STREAM, "stranger.sock")
stranger_t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
stranger_t.bind(("127.0.0.1", 0))
for s in (partner_s, partner_t, stranger_s, stranger_t):
    s.listen(128)
threads = [(serve_stream, partner_s, "partner_unix"), (serve_dgram, partner_d, "partner_dgram"),
           (serve_stream, partner_t, "partner_tcp"), (serve_dgram, partner_u, "partner_udp"),
           (serve_stream, stranger_s, "stranger_unix"), (serve_stream, stranger_t, "stranger_tcp")]
for fn, s, ch in threads:
    threading.Thread(target=fn, args=(s, ch), daemon=True).start()
with open(os.path.join(d, "ports.json.tmp"), "w") as f:
    json.dump({"partner_ip": partner_t.getsockname()[1], "stranger_tcp": stranger_t.getsockname()[1]}, f)
os.rename(os.path.join(d, "ports.json.tmp"), os.path.join(d, "ports.json"))
threading.Event().wait()
