# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""asyncio: a TCP client (open_connection) speaking HTTP/1.1 to the sink, with a timer and a
task group around it: the event loop holds an epoll fd and a socketpair (self-pipe)."""
import asyncio
import urllib.parse

import compat


async def main():
    u = urllib.parse.urlsplit(compat.SINK)
    body = ("OK %s" % compat.ID).encode()
    try:
        r, w = await asyncio.wait_for(asyncio.open_connection(u.hostname, u.port), 20)
    except Exception as e:  # noqa: BLE001
        compat.refused(e)
    w.write(b"POST / HTTP/1.1\r\nHost: sink\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    await w.drain()
    status = await asyncio.wait_for(r.readline(), 20)
    compat.check(b" 200 " in status, "status %r" % status)
    await asyncio.wait_for(r.read(), 20)
    w.close()
    await w.wait_closed()
    ticks = await asyncio.gather(*(asyncio.sleep(0.01, result=i) for i in range(5)))
    compat.check(ticks == list(range(5)), "timers")
    print("compat %s: reported" % compat.ID, flush=True)


asyncio.run(main())
