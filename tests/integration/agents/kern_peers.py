#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Peers for the kernel tests, run outside the mnc tree: a UNIX stream listener (an external
agent), a UNIX datagram socket, a stand-in for the mncd socket and a TCP listener on
127.0.0.1. Usage: kern_peers.py DIR ; writes DIR/tcp.port when ready, serves until killed."""
import os
import select
import socket
import sys

d = sys.argv[1]
socks = []
for name in ("ext.sock", "mncd.sock", "other.sock"):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(os.path.join(d, name))
    os.chmod(os.path.join(d, name), 0o666)  # agents run as their own uid: connect needs write
    s.listen(64)
    socks.append(s)
dg = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
dg.bind(os.path.join(d, "ext.dgram"))
os.chmod(os.path.join(d, "ext.dgram"), 0o666)
tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind(("127.0.0.1", 0))
tcp.listen(64)
socks.append(tcp)
with open(os.path.join(d, "tcp.port.tmp"), "w") as f:
    f.write(str(tcp.getsockname()[1]))
os.rename(os.path.join(d, "tcp.port.tmp"), os.path.join(d, "tcp.port"))
while True:
    r, _, _ = select.select(socks + [dg], [], [])
    for s in r:
        if s is dg:
            s.recv(65536)
        else:
            c, _ = s.accept()
            c.close()
