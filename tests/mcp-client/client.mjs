// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// The official MCP TypeScript SDK client (@modelcontextprotocol/sdk, pinned in package-lock.json)
// driving mnc-mcp for tests/integration/test_mcp_sdk. Not written against mnc-mcp's code: it only
// uses the SDK's public Client / StdioClientTransport API.
//
// argv[2]: a JSON spec {"servers": {"worker": {"command", "args"}, "coordinator": {...}},
//                       "probe": {"command", "args"}, "state": {...fields...}}
// Prints one JSON object with what each step returned; the Python test judges it.
import { spawnSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const spec = JSON.parse(process.argv[2]);
const out = {};

async function connect(name) {
  const s = spec.servers[name];
  const transport = new StdioClientTransport({ command: s.command, args: s.args, stderr: "inherit" });
  const client = new Client({ name: "mnc-sdk-test-" + name, version: "1.0.0" });
  await client.connect(transport);
  return client;
}

async function step(key, fn) {
  try {
    out[key] = await fn();
  } catch (e) {
    out[key] = { thrown: true, code: e.code ?? null, message: String(e.message ?? e) };
  }
}

function probe() {
  const r = spawnSync(spec.probe.command, spec.probe.args, { encoding: "utf8" });
  return (r.stdout || "").trim().replace(/^RESULT /, "") || "exit " + r.status + ": " + (r.stderr || "").slice(-300);
}

const worker = await connect("worker");
const coord = await connect("coordinator");
out.server = worker.getServerVersion();
out.capabilities = worker.getServerCapabilities();
await step("tools", async () => (await worker.listTools()).tools);
await coord.listTools(); // lets the SDK validate structuredContent against each outputSchema
await step("status_worker", () => worker.callTool({ name: "mnc_status", arguments: {} }));
await step("disclose", () =>
  worker.callTool({ name: "mnc_disclose", arguments: { contract: "schedule_meeting", fields: spec.state } }));
out.probe_before = probe();
await step("receive", () => coord.callTool({ name: "mnc_receive", arguments: {} }));
out.probe_after = probe();
const oid = out.disclose?.structuredContent?.object_id ?? "0".repeat(32);
await step("forward", () => coord.callTool({ name: "mnc_forward", arguments: { object: oid, to: "partner" } }));
await step("log", () => coord.callTool({ name: "mnc_log", arguments: { object: oid, sink: "ops_log" } }));
await step("memory_write", () =>
  coord.callTool({ name: "mnc_memory_write", arguments: { object: oid, key: "k" } }));
await step("status_coordinator", () => coord.callTool({ name: "mnc_status", arguments: {} }));
await step("identity_claim", () =>
  coord.callTool({ name: "mnc_receive", arguments: { as: "worker" } }));
await step("unknown_tool", () => coord.callTool({ name: "mnc_shell", arguments: {} }));
await step("ping", () => coord.ping());
await worker.close();
await coord.close();
process.stdout.write(JSON.stringify(out) + "\n");
