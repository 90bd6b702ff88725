// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// The official MCP SDK client (tests/mcp-client, pinned) inside the agent: it starts mnc-mcp as
// its stdio server (a child: same agent) and, while node holds its epoll and eventfd fds, calls
// mnc_status, then mnc_receive of the object run-compat disclosed ($COMPAT_OBJECT; untainted
// runs have none and skip it), then reports with fetch. argv: SDK_DIR MNC_MCP SOCKET.
import path from "node:path";
import * as compat from "./compat.mjs";

const [sdkDir, mcp, sock] = process.argv.slice(2);
const sdk = path.join(sdkDir, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client");
const { Client } = await import(path.join(sdk, "index.js"));
const { StdioClientTransport } = await import(path.join(sdk, "stdio.js"));
const client = new Client({ name: "mnc-compat", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: mcp, args: ["--socket", sock], stderr: "inherit" }));
const st = await client.callTool({ name: "mnc_status", arguments: {} });
compat.check(!st.isError && st.structuredContent?.agent, `mnc_status: ${JSON.stringify(st)}`);
const obj = process.env.COMPAT_OBJECT;
if (obj) {
  const r = await client.callTool({ name: "mnc_receive", arguments: { object: obj } });
  compat.check(!r.isError, `mnc_receive: ${JSON.stringify(r)}`);
}
await client.close();
await compat.report();
