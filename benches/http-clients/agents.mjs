// `pipewright serve --http` under many agents at once: AGENTS official
// TypeScript SDK clients (the interop pin) connect together, each makes
// CALLS calls of the served 2-node chain (`search_users` →
// `get_user_details` on the demo server), one after the other, and closes.
// Runs are saved (no `--no-save`), as a deployed `serve` does.
//
// Printed per round: the sessions `/readyz` counted at the peak, calls per
// second over the whole round, p50 and p99 per call, the serve process's
// resident memory before the agents came and at its peak (VmHWM), and the
// peak's growth divided by the sessions (memory per session). Rounds
// alternate with BASE_BIN's serve when it is set (interleaved pairs).
//
//   npm ci --prefix tests/interop && cargo build --release
//   node benches/http-clients/agents.mjs [--agents 64] [--calls 50] [--rounds 3]
//
// Environment: PIPEWRIGHT_BIN (default target/release/pipewright), BASE_BIN.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, existsSync, rmSync, readFileSync } from "node:fs";
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
const agents = flag("agents", 64);
const calls = flag("calls", 50);
const rounds = flag("rounds", 3);
const bin = process.env.PIPEWRIGHT_BIN ?? join(root, "target/release/pipewright");
const base = process.env.BASE_BIN;
if (!existsSync(bin)) {
  console.error(`pipewright is missing at ${bin} (cargo build --release)`);
  process.exit(2);
}
const work = mkdtempSync(join(tmpdir(), "pw-agents-"));
const children = [];
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});
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

/** `serve --http` on a free port: its child process and its MCP URL. */
function serve(b, label) {
  return new Promise((ok, fail) => {
    const env = {
      ...process.env,
      PIPEWRIGHT_DATA_DIR: join(work, `data-${label}`),
      PIPEWRIGHT_CONFIG_DIR: join(work, `config-${label}`),
    };
    const child = spawn(b, ["serve", "--http", "127.0.0.1:0", chain], { env, stdio: ["ignore", "ignore", "pipe"] });
    children.push(child);
    let seen = "";
    child.stderr.on("data", (d) => {
      seen += d;
      const m = seen.match(/listening on (http:\/\/\S+)\r?\n/);
      if (m) ok({ child, url: m[1] });
    });
    child.on("exit", (code) => fail(new Error(`serve exited ${code}: ${seen}`)));
  });
}

/** VmRSS and VmHWM of a process, in MiB. */
function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key) => Number(status.match(new RegExp(`${key}:\\s+(\\d+) kB`))[1]);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

const pct = (v, p) => {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))];
};

async function round(b, label, r) {
  const { child, url } = await serve(b, `${label}-${r}`);
  // Warm the binary and the upstream connection with one agent.
  const warm = new Client({ name: "warm", version: "1" });
  await warm.connect(new StreamableHTTPClientTransport(new URL(url)));
  for (let i = 0; i < 10; i++) await warm.callTool({ name: "lookup", arguments: { who: "carol" } });
  await warm.close();
  const before = memory(child.pid);
  const times = [];
  let errors = 0;
  let sessions = 0;
  const clients = [];
  for (let a = 0; a < agents; a++) clients.push(new Client({ name: `agent-${a}`, version: "1" }));
  const started = process.hrtime.bigint();
  await Promise.all(
    clients.map(async (client, a) => {
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      for (let i = 0; i < calls; i++) {
        const t0 = process.hrtime.bigint();
        try {
          const out = await client.callTool({ name: "lookup", arguments: { who: a % 2 ? "carol" : "bob" } });
          if (out.isError) errors++;
        } catch {
          errors++;
        }
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (i === 0) {
          const ready = await (await fetch(new URL("/readyz", url))).json();
          sessions = Math.max(sessions, ready.sessions);
        }
      }
    }),
  );
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const after = memory(child.pid);
  await Promise.all(clients.map((c) => c.close()));
  child.kill("SIGTERM");
  return {
    label,
    sessions,
    rate: times.length / wall,
    p50: pct(times, 50),
    p99: pct(times, 99),
    errors,
    before: before.rss,
    hwm: after.hwm,
    perSession: (after.hwm - before.rss) / Math.max(1, sessions),
  };
}

const builds = [["", bin], ["base ", base]].filter(([, b]) => b);
console.log(`serve --http, ${agents} TypeScript SDK agents at once × ${calls} calls of a 2-node chain, runs saved, ${rounds} round(s)`);
console.log("| build | round | sessions | calls/s | p50 ms | p99 ms | errors | RSS before MiB | VmHWM MiB | MiB per session |");
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (let r = 0; r < rounds; r++) {
  const order = r % 2 ? [...builds].reverse() : builds;
  for (const [label, b] of order) {
    const x = await round(b, label.trim() || "this", r);
    console.log(
      `| ${x.label} | ${r + 1} | ${x.sessions} | ${x.rate.toFixed(0)} | ${x.p50.toFixed(0)} | ${x.p99.toFixed(0)} | ${x.errors} | ${x.before.toFixed(1)} | ${x.hwm.toFixed(1)} | ${x.perSession.toFixed(2)} |`,
    );
  }
}
process.exit(0);
