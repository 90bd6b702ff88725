// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// A server agent (the policy says "server": true; mncctl run learns it from mncd): an http server
// on a UNIX socket in its workspace and on 127.0.0.1 (port 0), which the agent queries itself,
// then receives its object through mncd (tainted from here on, in the tainted modes), closes the
// servers and reports. A tainted agent may not listen and its listeners are shut at each
// delivery (docs/compat.md, "Servers"), so the serving happens before the receive, as a server
// that takes work while it runs does.
import http from "node:http";
import path from "node:path";
import * as compat from "./compat.mjs";

const get = (opts) =>
  new Promise((res, rej) => {
    http.get({ ...opts, path: "/x", agent: false }, (r) => {
      let b = "";
      r.on("data", (d) => (b += d));
      r.on("end", () => res(b));
    }).on("error", rej);
  });
const srv = http.createServer((req, res) => res.end(`hello ${req.url}`));
const sock = path.join(process.env.TMPDIR, "http.sock");
await new Promise((res, rej) => srv.once("error", rej).listen(sock, res));
compat.check((await get({ socketPath: sock })) === "hello /x", "query over its UNIX socket");
const ip = http.createServer((req, res) => res.end(`ip ${req.url}`));
await new Promise((res, rej) => ip.once("error", rej).listen(0, "127.0.0.1", res));
compat.check((await get({ host: "127.0.0.1", port: ip.address().port })) === "ip /x", "query over 127.0.0.1");
await new Promise((res) => srv.close(res));
await new Promise((res) => ip.close(res));
await compat.receive();
await compat.report();
