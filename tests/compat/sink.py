#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The corpus' sinks, run by run-compat outside the mnc tree (untainted, root): two HTTP/1.1
servers on 127.0.0.1, "ok" (the external sink the allowing contract names) and "no" (a sink
no contract names). Every request body, POST or PUT, is appended to DIR/got.<which> as one
line "<which> <body>"; GET answers "pong". Usage: sink.py DIR ; writes DIR/ports ("OK NO")
when both listen, serves until killed."""
import http.server
import os
import sys
import threading

d = sys.argv[1]
lock = threading.Lock()


def handler(which):
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def reply(self, body):
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.reply(b"pong\n")

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n) if n else b""
            with lock, open(os.path.join(d, "got." + which), "ab") as f:
                f.write(which.encode() + b" " + body.replace(b"\n", b" ") + b"\n")
            self.reply(b"got " + str(len(body)).encode() + b"\n")

        do_PUT = do_POST
    return H


servers = []
for which in ("ok", "no"):
    s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler(which))
    s.daemon_threads = True
    threading.Thread(target=s.serve_forever, daemon=True).start()
    servers.append(s)
with open(os.path.join(d, "ports.tmp"), "w") as f:
    f.write("%d %d\n" % (servers[0].server_address[1], servers[1].server_address[1]))
os.rename(os.path.join(d, "ports.tmp"), os.path.join(d, "ports"))
threading.Event().wait()
