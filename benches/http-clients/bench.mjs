// What one call costs a real agent over Streamable HTTP: the official
// TypeScript SDK client (the interop pin) makes calls one at a time, and
// its per-call median (p50) and p99 are compared across servers in
// interleaved rounds (each round calls every server in turn, the order
// rotating):
//
// - server-everything over HTTP (`echo`): the reference, an official server;
// - `pipewright demo-server --http` (`echo`);
// - `pipewright serve --http` serving one node (`echo` on the demo server
//   over stdio) and the 2-node chain (`search_users` → `get_user_details`).
//
// The goal (issue 45): the demo server and the 1-node served call within
// 1.5× of server-everything's p50. Node's own sockets disable Nagle's
// algorithm; a server that leaves it on stalls this client ~40 ms per call
// on a delayed ACK.
//
//   npm ci --prefix tests/interop && cargo build --release
//   node benches/http-clients/bench.mjs [--rounds 7] [--calls 100]
//
// Environment: PIPEWRIGHT_BIN (default target/release/pipewright) and, to
// compare, BASE_BIN (another build, e.g. of the previous main), whose demo
// server and serve join the same rounds.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const interop = join(root, "tests/interop");
const require = createRequire(join(interop, "package.json"));
const sdk = (p) => import(require.resolve(`@modelcontextprotocol/sdk/${p}`));
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");

const flag = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const rounds = flag("rounds", 7);
const calls = flag("calls", 100);
const bin = process.env.PIPEWRIGHT_BIN ?? join(root, "target/release/pipewright");
const base = process.env.BASE_BIN;
const everything = join(interop, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
for (const [what, path] of [["pipewright", bin], ["server-everything", everything]]) {
  if (!existsSync(path)) {
    console.error(`${what} is missing at ${path} (cargo build --release; npm ci --prefix tests/interop)`);
    process.exit(2);
  }
}
const work = mkdtempSync(join(tmpdir(), "pw-http-clients-"));
const env = {
  ...process.env,
  PIPEWRIGHT_DATA_DIR: join(work, "data"),
  PIPEWRIGHT_CONFIG_DIR: join(work, "config"),
};
const children = [];
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

/** Starts a child and resolves with the first 127.0.0.1 port it prints. */
function start(command, args, extraEnv = {}) {
  return new Promise((ok, fail) => {
    const child = spawn(command, args, { env: { ...env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let seen = "";
    const look = (chunk) => {
      seen += chunk;
      const m = seen.match(/(?:127\.0\.0\.1:|port )(\d{2,5})/);
      if (m) ok(Number(m[1]));
    };
    child.stdout.on("data", look);
    child.stderr.on("data", look);
    child.on("exit", (code) => fail(new Error(`${command} ${args.join(" ")} exited ${code}: ${seen}`)));
  });
}

async function freePort() {
  const net = await import("node:net");
  return new Promise((ok) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

const chain = join(work, "lookup.yml");
writeFileSync(chain, `pipe:
  - id: find
    tool: search_users
    args: { query: "\${var.who}", limit: 1 }
  - id: details
    tool: get_user_details
    args: { user_id: "\${find.users[0].id}" }
output: details
`);
const one = join(work, "one.yml");
writeFileSync(one, `pipe:
  - id: say
    tool: echo
    args: { message: "\${var.message}" }
output: say
`);

const targets = [];
const everythingPort = await freePort();
await start(process.execPath, [everything, "streamableHttp"], { PORT: String(everythingPort) });
targets.push({ name: "server-everything echo", url: `http://127.0.0.1:${everythingPort}/mcp`, tool: "echo", args: { message: "hi" } });
for (const [label, b] of [["", bin], ["base ", base]].filter(([, b]) => b)) {
  const demo = await start(b, ["demo-server", "--http", "127.0.0.1:0"]);
  targets.push({ name: `${label}demo-server echo`, url: `http://127.0.0.1:${demo}/mcp`, tool: "echo", args: { message: "hi" } });
  const served = await start(b, ["serve", "--no-save", "--http", "127.0.0.1:0", one]);
  targets.push({ name: `${label}serve 1 node (echo)`, url: `http://127.0.0.1:${served}/mcp`, tool: "one", args: { message: "hi" } });
  const served2 = await start(b, ["serve", "--no-save", "--http", "127.0.0.1:0", chain]);
  targets.push({ name: `${label}serve 2-node chain`, url: `http://127.0.0.1:${served2}/mcp`, tool: "lookup", args: { who: "carol" } });
}

for (const t of targets) {
  t.client = new Client({ name: "bench", version: "1" });
  await t.client.connect(new StreamableHTTPClientTransport(new URL(t.url)));
  t.times = [];
  for (let i = 0; i < 20; i++) await call(t); // warm up
}

async function call(t) {
  const started = process.hrtime.bigint();
  const out = await t.client.callTool({ name: t.tool, arguments: t.args });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (out.isError) throw new Error(`${t.name}: ${JSON.stringify(out.content)}`);
  return ms;
}

for (let r = 0; r < rounds; r++) {
  const order = targets.map((_, i) => targets[(i + r) % targets.length]);
  for (const t of order) for (let i = 0; i < calls; i++) t.times.push(await call(t));
}

const pct = (v, p) => {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))];
};
const ref = pct(targets[0].times, 50);
console.log(`TypeScript SDK client, one call in flight, ${rounds} interleaved rounds × ${calls} calls per server`);
console.log("| server | p50 ms | p99 ms | p50 / server-everything |");
console.log("|---|---|---|---|");
for (const t of targets) {
  const p50 = pct(t.times, 50);
  console.log(`| ${t.name} | ${p50.toFixed(2)} | ${pct(t.times, 99).toFixed(2)} | ${(p50 / ref).toFixed(2)}× |`);
}
for (const t of targets) await t.client.close();
process.exit(0);
