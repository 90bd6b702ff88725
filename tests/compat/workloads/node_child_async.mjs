// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// child_process, asynchronous: spawn with stdin written and ended, exec with a callback, and
// a pipeline of two children joined by a pipe.
import { spawn, exec } from "node:child_process";
import { promisify } from "node:util";
import * as compat from "./compat.mjs";

const run = (cmd, args, input) =>
  new Promise((resolve, reject) => {
    const p = spawn(cmd, args);
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.on("error", reject);
    p.on("close", (code) => resolve({ code, out }));
    p.stdin.end(input);
  });
const r = await run("sort", ["-r"], "a\nc\nb\n");
compat.check(r.code === 0 && r.out === "c\nb\na\n", `spawn with input: ${JSON.stringify(r)}`);
const { stdout } = await promisify(exec)("seq 1 500 | wc -l");
compat.check(stdout.trim() === "500", "exec pipeline");
const a = spawn("seq", ["1", "300"]);
const b = spawn("wc", ["-l"], { stdio: [a.stdout, "pipe", "inherit"] });
let n = "";
b.stdout.on("data", (d) => (n += d));
await new Promise((res) => b.on("close", res));
compat.check(n.trim() === "300", "two spawned children joined");
await compat.report();
