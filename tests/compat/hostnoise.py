#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A stand-in for systemd and journald while the corpus runs: a root process outside the mnc
tree that holds an epoll, an eventfd, a timerfd, an inotify and a memfd fd (each anon-inode
kind a real host always has open somewhere) and keeps using them. run-compat starts it when
tests/tools/hostnoise is not there. Usage: hostnoise.py READY_FILE ; runs until killed."""
import ctypes
import os
import select
import sys

libc = ctypes.CDLL(None, use_errno=True)
ep = select.epoll()
ev = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
tfd = libc.timerfd_create(1, 0o2000000 | 0o4000)  # CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK
ino = libc.inotify_init1(0o2000000 | 0o4000)
mfd = os.memfd_create("hostnoise", os.MFD_CLOEXEC)
if min(tfd, ino) < 0:
    sys.exit("hostnoise: timerfd/inotify: errno %d" % ctypes.get_errno())
os.write(mfd, b"held by hostnoise\n")
libc.inotify_add_watch(ino, b"/tmp", 0x100 | 0x200)  # IN_CREATE | IN_DELETE
# every 100 ms: struct itimerspec {interval, value}
spec = (ctypes.c_long * 4)(0, 100_000_000, 0, 100_000_000)
libc.timerfd_settime(tfd, 0, spec, None)
for fd in (ev, tfd, ino):
    ep.register(fd, select.EPOLLIN)
with open(sys.argv[1], "w") as f:
    f.write("%d\n" % os.getpid())
while True:
    for fd, _ in ep.poll(1.0):
        try:
            os.read(fd, 4096)
        except BlockingIOError:
            pass
    os.eventfd_write(ev, 1)
