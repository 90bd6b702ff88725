// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// worker_threads: two workers sum ranges and post the result back; a SharedArrayBuffer with
// Atomics between them.
import { Worker } from "node:worker_threads";
import * as compat from "./compat.mjs";

const src = `
const { parentPort, workerData } = require("node:worker_threads");
let s = 0; for (let i = workerData.from; i < workerData.to; i++) s += i;
Atomics.add(new Int32Array(workerData.shared), 0, 1);
parentPort.postMessage(s);`;
const shared = new SharedArrayBuffer(4);
const sums = await Promise.all(
  [[0, 500], [500, 1000]].map(
    ([from, to]) =>
      new Promise((res, rej) => {
        const w = new Worker(src, { eval: true, workerData: { from, to, shared } });
        w.on("message", res);
        w.on("error", rej);
      })
  )
);
compat.check(sums[0] + sums[1] === 499500, `sums ${sums}`);
compat.check(new Int32Array(shared)[0] === 2, "Atomics");
await compat.report();
