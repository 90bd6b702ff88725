#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Peers for test_kernel_egress, run OUTSIDE the mnc tree: a TCP listener and a UDP socket on
127.0.0.1 that append everything they receive to DIR/tcp.log and DIR/udp.log (one line per
read) and echo it back, so that the test can tell what left the agent and whether round trips
work. Usage: egress_peers.py DIR ; writes DIR/ports ("TCP UDP") when ready, serves until
killed."""
import os
import select
import socket
import sys

d = sys.argv[1]
tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind(("127.0.0.1", 0))
tcp.listen(64)
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", 0))
with open(os.path.join(d, "ports.tmp"), "w") as f:
    f.write("%d %d" % (tcp.getsockname()[1], udp.getsockname()[1]))
os.rename(os.path.join(d, "ports.tmp"), os.path.join(d, "ports"))


def log(name, data):
    with open(os.path.join(d, name), "a") as f:
        f.write(data.decode("utf-8", "replace").strip() + "\n")


conns = []
while True:
    r, _, _ = select.select([tcp, udp] + conns, [], [])
    for s in r:
        if s is tcp:
            c, _ = s.accept()
            conns.append(c)
        elif s is udp:
            data, addr = s.recvfrom(65536)
            log("udp.log", data)
            s.sendto(data, addr)
        else:
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:
                conns.remove(s)
                s.close()
                continue
            log("tcp.log", data)
            try:
                s.sendall(data)
            except OSError:
                pass
