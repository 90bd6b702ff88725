// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// An http server the agent starts and queries itself: on a UNIX socket in its workspace and on
// 127.0.0.1 (port 0) before anything tainted it (arg "ip"), then reports.
import http from "node:http";
import path from "node:path";
import * as compat from "./compat.mjs";

const srv = http.createServer((req, res) => res.end(`hello ${req.url}`));
const sock = path.join(process.env.TMPDIR, "http.sock");
await new Promise((res, rej) => srv.once("error", rej).listen(sock, res));
const get = (opts) =>
  new Promise((res, rej) => {
    http.get({ ...opts, path: "/x" }, (r) => {
      let b = "";
      r.on("data", (d) => (b += d));
      r.on("end", () => res(b));
    }).on("error", rej);
  });
compat.check((await get({ socketPath: sock })) === "hello /x", "query over its UNIX socket");
srv.close();
await compat.report();
