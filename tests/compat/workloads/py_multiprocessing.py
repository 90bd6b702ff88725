# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""multiprocessing.Pool and concurrent.futures.ProcessPoolExecutor (POSIX semaphores in /dev/shm,
pipes, forked and spawned workers), a Queue and a Lock."""
import concurrent.futures
import multiprocessing as mp

import compat


def sq(x):
    return x * x


if __name__ == "__main__":
    with mp.Pool(2) as p:
        compat.check(sum(p.map(sq, range(10))) == 285, "Pool.map")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as ex:
        compat.check(list(ex.map(sq, range(4))) == [0, 1, 4, 9], "ProcessPoolExecutor (spawn)")
    q, lk = mp.Queue(), mp.Lock()
    with lk:
        q.put(42)
    compat.check(q.get(timeout=10) == 42, "Queue")
    compat.report("sum=285")
