#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Agent side of test_kernel_egress (runs inside an agent cgroup under `mncctl run`).

  egress_agent.py HOST TCPPORT UDPPORT GOFILE TAG
  egress_agent.py --serve PORTFILE GOFILE TAG

--serve: listens on 127.0.0.1 (port written to PORTFILE), accepts one connection, echoes what
it gets first, prints "READY", waits for GOFILE, sends "<TAG>-after" on the accepted socket and
prints "ACC_SEND OK|<ERRNO>", then "ACC_RECV <data>|NONE|EOF" for what arrives within 2 s
(so a peer agent's sends after its taint can be checked).

Connects a TCP socket and a connected UDP socket to HOST while (presumably) untainted, sends
"<TAG>-before" on both and waits for the echoes, prints "READY", then waits until GOFILE exists
(the test taints the agent in between), sends "<TAG>-after" on both and prints one line per
socket: "TCP_SEND OK|<ERRNO>", "TCP_ECHO OK|NONE|<ERRNO>", "UDP_SEND OK|<ERRNO>",
"UDP_ECHO OK|NONE|<ERRNO>". Always exits 0: the test judges the lines and what the peers got.

Ingress: before READY it also autobinds an unconnected UDP socket (a sendto to the UDP peer,
whose echo it reads) and prints "UPORT2 <port>"; the test has an outsider send "outsider" to
that port after the taint, and after GOFILE the agent prints "OUTSIDER_UDP OK|NONE|<ERRNO>"."""
import errno
import os
import socket
import sys
import time



def ename(e):
    return errno.errorcode.get(e.errno, str(e.errno)) if e.errno else type(e).__name__


def echo(s, want, timeout):
    s.settimeout(timeout)
    try:
        got = s.recv(65536)
        return "OK" if want in got else "BAD"
    except socket.timeout:
        return "NONE"
    except OSError as e:
        return ename(e)


if sys.argv[1] == "--serve":
    portfile, go, tag = sys.argv[2], sys.argv[3], sys.argv[4]
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(ls.getsockname()[1]))
    os.rename(portfile + ".tmp", portfile)
    ls.settimeout(10)
    c, _ = ls.accept()
    c.settimeout(5)
    c.sendall(c.recv(65536))
    print("READY", flush=True)
    deadline = time.time() + 30
    while not os.path.exists(go) and time.time() < deadline:
        time.sleep(0.02)
    try:
        c.send((tag + "-after").encode())
        print("ACC_SEND OK", flush=True)
    except OSError as e:
        print("ACC_SEND " + ename(e), flush=True)
    c.settimeout(2.0)
    try:
        data = c.recv(65536)
        print("ACC_RECV " + (data.decode("utf-8", "replace") if data else "EOF"), flush=True)
    except socket.timeout:
        print("ACC_RECV NONE", flush=True)
    except OSError as e:
        print("ACC_RECV " + ename(e), flush=True)
    sys.exit(0)

host, tport, uport, go, tag = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
t = socket.create_connection((host, tport), timeout=5)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.connect((host, uport))
before = (tag + "-before").encode()
t.sendall(before)
u.send(before)
print("BEFORE_TCP_ECHO", echo(t, before, 5))
print("BEFORE_UDP_ECHO", echo(u, before, 5))
u2 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u2.sendto(before, (host, uport))  # autobinds: a non-server agent may not bind()
print("BEFORE_UDP2_ECHO", echo(u2, before, 5))
print("UPORT2", u2.getsockname()[1])
print("READY", flush=True)
deadline = time.time() + 30
while not os.path.exists(go) and time.time() < deadline:
    time.sleep(0.02)
after = (tag + "-after").encode()
for name, s in (("TCP", t), ("UDP", u)):
    try:
        s.send(after)
        print(name + "_SEND OK")
    except OSError as e:
        print(name + "_SEND " + ename(e))
    print(name + "_ECHO", echo(s, after, 1.0), flush=True)
print("OUTSIDER_UDP", echo(u2, b"outsider", 1.0), flush=True)
