// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// What every Node workload shares (as compat.py for Python): check() and report(), a fetch()
// POST of "OK <workload> <mode>" to $COMPAT_SINK. Exit 0 reported, 3 refused with EPERM/EACCES
// (a clean denial), 1 anything else.
export const ID = process.env.COMPAT_ID ?? "? ?";
export const SINK = process.env.COMPAT_SINK ?? "";

export function fail(msg) {
  process.stderr.write(`compat ${ID}: FAIL ${msg}\n`);
  process.exit(1);
}

export function check(cond, what) {
  if (!cond) fail(what);
}

export function refused(e) {
  for (let c = e; c; c = c.cause) {
    if (c.code === "EPERM" || c.code === "EACCES") {
      console.log(`compat ${ID}: denied (${c.code}): ${c.message}`);
      process.exit(3);
    }
  }
  fail(`report: ${e?.stack ?? e}${e?.cause ? " cause: " + (e.cause.stack ?? e.cause) : ""}`);
}

export async function report(detail = "") {
  try {
    const r = await fetch(SINK, { method: "POST", body: `OK ${ID} ${detail}`.trim() });
    check(r.status === 200, `sink answered ${r.status}`);
    await r.text();
  } catch (e) {
    refused(e);
  }
  console.log(`compat ${ID}: reported`);
}

// Receives $COMPAT_OBJECT through mncd ($MNC_SOCKET, one JSON line each way): from then on the
// agent is tainted by its contract. Nothing to do without an object (untainted runs).
export async function receive() {
  const obj = process.env.COMPAT_OBJECT;
  if (!obj) return;
  const net = await import("node:net");
  const line = await new Promise((resolve, reject) => {
    const c = net.connect(process.env.MNC_SOCKET);
    let buf = "";
    c.on("error", reject);
    c.on("data", (d) => {
      buf += d;
      if (buf.includes("\n")) {
        c.end();
        resolve(buf.slice(0, buf.indexOf("\n")));
      }
    });
    c.write(JSON.stringify({ verb: "recv", object: obj }) + "\n");
  });
  const r = JSON.parse(line);
  check(r.ok === true, `recv: ${line}`);
}
