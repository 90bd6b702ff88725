#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Agent-side probe for the kernel tests: performs one operation and prints
"RESULT OK" or "RESULT <ERRNO-NAME>" (e.g. EPERM). Always exits 0 so that the
test judges the result, not the exit status."""
import errno
import os
import socket
import sys


def run(op, args):
    if op == "connect_unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(args[0])
    elif op == "sendto_unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.sendto(b"leak", args[0])
    elif op == "connect_tcp":
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.connect((args[0], int(args[1])))
    elif op == "sendto_udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(b"leak", (args[0], int(args[1])))
    elif op == "sockopt":  # sockopt udp|tcp|unix LEVEL OPTNAME VALUE
        fam = {"udp": (socket.AF_INET, socket.SOCK_DGRAM), "tcp": (socket.AF_INET, socket.SOCK_STREAM),
               "unix": (socket.AF_UNIX, socket.SOCK_DGRAM)}[args[0]]
        s = socket.socket(*fam)
        s.setsockopt(int(args[1]), int(args[2]), int(args[3]))
    elif op == "raw":
        socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    elif op == "packet":
        socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, 0)
    elif op == "open_w":
        os.close(os.open(args[0], os.O_WRONLY | os.O_APPEND))
    elif op == "create":
        os.close(os.open(args[0], os.O_WRONLY | os.O_CREAT, 0o600))
    elif op == "link":
        os.link(args[0], args[1])
    elif op == "rename":
        os.rename(args[0], args[1])
    elif op == "symlink":
        os.symlink(args[0], args[1])
    elif op in ("msgget", "shmget"):
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        IPC_PRIVATE, IPC_CREAT = 0, 0o1000
        if op == "msgget":
            r = libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600)
        else:
            r = libc.shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0o600)
        if r < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        # do not leave the object behind if the filter let it through
        if op == "msgget":
            libc.msgctl(r, 0, None)  # IPC_RMID
        else:
            libc.shmctl(r, 0, None)
    else:
        raise SystemExit("unknown op " + op)


def main():
    try:
        run(sys.argv[1], sys.argv[2:])
        print("RESULT OK")
    except OSError as e:
        print("RESULT " + errno.errorcode.get(e.errno, str(e.errno)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
