// The reference: a hand-rolled MCP client over stdio with nothing but
// Node's runtime. It does the least any client must: `initialize`,
// `notifications/initialized`, the calls, then the MCP stdio shutdown
// (close stdin, wait for the exit, SIGTERM after the grace).
//
//   node raw-client.mjs SERVER_JS (seq N | fan N IN_FLIGHT) [GRACE_MS]
//
// Prints `{"calls": N, "call_ms": …}` on stdout: the time from the first
// call sent to the last answer read.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const [serverJs, load, n, inFlight, graceArg] = process.argv.slice(2);
const total = Number(n);
const width = load === "fan" ? Number(inFlight) : 1;
const grace = Number(graceArg ?? 100);

const child = spawn(process.execPath, [serverJs, "stdio"], {
  stdio: ["pipe", "pipe", "ignore"],
});
const waiting = new Map();
let nextId = 1;
createInterface({ input: child.stdout }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.id !== undefined && waiting.has(msg.id)) {
    const done = waiting.get(msg.id);
    waiting.delete(msg.id);
    done(msg);
  }
});
function request(method, params) {
  const id = nextId++;
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  return new Promise((resolve) => waiting.set(id, resolve));
}

await request("initialize", {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "raw", version: "1" },
});
child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");

const start = process.hrtime.bigint();
let sent = 0;
async function lane() {
  while (sent < total) {
    const i = sent++;
    const r = await request("tools/call", { name: "echo", arguments: { message: `message ${i}` } });
    if (r.error || r.result?.isError) throw new Error(`call ${i} failed: ${JSON.stringify(r)}`);
  }
}
await Promise.all(Array.from({ length: width }, lane));
const callMs = Number(process.hrtime.bigint() - start) / 1e6;

const exited = new Promise((resolve) => child.once("exit", resolve));
child.stdin.end();
const timer = setTimeout(() => child.kill("SIGTERM"), grace);
await exited;
clearTimeout(timer);
process.stdout.write(JSON.stringify({ calls: total, call_ms: callMs }) + "\n");
