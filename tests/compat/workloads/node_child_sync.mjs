// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// child_process, synchronous: execSync with input, execFileSync, spawnSync with input (libuv
// makes the child's stdio a socketpair, writes the input and shuts its end for writing).
import { execSync, execFileSync, spawnSync } from "node:child_process";
import * as compat from "./compat.mjs";

compat.check(execSync("echo $((6*7))", { encoding: "utf8" }).trim() === "42", "execSync");
compat.check(execSync("tr a-z A-Z", { input: "hello", encoding: "utf8" }) === "HELLO", "execSync with input");
compat.check(execFileSync("sort", ["-r"], { input: "a\nc\nb\n", encoding: "utf8" }) === "c\nb\na\n", "execFileSync");
const r = spawnSync("wc", ["-c"], { input: "x".repeat(100000), encoding: "utf8" });
compat.check(r.status === 0 && r.stdout.trim() === "100000", `spawnSync: ${JSON.stringify(r)}`);
await compat.report();
