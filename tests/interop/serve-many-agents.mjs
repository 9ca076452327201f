// Agents that come and go the way the official TypeScript SDK's do: each
// connects to `pipewright serve --http` (default limits), calls the served
// tool once and closes, which sends no HTTP DELETE. Every one must be
// served, and the server must not hold more sessions than its limit.
//
//   node tests/interop/serve-many-agents.mjs BIN FILE AGENTS
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { spawn } from "node:child_process";

const [bin, file, count] = process.argv.slice(2);
const agents = Number(count);
const child = spawn(bin, ["serve", "--no-save", file, "--http", "127.0.0.1:0"], {
  stdio: ["ignore", "ignore", "pipe"],
});
const url = await new Promise((resolve, reject) => {
  let text = "";
  child.stderr.on("data", (d) => {
    text += d;
    const m = text.match(/listening on (http:\/\/\S+)\r?\n/);
    if (m) resolve(m[1]);
  });
  child.on("exit", (c) => reject(new Error(`serve exited ${c}: ${text}`)));
});
let served = 0;
const failures = [];
let most = 0;
for (let i = 0; i < agents; i++) {
  const client = new Client({ name: `agent-${i}`, version: "1.0.0" });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const out = await client.callTool({ name: "say", arguments: { message: `agent ${i}` } });
    if (out.isError || !JSON.stringify(out.content).includes(`agent ${i}`)) {
      failures.push(`agent ${i}: ${JSON.stringify(out.content)}`);
    } else {
      served++;
    }
  } catch (e) {
    failures.push(`agent ${i}: ${String(e).slice(0, 300)}`);
  }
  await client.close();
  const ready = await (await fetch(new URL("/readyz", url))).json();
  most = Math.max(most, ready.sessions);
}
const ready = await (await fetch(new URL("/readyz", url))).json();
console.log(`served ${served} of ${agents}; most sessions open at once ${most}; limit ${ready.max_sessions}`);
for (const f of failures.slice(0, 5)) console.log(`FAIL - ${f}`);
child.kill("SIGTERM");
process.exit(failures.length === 0 && most <= ready.max_sessions ? 0 : 1);
